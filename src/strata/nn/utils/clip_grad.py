"""Gradient clipping (``torch/nn/utils/clip_grad.py``)."""

import math

from ...autograd.grad_mode import no_grad
from ..._tensor import Tensor


def _grads(parameters):
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    return [p.grad for p in parameters if p.grad is not None]


def get_total_norm(tensors, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    from ...creation import tensor as make
    from ...ops.shape import stack
    if isinstance(tensors, Tensor):
        tensors = [tensors]
    tensors = list(tensors)
    if not tensors:
        return make(0.0)
    norm_type = float(norm_type)
    # the norm of the per-tensor norms, as PyTorch computes it
    total = stack([t.norm(norm_type) for t in tensors], 0).norm(norm_type)
    if error_if_nonfinite and not math.isfinite(total.item()):
        raise RuntimeError(f"The total norm of order {norm_type} for gradients from "
                           "`parameters` is non-finite, so it cannot be clipped. To disable this "
                           "error and scale the gradients by the non-finite norm anyway, set "
                           "`error_if_nonfinite=False`")
    return total


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False,
                    foreach=None):
    """Scale all gradients together so their total norm is at most ``max_norm``; returns the
    total norm before clipping."""
    grads = _grads(parameters)
    from ...creation import tensor as make
    if not grads:
        return make(0.0)
    with no_grad():
        total = get_total_norm(grads, norm_type, error_if_nonfinite)
        clip_coef = (float(max_norm) / (total + 1e-6)).clamp(max=1.0)
        for g in grads:
            g.mul_(clip_coef.to(g.dtype))
    return total


def clip_grad_value_(parameters, clip_value, foreach=None):
    clip_value = float(clip_value)
    with no_grad():
        for g in _grads(parameters):
            g.clamp_(min=-clip_value, max=clip_value)
