"""Softmax, the nn activations and their backward ops, and one_hot.

* ``_softmax``/``_log_softmax``/``_safe_softmax`` and their backward ops are primitives (one
  fused, numerically stable kernel each, and the hot path of every classifier and attention
  layer); ``softmax.int``/``log_softmax.int`` add the optional ``dtype`` cast in front of them,
  as in PyTorch.
* The common activations are primitives too, with one NumPy kernel each (``backends/cpu/
  activation.py``, written as ATen's CPU kernels compute them, ``aten/src/ATen/native/cpu/
  Activation.cpp``). Their gradients are PyTorch's dedicated backward ops (``elu_backward``,
  ``hardtanh_backward``, ...), which fix by convention what a chain of pointwise derivatives
  would leave to chance: the value at the clamp boundaries, at +-inf and at NaN. The backward ops
  are composites over pointwise ops, so they run on every device and differentiate again;
  ``threshold_backward`` (ReLU's) and the derivatives of tanh, sigmoid, gelu, silu and softplus
  are primitives, one generated loop each on the CPU.
* The rest (selu, relu6, log_sigmoid, rrelu, glu, prelu) decompose into those and into
  pointwise ops, as in PyTorch.

Half-precision inputs compute in float32 and round once (PyTorch's CPU "opmath"): kernels do it
with ``compute_data``, composites with ``opmath``. ``one_hot`` is primitive: its output size can
depend on the data.
"""

import functools

from ..core import dtype as D
from ..core.shape import contiguous_strides, wrap_dim
from . import factory as F
from . import meta_rules as R
from . import pointwise as P
from . import shape as S
from .op import TensorSpec, defop, register_decomposition

_HALF = (D.float16, D.bfloat16)


def check_float(name, x):
    """PyTorch's dispatch error for a kernel compiled for floating types only."""
    if x.dtype.category != D.FLOATING:
        raise NotImplementedError(f"\"{name}\" not implemented for '{R.type_name(x.dtype)}'")


def _up(x):
    if getattr(x, "dtype", None) in _HALF:
        return F._to_copy(x, dtype=D.float32)
    return x


def opmath(fn):
    """Run a composite in float32 when ``self`` is float16/bfloat16 and round the result once, as
    PyTorch's CPU kernels do (their "opmath" type); other dtypes run unchanged."""
    @functools.wraps(fn)
    def run(self, *args):
        dt = self.dtype
        if dt not in _HALF:
            return fn(self, *args)
        return F._to_copy(fn(_up(self), *(_up(a) for a in args)), dtype=dt)
    return run


def _backward_math(fn):
    """A backward op computes in the common dtype of its tensor arguments, as TensorIterator
    does (float32 when that is a half type, rounded once at the end)."""
    @functools.wraps(fn)
    def run(*args):
        dt = D.result_type(*(a for a in args if R.is_tensor(a)))
        cdt = D.float32 if dt in _HALF else dt
        out = fn(*(F._to_copy(a, dtype=cdt) if R.is_tensor(a) and a.dtype is not cdt else a
                   for a in args))
        return out if out.dtype is dt else F._to_copy(out, dtype=dt)
    return run


# --- softmax --------------------------------------------------------------------------------------

def _softmax_spec(name, self, dim, dtype):
    """The output of a softmax of ``self`` computed in ``dtype``."""
    d = wrap_dim(dim, self.ndim)
    if self.numel() and dtype.category != D.FLOATING:
        # PyTorch views a 0-dim input as 1-d, so its dim is the last one.
        kernel = "lastdim_kernel_impl" if d == max(self.ndim - 1, 0) else "kernel_impl"
        raise NotImplementedError(f"\"{name}_{kernel}\" not implemented for "
                                  f"'{R.type_name(dtype)}'")
    shape = tuple(self.shape)
    return TensorSpec(shape, dtype, contiguous_strides(shape))


def _softmax_meta(name):
    def meta(self, dim, half_to_float):
        dtype = D.float32 if half_to_float and self.dtype in _HALF else self.dtype
        return _softmax_spec(name, self, dim, dtype)
    return meta


def _safe_softmax_meta(self, dim, dtype=None):
    return _softmax_spec("softmax", self, dim, self.dtype if dtype is None else dtype)


