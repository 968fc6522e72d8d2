"""Lowering: one row per aten op, turning it into loop IR (Inductor's ``lowering.py``).

A row takes the graph under construction (``GraphLowering``, graph.py), the fx node, and the
node's arguments with every tensor replaced by a ``TensorValue``; it returns the result's
``TensorValue`` (or a tuple of them). Pointwise rows return unrealized values (formulas that
their readers inline); reductions are realized at once. An op with no row runs its eager kernel
(``Fallback``, named in the debug output); mm/addmm/bmm/convolution run as ``Extern`` calls of
the eager BLAS kernel.
"""

import math

from ...core import dtype as D
from ...ops.op import ops as torch_ops
from .half import HALF
from .ir import InputBuffer, TensorValue, ops

aten = torch_ops.aten
LOWERINGS: dict = {}
EXTERN = {aten.mm.default, aten.bmm.default}
FLOATS = ("float32", "float64")
HALVES = tuple(sorted(HALF))     # stored as 16 bits, computed in float (Note [Half dtypes])
FLOATING = FLOATS + HALVES
INTEGERS = ("int64", "int32", "int16", "int8", "uint8")    # C wraps them as NumPy (-fwrapv)
INTEGER_BITS = {"int64": 64, "int32": 32, "int16": 16, "int8": 8, "uint8": 8}
DTYPES = FLOATING + INTEGERS + ("bool",)
COLUMN_MIN_WIDTH = 8    # kept elements for a sum over leading dims to run by rows (ir.py)


class NoLowering(Exception):
    """This call needs its eager kernel (an argument or dtype the rows do not cover)."""


def register(*aten_ops):
    def decorate(fn):
        for op in aten_ops:
            assert op not in LOWERINGS, f"two lowerings for {op}"
            LOWERINGS[op] = fn
        return fn
    return decorate


def dtype_name(dtype) -> str:
    return dtype.name


def opmath(dtype) -> str:
    """The dtype a row computes ``dtype`` in: float32 for a half dtype (ATen's opmath_t)."""
    return "float32" if dtype in HALF else dtype


def out_spec(node):
    val = node.meta["val"]
    return dtype_name(val.dtype), tuple(val.shape)


def as_loader(arg, size, dtype):
    """``index -> value`` of a TensorValue broadcast to ``size``, or of a Python number, in
    ``dtype``."""
    if not isinstance(arg, TensorValue):
        if not isinstance(arg, (int, float)):     # a bool is an int: True reads as 1
            raise NoLowering(f"argument {arg!r}")
        return lambda index: ops.constant(arg, dtype)
    lead = len(size) - len(arg.size)

    def load(index):
        idx = tuple(0 if s == 1 and size[lead + d] != 1 else index[lead + d]
                    for d, s in enumerate(arg.size))
        value = arg.load(idx)
        return value if arg.dtype == dtype else ops.to_dtype(value, dtype)
    return load


def pointwise(G, node, fn, *args, compute=None):
    """The unrealized value ``fn(*loaded args)`` at each index of the node's output."""
    dtype, size = out_spec(node)
    compute = compute or dtype
    if compute not in DTYPES:
        raise NoLowering(f"dtype {compute}")
    if math.prod(size) > 1:
        # A one-element formula of another row (a constant) is computed once, not at every
        # element of its reader.
        args = [G.realize(a) if isinstance(a, TensorValue) and a.buffer is None
                and math.prod(a.size) == 1 else a for a in args]
    loaders = [as_loader(a, size, compute) for a in args]

    def load(index):
        value = fn(*(ld(index) for ld in loaders))
        return value if compute == dtype else ops.to_dtype(value, dtype)
    if math.prod(size) == 1:
        # One element (an optimizer's bias corrections, a loss): computed once, in a kernel of
        # one-element values that runs before its readers rather than between their kernels.
        return G.realize(TensorValue(dtype, size, load))
    return TensorValue(dtype, size, load)


def _binary(fn):
    def lower(G, node, a, b, alpha=1):
        if alpha != 1:
            return pointwise(G, node, lambda x, y: fn(x, ops.mul(y, ops.constant(
                alpha, out_spec(node)[0]))), a, b)
        return pointwise(G, node, fn, a, b)
    return lower


register(aten.add.Tensor)(_binary(lambda x, y: ops.add(x, y)))
register(aten.sub.Tensor)(_binary(lambda x, y: ops.sub(x, y)))
register(aten.mul.Tensor)(_binary(lambda x, y: ops.mul(x, y)))
register(aten.maximum.default)(_binary(lambda x, y: ops.maximum(x, y)))
register(aten.minimum.default)(_binary(lambda x, y: ops.minimum(x, y)))


