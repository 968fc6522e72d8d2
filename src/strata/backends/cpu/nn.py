"""CPU kernels for ``ops/nn.py``."""

KERNELS = {}
