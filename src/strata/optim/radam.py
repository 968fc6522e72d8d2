"""RAdam (Liu et al.), Adam with a rectified adaptive lr, with PyTorch's formulas
(``torch/optim/radam.py``).

    t += 1;  g += λθ (coupled) or θ *= 1 − γλ (decoupled_weight_decay)
    m = β1·m + (1−β1)·g;  v = β2·v + (1−β2)·g²;  m̂ = m / (1−β1^t)
    ρ∞ = 2/(1−β2) − 1;  ρ_t = ρ∞ − 2t·β2^t / (1−β2^t)
    ρ_t > 5:  r = sqrt((ρ_t−4)(ρ_t−2)ρ∞ / ((ρ∞−4)(ρ∞−2)ρ_t));  θ −= γ·m̂·sqrt(1−β2^t)/(sqrt(v)+eps)·r
    else:     θ −= γ·m̂            (the variance is not yet tractable: SGD with momentum)
"""

from .._tensor import Tensor
from ..core import dtype as D
from ..ops import pointwise as P
from ._elementwise import _ElementwiseOptimizer
from .optimizer import _addcmul_, _check_adam_args, _lerp_, _lr, _power, _step_count


class RAdam(_ElementwiseOptimizer):
    """``RAdam(params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
    decoupled_weight_decay=False)``.

        opt = strata.optim.RAdam(model.parameters(), lr=1e-3)
    """

    _zero_state = ("exp_avg", "exp_avg_sq")
    _setstate_defaults = (("foreach", None), ("maximize", False), ("differentiable", False),
                          ("decoupled_weight_decay", False), ("capturable", False))

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 decoupled_weight_decay=False, *, foreach=None, maximize=False,
                 capturable=False, differentiable=False):
        _check_adam_args(lr, betas, eps, weight_decay)
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "maximize": maximize, "foreach": foreach, "capturable": capturable,
                    "decoupled_weight_decay": decoupled_weight_decay,
                    "differentiable": differentiable}
        super().__init__(params, defaults)

    def _update(self, param, grad, state, group):
        # The scalars are Python floats in eager and, while compiling (Note [Traced optimizer
        # step]), float64 0-dim tensors computed by the same IEEE operations.
        lr, (beta1, beta2) = _lr(group), group["betas"]
        step = _step_count(state["step"])
        traced = isinstance(step, Tensor)
        if traced:
            step = step.to(D.float64)
        exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
        _lerp_(exp_avg, grad, 1 - beta1)
        _addcmul_(exp_avg_sq.mul_(beta2), grad, grad, 1 - beta2)
        bias_correction2 = 1 - _power(beta2, step)
        update = P.div(exp_avg, 1 - _power(beta1, step)).mul_(lr)
        rho_inf = 2 / (1 - beta2) - 1
        rho_t = rho_inf - 2 * step * _power(beta2, step) / bias_correction2
        # traced, the branch on rho_t is a ``where`` (the graph has no data-dependent branch)
        if traced or rho_t > 5.0:
            rect = _power((rho_t - 4) * (rho_t - 2) * rho_inf
                          / ((rho_inf - 4) * (rho_inf - 2) * rho_t), 0.5)
            # PyTorch's ``number / tensor`` is ``tensor.reciprocal() * number``.
            adaptive_lr = P.sqrt(exp_avg_sq).add_(group["eps"]).reciprocal_()
            adaptive_lr.mul_(_power(bias_correction2, 0.5))
            if traced:
                update = P.where(P.gt(rho_t, 5.0), P.mul(update, adaptive_lr).mul_(rect), update)
            else:
                update.mul_(adaptive_lr).mul_(rect)
        param.add_(update, alpha=-1.0)