@register(aten.div.Tensor)
def _div(G, node, a, b):
    if out_spec(node)[0] not in FLOATING:
        raise NoLowering("integer true division")
    return pointwise(G, node, lambda x, y: ops.truediv(x, y), a, b)


def _unary(fn, floats_only=True):
    def lower(G, node, a):
        if floats_only and out_spec(node)[0] not in FLOATING:
            raise NoLowering("integer input")
        return pointwise(G, node, fn, a)
    return lower


for _name in ("exp", "log", "tanh", "sigmoid", "sqrt", "rsqrt", "erf", "log1p", "expm1", "sin",
              "cos"):
    register(getattr(aten, _name).default)(_unary(lambda x, _n=_name: getattr(ops, _n)(x)))
register(aten.neg.default)(_unary(lambda x: ops.neg(x), floats_only=False))
register(aten.abs.default)(_unary(lambda x: ops.abs(x), floats_only=False))


@register(aten.relu.default)
def _relu(G, node, a):
    from .lowering_nn import rectified  # (lowering_nn imports this module)
    if rectified(a):    # a convolution's Extern applied it (lowering_nn.py)
        return a
    return pointwise(G, node, lambda x: ops.relu(x), a)


register(aten.reciprocal.default)(_unary(lambda x: ops.reciprocal(x)))


@register(aten.silu.default)
def _silu(G, node, a):
    from .eager import silu  # the same formula as the eager kernel
    return _unary(lambda x: silu(x, out_spec(node)[0]))(G, node, a)


def _compare(fn):
    """Computed in the operands' promoted dtype, as eager compares (an int64 tensor against
    0.5 in float32)."""
    def lower(G, node, a, b):
        operands = [x.meta["val"] if hasattr(x, "meta") else x for x in node.args[:2]]
        return pointwise(G, node, fn, a, b, compute=dtype_name(D.result_type(*operands)))
    return lower


for _name in ("lt", "le", "gt", "ge", "eq", "ne"):
    _fn = (lambda x, y, _n=_name: getattr(ops, _n)(x, y))
    register(getattr(aten, _name).Tensor)(_compare(_fn))


@register(aten.where.self)
def _where(G, node, cond, a, b):
    dtype, size = out_spec(node)
    cond_load, a_load, b_load = (as_loader(cond, size, "bool"), as_loader(a, size, dtype),
                                 as_loader(b, size, dtype))
    return TensorValue(dtype, size, lambda i: ops.where(cond_load(i), a_load(i), b_load(i)))


@register(aten.gelu.default)
def _gelu(G, node, a, approximate="none"):
    from .eager import gelu, gelu_tanh  # the same formula as the eager kernel
    dtype = out_spec(node)[0]
    if dtype not in FLOATING:
        raise NoLowering("gelu dtype")
    formula = gelu_tanh if approximate == "tanh" else gelu
    return pointwise(G, node, lambda x: formula(x, dtype), a)


def _backward_formula(formula):
    """The backward ops of tanh, sigmoid, gelu and silu: the generated eager kernels' formulas."""
    def lower(G, node, grad, x, approximate="none"):
        from .eager import BINARY_FORMULAS
        dtype = out_spec(node)[0]
        if dtype not in FLOATING:
            raise NoLowering(f"{formula} dtype")
        name = "gelu_tanh_backward" if approximate == "tanh" else formula
        return pointwise(G, node, lambda g, v: BINARY_FORMULAS[name](g, v, dtype), grad, x)
    return lower


for _name in ("tanh_backward", "sigmoid_backward", "gelu_backward", "silu_backward"):
    register(getattr(aten, _name).default)(_backward_formula(_name))


@register(aten.threshold_backward.default)
def _threshold_backward(G, node, grad, x, threshold):
    from .lowering_nn import pool_gradient_through_relu  # (lowering_nn imports this module)
    dtype, size = out_spec(node)
    through_pool = pool_gradient_through_relu(G, grad, x, threshold, dtype, size)
    if through_pool is not None:    # a 2x2 max pool's gradient under ReLU's: one pass
        return through_pool
    g, xl = as_loader(grad, size, dtype), as_loader(x, size, dtype)
    return TensorValue(dtype, size, lambda i: ops.where(
        ops.le(xl(i), ops.constant(threshold, dtype)), ops.constant(0, dtype), g(i)))


