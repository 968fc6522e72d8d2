"""Lowering rows of ``ops/nn.py``'s family: convolution, max pooling, index checks, dropout's
draws and nll_loss.

On the CPU a convolution is an Extern running eager's kernel (backends/cpu/nn.py: blocks of
samples over the pool, each an im2col kept in cache and one BLAS GEMM) with the bias added by
the epilogue, fused with whatever pointwise op follows (a ReLU). On other devices (OpenCL) the
im2col matrix (C*K, N*L) is one generated gather kernel (padding read as zeros through a bounds
mask), the GEMM ``weight (F, C*K) @ cols`` one mm Extern, and its result is read transposed by
the epilogue, so the layout change costs no pass of its own.
"""

import itertools
import math

from ...backends.cpu.nn import convolution_relu
from ...ops import pooling as PL
from ..aot.functionalize import seeded_random
from .eager_pool import max_pool2d_2x2, max_pool2d_backward_masked
from .ir import InputBuffer, TensorValue, contiguous_stride, ops
from .lowering import FLOATING, FLOATS, NoLowering, as_loader, aten, out_spec, register


def _per_dim(value, nd):
    value = tuple(value) if isinstance(value, (tuple, list)) else (value,)
    return value * nd if len(value) == 1 else value


def _sum_text(terms):
    """One C term (parenthesized) of the sum of ``(coefficient, index text)`` pairs."""
    parts = [f"({i})*{c}" if c != 1 else f"({i})" for c, i in terms if c != 0]
    return f"({' + '.join(parts)})" if parts else "0"


def _im2col(G, x, kernel, stride, padding, dilation, out, row_major=False):
    """The realized (C*K, N*L) matrix: row (c, k...), column (n, o...) holds the input pixel
    ``o*stride + k*dilation - padding`` of channel c of sample n, 0 outside the image.
    ``row_major``: never stored transposed (a grouped GEMM reads it as eager's layout)."""
    n, c = x.size[:2]
    spatial = x.size[2:]
    nd = len(kernel)
    dtype = x.dtype

    # the kernel's inner loop runs over the last range: output columns (ow) normally; kernel
    # columns (kw) when they are longer (a weight gradient's "kernel" is the output gradient),
    # so the matrix is then stored transposed (BLAS reads either)
    transposed = kernel[-1] > out[-1] and not row_major

    def load(index):
        if transposed:
            index = (index[1 + nd], *index[2 + nd:], index[0], *index[1:1 + nd])
        ci, ks, ni, os_ = index[0], index[1:1 + nd], index[1 + nd], index[2 + nd:]
        places = [_sum_text([(s, o), (d, k)] + ([(1, f"-{p}")] if p else []))
                  for o, k, s, d, p in zip(os_, ks, stride, dilation, padding)]
        if not any(padding):
            return x.load((ni, ci, *places))
        clamped = [f"({h} < 0 ? 0 : ({h} >= {size} ? {size - 1} : {h}))"
                   for h, size in zip(places, spatial)]
        value = x.load((ni, ci, *clamped))
        inside = None
        for h, size in zip(places, spatial):
            place = ops.index_expr(h, "int64")
            fits = ops.where(ops.ge(place, ops.constant(0, "int64")),
                             ops.lt(place, ops.constant(size, "int64")),
                             ops.constant(False, "bool"))
            inside = fits if inside is None else ops.where(inside, fits,
                                                           ops.constant(False, "bool"))
        return ops.where(inside, value, ops.constant(0, dtype))
    ranges = (n, *out, c, *kernel) if transposed else (c, *kernel, n, *out)
    cols = G.realize(TensorValue(dtype, ranges, load)).buffer
    rows, columns = c * math.prod(kernel), n * math.prod(out)
    layout = (1, rows) if transposed else contiguous_stride((rows, columns))
    return TensorValue.of_buffer(InputBuffer(cols.name, dtype, (rows, columns), layout))


