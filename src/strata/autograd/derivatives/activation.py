"""Derivatives of ``ops/activation.py``: the softmaxes, and the activations through PyTorch's
backward ops (``elu_backward``, ...), which fix the gradient at the boundaries, inf and NaN.

In-place activations that PyTorch differentiates from their result (``elu_``, ``celu_``,
``leaky_relu_``) have rows of their own that save the result, so no copy of ``self`` is kept;
``threshold_`` has its own node name; the other in-place ones use their out-of-place row
(``self`` as it was before the write), as in PyTorch.
"""

import math
import struct

from ...core.shape import wrap_dim
from ...ops import activation as A
from ...ops import pointwise as P
from ...ops import pointwise_composites as PC
from ...ops import reductions as RD
from ...ops import shape as S
from . import derivative, non_differentiable, zeros, zeros_for


@derivative(A._softmax, "SoftmaxBackward0", save=("result",))
def _softmax(ctx, grad):
    """(g - sum(g * y)) * y along the dim: ``_softmax_backward_data``, as in PyTorch (one fused
    row kernel on the CPU), differentiable again through its own row below."""
    return A._softmax_backward_data(grad, ctx.result, ctx.dim, ctx.result.dtype)


@derivative(A._log_softmax, "LogSoftmaxBackward0", save=("result",))
def _log_softmax(ctx, grad):
    """g - exp(y) * sum(g) along the dim: ``_log_softmax_backward_data``, as in PyTorch."""
    return A._log_softmax_backward_data(grad, ctx.result, ctx.dim, ctx.result.dtype)


@derivative(A._softmax_backward_data, "SoftmaxBackwardDataBackward0",
            save=("grad_output", "output"))
def _softmax_backward_data(ctx, grad):
    """derivatives.yaml: d/dg = _softmax_backward_data(grad, y); d/dy is FunctionsManual.cpp's
    softmax_double_backward: g * grad - sum(y * g) * grad - g * sum(y * grad)."""
    g, y = ctx.grad_output, ctx.output
    d = wrap_dim(ctx.dim, y.ndim)
    grad_output = (A._softmax_backward_data(grad, y, ctx.dim, ctx.input_dtype)
                   if ctx.needs[0] else None)
    grad_y = None
    if ctx.needs[1]:
        grad_y = P.sub(P.sub(P.mul(g, grad), P.mul(RD.sum(P.mul(y, g), [d], True), grad)),
                       P.mul(g, RD.sum(P.mul(y, grad), [d], True)))
    return grad_output, grad_y


@derivative(A._log_softmax_backward_data, "LogSoftmaxBackwardDataBackward0",
            save=("grad_output", "output"))
def _log_softmax_backward_data(ctx, grad):
    """derivatives.yaml: d/dg = grad - sum(grad * exp(y)); d/dy = -sum(g) * exp(y) * grad."""
    g, y = ctx.grad_output, ctx.output
    d = wrap_dim(ctx.dim, y.ndim)
    exp_y = P.exp(y)
    return (P.sub(grad, RD.sum(P.mul(grad, exp_y), [d], True)) if ctx.needs[0] else None,
            P.mul(P.mul(P.neg(RD.sum(g, [d], True)), exp_y), grad) if ctx.needs[1] else None)


# A fully masked row has result 0, so its gradient is 0 (not the nan of softmax of all -inf).
derivative(A._safe_softmax, "SafeSoftmaxBackward0", save=("result",))(_softmax)


@derivative(A.elu, "EluBackward0", save=("self",))
def _elu(ctx, grad):
    return A.elu_backward(grad, ctx.alpha, ctx.scale, ctx.input_scale, False, ctx.self)


@derivative(A.elu_, "EluBackward1", save=("result",))
def _elu_(ctx, grad):
    return A.elu_backward(grad, ctx.alpha, ctx.scale, ctx.input_scale, True, ctx.result)


def _float32(value):
    return struct.unpack("f", struct.pack("f", value))[0]


@derivative(A.celu, "CeluBackward0", save=("self",))
def _celu(ctx, grad):
    # PyTorch's formula takes 1 / alpha of alpha rounded to float32 (its forward does not)
    return A.elu_backward(grad, ctx.alpha, 1, 1.0 / _float32(ctx.alpha), False, ctx.self)


