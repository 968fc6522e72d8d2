"""Lowering rows of gather (an indexed load) and the scatters: ``index_add_``, ``scatter`` (a
tensor or a number), ``scatter_add`` and ``scatter_reduce`` (sum, prod, mean, amax, amin; with
or without self) along any dim, as the IndexAdd kernel (Note [Scatter-add] in ir.py);
``as_strided_scatter`` (a functionalized write into a view) as a pointwise select.

Each computes what eager's kernel (backends/cpu/scatter.py ``_scatter``) computes: the output
starts as self; with ``include_self=False`` every element the index reaches is first set to the
reduction's identity; then the source elements are combined in, ``np.<ufunc>.at`` in C order,
which for the elements of one column (one position of the other dims) is source-row order, the
order of the kernel. mean divides the sum by the count of values (self counted once when
included, 0 counted as 1), in double as NumPy's ``true_divide`` of a float by an int64 count.
An index smaller than the output in another dim reaches only its own columns (a mask); a
Check step first raises eager's error for an index outside the dim.
"""

import math
import operator

from ...ops.scatter import has_internal_overlap, scatter_base_geometry, scatter_reduction
from .ir import TensorValue, contiguous_stride, ops
from .lowering import DTYPES, FLOATS, NoLowering, aten, out_spec, register
from .lowering_nn import _clamped_row, _index_check
from .lowering_select import FLOAT32_MAX
from .lowering_shape import _clamp

SCATTER_DTYPES = FLOATS + ("int64", "int32", "bool")
INT_BITS = {"int64": 64, "int32": 32}
COMBINE = {"sum": "sum", "mean": "sum", "prod": "prod", "amax": "max", "amin": "min"}


@register(aten.gather.default)
def _gather(G, node, self, dim, index, sparse_grad=False):
    """``out[..., i, ...] = self[..., index[..., i, ...], ...]``: an indexed load that fuses
    with its readers; a Check step first raises eager's error for an index outside the dim."""
    dtype, size = out_spec(node)
    if not size or len(self.size) != len(size) or index.dtype not in INT_BITS:
        raise NoLowering("gather: a 0-dim input")
    d = dim % len(size)
    rows = self.size[d]
    index = G.realize(index)
    _index_check(G, aten.gather.default, index, d, rows)

    def load(i):
        row = index.load(i)
        if index.dtype != "int64":
            row = ops.to_dtype(row, "int64")
        return self.load((*i[:d], _clamped_row(row, rows), *i[d + 1:]))
    return TensorValue(dtype, tuple(size), load)


@register(aten.index_add_.default)
def _index_add(G, node, self, dim, index, source, alpha=1):
    """Slices of ``source`` added into the slices of ``self`` that the 1-D ``index`` names
    (an embedding's backward: the output gradient's rows summed per token; index_select's and
    nearest upsampling's backward along any dim) as a generated scatter-add, Note
    [Scatter-add] in ir.py: dim 0 of a 2-D tensor as whole rows, other dims with the row
    loaded per column. The result is a fresh buffer, so ``self`` must be a value of the graph
    that nothing else reads; a Check step first raises eager's error for an index outside the
    dim."""
    dtype, size = out_spec(node)
    nd = len(size)
    d = dim % max(nd, 1)
    if dtype not in DTYPES or nd < 2 or len(index.size) != 1 or index.dtype not in INT_BITS \
            or self.dtype != dtype or source.dtype != dtype or isinstance(alpha, float) and \
            dtype not in FLOATS or tuple(source.size) != (*size[:d], index.size[0], *size[d + 1:]):
        raise NoLowering("index_add_: a 0-D/1-D, half or mismatched tensor")
    written = node.args[0]
    if written.op != "call_function" or len(written.users) != 1:
        raise NoLowering("index_add_: its self is read elsewhere (the write must stay in place)")
    rows = size[d]
    index = G.realize(index)
    _index_check(G, aten.index_add_.default, index, d, rows)

    def row(column, rindex):
        value = index.load(rindex)
        if index.dtype != "int64":
            value = ops.to_dtype(value, "int64")
        return ops.index_expr(_clamped_row(value, rows), "int64")

    def scaled(value):
        return value if alpha == 1 else ops.mul(value, ops.constant(alpha, dtype))
    if d == 0 and nd == 2:
        return G.index_add(dtype, size, index.size[0], lambda column, rindex: scaled(
            source.load((rindex[0], column[0]))), row, self.load)
    others = size[:d] + size[d + 1:]
    others_stride = contiguous_stride(others)

    def element(column, at):
        texts = [f"({column}) / {st}" if st != 1 else f"({column})" for st in others_stride]
        texts = [f"({t}) % {n}" if k else t for k, (t, n) in enumerate(zip(texts, others))]
        return (*texts[:d], at, *texts[d:])
    return G.index_add(dtype, size, index.size[0],
                       lambda column, rindex: scaled(source.load(element(column[0], rindex[0]))),
                       row, lambda at: self.load(element(at[1], at[0])), dim=d)


