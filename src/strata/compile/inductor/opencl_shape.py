"""The OpenCL device's copying shape ops: ``flip``, ``repeat``, ``gather`` and ``scatter_add``
(its backward), ``index`` and ``index_put_`` (masks, several index tensors), ``nonzero``,
``masked_select``, ``masked_scatter_``, ``take``/``put_``, ``scatter_reduce``, ``tril``/``triu``,
``eye``, ``linspace``, ``constant_pad_nd`` (so ``F.pad`` and ``padding="same"`` convolutions).

``flip``, ``repeat``, ``gather``, ``tril``/``triu`` and ``eye`` are gathers, each a one-element
window (opencl_nn.window) reading its source at a computed position; ``scatter_add`` reads its
window backwards; ``constant_pad_nd`` fills the output, then copies the kept part of the input
into its slice (a strided pointwise copy).
"""

from functools import partial
from itertools import pairwise
from math import prod

import numpy as np

from ..._tensor import from_array
from ...backends.opencl import runtime as R
from ...core import dtype as D
from ...core.shape import contiguous_strides
from ...ops import factory as F
from ...ops import indexing as I
from ...ops import nn as NN
from ...ops import scatter as SC
from ...ops import shape as SH
from .ir import ops
from .oclprinter import FLOATING
from .opencl_nn import highest, lowest, window
from .opencl_pointwise import fill_, identity, new_output, pointwise, runtime_of
from .opencl_rows import gather as gather_rows
from .opencl_rows import host_indices


def _loaded(B, index):
    return ops.load("red", "0")


def _flipped(B, index, rindex):
    return B["inp"].load(tuple(f"(flip{d} ? s{d} - 1 - {i} : {i})"
                               for d, i in enumerate(index)))


def flip(self, dims):
    spec = SH.flip.meta(self, dims)
    out = new_output(spec, self)
    if not out.numel():
        return out
    if not self.ndim:
        return pointwise("aten::flip", identity, [(self, self.dtype)], out)
    flipped = {d % self.ndim for d in dims}
    ints = {f"flip{d}": int(d in flipped) for d in range(self.ndim)}
    window("aten::flip", {"inp": self}, ints, [(out, _loaded)], (1,), "sum", _flipped,
           out.dtype.name)
    return out


def _repeated(B, index, rindex):
    return B["inp"].load(tuple(f"({i} % xs{d})" for d, i in enumerate(index)))


def repeat(self, repeats):
    spec = SH.repeat.meta(self, repeats)
    out = new_output(spec, self)
    if not out.numel():
        return out
    source = self.reshape((1,) * (out.ndim - self.ndim) + tuple(self._shape))
    ints = {f"xs{d}": n for d, n in enumerate(source._shape)}
    window("aten::repeat", {"inp": source}, ints, [(out, _loaded)], (1,), "sum", _repeated,
           out.dtype.name)
    return out


def _gathered(B, index, rindex):
    *lead, _ = index
    return B["inp"].load((*lead, str(B["idx"].load(index))))


def gather(self, dim, index, sparse_grad=False):
    """``out[i] = self[i with dim replaced by index[i]]``, along the last dim of transposed
    views; the indices are checked on the host first (a sync point, as for index_select)."""
    spec = SC.gather.meta(self, dim, index, sparse_grad)
    out = new_output(spec, self)
    if not out.numel():
        return out
    d = dim % max(self.ndim, 1)
    size = self._shape[d] if self.ndim else 1
    _checked_indices(index, d, size)
    views = [t.reshape(1) if t.ndim == 0 else t.transpose(d, -1) for t in (self, index, out)]
    window("aten::gather", {"inp": views[0], "idx": views[1]}, {}, [(views[2], _loaded)], (1,),
           "sum", _gathered, out.dtype.name)
    return out


def _checked_indices(index, d, size):
    idx = host_indices(index)
    if idx.size and (idx.min() < 0 or idx.max() >= size):
        bad = idx[(idx < 0) | (idx >= size)].flat[0]
        raise RuntimeError(f"index {bad} is out of bounds for dimension {d} with size {size}")


