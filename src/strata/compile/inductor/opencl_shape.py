"""The OpenCL device's copying shape ops: ``flip``, ``repeat``, ``gather`` and ``scatter_add``
(its backward), ``index`` and ``index_put_`` with one index tensor, ``tril``/``triu``, ``eye``,
``linspace``, ``constant_pad_nd`` (so ``F.pad`` and ``padding="same"`` convolutions).

``flip``, ``repeat``, ``gather``, ``tril``/``triu`` and ``eye`` are gathers, each a one-element
window (opencl_nn.window) reading its source at a computed position; ``scatter_add`` reads its
window backwards; ``constant_pad_nd`` fills the output, then copies the kept part of the input
into its slice (a strided pointwise copy).
"""

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
from .opencl_checks import host_indices
from .opencl_nn import window
from .opencl_pointwise import fill_, identity, new_output, pointwise, runtime_of
from .opencl_rows import gather as gather_rows


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


def _one_index(self, indices, op_name):
    """(dim, index with negatives wrapped) of ``indices`` holding one integer index tensor,
    checked on the host; masks and several index tensors raise."""
    I.check_indices(self, indices)
    given = [(d, i) for d, i in enumerate(indices) if i is not None]
    if len(given) > 1 or I.is_mask(given[0][1]):
        raise NotImplementedError(f"{op_name} with a boolean mask or several index tensors is "
                                  f"not implemented for the 'OpenCL' backend yet")
    (d, idx), = given
    size = self._shape[d]
    host = host_indices(idx)
    if host.size and (host.min() < -size or host.max() >= size):
        bad = host[(host < -size) | (host >= size)].flat[0]
        raise IndexError(f"index {bad} is out of bounds for dimension {d} with size {size}")
    if host.size and host.min() < 0:
        idx = from_array(host % size).to(self.device)
    return d, idx


def index(self, indices):
    """``self[..., idx, ...]`` with one integer index tensor (negative indices wrap): the
    gather of index_select with the index's shape in place of the indexed dim. Boolean masks
    (a data-dependent shape) and several index tensors raise."""
    d, idx = _one_index(self, indices, "aten::index.Tensor")
    spec = I.index.meta(self, indices)
    return gather_rows("aten::index.Tensor", self, idx, new_output(spec, self), d)


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
    """``self[..., idx, ...] = values`` (or ``+=`` with ``accumulate``: so the backward of
    ``x[idx]``) with one integer index tensor: every element of self takes the values whose
    index names it, the sum or the last one (deterministic, no atomics)."""
    I.index_put_.meta(self, indices, values, accumulate)
    d, idx = _one_index(self, indices, "aten::index_put_")
    if not idx.numel() or not self.numel():
        return self
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
    return self


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
            I.index_put_: index_put_, SC.scatter: scatter(SC.scatter),
            SC.scatter_value: scatter(SC.scatter_value)}
