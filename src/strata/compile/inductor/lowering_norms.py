"""Lowering rows of the norms and logical reductions: ``linalg_vector_norm``
(``clip_grad_norm_``, ``normalize``, ``Tensor.norm``), one reduction whose prologue is eager's
element formula, and a pointwise finish that fuses with the reduction's readers; ``var`` (the
mean, then the sum of squared deviations, as eager's two passes); ``prod``; ``any`` and
``all`` (a max and a min of the elements' truth).

Eager (backends/cpu/reductions.py ``vector_norm``) computes |x| in the result dtype, then by
``ord``: sqrt(sum(|x|^2)) for 2, sum(|x|) for 1, max/min(|x|) for +-inf, the count of nonzeros
for 0, and sum(|x|^p)^(1/p) (libm's ``pow``, NumPy's ``np.power``) otherwise. The elements
are the same bits here; the sums run in the kernel's order (a SIMD reduction, NumPy's is
pairwise), so a sum and what is made of it agree within a few ulps, max and min exactly.
"""

import math

from .ir import TensorValue, ops
from .lowering import (
    DTYPES,
    FLOATS,
    NoLowering,
    as_loader,
    aten,
    out_spec,
    pointwise,
    reduce,
    register,
)


def _element(ord, dtype):
    """``|x| -> the reduced value`` for ``ord`` (eager's formula, in the result dtype)."""
    if ord == 2:
        return lambda x: ops.mul(x, x)      # |x|*|x| == x*x: the sign never reaches a bit
    if ord == 0:
        return lambda x: ops.to_dtype(ops.ne(x, ops.constant(0, dtype)), dtype)
    if ord in (1, math.inf, -math.inf):
        return lambda x: ops.abs(x)
    exponent = _rounded_constant(ord, dtype)
    return lambda x: ops.pow(ops.abs(x), exponent())


def _rounded_constant(value, dtype):
    """A Python float as ``dtype`` the way NumPy converts it (the double rounded once), not
    as a decimal literal parsed into float32 (which may round the other way)."""
    return lambda: ops.to_dtype(ops.constant(float(value), "float64"), dtype)


@register(aten.linalg_vector_norm.default)
def _vector_norm(G, node, a, ord=2, dim=None, keepdim=False, dtype=None):
    out_dtype = out_spec(node)[0]
    if out_dtype not in FLOATS or a.dtype not in FLOATS or isinstance(ord, bool) or \
            not isinstance(ord, (int, float)) or math.isnan(ord):
        raise NoLowering("linalg_vector_norm: a complex or half input")
    generic = ord not in (0, 1, 2, math.inf, -math.inf)
    if generic and G.device_type != "cpu":
        raise NoLowering("linalg_vector_norm: pow is the C printer's")
    if not a.size:
        raise NoLowering("linalg_vector_norm: a 0-dim input")
    dims = [] if dim is None else ([dim] if isinstance(dim, int) else list(dim))
    kind = {math.inf: "max", -math.inf: "min"}.get(ord, "sum")
    element = _element(ord, out_dtype)
    total = reduce(G, a, dims, keepdim, kind, out_dtype, lambda x, index: element(x))
    if ord == 2:
        return pointwise(G, node, lambda s: ops.sqrt(s), total)
    if generic:
        root = _rounded_constant(1.0 / ord, out_dtype)
        return pointwise(G, node, lambda s: ops.pow(s, root()), total)
    return total


@register(aten.any.dims, aten.all.dims)
def _any(G, node, a, dim=None, keepdim=False):
    """Whether any (all) element is nonzero (NaN is): the max (min) of their truth, a bool
    (a uint8 0/1 for a uint8 input, as PyTorch)."""
    out_dtype = out_spec(node)[0]
    if a.dtype not in DTYPES or not a.size or out_dtype not in ("bool", "uint8"):
        raise NoLowering("any/all: a half or 0-dim input")
    if dim is not None and not isinstance(dim, int) and not len(dim):     # dim=[]: no reduction
        return pointwise(G, node, lambda x: ops.ne(x, ops.constant(0, a.dtype)), a,
                         compute=a.dtype)
    dims = [] if dim is None else ([dim] if isinstance(dim, int) else list(dim))
    kind = "max" if node.target is aten.any.dims else "min"
    if out_dtype == "bool":
        return reduce(G, a, dims, keepdim, kind, "bool")
    # counted in int32, then narrowed: gcc 12 with -march=native (AVX-512) vectorises an
    # unrolled uint8 max of ``x != 0`` in a simd loop into 0xff (the vector mask), not 1
    truth = reduce(G, a, dims, keepdim, kind, "int32", lambda x, index: ops.where(
        ops.ne(x, ops.constant(0, "int32")), ops.constant(1, "int32"),
        ops.constant(0, "int32")))
    return pointwise(G, node, lambda x: x, truth)


@register(aten.var.correction)
def _var(G, node, a, dim=None, correction=None, keepdim=False):
    """Eager's formula (backends/cpu/reductions.py ``var``): the mean (the sum divided by n in
    the dtype), the sum of squared deviations from it, divided by max(n - correction, 0) (too
    few elements give inf or nan, as PyTorch). Sums in the kernel's order: within ulps."""
    dtype = out_spec(node)[0]
    if dtype not in FLOATS or a.dtype != dtype or not a.size:
        raise NoLowering("var: a complex, integer or 0-dim input")
    dims = [] if dim is None else ([dim] if isinstance(dim, int) else list(dim))
    reduced = {d % len(a.size) for d in dims} if dims else set(range(len(a.size)))
    n = math.prod(a.size[d] for d in reduced)
    a = G.realize(a)    # read by both passes
    total = reduce(G, a, dims, True, "sum")
    mean = as_loader(G.realize(TensorValue(dtype, total.size, lambda i: ops.truediv(
        total.load(i), ops.constant(n, dtype)))), a.size, dtype)
    x = as_loader(a, a.size, dtype)

    def squared(i):
        deviation = ops.sub(x(i), mean(i))
        return ops.mul(deviation, deviation)
    squares = reduce(G, TensorValue(dtype, a.size, squared), dims, keepdim, "sum")
    divisor = max(n - (1 if correction is None else correction), 0)
    return pointwise(G, node, lambda s: ops.truediv(s, ops.constant(divisor, dtype)), squares)


@register(aten.prod.dim_int)
def _prod(G, node, a, dim, keepdim=False, dtype=None):
    """``np.multiply.reduce`` along ``dim`` in the result dtype; integers wrap as NumPy's
    (exact in any order), floats are products in the kernel's order: within ulps."""
    out_dtype = out_spec(node)[0]
    if out_dtype not in FLOATS + ("int64",) or not a.size:
        raise NoLowering("prod: a small integer result, or a 0-dim input")
    return reduce(G, a, [dim], keepdim, "prod", out_dtype)
