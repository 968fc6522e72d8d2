"""Normalization layers: layer, batch, group, instance and RMS norm.

``native_layer_norm`` and ``native_batch_norm`` are primitives that also return the statistics
the backward needs (mean and 1/std), as PyTorch's do; ``group_norm`` is a layer norm over groups,
and ``instance_norm`` a batch norm over a (1, N*C, ...) view, as in PyTorch's ``Normalization.cpp``.
``native_batch_norm`` in training mode updates ``running_mean``/``running_var`` in place with
``(1 - momentum) * running + momentum * batch_stat`` (the unbiased variance for running_var).
"""

import math

from ..core import dtype as D
from . import pointwise as P
from . import shape as S
from .factory import _to_copy, copy_
from .nn import fmt, not_implemented
from .op import TensorSpec, defop, register_decomposition
from .reductions import mean as reduce_mean
from .reductions import sum as reduce_sum


def _layer_norm_meta(input, normalized_shape, weight, bias, eps):
    ns = tuple(normalized_shape)
    if not ns:
        raise RuntimeError(f"Expected normalized_shape to be at least 1-dimensional, i.e., "
                           f"containing at least one element, but got normalized_shape = "
                           f"{fmt(ns)}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and tuple(t.shape) != ns:
            raise RuntimeError(f"Expected {name} to be of same shape as normalized_shape, but got "
                               f"{name} of shape {fmt(t.shape)} and normalized_shape = {fmt(ns)}")
    if input.ndim < len(ns) or tuple(input.shape[input.ndim - len(ns):]) != ns:
        raise RuntimeError(f"Given normalized_shape={fmt(ns)}, expected input with shape "
                           f"[*, {', '.join(map(str, ns))}], but got input of size"
                           f"{fmt(input.shape)}")
    if input.dtype.category != D.FLOATING:
        not_implemented("LayerNormKernelImpl", input.dtype)
    axis = input.ndim - len(ns)
    stats = TensorSpec(tuple(input.shape[:axis]) + (1,) * len(ns), input.dtype)
    return TensorSpec(tuple(input.shape), input.dtype), stats, stats


def batch_norm_stats_dtype(input, params):
    """Half inputs may use float32 parameters (and get float32 statistics); otherwise every
    tensor shares the input's dtype."""
    params = [p for p in params if p is not None]
    mixed = input.dtype in (D.float16, D.bfloat16) and params and \
        all(p.dtype is D.float32 for p in params)
    if not mixed and any(p.dtype is not input.dtype for p in params):
        raise RuntimeError("mixed dtype (CPU): all inputs must share same datatype.")
    return D.float32 if mixed else input.dtype


def _batch_norm_meta(input, weight, bias, running_mean, running_var, training, momentum, eps):
    if input.ndim < 2:
        raise RuntimeError(f"Expected 2D or more input (got {input.ndim}D input)")
    c = input.shape[1]
    for name, t in (("weight", weight), ("bias", bias), ("running_mean", running_mean),
                    ("running_var", running_var)):
        if t is not None and t.numel() != c:
            raise RuntimeError(f"{name} should contain {c} elements not {t.numel()}")
    if not training:
        for name, t in (("running_mean", running_mean), ("running_var", running_var)):
            if t is None:
                raise RuntimeError(f"{name} must be defined in evaluation mode")
    if input.dtype.category != D.FLOATING:
        not_implemented("batch_norm", input.dtype)
    stats_dtype = batch_norm_stats_dtype(input, (weight, bias, running_mean, running_var))
    stats = TensorSpec((c,) if training else (0,), stats_dtype)
    return TensorSpec(tuple(input.shape), input.dtype), stats, stats


native_layer_norm = defop("native_layer_norm(Tensor input, SymInt[] normalized_shape, "
                          "Tensor? weight, Tensor? bias, float eps) -> (Tensor, Tensor, Tensor)",
                          _layer_norm_meta, function=True)
native_layer_norm_backward = defop(
    "native_layer_norm_backward(Tensor grad_out, Tensor input, SymInt[] normalized_shape, "
    "Tensor mean, Tensor rstd, Tensor? weight, Tensor? bias, bool[3] output_mask) "
    "-> (Tensor, Tensor, Tensor)")
native_batch_norm = defop("native_batch_norm(Tensor input, Tensor? weight, Tensor? bias, "
                          "Tensor? running_mean, Tensor? running_var, bool training, "
                          "float momentum, float eps) -> (Tensor, Tensor, Tensor)",
                          _batch_norm_meta, function=True)

# --- composites -----------------------------------------------------------------------------------
layer_norm = defop("layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight=None, "
                   "Tensor? bias=None, float eps=1e-05, bool cudnn_enable=True) -> Tensor",
                   function=True)
batch_norm = defop("batch_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, "
                   "Tensor? running_var, bool training, float momentum, float eps, "
                   "bool cudnn_enabled) -> Tensor", function=True)
group_norm = defop("group_norm(Tensor input, int num_groups, Tensor? weight=None, "
                   "Tensor? bias=None, float eps=1e-05, bool cudnn_enabled=True) -> Tensor",
                   function=True)
instance_norm = defop("instance_norm(Tensor input, Tensor? weight, Tensor? bias, "
                      "Tensor? running_mean, Tensor? running_var, bool use_input_stats, "
                      "float momentum, float eps, bool cudnn_enabled) -> Tensor", function=True)
rms_norm = defop("rms_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight=None, "
                 "float? eps=None) -> Tensor", function=True)


@register_decomposition(layer_norm)
def _layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5, cudnn_enable=True):
    return native_layer_norm(input, normalized_shape, weight, bias, eps)[0]


