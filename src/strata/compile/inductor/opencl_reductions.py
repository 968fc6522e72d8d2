"""The OpenCL device's other reductions and scans: ``linalg_vector_norm`` (so ``norm`` and
``clip_grad_norm_``), ``prod``, ``var`` (so ``std``), ``all``/``any``, ``cumsum``/``cumprod``,
``cummax``/``cummin``, ``logcumsumexp``, ``einsum``.

The reductions are opencl_rows.reduce with an element map and a finishing map (loop-IR
formulas); a scan is a window (opencl_nn.window) along the last dim of a transposed view,
element i summing the elements j <= i of its row: n^2 / 2 work per row, exact and simple for
the short rows models scan (a work-group scan in local memory is the next step).
"""

import math
from functools import cache

from ...core import dtype as D
from ...core.shape import contiguous_strides
from ...ops import linalg as LA
from ...ops import meta_rules as MR
from ...ops import reductions as RED
from .ir import ops
from .opencl_nn import highest, lowest, window
from .opencl_pointwise import identity, new_output, pointwise, runtime_of
from .opencl_rows import _dims, reduce


def _absolute(v):
    return ops.abs(v)


def _square(v):
    return ops.mul(v, v)


def _nonzero(v):
    return ops.to_dtype(ops.ne(v, ops.constant(0, v.dtype)), v.dtype)


def _truth(v):
    return ops.to_dtype(v, "bool")


def _sqrt(v):
    return ops.sqrt(v)


@cache
def _power(p):
    """|x|^p and its root, one pair of formulas per exponent (the program cache keys on them)."""
    def element(v):
        return ops.pow(ops.abs(v), ops.constant(p, v.dtype))

    def root(v):
        return ops.pow(v, ops.constant(1.0 / p, v.dtype))
    return element, root


def vector_norm(self, ord=2, dim=None, keepdim=False, dtype=None):
    spec = RED.vector_norm.meta(self, ord, dim, keepdim, dtype)
    out = new_output(spec, self)
    dims = MR.reduction_dims(self, dim)
    if self.dtype != spec.dtype:        # |x|^p in the result's dtype, as ATen computes it
        self = _converted(self, spec.dtype)
    if ord == 2:
        kind, element, finish = "sum", _square, _sqrt
    elif ord == 1:
        kind, element, finish = "sum", _absolute, None
    elif ord == math.inf:
        kind, element, finish = "max", _absolute, None
    elif ord == -math.inf:
        kind, element, finish = "min", _absolute, None
    elif ord == 0:
        kind, element, finish = "sum", _nonzero, None
    else:
        kind, (element, finish) = "sum", _power(float(ord))
    reduce("aten::linalg_vector_norm", kind, self, list(dims), keepdim, spec.dtype,
           [(out, "value")], element=element, finish=finish)
    return out


def prod(self, dtype=None):
    spec = RED.prod.meta(self, dtype)
    out = new_output(spec, self)
    reduce("aten::prod", "prod", self, list(range(self.ndim)), False, spec.dtype,
           [(out, "value")])
    return out


def prod_dim(self, dim, keepdim=False, dtype=None):
    spec = RED.prod_dim.meta(self, dim, keepdim, dtype)
    out = new_output(spec, self)
    reduce("aten::prod.dim_int", "prod", self, [dim] if self.ndim else [], keepdim, spec.dtype,
           [(out, "value")])
    return out


def var(self, dim=None, correction=None, keepdim=False):
    """The sum of squared deviations from the mean (one row kernel), over N - correction."""
    spec = RED.var.meta(self, dim, correction, keepdim)
    out = new_output(spec, self)
    dims = _dims(self, dim)
    reduce("aten::var.correction", "meanvar", self, dims, keepdim, spec.dtype, [(out, "den")])
    n = self.numel() // max(out.numel(), 1) if self.numel() else 0
    dof = max(n - (1 if correction is None else correction), 0)
    return pointwise("aten::var.correction", _divide, [(out, spec.dtype), (dof, spec.dtype)],
                     out)


