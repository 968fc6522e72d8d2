"""Lowering rows of shape ops: ``select`` (a view), and those that copy: ``cat``, ``stack``,
``flip``, ``constant_pad_nd``, ``tril``/``triu``, ``repeat``, ``eye`` and ``detach``, each a formula
of index arithmetic and selects that fuses with its readers (no intermediate buffer), as Inductor
lowers them.

A select between inputs loads every input at an index clamped into it (the C printer computes
each operand of a select), and picks the one the output index lies in: the values are the
inputs' own, bit for bit. Along the innermost dim those selects and clamped loads keep the
inner loop from vectorising: measured (1000x256 float32, thread CPU time, shared machine), a
cat along it took 0.39 ms against eager's 0.12 ms of copies, a pad of it 0.17 ms against
0.10 ms, so a cat, stack or pad of the innermost dim keeps the eager kernel; along outer dims
the select is per row and the inner loop is a plain copy. A flip is index arithmetic only
(0.14 ms eager, 0.04 ms fused). A cat whose inputs the graph's kernels compute is stored into
slices of its output by those kernels instead (Note [Cat slices], concat.py).
"""

import math

from .concat import concat_kernel, select_refuses
from .ir import InputBuffer, TensorValue, ops
from .lowering import DTYPES, FLOATS, INTEGERS, NoLowering, aten, out_spec, register
from .lowering_select import FLOAT32_MAX


def _clamp(text, size):
    return f"(({text}) < 0 ? 0 : (({text}) >= {size} ? {size - 1} : ({text})))"


def _inside(text, size):
    at = ops.index_expr(text, "int64")
    return ops.where(ops.ge(at, ops.constant(0, "int64")),
                     ops.lt(at, ops.constant(size, "int64")), ops.constant(False, "bool"))


@register(aten.select.int)
def _select(G, node, a, dim, index):
    """One slice along ``dim`` (an out-of-range index has raised while tracing): the same
    memory at an offset, or the formula read at a fixed index."""
    d = dim % len(a.size)
    at = index + a.size[d] if index < 0 else index
    size = out_spec(node)[1]
    if a.buffer is not None:
        b = a.buffer
        return TensorValue.of_buffer(InputBuffer(
            b.name, b.dtype, tuple(size), tuple(s for k, s in enumerate(b.stride) if k != d),
            b.offset + at * b.stride[d]))
    return TensorValue(a.dtype, size, lambda i: a.load((*i[:d], at, *i[d:])))


@register(aten.eye.m)
def _eye(G, node, n, m=None, dtype=None, layout=None, device=None, pin_memory=None):
    """Ones on the diagonal: ``i == j``, as ``np.eye``."""
    out_dtype, size = out_spec(node)
    if out_dtype not in DTYPES or (device is not None and str(device) != "cpu"):
        raise NoLowering("eye: a half dtype or another device")
    return TensorValue(out_dtype, tuple(size), lambda i: ops.where(
        ops.eq(ops.index_expr(i[0], "int64"), ops.index_expr(i[1], "int64")),
        ops.constant(1, out_dtype), ops.constant(0, out_dtype)))


def _triangle(lower):
    """``np.tril``/``np.triu`` of the last two dims: the element where ``col - row`` is at
    most (at least) ``diagonal``, else 0."""
    def lower_row(G, node, a, diagonal=0):
        dtype, size = out_spec(node)
        if dtype not in DTYPES or len(size) < 2:
            raise NoLowering("tril/triu: a half dtype or fewer than 2 dims")

        def load(i):
            offset = ops.index_expr(f"({i[-1]}) - ({i[-2]})", "int64")
            bound = ops.constant(diagonal, "int64")
            keep = ops.le(offset, bound) if lower else ops.ge(offset, bound)
            return ops.where(keep, a.load(i), ops.constant(0, dtype))
        return TensorValue(dtype, tuple(size), load)
    return lower_row


register(aten.tril.default)(_triangle(True))
register(aten.triu.default)(_triangle(False))


@register(aten.repeat.default)
def _repeat(G, node, a, repeats):
    """``np.tile``: output index i reads the input at ``i % size`` in each dim."""
    dtype, size = out_spec(node)
    if dtype not in DTYPES:
        raise NoLowering("repeat: a half dtype")
    if a.size and repeats[-1] > 1 and a.size[-1] > 1:     # measured 0.22 ms against 0.16 ms
        raise NoLowering("repeat of the innermost dim: eager's tile is faster")
    lead = len(size) - len(a.size)
    return TensorValue(dtype, tuple(size), lambda i: a.load(tuple(
        f"(({x}) % {n})" if n != m else x
        for x, n, m in zip(i[lead:], a.size, size[lead:]))))


