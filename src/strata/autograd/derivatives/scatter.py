"""Derivatives of ``ops/scatter.py``: gather and scatter are each other's adjoints; index_* ops
are the same along one dim."""

from ...core.shape import contiguous_strides, storage_extent
from ...ops import factory as F
from ...ops import meta_rules as MR
from ...ops import pointwise as P
from ...ops import reductions as RD
from ...ops import scatter as SC
from ...ops import shape as S
from . import derivative, zeros


@derivative(SC.gather, "GatherBackward0", save=("index",))
def _gather(ctx, grad):
    return SC.scatter_add(zeros(ctx.sizes("self"), grad), ctx.dim, ctx.index, grad), None


def _as(mask, like):
    return F._to_copy(mask, dtype=like.dtype)


def _cleared(grad, dim, index):
    """``grad`` with the positions a scatter wrote set to zero (their old values were lost)."""
    return SC.scatter_value(grad, dim, index, 0)


@derivative(SC.scatter, "ScatterBackward0", save=("index",))
def _scatter(ctx, grad):
    index = ctx.index
    return (_cleared(grad, ctx.dim, index) if ctx.needs[0] else None, None,
            SC.gather(grad, ctx.dim, index) if ctx.needs[2] else None)


@derivative(SC.scatter_value, "ScatterBackward1", save=("index",))
def _scatter_value(ctx, grad):
    return _cleared(grad, ctx.dim, ctx.index), None


@derivative(SC.scatter_add, "ScatterAddBackward0", save=("index",))
def _scatter_add(ctx, grad):
    return grad, None, SC.gather(grad, ctx.dim, ctx.index) if ctx.needs[2] else None


@derivative(SC.scatter_reduce, "ScatterReduceBackward0",
            save=("self", "index", "src", "result"))
def _scatter_reduce(ctx, grad):
    """``scatter_reduce_backward`` (FunctionsManual.cpp): sum passes the gradient, mean divides
    by the counts, amax/amin share it among the elements equal to the result, prod divides the
    result by the element (with the zero cases handled exactly)."""
    x, dim, index, src, result = ctx.self, ctx.dim, ctx.index, ctx.src, ctx.result
    reduce, include_self = ctx.reduce, ctx.include_self
    reduce = {"max": "amax", "min": "amin"}.get(reduce, reduce)   # scatter's legacy spellings
    if reduce == "sum":
        g_self, g_src = grad, SC.gather(grad, dim, index)
    elif reduce == "mean":
        n = F.full(grad._shape, 1 if include_self else 0, dtype=grad.dtype, device=grad.device)
        n = SC.scatter_add(n, dim, index, F.full(src._shape, 1, dtype=grad.dtype,
                                                 device=grad.device))
        n = P.where(P.eq(n, 0), 1.0, n)
        g_self = P.div(grad, n)
        g_src = P.div(SC.gather(grad, dim, index), SC.gather(n, dim, index))
    elif reduce in ("amax", "amin"):
        value = SC.gather(result, dim, index)
        self_is = P.eq(x, result)
        src_is = P.eq(src, value)
        n = SC.scatter_add(_as(self_is, grad), dim, index, _as(src_is, grad))
        share = P.div(grad, n)
        g_self = P.mul(self_is, share)
        g_src = P.mul(src_is, SC.gather(share, dim, index))
    elif reduce == "prod":
        masked_self = P.where(P.eq(x, 0), 1.0, x)
        masked_self_result = SC.scatter_reduce(masked_self, dim, index, src, reduce,
                                               include_self=include_self)
        g_self = P.div(P.mul(grad, masked_self_result), masked_self)
        src_zero = P.eq(src, 0)
        zeros_per_slot = SC.gather(SC.scatter_add(zeros(x._shape, grad), dim, index,
                                                  _as(src_zero, grad)), dim, index)
        single_zero = P.logical_and(src_zero, P.eq(zeros_per_slot, 1))
        masked_src_result = SC.scatter_reduce(x, dim, index, P.where(single_zero, 1.0, src),
                                              reduce, include_self=include_self)
        g_src = P.where(single_zero,
                        SC.gather(P.mul(grad, masked_src_result), dim, index),
                        P.div(SC.gather(P.mul(grad, result), dim, index),
                              P.where(src_zero, 1.0, src)))
    else:
        raise NotImplementedError(f"scatter_reduce backward: reduce='{reduce}' is not "
                                  f"supported")
    if not include_self:
        g_self = _cleared(g_self, dim, index)
    return (g_self if ctx.needs[0] else None, None, g_src if ctx.needs[2] else None)


