"""The CPU backend: NumPy kernels, one table per op family, registered under the ``CPU`` key.

CPU execution is synchronous: a kernel returns when its result is computed. NumPy allocates the
results (the "allocator" of this device is NumPy's).
"""

from ...dispatch import register_kernel
from . import activation, factory, indexing, linalg, loss, nn, pointwise, reductions, shape
from . import sorting, sparse, special
from . import scatter
from . import dense, normalization, pooling
from . import distributions, threads
from . import random_fills
from . import rnn
from . import lu
from . import complex, fft
from . import backward
from .array import cpu_kernel

FAMILIES = (sparse, pointwise, special, factory, shape, reductions, sorting, indexing, scatter,
            linalg, nn, dense, pooling, normalization, activation, loss, distributions, rnn,
            complex, fft, lu, random_fills)


def kernel_table() -> dict:
    table = {}
    for family in FAMILIES:
        overlap = table.keys() & family.KERNELS.keys()
        if overlap:
            names = sorted(op.qualname for op in overlap)
            raise RuntimeError(f"CPU kernels defined twice: {names}")
        table.update(family.KERNELS)
    return table


def register():
    threads.register()
    for op, fn in kernel_table().items():
        register_kernel(op, "CPU", cpu_kernel(fn))
    for op, fn in sparse.SPARSE_KERNELS.items():
        register_kernel(op, "SparseCPU", cpu_kernel(fn))
    backward.register()
