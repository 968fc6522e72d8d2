"""AdamW: Adam with decoupled weight decay (Loshchilov & Hutter), default ``weight_decay=1e-2``.

As in PyTorch 2.x, it is ``Adam(decoupled_weight_decay=True)``: ``θ *= 1 − γλ`` before the Adam
update, and the gradient is left alone.
"""

from .adam import Adam


class AdamW(Adam):
    """``AdamW(params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2)``."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2,
                 amsgrad=False, *, maximize=False, foreach=None, capturable=False,
                 differentiable=False, fused=None):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach,
                         maximize=maximize, capturable=capturable,
                         differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group["decoupled_weight_decay"] = True
