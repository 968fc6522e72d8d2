"""Softmax, the nn activations and one_hot.

``_softmax``/``_log_softmax`` are primitives (one fused, numerically stable kernel each, and the
hot path of every classifier and attention layer); ``softmax.int``/``log_softmax.int`` add the
optional ``dtype`` cast in front of them, as in PyTorch. The activations are composites over
pointwise ops, written as PyTorch's CPU kernels compute them (``aten/src/ATen/native/cpu/
Activation.cpp``), so autograd and every backend get them for free. Composites that chain several
rounding steps run in float32 for half inputs and round once (see ``opmath``), which is what
PyTorch's kernels do. ``one_hot`` is primitive: its output size can depend on the data.
"""

import functools
import math

from ..core import dtype as D
from ..core.shape import contiguous_strides, wrap_dim
from . import factory as F
from . import meta_rules as R
from . import pointwise as P
from . import shape as S
from .op import TensorSpec, aten, defop, register_decomposition

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


def _in_place(out_of_place):
    """The decomposition of ``f_`` given the one of ``f``: compute, then write into ``self``."""
    def run(self, *args):
        return F.copy_(self, out_of_place(self, *args))
    return run


# --- softmax --------------------------------------------------------------------------------------

def _softmax_meta(name):
    def meta(self, dim, half_to_float):
        d = wrap_dim(dim, self.ndim)
        if self.numel() and self.dtype.category != D.FLOATING:
            # PyTorch views a 0-dim input as 1-d, so its dim is the last one.
            kernel = "lastdim_kernel_impl" if d == max(self.ndim - 1, 0) else "kernel_impl"
            raise NotImplementedError(f"\"{name}_{kernel}\" not implemented for "
                                      f"'{R.type_name(self.dtype)}'")
        dtype = D.float32 if half_to_float and self.dtype in _HALF else self.dtype
        shape = tuple(self.shape)
        return TensorSpec(shape, dtype, contiguous_strides(shape))
    return meta


_softmax = defop("_softmax(Tensor self, int dim, bool half_to_float) -> Tensor",
                 _softmax_meta("softmax"), function="_softmax")
_log_softmax = defop("_log_softmax(Tensor self, int dim, bool half_to_float) -> Tensor",
                     _softmax_meta("log_softmax"), function="_log_softmax")
softmax = defop("softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor",
                method=True, function=True)
log_softmax = defop("log_softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor",
                    method=True, function=True)
_safe_softmax = defop("_safe_softmax(Tensor self, int dim, ScalarType? dtype=None) -> Tensor")
_softmax_backward_data = defop("_softmax_backward_data(Tensor grad_output, Tensor output, "
                               "int dim, ScalarType input_dtype) -> Tensor")
_log_softmax_backward_data = defop("_log_softmax_backward_data(Tensor grad_output, "
                                   "Tensor output, int dim, ScalarType input_dtype) -> Tensor")


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


@register_decomposition(_safe_softmax)
def _safe_softmax_decomp(self, dim, dtype=None):
    """Softmax that gives 0, not nan, on a row that is all -inf (a fully masked attention row)."""
    out = softmax(self, dim, dtype)
    masked_rows = aten.all.dims(P.eq(self, -math.inf), dim, True)
    return P.where(masked_rows, 0.0, out)


@register_decomposition(_softmax_backward_data)
def _softmax_backward(grad_output, output, dim, input_dtype):
    # d softmax: y * (g - sum(g * y))
    dot = aten.sum.dim_IntList(P.mul(grad_output, output), [dim], True)
    grad = P.mul(output, P.sub(grad_output, dot))
    return grad if grad.dtype is input_dtype else F._to_copy(grad, dtype=input_dtype)


@register_decomposition(_log_softmax_backward_data)
def _log_softmax_backward(grad_output, output, dim, input_dtype):
    # d log_softmax: g - exp(y) * sum(g)
    total = aten.sum.dim_IntList(grad_output, [dim], True)
    grad = P.sub(grad_output, P.mul(P.exp(output), total))
    return grad if grad.dtype is input_dtype else F._to_copy(grad, dtype=input_dtype)


# --- activations ----------------------------------------------------------------------------------

