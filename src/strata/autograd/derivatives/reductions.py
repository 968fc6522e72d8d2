"""Derivatives of ``ops/reductions.py`` (reductions and scans)."""

from ...core.shape import wrap_dim
from ...ops import reductions as RD
from ...ops import shape as S
from . import derivative


def _sum_name(self, dim=None, keepdim=False, dtype=None):
    return "SumBackward0" if dim is None or (not isinstance(dim, int) and len(dim) == 0) \
        else "SumBackward1"


def unreduce(grad, shape, dim, keepdim):
    """Expand a reduction's gradient back to the input's shape (``sum_backward``)."""
    shape = tuple(shape)
    if not keepdim and shape:
        if dim is None or (not isinstance(dim, int) and len(dim) == 0):
            dims = range(len(shape))
        else:
            dims = sorted(wrap_dim(d, len(shape)) for d in ((dim,) if isinstance(dim, int)
                                                           else dim))
        for d in dims:
            grad = S.unsqueeze(grad, d)
    return S.expand(grad, shape)


@derivative(RD.sum, _sum_name)
def _sum(ctx, grad):
    return unreduce(grad, ctx.sizes("self"), ctx.dim, ctx.keepdim)