def _scattered_term(B, index, rindex):
    """Note [Windows read backwards] (opencl_nn.py): position p of the row takes each src
    element j whose index is p; rows past the index's size take nothing."""
    *lead, p = index
    (j,) = rindex
    conditions = [f"{i} < isz{k}" for k, i in enumerate(lead)]
    at = (*(f"clamp((long){i}, 0L, isz{k} - 1)" for k, i in enumerate(lead)), j)
    conditions.append(f"{B['idx'].load(at)} == {p}")
    hit = ops.index_expr(" && ".join(conditions), "bool")
    value = B["src"].load(at)
    return ops.where(hit, value, ops.constant(0, value.dtype))


def _scattered_last(B, index, rindex):
    """The last src position j of the row whose index names p, else -1."""
    *lead, p = index
    (j,) = rindex
    conditions = [f"{i} < isz{k}" for k, i in enumerate(lead)]
    at = (*(f"clamp((long){i}, 0L, isz{k} - 1)" for k, i in enumerate(lead)), j)
    conditions.append(f"{B['idx'].load(at)} == {p}")
    return ops.index_expr(f"({' && '.join(conditions)}) ? {j} : -1", "int64")


def _written_src(B, index):
    *lead, _ = index
    j = ops.load("red", "0")
    at = (*(f"clamp((long){i}, 0L, isz{k} - 1)" for k, i in enumerate(lead)), f"max({j}, 0L)")
    return ops.where(ops.index_expr(f"{j} >= 0", "bool"), B["src"].load(at),
                     B["inp"].load(index))


def _written_value(B, index):
    value = B["fill"].load(())
    return ops.where(ops.index_expr(f"{ops.load('red', '0')} >= 0", "bool"), value,
                     B["inp"].load(index))


def scatter(op):
    """scatter.src / scatter.value: each element of self that an index names takes the last
    src element (or the value) naming it, as the CPU's assignment does."""
    def kernel(self, dim, index, src):
        spec = op.meta(self, dim, index, src)
        out = new_output(spec, self)
        if not out.numel():
            return out
        if not index.numel():
            return pointwise(op.qualname, identity, [(self, out.dtype)], out)
        d = dim % max(self.ndim, 1)
        _checked_indices(index, d, self._shape[d] if self.ndim else 1)
        if not hasattr(src, "_storage"):       # scatter.value: a one-element device tensor
            src = fill_(runtime_of(self).empty((), (), out.dtype), src)
            reads, finish = {"fill": src}, _written_value
        else:
            reads, finish = {"src": _last_dim(src, d)}, _written_src
        views = [_last_dim(t, d) for t in (self, index, out)]
        ints = {f"isz{k}": n for k, n in enumerate(views[1]._shape[:-1])}
        window(op.qualname, {"inp": views[0], "idx": views[1], **reads}, ints,
               [(views[2], finish)], (views[1]._shape[-1],), "max", _scattered_last, "int64")
        return out
    return kernel


def _last_dim(t, d):
    return t.reshape(1) if t.ndim == 0 else t.transpose(d, -1)


def _plus_self(B, index):
    return ops.add(B["inp"].load(index), ops.load("red", "0"))


def scatter_add(self, dim, index, src):
    """``out = self``, plus each src element added at its index along ``dim``: every output
    element sums the src elements that name it (deterministic, no atomics; the indices are
    checked on the host first)."""
    spec = SC.scatter_add.meta(self, dim, index, src)
    out = new_output(spec, self)
    if not out.numel():
        return out
    if not index.numel():
        return pointwise("aten::scatter_add", identity, [(self, out.dtype)], out)
    d = dim % max(self.ndim, 1)
    _checked_indices(index, d, self._shape[d] if self.ndim else 1)
    views = [t.reshape(1) if t.ndim == 0 else t.transpose(d, -1)
             for t in (self, index, src, out)]
    ints = {f"isz{k}": n for k, n in enumerate(views[1]._shape[:-1])}
    window("aten::scatter_add", {"inp": views[0], "idx": views[1], "src": views[2]}, ints,
           [(views[3], _plus_self)], (views[1]._shape[-1],), "sum", _scattered_term,
           out.dtype.name)
    return out


# --- scatter_reduce: each output element reduces the sources that name it ------------------------

def _hit(B, index, rindex):
    """Whether src element ``rindex`` of this row names position p (Note [Windows read
    backwards]), and where it is."""
    *lead, p = index
    (j,) = rindex
    conditions = [f"{i} < isz{k}" for k, i in enumerate(lead)]
    at = (*(f"clamp((long){i}, 0L, isz{k} - 1)" for k, i in enumerate(lead)), j)
    conditions.append(f"{B['idx'].load(at)} == {p}")
    return ops.index_expr(" && ".join(conditions), "bool"), at


