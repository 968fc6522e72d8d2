"""Eager CPU kernels from the compiler's generator (issue 9 §5, DESIGN.md "one code generator,
three users").

The CPU backend's NumPy formulas for the transcendental activations take one pass per NumPy
call (gelu is seven of them, erf a dozen) on one thread. Here each is one loop-IR ``Pointwise``
over a flat run of ``n`` elements, printed to C by cprinter.py (one libmvec-vectorised loop
over a range the caller's threads split) and built through the one build path,
backends/cpu/native.py; softmax, log_softmax and layer_norm are row kernels made of the same
``Reduction``/``Pointwise`` nodes as compiled graphs. The CPU backend cannot import this layer,
so this module registers the libraries with ``native.register_generated`` when strata is
imported; ``native.run_unary`` / ``native.function`` then give the C kernel for contiguous
float32/float64 arrays, and the NumPy formulas run for everything else.

The formulas are ATen's (``aten/src/ATen/native/cpu/Activation.cpp``, ``UnaryOpsKernel.cpp``).
"""

import ctypes
import math

from ...backends.cpu import native
from . import (  # noqa: F401  (register their C kernels)
    eager_conv,
    eager_optim,
    eager_pool,
    eager_random,
)
from .cprinter import pointer_count, print_module
from .ir import IndexAdd, InputBuffer, Kernel, Pointwise, Reduction, ops

LIBRARY = "eager_pointwise"
DTYPES = ("float32", "float64")


def gelu(x, dtype):
    # x * 0.5 * (1 + erf(x / sqrt(2)))
    inner = ops.erf(ops.mul(x, ops.constant(math.sqrt(0.5), dtype)))
    return ops.mul(ops.mul(x, ops.constant(0.5, dtype)),
                   ops.add(ops.constant(1.0, dtype), inner))


def gelu_tanh(x, dtype):
    # 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3)))
    cube = ops.mul(ops.mul(ops.mul(x, x), x), ops.constant(0.044715, dtype))
    inner = ops.mul(ops.constant(math.sqrt(2.0 / math.pi), dtype), ops.add(x, cube))
    return ops.mul(ops.mul(ops.constant(0.5, dtype), x),
                   ops.add(ops.constant(1.0, dtype), ops.tanh(inner)))


def silu(x, dtype):
    # ATen's silu_kernel: x / (1 + exp(-x))
    return ops.truediv(x, ops.add(ops.constant(1.0, dtype), ops.exp(ops.neg(x))))


def _scalar(index):
    """The ``index``-th scalar argument of a kernel (``params``: the caller's small array, in
    the kernel's dtype, as ATen converts a Scalar to the tensor's type)."""
    return ops.load("params", str(index))


def softplus(x, dtype):
    # ATen's softplus_kernel: x * beta > threshold ? x : log1p(exp(x * beta)) / beta
    beta, threshold = _scalar(0), _scalar(1)
    scaled = ops.mul(x, beta)
    return ops.where(ops.gt(scaled, threshold), x,
                     ops.truediv(ops.log1p(ops.exp(scaled)), beta))


def softplus_backward(g, x, dtype):
    # ATen's softplus_backward_kernel: z = exp(x * beta); x * beta > threshold ? g : g * z / (z + 1)
    beta, threshold = _scalar(0), _scalar(1)
    scaled = ops.mul(x, beta)
    z = ops.exp(scaled)
    return ops.where(ops.gt(scaled, threshold), g,
                     ops.truediv(ops.mul(g, z), ops.add(z, ops.constant(1.0, dtype))))


def threshold_backward(g, x, dtype):
    # ATen's threshold_kernel(grad, self, threshold, 0): x <= threshold ? 0 : g (NaN x passes g)
    return ops.where(ops.le(x, _scalar(0)), ops.constant(0.0, dtype), g)


def leaky_relu(x, dtype):
    # ATen's leaky_relu_kernel: x > 0 ? x : x * negative_slope (NaN: NaN * slope)
    return ops.where(ops.gt(x, ops.constant(0.0, dtype)), x, ops.mul(x, _scalar(0)))