_softmax = defop("_softmax(Tensor self, int dim, bool half_to_float) -> Tensor",
                 _softmax_meta("softmax"), function="_softmax")
_log_softmax = defop("_log_softmax(Tensor self, int dim, bool half_to_float) -> Tensor",
                     _softmax_meta("log_softmax"), function="_log_softmax")
# Softmax that gives 0, not nan, on a row that is all -inf (a fully masked attention row). A
# primitive, so its gradient comes from the result (zeros there) instead of from a nan softmax.
_safe_softmax = defop("_safe_softmax(Tensor self, int dim, ScalarType? dtype=None) -> Tensor",
                      _safe_softmax_meta)
softmax = defop("softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor",
                method=True, function=True)
log_softmax = defop("log_softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor",
                    method=True, function=True)


@register_decomposition(softmax)
def _softmax_int(self, dim, dtype=None):
    if dtype is not None and dtype is not self.dtype:
        self = F._to_copy(self, dtype=dtype)
    return _softmax(self, dim, False)


@register_decomposition(log_softmax)
def _log_softmax_int(self, dim, dtype=None):
    if dtype is not None and dtype is not self.dtype:
        self = F._to_copy(self, dtype=dtype)
    return _log_softmax(self, dim, False)


def _check_softmax_backward(name, grad_output, output, dim, input_dtype):
    """ATen's checks, in its order. The result has grad_output's dtype: ``input_dtype`` only
    matters for the half-to-float case, which the CPU does not support."""
    d = wrap_dim(dim, grad_output.ndim)
    if name == "softmax" and tuple(grad_output.shape) != tuple(output.shape):
        sizes = [", ".join(map(str, x.shape)) for x in (grad_output, output)]
        raise RuntimeError(f"Expected tensor for argument #1 'grad' to have same size as tensor "
                           f"for argument #2 'output'; but [{sizes[0]}] does not equal "
                           f"[{sizes[1]}] (while checking arguments for softmax_backward)")
    dt = grad_output.dtype
    if output.dtype is not dt:
        raise RuntimeError(f"expected scalar type {R.type_name(dt)} but found "
                           f"{R.type_name(output.dtype)}")
    if dt is D.float32 and input_dtype is D.float16:
        raise RuntimeError("expected scalar type Float but found Half")
    if grad_output.numel() and dt.category != D.FLOATING:
        kernel = "lastdim_kernel_impl" if d == max(grad_output.ndim - 1, 0) else "kernel_impl"
        raise NotImplementedError(f"\"{name}_backward_{kernel}\" not implemented for "
                                  f"'{R.type_name(dt)}'")
    return d


def _softmax_backward_meta(name):
    def meta(grad_output, output, dim, input_dtype):
        _check_softmax_backward(name, grad_output, output, dim, input_dtype)
        shape = tuple(grad_output.shape)
        return TensorSpec(shape, grad_output.dtype, contiguous_strides(shape))
    return meta


# Primitives, as in ATen: each is one fused row kernel on the CPU (two passes over the row: a
# sum, then the output) instead of four composed whole-tensor ops; cross-entropy's backward ends
# in the log_softmax one. The result is contiguous with grad_output's shape and dtype.
_softmax_backward_data = defop("_softmax_backward_data(Tensor grad_output, Tensor output, "
                               "int dim, ScalarType input_dtype) -> Tensor",
                               _softmax_backward_meta("softmax"))
_log_softmax_backward_data = defop("_log_softmax_backward_data(Tensor grad_output, "
                                   "Tensor output, int dim, ScalarType input_dtype) -> Tensor",
                                   _softmax_backward_meta("log_softmax"))


# --- primitive activations ------------------------------------------------------------------------

def _activation(name, args, check, *, inplace=True, function=False, method=False):
    """Define ``name(Tensor self{args})`` (and ``name_``): ``check(self, *scalars)`` raises
    PyTorch's errors; the result has self's shape and dtype and TensorIterator's layout. The op's
    ``dtype_rule`` (what the kernels call instead of the whole meta) checks and gives the dtype."""
    def rule(self, *scalars):
        check(self, *scalars)
        return self.dtype

    def meta(self, *scalars):
        return R.pointwise_meta(lambda x: rule(x, *scalars), self)

    op = defop(f"{name}(Tensor self{args}) -> Tensor", meta, method=method, function=function,
               tags=("pointwise",))
    op.dtype_rule = rule
    if not inplace:
        return op

    def meta_(self, *scalars):
        R.check_no_internal_overlap(self)
        check(self, *scalars)
        return self

    op_ = defop(f"{name}_(Tensor(a!) self{args}) -> Tensor(a!)", meta_,
                function=f"{name}_" if function else None, tags=("pointwise",))
    return op, op_


