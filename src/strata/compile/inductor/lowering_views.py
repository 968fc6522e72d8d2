"""Lowering rows of the view ops (view/reshape, slice, permute, transpose, expand, as_strided,
squeeze/unsqueeze) and ``arange``: index arithmetic on the source, no copy. Split from
lowering.py, which keeps the row machinery these use."""

import math

from ...ops.factory import arange_params
from .ir import InputBuffer, TensorValue, contiguous_stride, ops
from .lowering import FLOATING, NoLowering, _restrided, as_loader, aten, out_spec, register


def _flat(index, size):
    terms = [f"({i})*{s}" for i, s in zip(index, _strides(size)) if s and i != 0]
    return " + ".join(terms) or "0"


def _strides(size):
    out, step = [], 1
    for s in reversed(size):
        out.append(step if s != 1 else 0)
        step *= s
    return tuple(reversed(out))


def _is_contiguous(b):
    return tuple(s for s, n in zip(b.stride, b.size) if n != 1) == tuple(
        s for s, n in zip(contiguous_stride(b.size), b.size) if n != 1)


@register(aten.view.default, aten.reshape.default)
def _view(G, node, a, shape):
    _, size = out_spec(node)
    if tuple(size) == tuple(a.size):
        return a
    if a.buffer is not None and _is_contiguous(a.buffer):
        return _restrided(a, size, contiguous_stride(size))
    groups = _reshape_groups(tuple(a.size), tuple(size))
    atoms = _common_refinement(tuple(a.size), tuple(size))

    def load(index):
        if atoms is not None:
            return a.load(_refined_index(atoms, a.size, size, index))
        src_index = []
        for src_dims, dst_dims in groups:
            group_src = [a.size[d] for d in src_dims]
            if len(src_dims) == 1 and len(dst_dims) == 1:     # the dim itself: no arithmetic
                src_index.append(0 if group_src[0] == 1 else index[dst_dims[0]])
                continue
            flat = _flat([index[d] for d in dst_dims], [size[d] for d in dst_dims])
            for k, s in enumerate(group_src):
                inner = math.prod(group_src[k + 1:])
                expr = f"(({flat}) / {inner})" if inner != 1 else f"({flat})"
                src_index.append(0 if s == 1 else (f"{expr} % {s}" if k else expr))
        return a.load(tuple(src_index))
    return TensorValue(a.dtype, size, load)


def _common_refinement(src, dst):
    """The reshape ``src -> dst`` as atoms (size, src dim, dst dim), innermost first: each dim
    of either side is a product of consecutive atoms. None when the sizes have no such common
    factoring (then ``_reshape_groups``). With atoms, a reshape of [16, 128] as [16, 4, 32]
    reads ``i1*32 + i2``: no division or modulo of the innermost index, which stays SIMD."""
    if 0 in src or 0 in dst:    # an empty tensor: no factoring (``_reshape_groups``)
        return None
    atoms, i, j = [], len(src) - 1, len(dst) - 1
    left_src = src[i] if i >= 0 else 1
    left_dst = dst[j] if j >= 0 else 1
    while i >= 0 and j >= 0:
        if left_src == 1 or left_dst == 1:
            if left_src == 1:
                i -= 1
                left_src = src[i] if i >= 0 else 1
            if left_dst == 1:
                j -= 1
                left_dst = dst[j] if j >= 0 else 1
            continue
        atom = min(left_src, left_dst)
        if max(left_src, left_dst) % atom:
            return None
        atoms.append((atom, i, j))
        left_src, left_dst = left_src // atom, left_dst // atom
    return atoms


def _refined_index(atoms, src, dst, index):
    """The source index of ``index`` (into ``dst``) through the atoms of the reshape; each
    entry one C term (parenthesized), as InputBuffer.index multiplies it by a stride."""
    inner_dst = [1] * len(dst)     # product of the atoms already placed in each dim
    inner_src = [1] * len(src)
    terms = [[] for _ in src]
    for atom, i, j in atoms:
        value = index[j] if inner_dst[j] == 1 else f"(({index[j]}) / {inner_dst[j]})"
        if inner_dst[j] * atom != dst[j]:
            value = f"({value}) % {atom}"
        terms[i].append(f"({value})*{inner_src[i]}" if inner_src[i] != 1 else f"{value}")
        inner_dst[j] *= atom
        inner_src[i] *= atom
    return tuple((f"({' + '.join(t)})" if len(t) > 1 else t[0]) if t else 0 for t in terms)


def _reshape_groups(src, dst):
    """The reshape ``src -> dst`` as pairs (src dims, dst dims) of consecutive dims with equal
    products, each as small as possible: a dim both sides share maps to itself, so only the dims
    a reshape really splits or merges pay for division and modulo."""
    if 0 in src:
        return [(tuple(range(len(src))), tuple(range(len(dst))))]
    groups, i, j = [], 0, 0
    while i < len(src) or j < len(dst):
        src_dims, dst_dims = [], []
        if i < len(src):
            src_dims.append(i)
            i += 1
        if j < len(dst):
            dst_dims.append(j)
            j += 1
        while math.prod(src[d] for d in src_dims) != math.prod(dst[d] for d in dst_dims):
            if math.prod(src[d] for d in src_dims) < math.prod(dst[d] for d in dst_dims):
                src_dims.append(i)
                i += 1
            else:
                dst_dims.append(j)
                j += 1
        groups.append((tuple(src_dims), tuple(dst_dims)))
    return groups