def _relu6_of_shifted(x, dtype):
    # min(max(x + 3, 0), 6) as NumPy's clip: a NaN stays NaN
    shifted = ops.add(x, ops.constant(3.0, dtype))
    low = ops.where(ops.lt(shifted, ops.constant(0.0, dtype)), ops.constant(0.0, dtype), shifted)
    six = ops.constant(6.0, dtype)
    return ops.where(ops.lt(six, low), six, low)


def clamp(x, dtype):
    # np.minimum(np.maximum(x, lo), hi): a NaN x stays NaN, hi wins when lo > hi (the caller
    # passes +-inf for a missing bound and never a NaN bound)
    low = ops.where(ops.lt(x, _scalar(0)), _scalar(0), x)
    return ops.where(ops.lt(_scalar(1), low), _scalar(1), low)


def nan_to_num(x, dtype):
    # np.nan_to_num: NaN -> nan, +inf -> posinf, -inf -> neginf (already in the dtype)
    inf = ops.constant(math.inf, dtype)
    return ops.where(ops.ne(x, x), _scalar(0),
                     ops.where(ops.eq(x, inf), _scalar(1),
                               ops.where(ops.eq(x, ops.neg(inf)), _scalar(2), x)))


# the four operators with a Python number (Note [Native arithmetic] in backends/cpu/
# elementwise.py: ``x * 0.125``, ``x + 1``, ``1 - x``; ``2 / x`` is ``x.reciprocal() * 2`` as
# in PyTorch): the number, in the tensor's dtype as
# ATen converts a Scalar, is the formula's ``params`` scalar; one IEEE operation, NumPy's bits
SCALAR_OPERATORS = {
    "add_scalar": lambda x, dtype: ops.add(x, _scalar(0)),
    "sub_scalar": lambda x, dtype: ops.sub(x, _scalar(0)),
    "mul_scalar": lambda x, dtype: ops.mul(x, _scalar(0)),
    "div_scalar": lambda x, dtype: ops.truediv(x, _scalar(0)),
    "rsub_scalar": lambda x, dtype: ops.sub(_scalar(0), x),
}

# name -> how many scalars (``params``) the formula of FORMULAS / BINARY_FORMULAS reads
SCALAR_COUNTS = {"softplus": 2, "softplus_backward": 2, "threshold_backward": 1,
                 "leaky_relu": 1, "clamp": 2, "nan_to_num": 3,
                 **dict.fromkeys(SCALAR_OPERATORS, 1)}


# name -> the formula of one element (the value, its dtype), written with ops.*
FORMULAS = {
    "silu": silu,
    "softplus": softplus,
    "gelu": gelu,
    "gelu_tanh": gelu_tanh,
    "erf": lambda x, dtype: ops.erf(x),
    "tanh": lambda x, dtype: ops.tanh(x),
    "sigmoid": lambda x, dtype: ops.sigmoid(x),
    "exp": lambda x, dtype: ops.exp(x),
    "log": lambda x, dtype: ops.log(x),
    "sqrt": lambda x, dtype: ops.sqrt(x),
    "neg": lambda x, dtype: ops.neg(x),
    "abs": lambda x, dtype: ops.abs(x),
    # ATen's clamp_min(x, 0): x < 0 ? 0 : x (-0.0 and NaN pass through)
    "relu": lambda x, dtype: ops.where(ops.lt(x, ops.constant(0.0, dtype)),
                                       ops.constant(0.0, dtype), x),
    "leaky_relu": leaky_relu,
    "hardswish": lambda x, dtype: ops.truediv(ops.mul(x, _relu6_of_shifted(x, dtype)),
                                              ops.constant(6.0, dtype)),
    "hardsigmoid": lambda x, dtype: ops.truediv(_relu6_of_shifted(x, dtype),
                                                ops.constant(6.0, dtype)),
    "clamp": clamp,
    "nan_to_num": nan_to_num,
    **SCALAR_OPERATORS,
    # glibc's lgamma in double, rounded to the dtype: the compiled lowering's
    # (lowering_math.py), which the NumPy path's fdlibm pieces follow
    "lgamma": lambda x, dtype: ops.to_dtype(ops.libm("lgamma", ops.to_dtype(x, "float64")),
                                            dtype),
}


