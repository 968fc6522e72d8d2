"""The OpenCL device's copying shape ops: ``flip``, ``roll``, ``repeat``, ``gather`` and
``scatter_add`` (its backward), ``scatter``, ``scatter_reduce``, ``tril``/``triu``, ``diag``,
``eye``, ``linspace``, ``constant_pad_nd`` (so ``F.pad`` and ``padding="same"`` convolutions),
``as_strided_scatter``; advanced indexing is in opencl_indexing.py.

``flip``, ``roll``, ``repeat``, ``gather``, ``tril``/``triu``, ``diag`` and ``eye`` are gathers,
each a one-element window (opencl_nn.window) reading its source at a computed position;
``scatter_add`` and ``scatter_reduce`` read their window backwards; ``constant_pad_nd`` fills the
output, then copies the kept part of the input into its slice (a strided pointwise copy).
"""

from functools import partial

from ...backends.opencl import runtime as R
from ...core import dtype as D
from ...core.shape import contiguous_strides, storage_extent
from ...ops import factory as F
from ...ops import nn as NN
from ...ops import scatter as SC
from ...ops import shape as SH
from .ir import ops
from .oclprinter import FLOATING
from .opencl_checks import host_indices
from .opencl_nn import highest, lowest, window
from .opencl_pointwise import fill_, identity, new_output, pointwise, runtime_of


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


def _rolled(B, index, rindex):
    return B["inp"].load(tuple(f"(({i} + s{d} - shift{d}) % s{d})" for d, i in enumerate(index)))


def roll(self, shifts, dims=()):
    """``out[i] = self[(i - shift) mod size]`` along each rolled dim (no dims: the flat
    tensor), a one-element gather."""
    spec = SH.roll.meta(self, shifts, dims)
    shifts = (shifts,) if isinstance(shifts, int) else tuple(shifts)
    dims = (dims,) if isinstance(dims, int) else tuple(dims)
    if not dims:
        return roll(self.reshape(-1), shifts, (0,)).view(tuple(self._shape))
    out = new_output(spec, self)
    if not out.numel():
        return out
    amount = [0] * self.ndim
    for shift, d in zip(shifts, dims, strict=True):
        amount[d % self.ndim] += shift
    ints = {f"shift{d}": a % self._shape[d] for d, a in enumerate(amount)}
    window("aten::roll", {"inp": self}, ints, [(out, _loaded)], (1,), "sum", _rolled,
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


def _diagonal_term(B, index, rindex):
    """v[position along the diagonal] on the ``diagonal``-th diagonal, else 0."""
    i, j = index
    keep = ops.index_expr(f"{j} - {i} == diagonal", "bool")
    x = B["inp"].load((f"clamp(diagonal >= 0 ? {i} : {j}, 0L, vlen - 1)",))
    return ops.where(keep, x, ops.constant(0, x.dtype))


def diag(self, diagonal=0):
    """A 1-d tensor: the square matrix with it on the ``diagonal``-th diagonal; a 2-d one: a
    copy of that diagonal."""
    spec = SH.diag.meta(self, diagonal)
    out = new_output(spec, self)
    if self.ndim == 2:
        return pointwise("aten::diag", identity, [(self.diagonal(diagonal), self.dtype)], out)
    if out.numel():
        window("aten::diag", {"inp": self}, {"diagonal": diagonal, "vlen": self._shape[0]},
               [(out, _loaded)], (1,), "sum", _diagonal_term, out.dtype.name)
    return out


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


def as_strided_scatter(self, src, size, stride, storage_offset=None):
    """Note [as_strided_scatter geometry] (ops/scatter.py) as three strided copies: self's
    elements into a scratch buffer at their storage positions, src over the view's, then
    self's positions read back into the result (the CPU kernel's steps)."""
    spec = SC.as_strided_scatter.meta(self, src, size, stride, storage_offset)
    strides, base_offset, _ = SC.scatter_base_geometry(self)
    offset = base_offset if storage_offset is None else storage_offset
    shape, size = tuple(self._shape), tuple(size)
    rt = runtime_of(self)
    out = rt.empty(tuple(spec.shape), tuple(spec.strides), spec.dtype)
    if not out.numel():
        return out
    reach = max(base_offset + storage_extent(shape, strides),
                offset + storage_extent(size, stride))
    scratch = rt.empty((reach,), (1,), self.dtype)
    placed = scratch.as_strided(shape, strides, base_offset)
    pointwise("aten::as_strided_scatter", identity, [(self, self.dtype)], placed)
    if 0 not in size:
        pointwise("aten::as_strided_scatter", identity, [(src, self.dtype)],
                  scratch.as_strided(size, stride, offset))
    return pointwise("aten::as_strided_scatter", identity, [(placed, self.dtype)], out)


def kernels() -> dict:
    return {SH.flip: flip, SH.roll: roll, SH.repeat: repeat, SC.gather: gather,
            SC.scatter_add: scatter_add, NN.constant_pad_nd: constant_pad_nd,
            SH.tril: triangle(SH.tril, False), SH.triu: triangle(SH.triu, True), F.eye: eye,
            SH.diag: diag,
            F.linspace: linspace, SC.scatter: scatter(SC.scatter),
            SC.scatter_reduce: scatter_reduce, SC.scatter_value: scatter(SC.scatter_value),
            SC.as_strided_scatter: as_strided_scatter}