def _divide(a, b):
    return ops.truediv(a, b)


def _logical(op, kind):
    """all: the product of (x != 0); any: their sum, != 0; as bool (uint8 for uint8 input)."""
    def kernel(self, dim=None, keepdim=False):
        spec = op.meta(self, dim, keepdim)
        out = new_output(spec, self)
        reduce(op.qualname, kind, self, list(RED.logical_dims(self, dim)), keepdim, D.int64,
               [(out, "value")], element=_truth, finish=_truth)
        return out
    return kernel


# --- scans --------------------------------------------------------------------------------------

def _converted(x, dtype):
    """A contiguous copy of ``x`` as ``dtype``: reductions accumulate in the result's dtype."""
    return pointwise("aten::_to_copy", identity, [(x, dtype)],
                     runtime_of(x).empty(tuple(x._shape), contiguous_strides(x._shape), dtype))


def _cumsum_term(B, index, rindex):
    return _prefix(B, index, rindex, 0)


def _cumprod_term(B, index, rindex):
    return _prefix(B, index, rindex, 1)


def _prefix(B, index, rindex, identity):
    """Element j of the row if j <= i, else the identity."""
    *lead, i = index
    (j,) = rindex
    v = B["inp"].load((*lead, j))
    return ops.where(ops.index_expr(f"{j} <= {i}", "bool"), v, ops.constant(identity, v.dtype))


def _scanned(B, index):
    return ops.load("red", "0")


def _scan(op, kind, term):
    def kernel(self, dim, dtype=None):
        spec = op.meta(self, dim, dtype)
        out = new_output(spec, self)
        if not out.numel():
            return out
        src = self if self.dtype == spec.dtype else _converted(self, spec.dtype)
        x, o = (t.reshape(1) if self.ndim == 0 else t.transpose(dim, -1) for t in (src, out))
        window(op.qualname, {"inp": x}, {}, [(o, _scanned)], (x._shape[-1],), kind, term,
               spec.dtype.name)
        return out
    return kernel


def _backwards_value(B, index, rindex, low):
    """Element i - y of the row (its latest elements first), or ``low`` before its start."""
    *lead, i = index
    (y,) = rindex
    x = B["inp"].load((*lead, f"max({i} - {y}, 0L)"))
    return ops.where(ops.index_expr(f"{y} <= {i}", "bool"), x, ops.constant(low, x.dtype))


def _cummax_term(B, index, rindex):
    return _backwards_value(B, index, rindex, lowest(B["inp"].dtype))


def _cummin_term(B, index, rindex):
    return _backwards_value(B, index, rindex, highest(B["inp"].dtype))


def _running_value(B, index):
    return ops.load("red_value", "0")


def _running_index(B, index):
    return ops.index_expr(f"{index[-1]} - {ops.load('red', '0')}", "int64")


def _cum_extreme(op, kind, term):
    """cummax/cummin: an argmax/argmin over the row's elements up to i, latest first, so that
    the latest of equal extremes (ATen compares with >=) and the latest NaN win."""
    def kernel(self, dim):
        specs = op.meta(self, dim)
        values, indices = new_output(specs[0], self), new_output(specs[1], self)
        if not values.numel():
            return values, indices
        x, v, i = (t.reshape(1) if self.ndim == 0 else t.transpose(dim, -1)
                   for t in (self, values, indices))
        window(op.qualname, {"inp": x}, {}, [(v, _running_value), (i, _running_index)],
               (x._shape[-1],), kind, term, self.dtype.name)
        return values, indices
    return kernel


def _shifted_prefix_term(B, index, rindex):
    """exp(x_j - m_i) for j <= i (m: the running maximum), else 0."""
    *lead, i = index
    (j,) = rindex
    x, m = B["inp"].load((*lead, j)), B["max"].load(index)
    shifted = ops.exp(ops.sub(x, m))
    return ops.where(ops.index_expr(f"{j} <= {i}", "bool"), shifted, ops.constant(0, x.dtype))


