"""Derivatives of ``ops/reductions.py`` (reductions and scans)."""

import math

from ...core.shape import wrap_dim
from ...ops import factory as F
from ...ops import pointwise as P
from ...ops import reductions as RD
from ...ops import scatter as SC
from ...ops import shape as S
from . import conj, derivative, has_no_zeros, non_differentiable, zeros


def _all_dims(dim):
    return dim is None or (not isinstance(dim, int) and len(dim) == 0)


def _dims(dim, ndim):
    if _all_dims(dim):
        return tuple(range(ndim))
    return tuple(sorted(wrap_dim(d, ndim) for d in ((dim,) if isinstance(dim, int) else dim)))


def _sum_name(self, dim=None, keepdim=False, dtype=None):
    """``sum(x)`` is ATen's dim-less overload (row 0); any dim list, even [], is row 1."""
    return "SumBackward0" if dim is None else "SumBackward1"


def restore_dims(grad, shape, dim, keepdim):
    """A reduction's gradient with the reduced dims put back as size 1 (keepdim form)."""
    if not keepdim and shape:
        for d in _dims(dim, len(shape)):
            grad = S.unsqueeze(grad, d)
    return grad


def unreduce(grad, shape, dim, keepdim):
    """Expand a reduction's gradient back to the input's shape (``sum_backward``)."""
    return S.expand(restore_dims(grad, shape, dim, keepdim), tuple(shape))


def count(shape, dim):
    if not shape:
        return 1
    return math.prod(shape[d] for d in _dims(dim, len(shape)))


def evenly_distribute(grad, self, result):
    """max()/median()-style gradient of a full reduction: shared equally among the elements
    equal to the result; a NaN result selects the NaN elements (``evenly_distribute_backward``)."""
    mask = P.logical_or(P.eq(self, result), P.logical_and(P.isnan(self), P.isnan(result)))
    return P.mul(mask, P.div(grad, RD.sum(mask)))


def scale_by_count(grad, shape, self, result, dim, keepdim):
    """amax/amin-style gradient: shared among the elements equal to the result along the dims
    (``scale_grad_by_count``; a NaN result matches nothing, so its gradient is NaN as there)."""
    mask = P.eq(self, restore_dims(result, shape, dim, keepdim))
    g = restore_dims(grad, shape, dim, keepdim)
    if not shape:
        return P.mul(mask, g)
    return P.mul(mask, P.div(g, RD.sum(mask, list(_dims(dim, len(shape))), True)))


def select_backward_by_index(grad, shape, dim, indices, keepdim):
    """max.dim/sort/topk-style gradient: scatter into zeros at the selected indices
    (``value_selecting_reduction_backward``)."""
    if not shape:
        return grad
    d = wrap_dim(dim, len(shape))
    if not keepdim:
        grad, indices = S.unsqueeze(grad, d), S.unsqueeze(indices, d)
    return SC.scatter(zeros(shape, grad), d, indices, grad)


@derivative(RD.sum, _sum_name)
def _sum(ctx, grad):
    return unreduce(grad, ctx.sizes("self"), ctx.dim, ctx.keepdim)


def prod_backward(grad, x, result, dim):
    """d prod / d x_i = product of the others: result / x_i when nothing is zero; otherwise the
    product of an exclusive cumprod from each side (exact with zeros; the form traced on meta
    tensors, which have no values to test)."""
    if has_no_zeros(x):
        return P.mul(grad, conj(P.div(result, x)))
    n = x._shape[dim]
    if n == 1:
        return P.mul(grad, F.full(x._shape, 1, dtype=x.dtype, device=x.device))
    ones = F.full(tuple(1 if i == dim else s for i, s in enumerate(x._shape)), 1,
                  dtype=x.dtype, device=x.device)
    before = RD.cumprod(S.cat([ones, S.slice(x, dim, 0, n - 1)], dim), dim)
    after = S.flip(RD.cumprod(S.cat([ones, S.flip(S.slice(x, dim, 1, n), [dim])], dim), dim),
                   [dim])
    return P.mul(grad, conj(P.mul(before, after)))


@derivative(RD.prod, "ProdBackward0", save=("self", "result"))
def _prod(ctx, grad):
    x = ctx.self
    shape = x._shape
    if not shape:
        return grad
    flat = S.reshape(x, (-1,))
    g = prod_backward(S.expand(S.reshape(grad, (1,)), flat._shape), flat,
                      S.reshape(ctx.result, (1,)), 0)
    return S.reshape(g, shape)


@derivative(RD.prod_dim, "ProdBackward1", save=("self", "result"))
def _prod_dim(ctx, grad):
    x = ctx.self
    shape = x._shape
    if not shape:
        return grad
    d = wrap_dim(ctx.dim, len(shape))
    g = S.expand(restore_dims(grad, shape, d, ctx.keepdim), shape)
    r = S.expand(restore_dims(ctx.result, shape, d, ctx.keepdim), shape)
    return prod_backward(g, x, r, d)