@register(aten.clone.default, aten.alias.default)
def _clone(G, node, a, memory_format=None):
    return TensorValue(a.dtype, a.size, a.load)


@register(aten._to_copy.default)
def _to_copy(G, node, a, dtype=None, layout=None, device=None, pin_memory=None,
             non_blocking=False, memory_format=None):
    out_dtype = out_spec(node)[0]
    if out_dtype not in DTYPES or (
            device is not None and str(device) != "cpu"):
        raise NoLowering("conversion")
    if a.dtype in FLOATING and out_dtype in INTEGERS[2:]:
        raise NoLowering("a float into a small integer: out of range, C's cast is undefined")
    return pointwise(G, node, lambda x: x, a)


@register(aten.full.default)
def _full(G, node, size, fill_value, dtype=None, layout=None, device=None, pin_memory=None):
    out_dtype, out_size = out_spec(node)
    if out_dtype not in DTYPES or (
            device is not None and str(device) != "cpu"):
        raise NoLowering("full")
    return TensorValue(out_dtype, out_size, constant_of(fill_value, out_dtype))


@register(aten.scalar_tensor.default)
def _scalar_tensor(G, node, s, dtype=None, layout=None, device=None, pin_memory=None):
    out_dtype, _ = out_spec(node)
    if out_dtype not in DTYPES or (
            device is not None and str(device) != "cpu"):
        raise NoLowering("scalar_tensor")
    return TensorValue(out_dtype, (), constant_of(s, out_dtype))


def constant_of(value, dtype):
    """``index -> value`` of a tensor filled with ``value`` (a half one holds it rounded)."""
    if dtype in HALF:
        return lambda i: ops.to_dtype(ops.constant(value, "float64"), dtype)
    return lambda i: ops.constant(value, dtype)


@register(aten.pow.Tensor_Tensor)
def _pow(G, node, a, b):
    """libm's ``pow`` (integers: ATen's powi, a negative exponent included) in the C graph
    only (the OpenCL printer has no row for it)."""
    if out_spec(node)[0] not in FLOATING + INTEGERS or G.device_type != "cpu":
        raise NoLowering("pow")
    return pointwise(G, node, lambda x, y: ops.pow(x, y), a, b)


@register(aten.empty.memory_format)
def _empty(G, node, size, dtype=None, layout=None, device=None, pin_memory=None,
           memory_format=None):
    """Memory whose values no one may rely on (the tensor a dropout's ``bernoulli_`` fills):
    zeros, as a formula, so it costs nothing unless read."""
    out_dtype, out_size = out_spec(node)
    if out_dtype not in DTYPES or memory_format not in (
            None, "contiguous_format") or (device is not None and str(device) != "cpu"):
        raise NoLowering("empty")
    return TensorValue(out_dtype, out_size, lambda i: ops.constant(0, out_dtype))


@register(aten.addmm.default)
def _addmm(G, node, bias, mat1, mat2, beta=1, alpha=1):
    """``alpha * (mat1 @ mat2) + beta * bias``: the product is an Extern mm, the scaling and the
    bias a pointwise epilogue that fuses with what follows (a Linear's activation). As eager
    and BLAS: beta == 0 ignores ``bias`` entirely, NaN included."""
    dtype, size = out_spec(node)
    if dtype not in FLOATS or isinstance(beta, bool) or isinstance(alpha, bool):
        # (a half addmm stays eager's: it adds the bias to the float product, then rounds;
        # a half mm Extern would round the product first)
        raise NoLowering("addmm dtype")
    product = G.extern(aten.mm.default, (mat1, mat2), dtype, size)
    bias_load = as_loader(bias, size, dtype)

    def load(i):
        value = product.load(i)
        if alpha != 1:
            value = ops.mul(value, ops.constant(alpha, dtype))
        if beta == 0:
            return value
        scaled_bias = bias_load(i) if beta == 1 else ops.mul(bias_load(i),
                                                             ops.constant(beta, dtype))
        return ops.add(value, scaled_bias)
    return TensorValue(dtype, size, load)


def _restrided(a, size, stride):
    """The view ``a`` of a realized buffer as the same memory read with other strides (no copy,
    so an Extern gets the strided tensor as eager would)."""
    b = a.buffer
    return TensorValue.of_buffer(InputBuffer(b.name, b.dtype, tuple(size), tuple(stride),
                                             b.offset))



# --- reductions ---------------------------------------------------------------------------------

