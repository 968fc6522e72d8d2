"""Capture settings, read at run time (``strata._dynamo.config`` is this module)."""

# Entries per code object before the frame runs eagerly (torch._dynamo.config.recompile_limit);
# ``cache_size_limit`` is its old name, honoured when set instead.
recompile_limit = 8
cache_size_limit = 8
# A size that changes between calls becomes a dynamic dim on the recompile.
automatic_dynamic_shapes = True


def entry_limit() -> int:
    return cache_size_limit if recompile_limit == 8 else recompile_limit
