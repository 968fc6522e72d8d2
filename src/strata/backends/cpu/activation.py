"""CPU kernels for ``ops/activation.py``."""

KERNELS = {}
