"""The compiled wrapper's matrix products (compile_fx.py's ``_matmul`` and ``_matmul_pair``
Externs): strata's product table on the native pool, split over the threads when large, one
row on NumPy's own BLAS when small, and, while a call is recorded, the check that every
product went through the table (Note [Graph programs] in plan.py).
"""

import numpy as np

from ...backends.cpu import array as cpu_array
from ...backends.cpu import native_pool
from ...backends.cpu.array import parallel_for, pointer
from ...backends.cpu.linalg import (
    _blas_ready,
    _gemm_row,
    matmul,
    parallel_gemm_macs,
    run_products,
)
from ...core.fp_errors import silent_fp


@silent_fp     # Note [Silent IEEE arithmetic], as around the eager kernel
def _matmul(a, b, out):
    _product(_blas_ready(a), _blas_ready(b), out)
    _recorded(out)


def _recorded(*outs):
    """While a graph call is recorded (Note [Graph programs] in plan.py): each product's output
    must have been written by a recorded product table; one that BLAS wrote some other way
    (``np.dot``, the Python pool) makes the graph keep its Python wrapper."""
    recorder = native_pool.recording.recorder
    if recorder is not None:
        for out in outs:
            recorder.require_written(out)


def _product(a, b, out):
    """``out = a @ b``; a product of two matrices too small to split (or on one thread) is one
    row of strata's product table on NumPy's own BLAS (``np.dot``'s call, so its bits) on this
    thread, so that a graph program can replay it (Note [Graph programs] in plan.py); a
    matrix-vector product keeps ``np.dot``, which calls another routine for it."""
    if a.ndim == 2 == b.ndim and min(a.shape[0], b.shape[1]) > 1 and \
            (a.size * b.shape[1] < parallel_gemm_macs() or cpu_array.NUM_THREADS == 1) and \
            not _same_data(a, b) and native_pool.has_numpy_blas():
        row = _gemm_row(a, b, out)
        if row is not None:
            row[0] += 2     # on NumPy's BLAS (native_pool.py's strata_gemm)
            native_pool.run_gemms(np.array([row], np.int64), (a, b, out))
            return
    matmul(a, b, out)


def _same_data(a, b):
    """Whether both operands start at one address: ``np.dot`` computes ``x @ x.T`` with
    BLAS's syrk, not gemm, so such a product keeps ``np.dot``."""
    return pointer(a) == pointer(b)


# Note [Paired GEMMs]: two independent products in a row (a Linear's backward computes dX and dW
# from the same dY, with equal work m*n*k) run one per thread, each one whole single-threaded
# BLAS call, instead of each split over the pool in turn (Note [Parallel GEMM] in
# backends/cpu/linalg.py): one hand-over to the pool instead of two (10-35 us of the caller's
# serial time each, python -m benchmarks.compile_profile --amdahl), and blocks twice as large
# for BLAS. Only with two threads and products of about equal work (else one thread would wait
# for the other); anything else runs them one after the other, as ``_matmul``. A product's bits
# depend only on the shapes and the thread count, as before; they can differ in the last place
# from the split product's, as between thread counts.
PAIR_MAX_IMBALANCE = 1.5


def _product_work(a, b):
    return a.size * b.shape[-1]     # m*k*n (times the batch of a bmm)


@silent_fp
def _matmul_pair(a, b, out, c, d, out2):
    products = ((_blas_ready(a), _blas_ready(b), out), (_blas_ready(c), _blas_ready(d), out2))
    _pair(products)
    _recorded(out, out2)


def _pair(products):
    work = [_product_work(x, y) for x, y, _ in products]
    if cpu_array.NUM_THREADS != 2 or sum(work) < parallel_gemm_macs() or \
            max(work) > PAIR_MAX_IMBALANCE * max(min(work), 1):
        for x, y, o in products:
            _product(x, y, o)
        return

    # on the native pool (Note [Native pool]) a batched product splits along its batch too, so
    # that two products of unequal speed (attention's, one with a transposed operand) share
    # both threads
    if run_products(products):
        return

    def run(lo, hi):
        for x, y, o in products[lo:hi]:
            (np.dot if x.ndim == 2 else np.matmul)(x, y, out=o)     # one thread each
    parallel_for(0, 2, 1, run)
