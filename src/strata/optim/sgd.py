"""Stochastic gradient descent with momentum, as PyTorch's ``torch/optim/sgd.py``.

    g += λθ;  b = g (first step) or b = μ·b + (1−τ)·g;  g = g + μ·b (nesterov) or g = b
    θ −= γ·g

The learning rate multiplies the buffer at the update (not inside it, unlike Sutskever et al.).
"""

from ..dispatch.tls import is_compiling
from ..ops import pointwise as P
from ._group_update import SGDUpdate
from ._native_update import sgd_momentum_group_step, sgd_momentum_step
from ._elementwise import _ElementwiseOptimizer
from .optimizer import _check_lr, _check_nonnegative, _lr, _step_along_


class SGD(_ElementwiseOptimizer):
    """``SGD(params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False)``."""

    _scalar_state = ()
    _setstate_defaults = (("nesterov", False), ("maximize", False), ("foreach", None),
                          ("differentiable", False), ("fused", False))

    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0,
                 nesterov=False, *, maximize=False, foreach=None, differentiable=False,
                 fused=None):
        _check_lr(lr)
        _check_nonnegative(momentum=momentum, weight_decay=weight_decay)
        defaults = {"lr": lr, "momentum": momentum, "dampening": dampening,
                    "weight_decay": weight_decay, "nesterov": nesterov, "maximize": maximize,
                    "foreach": foreach, "differentiable": differentiable, "fused": fused}
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, defaults)

    def _keeps_state(self, group):
        return group["momentum"] != 0

    def _sparse_grad_error(self, group):
        return None    # dense.add_(sparse) and a sparse momentum buffer, as PyTorch's

    def _use_flat(self, group):
        # Plain SGD is one op per parameter already; flattening would only add copies.
        plain = group["momentum"] == 0 and group["weight_decay"] == 0 and not group["maximize"]
        return super()._use_flat(group) and not plain

    def _fused_update(self, group):
        return "sgd_momentum_step" if group["momentum"] != 0 else None

    def _init_state(self, state, param, group):
        """The momentum buffer is created from the first gradient, in ``_update``."""

    def _grouped_step(self, params, grads, states, group):
        """Once every momentum buffer exists: the whole group in one parallel C call on the
        CPU (Note [One update kernel], optim/_group_update.py) or one device launch (opencl)."""
        momentum, dampening, nesterov = group["momentum"], group["dampening"], group["nesterov"]
        if momentum == 0 or group["weight_decay"] != 0 or group["maximize"]:
            return False
        bufs = [state.get("momentum_buffer") for state in states]
        if None in bufs:
            return False
        if params[0].device.type == "cpu":
            update = self._plans[id(group)] = SGDUpdate.reuse_or_plan(
                self._plans.get(id(group)), params, grads, states, momentum, dampening,
                group["lr"])
            if update is None:
                return False
            update.run(momentum, dampening, group["lr"], nesterov)
            return True
        return sgd_momentum_group_step(
            params, grads, bufs, momentum, dampening, _lr(group), nesterov,
            kept=self._plans.setdefault(("device", id(group)), {}))

    def _update(self, param, grad, state, group):
        momentum, lr = group["momentum"], _lr(group)
        if momentum != 0:
            buf = state.get("momentum_buffer")
            if buf is None:
                buf = state["momentum_buffer"] = grad.clone()
            elif not is_compiling() and sgd_momentum_step(
                    param, grad, buf, momentum, group["dampening"], lr, group["nesterov"]):
                return   # the same arithmetic in one generated C loop (optim/_native_update.py)
            else:
                buf.mul_(momentum).add_(grad, alpha=1 - group["dampening"])
            grad = P.add(grad, buf, alpha=momentum) if group["nesterov"] else buf
        _step_along_(param, grad, lr)
