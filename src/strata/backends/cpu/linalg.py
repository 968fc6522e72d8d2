"""CPU kernels for ``ops/linalg.py``."""

KERNELS = {}
