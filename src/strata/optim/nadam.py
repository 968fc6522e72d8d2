"""NAdam (Dozat), Adam with Nesterov momentum, with PyTorch's formulas (``torch/optim/nadam.py``).

    t += 1;  g += λθ (coupled) or θ *= 1 − γλ (decoupled_weight_decay, "NAdamW")
    μ_t = β1·(1 − ½·0.96^(tψ));  Π_t = Π_{t−1}·μ_t   (ψ = momentum_decay; Π is ``mu_product``)
    m = β1·m + (1−β1)·g;  v = β2·v + (1−β2)·g²;  d = sqrt(v / (1−β2^t)) + eps
    θ −= γ·(1−μ_t)/(1−Π_t) · g/d  +  γ·μ_{t+1}/(1−Π_t·μ_{t+1}) · m/d
"""

from .._tensor import Tensor
from ..core import dtype as D
from ..ops import pointwise as P
from ._elementwise import _ElementwiseOptimizer
from .optimizer import (
    _addcdiv_, _addcmul_, _check_adam_args, _check_nonnegative, _lerp_, _lr, _new_step, _power,
    _scalar_from_number, _scalar_value, _step_count,
)


class NAdam(_ElementwiseOptimizer):
    """``NAdam(params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
    momentum_decay=4e-3, decoupled_weight_decay=False)``.

        opt = strata.optim.NAdam(model.parameters(), lr=2e-3, decoupled_weight_decay=True)
    """

    _scalar_state = ("step", "mu_product")
    _setstate_defaults = (("maximize", False), ("foreach", None), ("capturable", False),
                          ("differentiable", False), ("decoupled_weight_decay", False))

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 momentum_decay=4e-3, decoupled_weight_decay=False, *, foreach=None,
                 maximize=False, capturable=False, differentiable=False):
        _check_adam_args(lr, betas, eps, weight_decay)
        _check_nonnegative(momentum_decay=momentum_decay)
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "momentum_decay": momentum_decay,
                    "decoupled_weight_decay": decoupled_weight_decay, "maximize": maximize,
                    "foreach": foreach, "capturable": capturable,
                    "differentiable": differentiable}
        super().__init__(params, defaults)

    def _init_state(self, state, param, group):
        state["step"] = _new_step()
        state["mu_product"] = _scalar_from_number(1.0)
        state["exp_avg"] = param.new_zeros(param.shape)
        state["exp_avg_sq"] = param.new_zeros(param.shape)

    def _update(self, param, grad, state, group):
        # The scalars are Python floats in eager and, while compiling (Note [Traced optimizer
        # step]), float64 0-dim tensors computed by the same IEEE operations.
        lr, (beta1, beta2) = _lr(group), group["betas"]
        step, psi = _step_count(state["step"]), group["momentum_decay"]
        traced = isinstance(step, Tensor)
        if traced:
            step = step.to(D.float64)
        mu = beta1 * (1.0 - 0.5 * _power(0.96, step * psi))
        mu_next = beta1 * (1.0 - 0.5 * _power(0.96, (step + 1) * psi))
        # The product is kept in the state's float32, as PyTorch's ``mu_product *= mu``.
        mu_product_state = state["mu_product"]
        if traced:
            mu_product = mu_product_state.mul_(mu.to(mu_product_state.dtype)).to(D.float64)
        else:
            mu_product = _scalar_value(mu_product_state.mul_(mu))
        exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
        _lerp_(exp_avg, grad, 1 - beta1)
        _addcmul_(exp_avg_sq.mul_(beta2), grad, grad, 1 - beta2)
        denom = P.div(exp_avg_sq, 1 - _power(beta2, step)).sqrt_().add_(group["eps"])
        _addcdiv_(param, grad, denom, -lr * (1.0 - mu) / (1.0 - mu_product))
        _addcdiv_(param, exp_avg, denom, (-lr * mu_next) / (1.0 - mu_product * mu_next))