@register(aten.scatter.src)
def _scatter(G, node, self, dim, index, src):
    """1-D (how AOT writes a slice of a gradient, a view write, into zeros): rows in order, so
    a repeated index keeps the last write, as eager's NumPy assignment; else the N-D kernel."""
    dtype, size = out_spec(node)
    if len(size) != 1 or dim not in (0, -1) or len(index.size) != 1 or len(src.size) != 1 \
            or index.dtype != "int64" or self.dtype != dtype or src.dtype != dtype \
            or src.size[0] < index.size[0] or not index.size[0]:
        return _scatter_along(G, node, self, dim, index, src, "assign")
    index = G.realize(index)
    _index_check(G, aten.scatter.src, index, 0, size[0])

    def row(column, rindex):
        return ops.index_expr(_clamped_row(index.load(rindex), size[0]), "int64")
    return G.index_add(dtype, size, index.size[0], lambda column, rindex: src.load(rindex),
                       row, lambda at: self.load(at[:1]), combine="assign")


@register(aten.scatter.value)
def _scatter_value(G, node, self, dim, index, value):
    """A number written where the index says: eager stores it converted to self's dtype; a
    number eager must range-check (an integer, a finite float beyond float32) keeps eager's
    kernel and its error."""
    dtype = out_spec(node)[0]
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise NoLowering("scatter.value: a bool or complex value")
    if dtype in FLOATS:
        fits = dtype == "float64" or not math.isfinite(value) or abs(value) <= FLOAT32_MAX
    else:
        bits = INT_BITS.get(dtype, 0)
        fits = isinstance(value, int) and -(1 << (bits - 1)) <= value < 1 << (bits - 1)
    if not fits:
        raise NoLowering("scatter.value: a value eager range-checks")
    return _scatter_along(G, node, self, dim, index, value, "assign")


@register(aten.scatter_add.default)
def _scatter_add(G, node, self, dim, index, src):
    return _scatter_along(G, node, self, dim, index, src, "sum")


@register(aten.scatter_reduce.two)
def _scatter_reduce(G, node, self, dim, index, src, reduce, include_self=True):
    return _scatter_along(G, node, self, dim, index, src, scatter_reduction(reduce),
                          include_self)


def _identity(reduction, dtype):
    """eager's ``_identity``: where an element the index reaches starts without self."""
    if reduction in ("sum", "mean"):
        return lambda: ops.constant(0, dtype)
    if reduction == "prod":
        return lambda: ops.constant(1, dtype)
    if dtype == "bool":
        return lambda: ops.constant(reduction == "amin", dtype)
    if dtype in FLOATS:
        return lambda: ops.constant(math.inf if reduction == "amin" else -math.inf, dtype)
    limit = f"INT{dtype[3:]}_{'MAX' if reduction == 'amin' else 'MIN'}"
    return lambda: ops.index_expr(limit, dtype)