def _floating(kernel):
    def check(self, *scalars):
        check_float(kernel, self)
    return check


def _check_hardtanh(self, min_val, max_val):
    if self.dtype is D.bool_:
        raise RuntimeError("Bool inputs not supported for hardtanh")
    # integer inputs clamp to the bounds truncated to integers (no type promotion)
    if self.dtype is D.uint8 and (int(min_val) < 0 or int(max_val) < 0):
        raise RuntimeError("cannot do hardtanh on an unsigned type with negative limits")


def _check_softshrink(self, lambd):
    check_float("softshrink_check", self)
    top = D.finfo(self.dtype).max
    if not 0 <= lambd <= top:
        raise RuntimeError(f"lambda must be in range [0, {top:g}] for input dtype "
                           f"{R.type_name(self.dtype)}, but found {lambd:g}")


def _check_celu(self, alpha):
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError: alpha cannot be 0 for CELU")
    check_float("elu_cpu", self)


def _check_threshold(self, threshold, value):
    if self.dtype is D.bool_:
        raise NotImplementedError("\"threshold_cpu\" not implemented for 'Bool'")


elu, elu_ = _activation("elu", ", Scalar alpha=1, Scalar scale=1, Scalar input_scale=1",
                        _floating("elu_cpu"))
# celu is elu(x, alpha, 1, 1 / alpha), but with nodes of its own in PyTorch (CeluBackward0/1)
celu, celu_ = _activation("celu", ", Scalar alpha=1.0", _check_celu, function=True)
hardtanh, hardtanh_ = _activation("hardtanh", ", Scalar min_val=-1, Scalar max_val=1",
                                  _check_hardtanh)
hardsigmoid, hardsigmoid_ = _activation("hardsigmoid", "", _floating("hardsigmoid_cpu"))
hardswish, hardswish_ = _activation("hardswish", "", _floating("hardswish_cpu"))
mish, mish_ = _activation("mish", "", _floating("mish_cpu"))
leaky_relu, leaky_relu_ = _activation("leaky_relu", ", Scalar negative_slope=0.01",
                                      _floating("leaky_relu_cpu"))
threshold, threshold_ = _activation("threshold", ", Scalar threshold, Scalar value",
                                    _check_threshold, function=True)
softplus = _activation("softplus", ", Scalar beta=1, Scalar threshold=20",
                       _floating("softplus_cpu"), inplace=False)
softshrink = _activation("softshrink", ", Scalar lambd=0.5", _check_softshrink, inplace=False)
hardshrink = _activation("hardshrink", ", Scalar lambd=0.5", _floating("hardshrink_cpu"),
                         inplace=False, function=True, method=True)

# --- their backward ops ---------------------------------------------------------------------------
# Each is ATen's CPU backward kernel as a composite (the same comparisons, so the same values at
# the boundaries, inf and NaN), written as grad * (a slope chosen by ``where``) or as a choice
# between grad and 0, so that differentiating it again never multiplies 0 by an inf or a NaN of
# the side ``where`` did not choose.

elu_backward = defop("elu_backward(Tensor grad_output, Scalar alpha, Scalar scale, "
                     "Scalar input_scale, bool is_result, Tensor self_or_result) -> Tensor")
hardtanh_backward = defop("hardtanh_backward(Tensor grad_output, Tensor self, Scalar min_val, "
                          "Scalar max_val) -> Tensor")
hardsigmoid_backward = defop("hardsigmoid_backward(Tensor grad_output, Tensor self) -> Tensor")
hardswish_backward = defop("hardswish_backward(Tensor grad_output, Tensor self) -> Tensor")
mish_backward = defop("mish_backward(Tensor grad_output, Tensor self) -> Tensor")
leaky_relu_backward = defop("leaky_relu_backward(Tensor grad_output, Tensor self, "
                            "Scalar negative_slope, bool self_is_result) -> Tensor")
