"""The CPU backend: NumPy kernels, one table per op family, registered under the ``CPU`` key.

CPU execution is synchronous: a kernel returns when its result is computed. NumPy allocates the
results (the "allocator" of this device is NumPy's).
"""

import functools

from ...dispatch import register_kernel
from . import activation, factory, indexing, linalg, loss, nn, pointwise, reductions, shape
from . import sorting, sparse, special
from . import scatter
from . import dense, normalization, pooling
from . import distributions

FAMILIES = (sparse, pointwise, special, factory, shape, reductions, sorting, indexing, scatter,
            linalg, nn, dense, pooling, normalization, activation, loss, distributions)


def kernel_table() -> dict:
    table = {}
    for family in FAMILIES:
        overlap = table.keys() & family.KERNELS.keys()
        if overlap:
            names = sorted(op.qualname for op in overlap)
            raise RuntimeError(f"CPU kernels defined twice: {names}")
        table.update(family.KERNELS)
    return table


def _reports_allocation_failure(fn):
    """A factory's kernel whose allocation the OS refuses raises what PyTorch's CPU allocator
    does (RuntimeError, error code 12), not NumPy's MemoryError. Overflowing sizes never get
    here: the meta functions refuse them (``core.shape.check_storage_size``)."""
    @functools.wraps(fn)
    def kernel(*args):
        try:
            return fn(*args)
        except MemoryError as exc:
            nbytes = getattr(exc, "_total_size", None)   # NumPy's _ArrayMemoryError says it
            raise RuntimeError(f"DefaultCPUAllocator: can't allocate memory: you tried to "
                               f"allocate {nbytes} bytes. Error code 12 (Cannot allocate "
                               f"memory)") from None
    return kernel


def register():
    for op, fn in kernel_table().items():
        if "factory" in op.tags:
            fn = _reports_allocation_failure(fn)
        register_kernel(op, "CPU", fn)
    for op, fn in sparse.SPARSE_KERNELS.items():
        register_kernel(op, "SparseCPU", fn)