@register(aten.convolution.default)
def _convolution(G, node, x, weight, bias, stride, padding, dilation, transposed,
                 output_padding, groups):
    dtype, size = out_spec(node)
    if dtype not in FLOATS or x.dtype != weight.dtype:
        raise NoLowering("convolution: integer")
    if groups != 1 and G.device_type != "cpu":
        raise NoLowering("convolution: grouped, its bmm views are the C wrapper's")
    nd = len(weight.size) - 2
    kernel = tuple(weight.size[2:])
    stride, padding, dilation = (_per_dim(v, nd) for v in (stride, padding, dilation))
    if G.device_type == "cpu":
        return _eager_convolution(G, node, x, weight, bias, stride, padding, dilation, transposed,
                                  output_padding, groups, dtype, size)
    if transposed:
        return _transposed_convolution(G, x, weight, bias, stride, padding, dilation, size,
                                       groups)
    out = tuple(size[2:])
    cols = _im2col(G, G.realize(x), kernel, stride, padding, dilation, out, groups != 1)
    filters = weight.size[0]
    weight = G.realize(weight)
    if weight.buffer.stride != contiguous_stride(weight.size):
        weight = G.realize(TensorValue(weight.dtype, weight.size, weight.load))
    rows, columns = cols.size[0] // groups, cols.size[1]
    product = _group_matmul(G, dtype, groups, (
        weight.buffer, (filters // groups, rows), (filters // groups * rows, rows, 1)), (
        cols.buffer, (rows, columns), (rows * columns, *cols.buffer.stride)))
    pixels = math.prod(out)
    pixel_strides = contiguous_stride(out)
    bias_load = as_loader(bias, (filters,), dtype) if bias is not None else None

    def load(index):
        column = _sum_text([(pixels, index[0])] + list(zip(pixel_strides, index[2:])))
        value = product.load((index[1], column))
        return ops.add(value, bias_load((index[1],))) if bias_load is not None else value
    return TensorValue(dtype, tuple(size), load)


def _eager_convolution(G, node, x, weight, bias, stride, padding, dilation, transposed,
                       output_padding, groups, dtype, size):
    """On the CPU: an Extern running eager's convolution without its bias (backends/cpu/nn.py
    ``convolution_arrays``: blocks of samples over the pool, each block's columns still in
    cache for its GEMM, Note [Batch-blocked convolution]), and the bias added by the epilogue
    kernel with whatever pointwise op follows. A whole-batch im2col here wrote and re-read the
    columns through memory: the CNN step of benchmarks/training.py ran 10% slower compiled
    than eager. A forward convolution read only by a ReLU (the CNN's) adds its bias and
    applies the ReLU itself, per block in cache (``convolution_relu``): the epilogue kernel
    was a pass over memory, 0.2-0.3 ms of the first layer's 32x32x26x26."""
    if not transposed and len(node.users) == 1 and \
            next(iter(node.users)).target is aten.relu.default and \
            (bias is None or bias.dtype == dtype):
        arrays = [None if v is None else _contiguous(G, v) for v in (x, weight, bias)]
        product = G.extern(convolution_relu, (*arrays, tuple(stride), tuple(padding),
                                              tuple(dilation), groups, tuple(size[2:])),
                           dtype, size)
        return TensorValue(dtype, tuple(size), _Rectified(product.load), product.buffer)
    product = G.extern(aten.convolution.default, (
        x, weight, None, list(stride), list(padding), list(dilation), transposed,
        list(_per_dim(output_padding, len(stride))), groups), dtype, size)
    if bias is None:
        return product
    bias_load = as_loader(bias, (size[1],), dtype)
    return TensorValue(dtype, tuple(size), lambda index: ops.add(product.load(index),
                                                                bias_load((index[1],))))


class _Rectified:
    """The load of a value that is its own ReLU (a ``convolution_relu`` Extern's): ``relu`` of
    it is itself (lowering.py ``_relu``), not a pass."""

    def __init__(self, load):
        self.load = load

    def __call__(self, index):
        return self.load(index)


def rectified(value):
    """Whether ``value`` is already ReLU's result (``_eager_convolution``'s Extern)."""
    return isinstance(value.load, _Rectified)


def _group_matmul(G, dtype, groups, a, b):
    """Eager's ``_group_matmul`` (backends/cpu/nn.py) as an Extern: ``a @ b`` of operands
    (buffer, one group's matrix size, (group, row, column) strides), one ``mm`` for one
    group, else a ``bmm`` over (G, M, K) @ (G, K, P) views of the same memory (the same
    ``np.matmul`` call as eager's), its result read as the (G*M, P) matrix."""
    views = []
    for buffer, size, (group_stride, *stride) in (a, b):
        if groups == 1:
            views.append(InputBuffer(buffer.name, dtype, size, tuple(stride), buffer.offset))
        else:
            views.append(InputBuffer(buffer.name, dtype, (groups, *size),
                                     (group_stride, *stride), buffer.offset))
    size = (a[1][0], b[1][1])
    if groups == 1:
        return G.extern(aten.mm.default, tuple(map(TensorValue.of_buffer, views)), dtype, size)
    product = G.extern(aten.bmm.default, tuple(map(TensorValue.of_buffer, views)), dtype,
                       (groups, *size))
    whole = (groups * size[0], size[1])
    return TensorValue.of_buffer(InputBuffer(product.buffer.name, dtype, whole,
                                             contiguous_stride(whole)))


def _transposed_convolution(G, x, weight, bias, stride, padding, dilation, size, groups):
    """Eager's adjoint (backends/cpu/nn.py ``_conv_transpose``): the GEMM
    ``weight^T (F*K, C) @ x (C, N*L)`` (per group: a bmm) makes the columns, and col2im, a
    scatter-add there, is here a gather per output element, unrolled over the kernel offsets
    in eager's order (so the same sums): offset k adds column ``(h + padding - k*dilation) /
    stride`` where that divides and lies inside the input. The inner loop runs along output
    columns."""
    dtype = x.dtype
    n, channels = x.size[:2]
    spatial = tuple(x.size[2:])
    filters, kernel = weight.size[1], tuple(weight.size[2:])
    pixels = math.prod(spatial)
    x = G.realize(x)
    by_channel = G.realize(TensorValue(dtype, (channels, n, *spatial), lambda i: x.load(
        (i[1], i[0], *i[2:])))).buffer
    weight = G.realize(weight)
    if weight.buffer.stride != contiguous_stride(weight.size):
        weight = G.realize(TensorValue(dtype, weight.size, weight.load))
    rows, per_group = filters * math.prod(kernel), channels // groups
    # weight (C, F/G, K...) read as each group's (F/G*K, C/G) transpose; x as (C/G, N*L) rows
    cols = _group_matmul(G, dtype, groups, (
        weight.buffer, (rows, per_group), (per_group * rows, 1, rows)), (
        by_channel, (per_group, n * pixels), (per_group * n * pixels, n * pixels, 1)))
    filters *= groups
    kernel_strides, pixel_strides = contiguous_stride(kernel), contiguous_stride(spatial)
    bias_load = as_loader(bias, (filters,), dtype) if bias is not None else None

    def load(index):
        total = ops.constant(0, dtype)
        for offset in itertools.product(*map(range, kernel)):
            inside, places = ops.constant(True, "bool"), []
            for o, k, s, d, p, m in zip(index[2:], offset, stride, dilation, padding, spatial):
                shifted = _sum_text([(1, o), (1, str(p - k * d))] if p - k * d else [(1, o)])
                place = f"({shifted} / {s})" if s != 1 else shifted
                at = ops.index_expr(shifted, "int64")
                fits = ops.where(ops.ge(at, ops.constant(0, "int64")), ops.lt(
                    at, ops.constant(m * s, "int64")), ops.constant(False, "bool"))
                if s != 1:
                    fits = ops.where(fits, ops.eq(ops.index_expr(f"{shifted} % {s}", "int64"),
                                                  ops.constant(0, "int64")),
                                     ops.constant(False, "bool"))
                inside = ops.where(inside, fits, ops.constant(False, "bool"))
                places.append(_clamped(place, m))
            row = _sum_text([(math.prod(kernel), index[1])]
                            + [(st, k) for st, k in zip(kernel_strides, offset)])
            column = _sum_text([(pixels, index[0])] + list(zip(pixel_strides, places)))
            value = cols.load((row, column))
            total = ops.add(total, ops.where(inside, value, ops.constant(0, dtype)))
        return ops.add(total, bias_load((index[1],))) if bias_load is not None else total
    return TensorValue(dtype, tuple(size), load)


# --- max pooling: the window as straight-line pointwise code --------------------------------

def _clamped(place, size):
    return f"({place} < 0 ? 0 : ({place} >= {size} ? {size - 1} : {place}))"


def _first_inside(start, dilation):
    """The first window row at or after ``start`` that is not padding (ATen's ``ih0``)."""
    return f"({start} < 0 ? {start} + ((-{start} + {dilation - 1}) / {dilation})*{dilation} " \
           f": {start})"


@register(aten.max_pool2d_with_indices.default)
def _max_pool2d(G, node, x, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    """PyTorch's loop (``MaxPoolKernel.cpp``, backends/cpu/pooling.py) unrolled over the window
    for each output element: an element replaces the maximum when greater or NaN, so ties keep
    the first and the last NaN wins; padding (read as -inf) never wins. Pointwise over the
    outputs, so the inner loop runs along output columns as a SIMD loop. On the CPU a 2x2 pool
    of a realized input (a ReLU's result saved for the backward) is one Extern pass instead,
    values and indices together (Note [2x2 pools in one pass] in eager_pool.py)."""
    dtype, size = x.dtype, tuple(node.meta["val"][0].shape)
    if dtype not in FLOATS or len(x.size) != 4:
        raise NoLowering("max_pool2d: integer or unbatched input")
    kernel, stride, padding, dilation = PL.pool2d_args("max_pool2d", kernel_size, stride,
                                                       padding, dilation)
    if x.buffer is not None and _two_by_two(G, kernel, stride, padding, dilation, x.size, size):
        values = G.extern(max_pool2d_2x2, (_contiguous(G, x),), dtype, size)
        indices = InputBuffer(f"{values.buffer.name}_1", "int64", size, contiguous_stride(size))
        G.buffers[indices.name] = indices   # the Extern's second output (as a Fallback's)
        return values, TensorValue.of_buffer(indices)
    x = G.realize(x)
    height, width = x.size[2:]
    masked = any(padding) or any((o - 1) * s + (k - 1) * d >= n for o, s, k, d, n in zip(
        size[2:], stride, kernel, dilation, (height, width)))

    def scan(index):
        starts = [_sum_text([(s, o)] + ([(1, f"-{p}")] if p else []))
                  for o, s, p in zip(index[2:], stride, padding)]
        first = [_first_inside(t, d) if p else t for t, d, p in zip(starts, dilation, padding)]
        best = ops.constant(-math.inf, dtype)
        where_best = ops.index_expr(f"{first[0]}*{width} + {first[1]}", "int64")
        for offset in itertools.product(*map(range, kernel)):
            h, w = (_sum_text([(1, t), (d, k)]) for t, d, k in zip(starts, dilation, offset))
            if not masked:   # every window inside: plain addresses, which vectorise
                value = x.load((index[0], index[1], h, w))
            else:
                value = x.load((index[0], index[1], _clamped(h, height), _clamped(w, width)))
                inside = ops.constant(True, "bool")
                for place, n in ((h, height), (w, width)):
                    at = ops.index_expr(place, "int64")
                    inside = ops.where(inside, ops.where(
                        ops.ge(at, ops.constant(0, "int64")), ops.lt(at, ops.constant(
                            n, "int64")), ops.constant(False, "bool")), inside)
                value = ops.where(inside, value, ops.constant(-math.inf, dtype))
            take = ops.where(ops.gt(value, best), ops.constant(True, "bool"),
                             ops.ne(value, value))
            best = ops.where(take, value, best)
            where_best = ops.where(take, ops.index_expr(f"{h}*{width} + {w}", "int64"),
                                   where_best)
        return best, where_best
    values = G.realize(TensorValue(dtype, size, lambda i: scan(i)[0]))
    indices = G.realize(TensorValue("int64", size, lambda i: scan(i)[1]))
    return values, indices


def _two_by_two(G, kernel, stride, padding, dilation, size_in, size_out):
    """Whether a max pool runs as Note [2x2 pools in one pass] (compile/inductor/eager_pool.py):
    on the CPU, 2x2 windows of stride 2, no padding or dilation, tiling the input's top-left."""
    return G.device_type == "cpu" and len(size_in) == 4 and tuple(kernel) == (2, 2) and \
        tuple(stride) == (2, 2) and not any(padding) and tuple(dilation) == (1, 1) and \
        all(isinstance(n, int) and o == n // 2 for n, o in zip(size_in[2:], size_out[2:]))


def _contiguous(G, value):
    """``value`` realized with contiguous strides and no offset: what an array Extern takes."""
    value = G.realize(value)
    if value.buffer.stride != contiguous_stride(value.size) or value.buffer.offset:
        value = G.realize(TensorValue(value.dtype, value.size, value.load))
    return value


class _WindowGradient:
    """The load of a 2x2 pool's input gradient (the gather below), remembering its operands, so
    that ReLU's gradient reading it (``threshold_backward``, lowering.py) can run both as one
    pass instead (``pool_gradient_through_relu``)."""

    def __init__(self, load, grad, indices):
        self.load, self.grad, self.indices = load, grad, indices

    def __call__(self, index):
        return self.load(index)


def pool_gradient_through_relu(G, grad, mask, threshold, dtype, size):
    """``threshold_backward(grad, mask, threshold)`` of an unrealized 2x2 pool gradient as one
    Extern pass (Note [2x2 pools in one pass]), or None where it is not one."""
    window = grad.load
    if not isinstance(window, _WindowGradient) or grad.buffer is not None or \
            mask.dtype != dtype or grad.dtype != dtype or tuple(mask.size) != tuple(size) or \
            isinstance(threshold, bool) or not isinstance(threshold, (int, float)):
        return None
    return G.extern(max_pool2d_backward_masked, (
        _contiguous(G, window.grad), _contiguous(G, window.indices), _contiguous(G, mask),
        float(threshold)), dtype, size)


@register(aten.max_pool2d_with_indices_backward.default)
def _max_pool2d_backward(G, node, grad, x, kernel_size, stride, padding, dilation, ceil_mode,
                         indices):
    """Non-overlapping windows (stride = kernel, no padding or dilation: the usual 2x2 pool):
    each input element has one window, so its gradient is a gather, the window's gradient
    where the window's index names the element, else 0 (a select: a NaN or inf gradient
    reaches only its own element). Under ReLU's gradient a 2x2 pool's runs as one Extern pass
    instead (``pool_gradient_through_relu``). Overlapping windows keep the eager kernel."""
    dtype, size = out_spec(node)
    kernel, stride, padding, dilation = PL.pool2d_args("max_pool2d", kernel_size, stride,
                                                       padding, dilation)
    if dtype not in FLOATS or len(size) != 4 or tuple(stride) != tuple(kernel) or \
            any(padding) or any(d != 1 for d in dilation):
        raise NoLowering("max_pool2d backward: overlapping windows")
    width = size[3]
    rows, columns = grad.size[2:]
    grad, indices = G.realize(grad), G.realize(indices)

    # an input row (column) past the last window's exists only when the windows do not tile
    # the input: only then is a window index checked and clamped
    spare = [not (isinstance(s, int) and isinstance(n, int)) or s > n * k
             for s, n, k in zip(size[2:], (rows, columns), kernel)]

    def load(index):
        window = [f"(({i}) / {k})" for i, k in zip(index[2:], kernel)]
        covered = ops.constant(True, "bool")
        for place, n, extra in zip(window, (rows, columns), spare):
            if extra:
                covered = ops.where(covered, ops.lt(ops.index_expr(place, "int64"),
                                                    ops.constant(n, "int64")), covered)
        at = (index[0], index[1], *(_clamped(p, n) if extra else p
                                    for p, n, extra in zip(window, (rows, columns), spare)))
        named = ops.eq(indices.load(at), ops.index_expr(
            f"({index[2]})*{width} + ({index[3]})", "int64"))
        hit = ops.where(covered, named, ops.constant(False, "bool"))
        return ops.where(hit, grad.load(at), ops.constant(0, dtype))
    if _two_by_two(G, kernel, stride, padding, dilation, size, grad.size):
        load = _WindowGradient(load, grad, indices)
    return TensorValue(dtype, tuple(size), load)


# --- index checks: a wrapper step, since a generated kernel cannot raise ---------------------

def _index_check(G, op, *args):
    """A Check step (CWrapper prints it by ``op``) raising eager's IndexError before the
    kernels that load through these indices run; only the CPU wrapper has one."""
    if G.device_type != "cpu":
        raise NoLowering(f"{op}: its index check runs in the CPU wrapper only")
    G.check(op, *args)


def _clamped_row(value, rows):
    """The C text of an int64 row index clamped into [0, rows) (the Check step has raised for
    any index outside it, so the clamp only keeps the load in bounds)."""
    return f"({value} < 0 ? 0 : ({value} >= {rows} ? {rows - 1} : {value}))"


@register(aten.embedding.default)
def _embedding(G, node, weight, indices, padding_idx=-1, scale_grad_by_freq=False,
               sparse=False):
    """``weight[indices]`` as an indexed load, fused with what reads it (the position-embedding
    add of a GPT); ``padding_idx`` only changes the backward."""
    dtype, size = out_spec(node)
    if len(weight.size) != 2:
        raise NoLowering("embedding: weight is not 2-D")
    rows = weight.size[0]
    _index_check(G, aten.embedding.default, G.realize(indices), rows)

    def load(index):
        row = indices.load(index[:-1])
        if indices.dtype != "int64":
            row = ops.to_dtype(row, "int64")
        return weight.load((_clamped_row(row, rows), index[-1]))
    return TensorValue(dtype, tuple(size), load)


# --- dropout's mask and uniform values: draws from the graph's random stream ------------------

@register(seeded_random)
def _seeded_random(G, node, op, rng_state, offset, *args, **kwargs):
    """``bernoulli(p)`` (how a functionalised dropout draws its mask) and ``uniform_(lo, hi)``
    (``rand_like``'s decomposition) drawn at ``offset`` of the graph's PCG64 stream, as a
    generated kernel: Note [Random draws] in ir.py. Other random ops keep eager's kernel
    (normal draws by NumPy's ziggurat, whose draw count depends on the values)."""
    dtype, size = out_spec(node)
    state = rng_state.buffer if isinstance(rng_state, TensorValue) else None
    if G.device_type != "cpu" or kwargs.get("generator") or state is None \
            or G.is_view(state) or state.size != (4,) or state.dtype != "int64":
        raise NoLowering("seeded_random: only a CPU graph draws in C")
    if op is aten.bernoulli.p:
        p = args[1] if len(args) > 1 else kwargs.get("p", 0.5)
        if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0 <= p <= 1:
            raise NoLowering("seeded_random: bernoulli's p")
        return G.random_draws(dtype, size, state.name, offset, "bernoulli", (float(p),))
    if op is aten.uniform_.default and dtype in FLOATING:
        lo = args[1] if len(args) > 1 else kwargs.get("from", 0.0)
        hi = args[2] if len(args) > 2 else kwargs.get("to", 1.0)
        if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (lo, hi)) \
                and lo <= hi and math.isfinite(float(hi) - float(lo)):
            return G.random_draws(dtype, size, state.name, offset, "uniform",
                                  (float(lo), float(hi)))
    raise NoLowering(f"seeded_random: {op} draws with eager's kernel")


# --- nll_loss: the picked log-probabilities, fused with their neighbours ------------------------

def _target_check(G, target, classes, ignore_index):
    """eager's IndexError for a target outside [0, classes) that is not ``ignore_index``."""
    _index_check(G, aten.nll_loss_forward.default, G.realize(target), classes, ignore_index)


def _target_column(target, classes, ignore_index):
    """``row -> (used, column)``: whether the row's target is not ``ignore_index``, and the
    target as a column index text clamped into [0, classes) (the Check step has raised for any
    other used target; an ignored one may be anything)."""
    def load(row):
        t = target.load(row)
        if target.dtype != "int64":
            t = ops.to_dtype(t, "int64")
        used = ops.ne(t, ops.constant(ignore_index, "int64"))
        return used, _clamped_row(t, classes)
    return load


@register(aten.nll_loss_forward.default)
def _nll_loss_forward(G, node, x, target, weight, reduction, ignore_index):
    """Eager's formula (backends/cpu/loss.py): -x[i, t_i] * w[t_i] over the rows whose target
    is not ``ignore_index``; mean divides by their total weight (0 / 0 = nan, as PyTorch)."""
    dtype = x.dtype
    if dtype not in FLOATS or len(x.size) != 2 or reduction not in (0, 1, 2):
        raise NoLowering("nll_loss: 1-D input or integer dtype")
    rows, classes = x.size
    _target_check(G, target, classes, ignore_index)
    x = G.realize(x)
    target_column = _target_column(target, classes, ignore_index)

    def loss(row):
        used, column = target_column(row)
        value = ops.neg(x.load((row[0], column)))
        if weight is not None:
            value = ops.mul(value, weight.load((column,)))
        return ops.where(used, value, ops.constant(0, dtype))
    if reduction == 0:
        return TensorValue(dtype, (rows,), loss), TensorValue(dtype, (), lambda i: ops.constant(
            0, dtype))

    def counted(index, rindex):
        used, column = target_column(rindex)
        scale = weight.load((column,)) if weight is not None else ops.constant(1, dtype)
        return ops.where(used, scale, ops.constant(0, dtype))
    total_weight = G.reduction(dtype, (), (rows,), "sum", counted, ())
    total = G.reduction(dtype, (), (rows,), "sum", lambda index, rindex: loss(rindex), ())
    if reduction == 2:
        return total, total_weight
    return TensorValue(dtype, (), lambda i: ops.truediv(total.load(i), total_weight.load(i))), \
        total_weight


@register(aten.nll_loss_backward.default)
def _nll_loss_backward(G, node, grad, x, target, weight, reduction, ignore_index, total_weight):
    """The gradient is -g (g / total weight for mean) times w[t] at each row's target column,
    0 elsewhere and on ignored rows: a pointwise over (N, C), fused into log_softmax's
    backward."""
    dtype, size = out_spec(node)
    if dtype not in FLOATS or len(size) != 2 or reduction not in (0, 1, 2):
        raise NoLowering("nll_loss backward: 1-D input or integer dtype")
    classes = size[1]
    _target_check(G, target, classes, ignore_index)
    target_column = _target_column(target, classes, ignore_index)

    def load(index):
        used, column = target_column((index[0],))
        g = grad.load((index[0],)) if reduction == 0 else grad.load(())
        if reduction == 1:
            g = ops.truediv(g, total_weight.load(()))
        value = ops.neg(g) if weight is None else ops.mul(ops.neg(g), weight.load((column,)))
        hit = ops.where(used, ops.eq(ops.index_expr(index[1], "int64"),
                                     ops.index_expr(column, "int64")),
                        ops.constant(False, "bool"))
        return ops.where(hit, value, ops.constant(0, dtype))
    return TensorValue(dtype, tuple(size), load)