def reduce(G, a, dims, keepdim, reduction_type, dtype=None, prologue=None):
    """A realized reduction of ``a`` over ``dims``; ``prologue(value, index)`` is fused in."""
    dtype = dtype or a.dtype
    ndim = len(a.size)
    if isinstance(dims, int):
        dims = [dims]
    dims = sorted({d % max(ndim, 1) for d in (dims if dims else range(ndim))})
    kept = [d for d in range(ndim) if d not in dims]
    trailing = [d for d in dims if all(t in dims for t in range(d, ndim))]
    if trailing and len(trailing) < len(dims) and kept:
        return _two_stage_reduce(G, a, dims, trailing, keepdim, reduction_type, dtype, prologue)
    ranges = tuple(a.size[d] for d in kept)
    reduction_ranges = tuple(a.size[d] for d in dims)

    def full_index(index, rindex):
        full = [None] * ndim
        for d, i in zip(kept, index):
            full[d] = i
        for d, r in zip(dims, rindex):
            full[d] = r
        return tuple(full)

    def inner_fn(index, rindex):
        full = full_index(index, rindex)
        value = a.load(full)
        if a.dtype != dtype:
            value = ops.to_dtype(value, dtype)
        return prologue(value, full) if prologue else value
    out_size = tuple(1 if d in dims else s for d, s in enumerate(a.size)) if keepdim else ranges
    # (a half sum adds in float, in its accumulator: not by rows into its half output)
    column = (reduction_type == "sum" and bool(kept) and dims == list(range(len(dims)))
              and math.prod(ranges) >= COLUMN_MIN_WIDTH and dtype not in HALF)
    return G.reduction(dtype, ranges, reduction_ranges, reduction_type, inner_fn, out_size,
                       column)


def _two_stage_reduce(G, a, dims, trailing, keepdim, reduction_type, dtype, prologue):
    """A reduction over trailing dims and some earlier ones with kept dims between (a conv's
    bias gradient: NCHW summed over N, H, W): first over the trailing dims (contiguous rows),
    then over the rest (a column reduction), instead of one strided walk per kept element."""
    rows = reduce(G, a, trailing, False, reduction_type, dtype, prologue)
    rest = reduce(G, rows, [d for d in dims if d not in trailing], False, reduction_type)
    if not keepdim:
        return rest
    kept_strides = iter(rest.buffer.stride)
    size = tuple(1 if d in dims else s for d, s in enumerate(a.size))
    stride = tuple(0 if d in dims else next(kept_strides) for d in range(len(a.size)))
    return _restrided(rest, size, stride)


@register(aten.sum.dim_IntList)
def _sum(G, node, a, dims, keepdim=False, dtype=None):
    out_dtype = out_spec(node)[0]
    if out_dtype not in FLOATING + ("int64",):
        raise NoLowering("sum dtype")
    return reduce(G, a, dims, keepdim, "sum", out_dtype)


@register(aten.mean.dim)
def _mean(G, node, a, dims, keepdim=False, dtype=None):
    out_dtype, size = out_spec(node)
    if out_dtype not in FLOATING:
        raise NoLowering("mean dtype")
    compute = opmath(out_dtype)     # a half mean rounds once, after the division
    total = reduce(G, a, dims, keepdim, "sum", compute)
    count = math.prod(a.size) // max(math.prod(size), 1)
    return pointwise(G, node, lambda s: ops.truediv(s, ops.constant(count, compute)), total,
                     compute=compute)


@register(aten.amax.default, aten.amin.default)
def _amax(G, node, a, dims=(), keepdim=False):
    kind = "max" if node.target is aten.amax.default else "min"
    return reduce(G, a, dims, keepdim, kind, out_spec(node)[0])


@register(aten._softmax.default, aten._log_softmax.default)
def _softmax(G, node, a, dim, half_to_float):
    """In float for a half input (rounded once, at the end), as ATen's kernels."""
    dtype, size = out_spec(node)
    if dtype not in FLOATING or half_to_float:     # (which the CPU kernel refuses, as ATen's)
        raise NoLowering("softmax dtype")
    log = node.target is aten._log_softmax.default
    compute = opmath(dtype)
    a = G.realize(a)    # read by three passes: computed once (recomputing could round apart)
    m = reduce(G, a, [dim], True, "max", compute)
    x = as_loader(a, size, compute)
    mx = as_loader(m, size, compute)
    e = TensorValue(compute, size, lambda i: ops.exp(ops.sub(x(i), mx(i))))
    if not log and G.device_type == "cpu" and dim % len(size) == len(size) - 1:
        # ATen's passes: exp once, kept in a row array (Note [Row arrays] in cprinter.py),
        # summed, then scaled by 1 / sum
        e = G.realize(e)
        s = as_loader(reduce(G, e, [dim], True, "sum"), size, compute)
        ex = as_loader(e, size, compute)
        return TensorValue(dtype, size, lambda i: _as(
            ops.mul(ex(i), ops.reciprocal(s(i))), compute, dtype))
    s = reduce(G, e, [dim], True, "sum")
    sx = as_loader(s, size, compute)
    if log:
        return TensorValue(dtype, size, lambda i: _as(
            ops.sub(ops.sub(x(i), mx(i)), ops.log(sx(i))), compute, dtype))
    return TensorValue(dtype, size, lambda i: _as(
        ops.truediv(ops.exp(ops.sub(x(i), mx(i))), sx(i)), compute, dtype))