def normalized_backward(g_hat, x_hat, rstd, dims):
    """d/dx of (x - mean) * rstd over ``dims``, given the gradient g_hat of the normalized
    value (layer and batch norm share it)."""
    mean_g = reduce_mean(g_hat, dims, True)
    mean_gx = reduce_mean(P.mul(g_hat, x_hat), dims, True)
    return P.mul(rstd, P.sub(P.sub(g_hat, mean_g), P.mul(x_hat, mean_gx)))


@register_decomposition(native_layer_norm_backward)
def layer_norm_backward_composite(grad_out, input, normalized_shape, mean, rstd, weight, bias,
                                  output_mask):
    """(grad_input, grad_weight, grad_bias), None where ``output_mask`` says not needed. A
    device with a fused kernel (opencl) runs that instead; the op has a derivative row of its
    own (autograd/derivatives/nn.py), so this runs below autograd on every device."""
    axis = input.ndim - len(normalized_shape)
    x_hat = P.mul(P.sub(input, mean), rstd)
    batch_dims = list(range(axis))
    g_in = g_w = g_b = None
    if output_mask[0]:
        g_hat = P.mul(grad_out, weight) if weight is not None else grad_out
        g_in = normalized_backward(g_hat, x_hat, rstd, list(range(axis, input.ndim)))
    if output_mask[1]:
        g_w = P.mul(grad_out, x_hat)
        g_w = reduce_sum(g_w, batch_dims, False) if batch_dims else g_w
    if output_mask[2]:
        g_b = reduce_sum(grad_out, batch_dims, False) if batch_dims else grad_out
    return g_in, g_w, g_b


@register_decomposition(batch_norm)
def _batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps,
                cudnn_enabled):
    return native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum,
                             eps)[0]


