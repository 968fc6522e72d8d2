"""CPU kernels for ``ops/nn.py``: convolution by im2col + BLAS, col2im, padding and upsampling.

Convolution never loops over pixels: ``windows`` is a strided view of every kernel window
(``sliding_window_view``), reshaped once into the im2col matrix, and one batched matmul per group
multiplies it by the weights. The transposed convolution is the adjoint: a matmul into columns,
then ``col2im`` adds each kernel offset's slab into the output (a loop over kernel positions).
That is the NumPy path. A 2-d float convolution runs generated C copies
(compile/inductor/eager_conv.py) over blocks on the pool, each block one BLAS-ready GEMM (Note
[Batch-blocked convolution]).
"""

import math

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from ...ops import nn as NN
from . import array, blas, native, native_pool
from .array import compute_data, data, parallel_for, wrap
from .linalg import matmul


def windows(x, kernel, stride, padding, dilation, out, pad_value=0):
    """The view ``(N, C, *out, *kernel)`` of every pooling/conv window of ``x`` (N, C, *spatial),
    padded by ``padding`` on both sides (and more on the right when ceil mode needs it)."""
    nd = len(kernel)
    extents = [(o - 1) * s + (k - 1) * d + 1 for o, s, k, d in zip(out, stride, kernel, dilation)]
    pads = [(p, max(p, e - n - p)) for n, p, e in zip(x.shape[2:], padding, extents)]
    if any(left or right for left, right in pads):
        x = np.pad(x, [(0, 0), (0, 0)] + pads, constant_values=pad_value)
    span = [(k - 1) * d + 1 for k, d in zip(kernel, dilation)]
    view = sliding_window_view(x, span, axis=tuple(range(2, 2 + nd)))
    index = (slice(None), slice(None)) + \
        tuple(slice(0, (o - 1) * s + 1, s) for o, s in zip(out, stride)) + \
        tuple(slice(None, None, d) for d in dilation)
    return view[index]


def col2im_nd(cols, out, kernel, stride, padding, dilation):
    """Sum the columns ``(N, C, *kernel, *blocks)`` back into an ``(N, C, *out)`` image: the
    adjoint of ``windows``. One vectorized add per kernel offset."""
    n, c = cols.shape[:2]
    nd = len(kernel)
    blocks = cols.shape[2 + nd:]
    full = tuple(o + 2 * p for o, p in zip(out, padding))
    buf = np.zeros((n, c) + full, cols.dtype)
    for offset in np.ndindex(*kernel):
        dst = tuple(slice(k * d, k * d + (b - 1) * s + 1, s)
                    for k, d, b, s in zip(offset, dilation, blocks, stride))
        buf[(slice(None), slice(None)) + dst] += cols[(slice(None), slice(None)) + offset]
    if not any(padding):
        return buf
    crop = tuple(slice(p, p + o) for p, o in zip(padding, out))
    return np.ascontiguousarray(buf[(slice(None), slice(None)) + crop])


def _group_matmul(weights, cols, out=None):
    """``weights`` (G, M, K) @ ``cols`` (G, K, P) into ``out`` (fresh if None): one large GEMM
    per group, which BLAS runs much faster than NumPy's broadcast batch of per-sample GEMMs."""
    if weights.shape[0] == 1:
        if out is None:
            return matmul(weights[0], cols[0])[None]
        return matmul(weights[0], cols[0], out=out[0])[None]
    return matmul(weights, cols, out=out)