def _as(value, compute, dtype):
    """``value`` (an ``ops`` value computed in ``compute``) as ``dtype``."""
    return value if compute == dtype else ops.to_dtype(value, dtype)


def _as_value(v, dtype):
    """The TensorValue ``v`` as ``dtype`` (a float32 statistic returned as a half one)."""
    return v if v.dtype == dtype else TensorValue(dtype, v.size,
                                                  lambda i: ops.to_dtype(v.load(i), dtype))


@register(aten._softmax_backward_data.default, aten._log_softmax_backward_data.default)
def _softmax_backward(G, node, grad, y, dim, input_dtype):
    """The eager row kernels' formulas: y * (g - sum(g * y)), g - exp(y) * sum(g); the sum is
    a reduction whose prologue inlines g (nll_loss_backward's one-hot in cross-entropy)."""
    dtype, size = out_spec(node)
    if dtype not in FLOATING or not size or y.dtype != dtype:
        raise NoLowering("softmax backward: dtype or 0-dim")
    compute = opmath(dtype)
    g, out = as_loader(grad, size, compute), as_loader(y, size, compute)
    if node.target is aten._log_softmax_backward_data.default:
        total = as_loader(reduce(G, grad, [dim], True, "sum", compute), size, compute)
        return TensorValue(dtype, size, lambda i: _as(
            ops.sub(g(i), ops.mul(ops.exp(out(i)), total(i))), compute, dtype))
    product = TensorValue(compute, size, lambda i: ops.mul(g(i), out(i)))
    dot = as_loader(reduce(G, product, [dim], True, "sum"), size, compute)
    return TensorValue(dtype, size, lambda i: _as(ops.mul(out(i), ops.sub(g(i), dot(i))),
                                                  compute, dtype))


@register(aten.native_layer_norm.default)
def _layer_norm(G, node, a, normalized_shape, weight, bias, eps):
    """In float for a half input: the statistics too, rounded only where returned."""
    dtype = dtype_name(node.meta["val"][0].dtype)
    if dtype not in FLOATING:
        raise NoLowering("layer_norm dtype")
    compute = opmath(dtype)
    a = G.realize(a)
    size = a.size
    dims = list(range(len(size) - len(normalized_shape), len(size)))
    n = math.prod(size[d] for d in dims)
    x = as_loader(a, size, compute)
    mean = G.realize(_scale(reduce(G, a, dims, True, "sum", compute), 1.0 / n))
    mu = as_loader(mean, size, compute)
    var = reduce(G, TensorValue(compute, size, lambda i: ops.mul(ops.sub(x(i), mu(i)),
                                                                 ops.sub(x(i), mu(i)))),
                 dims, True, "sum")
    rstd = G.realize(TensorValue(compute, var.size, lambda i: ops.rsqrt(ops.add(
        ops.mul(var.load(i), ops.constant(1.0 / n, compute)), ops.constant(eps, compute)))))
    rs = as_loader(rstd, size, compute)
    w = as_loader(weight, size, compute) if weight is not None else None
    b = as_loader(bias, size, compute) if bias is not None else None

    def load(i):
        y = ops.mul(ops.sub(x(i), mu(i)), rs(i))
        if w is not None:
            y = ops.mul(y, w(i))
        return _as(ops.add(y, b(i)) if b is not None else y, compute, dtype)
    stats = [dtype_name(v.dtype) for v in node.meta["val"][1:]]
    return (TensorValue(dtype, size, load), _as_value(mean, stats[0]),
            _as_value(rstd, stats[1]))


def _scale(v, factor):
    return TensorValue(v.dtype, v.size, lambda i: ops.mul(v.load(i),
                                                          ops.constant(factor, v.dtype)))