def _hit_count(B, index, rindex):
    hit, _ = _hit(B, index, rindex)
    return ops.to_dtype(hit, "int64")


def _reduce_term(identity, B, index, rindex):
    hit, at = _hit(B, index, rindex)
    value = B["src"].load(at)
    return ops.where(hit, value, ops.constant(identity(value.dtype), value.dtype))


def _combined(reduction, include_self, B, index):
    """self combined with the reduction of its sources (``red``), as ATen's scatter_reduce:
    without ``include_self`` an element that no source names keeps its value; ``mean`` divides
    by the count (plus one with self), flooring integers."""
    total, own = ops.load("red", "0"), B["inp"].load(index)
    count = B["cnt"].load(index)
    if reduction == "mean":
        if include_self:
            total = ops.add(total, own)
            count = ops.add(count, ops.constant(1, "int64"))
        divisor = ops.to_dtype(ops.maximum(count, ops.constant(1, "int64")), total.dtype)
        mean = ops.truediv(total, divisor) if total.dtype in FLOATING else \
            _floored_quotient(total, divisor)
        return ops.where(ops.gt(count, ops.constant(0, "int64")), mean, own)
    if include_self:
        return {"sum": ops.add, "prod": ops.mul, "amax": ops.maximum,
                "amin": ops.minimum}[reduction](own, total)
    return ops.where(ops.gt(count, ops.constant(0, "int64")), total, own)


def _floored_quotient(a, b):
    """a // b for integers with b > 0."""
    quotient, rest = ops.int_trunc_divide(a, b), ops.int_fmod(a, b)
    below = ops.lt(rest, ops.constant(0, rest.dtype))
    return ops.where(below, ops.sub(quotient, ops.constant(1, a.dtype)), quotient)


# the reduction's kind, the identity its absent sources take (by dtype name)
SCATTER_REDUCTIONS = {"sum": ("sum", lambda dtype: 0), "mean": ("sum", lambda dtype: 0),
                      "prod": ("prod", lambda dtype: 1), "amax": ("max", lowest),
                      "amin": ("min", highest)}
_TERMS = {name: partial(_reduce_term, identity)
          for name, (_, identity) in SCATTER_REDUCTIONS.items()}
_FINISH = {(name, include): partial(_combined, name, include)
           for name in SCATTER_REDUCTIONS for include in (False, True)}


def scatter_reduce(self, dim, index, src, reduce, include_self=True):
    """``scatter_reduce.two``: every output element reduces (sum, prod, mean, amax, amin) the
    src elements whose index names it, with or without its own value: one kernel counts them,
    one reduces and combines (deterministic, no atomics; indices checked on the host)."""
    spec = SC.scatter_reduce.meta(self, dim, index, src, reduce, include_self)
    reduction = SC.scatter_reduction(reduce)
    out = new_output(spec, self)
    if not out.numel():
        return out
    if not index.numel():
        return pointwise("aten::scatter_reduce.two", identity, [(self, out.dtype)], out)
    d = dim % max(self.ndim, 1)
    _checked_indices(index, d, self._shape[d] if self.ndim else 1)
    views = [_last_dim(t, d) for t in (self, index, src, out)]
    count = runtime_of(self).empty(tuple(out._shape), contiguous_strides(out._shape), D.int64)
    counts = _last_dim(count, d)
    ints = {f"isz{k}": n for k, n in enumerate(views[1]._shape[:-1])}
    rsizes = (views[1]._shape[-1],)
    window("aten::scatter_reduce.two", {"idx": views[1]}, ints, [(counts, _loaded)], rsizes,
           "sum", _hit_count, "int64")
    kind = SCATTER_REDUCTIONS[reduction][0]
    window("aten::scatter_reduce.two",
           {"inp": views[0], "idx": views[1], "src": views[2], "cnt": counts}, ints,
           [(views[3], _FINISH[reduction, include_self])], rsizes, kind, _TERMS[reduction],
           out.dtype.name)
    return out


def _triangle_term(B, index, rindex):
    """x where column - row is at most ``diagonal`` (tril) or at least it (triu), else 0."""
    *_, i, j = index
    keep = ops.index_expr(f"upper ? {j} - {i} >= diagonal : {j} - {i} <= diagonal", "bool")
    x = B["inp"].load(index)
    return ops.where(keep, x, ops.constant(0, x.dtype))


