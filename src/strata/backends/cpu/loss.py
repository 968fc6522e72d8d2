"""CPU kernels for ``ops/loss.py``."""

KERNELS = {}