@register(aten._reshape_copy.default)
def _reshape_copy(G, node, a, shape):
    """A reshape whose result must not alias: read through index arithmetic, realized fresh."""
    unaliased = TensorValue(a.dtype, a.size, a.load)
    return _view(G, node, unaliased, shape)


@register(aten.slice.Tensor)
def _slice(G, node, a, dim=0, start=None, end=None, step=1):
    dim = dim % max(len(a.size), 1)
    start = 0 if start is None else start
    if start < 0:
        start = max(start + a.size[dim], 0)
    start = min(start, a.size[dim])
    size = out_spec(node)[1]
    if a.buffer is not None:
        stride = list(a.buffer.stride)
        b = a.buffer
        shifted = InputBuffer(b.name, b.dtype, tuple(size),
                              tuple(s * step if d == dim else s for d, s in enumerate(stride)),
                              b.offset + start * stride[dim])
        return TensorValue.of_buffer(shifted)

    def load(index):
        i = index[dim]
        moved = f"({start} + ({i})*{step})" if step != 1 else f"({start} + {i})"
        return a.load(tuple(moved if d == dim else x for d, x in enumerate(index)))
    return TensorValue(a.dtype, size, load)


@register(aten.permute.default)
def _permute(G, node, a, dims):
    dims = [d % max(len(a.size), 1) for d in dims]
    if a.buffer is not None:
        return _restrided(a, [a.size[d] for d in dims], [a.buffer.stride[d] for d in dims])
    inverse = [dims.index(d) for d in range(len(dims))]
    base, base_dims = a.permuted or (a, list(range(len(dims))))
    return TensorValue(a.dtype, out_spec(node)[1],
                       lambda index: a.load(tuple(index[inverse[d]] for d in range(len(dims)))),
                       permuted=(base, [base_dims[d] for d in dims]))


@register(aten.transpose.int)
def _transpose(G, node, a, dim0, dim1):
    dims = list(range(len(a.size)))
    d0, d1 = dim0 % max(len(dims), 1), dim1 % max(len(dims), 1)
    dims[d0], dims[d1] = dims[d1], dims[d0]
    return _permute(G, node, a, dims)


@register(aten.t.default)
def _t(G, node, a):
    return _transpose(G, node, a, 0, -1) if len(a.size) == 2 else a


@register(aten.expand.default)
def _expand(G, node, a, size, implicit=False):
    out = out_spec(node)[1]
    if a.buffer is not None:
        lead = len(out) - len(a.size)
        stride = [0] * lead + [0 if n == 1 and out[lead + d] != 1 else a.buffer.stride[d]
                               for d, n in enumerate(a.size)]
        return _restrided(a, out, stride)
    if tuple(out) == tuple(a.size):     # matmul's expand to its own size: keep ``permuted``
        return a
    return TensorValue(a.dtype, out_spec(node)[1], as_loader(a, out_spec(node)[1], a.dtype))


@register(aten.as_strided.default)
def _as_strided(G, node, a, size, stride, storage_offset=None):
    """A view of a kernel's own output array (its storage is exactly that array); other
    storages (inputs, eager results) keep the eager kernel."""
    if not all(isinstance(v, int) for v in (*size, *stride)) or \
            (storage_offset is not None and not isinstance(storage_offset, int)):
        raise NoLowering("as_strided sizes")
    a = G.realize(a)
    if a.buffer.name not in G.kernel_outputs:
        raise NoLowering("as_strided of another storage")
    offset = a.buffer.offset if storage_offset is None else storage_offset
    return TensorValue.of_buffer(InputBuffer(a.buffer.name, a.dtype, tuple(size), tuple(stride),
                                             offset))


@register(aten.arange.start_step)
def _arange(G, node, start, end, step=1, dtype=None, layout=None, device=None,
            pin_memory=None):
    """Integer ranges (the index tensors of a functionalized view write): ``start + i*step``
    is exact in int64. Float ranges are eager's ``first + i * delta`` in double (ATen's
    accumulate type), rounded to the dtype."""
    out_dtype, size = out_spec(node)
    if device is not None and str(device) != "cpu":
        raise NoLowering("arange on another device")
    if out_dtype in FLOATING and all(isinstance(v, (int, float)) for v in (start, end, step)) \
            and G.device_type == "cpu":     # in double: an OpenCL device may have no fp64
        _, first, delta = arange_params(start, end, step, node.meta["val"].dtype)

        def value(i):
            at = ops.mul(ops.index_expr(i[0], "float64"), ops.constant(delta, "float64"))
            return ops.to_dtype(ops.add(ops.constant(first, "float64"), at), out_dtype)
        return TensorValue(out_dtype, size, value)
    if out_dtype != "int64" or not all(isinstance(v, int) and not isinstance(v, bool)
                                       for v in (start, step)):
        raise NoLowering("arange of a small integer dtype or float bounds")
    return TensorValue(out_dtype, size, lambda i: ops.index_expr(
        f"{start} + ({i[0]})*{step}", "int64"))


@register(aten.unsqueeze.default, aten.squeeze.dims)
def _reshape_like(G, node, a, *dims):
    return _view(G, node, a, out_spec(node)[1])