softshrink_backward = defop("softshrink_backward(Tensor grad_output, Tensor self, "
                            "Scalar lambd) -> Tensor")
hardshrink_backward = defop("hardshrink_backward(Tensor grad_out, Tensor self, Scalar lambd) -> "
                            "Tensor")


def _pointwise_backward(schema, kernel_name, check=None):
    """A primitive backward op over (grad_output, x): broadcast, promoted to a floating dtype
    (PyTorch's ``<kernel_name>`` dispatch error otherwise); one fused kernel per backend."""
    rule = P._float_only(kernel_name)

    def meta(grad_output, x, *args):
        spec = R.pointwise_meta(rule, grad_output, x)
        if check is not None:
            check(spec.dtype, *args)
        return spec
    op = defop(schema, meta, tags=("pointwise",))
    op.dtype_rule = rule
    return op


# Primitives, unlike the composites here: the derivatives of tanh, sigmoid, gelu, silu and
# softplus, each one generated C loop on the CPU (compile/inductor/eager.py) instead of a chain
# of NumPy passes.
tanh_backward = _pointwise_backward("tanh_backward(Tensor grad_output, Tensor output) -> Tensor",
                                    "tanh_backward_cpu")
sigmoid_backward = _pointwise_backward(
    "sigmoid_backward(Tensor grad_output, Tensor output) -> Tensor", "sigmoid_backward_cpu")
gelu_backward = _pointwise_backward(
    "gelu_backward(Tensor grad_output, Tensor self, *, str approximate='none') -> Tensor",
    "GeluBackwardKernelImpl", P.check_gelu)
silu_backward = _pointwise_backward("silu_backward(Tensor grad_output, Tensor self) -> Tensor",
                                    "silu_backward_cpu")
softplus_backward = _pointwise_backward(
    "softplus_backward(Tensor grad_output, Tensor self, Scalar beta, Scalar threshold) -> Tensor",
    "softplus_backward_cpu")


def _threshold_backward_meta(grad_output, self, threshold):
    return R.pointwise_meta(R.promote, grad_output, self)


# A primitive too, of every dtype: ReLU's gradient (``threshold_backward(grad, result, 0)``, as
# ATen's ReluBackward0), one generated pass on the CPU where a compare and a select took two,
# the largest serial step of a CNN's backward (docs/performance.md, "Convolution on the CPU").
threshold_backward = defop("threshold_backward(Tensor grad_output, Tensor self, "
                           "Scalar threshold) -> Tensor", _threshold_backward_meta,
                           tags=("pointwise",))
threshold_backward.dtype_rule = R.promote


_NEGATIVE_SLOPE = ("In-place {} backward calculation is triggered with a negative slope which is "
                   "not supported. This is caused by calling in-place forward function with a "
                   "negative slope, please call out-of-place version instead.")
_ONE_SIXTH = 0.1666666716337204   # 1/6 rounded to float32: ATen's constant, even for double


@register_decomposition(elu_backward)
@_backward_math
def _elu_backward(grad_output, alpha, scale, input_scale, is_result, self_or_result):
    """x <= 0 ? g * input_scale * alpha * scale * exp(x * input_scale) : g * scale; from the
    result r of an in-place elu, the negative side is g * input_scale * (r + alpha * scale)."""
    if is_result and alpha < 0:
        raise RuntimeError(_NEGATIVE_SLOPE.format("elu"))
    x, negcoef = self_or_result, alpha * scale
    # x enters the slope only where x < 0 (at 0 it is a constant): the second derivative is then
    # PyTorch's elu_double_backward (zero at 0), and an inf on the positive side stays out of it
    below = P.where(P.lt(x, 0), x, 0)
    if is_result:
        slope = P.mul(P.add(below, negcoef), input_scale)
    else:
        slope = P.mul(P.exp(P.mul(below, input_scale)), input_scale * negcoef)
    return P.mul(grad_output, P.where(P.le(x, 0), slope, scale))


@register_decomposition(hardtanh_backward)
@_backward_math
def _hardtanh_backward(grad_output, self, min_val, max_val):
    # both boundaries are flat; NaN passes the gradient
    outside = P.logical_or(P.le(self, min_val), P.ge(self, max_val))
    return P.where(outside, 0, grad_output)


