"""RMSprop (Hinton's lecture 6e), with PyTorch's formulas (``torch/optim/rmsprop.py``).

    g += λθ;  v = α·v + (1−α)·g²;  centered: ḡ = lerp(ḡ, g, 1−α), ṽ = v − ḡ²
    μ > 0:  b = μ·b + g / (sqrt(ṽ) + eps);  θ −= γ·b      else:  θ −= γ·g / (sqrt(ṽ) + eps)

eps is added after the square root (TensorFlow adds it inside).
"""

from ..ops import pointwise as P
from ._elementwise import _ElementwiseOptimizer
from .optimizer import (
    _addcdiv_, _addcmul_, _check_lr, _check_nonnegative, _lerp_, _lr, _negative, _step_along_,
)


class RMSprop(_ElementwiseOptimizer):
    """``RMSprop(params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0,
    centered=False)``."""

    _zero_state = ("square_avg",)
    _setstate_defaults = (("momentum", 0), ("centered", False), ("foreach", None),
                          ("maximize", False), ("differentiable", False), ("capturable", False))

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0,
                 centered=False, capturable=False, foreach=None, maximize=False,
                 differentiable=False):
        _check_lr(lr)
        _check_nonnegative(eps=eps, momentum=momentum, weight_decay=weight_decay, alpha=alpha)
        defaults = {"lr": lr, "momentum": momentum, "alpha": alpha, "eps": eps,
                    "centered": centered, "weight_decay": weight_decay, "capturable": capturable,
                    "foreach": foreach, "maximize": maximize, "differentiable": differentiable}
        super().__init__(params, defaults)

    def _init_state(self, state, param, group):
        super()._init_state(state, param, group)
        if group["momentum"] > 0:
            state["momentum_buffer"] = param.new_zeros(param.shape)
        if group["centered"]:
            state["grad_avg"] = param.new_zeros(param.shape)

    def _update(self, param, grad, state, group):
        lr, alpha = _lr(group), group["alpha"]
        square_avg = _addcmul_(state["square_avg"].mul_(alpha), grad, grad, 1 - alpha)
        if group["centered"]:
            grad_avg = _lerp_(state["grad_avg"], grad, 1 - alpha)
            avg = P.sqrt(P.sub(square_avg, P.mul(grad_avg, grad_avg)))
        else:
            avg = P.sqrt(square_avg)
        avg.add_(group["eps"])
        if group["momentum"] > 0:
            buf = state["momentum_buffer"].mul_(group["momentum"]).add_(P.div(grad, avg))
            _step_along_(param, buf, lr)
        else:
            _addcdiv_(param, grad, avg, _negative(lr))