@derivative(RD.mean, lambda self, dim=None, keepdim=False, dtype=None:
            "MeanBackward0" if dim is None else "MeanBackward1")
def _mean(ctx, grad):
    shape = ctx.sizes("self")
    return P.div(unreduce(grad, shape, ctx.dim, ctx.keepdim), max(count(shape, ctx.dim), 1))


def _extremum_dims(op, name):
    @derivative(op, name, save=("self", "result"))
    def formula(ctx, grad):
        shape = ctx.sizes("self")
        return scale_by_count(grad, shape, ctx.self, ctx.result, ctx.dim, ctx.keepdim)


_extremum_dims(RD.amax, "AmaxBackward0")
_extremum_dims(RD.amin, "AminBackward0")


# nansum, aminmax and logsumexp are composites with rows of their own (CompositeExplicitAutograd
# in backends/composite.py), so each records one node as in ATen.
@derivative(RD.nansum, "NansumBackward0", save=("self",))
def _nansum(ctx, grad):
    x = ctx.self
    return P.mul(unreduce(grad, x._shape, ctx.dim, ctx.keepdim), P.logical_not(P.isnan(x)))


@derivative(RD.aminmax, "AminmaxBackward0", save=("self", "result0", "result1"))
def _aminmax(ctx, grad_min, grad_max):
    """amin's and amax's gradients, each shared among the elements equal to its result."""
    x = ctx.self
    dims = () if ctx.dim is None else (ctx.dim,)
    return P.add(scale_by_count(grad_min, x._shape, x, ctx.result0, dims, ctx.keepdim),
                 scale_by_count(grad_max, x._shape, x, ctx.result1, dims, ctx.keepdim))


def _extremum_all(op, name):
    @derivative(op, name, save=("self", "result"))
    def formula(ctx, grad):
        return evenly_distribute(grad, ctx.self, ctx.result)


_extremum_all(RD.max, "MaxBackward1")
_extremum_all(RD.min, "MinBackward1")


def _by_index(op, name):
    @derivative(op, name, save=("result1",))
    def formula(ctx, grad, _indices_grad=None):
        return select_backward_by_index(grad, ctx.sizes("self"), ctx.dim, ctx.result1,
                                        ctx.keepdim)


_by_index(RD.max_dim, "MaxBackward0")
_by_index(RD.min_dim, "MinBackward0")


@derivative(RD.var, "VarBackward0", save=("self",))
def _var(ctx, grad):
    x = ctx.self
    shape = x._shape
    correction = 1 if ctx.correction is None else ctx.correction
    # PyTorch counts an explicit dim=[] as one element here (its _safe_size), though the
    # forward reduces every dim; follow it so gradients agree
    n = 1 if isinstance(ctx.dim, (list, tuple)) and not ctx.dim else count(shape, ctx.dim)
    dims = list(_dims(ctx.dim, len(shape)))
    centered = P.sub(x, RD.mean(x, dims, True))
    g = restore_dims(grad, shape, ctx.dim, ctx.keepdim)
    return P.mul(P.mul(g, centered), 2.0 / (n - correction) if n != correction else math.inf)


# std, var_mean and std_mean are composites with rows of their own (registered as
# CompositeExplicitAutograd in backends/composite.py), so each records one node as in ATen.
def _std_grad(ctx, grad, std):
    """``std_backward``: var's gradient of grad / (2 std), zero where std is 0."""
    return _var(ctx, P.where(P.eq(std, 0), 0.0, P.div(grad, P.mul(std, 2))))


@derivative(RD.std, "StdBackward0", save=("self", "result"))
def _std(ctx, grad):
    return _std_grad(ctx, grad, ctx.result)


@derivative(RD.var_mean, "VarMeanBackward0", save=("self",))
def _var_mean(ctx, grad_var, grad_mean):
    return P.add(_var(ctx, grad_var), _mean(ctx, grad_mean))


@derivative(RD.std_mean, "StdMeanBackward0", save=("self", "result0"))
def _std_mean(ctx, grad_std, grad_mean):
    return P.add(_std_grad(ctx, grad_std, ctx.result0), _mean(ctx, grad_mean))


