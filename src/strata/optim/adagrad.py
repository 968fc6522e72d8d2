"""Adagrad (Duchi et al.), with PyTorch's formulas (``torch/optim/adagrad.py``).

    t += 1;  g += λθ;  γ_t = γ / (1 + (t−1)·η);  s += g²;  θ −= γ_t · g / (sqrt(s) + eps)

Unlike the other optimizers, the state (``step`` and ``sum``) is created in the constructor.
"""

from .._tensor import Tensor
from ..ops import pointwise as P
from ._multi_tensor import flatten, get_bucket, plan, uniform_step
from .optimizer import (
    Optimizer, _check_not_fused_or_capturable, _evaluate_closure, _new_step, _step_from_number,
    _to_scalar, _use_grad_for_differentiable,
)

_NAMES = ("step", "sum")


class Adagrad(Optimizer):
    """``Adagrad(params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0,
    eps=1e-10)``."""

    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0,
                 eps=1e-10, foreach=None, *, maximize=False, differentiable=False, fused=None):
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= lr_decay:
            raise ValueError(f"Invalid lr_decay value: {lr_decay}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= initial_accumulator_value:
            raise ValueError(f"Invalid initial_accumulator_value value: "
                             f"{initial_accumulator_value}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        _check_not_fused_or_capturable("Adagrad", fused)
        defaults = {"lr": lr, "lr_decay": lr_decay, "eps": eps, "weight_decay": weight_decay,
                    "initial_accumulator_value": initial_accumulator_value, "foreach": foreach,
                    "maximize": maximize, "differentiable": differentiable, "fused": fused}
        super().__init__(params, defaults)
        self._buckets = {}
        for group in self.param_groups:
            for p in group["params"]:
                self._init_state(self.state[p], p)

    def _init_state(self, state, p):
        state["step"] = _new_step()
        state["sum"] = p.new_full(p.shape, self.defaults["initial_accumulator_value"])

    def __setstate__(self, state):
        super().__setstate__(state)
        self._buckets = {}
        for group in self.param_groups:
            for key, value in (("foreach", None), ("maximize", False),
                               ("differentiable", False), ("fused", None)):
                group.setdefault(key, value)
            for p in group["params"]:
                s = self.state.get(p)
                if s and "step" in s and not isinstance(s["step"], Tensor):
                    s["step"] = _step_from_number(s["step"])

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
                    state = self.state[p]
                    if len(state) == 0:
                        self._init_state(state, p)
                    states.append(state)
            if not params:
                continue
            if group["foreach"] and not group["differentiable"]:
                _multi_tensor_adagrad(self._buckets, index, params, grads, states, group)
            else:
                _single_tensor_adagrad(params, grads, states, group)
        return loss


def _adagrad_update(grad, param, state_sum, step, group):
    """Update the sum of squares in place and return the step to add to the parameter.

    Shared by the for-loop and the flat multi-tensor path, so both give identical numbers."""
    lr = _to_scalar(group["lr"])
    if group["maximize"]:
        grad = P.neg(grad)
    if group["weight_decay"] != 0:
        grad = P.add(grad, param, alpha=group["weight_decay"])
    clr = lr / (1 + (step - 1) * group["lr_decay"])
    state_sum.add_(P.mul(grad, grad))
    std = P.add(P.sqrt(state_sum), group["eps"])
    # PyTorch's addcdiv(value=-clr): (value · g) / std, then added to θ.
    return P.div(P.mul(grad, -clr), std)


def _single_tensor_adagrad(params, grads, states, group):
    for param, grad, state in zip(params, grads, states):
        step_t = state["step"]
        step_t.add_(1)
        param.add_(_adagrad_update(grad, param, state["sum"], step_t.item(), group))


def _multi_tensor_adagrad(cache, index, params, grads, states, group):
    buckets, large = plan(params, grads, states)
    if large[0]:
        _single_tensor_adagrad(*large, group)
    for key, (b_params, b_grads, b_states) in buckets.items():
        bucket = get_bucket(cache, (index,) + key, b_params, b_states, _NAMES)
        step = uniform_step(bucket)
        if step is None:
            # Parameters that skipped steps decay their lr differently: stay exact.
            _single_tensor_adagrad(b_params, b_grads, b_states, group)
            continue
        bucket.flats["step"].add_(1)
        flat_params = bucket.flat_params() if group["weight_decay"] != 0 else None
        bucket.add_to_params(_adagrad_update(flatten(b_grads), flat_params, bucket.flats["sum"],
                                             step + 1, group))
