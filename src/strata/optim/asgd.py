"""Averaged SGD (Polyak & Juditsky), with PyTorch's formulas (``torch/optim/asgd.py``).

    t += 1;  g += λ_wd·θ;  θ = θ·(1 − λη) − η·g
    ax = θ (μ = 1) or ax += μ·(θ − ax)           (the running average of the iterates)
    η = γ / (1 + λγt)^α;  μ = 1 / max(1, t − t0)

``eta`` and ``mu`` are per-parameter 0-dim tensors, as in PyTorch; averaging starts at ``t0``.
"""

from ..ops import pointwise as P
from .optimizer import (
    _check_lr, _check_nonnegative, _ElementwiseOptimizer,
    _new_step, _scalar_from_number, _scalar_value, _to_scalar,
)


class ASGD(_ElementwiseOptimizer):
    """``ASGD(params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0)``.

        opt = strata.optim.ASGD(model.parameters(), lr=1e-2, t0=100)
    """

    _scalar_state = ("step", "eta", "mu")
    _setstate_defaults = (("foreach", None), ("maximize", False), ("differentiable", False),
                          ("capturable", False))

    def __init__(self, params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0,
                 foreach=None, maximize=False, differentiable=False, capturable=False):
        _check_lr(lr)
        _check_nonnegative(weight_decay=weight_decay)
        defaults = {"lr": lr, "lambd": lambd, "alpha": alpha, "t0": t0,
                    "weight_decay": weight_decay, "foreach": foreach, "maximize": maximize,
                    "differentiable": differentiable, "capturable": capturable}
        super().__init__(params, defaults)

    def _init_state(self, state, param, group):
        state["step"] = _new_step()
        state["eta"] = _scalar_from_number(_to_scalar(group["lr"]))
        state["mu"] = _scalar_from_number(1.0)
        state["ax"] = param.new_zeros(param.shape)

    def _update(self, param, grad, state, group):
        lr, lambd = _to_scalar(group["lr"]), group["lambd"]
        eta, mu, ax = state["eta"], state["mu"], state["ax"]
        eta_value = _scalar_value(eta)
        param.mul_(1 - lambd * eta_value)
        param.add_(grad, alpha=-eta_value)
        mu_value = _scalar_value(mu)
        if mu_value != 1:
            ax.add_(P.sub(param, ax).mul_(mu_value))
        else:
            ax.copy_(param)
        step = _scalar_value(state["step"])
        # PyTorch rounds the new values through ``torch.as_tensor`` (float32) before copying
        # them in, which matters once a float64 checkpoint has made eta and mu float64.
        eta.copy_(_scalar_from_number(lr / ((1 + lambd * lr * step) ** group["alpha"])))
        mu.copy_(_scalar_from_number(1 / max(1, step - group["t0"])))