@register_decomposition(hardsigmoid_backward)
@_backward_math
def _hardsigmoid_backward(grad_output, self):
    inside = P.logical_and(P.gt(self, -3), P.lt(self, 3))
    return P.where(inside, P.mul(grad_output, _ONE_SIXTH), 0)


@register_decomposition(hardswish_backward)
@_backward_math
def _hardswish_backward(grad_output, self):
    # x <= -3 ? 0 : (x < 3 ? g * (x / 3 + 0.5) : g); NaN passes the gradient
    slope = P.where(P.le(self, -3), 0, P.where(P.lt(self, 3), P.add(P.div(self, 3), 0.5), 1))
    return P.mul(grad_output, slope)


@register_decomposition(mish_backward)
def _mish_backward(grad_output, self):
    """ATen's math_mish_backward: g * (tanh(sp) + x * sigmoid(x) * (1 - tanh(sp)^2)) with
    sp = softplus(x). Its result has self's dtype (grad_output must cast to it)."""
    R.check_inplace_cast(R.promote(grad_output, self), self.dtype)
    return _mish_backward_math(self, grad_output)


@opmath
def _mish_backward_math(self, grad_output):
    tanh_sp = P.tanh(softplus(self))
    slope = P.mul(P.mul(self, P.sigmoid(self)), P.sub(1, P.mul(tanh_sp, tanh_sp)))
    out = P.mul(grad_output, P.add(tanh_sp, slope))
    return out if out.dtype is self.dtype else F._to_copy(out, dtype=self.dtype)


@register_decomposition(leaky_relu_backward)
@_backward_math
def _leaky_relu_backward(grad_output, self, negative_slope, self_is_result):
    if self_is_result and negative_slope < 0:
        raise RuntimeError(_NEGATIVE_SLOPE.format("leakyReLu") + " File an issue at https://"
                           "github.com/pytorch/pytorch if you do require supporting in-place "
                           "leakRelu backward calculation with negative slope")
    return P.where(P.gt(self, 0), grad_output, P.mul(grad_output, negative_slope))


def _shrink_backward(grad_output, self, lambd):
    inside = P.logical_and(P.ge(self, -lambd), P.le(self, lambd))
    return P.where(inside, 0, grad_output)


register_decomposition(softshrink_backward)(_backward_math(_shrink_backward))
register_decomposition(hardshrink_backward)(_backward_math(_shrink_backward))

# --- composite activations ------------------------------------------------------------------------

selu = defop("selu(Tensor self) -> Tensor", function=True)
selu_ = defop("selu_(Tensor(a!) self) -> Tensor(a!)", function=True)
relu6 = defop("relu6(Tensor self) -> Tensor")
log_sigmoid = defop("log_sigmoid(Tensor self) -> Tensor")
_RR = "Scalar lower=0.125, Scalar upper=0.3333333333333333, bool training=False, " \
      "Generator? generator=None"
rrelu = defop(f"rrelu(Tensor self, {_RR}) -> Tensor", function=True)
rrelu_ = defop(f"rrelu_(Tensor(a!) self, {_RR}) -> Tensor(a!)", function=True)
glu = defop("glu(Tensor self, int dim=-1) -> Tensor")
# prelu's elementwise part, with the weight already shaped to broadcast against self
_prelu_kernel = defop("_prelu_kernel(Tensor self, Tensor weight) -> Tensor")
_prelu_kernel_backward = defop("_prelu_kernel_backward(Tensor grad_output, Tensor self, "
                               "Tensor weight) -> (Tensor, Tensor)")
prelu = defop("prelu(Tensor self, Tensor weight) -> Tensor", method=True, function=True)

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


@register_decomposition(selu)
def _selu(self):
    return elu(self, _SELU_ALPHA, _SELU_SCALE, 1)


@register_decomposition(selu_)
def _selu_(self):
    return elu_(self, _SELU_ALPHA, _SELU_SCALE, 1)


@register_decomposition(relu6)
def _relu6(self):
    return hardtanh(self, 0, 6)


@register_decomposition(log_sigmoid)
@opmath
def _log_sigmoid(self):
    check_float("log_sigmoid_cpu", self)
    # min(x, 0) - log1p(exp(-|x|)): never exponentiates a large positive number
    return P.sub(P.minimum(self, 0), P.log1p(P.exp(P.neg(P.abs(self)))))


