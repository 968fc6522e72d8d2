"""Stochastic gradient descent with momentum, as PyTorch's ``torch/optim/sgd.py``.

    g += λθ;  b = g (first step) or b = μ·b + (1−τ)·g;  g = g + μ·b (nesterov) or g = b
    θ −= γ·g

The learning rate multiplies the buffer at the update (not inside it, unlike Sutskever et al.).
"""

from ..ops import pointwise as P
from ._multi_tensor import flatten, get_bucket, plan
from .optimizer import (
    Optimizer, _check_not_fused_or_capturable, _evaluate_closure, _to_scalar,
    _use_grad_for_differentiable,
)


class SGD(Optimizer):
    """``SGD(params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False)``."""

    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0,
                 nesterov=False, *, maximize=False, foreach=None, differentiable=False,
                 fused=None):
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = {"lr": lr, "momentum": momentum, "dampening": dampening,
                    "weight_decay": weight_decay, "nesterov": nesterov, "maximize": maximize,
                    "foreach": foreach, "differentiable": differentiable, "fused": fused}
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        _check_not_fused_or_capturable("SGD", fused)
        super().__init__(params, defaults)
        self._buckets = {}

    def __setstate__(self, state):
        super().__setstate__(state)
        self._buckets = {}
        for group in self.param_groups:
            for key, value in (("nesterov", False), ("maximize", False), ("foreach", None),
                               ("differentiable", False), ("fused", False)):
                group.setdefault(key, value)

    @_use_grad_for_differentiable
    def step(self, closure=None):
        """One update of every parameter with a gradient; returns the closure's loss."""
        loss = _evaluate_closure(closure)
        for index, group in enumerate(self.param_groups):
            params, grads, states = [], [], []
            for p in group["params"]:
                if p.grad is not None:
                    params.append(p)
                    grads.append(p.grad)
                    if group["momentum"] != 0:
                        states.append(self.state[p])
            if not params:
                continue
            if group["foreach"] and not group["differentiable"]:
                _multi_tensor_sgd(self._buckets, index, params, grads, states, group)
            else:
                _single_tensor_sgd(params, grads, states, group)
        return loss


def _direction(grad, param, buf, group):
    """The descent direction from a (possibly flat) gradient; ``buf`` is updated in place.

    Returns the direction and the new buffer (the first step's buffer is a copy of ``g``)."""
    if group["maximize"]:
        grad = P.neg(grad)
    weight_decay = group["weight_decay"]
    if weight_decay != 0:
        grad = P.add(grad, param, alpha=weight_decay)
    momentum = group["momentum"]
    if momentum != 0:
        if buf is None:
            buf = grad.clone()
        else:
            buf.mul_(momentum).add_(grad, alpha=1 - group["dampening"])
        grad = P.add(grad, buf, alpha=momentum) if group["nesterov"] else buf
    return grad, buf


def _single_tensor_sgd(params, grads, states, group):
    lr = _to_scalar(group["lr"])
    with_momentum = group["momentum"] != 0
    for i, (param, grad) in enumerate(zip(params, grads)):
        state = states[i] if with_momentum else None
        direction, buf = _direction(grad, param, state.get("momentum_buffer")
                                    if with_momentum else None, group)
        if with_momentum:
            state["momentum_buffer"] = buf
        param.add_(direction, alpha=-lr)


def _multi_tensor_sgd(cache, index, params, grads, states, group):
    lr = _to_scalar(group["lr"])
    if group["momentum"] == 0 and group["weight_decay"] == 0 and not group["maximize"]:
        # Plain SGD is one op per parameter already; flattening would only add copies.
        for param, grad in zip(params, grads):
            param.add_(grad, alpha=-lr)
        return
    buckets, large = plan(params, grads, states)
    if large[0]:
        _single_tensor_sgd(*large, group)
    for key, (b_params, b_grads, b_states) in buckets.items():
        has_buf = [s.get("momentum_buffer") is not None for s in b_states]
        if any(has_buf) and not all(has_buf):
            # Some buffers start this step and some continue: the for-loop does exactly that.
            _single_tensor_sgd(b_params, b_grads, b_states, group)
            continue
        names = ("momentum_buffer",) if all(has_buf) and b_states else ()
        bucket = get_bucket(cache, (index,) + key, b_params, b_states, names)
        flat_params = bucket.flat_params() if group["weight_decay"] != 0 else None
        direction, buf = _direction(flatten(b_grads), flat_params,
                                    bucket.flats.get("momentum_buffer"), group)
        if b_states and not names:
            # First step: the new flat buffer becomes every parameter's momentum_buffer.
            bucket.attach("momentum_buffer", buf, b_states)
        bucket.add_to_params(direction, alpha=-lr)