def triangle(op, upper):
    def kernel(self, diagonal=0):
        spec = op.meta(self, diagonal)
        out = new_output(spec, self)
        if out.numel():
            window(op.qualname, {"inp": self}, {"diagonal": diagonal, "upper": int(upper)},
                   [(out, _loaded)], (1,), "sum", _triangle_term, out.dtype.name)
        return out
    return kernel


def _diagonal_one(B, index, rindex):
    i, j = index
    return ops.index_expr(f"{i} == {j}", "int64")


def eye(n, m=None, dtype=None, layout=None, device=None, pin_memory=None):
    spec = F.eye.meta(n, m, dtype, layout, device, pin_memory)
    shape = tuple(spec.shape)
    out = R.get(R.device_index(device)).empty(shape, contiguous_strides(shape), spec.dtype)
    if out.numel():
        window("aten::eye.m", {}, {}, [(out, _loaded)], (1,), "sum", _diagonal_one, "int64")
    return out


# --- advanced indexing: masks and several index tensors -------------------------------------------
# Note [OpenCL advanced indexing]: every form of ``x[indices]`` becomes one gather along one dim.
# The indices are read on the host (a sync point: a mask's nonzero count fixes the result's size,
# which CUDA also reads back; integer indices are bounds-checked there, as index_select does);
# masks expand into their nonzero columns, the index tensors broadcast, and their values fold
# into one linear index over the indexed dims, merged into one dim of ``self`` (moved to the
# front when they are not adjacent, PyTorch's rule for where the result's dims go).

def nonzero_host(x):
    """``np.nonzero`` of a device tensor's values, read on the host (a sync point)."""
    return np.nonzero(host_indices(x))


def nonzero(self):
    """(n, ndim) int64 coordinates of the nonzero elements in row-major order, column-major in
    memory as ATen's."""
    if self.ndim:
        columns = np.stack(nonzero_host(self))
    else:                   # (1, 0) or (0, 0), as ATen
        columns = np.zeros((0, int(_item(self) != 0)))
    return _upload(np.ascontiguousarray(columns, dtype=np.int64), self).t()


def _item(x):
    return host_indices(x.reshape(1))[0]


def _upload(array, like):
    return from_array(array).to(like.device)


def _linear_index(self, indices):
    """(dims indexed in order, the host's linear index over them broadcast to the result's
    index shape) for ``self[indices]``, masks expanded; out-of-range indices raise IndexError,
    negative ones wrap."""
    I.check_indices(self, indices)
    dims, columns, position = [], [], 0
    for i in indices:
        if i is None:
            position += 1
        elif I.is_mask(i):
            if not i.ndim:
                raise NotImplementedError("aten::index.Tensor with a 0-dim boolean mask is not "
                                          "implemented for the 'OpenCL' backend yet")
            I.check_mask(self, i, position)
            for k, column in enumerate(nonzero_host(i)):
                dims.append(position + k)
                columns.append(column)
            position += i.ndim
        else:
            dims.append(position)
            columns.append(host_indices(i))
            position += 1
    try:
        columns = np.broadcast_arrays(*columns)
    except ValueError:
        shapes = ", ".join(I.fmt(c.shape) for c in columns)
        raise IndexError(f"shape mismatch: indexing tensors could not be broadcast together "
                         f"with shapes {shapes}") from None
    linear = np.zeros(columns[0].shape, np.int64)
    for d, column in zip(dims, columns):
        size = self._shape[d]
        if column.size and (column.min() < -size or column.max() >= size):
            bad = column[(column < -size) | (column >= size)].flat[0]
            raise IndexError(f"index {bad} is out of bounds for dimension {d} with size {size}")
        linear = linear * size + column % max(size, 1)
    return dims, linear


def _moved(self, dims):
    """(``self`` with ``dims`` next to each other, the first one's position): in place when they
    are adjacent, else at the front. A view."""
    first = dims[0] if dims == list(range(dims[0], dims[0] + len(dims))) else 0
    rest = [d for d in range(self.ndim) if d not in dims]
    order = rest[:first] + dims + rest[first:]
    return (self.permute(order) if order != list(range(self.ndim)) else self), first


def _merged_shape(moved, first, count):
    shape = tuple(moved._shape)
    return shape[:first] + (prod(shape[first:first + count]),) + shape[first + count:]


