"""Lowering rows of the ops that choose between values: ``sign``, ``clamp`` and
``masked_fill``, each a formula of comparisons and selects that fuses with its readers (Rprop's
update is one kernel per parameter with them); and the indexing ops ``index.Tensor``
(``x[idx]``), ``index_select``, ``unfold`` and ``index_put_`` (``x[idx] = v``, ``x[idx] += v``).
Each computes what the eager kernel (backends/cpu/pointwise.py, indexing.py, scatter.py)
computes, NaN and -0.0 included.

The reads (``x[idx]``, ``index_select``) are indexed loads that fuse with their readers, as
embedding's; the writes are IndexAdd kernels (Note [Scatter-add] in ir.py). A Check step first
raises eager's error for an index outside its dim (negative indices wrap, as eager's), so no
kernel runs and nothing is half-written; a boolean mask (a data-dependent shape) keeps eager's
kernel, except ``x[mask] = v`` with one value, which is a select.
"""

import math

from ...core.shape import broadcast_shapes
from .ir import InputBuffer, TensorValue, contiguous_stride, ops
from .lowering import (
    FLOATING,
    FLOATS,
    INTEGERS,
    NoLowering,
    as_loader,
    aten,
    constant_of,
    out_spec,
    pointwise,
    register,
)
from .lowering_nn import _clamped_row, _index_check

_DTYPES = FLOATING + INTEGERS
FLOAT32_MAX = 3.4028234663852886e38
LARGEST = {"float32": FLOAT32_MAX, "float16": 65504.0, "bfloat16": 3.3895313892515355e38}


@register(aten.sign.default)
def _sign(G, node, a):
    """ATen's ``(0 < x) - (x < 0)``: sign(NaN) and sign(-0.0) are +0; a bool is itself."""
    dtype = out_spec(node)[0]

    def sign(x):
        zero = ops.constant(0, dtype)
        return ops.sub(ops.to_dtype(ops.gt(x, zero), dtype), ops.to_dtype(ops.lt(x, zero), dtype))
    return pointwise(G, node, (lambda x: x) if dtype == "bool" else sign, a)


@register(aten.clamp.Tensor)
def _clamp(G, node, a, min=None, max=None):
    """Eager's clamp in the result dtype: a tensor bound is NaN-propagating
    ``maximum``/``minimum`` (the bound wins a tie of 0.0 and -0.0, as ATen's); a number bound
    replaces x only where it is strictly past it (x keeps its sign on a tie) and a NaN number
    bound gives NaN, as ATen's vectorised scalar kernel and eager's ``_clamp``."""
    if out_spec(node)[0] not in _DTYPES:
        raise NoLowering("clamp dtype")
    bounds = [(b, name) for b, name in ((min, "maximum"), (max, "minimum")) if b is not None]

    def past(name, x, bound):
        beyond = ops.lt(x, bound) if name == "maximum" else ops.lt(bound, x)
        return ops.where(ops.ne(bound, bound), bound, ops.where(beyond, bound, x))

    def clamp(x, *loaded):
        for value, (bound, name) in zip(loaded, bounds):
            number = isinstance(bound, (int, float)) and not isinstance(bound, bool)
            x = past(name, x, value) if number else getattr(ops, name)(x, value)
        return x
    return pointwise(G, node, clamp, a, *(b for b, _ in bounds))


@register(aten.masked_fill.Scalar)
def _masked_fill(G, node, a, mask, value):
    """``where(mask, value, self)``, the Python number converted to self's dtype as eager's
    kernel stores it; a tensor value, or one that must be checked against the dtype's range
    (an integer dtype, a finite float beyond the dtype's range), keeps the eager kernel and its
    error."""
    dtype, size = out_spec(node)
    if dtype not in FLOATING or isinstance(value, bool) or not isinstance(value, (int, float)) \
            or (dtype in LARGEST and math.isfinite(value) and abs(value) > LARGEST[dtype]):
        raise NoLowering("masked_fill value")
    mask_load, self_load = as_loader(mask, size, "bool"), as_loader(a, size, dtype)
    fill = constant_of(value, dtype)
    return TensorValue(dtype, size, lambda i: ops.where(mask_load(i), fill(i), self_load(i)))


