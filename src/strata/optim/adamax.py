"""Adamax (Kingma & Ba, §7.1), Adam with the infinity norm, with PyTorch's formulas
(``torch/optim/adamax.py``).

    t += 1;  g += λθ;  m = β1·m + (1−β1)·g;  u = max(β2·u, |g| + eps)
    θ −= γ / (1−β1^t) · m / u
"""

from ..ops import pointwise as P
from ._elementwise import _ElementwiseOptimizer
from .optimizer import (
    _addcdiv_, _bias_corrected_lr, _check_adam_args, _lerp_, _lr, _negative, _step_count,
)


class Adamax(_ElementwiseOptimizer):
    """``Adamax(params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0)``.

        opt = strata.optim.Adamax(model.parameters(), lr=2e-3)
    """

    _zero_state = ("exp_avg", "exp_inf")
    _setstate_defaults = (("foreach", None), ("maximize", False), ("differentiable", False),
                          ("capturable", False))

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 foreach=None, *, maximize=False, differentiable=False, capturable=False):
        _check_adam_args(lr, betas, eps, weight_decay)
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "foreach": foreach, "maximize": maximize, "differentiable": differentiable,
                    "capturable": capturable}
        super().__init__(params, defaults)

    def _update(self, param, grad, state, group):
        lr, (beta1, beta2) = _lr(group), group["betas"]
        exp_avg, exp_inf = state["exp_avg"], state["exp_inf"]
        _lerp_(exp_avg, grad, 1 - beta1)
        exp_inf.copy_(P.maximum(exp_inf.mul_(beta2), P.abs(grad).add_(group["eps"])))
        # traced: a float64 0-dim tensor (Note [Traced optimizer step])
        clr = _bias_corrected_lr(_step_count(state["step"]), lr, beta1)
        _addcdiv_(param, exp_avg, exp_inf, _negative(clr))