def _check_rrelu(lower, upper):
    if lower > upper:
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")


def _rrelu_noise_slopes(self, lower, upper, generator):
    """Training: each non-positive element gets its own slope drawn from U(lower, upper)."""
    check_float("rrelu_with_noise_out_cpu", self)
    noise = F.uniform_(F.empty(tuple(self.shape), dtype=self.dtype, device=self.device),
                       lower, upper, generator=generator)
    return P.where(P.le(self, 0), P.mul(self, noise), self)


@register_decomposition(rrelu)
def _rrelu(self, lower=0.125, upper=1.0 / 3, training=False, generator=None):
    _check_rrelu(lower, upper)
    if not training:
        return leaky_relu(self, (lower + upper) / 2)
    return _rrelu_noise_slopes(self, lower, upper, generator)


@register_decomposition(rrelu_)
def _rrelu_(self, lower=0.125, upper=1.0 / 3, training=False, generator=None):
    _check_rrelu(lower, upper)
    if not training:
        return leaky_relu_(self, (lower + upper) / 2)
    # the out-of-place result saves no input for backward, so copying it into self is safe
    return F.copy_(self, _rrelu_noise_slopes(self, lower, upper, generator))


@register_decomposition(glu)
@opmath
def _glu(self, dim=-1):
    if self.ndim == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    d = wrap_dim(dim, self.ndim)
    size = self.shape[d]
    if size % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {d} is size {size}")
    check_float("glu_cpu", self)
    half = size // 2
    return P.mul(S.narrow(self, d, 0, half), P.sigmoid(S.narrow(self, d, half, half)))


@register_decomposition(prelu)
def _prelu(self, weight):
    if weight.ndim > 1:
        raise RuntimeError(f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: "
                           f"ndim = {weight.ndim}")
    channels = self.shape[1] if self.ndim >= 2 else 1
    n = weight.numel()
    if n != 1 and n != channels:
        raise RuntimeError(f"Mismatch of parameter numbers and input channel size. Found parameter "
                           f"numbers = {n} and channel size = {channels}.")
    if self.dtype is not weight.dtype:
        raise RuntimeError(f"prelu: Type promoting not supported. Got {R.type_name(self.dtype)} "
                           f"and {R.type_name(weight.dtype)}")
    check_float("prelu_cpu", self)
    # One slope per channel (dim 1): weight becomes [C, 1, ..., 1] (a scalar for a 0-d input;
    # a 1-d input broadcasts it as it is), as ATen's prelu reshapes it for _prelu_kernel.
    if self.ndim >= 2:
        weight = S.reshape(weight, (n,) + (1,) * (self.ndim - 2))
    elif self.ndim == 0:
        weight = S.reshape(weight, ())
    return _prelu_kernel(self, weight)


@register_decomposition(_prelu_kernel)
def _prelu_kernel_decomposition(self, weight):
    return P.where(P.gt(self, 0), self, P.mul(weight, self))


@register_decomposition(_prelu_kernel_backward)
def _prelu_kernel_backward_decomposition(grad_output, self, weight):
    """(grad of self, grad of weight), both of the broadcast shape (ATen's TensorIterator
    outputs; autograd sums the weight's to its shape): x > 0 passes the gradient to x;
    elsewhere weight * grad to x and x * grad to the weight."""
    positive = P.gt(self, 0)
    return (P.where(positive, grad_output, P.mul(weight, grad_output)),
            P.where(positive, 0.0, P.mul(self, grad_output)))


# --- one_hot --------------------------------------------------------------------------------------

def _one_hot_meta(self, num_classes=-1):
    if self.dtype is not D.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if num_classes == -1:
        # The class count would come from the data (max + 1), which a meta tensor has not got.
        raise RuntimeError("Tensor.item() cannot be called on meta tensors")
    if num_classes < -1:
        raise RuntimeError("Class values must be smaller than num_classes.")
    shape = tuple(self.shape) + (num_classes,)
    return TensorSpec(shape, D.int64, contiguous_strides(shape))


one_hot = defop("one_hot(Tensor self, int num_classes=-1) -> Tensor", _one_hot_meta)
