"""SparseAdam: Adam for sparse gradients (``nn.Embedding(sparse=True)``), with PyTorch's
formulas (``torch/optim/sparse_adam.py`` and ``_functional.sparse_adam``).

Only the rows a sparse gradient names are touched, the moments of the others keep their values
(a "lazy" Adam). With the gradient coalesced (unique indices) and g its values:

    t += 1;  m[rows] += (1−β1)·(g − m[rows]);  v[rows] += (1−β2)·(g² − v[rows])
    θ[rows] −= γ·sqrt(1−β2^t)/(1−β1^t) · m[rows] / (sqrt(v[rows]) + eps)
"""

import math

from ..autograd.grad_mode import no_grad
from .optimizer import Optimizer, _evaluate_closure, _to_scalar


class SparseAdam(Optimizer):
    """``SparseAdam(params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, maximize=False)``.

        emb = strata.nn.Embedding(10, 3, sparse=True)
        opt = strata.optim.SparseAdam(emb.parameters())
        emb(strata.tensor([1, 4])).sum().backward(); opt.step()
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, maximize=False):
        if not 0.0 < _to_scalar(lr):
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        super().__init__(params, {"lr": lr, "betas": betas, "eps": eps, "maximize": maximize})
        positions = [[g, p] for g, group in enumerate(self.param_groups)
                     for p, param in enumerate(group["params"])]
        sparse = [at for at in positions if self._param_at(at).is_sparse]
        if sparse:
            raise ValueError(f"Sparse params at indices {sparse}: SparseAdam requires dense "
                             f"parameter tensors")
        complex_ = [at for at in positions if self._param_at(at).is_complex()]
        if complex_:
            raise ValueError(f"Complex params at indices {complex_}: SparseAdam does not support "
                             f"complex parameters")

    def _param_at(self, position):
        group, index = position
        return self.param_groups[group]["params"][index]

    def step(self, closure=None):
        loss = _evaluate_closure(closure)
        with_grads = [(group, p) for group in self.param_groups for p in group["params"]
                      if p.grad is not None]
        if any(not p.grad.is_sparse for _, p in with_grads):   # checked before any update
            raise RuntimeError("SparseAdam does not support dense gradients, please consider "
                               "Adam instead")
        with no_grad():
            for group, param in with_grads:
                self._update(param, group)
        return loss

    def _update(self, param, group):
        state = self.state[param]
        if not state:
            state["step"] = 0
            state["exp_avg"] = param.new_zeros(param.shape)
            state["exp_avg_sq"] = param.new_zeros(param.shape)
        state["step"] += 1
        grad = -param.grad if group["maximize"] else param.grad
        grad = grad.coalesce()   # the update is not linear: every row once
        values = grad._values()
        if values.numel() == 0:
            return
        rows = tuple(grad._indices())
        beta1, beta2 = group["betas"]
        exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
        m = exp_avg[rows] + (values - exp_avg[rows]) * (1 - beta1)
        v = exp_avg_sq[rows] + (values * values - exp_avg_sq[rows]) * (1 - beta2)
        exp_avg[rows] = m
        exp_avg_sq[rows] = v
        step = state["step"]
        step_size = _to_scalar(group["lr"]) * math.sqrt(1 - beta2 ** step) / (1 - beta1 ** step)
        param[rows] = param[rows] - m / (v.sqrt() + group["eps"]) * step_size
