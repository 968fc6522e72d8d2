"""Derivatives of ``ops/sampling.py``: ``affine_grid_generator`` (a composite with a row of
its own, CompositeExplicitAutograd in backends/composite.py)."""

from ...ops import linalg as L
from ...ops import sampling as SA
from ...ops import shape as S
from . import derivative


@derivative(SA.affine_grid_generator, "AffineGridGeneratorBackward0")
def _affine_grid_generator(ctx, grad):
    """grid = base @ theta^T per batch, so grad_theta = grad^T @ base
    (``affine_grid_generator_backward``)."""
    size = ctx.size
    dims = len(size) - 2
    base = SA.affine_base_grid(size, ctx.align_corners, grad)
    return L.matmul(S.transpose(S.reshape(grad, [size[0], -1, dims]), 1, 2), base)
