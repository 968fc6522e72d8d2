"""CPU kernels for ``ops/activation.py``: softmax, log_softmax, the activations and one_hot.

Softmax is the hot path of classifiers and attention, so its kernel works like ATen's vectorised
one (``aten/src/ATen/native/cpu/SoftMaxKernel.cpp``): float32 rows go to the fused C loop of
``csrc/softmax.c`` (see ``native.py``), one call per thread. Everything else (other dtypes, a
softmax over an inner dim, no C compiler) takes the NumPy path: rows are processed in blocks
small enough to stay in the L2 cache between the passes, blocks are split over threads
(``parallel_for``), and every pass writes into the output buffer instead of allocating.
"""

import numpy as np

from ..._tensor import from_array
from ...core import dtype as D
from ...ops import activation as A
from . import native
from .array import COMPUTE, GRAIN_SIZE, compute_data, data, empty_apart, parallel_for, wrap

_BLOCK = 1 << 17   # elements per block: 512 KiB of float32 in and out, inside a 2 MiB L2
_MARGIN = 8.0      # see Note [Softmax without the max]
_FLOOR = np.exp(-_MARGIN)
_APART = 1 << 16   # elements from which the output is placed apart from the input


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
    grain = max(1, GRAIN_SIZE // max(n, 1))
    fused = _native_rows(block_fn, rows_x, rows_out)
    if fused is not None:
        x_ptr, out_ptr = rows_x.ctypes.data, rows_out.ctypes.data
        x_step, out_step = rows_x.strides[0] // 4, rows_out.strides[0] // 4
        parallel_for(0, rows_x.shape[0], grain, lambda lo, hi: fused(
            x_ptr + lo * x_step * 4, out_ptr + lo * out_step * 4, hi - lo, n, x_step, out_step))
        return
    block = max(1, _BLOCK // max(n, 1))

    def chunk(lo, hi):
        scratch = np.empty(block * n, out.dtype) if block_fn is _log_softmax_block else None
        for i in range(lo, hi, block):
            j = min(i + block, hi)
            block_fn(rows_x[i:j], rows_out[i:j], scratch)

    parallel_for(0, rows_x.shape[0], grain, chunk)


def _native_rows(block_fn, rows_x, rows_out):
    """The C loop for these rows (float32, unit stride along the row), or None."""
    if not (rows_x.dtype == rows_out.dtype == np.float32 and rows_x.strides[1] == 4
            and rows_out.strides[1] == 4 and rows_x.flags.aligned
            and rows_x.strides[0] % 4 == 0 and rows_out.strides[0] % 4 == 0):
        return None
    return native.function(
        "softmax", "softmax_rows" if block_fn is _softmax_block else "log_softmax_rows")


def _softmax_kernel(block_fn, op):
    def kernel(self, dim, half_to_float):
        spec = op.meta(self, dim, half_to_float)
        if half_to_float:
            raise RuntimeError("softmax with half to float conversion is not supported on CPU")
        dt = spec.dtype
        x = compute_data(self, dt)
        out = _output(spec.shape, COMPUTE[dt], x)
        if out.size:
            _run(block_fn, x, out, dim % max(self.ndim, 1))
        return _result(out, dt)
    kernel.__name__ = kernel.__qualname__ = op.name
    return kernel


def _safe_softmax(self, dim, dtype=None):
    """Softmax, then 0 on the rows that are all -inf (the max of such a row is -inf, and of no
    other: a NaN makes the max NaN)."""
    spec = A._safe_softmax.meta(self, dim, dtype)
    dt = spec.dtype
    x = compute_data(self, dt)
    out = _output(spec.shape, COMPUTE[dt], x)
    if out.size:
        d = dim % max(self.ndim, 1)
        _run(_softmax_block, x, out, d)
        masked = x == -np.inf if x.ndim == 0 else np.max(x, axis=d, keepdims=True) == -np.inf
        if masked.any():
            np.copyto(out, 0, where=masked)
    return _result(out, dt)


def _output(shape, dtype, x):
    """The result buffer: placed apart from ``x`` when big enough to stream (Note [4K aliasing]);
    small ones skip it, as finding the address costs more than the stall it avoids."""
    return empty_apart(shape, dtype, x) if x.size >= _APART else np.empty(shape, dtype)


def _result(out, dt):
    """The tensor of a softmax's output buffer (a view placed by ``empty_apart``: ``wrap`` would
    copy it)."""
    return from_array(out, dt) if out.dtype == dt.np else wrap(out, dt)


# --- activations ----------------------------------------------------------------------------------
# Each formula is ATen's CPU kernel (``aten/src/ATen/native/cpu/Activation.cpp``) on an array in
# the compute dtype (float32 for half inputs: rounded once when wrapped), returning a fresh array.

def _elu(x, alpha, scale, input_scale):
    # x > 0 ? x * scale : expm1(x * input_scale) * alpha * scale
    negative = np.expm1(x if input_scale == 1 else x * input_scale)
    negative *= alpha * scale
    return np.where(x > 0, x if scale == 1 else x * scale, negative)


def _celu(x, alpha):
    return _elu(x, alpha, 1.0, 1.0 / alpha)


def _hardtanh(x, min_val, max_val):
    if x.dtype.kind in "iu":   # integer inputs: bounds truncated, no type promotion
        min_val, max_val = int(min_val), int(max_val)
    return x.clip(min_val, max_val)   # NaN stays NaN (the method: np.clip's wrapper is slower)


def _hardsigmoid(x):
    return (x + 3).clip(0, 6) / 6


def _hardswish(x):
    return x * (x + 3).clip(0, 6) / 6


def _mish(x):
    return x * np.tanh(np.log1p(np.exp(x)))


def _leaky_relu(x, negative_slope):
    return np.where(x > 0, x, x * negative_slope)


def _threshold(x, threshold, value):
    # ATen converts both scalars to the tensor's dtype first (integers truncate, halves round)
    threshold, value = np.array(threshold).astype(x.dtype), np.array(value).astype(x.dtype)
    return np.where(x <= threshold, value, x)


def _softplus(x, beta, threshold):
    # x * beta > threshold ? x : log1p(exp(x * beta)) / beta
    scaled = x if beta == 1 else x * beta
    soft = np.log1p(np.exp(scaled))
    if beta != 1:
        soft = soft / beta
    return np.where(scaled > threshold, x, soft)


def _softshrink(x, lambd):
    # x * 0 (not 0) inside, so -0.0 and NaN come through as in ATen
    return np.where(x > lambd, x - lambd, np.where(x < -lambd, x + lambd, x * 0))


def _hardshrink(x, lambd):
    return np.where((x >= -lambd) & (x <= lambd), 0, x)


def _laid_out(r, spec):
    """A formula's fresh result as a tensor with the strides the meta gives (TensorIterator's
    layout; ``np.where`` always answers row-major)."""
    itemsize = r.itemsize
    strides = spec.strides
    if tuple(s // itemsize for s in r.strides) == strides:
        return wrap(r, spec.dtype)
    order = sorted(range(r.ndim), key=lambda d: (-strides[d], -d))
    out = np.empty([r.shape[d] for d in order], spec.dtype.np).transpose(np.argsort(order))
    np.copyto(out, r, casting="unsafe")
    t = from_array(out, spec.dtype)
    t._strides = strides   # exact for size-1 dims too
    return t


def _activation(op, op_, formula, *, own_dtype=False):
    """Kernels for an activation and its in-place twin. The op's dtype rule validates (the meta's
    checks without its layout work, which only a non-contiguous input needs). ``own_dtype``: the
    formula works in the tensor's dtype, not the compute dtype (threshold compares halves as
    halves)."""
    rule = op.dtype_rule

    def kernel(self, *scalars):
        dt = rule(self, *scalars)
        src = data(self)
        x = src if own_dtype else compute_data(self, dt)
        r = np.asarray(formula(x, *scalars))
        if r.ndim > 1 and r.size and not src.flags.c_contiguous:
            return _laid_out(r, op.meta(self, *scalars))
        return wrap(r, dt)

    kernel.__name__ = kernel.__qualname__ = op.name
    if op_ is None:
        return {op: kernel}
    meta_ = op_.meta

    def kernel_(self, *scalars):
        meta_(self, *scalars)
        x = data(self) if own_dtype else compute_data(self, self.dtype)
        np.copyto(data(self), formula(x, *scalars), casting="unsafe")
        return self

    kernel_.__name__ = kernel_.__qualname__ = op_.name
    return {op: kernel, op_: kernel_}


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
    A._safe_softmax: _safe_softmax,
    **_activation(A.elu, A.elu_, _elu),
    **_activation(A.celu, A.celu_, _celu),
    **_activation(A.hardtanh, A.hardtanh_, _hardtanh),
    **_activation(A.hardsigmoid, A.hardsigmoid_, _hardsigmoid),
    **_activation(A.hardswish, A.hardswish_, _hardswish),
    **_activation(A.mish, A.mish_, _mish),
    **_activation(A.leaky_relu, A.leaky_relu_, _leaky_relu),
    **_activation(A.threshold, A.threshold_, _threshold, own_dtype=True),
    **_activation(A.softplus, None, _softplus),
    **_activation(A.softshrink, None, _softshrink),
    **_activation(A.hardshrink, None, _hardshrink),
    A.one_hot: one_hot,
}