# Column-matrix rows shorter than this (N * oh * ow: a weight gradient's huge kernel and tiny
# output) cost the C loop more per row than NumPy's strided copy.
GENERATED_IM2COL_MIN_ROW = 64
# Note [Batch-blocked convolution]: a 2-d float convolution (and its input gradient, the
# transposed convolution) runs over blocks of samples on the pool, each block its im2col (or
# GEMM into columns), one GEMM per group, and its col2im, so that the block's column matrix is
# still in the core's cache (L2: 1 MiB here) when the GEMM or col2im reads it, instead of a
# whole batch's matrix written to memory and read back (4.4 MiB for 32x32x13x13, 3x3). A
# block covers at least BLOCK_MIN_POSITIONS output positions (fewer would re-read the weights
# per block: a 1x1 output would be one matrix-vector product per sample) and, where the
# columns stay under BLOCK_COLUMN_BYTES, at least BLOCK_MIN_MACS multiply-adds (a smaller GEMM
# runs slower per multiply-add: the first layer of a CNN, one input channel, has 9 rows). A
# block of one sample reads and writes the sample's own (C, H*W) plane: no transposed copy of
# the batch on either side. Block bounds depend on the thread count only, so results repeat
# run to run. A weight gradient blocks its channels instead (``_conv_by_kernel_rows``).
BLOCK_MIN_POSITIONS = 64
BLOCK_MIN_MACS = 1 << 21
BLOCK_COLUMN_BYTES = 512 << 10


