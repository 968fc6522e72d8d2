"""The OpenCL device's sorting: ``sort`` (so ``argsort``, ``msort``), ``topk``, ``kthvalue``,
``unique`` and ``unique_consecutive``.

A rank sort in two loop-IR kernels (opencl_nn.window), along the last dim of a transposed view:
the rank of element i is the number of elements of its row that sort before it (smaller, or
equal with a smaller index: stable; NaN after every number ascending, before them descending,
as ATen orders it), then output position r gathers the element whose rank is r. Each element
compares with its whole row, n^2 work per row of n: simple and exact for the short rows of
models (top-k of logits, argsort of a batch); a bitonic or radix sort in local memory is the
next step for long rows.
"""

import numpy as np

from ..._tensor import from_array
from ...core import dtype as D
from ...core.shape import contiguous_strides
from ...ops import sorting as SO
from .ir import ops
from .opencl_nn import window
from .opencl_pointwise import clone, pointwise, runtime_of
from .opencl_rows import gather, host_indices


def _nan(v):
    return f"({v} != {v})"


def _rank_term(B, index, rindex):
    *lead, i = index
    (j,) = rindex
    a, b = B["inp"].load((*lead, j)), B["inp"].load(index)
    ascending = f"((!{_nan(a)} && {_nan(b)}) || {a} < {b})"
    descending = f"(({_nan(a)} && !{_nan(b)}) || {a} > {b})"
    equal = f"({a} == {b} || ({_nan(a)} && {_nan(b)}))"
    return ops.index_expr(f"(desc ? {descending} : {ascending}) || ({equal} && {j} < {i})",
                          "int64")


def _place_term(B, index, rindex):
    *lead, r = index
    (j,) = rindex
    return ops.index_expr(f"{B['rank'].load((*lead, j))} == {r} ? {j} : 0", "int64")


def _placed_value(B, index):
    return B["inp"].load((*index[:-1], str(ops.load("red", "0"))))


def _placed_index(B, index):
    return ops.load("red", "0")


def sort(self, stable=None, dim=-1, descending=False):
    """(values, indices), always stable (a stable order is one of the orders ``stable=False``
    allows)."""
    values_spec, indices_spec = SO.sort.meta(self, stable, dim, descending)
    rt = runtime_of(self)
    shape = tuple(values_spec.shape)
    values = rt.empty(shape, contiguous_strides(shape), values_spec.dtype)
    indices = rt.empty(shape, contiguous_strides(shape), indices_spec.dtype)
    if not self.numel():
        return values, indices
    ranks = rt.empty(shape, contiguous_strides(shape), indices_spec.dtype)
    x, v, i, r = (t.reshape(1) if self.ndim == 0 else t.transpose(dim, -1)
                  for t in (self, values, indices, ranks))
    row = x._shape[-1]
    window("aten::sort.stable", {"inp": x}, {"desc": int(bool(descending))},
           [(r, _placed_index)], (row,), "sum", _rank_term, "int64")
    window("aten::sort.stable", {"inp": x, "rank": r}, {}, [(v, _placed_value),
                                                           (i, _placed_index)],
           (row,), "sum", _place_term, "int64")
    return values, indices


def topk(self, k, dim=-1, largest=True, sorted=True):
    """The first ``k`` of a stable sort (``sorted=False`` allows any order: this one)."""
    SO.topk.meta(self, k, dim, largest, sorted)
    values, indices = sort(self, True, dim, largest)
    if self.ndim == 0:
        return values, indices
    return clone(values.narrow(dim, 0, k)), clone(indices.narrow(dim, 0, k))


def kthvalue(self, k, dim=-1, keepdim=False):
    """The k-th smallest element along ``dim`` and its index (position k - 1 of the sort)."""
    SO.kthvalue.meta(self, k, dim, keepdim)
    values, indices = sort(self, True, dim, False)
    if self.ndim == 0:
        return values, indices
    picked = [clone(t.narrow(dim, k - 1, 1)) for t in (values, indices)]
    return tuple(t if keepdim else t.squeeze(dim) for t in picked)


# --- unique: a data-dependent size ----------------------------------------------------------------

def _starts_a_run(x, previous):
    return ops.ne(x, previous)      # NaN != NaN: every NaN is its own value, as ATen's


def _runs(op_name, flat):
    """(the host's flags of the positions of ``flat`` (on the device) that differ from the one
    before, as int64 group numbers, the first position of each group): the flags are computed on
    the device and read back, the one sync the result's size needs."""
    n = flat._shape[0]
    differs = runtime_of(flat).empty((max(n - 1, 0),), (1,), D.bool_)
    if n > 1:
        pointwise(op_name, _starts_a_run, [(flat[1:], flat.dtype), (flat[:-1], flat.dtype)],
                  differs)
    starts = np.concatenate([[n > 0], host_indices(differs)]).astype(bool)
    return np.cumsum(starts) - 1, np.flatnonzero(starts)


def _results(self, flat, group, first, inverse_order, return_inverse, return_counts):
    """(values, inverse, counts) of unique/unique_consecutive: the values gathered on the
    device; inverse and counts (small integer tensors) made on the host and uploaded."""
    n = flat._shape[0]
    values = runtime_of(flat).empty((first.size,), (1,), flat.dtype)
    if first.size:      # the first positions are in range: no check (index_select's) needed
        gather("aten::_unique2", flat, from_array(first.astype(np.int64)).to(self.device),
               values, 0)
    inverse, counts = np.zeros(0, np.int64), np.zeros(0, np.int64)
    if return_inverse:
        inverse = np.empty(n, np.int64)
        inverse[inverse_order] = group
        inverse = inverse.reshape(tuple(self._shape))
    if return_counts:
        counts = np.diff(np.append(first, n))
    return values, *(from_array(np.array(a, np.int64, order="C")).to(self.device)
                     for a in (inverse, counts))


def unique(self, sorted=True, return_inverse=False, return_counts=False):
    """``_unique2``: the distinct values in ascending order (``sorted=False`` too, as the CPU
    gives them), where each element went, how many of each. The flat input is sorted on the
    device, the start of each run of equal values found there and read back (the result's size:
    one sync, as on CUDA); the values are gathered on the device."""
    flat = self.reshape(-1)
    values, order = sort(flat, True, 0, False)
    group, first = _runs("aten::_unique2", values)
    inverse_order = host_indices(order) if return_inverse else None
    return _results(self, values, group, first, inverse_order, return_inverse, return_counts)


def unique_consecutive(self, return_inverse=False, return_counts=False, dim=None):
    """The first of each run of equal neighbours of the flat input (``dim=None`` only)."""
    SO._check_unique_consecutive(self, return_inverse, return_counts, dim)
    if dim is not None:
        raise NotImplementedError("aten::unique_consecutive with a dim is not implemented for "
                                  "the 'OpenCL' backend yet")
    flat = self.reshape(-1)
    group, first = _runs("aten::unique_consecutive", flat)
    return _results(self, flat, group, first, np.arange(flat._shape[0]), return_inverse,
                    return_counts)


def kernels() -> dict:
    return {SO.sort: sort, SO.topk: topk, SO.kthvalue: kthvalue, SO.unique: unique,
            SO.unique_consecutive: unique_consecutive}