def tanh_backward(g, y, dtype):
    # ATen's BinaryOpsKernel.cpp: g * (1 - y * y)
    return ops.mul(g, ops.sub(ops.constant(1.0, dtype), ops.mul(y, y)))


def sigmoid_backward(g, y, dtype):
    # g * (1 - y) * y, in that order
    return ops.mul(ops.mul(g, ops.sub(ops.constant(1.0, dtype), y)), y)


def gelu_backward(g, x, dtype):
    # ATen's GeluKernel.cpp: g * (cdf + x * pdf), cdf = 0.5 * (1 + erf(x / sqrt(2))),
    # pdf = exp(-x^2 / 2) / sqrt(2 pi)
    cdf = ops.mul(ops.constant(0.5, dtype), ops.add(ops.constant(1.0, dtype), ops.erf(
        ops.mul(x, ops.constant(math.sqrt(0.5), dtype)))))
    pdf = ops.mul(ops.constant(1.0 / math.sqrt(2.0 * math.pi), dtype), ops.exp(
        ops.mul(ops.mul(x, x), ops.constant(-0.5, dtype))))
    return ops.mul(g, ops.add(cdf, ops.mul(x, pdf)))


def gelu_tanh_backward(g, x, dtype):
    # the derivative of 0.5 * x * (1 + tanh(inner)), inner = beta * (x + kappa * x^3)
    beta, kappa = math.sqrt(2.0 / math.pi), 0.044715

    def c(v):
        return ops.constant(v, dtype)
    x_sq = ops.mul(x, x)
    inner = ops.mul(c(beta), ops.add(x, ops.mul(c(kappa), ops.mul(x_sq, x))))
    tanh_inner = ops.tanh(inner)
    left = ops.mul(c(0.5), x)
    right = ops.add(c(1.0), tanh_inner)
    tanh_derivative = ops.sub(c(1.0), ops.mul(tanh_inner, tanh_inner))
    inner_derivative = ops.mul(c(beta), ops.add(c(1.0), ops.mul(c(3.0 * kappa), x_sq)))
    right_derivative = ops.mul(ops.mul(left, tanh_derivative), inner_derivative)
    return ops.mul(g, ops.add(ops.mul(c(0.5), right), right_derivative))


def silu_backward(g, x, dtype):
    # ATen's silu_backward_kernel: g * s * (1 + x * (1 - s)), s = 1 / (1 + exp(-x))
    one = ops.constant(1.0, dtype)
    s = ops.truediv(one, ops.add(one, ops.exp(ops.neg(x))))
    return ops.mul(ops.mul(g, s), ops.add(one, ops.mul(x, ops.sub(one, s))))


# name -> the formula of (grad, x) at one element: the backward ops' kernels (eager, compiled
# graphs through lowering.py, and the opencl device)
BINARY_FORMULAS = {
    "tanh_backward": tanh_backward,
    "sigmoid_backward": sigmoid_backward,
    "gelu_backward": gelu_backward,
    "gelu_tanh_backward": gelu_tanh_backward,
    "silu_backward": silu_backward,
    "softplus_backward": softplus_backward,
    "threshold_backward": threshold_backward,
    # the four operators (eager's large same-shape float operands, Note [Native arithmetic]
    # in backends/cpu/elementwise.py): one IEEE operation each, so NumPy's bits
    "add": lambda a, b, dtype: ops.add(a, b),
    "sub": lambda a, b, dtype: ops.sub(a, b),
    "mul": lambda a, b, dtype: ops.mul(a, b),
    "div": lambda a, b, dtype: ops.truediv(a, b),
}


def kernel_name(formula: str, dtype: str) -> str:
    return f"{formula}_{dtype}"


def _params(formula: str, dtype: str) -> list:
    """The ``params`` input of a formula with scalar arguments (SCALAR_COUNTS), else none."""
    count = SCALAR_COUNTS.get(formula, 0)
    return [InputBuffer("params", dtype, (count,), (1,))] if count else []