def _define(op, op_=None):
    """Register the decorated function as ``op``'s decomposition, and ``op_`` (the in-place
    twin) as: compute ``op``, then copy into ``self``."""
    def deco(fn):
        register_decomposition(op)(fn)
        if op_ is not None:
            register_decomposition(op_)(_in_place(op))
        return fn
    return deco


_SC = "Scalar alpha=1, Scalar scale=1, Scalar input_scale=1"
_RR = "Scalar lower=0.125, Scalar upper=0.3333333333333333, bool training=False, " \
      "Generator? generator=None"
elu = defop(f"elu(Tensor self, {_SC}) -> Tensor")
elu_ = defop(f"elu_(Tensor(a!) self, {_SC}) -> Tensor(a!)")
selu = defop("selu(Tensor self) -> Tensor", function=True)
selu_ = defop("selu_(Tensor(a!) self) -> Tensor(a!)", function=True)
celu = defop("celu(Tensor self, Scalar alpha=1.0) -> Tensor", function=True)
celu_ = defop("celu_(Tensor(a!) self, Scalar alpha=1.0) -> Tensor(a!)", function=True)
leaky_relu = defop("leaky_relu(Tensor self, Scalar negative_slope=0.01) -> Tensor")
leaky_relu_ = defop("leaky_relu_(Tensor(a!) self, Scalar negative_slope=0.01) -> Tensor(a!)")
hardtanh = defop("hardtanh(Tensor self, Scalar min_val=-1, Scalar max_val=1) -> Tensor")
hardtanh_ = defop("hardtanh_(Tensor(a!) self, Scalar min_val=-1, Scalar max_val=1) -> "
                  "Tensor(a!)")
relu6 = defop("relu6(Tensor self) -> Tensor")
hardsigmoid = defop("hardsigmoid(Tensor self) -> Tensor")
hardsigmoid_ = defop("hardsigmoid_(Tensor(a!) self) -> Tensor(a!)")
hardswish = defop("hardswish(Tensor self) -> Tensor")
hardswish_ = defop("hardswish_(Tensor(a!) self) -> Tensor(a!)")
mish = defop("mish(Tensor self) -> Tensor")
mish_ = defop("mish_(Tensor(a!) self) -> Tensor(a!)")
softplus = defop("softplus(Tensor self, Scalar beta=1, Scalar threshold=20) -> Tensor")
softshrink = defop("softshrink(Tensor self, Scalar lambd=0.5) -> Tensor")
hardshrink = defop("hardshrink(Tensor self, Scalar lambd=0.5) -> Tensor", method=True,
                   function=True)
log_sigmoid = defop("log_sigmoid(Tensor self) -> Tensor")
threshold = defop("threshold(Tensor self, Scalar threshold, Scalar value) -> Tensor",
                  function=True)
threshold_ = defop("threshold_(Tensor(a!) self, Scalar threshold, Scalar value) -> Tensor(a!)",
                   function=True)
rrelu = defop(f"rrelu(Tensor self, {_RR}) -> Tensor", function=True)
rrelu_ = defop(f"rrelu_(Tensor(a!) self, {_RR}) -> Tensor(a!)", function=True)
glu = defop("glu(Tensor self, int dim=-1) -> Tensor")
prelu = defop("prelu(Tensor self, Tensor weight) -> Tensor", method=True, function=True)

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


@_define(elu, elu_)
@opmath
def _elu(self, alpha=1, scale=1, input_scale=1):
    check_float("elu_cpu", self)
    # x > 0 ? x * scale : expm1(x * input_scale) * alpha * scale
    positive = self if scale == 1 else P.mul(self, scale)
    scaled = self if input_scale == 1 else P.mul(self, input_scale)
    return P.where(P.gt(self, 0), positive, P.mul(P.expm1(scaled), alpha * scale))


@_define(selu, selu_)
def _selu(self):
    return elu(self, _SELU_ALPHA, _SELU_SCALE, 1)


@_define(celu, celu_)
def _celu(self, alpha=1.0):
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError: alpha cannot be 0 for CELU")
    return elu(self, alpha, 1.0, 1.0 / alpha)


@_define(leaky_relu, leaky_relu_)
def _leaky_relu(self, negative_slope=0.01):
    check_float("leaky_relu_cpu", self)
    return P.where(P.gt(self, 0), self, P.mul(self, negative_slope))


