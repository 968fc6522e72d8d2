"""``nn.parallel``: ``DistributedDataParallel`` (multi-process, on strata.distributed) and the
single-device ``DataParallel``."""

from ..modules.module import Module
from .distributed import DistributedDataParallel


class DataParallel(Module):
    """DataParallel as PyTorch has it without CUDA: ``module`` runs as is, ``device_ids`` is
    empty, and the state dict keys carry the ``module.`` prefix."""

    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        super().__init__()
        self.module = module
        self.device_ids = []

    def forward(self, *inputs, **kwargs):
        return self.module(*inputs, **kwargs)


__all__ = ["DataParallel", "DistributedDataParallel"]