@derivative(A.celu_, "CeluBackward1", save=("result",))
def _celu_(ctx, grad):
    return A.elu_backward(grad, ctx.alpha, 1, 1.0 / _float32(ctx.alpha), True, ctx.result)


@derivative(A.hardtanh, "HardtanhBackward0", save=("self",))
def _hardtanh(ctx, grad):
    return A.hardtanh_backward(grad, ctx.self, ctx.min_val, ctx.max_val)


@derivative(A.hardsigmoid, "HardsigmoidBackward0", save=("self",))
def _hardsigmoid(ctx, grad):
    return A.hardsigmoid_backward(grad, ctx.self)


@derivative(A.hardswish, "HardswishBackward0", save=("self",))
def _hardswish(ctx, grad):
    return A.hardswish_backward(grad, ctx.self)


@derivative(A.mish, "MishBackward0", save=("self",))
def _mish(ctx, grad):
    return A.mish_backward(grad, ctx.self)


@derivative(A.leaky_relu, "LeakyReluBackward0", save=("self",))
def _leaky_relu(ctx, grad):
    return A.leaky_relu_backward(grad, ctx.self, ctx.negative_slope, False)


@derivative(A.leaky_relu_, "LeakyReluBackward1", save=("result",))
def _leaky_relu_(ctx, grad):
    return A.leaky_relu_backward(grad, ctx.result, ctx.negative_slope, True)


@derivative(A.threshold, "ThresholdBackward0", save=("self",))
def _threshold(ctx, grad):
    return A.threshold_backward(grad, ctx.self, ctx.threshold)


@derivative(A.threshold_, "ThresholdBackward1", save=("self",))
def _threshold_(ctx, grad):
    return A.threshold_backward(grad, ctx.self, ctx.threshold)


@derivative(A.softplus, "SoftplusBackward0", save=("self",))
def _softplus(ctx, grad):
    return A.softplus_backward(grad, ctx.self, ctx.beta, ctx.threshold)


@derivative(A.softshrink, "SoftshrinkBackward0", save=("self",))
def _softshrink(ctx, grad):
    return A.softshrink_backward(grad, ctx.self, ctx.lambd)


@derivative(A.hardshrink, "HardshrinkBackward0", save=("self",))
def _hardshrink(ctx, grad):
    return A.hardshrink_backward(grad, ctx.self, ctx.lambd)


non_differentiable(A.one_hot)


# --- the backward ops of tanh, sigmoid, gelu, silu and softplus (derivatives.yaml;
# FunctionsManual.cpp's gelu_double_backward), so gradients of gradients flow through them

@derivative(A.tanh_backward, "TanhBackwardBackward0", save=("output", "grad_output"))
def _tanh_backward(ctx, grad):
    return (A.tanh_backward(grad, ctx.output) if ctx.needs[0] else None,
            P.mul(grad, P.mul(P.mul(ctx.output, -2), ctx.grad_output)) if ctx.needs[1] else None)


@derivative(A.sigmoid_backward, "SigmoidBackwardBackward0", save=("output", "grad_output"))
def _sigmoid_backward(ctx, grad):
    slope = P.add(P.mul(ctx.output, -2), 1) if ctx.needs[1] else None
    return (A.sigmoid_backward(grad, ctx.output) if ctx.needs[0] else None,
            P.mul(P.mul(grad, ctx.grad_output), slope) if ctx.needs[1] else None)


@derivative(A.gelu_backward, "GeluBackwardBackward0", save=("self", "grad_output"))
def _gelu_backward(ctx, grad):
    return (A.gelu_backward(grad, ctx.self, approximate=ctx.approximate) if ctx.needs[0]
            else None,
            P.mul(P.mul(grad, ctx.grad_output), _gelu_second_derivative(ctx.self, ctx.approximate))
            if ctx.needs[1] else None)


