"""Adam (Kingma & Ba), with PyTorch's formulas (``torch/optim/adam.py``).

    t += 1;  g += λθ (coupled) or θ *= 1 − γλ (decoupled, AdamW)
    m = β1·m + (1−β1)·g;  v = β2·v + (1−β2)·g²;  (amsgrad: v̂ = max(v̂, v))
    θ −= (γ / (1−β1^t)) · m / (sqrt(v) / sqrt(1−β2^t) + eps)

eps is added after the bias-corrected square root, as PyTorch does.
"""

from ..ops import pointwise as P
from ._native_update import adam_step, adamw_step
from .optimizer import (
    _addcdiv_, _addcmul_, _check_adam_args,
    _ElementwiseOptimizer, _lerp_, _scalar_value, _to_scalar,
)


class Adam(_ElementwiseOptimizer):
    """``Adam(params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False)``."""

    _zero_state = ("exp_avg", "exp_avg_sq")
    _setstate_defaults = (("amsgrad", False), ("maximize", False), ("foreach", None),
                          ("capturable", False), ("differentiable", False),
                          ("decoupled_weight_decay", False), ("fused", None))

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
        """(lerp weight, beta2, sqrt of bias correction 2, eps, step size) of this step."""
        lr, beta1, beta2 = (_to_scalar(x) for x in (group["lr"], *group["betas"]))
        step = _scalar_value(state["step"])
        return (1 - beta1, beta2, (1 - beta2 ** step) ** 0.5, group["eps"],
                lr / (1 - beta1 ** step))

    def _update_decayed(self, param, grad, state, group, factor):
        return not group["amsgrad"] and adamw_step(
            param, grad, state["exp_avg"], state["exp_avg_sq"], *self._scalars(state, group),
            factor)

    def _update(self, param, grad, state, group):
        lerp_weight, beta2, bias_correction2_sqrt, _, step_size = scalars = \
            self._scalars(state, group)
        exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
        if not group["amsgrad"] and adam_step(param, grad, exp_avg, exp_avg_sq, *scalars):
            return   # the same arithmetic in one generated C loop (optim/_native_update.py)
        _lerp_(exp_avg, grad, lerp_weight)
        _addcmul_(exp_avg_sq.mul_(beta2), grad, grad, 1 - beta2)
        if group["amsgrad"]:
            exp_avg_sq = state["max_exp_avg_sq"].copy_(
                P.maximum(state["max_exp_avg_sq"], exp_avg_sq))
        denom = P.sqrt(exp_avg_sq).div_(bias_correction2_sqrt).add_(group["eps"])
        _addcdiv_(param, exp_avg, denom, -step_size)