def _scatter_along(G, node, self, dim, index, src, reduction, include_self=True):
    """``out = self; out[..., index[..., r, ...], ...] (op)= src[..., r, ...]`` along ``dim``:
    the IndexAdd kernel with a row loaded per column (Note [Scatter-add] in ir.py)."""
    dtype, size = out_spec(node)
    nd = len(size)
    d = dim % max(nd, 1)
    number = not isinstance(src, TensorValue)
    if 0 in index.size and dtype in SCATTER_DTYPES and self.dtype == dtype:
        return TensorValue(dtype, size, self.load)      # nothing scattered: self
    if dtype not in SCATTER_DTYPES or not nd or index.dtype not in INT_BITS or self.dtype != dtype \
            or (not number and (src.dtype != dtype or len(src.size) != nd
                                or any(s < i for s, i in zip(src.size, index.size)))) \
            or len(index.size) != nd or any(index.size[k] > size[k] for k in range(nd) if k != d):
        raise NoLowering("scatter: an index or source that does not fit the output")
    rows, others = size[d], size[:d] + size[d + 1:]
    reach = index.size[:d] + index.size[d + 1:]
    index = G.realize(index)
    _index_check(G, aten.scatter.src, index, d, rows)
    others_stride = contiguous_stride(others)

    def coordinates(column):
        """The index texts of column ``column`` in the dims other than ``d``."""
        texts = [f"({column}) / {st}" if st != 1 else f"({column})" for st in others_stride]
        return [f"({t}) % {n}" if k else t for k, (t, n) in enumerate(zip(texts, others))]

    def element(column, row, reached=False):
        """The full index of column ``column``'s element at ``row``; ``reached``: clamped
        into the index's extent (a masked column still loads inside the index and source)."""
        texts = coordinates(column)
        if reached:
            texts = [t if n == m else f"(({t}) < {m} ? ({t}) : {m - 1})"
                     for t, n, m in zip(texts, others, reach)]
        return (*texts[:d], row, *texts[d:])

    def mask(column):
        inside = None
        for t, n, m in zip(coordinates(column[0]), others, reach):
            if n != m:
                fits = ops.lt(ops.index_expr(t, "int64"), ops.constant(m, "int64"))
                inside = fits if inside is None else ops.where(inside, fits,
                                                               ops.constant(False, "bool"))
        return inside

    def row(column, rindex):
        place = index.load(element(column[0], rindex[0], True))
        if index.dtype != "int64":
            place = ops.to_dtype(place, "int64")
        return ops.index_expr(_clamped_row(place, rows), "int64")

    if number:
        def value(column, rindex):
            return ops.constant(src, dtype)
    else:
        def value(column, rindex):
            return src.load(element(column[0], rindex[0], True))
    masked = mask if reach != others else None
    start = None if include_self or reduction == "assign" else _identity(reduction, dtype)
    out = G.index_add(dtype, size, index.size[d], value, row,
                      lambda at: self.load(element(at[1], at[0])),
                      COMBINE.get(reduction, reduction), dim=d, start_fn=start, mask_fn=masked)
    if reduction != "mean":
        return out
    count = G.index_add("int64", size, index.size[d], lambda c, r: ops.constant(1, "int64"),
                        row, lambda at: ops.constant(int(include_self), "int64"), dim=d,
                        mask_fn=masked)

    def mean(i):
        n = count.load(i)
        n = ops.where(ops.eq(n, ops.constant(0, "int64")), ops.constant(1, "int64"), n)
        if dtype in FLOATS:
            quotient = ops.truediv(ops.to_dtype(out.load(i), "float64"),
                                   ops.to_dtype(n, "float64"))
            return ops.to_dtype(quotient, dtype)
        # np.floor_divide in int64: C's division truncates (n >= 1: it cannot trap), so a
        # negative remainder steps the quotient down
        total = ops.to_dtype(out.load(i), "int64")
        quotient = ops.truediv(total, n)
        below = ops.lt(ops.sub(total, ops.mul(quotient, n)), ops.constant(0, "int64"))
        return ops.to_dtype(ops.where(below, ops.sub(quotient, ops.constant(1, "int64")),
                                      quotient), dtype)
    return TensorValue(dtype, size, mean)