@register(aten.detach.default)
def _detach(G, node, a):
    return TensorValue(a.dtype, a.size, a.load)


@register(aten.flip.default)
def _flip(G, node, a, dims):
    dtype, size = out_spec(node)
    flipped = {d % max(len(size), 1) for d in dims}
    return TensorValue(dtype, tuple(size), lambda i: a.load(tuple(
        f"({size[d] - 1} - ({x}))" if d in flipped and size[d] > 1 else x
        for d, x in enumerate(i))))


def _pieces(G, node, tensors, dim, stacked):
    """``out[..., i, ...]`` from the piece whose range along ``dim`` holds i, at i minus the
    piece's start (``stacked``: each piece is one index of a new dim)."""
    dtype, size = out_spec(node)
    d = dim % len(size)
    if dtype not in DTYPES or select_refuses(size, d, len(tensors)):
        raise NoLowering("cat along the innermost dim (eager's copies are faster) or of many "
                         "inputs")
    pieces, start = [], 0
    for t in tensors:
        if not stacked and len(t.size) == 1 and t.size[0] == 0 and len(size) != 1:
            continue    # a legacy empty 1-D input, skipped by cat
        length = 1 if stacked else t.size[d]
        if length:
            pieces.append((t, start, length))
        start += length

    def load(i):
        value = None
        for t, begin, length in reversed(pieces):
            at = f"({i[d]}) - {begin}" if begin else f"({i[d]})"
            index = (*i[:d], *i[d + 1:]) if stacked else (*i[:d], _clamp(at, length), *i[d + 1:])
            loaded = t.load(index)
            loaded = loaded if t.dtype == dtype else ops.to_dtype(loaded, dtype)
            if value is None:
                value = loaded
            else:
                value = ops.where(ops.lt(ops.index_expr(i[d], "int64"), ops.constant(
                    begin + length, "int64")), loaded, value)
        return value if value is not None else ops.constant(0, dtype)
    return TensorValue(dtype, tuple(size), load)


@register(aten.cat.default)
def _cat(G, node, tensors, dim=0):
    """Note [Cat slices] (concat.py) where inputs are computed by the graph's kernels, else
    the select formula."""
    concat = concat_kernel(G, node, tensors, dim)
    return concat if concat is not None else _pieces(G, node, tensors, dim, stacked=False)


@register(aten.stack.default)
def _stack(G, node, tensors, dim=0):
    return _pieces(G, node, tensors, dim, stacked=True)


def _pad_value_fits(value, dtype):
    """Numbers eager's ``np.full`` stores as they are (others keep its kernel and error)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    if dtype in FLOATS:
        return dtype == "float64" or not math.isfinite(value) or abs(value) <= FLOAT32_MAX
    if dtype in INTEGERS:
        bits = {"int64": 64, "int32": 32, "int16": 16, "int8": 8}.get(dtype)
        if bits is None:
            return isinstance(value, int) and 0 <= value < 256
        return isinstance(value, int) and -(1 << (bits - 1)) <= value < 1 << (bits - 1)
    return False


@register(aten.constant_pad_nd.default)
def _constant_pad_nd(G, node, a, pad, value=0):
    """``value`` around ``a`` (a negative pad crops): the input read at ``i - left`` where that
    lies inside it."""
    dtype, size = out_spec(node)
    if not _pad_value_fits(value, dtype) or a.dtype != dtype:
        raise NoLowering("constant_pad_nd: a value eager converts or checks")
    if 0 in a.size:
        return TensorValue(dtype, tuple(size), lambda i: ops.constant(value, dtype))
    if pad[0] > 0 or pad[1] > 0:
        raise NoLowering("padding the innermost dim: eager's copy is faster")
    lefts = [0] * len(size)
    for k in range(len(pad) // 2):
        lefts[len(size) - 1 - k] = pad[2 * k]

    def load(i):
        places = [f"({x}) - {left}" if left else x for x, left in zip(i, lefts)]
        loaded = a.load(tuple(_clamp(p, n) if left or n != m else p
                              for p, n, m, left in zip(places, a.size, size, lefts)))
        inside = None
        for p, n, m, left in zip(places, a.size, size, lefts):
            if left > 0 or left + n < m:        # this dim has padding
                fits = _inside(p, n)
                inside = fits if inside is None else ops.where(inside, fits, ops.constant(
                    False, "bool"))
        if inside is None:
            return loaded
        return ops.where(inside, loaded, ops.constant(value, dtype))
    return TensorValue(dtype, tuple(size), load)
