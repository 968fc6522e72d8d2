"""``SyncBatchNorm`` (``torch/nn/modules/batchnorm.py``): batch norm whose batch statistics are
those of the whole global batch, all ranks together.

In training each rank sums its inputs per channel, the sums are all-reduced (differentiably, so
backward all-reduces the statistics' gradients too) into the global mean, then the same for the
squared deviations into the global biased variance. Outside training, or with one process, it is
plain batch norm.
"""


from ... import distributed as dist
from ...autograd.grad_mode import no_grad
from ...distributed.nn import functional as dist_fn
from .. import functional as F
from .batchnorm import _BatchNorm, _NormBase


class SyncBatchNorm(_NormBase):
    """``nn.SyncBatchNorm(num_features)``; usually made by ``convert_sync_batchnorm(model)``."""

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True,
                 track_running_stats=True, process_group=None, device=None, dtype=None):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype)
        self.process_group = process_group

    def forward(self, input):
        if input.dim() < 2:
            raise ValueError(f"expected at least 2D input (got {input.dim()}D input)")
        momentum = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            self.num_batches_tracked.add_(1)
            if self.momentum is None:
                momentum = 1.0 / float(self.num_batches_tracked)
        use_batch_stats = self.training or (self.running_mean is None and
                                            self.running_var is None)
        world = dist.get_world_size(self.process_group) if dist.is_initialized() else 1
        if not (use_batch_stats and world > 1):
            keep_stats = not self.training or self.track_running_stats
            return F.batch_norm(input, self.running_mean if keep_stats else None,
                                self.running_var if keep_stats else None, self.weight,
                                self.bias, use_batch_stats, momentum, self.eps)
        return self._synced(input, momentum)

    def _synced(self, input, momentum):
        dims = [0] + list(range(2, input.dim()))
        shape = [1, -1] + [1] * (input.dim() - 2)
        local_count = input.numel() // input.shape[1]
        count = dist_fn.all_reduce(input.new_full((1,), float(local_count)),
                                   group=self.process_group)
        if float(count) <= 1:
            raise ValueError(f"Expected more than 1 value per channel when training, got input "
                             f"size {list(input.shape)}")
        mean = dist_fn.all_reduce(input.sum(dims), group=self.process_group) / count
        centred = input - mean.view(shape)
        var = dist_fn.all_reduce((centred * centred).sum(dims), group=self.process_group) / count
        out = centred / (var.view(shape) + self.eps).sqrt()
        if self.weight is not None:
            out = out * self.weight.view(shape)
        if self.bias is not None:
            out = out + self.bias.view(shape)
        if self.training and self.track_running_stats:
            n = float(count)
            with no_grad():
                self.running_mean.mul_(1 - momentum).add_(mean.detach() * momentum)
                unbiased = var.detach() * (n / max(n - 1, 1))
                self.running_var.mul_(1 - momentum).add_(unbiased * momentum)
        return out

    @classmethod
    def convert_sync_batchnorm(cls, module, process_group=None):
        """``module`` with every BatchNorm*d replaced by a SyncBatchNorm holding the same
        parameters and running statistics."""
        converted = module
        if isinstance(module, _BatchNorm):
            converted = cls(module.num_features, module.eps, module.momentum, module.affine,
                            module.track_running_stats, process_group)
            if module.affine:
                with no_grad():
                    converted.weight = module.weight
                    converted.bias = module.bias
            converted.running_mean = module.running_mean
            converted.running_var = module.running_var
            converted.num_batches_tracked = module.num_batches_tracked
            converted.training = module.training
        for name, child in module.named_children():
            converted.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        return converted


__all__ = ["SyncBatchNorm"]
