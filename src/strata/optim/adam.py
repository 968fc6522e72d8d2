"""Adam (Kingma & Ba), with PyTorch's formulas (``torch/optim/adam.py``).

    t += 1;  g += λθ (coupled) or θ *= 1 − γλ (decoupled, AdamW)
    m = β1·m + (1−β1)·g;  v = β2·v + (1−β2)·g²;  (amsgrad: v̂ = max(v̂, v))
    θ −= (γ / (1−β1^t)) · m / (sqrt(v) / sqrt(1−β2^t) + eps)

eps is added after the bias-corrected square root, as PyTorch does.
"""

from .._tensor import Tensor
from ..ops import pointwise as P
from ._multi_tensor import flatten, get_bucket, plan, uniform_step
from .optimizer import (
    Optimizer, _check_not_fused_or_capturable, _evaluate_closure, _new_step, _step_from_number,
    _to_scalar, _use_grad_for_differentiable,
)


class Adam(Optimizer):
    """``Adam(params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False)``."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 amsgrad=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False, fused=None, decoupled_weight_decay=False):
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        _check_not_fused_or_capturable(type(self).__name__, fused, capturable)
        defaults = {"lr": lr, "betas": tuple(betas), "eps": eps, "weight_decay": weight_decay,
                    "amsgrad": amsgrad, "maximize": maximize, "foreach": foreach,
                    "capturable": capturable, "differentiable": differentiable, "fused": fused,
                    "decoupled_weight_decay": decoupled_weight_decay}
        super().__init__(params, defaults)
        self._buckets = {}

    def __setstate__(self, state):
        super().__setstate__(state)
        self._buckets = {}
        for group in self.param_groups:
            for key, value in (("amsgrad", False), ("maximize", False), ("foreach", None),
                               ("capturable", False), ("differentiable", False),
                               ("decoupled_weight_decay", False), ("fused", None)):
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
                state["exp_avg"] = p.new_zeros(p.shape)
                state["exp_avg_sq"] = p.new_zeros(p.shape)
                if group["amsgrad"]:
                    state["max_exp_avg_sq"] = p.new_zeros(p.shape)
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
            if _use_multi_tensor(group):
                _multi_tensor_adam(self._buckets, index, params, grads, states, group)
            else:
                _single_tensor_adam(params, grads, states, group)
        return loss


def _use_multi_tensor(group):
    """``foreach=None`` (the default) takes the multi-tensor path too. PyTorch's default picks
    its foreach path where it is the faster one (CUDA); in strata it is the faster one on every
    device, a dozen dispatches per bucket instead of per parameter, and its numbers are the
    for-loop's exactly. ``foreach=False`` keeps the for-loop."""
    return group["foreach"] is not False and not group["differentiable"]


def _hyper(group):
    beta1, beta2 = group["betas"]
    return (_to_scalar(group["lr"]), _to_scalar(beta1), _to_scalar(beta2), group["eps"],
            group["weight_decay"])


def _adam_update(grad, exp_avg, exp_avg_sq, max_exp_avg_sq, beta1, beta2, eps, step, lr):
    """Update the moments in place and return the step to add to the parameter.

    Shared by the for-loop and the flat multi-tensor path, so both give identical numbers. Each
    of PyTorch's fused kernels (lerp_, addcmul_, addcdiv_) becomes its elementwise steps in the
    kernel's own order, run in place on one fresh temporary each, so an update makes four
    temporaries and no copies."""
    bias_correction1 = 1 - beta1 ** step
    bias_correction2_sqrt = (1 - beta2 ** step) ** 0.5
    step_size = lr / bias_correction1
    # exp_avg.lerp_(grad, 1 − β1): weight < 0.5, so m + (1−β1)·(g − m).
    delta = P.sub(grad, exp_avg)
    exp_avg.add_(delta.mul_(1 - beta1))
    # exp_avg_sq.mul_(β2).addcmul_(grad, grad, value=1 − β2): v·β2 + ((1−β2)·g)·g.
    exp_avg_sq.mul_(beta2).add_(P.mul(grad, 1 - beta2).mul_(grad))
    if max_exp_avg_sq is not None:
        max_exp_avg_sq.copy_(P.maximum(max_exp_avg_sq, exp_avg_sq))
        exp_avg_sq = max_exp_avg_sq
    denom = P.sqrt(exp_avg_sq).div_(bias_correction2_sqrt).add_(eps)
    # param.addcdiv_(exp_avg, denom, value=−step_size): θ + (−step_size·m) / denom.
    return P.mul(exp_avg, -step_size).div_(denom)


def _single_tensor_adam(params, grads, states, group):
    lr, beta1, beta2, eps, weight_decay = _hyper(group)
    amsgrad, maximize = group["amsgrad"], group["maximize"]
    decoupled = group["decoupled_weight_decay"]
    for param, grad, state in zip(params, grads, states):
        if maximize:
            grad = P.neg(grad)
        step_t = state["step"]
        step_t.add_(1)
        if weight_decay != 0:
            if decoupled:
                param.mul_(1 - lr * weight_decay)
            else:
                grad = P.add(grad, param, alpha=weight_decay)
        update = _adam_update(grad, state["exp_avg"], state["exp_avg_sq"],
                              state["max_exp_avg_sq"] if amsgrad else None,
                              beta1, beta2, eps, step_t.item(), lr)
        param.add_(update)


def _multi_tensor_adam(cache, index, params, grads, states, group):
    lr, beta1, beta2, eps, weight_decay = _hyper(group)
    names = ("step", "exp_avg", "exp_avg_sq") + (("max_exp_avg_sq",) if group["amsgrad"] else ())
    buckets, large = plan(params, grads, states)
    if large[0]:
        _single_tensor_adam(*large, group)
    for key, (b_params, b_grads, b_states) in buckets.items():
        bucket = get_bucket(cache, (index,) + key, b_params, b_states, names)
        step = uniform_step(bucket)
        if step is None:
            # Parameters that skipped steps have their own bias corrections: stay exact.
            _single_tensor_adam(b_params, b_grads, b_states, group)
            continue
        bucket.flats["step"].add_(1)
        step += 1
        grad = flatten(b_grads)
        if group["maximize"]:
            grad = P.neg(grad)
        flat_params = None
        if weight_decay != 0:
            flat_params = bucket.flat_params()
            if group["decoupled_weight_decay"]:
                flat_params.mul_(1 - lr * weight_decay)
            else:
                grad = P.add(grad, flat_params, alpha=weight_decay)
        flats = bucket.flats
        update = _adam_update(grad, flats["exp_avg"], flats["exp_avg_sq"],
                              flats.get("max_exp_avg_sq"), beta1, beta2, eps, step, lr)
        if weight_decay != 0 and group["decoupled_weight_decay"]:
            bucket.copy_to_params(flat_params.add_(update))
        else:
            bucket.add_to_params(update)