def _nested_dims(size, stride):
    """The dims of more than one element, outermost (largest stride) first, when each stride
    passes the reach of the smaller ones: then a storage position splits into an index by
    division and remainder, one dim after another. None when the strides interleave or
    overlap."""
    dims = sorted(((s, n, d) for d, (n, s) in enumerate(zip(size, stride)) if n > 1),
                  reverse=True)
    reach = 0
    for s, n, _ in reversed(dims):
        if s <= reach:
            return None
        reach += (n - 1) * s
    return dims


def _view_as_box(shape, strides, start, size, stride):
    """The view as a box of self's index space, when it is one (a slice, select or narrow of
    self): ``{self dim: (first index, step, view dim or None)}`` with every view dim of more
    than one element on its own self dim (a stride that is a multiple of that dim's) and the
    box inside self. ``start`` is the view's storage position from self's first element. Self
    does not overlap itself, so its element i is in the view exactly when i is in the box."""
    dims = _nested_dims(shape, strides)
    if dims is None or start < 0:
        return None
    box = {}
    for s, n, d in dims:            # the view's first element as an index of self
        box[d] = [start // s, 1, None]
        start %= s
    if start:
        return None
    for k, (n, s) in enumerate(zip(size, stride)):
        if n == 1:
            continue
        fits = [(ds, d) for ds, _, d in dims if ds <= s and s % ds == 0]
        if not fits:
            return None
        d = max(fits)[1]
        first, _, taken = box[d]
        step = s // strides[d]
        if taken is not None or first + (n - 1) * step >= shape[d]:
            return None
        box[d] = [first, step, k]
    return box


def _all(tests):
    hit = tests[0]
    for test in tests[1:]:
        hit = ops.where(hit, test, ops.constant(False, "bool"))
    return hit


def _index_test(fn, text, bound):
    return fn(ops.index_expr(text, "int64"), ops.constant(bound, "int64"))


def _box_formula(box, size, out_size):
    """``i -> (tests that i is in the view, src index)`` for a box view (``_view_as_box``):
    per self dim a range test (none for a dim the view spans whole), a step test, or an
    equality for a dim the view selects one index of."""
    def formula(i):
        tests, where = [], [0] * len(size)
        for d, (first, step, k) in box.items():
            if k is None:
                tests.append(_index_test(ops.eq, f"({i[d]})", first))
                continue
            n = size[k]
            at = f"({i[d]}) - {first}" if first else f"({i[d]})"
            partial = first or (n - 1) * step + 1 != out_size[d]
            if partial:
                tests.append(_index_test(ops.ge, at, 0))
                tests.append(_index_test(ops.lt, at, (n - 1) * step + 1))
            if step != 1:
                tests.append(_index_test(ops.eq, f"({at}) % {step}", 0))
                at = f"(({at}) / {step})"
            where[k] = _clamp(at, n) if partial else at
        return tests, tuple(where)
    return formula


def _split_formula(dims, strides, start, size):
    """``i -> (tests, src index)`` for any nested view: i's storage position ``q`` from the
    view's start splits into the view's index, outermost dim first (``q / stride``, then the
    remainder for the next dim); i is in the view when every part is in range and nothing is
    left over."""
    def formula(i):
        terms = [f"({x})*{s}" for x, s in zip(i, strides) if s]
        q = " + ".join(terms + ([str(-start)] if start else [])) or "0"
        tests, where = [_index_test(ops.ge, q, 0)], [0] * len(size)
        rest, outer = f"({q})", None
        for s, n, d in dims:
            if outer is not None:
                rest = f"(({rest}) % {outer})"
            at = f"({rest} / {s})" if s != 1 else rest
            if outer is None or outer != n * s:     # a whole dim under its parent is in range
                tests.append(_index_test(ops.lt, at, n))
            where[d] = _clamp(at, n)
            outer = s
        if not dims:
            tests.append(_index_test(ops.eq, q, 0))
        elif dims[-1][0] != 1:                      # a gap after the innermost dim
            tests.append(_index_test(ops.eq, f"({rest}) % {dims[-1][0]}", 0))
        return tests, tuple(where)
    return formula


def _starts_its_storage(node) -> bool:
    """Does ``node``'s value start a storage of its own when eager runs the graph (the result
    of an op that is not a view)? Graph metas keep strides but not storage offsets."""
    if node.op != "call_function":
        return False
    if node.target is operator.getitem:
        node = node.args[0]
    return not getattr(node.target, "is_view", True)


def _refuse_unless_eager_is_exact(G, node, self):
    """Before an as_strided_scatter that the formula cannot place runs eagerly (a Fallback):
    the eager kernel reads the view in the storage of the tensor it is given, which is eager's
    own only for the graph's input or constant itself, or for a fresh contiguous buffer
    standing for a fresh contiguous value. Anything else is refused, not computed wrongly."""
    b, base = self.buffer, node.args[0]
    if base.op in ("placeholder", "get_attr"):
        exact = b is not None and b == G.buffers.get(b.name)
    else:
        meta = base.meta["val"]
        exact = (_starts_its_storage(base)
                 and tuple(meta.stride()) == contiguous_stride(tuple(meta.shape))
                 and (b is None or (not b.offset and b.stride == contiguous_stride(b.size))))
    if not exact:
        raise NotImplementedError(
            "inductor: as_strided_scatter whose view the generated code cannot place (strides "
            "that interleave or overlap, or a storage_offset into a view's storage) is not "
            "supported for a tensor laid out in another storage than eager's; clone it first")


@register(aten.as_strided_scatter.default)
def _as_strided_scatter(G, node, self, src, size, stride, storage_offset=None):
    """Note [as_strided_scatter geometry] (ops/scatter.py) as a formula per output element:
    src's element where the output element's storage position is in the view, else self's.
    A slice or select of self is a box of self's index space (range tests on the index); any
    other view splits the position into the view's index. No index tensor, no scatter: the
    formula fuses with the zeros before it and the adds after it (a view's gradient)."""
    dtype, out_size = out_spec(node)
    meta = node.args[0].meta["val"]
    strides = scatter_base_geometry(meta)[0]
    # where self starts in the storage the view is placed in: 0 for a fresh value (and for an
    # expanded self, which eager clones); for another, only a view at self's start is known
    known_start = storage_offset is None or _starts_its_storage(node.args[0]) or \
        has_internal_overlap(tuple(meta.shape), tuple(meta.stride()))
    if not all(isinstance(v, int) for v in (*size, *stride, storage_offset or 0)) \
            or not known_start or dtype not in DTYPES or src.dtype not in DTYPES \
            or _nested_dims(size, stride) is None:
        _refuse_unless_eager_is_exact(G, node, self)
        raise NoLowering("as_strided_scatter: a view whose strides interleave or overlap, a "
                         "storage_offset into the storage of an input or a view, symbolic "
                         "sizes or a half dtype")
    if 0 in size:
        return TensorValue(dtype, tuple(out_size), self.load)
    start = 0 if storage_offset is None else storage_offset
    dims = _nested_dims(size, stride)
    box = _view_as_box(tuple(out_size), strides, start, size, stride)
    formula = _box_formula(box, size, out_size) if box is not None else \
        _split_formula(dims, strides, start, size)

    def load(i):
        tests, where = formula(i)
        taken = src.load(where)
        if src.dtype != dtype:
            taken = ops.to_dtype(taken, dtype)
        return ops.where(_all(tests), taken, self.load(i)) if tests else taken
    return TensorValue(dtype, tuple(out_size), load)