def _log_of_prefix(B, index):
    """m + log(sum): or m itself where it is infinite (all -inf so far, or an inf seen)."""
    m = B["max"].load(index)
    return ops.where(ops.isinf(m), m, ops.add(m, ops.log(ops.load("red", "0"))))


def logcumsumexp(self, dim):
    """log(cumsum(exp(x))) without overflow: each prefix shifted by its running maximum
    (cummax) before the sum."""
    spec = RED.logcumsumexp.meta(self, dim)
    out = new_output(spec, self)
    if not out.numel():
        return out
    src = self if self.dtype == spec.dtype else _converted(self, spec.dtype)
    peak = RED.cummax(src, dim)[0]
    x, m, o = (t.reshape(1) if self.ndim == 0 else t.transpose(dim, -1) for t in (src, peak, out))
    window("aten::logcumsumexp", {"inp": x, "max": m}, {}, [(o, _log_of_prefix)],
           (x._shape[-1],), "sum", _shifted_prefix_term, spec.dtype.name)
    return out


# --- einsum -----------------------------------------------------------------------------------

@cache
def _einsum_formulas(equation, broadcast):
    """(term, finish) of a parsed einsum equation ("ab,bc->ac"): the product of the operands'
    elements at the output's letters and the contracted ones. ``broadcast``: per operand, the
    dims of size 1 that broadcast (read at 0). Cached per structure, as the program cache keys
    on the functions."""
    inputs, out = equation.split("->")
    terms = inputs.split(",")
    contracted = sorted({c for t in terms for c in t} - set(out))

    def term(B, index, rindex):
        where = dict(zip(out, index))
        where.update(zip(contracted, rindex))
        value = None
        for n, (t, flat) in enumerate(zip(terms, broadcast)):
            x = B[f"op{n}"].load(tuple("0" if one else where[c] for c, one in zip(t, flat)))
            value = x if value is None else ops.mul(value, x)
        return value
    return term, contracted


def _einsum_result(B, index):
    return ops.load("red", "0")


def einsum(equation, tensors, path=None):
    """One loop-IR reduction: each output element sums, over the contracted letters, the
    product of the operands' elements (a direct sum: no pairwise contraction order)."""
    spec = LA.einsum.meta(equation, tensors, path)
    parsed, _ = LA.einsum_check(equation, tensors)
    out = new_output(spec, tensors[0])
    if not out.numel():
        return out
    inputs = parsed.equation.split("->")[0]
    sizes = {}
    for t, x in zip(inputs.split(","), tensors):
        for c, n in zip(t, x._shape):
            sizes[c] = n if sizes.get(c, 1) == 1 else sizes[c]      # size 1 broadcasts
    broadcast = tuple(tuple(x._shape[d] == 1 and sizes[c] != 1 for d, c in enumerate(t))
                      for t, x in zip(inputs.split(","), tensors))
    term, contracted = _einsum_formulas(parsed.equation, broadcast)
    rsizes = tuple(sizes[c] for c in contracted) or (1,)
    if any(size == 0 for size in rsizes):
        return pointwise("aten::einsum", identity, [(0, out.dtype)], out)
    window("aten::einsum", {f"op{n}": t for n, t in enumerate(tensors)}, {},
           [(out, _einsum_result)], rsizes, "sum", term, out.dtype.name)
    return out


def kernels() -> dict:
    return {RED.vector_norm: vector_norm, RED.prod: prod, RED.prod_dim: prod_dim, RED.var: var,
            RED.all: _logical(RED.all, "prod"), RED.any: _logical(RED.any, "sum"),
            RED.cumsum: _scan(RED.cumsum, "sum", _cumsum_term),
            RED.cumprod: _scan(RED.cumprod, "prod", _cumprod_term), LA.einsum: einsum,
            RED.cummax: _cum_extreme(RED.cummax, "argmax", _cummax_term),
            RED.cummin: _cum_extreme(RED.cummin, "argmin", _cummin_term),
            RED.logcumsumexp: logcumsumexp}
