"""Adafactor (Shazeer & Stern, "Adaptive Learning Rates with Sublinear Memory Cost"), with
PyTorch's variant and formulas (``torch/optim/_adafactor.py``).

A matrix (or batch of matrices) keeps only the running means of its squared gradient's rows and
columns, and their outer product estimates the second moment; a vector keeps the full one.

    t += 1;  β̂ = t^decay;  ρ = min(γ, 1/√t);  α = max(ε2, RMS(θ)) · ρ;  θ *= 1 − γλ
    R = lerp(R, mean_cols(G²), β̂);  C = lerp(C, mean_rows(G²), β̂);  V = R C / max(mean(R), ε1)
    U = G / max(√V, ε1);  θ −= α / max(1, RMS(U) / d) · U
"""

from .._tensor import Tensor
from ..autograd.grad_mode import no_grad
from ..core import dtype as D
from ..dispatch.tls import is_compiling
from ..ops import pointwise as P
from .optimizer import (
    Optimizer, _double, _evaluate_closure, _lerp_, _new_step, _power, _step_along_, _to_scalar,
)


def _larger(a, b):
    """Python's ``max(a, b)`` (``a`` unless ``b > a``), of floats or traced float64 tensors."""
    if isinstance(b, Tensor):
        return P.where(P.gt(b, a), b, _double(a) if not isinstance(a, Tensor) else a)
    return max(a, b)


def _smaller(a, b):
    """Python's ``min(a, b)`` (``a`` unless ``b < a``), of floats or traced float64 tensors."""
    if isinstance(b, Tensor):
        return P.where(P.lt(b, a), b, _double(a) if not isinstance(a, Tensor) else a)
    return min(a, b)


def _value(tensor):
    """A 0-dim tensor as the scalar math's operand: its Python float in eager, a float64 tensor
    while compiling (Note [Traced optimizer step]: no ``.item()``, the same IEEE operations)."""
    return tensor.to(D.float64) if is_compiling() else tensor.item()


def _divide(a, b):
    """``a / b`` as one IEEE division (PyTorch's ``number / tensor`` would round twice)."""
    if isinstance(b, Tensor) and not isinstance(a, Tensor):
        return P.div(_double(float(a)), b)
    return a / b


class Adafactor(Optimizer):
    """``Adafactor(params, lr=1e-2, beta2_decay=-0.8, eps=(None, 1e-3), d=1.0,
    weight_decay=0.0, *, foreach=None, maximize=False)``."""

    def __init__(self, params, lr=1e-2, beta2_decay=-0.8, eps=(None, 1e-3), d=1.0,
                 weight_decay=0.0, *, foreach=None, maximize=False):
        lr_value = _to_scalar(lr)
        if not 0.0 <= lr_value:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 >= beta2_decay:
            raise ValueError(f"beta2_decay should be <= 0 but is: {beta2_decay}")
        if eps[0] is not None and not 0.0 <= eps[0]:
            raise ValueError(f"epsilon1 should be >= 0 but is: {eps[0]}")
        if not 0.0 <= eps[1]:
            raise ValueError(f"epsilon2 should be >= 0 but is: {eps[1]}")
        if not 1.0 <= d:
            raise ValueError(f"Clipping threshold d should be >= 1 but is: {d}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight_decay should be >= 0 but is: {weight_decay}")
        defaults = {"lr": lr, "beta2_decay": beta2_decay, "eps": eps, "d": d,
                    "weight_decay": weight_decay, "foreach": foreach, "maximize": maximize}
        super().__init__(params, defaults)

    def _init_state(self, state, grad):
        state["step"] = _new_step()
        if grad.ndim > 1:
            state["row_var"] = grad.new_zeros(tuple(grad.shape[:-1]) + (1,))
            state["col_var"] = grad.new_zeros(tuple(grad.shape[:-2]) + (1, grad.shape[-1]))
        else:
            state["variance"] = grad.new_zeros(grad.shape)

    def _init_missing_state(self):
        """The state of every dense gradient's parameter that has none (capture runs this
        eagerly: Note [Traced optimizer step]); a sparse one is refused by ``_update`` first."""
        for group in self.param_groups:
            for param in group["params"]:
                if param.grad is not None and not param.grad.is_sparse and \
                        not self.state[param]:
                    self._init_state(self.state[param], param.grad)

    def step(self, closure=None):
        loss = _evaluate_closure(closure)
        with no_grad():
            self._init_missing_state()
            for group in self.param_groups:
                for param in group["params"]:
                    if param.grad is not None:
                        self._update(param, group)
        return loss

    def _update(self, param, group):
        if param.grad.is_sparse:
            raise RuntimeError("Adafactor does not support sparse gradients")
        grad = -param.grad if group["maximize"] else param.grad
        state = self.state[param]
        lr, (eps1, eps2), d = _to_scalar(group["lr"]), group["eps"], group["d"]
        eps1 = D.finfo(param.dtype).eps if eps1 is None else eps1
        state["step"] += 1
        step = _value(state["step"])
        beta2_hat = _power(step, group["beta2_decay"])
        rho = _smaller(lr, _divide(1, _power(step, 0.5)))
        alpha = _larger(eps2, _divide(_value(param.norm(2)), param.numel() ** 0.5)) * rho
        if group["weight_decay"] != 0:
            param.mul_(1 - lr * group["weight_decay"])
        if grad.ndim > 1:
            row_var, col_var = state["row_var"], state["col_var"]
            _lerp_(row_var, grad.norm(dim=-1, keepdim=True).square_().div_(grad.shape[-1]),
                   beta2_hat)
            _lerp_(col_var, grad.norm(dim=-2, keepdim=True).square_().div_(grad.shape[-2]),
                   beta2_hat)
            var_estimate = (row_var @ col_var).div_(
                row_var.mean(dim=-2, keepdim=True).clamp_(min=eps1))
        else:
            variance = state["variance"]
            _lerp_(variance, grad * grad, beta2_hat)
            var_estimate = variance.clone()
        update = var_estimate.clamp_(min=eps1 * eps1).rsqrt_().mul_(grad)
        denom = _larger(1.0, _divide(_value(update.norm(2)), update.numel() ** 0.5 * d))
        _step_along_(param, update, _divide(alpha, denom))