def unary_kernel(formula: str, dtype: str) -> Kernel:
    """``out[i] = FORMULAS[formula](in0[i])`` for ``i < n``, as a loop-IR kernel."""
    source = InputBuffer("in0", dtype, ("n",), (1,))
    node = Pointwise("out", dtype, ("n",),
                     lambda index: FORMULAS[formula](source.load(index), dtype))
    return Kernel(kernel_name(formula, dtype), [source, *_params(formula, dtype)], [node])


def binary_kernel(formula: str, dtype: str) -> Kernel:
    """``out[i] = BINARY_FORMULAS[formula](in0[i], in1[i])`` for ``i < n``."""
    a, b = (InputBuffer(name, dtype, ("n",), (1,)) for name in ("in0", "in1"))
    node = Pointwise("out", dtype, ("n",), lambda index: BINARY_FORMULAS[formula](
        a.load(index), b.load(index), dtype))
    return Kernel(kernel_name(formula, dtype), [a, b, *_params(formula, dtype)], [node])


def _pointwise_kernels():
    for dtype in DTYPES:
        yield from (unary_kernel(f, dtype) for f in FORMULAS)
        yield from (binary_kernel(f, dtype) for f in BINARY_FORMULAS)


def source() -> str:
    return print_module([(k, ("n",)) for k in _pointwise_kernels()])


# the pointers (inputs, params if any, out), then n, x_lo, x_hi
native.register_generated(LIBRARY, source, {
    k.name: (ctypes.c_void_p,) * pointer_count(k) + (ctypes.c_int64,) * 3
    for k in _pointwise_kernels()})


# --- casts between float32 and the half dtypes ------------------------------------------------
# NumPy converts float16 in software: a 256x256 float32 -> float16 copy took 187 us (ATen's: 5);
# ml_dtypes' float32 -> bfloat16 rounding is slower than this loop too. The pairs are
# native.CAST_PAIRS, where the CPU backend looks them up. The printer's half helpers round
# as NumPy's ``npy_floatbits_to_halfbits`` and ml_dtypes do (Note [Half dtypes]), so the C
# result is the same bits; tests/test_native_kernels.py compares every special value.

CASTS_LIBRARY = "eager_casts"


def cast_kernel(source_dtype: str, dtype: str) -> Kernel:
    """``out[i] = (dtype) in0[i]`` for ``i < n``."""
    source = InputBuffer("in0", source_dtype, ("n",), (1,))
    node = Pointwise("out", dtype, ("n",), lambda index: ops.to_dtype(source.load(index), dtype))
    return Kernel(f"cast_{source_dtype}_{dtype}", [source], [node])


def _cast_kernels():
    return [cast_kernel(a, b) for a, b in native.CAST_PAIRS]


native.register_generated(CASTS_LIBRARY, lambda: print_module(
    [(k, ("n",)) for k in _cast_kernels()]), {
    k.name: (ctypes.c_void_p,) * pointer_count(k) + (ctypes.c_int64,) * 3
    for k in _cast_kernels()})


# --- row kernels: one pass of reductions and the output per row, as the compiled graphs' ---------
# ``rows`` rows of ``n`` elements, ``x_step`` elements apart; the output is contiguous.

ROWS_LIBRARY = "eager_rows"


def _rows_input(dtype):
    return InputBuffer("in0", dtype, ("rows", "n"), ("x_step", 1))