def _samples_per_block(column_rows, plane, itemsize, filters):
    positions = -(-BLOCK_MIN_POSITIONS // max(plane, 1))
    wanted = -(-BLOCK_MIN_MACS // max(1, plane * column_rows * filters))
    fits = BLOCK_COLUMN_BYTES // max(1, column_rows * plane * itemsize)
    return max(1, positions, min(wanted, fits))


def _generated(name, x, kernel):
    """The generated 2-d kernel ``name`` for ``x``'s dtype, or None (NumPy must run)."""
    if len(kernel) != 2 or x.dtype not in native.GENERATED_DTYPES or not x.size:
        return None
    return native.function("eager_conv", f"{name}_{native.dtype_name(x.dtype)}")


def _driver(name, x):
    """(the generated convolution driver ``name`` for ``x``'s dtype, BLAS's GEMM) or None: Note
    [Convolution drivers] in compile/inductor/eager_conv.py."""
    gemm = blas.gemm(native.dtype_name(x.dtype))
    if gemm is None:
        return None
    fn = native.function("eager_conv", f"{name}_{native.dtype_name(x.dtype)}")
    return None if fn is None else (fn, gemm)


def _params(*values):
    """A driver's geometry: int64s in the order its C reads them, kept alive by the caller."""
    return np.array(values, np.int64)


def _run_driver(run, pointers, geometry, n, grain, scratch, dtype):
    """A convolution driver ``run(*pointers, *scratch pointers, lo, hi)`` over ``[0, n)`` in
    chunks on the native pool (Note [Convolution drivers]): ``geometry`` (a list of ints) gets
    the chunk length and each scratch's elements per chunk appended, the C's last
    parameters, and each scratch array holds every chunk's."""
    chunk = native_pool.chunk_step(n, grain) or max(n, 1)
    chunks = -(-n // chunk)
    buffers = [np.empty(chunks * size, dtype) for size in scratch]
    params = _params(*geometry, chunk, *scratch)
    args = [*pointers[:1], params.ctypes.data, *pointers[1:],
            *(b.ctypes.data if b.size else None for b in buffers)]
    args = [0 if a is None else a for a in args]     # (NULL, as a task's int64 context)
    if native_pool.library() is not None and getattr(run, "strata_task", None) is not None:
        native_pool.parallel_call(run, args, 0, n, grain)
    else:   # the Python pool, in the same chunks (each takes its scratch by its start)
        parallel_for(0, chunks, 1, lambda a, b: [run(*args, i * chunk, min(n, i * chunk + chunk))
                                                 for i in range(a, b)])


def _im2col_args(x, kernel, stride, padding, dilation, out):
    """``im2col2d``'s arguments between the two pointers and ``[lo, hi)``, ``x`` read through
    its strides."""
    steps = tuple(s // x.itemsize for s in x.strides)
    return (*x.shape, *steps, *out, *kernel, *stride, *padding, *dilation)


def _conv_blocked(fn, x, w, bias, stride, padding, dilation, groups, out, relu):
    """Note [Batch-blocked convolution]: per block, the generated im2col then one GEMM per
    group, written straight into the block's samples when the block is one sample, and the
    ``bias`` (an (F,) array, or None) added there, then a ReLU if ``relu``, while the block is
    in cache."""
    n, c = x.shape[:2]
    f, kernel = w.shape[0], w.shape[2:]
    plane = out[0] * out[1]
    rows = c * kernel[0] * kernel[1]
    step = _samples_per_block(rows // groups, plane, x.itemsize, f // groups)
    image = np.empty((n, f) + tuple(out), x.dtype)   # owns its memory: ``wrap`` copies views
    args = _im2col_args(x, kernel, stride, padding, dilation, out)[1:]
    driver = _driver("conv2d", x)
    if driver is not None:
        run_blocks, gemm = driver
        weights = np.ascontiguousarray(w)
        bias = None if bias is None else np.ascontiguousarray(bias)
        pointers = (gemm.address, x.ctypes.data, weights.ctypes.data,
                    None if bias is None else bias.ctypes.data, image.ctypes.data)
        block = min(step, n)
        _run_driver(run_blocks, pointers, [gemm.ilp64, *args, groups, f, step, relu], n, step,
                    (rows * block * plane, f * block * plane if block > 1 else 0), x.dtype)
        return image
    weights = w.reshape(groups, f // groups, -1)
    result = image.reshape(n, f, plane)
    src, sample = x.ctypes.data, x.strides[0]

    def run(lo, hi):
        buffer = np.empty(rows * min(step, hi - lo) * plane, x.dtype)
        address = buffer.ctypes.data   # once per chunk: ``arr.ctypes`` costs microseconds
        for first in range(lo, hi, step):
            m = min(step, hi - first)
            cols = buffer[:rows * m * plane].reshape(groups, rows // groups, m * plane)
            fn(src + first * sample, address, m, *args, 0, rows)
            if m == 1:
                _group_matmul(weights, cols, result[first].reshape(groups, f // groups, plane))
            else:
                block = _group_matmul(weights, cols).reshape(f, m, plane)
                result[first:first + m] = block.swapaxes(0, 1)
            if bias is not None:
                result[first:first + m] += bias[:, None]
            if relu:
                _rectified(result[first:first + m])

    parallel_for(0, n, step, run)
    return image


# Kernel rows at least this long make the kernel-row columns worth it: shorter ones (a 3x3
# kernel over a 1x1 output) copy runs as short as the usual layout's, whose GEMM is faster.
KERNEL_ROWS_MIN_RUN = 8


# Note [Kernel-row GEMMs]: a weight gradient's block of channels is one GEMM
# (N*oh*ow, C*kh*kw) @ (C*kh*kw, F) when it has at least this many rows (1.3x faster on the
# 288 rows of a 32x32x13x13 batch's 3x3 kernel than one GEMM per channel), else one GEMM per
# channel, accumulated: the first layer's 9 rows of 32 channels of 26x26 ran at 24 GFLOP/s
# as one (9, 21632) @ (21632, 32) GEMM and at 76 as 32 (9, 676) @ (676, 32) ones.
KERNEL_ROWS_PER_CHANNEL = 64


def _even_blocks(size, most):
    """A block length of at most ``most`` cutting ``size`` into a multiple of the thread
    count of blocks where it can: 32 channels in blocks of 21 left one thread a third idle."""
    blocks = -(-size // most)
    threads = array.NUM_THREADS
    return -(-size // (-(-blocks // threads) * threads))


# Elements of the partial sums added per chunk (ATen's grain): their sum and transposed copy
# took 0.1-0.3 ms of the CNN step's second weight gradient on the caller's thread alone.
PARTIAL_SUM_GRAIN = 1 << 15


def _conv_by_kernel_rows(fn, x, w, stride, padding, dilation, out):
    """A kernel larger than its output (the weight gradient's convolution, whose kernel is the
    output gradient): GEMMs over every kernel position, columns ``(N, oh, ow, C, kh, kw)``.

    The usual layout copies runs of ``ow`` elements, here a few; this one copies runs of ``kw``.
    It is the same im2col loop with the roles exchanged: ``x`` read as (C, N, H, W) through
    its strides, the output as the kernel, stride and dilation swapped. The channels are cut
    into blocks whose columns fit BLOCK_COLUMN_BYTES (Note [Batch-blocked convolution]), each
    block one GEMM into its own partial sum on the pool; the partial sums are added in block
    order (in C, the samples split over the pool), so the result does not depend on which
    thread ran which block."""
    n, c = x.shape[:2]
    f, kernel = w.shape[0], w.shape[2:]
    area = kernel[0] * kernel[1]
    rows = n * out[0] * out[1]
    step = _even_blocks(c, max(1, BLOCK_COLUMN_BYTES // (rows * area * x.itemsize)))
    starts = range(0, c, step)
    partial = np.empty((len(starts), rows, f), x.dtype)
    driver = _driver("conv2d_kernel_rows", x)
    if driver is not None:
        _kernel_rows_by_driver(*driver, x, w, stride, padding, dilation, out, step, partial)
    else:
        _kernel_rows_by_numpy(fn, x, w, stride, padding, dilation, out, starts, partial)
    image = np.empty((n, f) + tuple(out), x.dtype)   # owns its memory: ``wrap`` copies views
    add = native.function("eager_conv", f"sum_partials_{native.dtype_name(x.dtype)}")   # built with ``fn``
    pointers = (partial.ctypes.data, image.ctypes.data, len(starts), rows, rows // n, f)
    native_pool.parallel_call(add, list(pointers), 0, n,
                              max(1, PARTIAL_SUM_GRAIN // (rows * f * len(starts) // n)))
    return image


def _kernel_rows_by_driver(run_blocks, gemm, x, w, stride, padding, dilation, out, step,
                           partial):
    """Each channel block's partial sum by the generated driver (its modes: Note [Kernel-row
    GEMMs]): ``w`` read in place where BLAS can (each channel an (F, kh*kw) matrix of unit
    inner stride), else copied once."""
    f, kernel = w.shape[0], w.shape[2:]
    rows, area = partial.shape[1], kernel[0] * kernel[1]
    wf, wc, wh, ww = (s // w.itemsize for s in w.strides)
    if f == 1:
        wf = max(wf, x.shape[1] * area)   # one row: BLAS checks its stride, never uses it
    if not (wh == kernel[1] and ww == 1 and wf >= area):
        w = np.ascontiguousarray(w)
        wf, wc = (s // w.itemsize for s in w.strides[:2])
    if rows < KERNEL_ROWS_PER_CHANNEL:
        mode = 0
    else:
        mode = 1 if wc == area and wf >= x.shape[1] * area else 2
    geometry = [gemm.ilp64, *_im2col_args(x, kernel, stride, padding, dilation, out), step, f,
                wf, wc, mode]
    pointers = (gemm.address, x.ctypes.data, w.ctypes.data, partial.ctypes.data)
    columns = (rows + (f if mode == 2 else 0)) * step * area
    _run_driver(run_blocks, pointers, geometry, partial.shape[0], 1, (columns,), x.dtype)


def _kernel_rows_by_numpy(fn, x, w, stride, padding, dilation, out, starts, partial):
    """Each channel block's partial sum: the generated im2col, then ``np.dot``."""
    c = x.shape[1]
    f, kernel = w.shape[0], w.shape[2:]
    area = kernel[0] * kernel[1]
    rows = partial.shape[1]
    step = starts.step
    flat = w.reshape(f, c * area) if w.flags.c_contiguous else None
    swapped = x.swapaxes(0, 1)
    args = _im2col_args(swapped, out, dilation, padding, stride, kernel)[1:]
    src, channel = swapped.ctypes.data, swapped.strides[0]

    def run(lo, hi):
        for block in range(lo, hi):
            first = starts[block]
            size = min(step, c - first)
            cols = np.empty((rows, size * area), x.dtype)
            fn(src + first * channel, cols.ctypes.data, size, *args, 0, rows)
            # a contiguous kernel's slice is a view; a transposed one (the output gradient's)
            # is copied here, block by block, into cache for the GEMM
            weights = (flat[:, first * area:(first + size) * area] if flat is not None
                       else w[:, first:first + size].reshape(f, size * area))
            # (N*oh*ow, F): BLAS runs this orientation 20% faster than (F, C*kh*kw) @ cols^T
            np.dot(cols, weights.T, out=partial[block])

    parallel_for(0, len(starts), 1, run)


def _conv(x, w, bias, stride, padding, dilation, groups, out, relu):
    n, c = x.shape[:2]
    f, kernel = w.shape[0], w.shape[2:]
    nd = len(kernel)
    fn = _generated("im2col2d", x, kernel)
    if fn is not None:
        cg, fg = c // groups, f // groups
        if kernel[1] >= KERNEL_ROWS_MIN_RUN and kernel[1] > out[1] \
                and math.prod(kernel) > math.prod(out) \
                and cg * math.prod(kernel) >= GENERATED_IM2COL_MIN_ROW:
            parts = [_conv_by_kernel_rows(fn, x[:, g * cg:(g + 1) * cg], w[g * fg:(g + 1) * fg],
                                          stride, padding, dilation, out)
                     for g in range(groups)]
            res = parts[0] if groups == 1 else np.concatenate(parts, axis=1)
            return _epilogue(res, bias, relu)
        if n * math.prod(out) >= GENERATED_IM2COL_MIN_ROW:
            return _conv_blocked(fn, x, w, bias, stride, padding, dilation, groups, out, relu)
    view = windows(x, kernel, stride, padding, dilation, out)          # (N, C, *out, *kernel)
    order = (1,) + tuple(range(2 + nd, 2 + 2 * nd)) + (0,) + tuple(range(2, 2 + nd))
    cols = np.ascontiguousarray(view.transpose(order))                 # (C, *kernel, N, *out)
    cols = cols.reshape(groups, c // groups * math.prod(kernel), n * math.prod(out))
    res = _group_matmul(w.reshape(groups, f // groups, -1), cols)      # (G, F/G, N*L)
    res = res.reshape((f, n) + tuple(out))
    res = np.ascontiguousarray(np.swapaxes(res, 0, 1))
    return _epilogue(res, bias, relu)


def _conv_transpose_blocked(fn, x, weights, fg, groups, out, kernel, stride, padding,
                            dilation):
    """Note [Batch-blocked convolution] for the transposed convolution: per block, one GEMM per
    group into columns, then the generated col2im into the block's samples."""
    n, cin = x.shape[:2]
    spatial = x.shape[2:]
    plane = spatial[0] * spatial[1]
    channels = groups * fg
    step = _samples_per_block(fg * kernel[0] * kernel[1], plane, x.itemsize, cin // groups)
    x = np.ascontiguousarray(x)
    image = np.empty((n, channels, *out), x.dtype)
    args = (*out, *spatial, *kernel, *stride, *padding, *dilation)
    dst, sample = image.ctypes.data, image.strides[0]

    def run(lo, hi):
        for first in range(lo, hi, step):
            m = min(step, hi - first)
            block = x[first] if m == 1 else np.swapaxes(x[first:first + m], 0, 1)
            inputs = np.ascontiguousarray(block).reshape(groups, cin // groups, m * plane)
            cols = _group_matmul(weights, inputs)                      # (G, Fg*K, m*L)
            fn(cols.ctypes.data, dst + first * sample, m, channels, *args, 0, m * channels)

    parallel_for(0, n, step, run)
    return image


def _conv_transpose_channels_last(fn, x, w, out, kernel, stride, padding, dilation):
    """The transposed convolution of one group over blocks of samples (Note [Batch-blocked
    convolution]): one GEMM ``x^T (m*L, Cin) @ w (Cin, kh*kw*C)`` makes the block's columns
    channels-last, (bh, bw, kh, kw, C) per sample, and the generated col2im adds each as a run
    of C channels (three times faster than adding runs of ``bw``, a few elements, into the
    image's rows), then writes the sample's (C, h, w) image."""
    n, cin = x.shape[:2]
    channels, spatial = w.shape[1], x.shape[2:]
    plane = spatial[0] * spatial[1]
    weights = np.ascontiguousarray(w.transpose(0, 2, 3, 1)).reshape(cin, -1)
    width = weights.shape[1]
    step = _samples_per_block(width, plane, x.itemsize, cin)
    x = np.ascontiguousarray(x).reshape(n, cin, plane)
    image = np.empty((n, channels, *out), x.dtype)
    args = (channels, *out, *spatial, *kernel, *stride, *padding, *dilation)
    driver = _driver("conv_transpose2d", x)
    if driver is not None:
        run_samples, gemm = driver
        pointers = (gemm.address, x.ctypes.data, weights.ctypes.data, image.ctypes.data)
        _run_driver(run_samples, pointers, [gemm.ilp64, cin, plane, width, *args], n, step,
                    (plane * width + channels * out[0] * out[1],), x.dtype)
        return image
    dst, sample = image.ctypes.data, image.strides[0]

    def run(lo, hi):   # one buffer each per chunk: ``arr.ctypes`` costs microseconds
        scratch = np.empty(channels * out[0] * out[1], x.dtype)
        buffer = np.empty(min(step, hi - lo) * plane * width, x.dtype)
        address, pointer = buffer.ctypes.data, scratch.ctypes.data
        for first in range(lo, hi, step):
            m = min(step, hi - first)
            inputs = x[first].T if m == 1 else x[first:first + m].transpose(0, 2, 1)
            cols = buffer[:m * plane * width].reshape(m * plane, width)
            np.dot(inputs.reshape(m * plane, cin), weights, out=cols)
            for i in range(m):
                fn(address + i * plane * width * x.itemsize, dst + (first + i) * sample,
                   pointer, *args)

    parallel_for(0, n, step, run)
    return image


def _conv_transpose(x, w, stride, padding, dilation, groups, out):
    n, cin = x.shape[:2]
    fg, kernel = w.shape[1], w.shape[2:]
    spatial = x.shape[2:]
    nd = len(kernel)
    if groups == 1:
        fn = _generated("col2im2d_channels_last", x, kernel)
        if fn is not None:
            return _conv_transpose_channels_last(fn, x, w, out, kernel, stride, padding,
                                                 dilation)
    weights = w.reshape(groups, cin // groups, -1).transpose(0, 2, 1)  # (G, Fg*K, Cin/G)
    fn = _generated("col2im2d", x, kernel)
    if fn is not None:
        return _conv_transpose_blocked(fn, x, weights, fg, groups, out, kernel, stride, padding,
                                       dilation)
    inputs = np.ascontiguousarray(np.swapaxes(x, 0, 1)).reshape(groups, cin // groups, -1)
    cols = _group_matmul(weights, inputs)                              # (G, Fg*K, N*L)
    cols = cols.reshape((groups * fg,) + tuple(kernel) + (n,) + tuple(spatial))
    order = (1 + nd, 0) + tuple(range(1, 1 + nd)) + tuple(range(2 + nd, 2 + 2 * nd))
    return col2im_nd(cols.transpose(order), out, kernel, stride, padding, dilation)


def convolution_arrays(x, w, bias, stride, padding, dilation, transposed, groups, out,
                       relu=False):
    """The convolution of the arrays ``x`` and ``w`` (and ``bias``, or None) of one dtype into
    a fresh contiguous array of spatial size ``out``; ``stride``, ``padding`` and ``dilation``
    one entry per spatial dim; ``relu``: ReLU's result (``x < 0 ? 0 : x``) instead. The compiled
    graph's wrapper calls it as an Extern (compile/inductor/lowering_nn.py), so compiled and
    eager convolutions run the same blocks. A batch-blocked forward adds the bias and applies
    the ReLU per block, in cache; the others after."""
    if not transposed:
        return _conv(x, w, bias, stride, padding, dilation, groups, tuple(out), relu)
    result = _conv_transpose(x, w, stride, padding, dilation, groups, tuple(out))
    return _epilogue(result, bias, relu)


def convolution_relu(x, w, bias, stride, padding, dilation, groups, out):
    """``relu(conv2d(x, w, bias))`` of arrays: a compiled graph's Extern for a convolution only
    a ReLU reads (compile/inductor/lowering_nn.py ``_eager_convolution``)."""
    return convolution_arrays(x, w, bias, stride, padding, dilation, False, groups, out, True)


def _epilogue(out, bias, relu):
    """``out`` (N, F, ...) plus the (F,) ``bias`` (or None), then ReLU'd if ``relu``."""
    if bias is not None:
        out += bias.reshape((1, -1) + (1,) * (out.ndim - 2))
    return _rectified(out) if relu else out


def _rectified(out):
    """``out`` with its negative elements set to 0 in place (NaN and -0.0 kept: ReLU's
    ``x < 0 ? 0 : x``, the generated kernels' and the eager kernel's)."""
    np.copyto(out, 0, where=out < 0)
    return out


def convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding,
                groups):
    spec = NN.convolution.meta(input, weight, bias, stride, padding, dilation, transposed,
                               output_padding, groups)
    dt = spec.dtype
    stride, padding, dilation, _ = NN.conv_params(weight, stride, padding, dilation,
                                                  output_padding)
    x, w = compute_data(input, dt), compute_data(weight, dt)
    b = None if bias is None else compute_data(bias, dt)
    out = convolution_arrays(x, w, b, stride, padding, dilation, transposed, groups,
                             spec.shape[2:])
    return wrap(out, dt)


def _pairs(*values):
    return [(v, v) if isinstance(v, int) else tuple(v) for v in values]


def im2col(self, kernel_size, dilation, padding, stride):
    spec = NN.im2col.meta(self, kernel_size, dilation, padding, stride)
    kernel, dilation, padding, stride = _pairs(kernel_size, dilation, padding, stride)
    x = data(self)
    batched = x.ndim == 4
    x = x if batched else x[None]
    out = [NN._blocks(n, k, d, p, s) for n, k, d, p, s in zip(x.shape[2:], kernel, dilation,
                                                               padding, stride)]
    view = windows(x, kernel, stride, padding, dilation, out)          # (N, C, oh, ow, kh, kw)
    cols = view.transpose(0, 1, 4, 5, 2, 3).reshape(x.shape[0], -1, out[0] * out[1])
    return wrap(np.ascontiguousarray(cols if batched else cols[0]), spec.dtype)


def col2im(self, output_size, kernel_size, dilation, padding, stride):
    spec = NN.col2im.meta(self, output_size, kernel_size, dilation, padding, stride)
    output_size, kernel, dilation, padding, stride = _pairs(output_size, kernel_size, dilation,
                                                            padding, stride)
    x = data(self)
    batched = x.ndim == 3
    x = x if batched else x[None]
    blocks = [NN._blocks(n, k, d, p, s) for n, k, d, p, s in zip(output_size, kernel, dilation,
                                                                  padding, stride)]
    cols = x.reshape((x.shape[0], -1) + tuple(kernel) + tuple(blocks))
    out = col2im_nd(cols, output_size, kernel, stride, padding, dilation)
    return wrap(out if batched else out[0], spec.dtype)


def constant_pad_nd(self, pad, value=0):
    spec = NN.constant_pad_nd.meta(self, pad, value)
    x = data(self)
    out = np.full(spec.shape, value, dtype=x.dtype)
    src, dst = [slice(None)] * x.ndim, [slice(None)] * x.ndim
    for i in range(len(pad) // 2):   # pad lists pairs from the last dim backwards
        d = x.ndim - 1 - i
        left, right = pad[2 * i], pad[2 * i + 1]
        src[d] = slice(max(-left, 0), x.shape[d] - max(-right, 0))
        dst[d] = slice(max(left, 0), spec.shape[d] - max(right, 0))
    if out.size and x.size:
        out[tuple(dst)] = x[tuple(src)]
    return wrap(out, spec.dtype)


def _mode_pad(op, numpy_mode):
    def kernel(self, padding):
        spec = op.meta(self, padding)
        x = compute_data(self, spec.dtype)
        dims = len(padding) // 2
        widths = [(0, 0)] * (x.ndim - dims) + \
            [(padding[2 * i], padding[2 * i + 1]) for i in reversed(range(dims))]
        return wrap(np.pad(x, widths, mode=numpy_mode), spec.dtype)
    kernel.__name__ = kernel.__qualname__ = op.name
    return kernel


# --- upsampling -----------------------------------------------------------------------------------

def _nearest(op, exact):
    def kernel(self, output_size, *scales):
        spec = op.meta(self, output_size, *scales)
        out = data(self)
        for i, (n, o) in enumerate(zip(self.shape[2:], output_size)):
            scale = scales[i] if i < len(scales) else None
            out = np.take(out, NN.nearest_source(n, o, scale, exact), axis=2 + i)
        return wrap(out, spec.dtype)
    kernel.__name__ = kernel.__qualname__ = op.name
    return kernel


def _linear(op):
    def kernel(self, output_size, align_corners, *scales):
        spec = op.meta(self, output_size, align_corners, *scales)
        out = compute_data(self, spec.dtype)
        cdt = out.dtype
        for i, (n, o) in enumerate(zip(self.shape[2:], output_size)):
            axis = 2 + i
            i0, i1, w0, w1 = NN.linear_taps(n, o, align_corners,
                                            scales[i] if i < len(scales) else None, cdt)
            shape = [1] * out.ndim
            shape[axis] = o
            out = np.take(out, i0, axis=axis) * w0.reshape(shape) + \
                np.take(out, i1, axis=axis) * w1.reshape(shape)
        return wrap(out, spec.dtype)
    kernel.__name__ = kernel.__qualname__ = op.name
    return kernel


def _cubic(op):
    """Bicubic: along each dim, four taps (ops/nn.py's ``cubic_taps``), one dim after the
    other."""
    def kernel(self, output_size, align_corners, *scales):
        spec = op.meta(self, output_size, align_corners, *scales)
        out = compute_data(self, spec.dtype)
        for i, (n, o) in enumerate(zip(self.shape[2:], output_size)):
            axis = 2 + i
            shape = [1] * out.ndim
            shape[axis] = o
            taps = NN.cubic_taps(n, o, align_corners, scales[i] if i < len(scales) else None,
                                 out.dtype)
            out = sum(np.take(out, idx, axis=axis) * w.reshape(shape) for idx, w in taps)
        return wrap(out, spec.dtype)
    kernel.__name__ = kernel.__qualname__ = op.name
    return kernel


KERNELS = {
    NN.convolution: convolution, NN.im2col: im2col, NN.col2im: col2im,
    NN.constant_pad_nd: constant_pad_nd,
    NN.upsample_nearest1d: _nearest(NN.upsample_nearest1d, False),
    NN.upsample_nearest2d: _nearest(NN.upsample_nearest2d, False),
    NN.upsample_nearest_exact1d: _nearest(NN.upsample_nearest_exact1d, True),
    NN.upsample_nearest_exact2d: _nearest(NN.upsample_nearest_exact2d, True),
    NN.upsample_linear1d: _linear(NN.upsample_linear1d),
    NN.upsample_bilinear2d: _linear(NN.upsample_bilinear2d),
    NN.upsample_nearest3d: _nearest(NN.upsample_nearest3d, False),
    NN.upsample_trilinear3d: _linear(NN.upsample_trilinear3d),
    NN.upsample_bicubic2d: _cubic(NN.upsample_bicubic2d),
}
KERNELS.update({op: _mode_pad(op, "reflect" if mode == "reflection" else "edge")
                for (mode, _), op in NN.MODE_PADS.items()})
