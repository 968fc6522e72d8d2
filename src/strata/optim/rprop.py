"""Rprop (Riedmiller & Braun), resilient backpropagation, with PyTorch's formulas
(``torch/optim/rprop.py``).

Only the sign of the gradient is used. Each element keeps its own step size, which grows by
η+ while the gradient keeps its sign and shrinks by η− when it flips (then that element skips
this update and forgets its gradient):

    s = clamp(s·η, step_size_min, step_size_max)   η = η+ (g·g_prev > 0), η− (< 0), 1 (= 0)
    g = 0 where g·g_prev < 0;  θ −= sign(g)·s;  g_prev = g

There is no weight decay.
"""

from ..ops import pointwise as P
from ._elementwise import _ElementwiseOptimizer
from .optimizer import _addcmul_, _check_lr, _to_scalar


class Rprop(_ElementwiseOptimizer):
    """``Rprop(params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50))``.

        opt = strata.optim.Rprop(model.parameters(), lr=1e-2)
    """

    _zero_state = ("prev",)
    _setstate_defaults = (("foreach", None), ("maximize", False), ("differentiable", False),
                          ("capturable", False))

    def __init__(self, params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), *,
                 capturable=False, foreach=None, maximize=False, differentiable=False):
        _check_lr(lr)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        defaults = {"lr": lr, "etas": etas, "step_sizes": step_sizes, "foreach": foreach,
                    "maximize": maximize, "differentiable": differentiable,
                    "capturable": capturable}
        super().__init__(params, defaults)

    def _init_state(self, state, param, group):
        super()._init_state(state, param, group)
        state["step_size"] = param.new_full(param.shape, _to_scalar(group["lr"]))

    def _update(self, param, grad, state, group):
        etaminus, etaplus = group["etas"]
        prev, step_size = state["prev"], state["step_size"]
        # The factor is written into the sign tensor in PyTorch's order (so in the grad's dtype).
        sign = P.sign(P.mul(grad, prev))
        flipped = P.lt(sign, 0)
        sign.masked_fill_(P.gt(sign, 0), etaplus)
        sign.masked_fill_(flipped, etaminus)
        sign.masked_fill_(P.eq(sign, 0), 1)
        step_size.mul_(sign).clamp_(*group["step_sizes"])
        grad = P.where(flipped, 0, grad)
        _addcmul_(param, P.sign(grad), step_size, -1)
        prev.copy_(grad)
