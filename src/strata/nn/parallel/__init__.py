"""``nn.parallel``: ``DistributedDataParallel`` imports, and raises a clear error when used."""

from ..modules.module import Module


class DistributedDataParallel(Module):
    def __init__(self, module, *args, **kwargs):
        raise RuntimeError("strata.nn.parallel.DistributedDataParallel: distributed training is "
                           "not built in strata yet; train the module directly")


class DataParallel(Module):
    """DataParallel as PyTorch has it without CUDA: ``module`` runs as is, ``device_ids`` is
    empty, and the state dict keys carry the ``module.`` prefix."""

    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        super().__init__()
        self.module = module
        self.device_ids = []

    def forward(self, *inputs, **kwargs):
        return self.module(*inputs, **kwargs)