def softmax_kernel(dtype, log=False):
    """softmax / log_softmax over each row, ATen's passes (``aten/src/ATen/native/cpu/
    SoftMaxKernel.cpp``): the max; softmax then writes exp(x - max) to the output, sums it and
    scales it by 1/sum in place (one exp per element); log_softmax sums exp(x - max) and writes
    x - max - log(sum)."""
    x = _rows_input(dtype)
    row_max = Reduction("row_max", dtype, ("rows",), ("n",), "max", lambda i, r: x.load(i + r))
    shifted = (lambda i: ops.sub(x.load(i), ops.load("row_max", i[0])))
    name = f"{'log_' if log else ''}softmax_{dtype}"
    if log:
        total = Reduction("total", dtype, ("rows",), ("n",), "sum",
                          lambda i, r: ops.exp(shifted(i + r)))
        out = Pointwise("out", dtype, ("rows", "n"), lambda i: ops.sub(
            shifted(i), ops.log(ops.load("total", i[0]))))
        return Kernel(name, [x], [row_max, total, out], frozenset({"row_max", "total"}))
    out = InputBuffer("out", dtype, ("rows", "n"), ("n", 1))    # read back within its row
    exps = Pointwise("out", dtype, ("rows", "n"), lambda i: ops.exp(shifted(i)))
    total = Reduction("total", dtype, ("rows",), ("n",), "sum", lambda i, r: out.load(i + r))
    scale = Pointwise("scale", dtype, ("rows",), lambda i: ops.reciprocal(ops.load("total", i[0])))
    scaled = Pointwise("scaled", dtype, ("rows", "n"), lambda i: ops.mul(
        out.load(i), ops.load("scale", i[0])), store_into="out")
    return Kernel(name, [x], [row_max, exps, total, scale, scaled],
                  frozenset({"row_max", "total", "scale"}))


def softmax_backward_kernel(dtype, log=False):
    """``_softmax_backward_data`` / ``_log_softmax_backward_data`` over each row, ATen's two
    passes (``SoftMaxKernel.cpp``, ``_vec_softmax_backward``/``_vec_log_softmax_backward``):
    the row's sum (of g * y, or of g for log_softmax), then y * (g - sum), or g - exp(y) * sum.
    In cross-entropy's backward g is nll_loss_backward's -one_hot scaled per row."""
    grad, out = (InputBuffer(name, dtype, ("rows", "n"), ("x_step", 1)) for name in ("in0", "in1"))
    if log:
        total = Reduction("total", dtype, ("rows",), ("n",), "sum", lambda i, r: grad.load(i + r))
        result = Pointwise("out", dtype, ("rows", "n"), lambda i: ops.sub(
            grad.load(i), ops.mul(ops.exp(out.load(i)), ops.load("total", i[0]))))
    else:
        total = Reduction("total", dtype, ("rows",), ("n",), "sum",
                          lambda i, r: ops.mul(grad.load(i + r), out.load(i + r)))
        result = Pointwise("out", dtype, ("rows", "n"), lambda i: ops.mul(
            out.load(i), ops.sub(grad.load(i), ops.load("total", i[0]))))
    name = "log_softmax_backward" if log else "softmax_backward"
    return Kernel(f"{name}_{dtype}", [grad, out], [total, result], frozenset({"total"}))


def layer_norm_kernel(dtype, affine):
    """layer_norm over each row: the mean, the biased variance (two passes, as exact as ATen's
    moments), then (x - mean) * rstd (* weight + bias); mean and rstd are outputs too."""
    x = _rows_input(dtype)
    weight, bias = (InputBuffer(n, dtype, ("n",), (1,)) for n in ("weight", "bias"))
    count = (lambda: ops.index_expr("n", dtype))
    total = Reduction("total", dtype, ("rows",), ("n",), "sum", lambda i, r: x.load(i + r))
    mean = Pointwise("mean", dtype, ("rows",), lambda i: ops.truediv(ops.load("total", i[0]),
                                                                      count()))

    def centered(i):
        return ops.sub(x.load(i), ops.load("mean", i[0]))
    squares = Reduction("squares", dtype, ("rows",), ("n",), "sum",
                        lambda i, r: ops.mul(centered(i + r), centered(i + r)))
    rstd = Pointwise("rstd", dtype, ("rows",), lambda i: ops.rsqrt(ops.add(
        ops.truediv(ops.load("squares", i[0]), count()), ops.load("eps", "0"))))

    def normalized(i):
        y = ops.mul(centered(i), ops.load("rstd", i[0]))
        if affine:
            y = ops.add(ops.mul(y, weight.load(i[1:])), bias.load(i[1:]))
        return y
    out = Pointwise("out", dtype, ("rows", "n"), normalized)
    eps = InputBuffer("eps", dtype, (1,), (0,))
    inputs = [x, eps] + ([weight, bias] if affine else [])
    name = f"layer_norm{'_affine' if affine else ''}_{dtype}"
    return Kernel(name, inputs, [total, mean, squares, rstd, out],
                  frozenset({"total", "squares"}))


