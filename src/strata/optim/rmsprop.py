"""RMSprop (Hinton's lecture 6e), with PyTorch's formulas (``torch/optim/rmsprop.py``).

    g += λθ;  v = α·v + (1−α)·g²;  centered: ḡ = lerp(ḡ, g, 1−α), ṽ = v − ḡ²
    μ > 0:  b = μ·b + g / (sqrt(ṽ) + eps);  θ −= γ·b      else:  θ −= γ·g / (sqrt(ṽ) + eps)

eps is added after the square root (TensorFlow adds it inside).
"""

from .._tensor import Tensor
from ..ops import pointwise as P
from ._multi_tensor import flatten, get_bucket, plan
from .optimizer import (
    Optimizer, _check_not_fused_or_capturable, _evaluate_closure, _new_step, _step_from_number,
    _to_scalar, _use_grad_for_differentiable,
)


class RMSprop(Optimizer):
    """``RMSprop(params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0,
    centered=False)``."""

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0,
                 centered=False, capturable=False, foreach=None, maximize=False,
                 differentiable=False):
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= momentum:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= alpha:
            raise ValueError(f"Invalid alpha value: {alpha}")
        _check_not_fused_or_capturable("RMSprop", capturable=capturable)
        defaults = {"lr": lr, "momentum": momentum, "alpha": alpha, "eps": eps,
                    "centered": centered, "weight_decay": weight_decay, "capturable": capturable,
                    "foreach": foreach, "maximize": maximize, "differentiable": differentiable}
        super().__init__(params, defaults)
        self._buckets = {}

    def __setstate__(self, state):
        super().__setstate__(state)
        self._buckets = {}
        for group in self.param_groups:
            for key, value in (("momentum", 0), ("centered", False), ("foreach", None),
                               ("maximize", False), ("differentiable", False),
                               ("capturable", False)):
                group.setdefault(key, value)
            for p in group["params"]:
                s = self.state.get(p)
                if s and "step" in s and not isinstance(s["step"], Tensor):
                    s["step"] = _step_from_number(s["step"])

    def _init_group(self, group, params, grads, states):
        for p in group["params"]:
            grad = p.grad
            if grad is None:
                continue
            params.append(p)
            grads.append(grad)
            state = self.state[p]
            if len(state) == 0:
                state["step"] = _new_step()
                state["square_avg"] = p.new_zeros(p.shape)
                if group["momentum"] > 0:
                    state["momentum_buffer"] = p.new_zeros(p.shape)
                if group["centered"]:
                    state["grad_avg"] = p.new_zeros(p.shape)
            states.append(state)

    @_use_grad_for_differentiable
    def step(self, closure=None):
        """One update of every parameter with a gradient; returns the closure's loss."""
        loss = _evaluate_closure(closure)
        for index, group in enumerate(self.param_groups):
            params, grads, states = [], [], []
            self._init_group(group, params, grads, states)
            if not params:
                continue
            if group["foreach"] and not group["differentiable"]:
                _multi_tensor_rmsprop(self._buckets, index, params, grads, states, group)
            else:
                _single_tensor_rmsprop(params, grads, states, group)
        return loss


def _state_names(group):
    return (("step", "square_avg") + (("momentum_buffer",) if group["momentum"] > 0 else ())
            + (("grad_avg",) if group["centered"] else ()))


def _rmsprop_update(grad, param, square_avg, grad_avg, buf, group):
    """Update the averages in place and return ``(update, alpha)``: ``θ += alpha · update``.

    Shared by the for-loop and the flat multi-tensor path, so both give identical numbers."""
    lr, alpha = _to_scalar(group["lr"]), group["alpha"]
    if group["maximize"]:
        grad = P.neg(grad)
    if group["weight_decay"] != 0:
        grad = P.add(grad, param, alpha=group["weight_decay"])
    square_avg.mul_(alpha).add_(P.mul(grad, grad), alpha=1 - alpha)
    if grad_avg is not None:
        grad_avg.add_(P.sub(grad, grad_avg), alpha=1 - alpha)   # lerp_(grad, 1 − α)
        avg = P.add(P.sqrt(P.sub(square_avg, P.mul(grad_avg, grad_avg))), group["eps"])
    else:
        avg = P.add(P.sqrt(square_avg), group["eps"])
    if buf is not None:
        buf.mul_(group["momentum"]).add_(P.div(grad, avg))
        return buf, -lr
    # PyTorch's addcdiv(value=-lr): (value · g) / avg, then added to θ.
    return P.div(P.mul(grad, -lr), avg), 1


def _single_tensor_rmsprop(params, grads, states, group):
    for param, grad, state in zip(params, grads, states):
        state["step"].add_(1)
        update, alpha = _rmsprop_update(grad, param, state["square_avg"], state.get("grad_avg"),
                                        state.get("momentum_buffer"), group)
        param.add_(update, alpha=alpha)


def _multi_tensor_rmsprop(cache, index, params, grads, states, group):
    buckets, large = plan(params, grads, states)
    if large[0]:
        _single_tensor_rmsprop(*large, group)
    for key, (b_params, b_grads, b_states) in buckets.items():
        bucket = get_bucket(cache, (index,) + key, b_params, b_states, _state_names(group))
        flats = bucket.flats
        flats["step"].add_(1)
        flat_params = bucket.flat_params() if group["weight_decay"] != 0 else None
        update, alpha = _rmsprop_update(flatten(b_grads), flat_params, flats["square_avg"],
                                        flats.get("grad_avg"), flats.get("momentum_buffer"),
                                        group)
        bucket.add_to_params(update, alpha=alpha)