@derivative(A.silu_backward, "SiluBackwardBackward0", save=("self", "grad_output"))
def _silu_backward(ctx, grad):
    """silu'(x) = s * (1 + x * (1 - s)), s = sigmoid(x); silu''(x) = s * (1 - s) * (2 + x * (1 -
    2 * s))."""
    if not ctx.needs[1]:
        return A.silu_backward(grad, ctx.self) if ctx.needs[0] else None, None
    x = ctx.self
    s = P.sigmoid(x)
    curvature = P.mul(P.mul(s, P.add(P.neg(s), 1)), P.add(P.mul(x, P.add(P.mul(s, -2), 1)), 2))
    return (A.silu_backward(grad, x) if ctx.needs[0] else None,
            P.mul(P.mul(grad, ctx.grad_output), curvature))


@derivative(A.softplus_backward, "SoftplusBackwardBackward0", save=("self", "grad_output"))
def _softplus_backward(ctx, grad):
    """FunctionsManual.cpp's softplus_double_backward for self: sigmoid_backward(g * go,
    sigmoid(x * beta)) * beta where x * beta < threshold, else 0."""
    beta, threshold = ctx.beta, ctx.threshold
    grad_self = None
    if ctx.needs[1]:
        scaled = P.mul(ctx.self, beta)
        curvature = A.sigmoid_backward(P.mul(grad, ctx.grad_output), P.sigmoid(scaled))
        grad_self = P.mul(P.mul(curvature, P.lt(scaled, threshold)), beta)
    return (A.softplus_backward(grad, ctx.self, beta, threshold) if ctx.needs[0] else None,
            grad_self)


# --- the composite backward ops of the piecewise activations (CompositeExplicitAutograd in
# backends/composite.py, rows of derivatives.yaml): linear in grad_output, flat in self
def _flat_in_self(op, name, backward):
    @derivative(op, name, save=("self",))
    def formula(ctx, grad):
        return (backward(ctx, grad) if ctx.needs[0] else None,
                zeros_for(ctx, "self", grad) if ctx.needs[1] else None)


_flat_in_self(A.threshold_backward, "ThresholdBackwardBackward0",
              lambda c, g: A.threshold_backward(g, c.self, c.threshold))
_flat_in_self(A.hardtanh_backward, "HardtanhBackwardBackward0",
              lambda c, g: A.hardtanh_backward(g, c.self, c.min_val, c.max_val))
_flat_in_self(A.leaky_relu_backward, "LeakyReluBackwardBackward0",
              lambda c, g: A.leaky_relu_backward(g, c.self, c.negative_slope, False))
_flat_in_self(A.softshrink_backward, "SoftshrinkBackwardBackward0",
              lambda c, g: A.softshrink_backward(g, c.self, c.lambd))
_flat_in_self(A.hardshrink_backward, "HardshrinkBackwardBackward0",
              lambda c, g: A.hardshrink_backward(g, c.self, c.lambd))


@derivative(A.hardswish_backward, "HardswishBackwardBackward0", save=("self", "grad_output"))
def _hardswish_backward(ctx, grad):
    x = ctx.self
    inside = P.logical_and(P.gt(x, -3.0), P.lt(x, 3.0)) if ctx.needs[1] else None
    return (A.hardswish_backward(grad, x) if ctx.needs[0] else None,
            P.where(inside, P.div(P.mul(grad, ctx.grad_output), 3.0), 0.0) if ctx.needs[1]
            else None)


@derivative(A.elu_backward, "EluBackwardBackward0", save=("self_or_result", "grad_output"))
def _elu_backward(ctx, grad):
    """FunctionsManual.cpp's elu_double_backward for self_or_result."""
    x, alpha, scale, input_scale = ctx.self_or_result, ctx.alpha, ctx.scale, ctx.input_scale
    grad_x = None
    if ctx.needs[1]:
        scaled = P.mul(P.mul(grad, ctx.grad_output), input_scale)
        if not ctx.is_result:
            scaled = A.elu_backward(scaled, alpha, scale, input_scale, False, x)
        grad_x = P.mul(scaled, P.lt(x, 0))
    return (A.elu_backward(grad, alpha, scale, input_scale, ctx.is_result, x) if ctx.needs[0]
            else None, grad_x)