@register_decomposition(group_norm)
def _group_norm(input, num_groups, weight=None, bias=None, eps=1e-5, cudnn_enabled=True):
    """A layer norm over each (sample, group), then the per-channel affine."""
    if input.ndim < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received "
                           f"{input.ndim}")
    n, c = input.shape[:2]
    if num_groups <= 0 or c % num_groups:
        raise RuntimeError(f"Expected number of channels in input to be divisible by num_groups, "
                           f"but got input of shape {fmt(input.shape)} and num_groups={num_groups}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and (t.ndim != 1 or t.numel() != c):
            # PyTorch prints the weight's shape in both messages ([0] when there is none).
            shown = fmt(weight.shape) if weight is not None else "[0]"
            raise RuntimeError(f"Expected {name} to be a vector of size equal to the number of "
                               f"channels in input, but got {name} of shape {shown} and "
                               f"input of shape {fmt(input.shape)}")
    group_size = (c // num_groups) * math.prod(input.shape[2:])
    # a half input is normalized and scaled in float32 and rounded once, to its own dtype even
    # with float32 weights (ATen's CPU kernel and its mixed-type path)
    half = input.dtype in (D.float16, D.bfloat16)
    x = _to_copy(input, dtype=D.float32) if half else input
    grouped = S.reshape(x, (n, num_groups, group_size))
    out = S.reshape(native_layer_norm(grouped, [group_size], None, None, eps)[0],
                    tuple(input.shape))
    per_channel = (c,) + (1,) * (input.ndim - 2)
    if weight is not None:
        out = P.mul(out, S.reshape(weight, per_channel))
    if bias is not None:
        out = P.add(out, S.reshape(bias, per_channel))
    return _to_copy(out, dtype=input.dtype) if half else out


@register_decomposition(instance_norm)
def _instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum,
                   eps, cudnn_enabled):
    """Batch norm of the (1, N*C, ...) view; running stats (if any) get the batch mean of the
    per-instance updates, as PyTorch does."""
    n, c = input.shape[:2]

    def repeat(t):
        return None if t is None else S.repeat(t, [n])

    rm, rv = repeat(running_mean), repeat(running_var)
    flat = S.reshape(input, (1, n * c) + tuple(input.shape[2:]))
    out = native_batch_norm(flat, repeat(weight), repeat(bias), rm, rv, use_input_stats,
                            momentum, eps)[0]
    for stat, updated in ((running_mean, rm), (running_var, rv)):
        if stat is not None:
            copy_(stat, P.div(reduce_sum(S.reshape(updated, (n, c)), [0], False), n))
    return S.reshape(out, tuple(input.shape))



@register_decomposition(rms_norm)
def _rms_norm(input, normalized_shape, weight=None, eps=None):
    """``x / sqrt(mean(x**2 over normalized_shape) + eps)`` (eps: the machine epsilon of the
    dtype it is computed in), then ``* weight``; half inputs are computed in float32 and rounded
    once, as ATen's composite does."""
    ns = tuple(normalized_shape)
    if not ns:
        raise RuntimeError(f"Expected normalized_shape to be at least 1-dimensional, i.e., "
                           f"containing at least one element, but got normalized_shape = "
                           f"{fmt(ns)}")
    if weight is not None and tuple(weight.shape) != ns:
        raise RuntimeError(f"Expected weight to be of same shape as normalized_shape, but got "
                           f"weight of shape {fmt(weight.shape)} and normalized_shape = {fmt(ns)}")
    if input.ndim < len(ns) or tuple(input.shape[input.ndim - len(ns):]) != ns:
        raise RuntimeError(f"Given normalized_shape={fmt(ns)}, expected input with shape "
                           f"[*{', '.join(map(str, ns))}], but got input of size"
                           f"{fmt(input.shape)}")
    if input.dtype.category != D.FLOATING:
        not_implemented("rms_norm", input.dtype)
    half = input.dtype in (D.float16, D.bfloat16)
    if eps is None:     # the computing dtype's epsilon, float32's for half inputs (ATen's
        eps = D.finfo(D.float32 if half else input.dtype).eps   # rms_norm_composite)
    x = _to_copy(input, dtype=D.float32) if half else input
    dims = list(range(-len(ns), 0))
    out = P.mul(x, P.rsqrt(P.add(reduce_mean(P.mul(x, x), dims, True), eps)))
    if weight is not None:
        out = P.mul(out, weight)
    return _to_copy(out, dtype=input.dtype) if out.dtype is not input.dtype else out
