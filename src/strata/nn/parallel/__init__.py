"""``nn.parallel``: ``DistributedDataParallel`` (multi-process, on strata.distributed) and the
single-device ``DataParallel``."""

from ..modules.module import Module
from .distributed import DistributedDataParallel


class DataParallel(Module):
    """Single-device DataParallel: runs the wrapped module (strata has one compute device)."""

    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        super().__init__()
        self.module = module

    def forward(self, *inputs, **kwargs):
        return self.module(*inputs, **kwargs)


__all__ = ["DataParallel", "DistributedDataParallel"]
