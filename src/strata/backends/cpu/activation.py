"""CPU kernels for ``ops/activation.py``: softmax, log_softmax and one_hot.

Softmax is the hot path of classifiers and attention, so its kernel works like ATen's vectorised
one (``aten/src/ATen/native/cpu/SoftMaxKernel.cpp``) as far as NumPy allows: rows are processed
in blocks small enough to stay in the L2 cache between the passes, blocks are split over threads
(``parallel_for``), and every pass writes into the output buffer instead of allocating.
"""

import numpy as np

from ...core import dtype as D
from ...ops import activation as A
from .array import COMPUTE, GRAIN_SIZE, compute_data, data, parallel_for, wrap

_BLOCK = 1 << 17   # elements per block: 512 KiB of float32 in and out, inside a 2 MiB L2
_MARGIN = 8.0      # see Note [Softmax without the max]
_FLOOR = np.exp(-_MARGIN)


# Note [Softmax without the max]
# The textbook stable softmax subtracts each row's max before exp. That costs a reduction and a
# broadcast subtraction, the two slowest passes in NumPy. When no exp(x) overflows and each row's
# largest term is not far below 1, exp(x) / sum(exp(x)) is as accurate as the shifted form: the
# terms that matter are normal floats, and no rounding of x - max is added. The row sum s checks
# this after the fact: s finite means nothing overflowed, and s >= n * exp(-_MARGIN) means
# max(x) >= -_MARGIN (since s <= n * exp(max)), so only outputs smaller than exp(_MARGIN) times
# the smallest normal number (~1e-34 in float32) can lose precision to underflow. Blocks that
# fail the check (or hold inf/nan) are recomputed with the max subtracted.

def _softmax_block(x, out, scratch):
    np.exp(x, out=out)
    s = np.einsum("ij->i", out)
    if not (np.isfinite(s).all() and s.min() >= out.shape[1] * _FLOOR):
        np.subtract(x, np.max(x, axis=1, keepdims=True), out=out)
        np.exp(out, out=out)
        s = np.einsum("ij->i", out)
    np.reciprocal(s, out=s)
    np.multiply(out, s[:, None], out=out)


def _log_softmax_block(x, out, scratch):
    # (x - max) - log(sum(exp(x - max))), in that order, as ATen does: subtracting the max first
    # keeps the result accurate when it is close to 0 and the max is large.
    np.subtract(x, np.max(x, axis=1, keepdims=True), out=out)
    exps = scratch[:out.size].reshape(out.shape)
    np.exp(out, out=exps)
    s = np.einsum("ij->i", exps)
    np.log(s, out=s)
    np.subtract(out, s[:, None], out=out)


def _rows_view(arr, dim):
    """``arr`` as a (rows, n) array with ``dim`` last (a view unless the leading dims cannot be
    merged), or None when ``dim`` is not the last dim."""
    if arr.ndim == 0:
        return arr.reshape(1, 1)
    if dim != arr.ndim - 1:
        return None
    return arr.reshape(-1, arr.shape[-1])


def _run(block_fn, x, out, dim):
    rows_x, rows_out = _rows_view(x, dim), _rows_view(out, dim)
    if rows_x is None:
        # Softmax over an inner dim: one whole-array pass per step along that axis.
        m = np.max(x, axis=dim, keepdims=True)
        np.subtract(x, m, out=out)
        if block_fn is _softmax_block:
            np.exp(out, out=out)
            np.divide(out, np.sum(out, axis=dim, keepdims=True), out=out)
        else:
            s = np.sum(np.exp(out), axis=dim, keepdims=True)
            np.subtract(out, np.log(s, out=s), out=out)
        return
    n = rows_x.shape[1]
    block = max(1, _BLOCK // max(n, 1))

    def chunk(lo, hi):
        scratch = np.empty(block * n, out.dtype) if block_fn is _log_softmax_block else None
        for i in range(lo, hi, block):
            j = min(i + block, hi)
            block_fn(rows_x[i:j], rows_out[i:j], scratch)

    parallel_for(0, rows_x.shape[0], max(1, GRAIN_SIZE // max(n, 1)), chunk)


def _softmax_kernel(block_fn, op):
    def kernel(self, dim, half_to_float):
        spec = op.meta(self, dim, half_to_float)
        if half_to_float:
            raise RuntimeError("softmax with half to float conversion is not supported on CPU")
        dt = spec.dtype
        out = np.empty(spec.shape, COMPUTE[dt])
        if out.size:
            _run(block_fn, compute_data(self, dt), out, dim % max(self.ndim, 1))
        return wrap(out, dt)
    kernel.__name__ = kernel.__qualname__ = op.name
    return kernel


def one_hot(self, num_classes=-1):
    labels = data(self)
    if num_classes == -1 and self.dtype is D.int64:
        if labels.size == 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        num_classes = int(labels.max()) + 1
    spec = A.one_hot.meta(self, num_classes)
    if labels.size:
        if labels.min() < 0:
            raise RuntimeError("Class values must be non-negative.")
        if labels.max() >= num_classes:
            raise RuntimeError("Class values must be smaller than num_classes.")
    out = np.zeros(spec.shape, np.int64)
    np.put_along_axis(out, labels[..., None], 1, axis=-1)
    return wrap(out, D.int64)


KERNELS = {
    A._softmax: _softmax_kernel(_softmax_block, A._softmax),
    A._log_softmax: _softmax_kernel(_log_softmax_block, A._log_softmax),
    A.one_hot: one_hot,
}