# --- indexing -----------------------------------------------------------------------------------

INDEX_DTYPES = ("int64", "int32")


def _row(value, dtype, rows):
    """The C text of the row an index's loaded ``value`` (of ``dtype``) names: negative rows
    wrap as eager's, then clamped into [0, rows) (the Check step has raised for any other)."""
    if dtype != "int64":
        value = ops.to_dtype(value, "int64")
    wrapped = ops.where(ops.lt(value, ops.constant(0, "int64")),
                        ops.add(value, ops.constant(rows, "int64")), value)
    return _clamped_row(wrapped, rows)


def _index_tensors(G, op, self, indices):
    """The (dim, realized index) pairs of an ``index``/``index_put_`` list, each checked as
    eager checks it (the message counts index tensors, not dims); masks keep eager's kernel."""
    tensors = [(d, t) for d, t in enumerate(indices) if t is not None]
    if not tensors or any(t.dtype not in INDEX_DTYPES for _, t in tensors):
        raise NoLowering(f"{op}: a boolean mask (a data-dependent shape)")
    tensors = [(d, G.realize(t)) for d, t in tensors]
    for k, (d, t) in enumerate(tensors):
        _index_check(G, op, t, k, self.size[d])
    return tensors


@register(aten.index.Tensor)
def _index(G, node, self, indices):
    """``self[i0, :, i2]``: the index tensors broadcast to one shape B whose dims replace the
    indexed dims where those are adjacent, else lead the result (NumPy's and ATen's rule)."""
    dtype, size = out_spec(node)
    tensors = _index_tensors(G, aten.index.Tensor, self, indices)
    dims = [d for d, _ in tensors]
    broadcast = tuple(broadcast_shapes(*(t.size for _, t in tensors)))
    lead = dims[0] if dims == list(range(dims[0], dims[-1] + 1)) else 0
    rest = [d for d in range(len(self.size)) if d not in dims]
    loaders = [(d, as_loader(t, broadcast, "int64"), self.size[d]) for d, t in tensors]

    def load(i):
        at = i[lead:lead + len(broadcast)]
        src = dict(zip(rest, i[:lead] + i[lead + len(broadcast):]))
        for d, loader, rows in loaders:
            src[d] = _row(loader(at), "int64", rows)
        return self.load(tuple(src[d] for d in range(len(self.size))))
    return TensorValue(dtype, tuple(size), load)


@register(aten.index_select.default)
def _index_select(G, node, self, dim, index):
    """``out[..., j, ...] = self[..., index[j], ...]`` along ``dim``; a 0-D self is itself."""
    dtype, size = out_spec(node)
    if not self.size or len(index.size) > 1 or index.dtype not in INDEX_DTYPES:
        raise NoLowering("index_select: a 0-D self or an index of more dims")
    d = dim % len(self.size)
    rows = self.size[d]
    index = G.realize(index)
    _index_check(G, aten.index_select.default, index, rows, len(self.size) == 1 or d == 0)

    def load(i):
        row = index.load((i[d],) if index.size else ())
        if index.dtype != "int64":
            row = ops.to_dtype(row, "int64")
        return self.load((*i[:d], _clamped_row(row, rows), *i[d + 1:]))
    return TensorValue(dtype, tuple(size), load)


@register(aten.unfold.default)
def _unfold(G, node, self, dimension, size, step):
    """The windows ``out[..., j, ..., k] = self[..., j*step + k, ...]``: a view of a realized
    buffer (strides, no copy), else an indexed load of the formula."""
    out = out_spec(node)[1]
    if not self.size:
        return TensorValue(self.dtype, tuple(out), lambda i: self.load(()))
    d = dimension % len(self.size)
    if self.buffer is not None:
        b = self.buffer
        stride = tuple(s * step if k == d else s for k, s in enumerate(b.stride))
        return TensorValue.of_buffer(InputBuffer(b.name, b.dtype, tuple(out),
                                                 stride + (b.stride[d],), b.offset))

    def load(i):
        at = f"(({i[d]})*{step} + {i[-1]})" if step != 1 else f"({i[d]} + {i[-1]})"
        return self.load((*i[:d], at, *i[d + 1:-1]))
    return TensorValue(self.dtype, tuple(out), load)


