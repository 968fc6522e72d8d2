"""CPU kernels for ``ops/pooling.py``.

Max/avg pooling reduce the strided window view of ``nn.windows`` (no loop over pixels). Adaptive
windows differ in size, so adaptive pooling is done one spatial dim at a time (a rectangle's mean
or max is the mean/max over rows of the mean/max over columns): prefix sums for the mean, and a
loop over the output positions of one dim for the max.
"""

import numpy as np

from ...core import dtype as D
from ...ops import pooling as PL
from .array import COMPUTE, compute_data, wrap
from .nn import windows


def _batched(arr):
    return arr if arr.ndim == 4 else arr[None]


def _lowest(dtype):
    return -np.inf if dtype.kind == "f" else np.iinfo(dtype).min


def max_pool2d_with_indices(self, kernel_size, stride=(), padding=0, dilation=1,
                            ceil_mode=False):
    spec, _ = PL.max_pool2d_with_indices.meta(self, kernel_size, stride, padding, dilation,
                                              ceil_mode)
    kernel, stride, padding, dilation = PL.pool2d_args("max_pool2d", kernel_size, stride,
                                                       padding, dilation)
    x = _batched(compute_data(self, spec.dtype))
    out = spec.shape[-2:]
    view = windows(x, kernel, stride, padding, dilation, out, _lowest(x.dtype))
    flat = view.reshape(view.shape[:4] + (kernel[0] * kernel[1],))
    arg = np.argmax(flat, axis=-1)            # first maximum; NaN counts as the maximum
    values = np.take_along_axis(flat, arg[..., None], -1)[..., 0]
    ki, kj = np.divmod(arg, kernel[1])
    rows = np.arange(out[0])[:, None] * stride[0] - padding[0] + ki * dilation[0]
    cols = np.arange(out[1]) * stride[1] - padding[1] + kj * dilation[1]
    indices = rows * x.shape[-1] + cols
    shape = spec.shape
    return wrap(values.reshape(shape), spec.dtype), wrap(indices.reshape(shape), D.int64)


def _window_counts(size, out, kernel, stride, pad, include_pad):
    """Elements of each window along one dim, as PyTorch counts them (``AvgPoolKernel.cpp``)."""
    start = np.arange(out) * stride - pad
    end = np.minimum(start + kernel, size + pad)
    if include_pad:
        return end - start
    return np.minimum(end, size) - np.maximum(start, 0)


def avg_pool2d(self, kernel_size, stride=(), padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    spec = PL.avg_pool2d.meta(self, kernel_size, stride, padding, ceil_mode, count_include_pad,
                              divisor_override)
    kernel, stride, padding, _ = PL.pool2d_args("avg_pool2d", kernel_size, stride, padding)
    dt = spec.dtype
    x = _batched(compute_data(self, dt))
    out = spec.shape[-2:]
    sums = windows(x, kernel, stride, padding, (1, 1), out).sum(axis=(-2, -1))
    if divisor_override is not None:
        divisor = np.int64(divisor_override)
    else:
        counts = [_window_counts(n, o, k, s, p, count_include_pad) for n, o, k, s, p in
                  zip(x.shape[-2:], out, kernel, stride, padding)]
        divisor = counts[0][:, None] * counts[1]
    if x.dtype.kind in "iu":   # integer average truncates toward zero, as C++ division
        result = np.sign(sums) * (np.abs(sums) // divisor)
    else:
        result = sums / divisor.astype(x.dtype) if isinstance(divisor, np.ndarray) else \
            sums / x.dtype.type(divisor)
    return wrap(result.reshape(spec.shape), dt)


def _bounds(size, out):
    """Adaptive windows: [floor(i*size/out), ceil((i+1)*size/out))."""
    i = np.arange(out)
    return (i * size) // out, -((-(i + 1) * size) // out)


def adaptive_avg_pool2d(self, output_size):
    spec = PL.adaptive_avg_pool2d.meta(self, output_size)
    dt = spec.dtype
    x = compute_data(self, dt)
    for axis, o in ((-2, spec.shape[-2]), (-1, spec.shape[-1])):
        start, end = _bounds(x.shape[axis], o)
        prefix = np.cumsum(x, axis=axis, dtype=np.float64)
        pad = [(0, 0)] * x.ndim
        pad[axis] = (1, 0)
        prefix = np.pad(prefix, pad)
        sums = np.take(prefix, end, axis=axis) - np.take(prefix, start, axis=axis)
        shape = [1] * x.ndim
        shape[axis] = o
        x = (sums / (end - start).reshape(shape)).astype(COMPUTE[dt])
    return wrap(x, dt)


def adaptive_max_pool2d(self, output_size):
    spec, _ = PL.adaptive_max_pool2d.meta(self, output_size)
    dt = spec.dtype
    x = compute_data(self, dt)
    h, w = x.shape[-2:]
    oh, ow = spec.shape[-2:]
    # columns first: the max (and its column) of every row over each column window
    starts, ends = _bounds(w, ow)
    col_vals = np.empty(x.shape[:-1] + (ow,), x.dtype)
    col_args = np.empty(x.shape[:-1] + (ow,), np.int64)
    for j, (s, e) in enumerate(zip(starts, ends)):
        seg = x[..., s:e]
        col_args[..., j] = np.argmax(seg, axis=-1) + s
        col_vals[..., j] = np.take_along_axis(seg, (col_args[..., j] - s)[..., None], -1)[..., 0]
    starts, ends = _bounds(h, oh)
    values = np.empty(x.shape[:-2] + (oh, ow), x.dtype)
    indices = np.empty(x.shape[:-2] + (oh, ow), np.int64)
    for i, (s, e) in enumerate(zip(starts, ends)):
        seg = col_vals[..., s:e, :]
        row = np.argmax(seg, axis=-2)[..., None, :]
        values[..., i, :] = np.take_along_axis(seg, row, -2)[..., 0, :]
        cols = np.take_along_axis(col_args[..., s:e, :], row, -2)[..., 0, :]
        indices[..., i, :] = (row[..., 0, :] + s) * w + cols
    return wrap(values, dt), wrap(indices, D.int64)


KERNELS = {
    PL.max_pool2d_with_indices: max_pool2d_with_indices, PL.avg_pool2d: avg_pool2d,
    PL.adaptive_avg_pool2d: adaptive_avg_pool2d, PL.adaptive_max_pool2d: adaptive_max_pool2d,
}
