"""Adadelta (Zeiler), with PyTorch's formulas (``torch/optim/adadelta.py``).

    g += λθ;  v = ρ·v + (1−ρ)·g²;  Δ = sqrt(u + eps) / sqrt(v + eps) · g
    u = ρ·u + (1−ρ)·Δ²;  θ −= γ·Δ

``lr`` (default 1.0) scales Δ, which the paper does not have.
"""

from ..ops import pointwise as P
from ._elementwise import _ElementwiseOptimizer
from .optimizer import _addcmul_, _check_lr, _check_nonnegative, _to_scalar


class Adadelta(_ElementwiseOptimizer):
    """``Adadelta(params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0)``.

        opt = strata.optim.Adadelta(model.parameters())
    """

    _zero_state = ("square_avg", "acc_delta")
    _setstate_defaults = (("foreach", None), ("maximize", False), ("differentiable", False),
                          ("capturable", False))

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *,
                 capturable=False, maximize=False, differentiable=False):
        _check_lr(lr)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        _check_nonnegative(eps=eps, weight_decay=weight_decay)
        defaults = {"lr": lr, "rho": rho, "eps": eps, "weight_decay": weight_decay,
                    "maximize": maximize, "capturable": capturable, "foreach": foreach,
                    "differentiable": differentiable}
        super().__init__(params, defaults)

    def _update(self, param, grad, state, group):
        rho, eps = group["rho"], group["eps"]
        square_avg, acc_delta = state["square_avg"], state["acc_delta"]
        _addcmul_(square_avg.mul_(rho), grad, grad, 1 - rho)
        std = P.add(square_avg, eps).sqrt_()
        delta = P.add(acc_delta, eps).sqrt_().div_(std).mul_(grad)
        _addcmul_(acc_delta.mul_(rho), delta, delta, 1 - rho)
        param.add_(delta, alpha=-_to_scalar(group["lr"]))
