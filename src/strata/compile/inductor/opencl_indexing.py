"""The OpenCL device's advanced indexing: ``index`` and ``index_put_`` with boolean masks and
several index tensors, ``nonzero``, ``masked_select``, ``masked_scatter_``, ``take``/``put_``,
``index_fill_``/``index_copy_``, ``one_hot``, ``searchsorted``, ``repeat_interleave``'s
indices, ``tril_indices``/``triu_indices`` (Note [OpenCL advanced indexing]).
"""

from functools import partial
from itertools import pairwise
from math import prod

import numpy as np

from ..._tensor import from_array
from ...backends.opencl import runtime as R
from ...core import dtype as D
from ...core.shape import contiguous_strides
from ...ops import activation as A
from ...ops import factory as F
from ...ops import indexing as I
from ...ops import scatter as SC
from ...ops import shape as SH
from ...ops.meta_rules import promote
from .ir import ops
from .opencl_loss import indexed_pointwise
from .opencl_nn import window
from .opencl_pointwise import fill_, identity, new_output, pointwise, runtime_of
from .opencl_rows import gather as gather_rows
from .opencl_checks import host_indices

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
    if spread.dtype != self.dtype:        # a one-element value of another dtype: cast
        shape = tuple(spread._shape)
        spread = pointwise("aten::index_put_", identity, [(spread, self.dtype)],
                           runtime_of(self).empty(shape, contiguous_strides(shape), self.dtype))
    target, source = self.transpose(d, -1), spread.transpose(d, -1)
    term, finish, kind = (_put_sum_term, _accumulated, "sum") if accumulate else \
        (_put_last_term, _last_written, "max")
    window("aten::index_put_", {"inp": target, "idx": flat, "src": source}, {},
           [(target, finish)], (flat._shape[0],), kind, term,
           self.dtype.name if accumulate else "int64")


def _one_dim_indices(index, d, size, prefix="", wrap=True):
    """index_fill_/index_copy_'s indices along ``d``, read on the host and checked."""
    flat = host_indices(index).reshape(-1)
    low = -size if wrap else 0
    if flat.size and (flat.min() < low or flat.max() >= size):
        bad = flat[(flat < low) | (flat >= size)][0]
        raise IndexError(f"{prefix}index {bad} is out of bounds for dimension {d} with size "
                         f"{size}")
    return flat % max(size, 1)


def index_fill(op):
    """``index_fill_`` (a number or a 0-dim tensor): the slices ``index`` names along ``dim``
    take the value; negative indices wrap."""
    def kernel(self, dim, index, value):
        op.meta(self, dim, index, value)
        target = self.view(1) if not self.ndim else self
        d = dim % target.ndim
        linear = _one_dim_indices(index, d, target._shape[d])
        if hasattr(value, "_storage"):
            value = value.to(self.device)
        else:
            value = fill_(runtime_of(self).empty((), (), self.dtype), value)
        _put_linear(target, [d], linear, value, False)
        return self
    return kernel


def index_copy_(self, dim, index, source):
    """The slices ``index`` names along ``dim`` take the slices of ``source`` in order."""
    SC.index_copy_.meta(self, dim, index, source)
    target = self.view(1) if not self.ndim else self
    d = dim % target.ndim
    linear = _one_dim_indices(index, d, target._shape[d], "index_copy_(): ", wrap=False)
    _put_linear(target, [d], linear, source.reshape(1) if not source.ndim else source, False)
    return self


def one_hot(self, num_classes=-1):
    """``out[..., c] = self[...] == c``: the labels are read on the host first (their range is
    checked, and ``num_classes=-1`` takes their maximum + 1: a sync point, as on CUDA)."""
    labels = host_indices(self) if self.dtype is D.int64 else None
    if num_classes == -1 and labels is not None:
        if not labels.size:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        num_classes = int(labels.max()) + 1
    spec = A.one_hot.meta(self, num_classes)
    if labels.size and labels.min() < 0:
        raise RuntimeError("Class values must be non-negative.")
    if labels.size and labels.max() >= num_classes:
        raise RuntimeError("Class values must be smaller than num_classes.")
    out = new_output(spec, self)
    if not out.numel():
        return out
    classes = F.arange(0, num_classes, 1, dtype=D.int64, device=self.device)
    return pointwise("aten::one_hot", _is_class, [(self.unsqueeze(-1), D.int64),
                                                  (classes, D.int64)], out)


def _is_class(label, c):
    return ops.to_dtype(ops.eq(label, c), "int64")


