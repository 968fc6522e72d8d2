"""Averaged SGD (Polyak & Juditsky), with PyTorch's formulas (``torch/optim/asgd.py``).

    t += 1;  g += λ_wd·θ;  θ = θ·(1 − λη) − η·g
    ax = θ (μ = 1) or ax += μ·(θ − ax)           (the running average of the iterates)
    η = γ / (1 + λγt)^α;  μ = 1 / max(1, t − t0)

``eta`` and ``mu`` are per-parameter 0-dim tensors, as in PyTorch; averaging starts at ``t0``.
"""

from .._tensor import Tensor
from ..core import dtype as D
from ..dispatch.tls import is_compiling
from ..ops import pointwise as P
from ._elementwise import _ElementwiseOptimizer
from .optimizer import (
    _check_lr, _check_nonnegative, _double, _get_scalar_dtype, _new_step, _power,
    _scalar_from_number, _scalar_value, _step_along_, _to_scalar,
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
        # Eager reads eta, mu and the step as Python floats; while compiling (Note [Traced
        # optimizer step]) they stay tensors, the scalar math in float64 by the same IEEE
        # operations, and ``mu != 1`` is a ``where``: the same numbers, no ``.item()``.
        lr, lambd = _to_scalar(group["lr"]), group["lambd"]
        eta, mu, ax = state["eta"], state["mu"], state["ax"]
        traced = is_compiling()
        eta_value = eta.to(D.float64) if traced else _scalar_value(eta)
        param.mul_(1 - lambd * eta_value)
        _step_along_(param, grad, eta_value)
        if traced:
            ax.copy_(P.where(P.eq(mu, 1), param, P.add(ax, P.mul(P.sub(param, ax), mu))))
        elif _scalar_value(mu) != 1:
            ax.add_(P.sub(param, ax).mul_(_scalar_value(mu)))
        else:
            ax.copy_(param)
        step = state["step"].to(D.float64) if traced else _scalar_value(state["step"])
        # PyTorch rounds the new values through ``torch.as_tensor`` (float32) before copying
        # them in, which matters once a float64 checkpoint has made eta and mu float64.
        new_eta = _divide(lr, _power(1 + lambd * lr * step, group["alpha"]))
        new_mu = _divide(1, P.clamp(step - group["t0"], min=1.0) if traced
                         else max(1, step - group["t0"]))
        for state_scalar, value in ((eta, new_eta), (mu, new_mu)):
            state_scalar.copy_(value.to(_get_scalar_dtype()) if traced
                               else _scalar_from_number(value))


def _divide(a, b):
    """``a / b`` of Python numbers, or an IEEE division of traced float64 tensors (PyTorch's
    ``number / tensor`` is a reciprocal and a product, which rounds twice)."""
    if isinstance(b, Tensor):
        return P.div(_double(float(a)), b)
    return a / b