@derivative(SC.index_select, "IndexSelectBackward0", save=("index",))
def _index_select(ctx, grad):
    out = zeros(ctx.sizes("self"), grad)
    return SC.index_add_(out, ctx.dim, ctx.index, grad), None


@derivative(SC.index_add_, "IndexAddBackward0", save=("index",))
def _index_add_(ctx, grad):
    g_source = None
    if ctx.needs[2]:
        g_source = SC.index_select(grad, ctx.dim, ctx.index)
        if ctx.alpha != 1:
            g_source = P.mul(g_source, ctx.alpha)
        g_source = S.reshape(g_source, ctx.sizes("source"))
    return grad, None, g_source


def _index_cleared(grad, dim, index):
    return SC.index_fill_(F.clone(grad), dim, index, 0)


@derivative(SC.index_copy_, "IndexCopyBackward0", save=("index",))
def _index_copy_(ctx, grad):
    index = ctx.index
    return (_index_cleared(grad, ctx.dim, index) if ctx.needs[0] else None, None,
            S.reshape(SC.index_select(grad, ctx.dim, index), ctx.sizes("source"))
            if ctx.needs[2] else None)


@derivative(SC.index_fill_, "IndexFillBackward0", save=("index",))
def _index_fill_(ctx, grad):
    return _index_cleared(grad, ctx.dim, ctx.index), None


@derivative(SC.index_fill_tensor_, "IndexFillBackward1", save=("index",))
def _index_fill_tensor_(ctx, grad):
    index = ctx.index
    return (_index_cleared(grad, ctx.dim, index) if ctx.needs[0] else None, None,
            RD.sum(SC.index_select(grad, ctx.dim, index)) if ctx.needs[2] else None)


@derivative(SC.as_strided_scatter, "AsStridedScatterBackward0", save=("self:geometry",))
def _as_strided_scatter(ctx, grad):
    """Positions the view covers take ``src``'s gradient, the others ``self``'s (Note
    [as_strided_scatter geometry] in ops/scatter.py). When ``grad`` is laid out as self was
    (the usual case: both contiguous from offset 0) and the view lies among self's elements,
    ``grad`` itself is the storage to read; otherwise it is first written at self's positions
    into a zero buffer that also covers the view (view elements outside self get 0, as eager
    never shows them)."""
    shape, strides, base_offset = ctx.self
    if SC.has_internal_overlap(shape, strides):
        strides, base_offset = contiguous_strides(shape), 0
    size, stride = tuple(ctx.size), tuple(ctx.stride)
    offset = base_offset if ctx.storage_offset is None else ctx.storage_offset
    numel = storage_extent(shape, contiguous_strides(shape))
    if (tuple(grad.stride()) == tuple(strides) and grad.storage_offset() == base_offset
            and MR.is_non_overlapping_and_dense(shape, strides) and offset >= base_offset
            and offset + storage_extent(size, stride) <= base_offset + numel):
        placed = grad
    else:
        lo = min(base_offset, offset)
        reach = max(base_offset + storage_extent(shape, strides),
                    offset + storage_extent(size, stride))
        buffer = zeros((reach - lo,), grad)
        placed = S.as_strided(buffer, shape, strides, base_offset - lo)
        F.copy_(placed, grad)
        offset -= lo
    g_self = g_src = None
    if ctx.needs[0]:
        g_self = SC.as_strided_scatter(placed, zeros(size, grad), size, stride, offset)
    if ctx.needs[1]:
        g_src = S.as_strided(placed, size, stride, offset)
    return g_self, g_src