def _mergeable(moved, first, count):
    """Whether a view can merge dims ``first .. first + count - 1`` of ``moved``."""
    sizes, strides = moved._shape, moved._get_strides()
    kept = [d for d in range(first, first + count) if sizes[d] != 1]
    return all(strides[a] == strides[b] * sizes[b] for a, b in pairwise(kept))


def index(self, indices):
    """``self[indices]``: integer index tensors, boolean masks, several of them, slices
    between (Note [OpenCL advanced indexing])."""
    dims, linear = _linear_index(self, indices)
    moved, d = _moved(self, dims)
    merged = moved.reshape(_merged_shape(moved, d, len(dims)))
    shape = tuple(merged._shape[:d]) + linear.shape + tuple(merged._shape[d + 1:])
    out = runtime_of(self).empty(shape, contiguous_strides(shape), self.dtype)
    if not out.numel():
        return out
    return gather_rows("aten::index.Tensor", merged, _upload(linear, self), out, d)


def masked_select(self, mask):
    """The elements of ``self`` where ``mask`` (both broadcast) is true, as a 1-d tensor."""
    shape = I._check_mask_select(self, mask)
    return index(self.expand(shape), [mask.expand(shape)])


def _put_sum_term(B, index, rindex):
    *lead, p = index
    (k,) = rindex
    value = B["src"].load((*lead, k))
    hit = ops.index_expr(f"{B['idx'].load((k,))} == {p}", "bool")
    return ops.where(hit, value, ops.constant(0, value.dtype))


def _put_last_term(B, index, rindex):
    *_, p = index
    (k,) = rindex
    return ops.index_expr(f"{B['idx'].load((k,))} == {p} ? {k} : -1", "int64")


def _accumulated(B, index):
    return ops.add(B["inp"].load(index), ops.load("red", "0"))


def _last_written(B, index):
    *lead, _ = index
    k = ops.load("red", "0")
    value = B["src"].load((*lead, f"max({k}, 0L)"))
    return ops.where(ops.index_expr(f"{k} >= 0", "bool"), value, B["inp"].load(index))


def index_put_(self, indices, values, accumulate=False):
    """``self[indices] = values`` (or ``+=`` with ``accumulate``: so the backward of
    ``x[indices]``; Note [OpenCL advanced indexing]): every element of self takes the values
    whose index names it, the sum or the last one (deterministic, no atomics)."""
    I.index_put_.meta(self, indices, values, accumulate)
    dims, linear = _linear_index(self, indices)
    return _put_linear(self, dims, linear, values, accumulate)


def masked_scatter_(self, mask, source):
    """The elements of ``self`` where ``mask`` (broadcast to self) is true take the first
    elements of ``source``, in row-major order."""
    I.masked_scatter_.meta(self, mask, source)
    if not self.ndim:
        masked_scatter_(self.view(1), mask.reshape(1), source)
        return self
    dims, linear = _linear_index(self, [mask.expand(tuple(self._shape))])
    if linear.size > source.numel():
        raise RuntimeError("Number of elements of source < number of ones in mask")
    return _put_linear(self, dims, linear, source.reshape(-1)[:linear.size], False)


def _flat_indices(index, numel):
    """take/put_'s indices into a tensor of ``numel`` elements read as flat, read on the host,
    checked and wrapped."""
    flat = host_indices(index)
    if flat.size and (flat.min() < -numel or flat.max() >= numel):
        bad = flat[(flat < -numel) | (flat >= numel)].flat[0]
        raise IndexError(f"out of range: tried to access index {bad} on a tensor of {numel} "
                         f"elements.")
    return flat % max(numel, 1)


def take(self, index):
    """``self`` read as a flat tensor at ``index``, in index's shape."""
    spec = I.take.meta(self, index)
    flat = _flat_indices(index, self.numel())
    out = new_output(spec, self)
    if not out.numel():
        return out
    return gather_rows("aten::take", self.reshape(-1), _upload(flat, self), out, 0)


def put_(self, index, source, accumulate=False):
    """``self`` as a flat tensor, ``self.flat[index] = source`` (``+=`` with ``accumulate``);
    negative indices wrap."""
    I.put_.meta(self, index, source, accumulate)
    flat = _flat_indices(index, self.numel()).reshape(-1)
    target = self.view(1) if not self.ndim else self
    _put_linear(target, list(range(target.ndim)), flat, source.reshape(-1), accumulate)
    return self