def layer_norm_backward_kernel(dtype, affine):
    """The input gradient of layer_norm over each row, the formula of ops/normalization.py's
    ``layer_norm_backward_composite``: with g_hat = grad (* weight) and x_hat = (x - mean) *
    rstd, rstd * ((g_hat - mean(g_hat)) - x_hat * mean(g_hat * x_hat)); two row sums, one
    pass for the output (ATen's ``LayerNormBackwardKernelImplInternal`` has the same three)."""
    grad, x = (InputBuffer(name, dtype, ("rows", "n"), ("x_step", 1)) for name in ("in0", "in1"))
    mean, rstd = (InputBuffer(name, dtype, ("rows",), (1,)) for name in ("mean", "rstd"))
    weight = InputBuffer("weight", dtype, ("n",), (1,))
    count = (lambda: ops.index_expr("n", dtype))

    def g_hat(i):
        return ops.mul(grad.load(i), weight.load(i[1:])) if affine else grad.load(i)

    def x_hat(i):
        return ops.mul(ops.sub(x.load(i), mean.load(i[:1])), rstd.load(i[:1]))
    total = Reduction("total", dtype, ("rows",), ("n",), "sum", lambda i, r: g_hat(i + r))
    dot = Reduction("dot", dtype, ("rows",), ("n",), "sum",
                    lambda i, r: ops.mul(g_hat(i + r), x_hat(i + r)))

    def grad_input(i):
        centered = ops.sub(g_hat(i), ops.truediv(ops.load("total", i[0]), count()))
        return ops.mul(rstd.load(i[:1]), ops.sub(centered, ops.mul(
            x_hat(i), ops.truediv(ops.load("dot", i[0]), count()))))
    out = Pointwise("out", dtype, ("rows", "n"), grad_input)
    inputs = [grad, x, mean, rstd] + ([weight] if affine else [])
    name = f"layer_norm_backward{'_affine' if affine else ''}_{dtype}"
    return Kernel(name, inputs, [total, dot, out], frozenset({"total", "dot"}))


def layer_norm_param_grads_kernel(dtype):
    """The weight and bias gradients of layer_norm: column sums over the rows of grad * x_hat
    and of grad, one walk down the rows for both (Note [Sibling column sums] in scheduler.py),
    the outer range the columns (ATen's ``LayerNormBackwardKernelImplInternal`` also adds each
    row into per-thread column buffers; NumPy took four passes and two sums)."""
    grad, x = (InputBuffer(name, dtype, ("rows", "n"), ("n", 1)) for name in ("in0", "in1"))
    mean, rstd = (InputBuffer(name, dtype, ("rows",), (1,)) for name in ("mean", "rstd"))

    def weight_grad(i, r):
        at = (r[0], i[0])
        x_hat = ops.mul(ops.sub(x.load(at), mean.load(r)), rstd.load(r))
        return ops.mul(x_hat, grad.load(at))
    weight = Reduction("weight_grad", dtype, ("n",), ("rows",), "sum", weight_grad, column=True)
    bias = Reduction("bias_grad", dtype, ("n",), ("rows",), "sum",
                     lambda i, r: grad.load((r[0], i[0])), column=True)
    return Kernel(f"layer_norm_param_grads_{dtype}", [grad, x, mean, rstd], [weight, bias])


# the four operators with a row vector (Note [Native arithmetic] in backends/cpu/
# elementwise.py: a bias added to a product's rows, ``x * weight`` over the last dim)
ROW_OPERATORS = ("add", "sub", "mul", "div")


def row_operator_kernel(formula, dtype):
    """``out[r, j] = in0[r, j] (op) in1[j]``: each row with the same vector."""
    x = _rows_input(dtype)
    vector = InputBuffer("in1", dtype, ("n",), (1,))
    out = Pointwise("out", dtype, ("rows", "n"), lambda i: BINARY_FORMULAS[formula](
        x.load(i), vector.load(i[1:]), dtype))
    return Kernel(f"{formula}_rows_{dtype}", [x, vector], [out])