@derivative(RD.vector_norm, "LinalgVectorNormBackward0", save=("self", "result"))
def _vector_norm(ctx, grad):
    """``norm_backward``: ord 2 -> x / norm; ord p -> x |x|^(p-2) / norm^(p-1); inf -> shared
    among the largest |x|; 0 -> flat. Zero norms give zero gradient."""
    x, norm, p = ctx.self, ctx.result, float(ctx.ord)
    shape = x._shape
    g = restore_dims(grad, shape, ctx.dim, ctx.keepdim)
    norm = restore_dims(norm, shape, ctx.dim, ctx.keepdim)
    if p == 0.0:
        return zeros(shape, grad)
    if math.isinf(p):   # shared among the largest |x|, NaNs counted as largest
        ax = P.abs(x)
        mask = P.logical_or(P.eq(ax, norm), P.isnan(ax))
        dims = list(_dims(ctx.dim, len(shape))) if shape else []
        count_ = RD.sum(mask, dims, True) if dims else P.mul(mask, 1)
        return P.mul(P.sign(x), P.mul(P.div(g, count_), mask))
    if p == 1.0:
        return P.mul(g, P.sign(x))
    if p == 2.0:
        scaled = P.div(x, norm)
    else:
        scaled = P.div(P.mul(x, P.pow(P.abs(x), p - 2)), P.pow(norm, p - 1))
    return P.mul(g, P.where(P.eq(norm, 0), 0.0, scaled))


@derivative(RD.cumsum, "CumsumBackward0")
def _cumsum(ctx, grad):
    shape = ctx.sizes("self")
    if not shape:
        return grad
    d = wrap_dim(ctx.dim, len(shape))
    return S.flip(RD.cumsum(S.flip(grad, [d]), d), [d])


@derivative(RD.cumprod, "CumprodBackward0", save=("self", "result"))
def _cumprod(ctx, grad):
    """d out_j / d x_k = prod_{i<=j, i!=k} x_i. Without zeros that is out_j / x_k, so the
    gradient is a reversed cumsum of grad * out, divided by x; with zeros, each k is done by
    replacing x_k with 1 (exact, one cumprod per position). A meta tensor (AOT autograd
    tracing the backward) has no values to look at: the zero-safe form, as PyTorch's
    ``cumprod_backward`` takes its composite-compliant branch for tensor subclasses."""
    x = ctx.self
    shape = x._shape
    if not shape or x.numel() == 0:
        return grad
    d = wrap_dim(ctx.dim, len(shape))
    if has_no_zeros(x):
        rev = S.flip(RD.cumsum(S.flip(P.mul(grad, ctx.result), [d]), d), [d])
        return P.div(rev, x)
    parts = []
    for k in range(shape[d]):
        ones = F.full(tuple(1 if i == d else s for i, s in enumerate(shape)), 1,
                      dtype=x.dtype, device=x.device)
        replaced = S.cat([S.slice(x, d, 0, k), ones, S.slice(x, d, k + 1, shape[d])], d)
        partial = S.slice(RD.cumprod(replaced, d), d, k, shape[d])
        parts.append(RD.sum(P.mul(S.slice(grad, d, k, shape[d]), partial), [d], True))
    return S.cat(parts, d)


def _cum_extremum(op, name):
    @derivative(op, name, save=("result1",))
    def formula(ctx, grad, _indices_grad=None):
        shape = ctx.sizes("self")
        if not shape:
            return grad
        d = wrap_dim(ctx.dim, len(shape))
        return SC.scatter_add(zeros(shape, grad), d, ctx.result1, grad)


_cum_extremum(RD.cummax, "CummaxBackward0")
_cum_extremum(RD.cummin, "CumminBackward0")


@derivative(RD.logcumsumexp, "LogcumsumexpBackward0", save=("self", "result"))
def _logcumsumexp(ctx, grad):
    """PyTorch's stable form: split the gradient by sign and do the reversed sum in log space."""
    x, r = ctx.self, ctx.result
    if not x._shape:
        return grad
    d = wrap_dim(ctx.dim, x.ndim)

    def reverse_lcse(t):
        return S.flip(RD.logcumsumexp(S.flip(t, [d]), d), [d])

    log_abs = P.log(P.abs(grad))
    lowest = -math.inf
    log_pos = P.where(P.gt(grad, 0), log_abs, lowest)
    log_neg = P.where(P.lt(grad, 0), log_abs, lowest)
    pos = P.exp(P.add(reverse_lcse(P.sub(log_pos, r)), x))
    neg = P.exp(P.add(reverse_lcse(P.sub(log_neg, r)), x))
    return P.sub(pos, neg)


non_differentiable(RD.argmax, RD.argmin, RD.all, RD.any)


@derivative(RD.logsumexp, "LogsumexpBackward0", save=("self", "result"))
def _logsumexp(ctx, grad):
    """``logsumexp_backward``: grad * exp(x - result), the reduced dims restored."""
    x = ctx.self
    shape = x._shape
    result = restore_dims(ctx.result, shape, ctx.dim, ctx.keepdim)
    return P.mul(restore_dims(grad, shape, ctx.dim, ctx.keepdim), P.exp(P.sub(x, result)))
