"""CPU kernels for ``ops/indexing.py``."""

KERNELS = {}
