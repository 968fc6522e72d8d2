"""Lowering rows of ``ops/nn.py``'s family: convolution as a generated im2col kernel, one BLAS
GEMM (Extern) and a fused epilogue.

Eager (backends/cpu/nn.py) makes the im2col matrix with NumPy copies, multiplies, then copies
the result from (F, N, L) to (N, F, L) and adds the bias in another pass. Here the im2col matrix
(C*K, N*L) is one generated gather kernel (padding read as zeros through a bounds mask), the
GEMM ``weight (F, C*K) @ cols`` is the same single BLAS call as eager's, and its result is read
transposed by the epilogue (bias, and whatever pointwise op follows: a ReLU), so the layout
change costs no pass of its own.
"""

import math

from .ir import InputBuffer, TensorValue, contiguous_stride, ops
from .lowering import FLOATS, NoLowering, aten, as_loader, out_spec, register


def _per_dim(value, nd):
    value = tuple(value) if isinstance(value, (tuple, list)) else (value,)
    return value * nd if len(value) == 1 else value


def _sum_text(terms):
    """One C term (parenthesized) of the sum of ``(coefficient, index text)`` pairs."""
    parts = [f"({i})*{c}" if c != 1 else f"({i})" for c, i in terms if c != 0]
    return f"({' + '.join(parts)})" if parts else "0"


def _im2col(G, x, kernel, stride, padding, dilation, out):
    """The realized (C*K, N*L) matrix: row (c, k...), column (n, o...) holds the input pixel
    ``o*stride + k*dilation - padding`` of channel c of sample n, 0 outside the image."""
    n, c = x.size[:2]
    spatial = x.size[2:]
    nd = len(kernel)
    dtype = x.dtype

    # the kernel's inner loop runs over the last range: output columns (ow) normally; kernel
    # columns (kw) when they are longer (a weight gradient's "kernel" is the output gradient),
    # so the matrix is then stored transposed (BLAS reads either)
    transposed = kernel[-1] > out[-1]

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
    if transposed or groups != 1 or dtype not in FLOATS or x.dtype != weight.dtype:
        raise NoLowering("convolution: transposed, grouped or integer")
    nd = len(weight.size) - 2
    kernel = tuple(weight.size[2:])
    stride, padding, dilation = (_per_dim(v, nd) for v in (stride, padding, dilation))
    out = tuple(size[2:])
    cols = _im2col(G, G.realize(x), kernel, stride, padding, dilation, out)
    filters = weight.size[0]
    weight = G.realize(weight)
    if weight.buffer.stride != contiguous_stride(weight.size):
        weight = G.realize(TensorValue(weight.dtype, weight.size, weight.load))
    matrix = TensorValue.of_buffer(InputBuffer(
        weight.buffer.name, dtype, (filters, cols.size[0]),
        contiguous_stride((filters, cols.size[0])), weight.buffer.offset))
    product = G.extern(aten.mm.default, (matrix, cols), dtype, (filters, cols.size[1]))
    pixels = math.prod(out)
    pixel_strides = contiguous_stride(out)
    bias_load = as_loader(bias, (filters,), dtype) if bias is not None else None

    def load(index):
        column = _sum_text([(pixels, index[0])] + list(zip(pixel_strides, index[2:])))
        value = product.load((index[1], column))
        return ops.add(value, bias_load((index[1],))) if bias_load is not None else value
    return TensorValue(dtype, tuple(size), load)