# log_sigmoid, _prelu_kernel and glu are composites with rows of their own
# (CompositeExplicitAutograd)
@derivative(A.log_sigmoid, "LogSigmoidBackward0", save=("self",))
def _log_sigmoid(ctx, grad):
    return P.mul(grad, P.sigmoid(P.neg(ctx.self)))


@derivative(A._prelu_kernel, "PreluKernelBackward0", save=("self", "weight"))
def _prelu_kernel(ctx, grad):
    """``_prelu_kernel_backward``, an op with its own row (below): x > 0 passes grad to x;
    elsewhere w * grad to x and x * grad to w (summed back to w's shape by the engine)."""
    return A._prelu_kernel_backward(grad, ctx.self, ctx.weight)


@derivative(A._prelu_kernel_backward, "PreluKernelBackwardBackward0",
            save=("grad_output", "self", "weight"))
def _prelu_kernel_backward(ctx, gg_self, gg_weight):
    """derivatives.yaml's row of ``_prelu_kernel_backward``. Its ``self`` gets zeros where no
    gradient of the weight's gradient comes back, not nothing, so a gradient penalty through
    PReLU reaches the layers before it (their biases get zeros, as in PyTorch)."""
    x, g, w = ctx.self, ctx.grad_output, ctx.weight
    nonneg = P.ge(x, 0)
    zero = zeros(x._shape, x) if gg_self is None or gg_weight is None else None
    grad_g = None
    if ctx.needs[0]:
        if gg_self is None:
            grad_g = P.where(nonneg, 0.0, P.mul(gg_weight, x))
        elif gg_weight is None:
            grad_g = P.where(nonneg, gg_self, P.mul(gg_self, w))
        else:
            grad_g = P.where(nonneg, gg_self, P.add(P.mul(gg_self, w), P.mul(gg_weight, x)))
    grad_x = (zero if gg_weight is None else P.where(nonneg, 0.0, P.mul(g, gg_weight))) \
        if ctx.needs[1] else None
    grad_w = (zero if gg_self is None else P.where(nonneg, 0.0, P.mul(g, gg_self))) \
        if ctx.needs[2] else None
    return grad_g, grad_x, grad_w


@derivative(A.glu, "GluBackward0", save=("self",))
def _glu(ctx, grad):
    """glu(x) = a * sigmoid(b) for the halves a, b of x along dim."""
    x = ctx.self
    d = wrap_dim(ctx.dim, x.ndim)
    half = x._shape[d] // 2
    a, b = S.narrow(x, d, 0, half), S.narrow(x, d, half, half)
    gate = P.sigmoid(b)
    grad_a = P.mul(grad, gate)
    grad_b = P.mul(P.mul(grad_a, a), PC.rsub(gate, 1))
    return S.cat([grad_a, grad_b], d)


def _gelu_second_derivative(x, approximate):
    if approximate == "tanh":
        beta, kappa = math.sqrt(2.0 / math.pi), 0.044715
        inner = P.mul(P.add(x, P.mul(P.pow(x, 3), kappa)), beta)
        tanh_inner, sech_inner = P.tanh(inner), P.reciprocal(P.cosh(inner))
        f, g = P.mul(x, 0.5), P.sub(1, P.mul(tanh_inner, tanh_inner))
        h = P.mul(P.add(P.mul(P.mul(x, x), 3 * kappa), 1), beta)
        f_prime_gh = P.mul(P.mul(g, h), 0.5)
        g_prime = P.mul(P.mul(P.mul(sech_inner, 2), P.neg(P.mul(sech_inner, tanh_inner))), h)
        g_prime_fh = P.mul(P.mul(f, h), g_prime)
        h_prime_fg = P.mul(P.mul(f, g), P.mul(x, 6 * kappa * beta))
        return P.add(P.add(P.mul(f_prime_gh, 2), g_prime_fh), h_prime_fg)
    x_sq = P.mul(x, x)
    pdf = P.mul(P.exp(P.mul(x_sq, -0.5)), 1 / math.sqrt(2 * math.pi))
    return P.sub(P.mul(pdf, 2), P.mul(x_sq, pdf))
