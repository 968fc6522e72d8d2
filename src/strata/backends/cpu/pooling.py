"""CPU kernels for ``ops/pooling.py``.

Max/avg pooling loop over the kernel's kh*kw offsets, not over pixels: each offset's strided
slice of the (padded) input holds the element that offset sees in every window, so a pooling is
kh*kw vectorised maximum/add ops over output-sized arrays (reducing the windows' strided view
would copy it, and NumPy reduces axes of 2-3 elements slowly). Adaptive windows differ in size,
so adaptive pooling is done one spatial dim at a time (a rectangle's mean or max is the mean/max
over rows of the mean/max over columns): prefix sums for the mean, and a loop over the output
positions of one dim for the max. max_pool2d and its backward run generated C loops instead
for contiguous float32/float64 inputs (compile/inductor/eager_pool.py).
"""

import numpy as np

from ...core import dtype as D
from ...ops import pooling as PL
from . import native, native_pool
from .array import COMPUTE, compute_data, data, wrap
from .pointwise import _bitwise_where


def _lowest(dtype):
    return -np.inf if dtype.kind == "f" else np.iinfo(dtype).min


def _geometry(size, out, kernel, stride, padding, dilation):
    """Per spatial dim: the span of one kernel offset's positions, and the (left, right)
    padding (more on the right where ceil mode's last window overhangs)."""
    spans = [(o - 1) * s + 1 for o, s in zip(out, stride)]
    pads = [(p, max(p, span + (k - 1) * d - n - p)) for n, p, span, k, d in
            zip(size, padding, spans, kernel, dilation)]
    return spans, pads


def _offset_slices(x, kernel, stride, padding, dilation, out, pad_value=0):
    """Yield ``(code, slice)`` for each kernel offset (code = its row-major number): the
    ``(..., *out)`` elements it sees in every window of ``x`` padded as ``_geometry`` says. Each
    slice is copied into one reused contiguous buffer: NumPy runs the strided gather once, and
    the ops on it at full speed."""
    spans, pads = _geometry(x.shape[-2:], out, kernel, stride, padding, dilation)
    if any(left or right for left, right in pads):
        x = np.pad(x, [(0, 0)] * (x.ndim - 2) + pads, constant_values=pad_value)
    buf = np.empty(x.shape[:-2] + tuple(out), x.dtype)
    for code, (i, j) in enumerate(np.ndindex(*kernel)):
        r, c = i * dilation[0], j * dilation[1]
        np.copyto(buf, x[..., r:r + spans[0]:stride[0], c:c + spans[1]:stride[1]])
        yield code, buf


