"""Derivatives of ``ops/indexing.py``: a gather-like op's gradient scatters (accumulating) into
zeros; a write-like op's gradient for ``self`` is zero where it was overwritten."""

from ...core.shape import broadcast_shapes
from ...ops import factory as F
from ...ops import indexing as I
from ...ops import pointwise as P
from ...ops import reductions as RD
from ...ops import shape as S
from . import derivative, non_differentiable, zeros


def _zero_scalar(like):
    return F.full((), 0, dtype=like.dtype, device=like.device)


@derivative(I.index, "IndexBackward0", save=("indices",))
def _index(ctx, grad):
    out = zeros(ctx.sizes("self"), grad)
    I.index_put_(out, ctx.indices, grad, True)
    return out, [None] * len(ctx.indices)


@derivative(I.index_put_, "IndexPutBackward0", save=("indices",))
def _index_put_(ctx, grad):
    indices = ctx.indices
    g_self = g_values = None
    if ctx.needs[0]:
        g_self = grad if ctx.accumulate else I.index_put_(F.clone(grad), indices,
                                                          _zero_scalar(grad), False)
    if ctx.needs[2]:
        g_values = I.index(grad, indices)
    return g_self, [None] * len(indices), g_values


@derivative(I.masked_fill, "MaskedFillBackward0", save=("mask",))
def _masked_fill(ctx, grad):
    return I.masked_fill(grad, ctx.mask, 0), None     # derivatives.yaml's formula


@derivative(I.masked_fill_tensor, "MaskedFillBackward1", save=("mask",))
def _masked_fill_tensor(ctx, grad):
    mask = ctx.mask
    return (P.where(mask, 0.0, grad) if ctx.needs[0] else None, None,
            RD.sum(P.where(mask, grad, 0.0)) if ctx.needs[2] else None)


@derivative(I.masked_select, "MaskedSelectBackward0", save=("mask",))
def _masked_select(ctx, grad):
    mask = ctx.mask
    out = zeros(broadcast_shapes(ctx.sizes("self"), mask._shape), grad)
    return I.masked_scatter_(out, mask, grad), None


@derivative(I.masked_scatter_, "MaskedScatterBackward0", save=("mask",))
def _masked_scatter_(ctx, grad):
    mask = ctx.mask
    g_self = P.where(mask, 0.0, grad) if ctx.needs[0] else None
    g_source = None
    if ctx.needs[2]:
        shape = ctx.sizes("source")
        n = 1
        for s in shape:
            n *= s
        picked = I.masked_select(grad, mask)
        rest = n - picked.numel()
        if rest:
            picked = S.cat([picked, zeros((rest,), grad)])
        g_source = S.reshape(picked, shape)
    return g_self, None, g_source


@derivative(I.take, "TakeBackward0", save=("index",))
def _take(ctx, grad):
    out = zeros(ctx.sizes("self"), grad)
    return I.put_(out, ctx.index, grad, True), None


@derivative(I.put_, "PutBackward0", save=("index",))
def _put_(ctx, grad):
    index = ctx.index
    g_self = g_source = None
    if ctx.needs[0]:
        g_self = grad if ctx.accumulate else I.put_(F.clone(grad), index,
                                                    zeros(index._shape, grad), False)
    if ctx.needs[2]:
        g_source = S.reshape(I.take(grad, index), ctx.sizes("source"))
    return g_self, None, g_source


non_differentiable(I.nonzero, I.searchsorted)
