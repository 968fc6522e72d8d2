"""``strata.fx.passes.shape_prop``, as ``torch.fx.passes.shape_prop``."""

from ...compile.fx.passes.shape_prop import ShapeProp  # noqa: F401