def _no_bool_hardtanh(self):
    if self.dtype is D.bool_:
        raise RuntimeError("Bool inputs not supported for hardtanh")


@_define(hardtanh, hardtanh_)
def _hardtanh(self, min_val=-1, max_val=1):
    _no_bool_hardtanh(self)
    out = P.clamp(self, min_val, max_val)
    # An integer input keeps its dtype even with float bounds (PyTorch casts the result back).
    return out if out.dtype is self.dtype else F._to_copy(out, dtype=self.dtype)


@_define(relu6)
def _relu6(self):
    return hardtanh(self, 0, 6)


@_define(hardsigmoid, hardsigmoid_)
@opmath
def _hardsigmoid(self):
    check_float("hardsigmoid_cpu", self)
    return P.div(P.clamp(P.add(self, 3), 0, 6), 6)


@_define(hardswish, hardswish_)
@opmath
def _hardswish(self):
    check_float("hardswish_cpu", self)
    return P.div(P.mul(self, P.clamp(P.add(self, 3), 0, 6)), 6)


@_define(mish, mish_)
@opmath
def _mish(self):
    check_float("mish_cpu", self)
    return P.mul(self, P.tanh(P.log1p(P.exp(self))))


@_define(softplus)
@opmath
def _softplus(self, beta=1, threshold=20):
    check_float("softplus_cpu", self)
    scaled = self if beta == 1 else P.mul(self, beta)
    soft = P.log1p(P.exp(scaled))
    # x * beta > threshold ? x : log1p(exp(x * beta)) / beta
    return P.where(P.gt(scaled, threshold), self, soft if beta == 1 else P.div(soft, beta))


@_define(softshrink)
def _softshrink(self, lambd=0.5):
    check_float("softshrink_check", self)
    top = D.finfo(self.dtype).max
    if not 0 <= lambd <= top:
        raise RuntimeError(f"lambda must be in range [0, {top:g}] for input dtype "
                           f"{R.type_name(self.dtype)}, but found {lambd:g}")
    # x > l ? x - l : (x < -l ? x + l : x * 0)   (x * 0 keeps -0.0 and nan)
    return P.where(P.gt(self, lambd), P.sub(self, lambd),
                   P.where(P.lt(self, -lambd), P.add(self, lambd), P.mul(self, 0)))


@_define(hardshrink)
def _hardshrink(self, lambd=0.5):
    check_float("hardshrink_cpu", self)
    inside = P.logical_and(P.ge(self, -lambd), P.le(self, lambd))
    return P.where(inside, 0, self)


@_define(log_sigmoid)
@opmath
def _log_sigmoid(self):
    check_float("log_sigmoid_cpu", self)
    # min(x, 0) - log1p(exp(-|x|)): never exponentiates a large positive number
    return P.sub(P.minimum(self, 0), P.log1p(P.exp(P.neg(P.abs(self)))))


@_define(threshold, threshold_)
def _threshold(self, threshold, value):
    if self.dtype is D.bool_:
        raise NotImplementedError("\"threshold_cpu\" not implemented for 'Bool'")
    out = P.where(P.le(self, threshold), value, self)
    return out if out.dtype is self.dtype else F._to_copy(out, dtype=self.dtype)


@_define(rrelu, rrelu_)
def _rrelu(self, lower=0.125, upper=1.0 / 3, training=False, generator=None):
    if lower > upper:
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")
    if not training:
        return leaky_relu(self, (lower + upper) / 2)
    check_float("rrelu_with_noise_out_cpu", self)
    # Training: each non-positive element gets its own slope drawn from U(lower, upper).
    noise = F.uniform_(F.empty(tuple(self.shape), dtype=self.dtype, device=self.device),
                       lower, upper, generator=generator)
    return P.where(P.le(self, 0), P.mul(self, noise), self)


@_define(glu)
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


@_define(prelu)
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
    # One slope per channel (dim 1): weight becomes [C, 1, ..., 1], or a scalar for ndim < 2.
    if self.ndim >= 2:
        weight = S.reshape(weight, (n,) + (1,) * (self.ndim - 2))
    else:
        weight = S.reshape(weight, ())
    return P.where(P.gt(self, 0), self, P.mul(weight, self))


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
