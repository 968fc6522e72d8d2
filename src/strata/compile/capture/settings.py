"""Capture settings, read at run time (``strata._dynamo.config`` is this module)."""

# Entries per code object before the frame runs eagerly (torch._dynamo.config.recompile_limit).
recompile_limit = 8
cache_size_limit = recompile_limit
# A size that changes between calls becomes a dynamic dim on the recompile.
automatic_dynamic_shapes = True
