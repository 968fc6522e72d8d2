"""Adagrad (Duchi et al.), with PyTorch's formulas (``torch/optim/adagrad.py``).

    t += 1;  g += λθ;  γ_t = γ / (1 + (t−1)·η);  s += g²;  θ −= γ_t · g / (sqrt(s) + eps)

Unlike the other optimizers, the state (``step`` and ``sum``) is created in the constructor.
"""

from .._tensor import Tensor
from ..core import dtype as D
from ..ops import pointwise as P
from ..sparse import sparse_coo_tensor
from ._elementwise import _ElementwiseOptimizer
from .optimizer import (
    _addcdiv_, _check_lr, _check_nonnegative, _double, _lr, _negative, _new_step, _step_count,
)


class Adagrad(_ElementwiseOptimizer):
    """``Adagrad(params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0,
    eps=1e-10)``."""

    _setstate_defaults = (("foreach", None), ("maximize", False), ("differentiable", False),
                          ("fused", None))

    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0,
                 eps=1e-10, foreach=None, *, maximize=False, differentiable=False, fused=None):
        _check_lr(lr)
        _check_nonnegative(lr_decay=lr_decay, weight_decay=weight_decay,
                           initial_accumulator_value=initial_accumulator_value, eps=eps)
        defaults = {"lr": lr, "lr_decay": lr_decay, "eps": eps, "weight_decay": weight_decay,
                    "initial_accumulator_value": initial_accumulator_value, "foreach": foreach,
                    "maximize": maximize, "differentiable": differentiable, "fused": fused}
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                self._init_state(self.state[p], p, group)

    def _init_state(self, state, param, group):
        state["step"] = _new_step()
        state["sum"] = param.new_full(param.shape, self.defaults["initial_accumulator_value"])

    def _sparse_grad_error(self, group):
        if group["weight_decay"] != 0:
            return "weight_decay option is not compatible with sparse gradients"
        return None

    def _update(self, param, grad, state, group):
        clr = self._decayed_lr(_step_count(state["step"]), _lr(group), group["lr_decay"])
        if grad.is_sparse:
            self._sparse_update(param, grad, state["sum"], clr, group["eps"])
            return
        state_sum = state["sum"].add_(P.mul(grad, grad))
        std = P.sqrt(state_sum).add_(group["eps"])
        _addcdiv_(param, grad, std, _negative(clr))

    @staticmethod
    def _sparse_update(param, grad, state_sum, clr, eps):
        """Only the rows the gradient names: its squares into the sum, then the step with
        the sum read back at those rows (PyTorch's sparse branch; coalesced first, since the
        update is not linear in the gradient)."""
        grad = grad.coalesce()
        indices, values = grad._indices(), grad._values()
        state_sum.add_(sparse_coo_tensor(indices, P.pow(values, 2), grad.shape))
        std_values = state_sum.sparse_mask(grad)._values().sqrt_().add_(eps)
        param.add_(sparse_coo_tensor(indices, P.div(values, std_values), grad.shape),
                   alpha=-clr)

    @staticmethod
    def _decayed_lr(step, lr, lr_decay):
        """``lr / (1 + (t - 1) * lr_decay)``: a Python float, or for a traced step (Note
        [Traced optimizer step]) a float64 0-dim tensor by the same IEEE operations."""
        if not isinstance(step, Tensor):
            return lr / (1 + (step - 1) * lr_decay)
        decay = P.mul(P.sub(step.to(D.float64), _double(1.0)),
                      _double(lr_decay))
        lr = lr if isinstance(lr, Tensor) else _double(lr)
        return P.div(lr, P.add(_double(1.0), decay))