def _read_before(node, written):
    """Whether every other reader of ``written`` comes before ``node``: the write may then go
    to a fresh buffer, as no later reader expects ``written``'s memory to have changed."""
    earlier, at = set(), node.prev
    while at is not written:
        earlier.add(at)
        at = at.prev
    return all(user is node or user in earlier for user in written.users)


@register(aten.index_put_.default)
def _index_put(G, node, self, indices, values, accumulate=False):
    """``self[i, j] = values`` (the last write of a repeated element wins, as NumPy's
    assignment) or ``+=`` (``np.add.at``: repeated elements summed in index order) with index
    tensors on adjacent dims, as an IndexAdd kernel along those dims taken as one (Note
    [Scatter-add]), the index tensors' broadcast elements its source rows in C order;
    ``self[mask] = value`` with one value is a select. The result is a fresh buffer, so
    ``self`` must be a value of the graph no later node reads."""
    dtype, size = out_spec(node)
    written = node.args[0]
    if written.op != "call_function" or getattr(written.target, "is_view", False) \
            or not _read_before(node, written) or self.dtype != dtype \
            or values.dtype != dtype or dtype not in FLOATS + INTEGERS:
        raise NoLowering("index_put_: its self is a view or read later, or dtypes differ")
    tensors = [(d, t) for d, t in enumerate(indices) if t is not None]
    if len(tensors) == 1 and tensors[0][1].dtype == "bool" and not accumulate and \
            math.prod(values.size) == 1:
        (d, mask), = tensors
        return TensorValue(dtype, tuple(size), lambda i: ops.where(
            mask.load(i[d:d + len(mask.size)]), values.load((0,) * len(values.size)),
            self.load(i)))
    dims = [d for d, _ in tensors]
    if not dims or dims != list(range(dims[0], dims[-1] + 1)) or not math.prod(size):
        raise NoLowering("index_put_: index tensors on separated dims (their dims lead), or "
                         "an empty self")
    first, after = dims[0], dims[-1] + 1
    broadcast = tuple(broadcast_shapes(*(t.size for _, t in tensors)))
    if len(values.size) > len(size) - len(dims) + len(broadcast):
        raise NoLowering("index_put_: values of more dims than the indexed result")
    tensors = _index_tensors(G, aten.index_put_.default, self, indices)
    spans = size[first:after]
    others = size[:first] + size[after:]
    source = as_loader(values, (*size[:first], *broadcast, *size[after:]), dtype)
    loaders = [as_loader(t, broadcast, "int64") for _, t in tensors]

    def element(column, at, within):
        """The full index of column ``column``'s element at ``at``, the flat index of an
        element of ``within`` (the indexed dims, or the index tensors' broadcast shape)."""
        coordinates = _coordinates(column, others)
        return (*coordinates[:first], *_coordinates(at, within), *coordinates[first:])

    def row(column, rindex):
        at = _coordinates(rindex[0], broadcast)
        terms = [f"({_row(load(at), 'int64', n)})*{math.prod(spans[k + 1:])}"
                 for k, (load, n) in enumerate(zip(loaders, spans))]
        return ops.index_expr(" + ".join(terms), "int64")
    flat = (*size[:first], math.prod(spans), *size[after:])
    out = G.index_add(dtype, flat, math.prod(broadcast),
                      lambda column, rindex: source(element(column[0], rindex[0], broadcast)),
                      row, lambda at: self.load(element(at[1], at[0], spans)),
                      "sum" if accumulate else "assign", dim=first)
    if len(spans) == 1:
        return out
    return TensorValue.of_buffer(InputBuffer(out.buffer.name, dtype, tuple(size),
                                             contiguous_stride(size)))


def _coordinates(flat, size):
    """The index texts (single C terms) of the element at flat row-major index ``flat`` (a C
    text) of a tensor of ``size``."""
    texts = []
    for k, stride in enumerate(contiguous_stride(size)):
        text = f"({flat}) / {stride}" if stride != 1 else f"({flat})"
        texts.append(f"({text}) % {size[k]}" if k else text)
    return texts