def searchsorted(sorted_sequence, self, out_int32=False, right=False, side=None, sorter=None):
    """Each value's insertion position in its row of boundaries (a 1-d sequence serves every
    value), by ATen's bisection in the promoted dtype, through ``sorter`` where given (checked
    on the host)."""
    spec = I.searchsorted.meta(sorted_sequence, self, out_int32, right, side, sorter)
    right = I.searchsorted_side(right, side)
    out = new_output(spec, self)
    length = sorted_sequence._shape[-1]
    if sorter is not None:
        order = host_indices(sorter)
        if order.size and (order.min() < 0 or order.max() >= length):
            raise RuntimeError("torch.searchsorted(): sorter index out of range")
    if not out.numel() or not length:
        return fill_(out, 0)
    values = self.reshape(1) if not self.ndim else self
    tensors = {"seq": sorted_sequence, "val": values}
    if sorter is not None:
        tensors["order"] = sorter
    compute = promote(sorted_sequence, self).name
    inner = partial(_insertion_point, compute, right, sorted_sequence.ndim == 1,
                    sorter is not None)
    indexed_pointwise("aten::searchsorted.Tensor", (right, compute, sorter is not None),
                      tensors, {"length": np.int64(length)}, out.reshape(values._shape), inner)
    return out


def _insertion_point(compute, right, shared, sorted_by, B, index):
    value = B["val"].load(index)
    value = value if value.dtype == compute else ops.to_dtype(value, compute)
    lead = () if shared else tuple(index[:-1])

    def boundary(mid):
        at = str(B["order"].load((*lead, mid))) if sorted_by else mid
        m = B["seq"].load((*lead, at))
        return m if m.dtype == compute else ops.to_dtype(m, compute)
    return ops.binary_search(value, "length", right, boundary)


def repeat_interleave_indices(repeats, output_size=None):
    """``repeat_interleave(repeats)``: index i, ``repeats[i]`` times. The counts are read on the
    host (the result's size, and no count may be negative: a sync point, as on CUDA); position
    k of the result is where k falls among the running sums of the counts, a bisection on the
    device."""
    if repeats.ndim != 1:
        raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
    if repeats.dtype not in (D.int64, D.int32):
        raise RuntimeError("repeats has to be Long or Int tensor")
    counts = host_indices(repeats)
    if counts.size and counts.min() < 0:
        raise RuntimeError("repeats can not be negative")
    total = int(counts.sum())
    if output_size is not None and total != output_size:
        raise RuntimeError(f"repeat_interleave: output_size {output_size} does not match the sum "
                           f"of repeats {total}")
    ends = repeats.cumsum(0)
    positions = F.arange(0, total, 1, dtype=repeats.dtype, device=repeats.device)
    return searchsorted(ends, positions, out_int32=repeats.dtype is D.int32, right=True)


def triangle_indices(op, upper):
    """tril_indices/triu_indices: coordinate k of the triangle lies in the row where k falls
    among the running sums of the rows' lengths (a bisection on the device); its column is k
    less that row's start, plus the row's first column. The per-row table comes from the
    arguments alone (nothing is read back)."""
    def kernel(row, col, offset=0, dtype=None, layout=None, device=None, pin_memory=None):
        spec = op.meta(row, col, offset, dtype)
        first = np.clip(np.arange(row) + offset, 0, col) if upper else np.zeros(row, np.int64)
        last = np.full(row, col) if upper else np.clip(np.arange(row) + offset + 1, 0, col)
        lengths = last - first
        ends = np.cumsum(lengths)
        rt = R.get(R.device_index(device))
        out = rt.empty(tuple(spec.shape), contiguous_strides(spec.shape), spec.dtype)
        total = spec.shape[1]
        if not total:
            return out
        positions = F.arange(0, total, 1, dtype=D.int64, device=out.device)
        rows = searchsorted(_upload(ends.astype(np.int64), out), positions, right=True)
        shift = _upload((first - (ends - lengths)).astype(np.int64), out)
        columns = pointwise(op.qualname, _column, [(positions, D.int64), (
            gather_rows(op.qualname, shift, rows, rt.empty((total,), (1,), D.int64), 0),
            D.int64)], rt.empty((total,), (1,), D.int64))
        pointwise(op.qualname, identity, [(rows, spec.dtype)], out[0])
        pointwise(op.qualname, identity, [(columns, spec.dtype)], out[1])
        return out
    return kernel


def _column(k, shift):
    return ops.add(k, shift)


def kernels() -> dict:
    return {I.index: index, I.index_put_: index_put_, I.nonzero: nonzero,
            I.masked_select: masked_select, I.masked_scatter_: masked_scatter_, I.put_: put_,
            I.take: take, SC.index_fill_: index_fill(SC.index_fill_),
            SC.index_fill_tensor_: index_fill(SC.index_fill_tensor_), SC.index_copy_: index_copy_,
            A.one_hot: one_hot, I.searchsorted: searchsorted,
            SH.repeat_interleave_indices: repeat_interleave_indices,
            F.tril_indices: triangle_indices(F.tril_indices, False),
            F.triu_indices: triangle_indices(F.triu_indices, True)}