def masked_fill_rows_kernel(dtype):
    """``out[r, j] = mask[j] ? value : in0[r, j]``: ``masked_fill`` (and its backward, a fill
    with 0) where the bool mask is the trailing dims of the input, as attention's causal mask
    is; one pass, where NumPy's ``where`` broadcast the mask at ~3x the time."""
    x = _rows_input(dtype)
    mask = InputBuffer("in1", "bool", ("n",), (1,))
    out = Pointwise("out", dtype, ("rows", "n"),
                    lambda i: ops.where(mask.load(i[1:]), _scalar(0), x.load(i)))
    return Kernel(f"masked_fill_rows_{dtype}", [x, mask, InputBuffer("params", dtype, (1,), (1,))],
                  [out])


def row_sum_kernel(dtype):
    """``out[r] = sum(in0[r, :])``: each row's sum, the rows split over threads (a
    convolution's bias gradient sums each (sample, channel) plane this way first, Note
    [Channel sums] in backends/cpu/reductions.py)."""
    x = _rows_input(dtype)
    total = Reduction("out", dtype, ("rows",), ("n",), "sum", lambda i, r: x.load(i + r))
    return Kernel(f"row_sum_{dtype}", [x], [total])


def _row_kernels():
    for dtype in DTYPES:
        yield row_sum_kernel(dtype)
        yield from (row_operator_kernel(f, dtype) for f in ROW_OPERATORS)
        yield masked_fill_rows_kernel(dtype)
        yield softmax_kernel(dtype)
        yield softmax_kernel(dtype, log=True)
        yield softmax_backward_kernel(dtype)
        yield softmax_backward_kernel(dtype, log=True)
        yield layer_norm_kernel(dtype, False)
        yield layer_norm_kernel(dtype, True)
        yield layer_norm_backward_kernel(dtype, False)
        yield layer_norm_backward_kernel(dtype, True)


def column_sum_kernel(dtype):
    """``x.sum(0)`` of a (rows, n) array: each row added to the n sums in order (NumPy's
    order, so the same bits), the columns split over threads (a Linear's bias gradient)."""
    x = InputBuffer("in0", dtype, ("rows", "n"), ("n", 1))
    total = Reduction("out", dtype, ("n",), ("rows",), "sum",
                      lambda i, r: x.load((r[0], i[0])), column=True)
    return Kernel(f"column_sum_{dtype}", [x], [total])


def index_add_rows_kernel(dtype):
    """``out[index[y], :] += src[y, :]`` for each source row y in order, in place: eager's
    ``index_add_`` along dim 0 (an embedding's backward), Note [Scatter-add]'s IndexAdd with
    no starting pass; the same order, so the same sums, as ``np.add.at``."""
    src = InputBuffer("in0", dtype, ("src_rows", "n"), ("n", 1))
    index = InputBuffer("index", "int64", ("src_rows",), (1,))
    node = IndexAdd("out", dtype, ("n",), ("src_rows",), "sum",
                    lambda i, r: src.load((r[0], i[0])), column=True,
                    row_fn=lambda i, r: index.load(r))
    return Kernel(f"index_add_rows_{dtype}", [src, index], [node])


def _column_kernels():
    for dtype in DTYPES:
        yield layer_norm_param_grads_kernel(dtype)
        yield column_sum_kernel(dtype)
        yield index_add_rows_kernel(dtype)


def rows_source() -> str:
    return print_module([(k, ("rows",)) for k in _row_kernels()] +
                        [(k, ("n",)) for k in _column_kernels()])


def _row_signature(kernel):
    # the pointers, then rows, n, x_step, x_lo, x_hi
    return (ctypes.c_void_p,) * pointer_count(kernel) + (ctypes.c_int64,) * 5


def _column_signature(kernel):
    # the pointers, then n, rows, x_lo, x_hi (x: a column)
    return (ctypes.c_void_p,) * pointer_count(kernel) + (ctypes.c_int64,) * 4


native.register_generated(ROWS_LIBRARY, rows_source,
                          {**{k.name: _row_signature(k) for k in _row_kernels()},
                           **{k.name: _column_signature(k) for k in _column_kernels()}})