def _put_linear(self, dims, linear, values, accumulate):
    """``self[indices] = values`` given the indexed ``dims`` and the linear index over them
    (``_linear_index``)."""
    if not linear.size or not self.numel():
        return self
    moved, d = _moved(self, dims)
    shape = _merged_shape(moved, d, len(dims))
    if _mergeable(moved, d, len(dims)):
        _put(moved.view(shape), d, _upload(linear, self), values, accumulate)
    else:       # no view merges the dims: put into a contiguous copy, then write it back
        work = moved.contiguous()
        _put(work.view(shape), d, _upload(linear, self), values, accumulate)
        moved.copy_(work)
    return self


def _put(self, d, idx, values, accumulate):
    """``self[.., idx, ..] = values`` along ``d`` (indices in range, non-negative)."""
    flat = idx.reshape(-1)
    shape = tuple(self._shape[:d]) + tuple(idx._shape) + tuple(self._shape[d + 1:])
    spread = values.expand(shape).reshape(
        tuple(self._shape[:d]) + (flat._shape[0],) + tuple(self._shape[d + 1:]))
    if spread.dtype != self.dtype:
        spread = pointwise("aten::index_put_", identity, [(spread, self.dtype)],
                           new_output(spread, spread))
    target, source = self.transpose(d, -1), spread.transpose(d, -1)
    term, finish, kind = (_put_sum_term, _accumulated, "sum") if accumulate else \
        (_put_last_term, _last_written, "max")
    window("aten::index_put_", {"inp": target, "idx": flat, "src": source}, {},
           [(target, finish)], (flat._shape[0],), kind, term,
           self.dtype.name if accumulate else "int64")


def linspace(start, end, steps, dtype=None, layout=None, device=None, pin_memory=None):
    """The CPU's symmetric formula: the first half counts up from start, the rest down from
    end, in float32 (float64 for float64; integers: float64 from truncated ends, then
    truncated)."""
    spec = F.linspace.meta(start, end, steps, dtype)
    dt = spec.dtype
    work = D.float64 if dt is D.float64 or not dt.is_floating_point else D.float32
    if not dt.is_floating_point:
        start, end = int(start), int(end)
    kind = work.np.type
    first, last = kind(start), kind(end if steps > 1 else start)     # one step: start
    step = (last - first) / kind(max(steps - 1, 1))
    index = F.arange(0, steps, 1, dtype=work, device=device)
    out = R.get(R.device_index(device)).empty((steps,), (1,), dt)
    return pointwise("aten::linspace", _symmetric_step,
                     [(index, work), (first, work), (last, work), (step, work),
                      (steps // 2, work), (steps - 1, work)], out)


def _symmetric_step(i, first, last, step, half, top):
    up = ops.add(first, ops.mul(step, i))
    down = ops.sub(last, ops.mul(step, ops.sub(top, i)))
    return ops.where(ops.lt(i, half), up, down)


def constant_pad_nd(self, pad, value=0):
    """The output filled with ``value``, then the kept input copied into its slice (negative
    pads crop the input)."""
    spec = NN.constant_pad_nd.meta(self, pad, value)
    out = fill_(new_output(spec, self), value)
    source, target = self, out
    for k in range(len(pad) // 2):
        d = self.ndim - 1 - k
        before, after = pad[2 * k], pad[2 * k + 1]
        length = self._shape[d] - max(-before, 0) - max(-after, 0)
        if length <= 0:
            return out
        source = source.narrow(d, max(-before, 0), length)
        target = target.narrow(d, max(before, 0), length)
    if source.numel():
        pointwise("aten::constant_pad_nd", identity, [(source, out.dtype)], target)
    return out


def kernels() -> dict:
    return {SH.flip: flip, SH.repeat: repeat, SC.gather: gather, SC.scatter_add: scatter_add,
            NN.constant_pad_nd: constant_pad_nd, SH.tril: triangle(SH.tril, False),
            SH.triu: triangle(SH.triu, True), F.eye: eye, F.linspace: linspace, I.index: index,
            I.index_put_: index_put_, I.nonzero: nonzero, I.masked_select: masked_select,
            I.masked_scatter_: masked_scatter_, I.put_: put_, I.take: take,
            SC.scatter: scatter(SC.scatter), SC.scatter_reduce: scatter_reduce,
            SC.scatter_value: scatter(SC.scatter_value)}