def _first_inside(out, stride, pad, dilation):
    """Per output position along one dim: how many dilation steps its window's first element
    lies before the input (PyTorch starts each window's max at its first element inside)."""
    start = np.arange(out) * stride - pad
    return -(np.minimum(start, 0) // dilation), start


def max_pool2d_with_indices(self, kernel_size, stride=(), padding=0, dilation=1,
                            ceil_mode=False):
    """PyTorch's loop (``MaxPoolKernel.cpp``): a later element replaces the maximum when it is
    greater or NaN, so ties keep the first, and the last NaN wins; the index is flat within
    the input plane. ``code`` tracks the winning kernel offset; codes only grow, so it is the
    maximum of the codes whose offset replaced the maximum."""
    spec, _ = PL.max_pool2d_with_indices.meta(self, kernel_size, stride, padding, dilation,
                                              ceil_mode)
    kernel, stride, padding, dilation = PL.pool2d_args("max_pool2d", kernel_size, stride,
                                                       padding, dilation)
    x = compute_data(self, spec.dtype)
    out = spec.shape[-2:]
    generated = _generated_max_pool(x, out, kernel, stride, padding, dilation)
    if generated is not None:
        return wrap(generated[0], spec.dtype), wrap(generated[1], D.int64)
    lowest = _lowest(x.dtype)
    (ri, rows), (ci, cols) = (_first_inside(o, s, p, d) for o, s, p, d in
                              zip(out, stride, padding, dilation))
    best = np.full(x.shape[:-2] + tuple(out), lowest, x.dtype)
    code = np.empty(best.shape, np.int32)
    code[...] = ri[:, None] * kernel[1] + ci
    replace = np.empty(best.shape, bool)
    for k, s in _offset_slices(x, kernel, stride, padding, dilation, out, lowest):
        np.greater(s, best, out=replace)
        if x.dtype.kind == "f":
            replace |= np.isnan(s)
        np.maximum(best, s, out=best)     # NaN-propagating, so equal to the loop's choice
        np.maximum(code, replace * code.dtype.type(k), out=code)
    ki, kj = np.divmod(np.arange(kernel[0] * kernel[1]), kernel[1])
    offset = ki * dilation[0] * x.shape[-1] + kj * dilation[1]
    indices = (rows[:, None] * x.shape[-1] + cols) + offset[code]
    return wrap(best, spec.dtype), wrap(indices, D.int64)


# Output rows at least this long vectorise well in the generated row loop; shorter ones with
# padding or overhanging windows take NumPy's offset-by-offset path, which is faster there.
GENERATED_POOL_MIN_ROW = 16


# Note [Eager 2x2 pools]: the most common pool, 2x2 with stride 2 and no padding, takes the
# compiled graph's one-pass kernel (``max_pool2d_2x2``, Note [2x2 pools in one pass] in
# compile/inductor/eager_pool.py): the general "inside" kernel gathers each window slot's
# elements over the whole plane, 1.9 ms for 32x32x26x26 float32 (torch: 2.1 ms), the 2x2 one
# reads each output row's two input rows as pairs: 0.2 ms. Every generated pool now runs on the
# native pool (the Python pool's threads wake in 20-50 us).
def _generated_max_pool(x, out, kernel, stride, padding, dilation):
    """(values, indices) from the generated C loops (compile/inductor/eager_pool.py) for a
    contiguous float input, else None."""
    if not (x.dtype in native.GENERATED_DTYPES and x.flags.c_contiguous and x.size):
        return None
    (h, w), (oh, ow) = x.shape[-2:], out
    inside = not any(padding) and all((o - 1) * s + (k - 1) * d < n for o, s, k, d, n in
                                      zip(out, stride, kernel, dilation, (h, w)))
    if not inside and ow < GENERATED_POOL_MIN_ROW:
        return None
    two_by_two = inside and tuple(kernel) == tuple(stride) == (2, 2) and \
        tuple(dilation) == (1, 1)
    kind = "_2x2" if two_by_two else "_inside" if inside else ""
    fn = native.function("eager_pool", f"max_pool2d{kind}_{native.dtype_name(x.dtype)}")
    if fn is None:
        return None
    planes = x.size // (h * w)
    values = np.empty(x.shape[:-2] + tuple(out), x.dtype)
    indices = np.empty(values.shape, np.int64)
    src, dst, where = x.ctypes.data, values.ctypes.data, indices.ctypes.data
    if two_by_two:
        args = [src, dst, where, h, w, oh, ow]
    elif inside:
        base = (np.arange(oh)[:, None] * (stride[0] * w) + np.arange(ow) * stride[1]).ravel()
        args = [src, base.ctypes.data, dst, where, h * w, oh * ow, *kernel, dilation[0] * w,
                dilation[1]]
    else:
        args = [src, dst, where, h, w, *out, *kernel, *stride, *padding, *dilation]
    native_pool.parallel_call(fn, args, 0, planes,
                              max(1, native.GENERATED_GRAIN // (oh * ow * kernel[0] * kernel[1])))
    return values, indices


def _generated_max_pool_backward(g, index, shape):
    """The input gradient from the generated C loop: each output's gradient added at its index,
    in output order (ATen's); None where the NumPy path must run."""
    if not (g.dtype in native.GENERATED_DTYPES and index.dtype == np.int64
            and index.shape == g.shape):
        return None
    # one copy of a strided gradient (``sum().backward()`` expands a scalar) is cheaper than the
    # NumPy path's pass per kernel offset
    g, index = np.ascontiguousarray(g), np.ascontiguousarray(index)
    fn = native.function("eager_pool", f"max_pool2d_backward_{native.dtype_name(g.dtype)}")
    if fn is None:
        return None
    plane_in, plane_out = shape[-2] * shape[-1], g.shape[-2] * g.shape[-1]
    if not plane_out:
        return np.zeros(shape, g.dtype)
    planes = g.size // plane_out
    grad = np.empty(shape, g.dtype)   # each plane zeroed by the kernel, on the pool
    src, where, dst = g.ctypes.data, index.ctypes.data, grad.ctypes.data
    grain = max(1, native.GENERATED_GRAIN // max(1, plane_in + plane_out))
    native_pool.parallel_call(fn, [src, where, dst, plane_in, plane_out], 0, planes, grain)
    return grad


def max_pool2d_with_indices_backward(grad_output, self, kernel_size, stride, padding, dilation,
                                     ceil_mode, indices):
    """Each output's gradient goes to the element its index names: for each kernel offset, the
    outputs whose index is that offset's element add into its strided slice of the (padded)
    input gradient (one vectorised add per offset; ``np.add.at`` is slower)."""
    spec = PL.max_pool2d_with_indices_backward.meta(grad_output, self, kernel_size, stride,
                                                    padding, dilation, ceil_mode, indices)
    kernel, stride, padding, dilation = PL.pool2d_args("max_pool2d", kernel_size, stride,
                                                       padding, dilation)
    g = compute_data(grad_output, spec.dtype)
    index = data(indices)
    generated = _generated_max_pool_backward(g, index, tuple(spec.shape))
    if generated is not None:
        return wrap(generated, spec.dtype)
    h, w = spec.shape[-2:]
    out = g.shape[-2:]
    spans, pads = _geometry((h, w), out, kernel, stride, padding, dilation)
    grad = np.zeros(g.shape[:-2] + (h + sum(pads[0]), w + sum(pads[1])), g.dtype)
    rows = np.arange(out[0]) * stride[0] - padding[0]
    cols = np.arange(out[1]) * stride[1] - padding[1]
    for i, j in np.ndindex(*kernel):
        r, c = rows + i * dilation[0], cols + j * dilation[1]
        inside = ((r >= 0) & (r < h))[:, None] & (c >= 0) & (c < w)
        flat = np.where(inside, r[:, None] * w + c, -1)   # -1: this offset sees padding there
        # a select, not g * mask: a NaN or inf gradient must reach only its own element
        hit = _bitwise_where(index == flat, g, 0, g.dtype, g.shape)
        r0, c0 = i * dilation[0], j * dilation[1]
        grad[..., r0:r0 + spans[0]:stride[0], c0:c0 + spans[1]:stride[1]] += hit
    return wrap(grad[..., pads[0][0]:pads[0][0] + h, pads[1][0]:pads[1][0] + w], spec.dtype)


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
    x = compute_data(self, dt)
    out = spec.shape[-2:]
    sums = np.zeros(spec.shape, x.dtype)
    for _, s in _offset_slices(x, kernel, stride, padding, (1, 1), out):
        sums += s
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
    return wrap(result, dt)


def _bounds(size, out):
    """Adaptive windows: [floor(i*size/out), ceil((i+1)*size/out))."""
    i = np.arange(out)
    return (i * size) // out, -((-(i + 1) * size) // out)


def adaptive_avg_pool2d(self, output_size):
    spec = PL.adaptive_avg_pool2d.meta(self, output_size)
    dt = spec.dtype
    x = compute_data(self, dt)
    (h, w), (oh, ow) = x.shape[-2:], spec.shape[-2:]
    if oh and ow and not h % oh and not w % ow:
        # equal windows that tile the plane (a global pooling to 1x1, 32 -> 4): each window's
        # float64 sum at once, as the prefix sums below give it (1x1 of 8x16x32x32: 736 ->
        # ~60 us)
        tiles = x.reshape(*x.shape[:-2], oh, h // oh, ow, w // ow)
        sums = tiles.sum(axis=(-3, -1), dtype=np.float64)
        return wrap((sums / ((h // oh) * (w // ow))).astype(COMPUTE[dt], order="C"), dt)
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
    PL.max_pool2d_with_indices: max_pool2d_with_indices,
    PL.max_pool2d_with_indices_backward: max_pool2d_with_indices_backward,
    PL.avg_pool2d: avg_pool2d,
    PL.adaptive_avg_pool2d: adaptive_avg_pool2d, PL.adaptive_max_pool2d: adaptive_max_pool2d,
}
