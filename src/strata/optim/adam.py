"""Adam (Kingma & Ba), with PyTorch's formulas (``torch/optim/adam.py``).

    t += 1;  g += λθ (coupled) or θ *= 1 − γλ (decoupled, AdamW)
    m = β1·m + (1−β1)·g;  v = β2·v + (1−β2)·g²;  (amsgrad: v̂ = max(v̂, v))
    θ −= (γ / (1−β1^t)) · m / (sqrt(v) / sqrt(1−β2^t) + eps)

eps is added after the bias-corrected square root, as PyTorch does.
"""

from ..dispatch.tls import is_compiling
from ..ops import pointwise as P
from ._elementwise import _ElementwiseOptimizer
from ._group_update import AdamUpdate
from ._native_update import adam_group_step, adam_step, adamw_step
from .optimizer import (
    _adam_bias_corrections, _addcdiv_, _addcmul_, _check_adam_args, _lerp_, _lr, _negative,
    _to_scalar,
)


class Adam(_ElementwiseOptimizer):
    """``Adam(params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False)``."""

    _zero_state = ("exp_avg", "exp_avg_sq")
    _setstate_defaults = (("amsgrad", False), ("maximize", False), ("foreach", None),
                          ("capturable", False), ("differentiable", False),
                          ("decoupled_weight_decay", False), ("fused", None))

    def _sparse_grad_error(self, group):
        return "Adam does not support sparse gradients, please consider SparseAdam instead"

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 amsgrad=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False, fused=None, decoupled_weight_decay=False):
        _check_adam_args(lr, betas, eps, weight_decay)
        defaults = {"lr": lr, "betas": tuple(betas), "eps": eps, "weight_decay": weight_decay,
                    "amsgrad": amsgrad, "maximize": maximize, "foreach": foreach,
                    "capturable": capturable, "differentiable": differentiable, "fused": fused,
                    "decoupled_weight_decay": decoupled_weight_decay}
        super().__init__(params, defaults)

    def _init_state(self, state, param, group):
        super()._init_state(state, param, group)
        if group["amsgrad"]:
            state["max_exp_avg_sq"] = param.new_zeros(param.shape)

    def _fused_update(self, group):
        return None if group["amsgrad"] else "adam_step"

    @staticmethod
    def _scalars(state, group):
        """(beta1, beta2, step size, sqrt of bias correction 2) of this step (traced 0-dim
        tensors while compiling: ``_adam_bias_corrections``)."""
        lr, (beta1, beta2) = _lr(group), (_to_scalar(beta) for beta in group["betas"])
        return (beta1, beta2, *_adam_bias_corrections(state["step"], lr, beta1, beta2))

    def _update_decayed(self, param, grad, state, group, factor):
        if group["amsgrad"]:
            return False
        beta1, beta2, step_size, bias_correction2_sqrt = self._scalars(state, group)
        return adamw_step(
            param, grad, state["exp_avg"], state["exp_avg_sq"], 1 - beta1, beta2,
            bias_correction2_sqrt, group["eps"], step_size, factor)

    def _grouped_step(self, params, grads, states, group):
        """The whole group's update, step counts and AdamW's decay included: one parallel C
        call on the CPU (Note [One update kernel], optim/_group_update.py) or one device
        launch per step count (opencl), where it computes what the per-parameter update would."""
        lr, betas, eps, decay = group["lr"], group["betas"], group["eps"], group["weight_decay"]
        decoupled = decay != 0 and group["decoupled_weight_decay"]
        if group["amsgrad"] or group["maximize"] or group["differentiable"] or (
                decay != 0 and not decoupled):
            return False
        if params[0].device.type == "cpu":
            update = self._plans[id(group)] = AdamUpdate.reuse_or_plan(
                self._plans.get(id(group)), params, grads, states, lr, *betas, eps, decay)
            if update is None or not abs(1 - betas[0]) < 0.5:     # (adam_step's lerp weight)
                return False
            update.count_step()
            beta1, beta2, step_size, bias_correction2_sqrt = self._scalars(states[0], group)
            update.run(1 - beta1, beta2, bias_correction2_sqrt, eps, step_size,
                       1 - lr * decay if decay != 0 else None)
            return True
        lr, (beta1, beta2) = _lr(group), (_to_scalar(beta) for beta in betas)

        def corrections(i):
            return self._scalars(states[i], group)[2:]
        return adam_group_step(
            params, grads, [s["exp_avg"] for s in states], [s["exp_avg_sq"] for s in states],
            [s["step"] for s in states], corrections, 1 - beta1, beta2, eps, lr,
            1 - lr * decay if decoupled else None,   # ``_apply``'s decay factor
            kept=self._plans.setdefault(("device", id(group)), {}))

    def _update(self, param, grad, state, group):
        beta1, beta2, step_size, bias_correction2_sqrt = self._scalars(state, group)
        # while compiling, every one-element value comes before the update, so they share one
        # kernel (inductor's graph.py, ``_schedule``)
        negative_step_size = _negative(step_size)
        exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
        if not group["amsgrad"] and not is_compiling() and adam_step(
                param, grad, exp_avg, exp_avg_sq, 1 - beta1, beta2, bias_correction2_sqrt,
                group["eps"], step_size):
            return   # the same arithmetic in one generated C loop (optim/_native_update.py)
        _lerp_(exp_avg, grad, 1 - beta1)
        _addcmul_(exp_avg_sq.mul_(beta2), grad, grad, 1 - beta2)
        if group["amsgrad"]:
            exp_avg_sq = state["max_exp_avg_sq"].copy_(
                P.maximum(state["max_exp_avg_sq"], exp_avg_sq))
        denom = P.sqrt(exp_avg_sq).div_(bias_correction2_sqrt).add_(group["eps"])
        _addcdiv_(param, exp_avg, denom, negative_step_size)
