"""The OpenCL device's sorting: ``sort`` (so ``argsort``, ``msort``), ``topk``, ``kthvalue``,
``median``/``nanmedian``, ``mode``, ``unique`` and ``unique_consecutive``, ``bincount`` and
``histc``.

A rank sort in two loop-IR kernels (opencl_nn.window), along the last dim of a transposed view:
the rank of element i is the number of elements of its row that sort before it (smaller, or
equal with a smaller index: stable; NaN after every number ascending, before them descending,
as ATen orders it), then output position r gathers the element whose rank is r. Each element
compares with its whole row, n^2 work per row of n: simple and exact for the short rows of
models (top-k of logits, argsort of a batch); a bitonic or radix sort in local memory is the
next step for long rows.
"""

import math
from functools import partial

import numpy as np

from ..._tensor import from_array
from ...core import dtype as D
from ...core.shape import contiguous_strides
from ...ops import sorting as SO
from .ir import ops
from .opencl_nn import highest, window
from .opencl_pointwise import clone, fill_, pointwise, runtime_of
from .opencl_checks import host_indices
from .opencl_counting import unique_consecutive_dim
from .opencl_rows import gather


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


# --- median: a sort, then each slice's rank picked -----------------------------------------------

def _median_rank(nans, n, ignore_nan):
    """The lower median's rank in the sorted slice (NaN sorts last): the first NaN if the slice
    has one (median), else among the numbers (nanmedian; a slice of NaNs only: its middle)."""
    zero, one, two = (ops.constant(v, "int64") for v in (0, 1, 2))
    whole = ops.int_trunc_divide(ops.sub(n, one), two)
    if ignore_nan:
        numbers = ops.sub(n, nans)
        among = ops.int_trunc_divide(ops.sub(numbers, one), two)
        return ops.where(ops.lt(nans, n), among, whole)
    return ops.where(ops.gt(nans, zero), ops.sub(n, nans), whole)


_MEDIAN_RANKS = {ignore: partial(_median_rank, ignore_nan=ignore) for ignore in (False, True)}


def median_dim(op, ignore_nan):
    """median.dim/nanmedian.dim: (the lower median of each slice, its index), as the CPU picks
    them (the stable sort's order)."""
    def kernel(self, dim, keepdim=False):
        op.meta(self, dim, keepdim)
        if not self.ndim:
            return clone(self), runtime_of(self).empty((), (), D.int64).fill_(0)
        d = dim % self.ndim
        values, order = sort(self, True, d, False)
        n = self._shape[d]
        nans = self.ne(self).sum(d, keepdim=True)        # x != x: NaN (none for integers)
        rank = pointwise(op.qualname, _MEDIAN_RANKS[ignore_nan], [(nans, D.int64), (n, D.int64)],
                         runtime_of(self).empty(tuple(nans._shape),
                                                contiguous_strides(nans._shape), D.int64))
        picked = values.gather(d, rank), order.gather(d, rank)
        return tuple(t if keepdim else t.squeeze(d) for t in picked)
    return kernel


def median_all(op, ignore_nan):
    """median()/nanmedian(): the flat tensor's median.dim value (NaN for no numbers)."""
    by_dim = median_dim(SO.nanmedian_dim if ignore_nan else SO.median_dim, ignore_nan)

    def kernel(self):
        op.meta(self)
        if not self.numel():
            return fill_(runtime_of(self).empty((), (), self.dtype), float("nan"))
        return by_dim(self.reshape(-1), 0)[0]
    return kernel


# --- mode: counts of equal elements, then the most frequent value's last occurrence -------------

def _equal_count(B, index, rindex):
    *lead, _ = index
    (j,) = rindex
    return ops.to_dtype(ops.eq(B["inp"].load((*lead, j)), B["inp"].load(index)), "int64")


def _most_frequent_term(B, index, rindex):
    """x_j where its count is the row's largest, else the dtype's largest (a minimum picks the
    smallest most frequent value)."""
    *lead, _ = index
    (j,) = rindex
    x = B["inp"].load((*lead, j))
    top = ops.eq(B["cnt"].load((*lead, j)), B["best"].load((*lead, "0")))
    return ops.where(top, x, ops.constant(highest(x.dtype), x.dtype))


def _last_occurrence_term(B, index, rindex):
    *lead, _ = index
    (j,) = rindex
    same = ops.eq(B["inp"].load((*lead, j)), B["val"].load((*lead, "0")))
    return ops.where(same, ops.index_expr(j, "int64"), ops.constant(-1, "int64"))


def mode(self, dim=-1, keepdim=False):
    """The most frequent value of each slice (the smallest on a tie) and the index of its last
    occurrence, as the CPU returns them: each element counts its equals (n^2 per slice), a
    minimum picks the value, a maximum its last index, whose element is the value returned (so
    -0.0 and 0.0 come back as the CPU's do)."""
    SO.mode.meta(self, dim, keepdim)
    if not self.ndim:
        return clone(self), fill_(runtime_of(self).empty((), (), D.int64), 0)
    d = dim % self.ndim
    x = self.movedim(d, -1)
    rt, n = runtime_of(self), x._shape[-1]
    row_shape = tuple(x._shape[:-1]) + (1,)
    if not x.numel():
        empty = (rt.empty(row_shape, contiguous_strides(row_shape), t) for t in
                 (self.dtype, D.int64))
        return tuple(t.movedim(-1, d) if keepdim else t.squeeze(-1) for t in empty)
    counts = rt.empty(tuple(x._shape), contiguous_strides(x._shape), D.int64)
    window("aten::mode", {"inp": x}, {}, [(counts, _placed_index)], (n,), "sum", _equal_count,
           "int64")
    best = counts.amax(-1, keepdim=True)
    value = rt.empty(row_shape, contiguous_strides(row_shape), self.dtype)
    window("aten::mode", {"inp": x, "cnt": counts, "best": best}, {}, [(value, _placed_index)],
           (n,), "min", _most_frequent_term, self.dtype.name)
    index = rt.empty(row_shape, contiguous_strides(row_shape), D.int64)
    window("aten::mode", {"inp": x, "val": value}, {}, [(index, _placed_index)], (n,), "max",
           _last_occurrence_term, "int64")
    picked = (x.gather(-1, index), index)
    return tuple(t.movedim(-1, d) if keepdim else t.squeeze(-1) for t in picked)


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
    """The first of each run of equal neighbours of the flat input (along ``dim``:
    opencl_counting.py)."""
    SO._check_unique_consecutive(self, return_inverse, return_counts, dim)
    if dim is not None:
        return unique_consecutive_dim(self, dim, return_inverse, return_counts)
    flat = self.reshape(-1)
    group, first = _runs("aten::unique_consecutive", flat)
    return _results(self, flat, group, first, np.arange(flat._shape[0]), return_inverse,
                    return_counts)


# --- counting: bincount, histc (each bin sums, over every element, whether it falls there) -------

def _bin_count_term(weighted, B, index, rindex):
    (b,), (j,) = index, rindex
    hit = ops.index_expr(f"{B['vals'].load((j,))} == {b}", "bool")
    one = B["w"].load((j,)) if weighted else ops.constant(1, "int64")
    return ops.where(hit, one, ops.constant(0, one.dtype))


_BIN_COUNT_TERMS = {weighted: partial(_bin_count_term, weighted) for weighted in (False, True)}


def bincount(self, weights=None, minlength=0):
    """``out[b]`` counts (or sums the weights of) the elements equal to b: the values are read
    on the host first (the result's size, and none may be negative: a sync point)."""
    dt = SO.check_bincount(self, weights, minlength)
    values = host_indices(self)
    if values.size and values.min() < 0:
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    size = max(int(values.max()) + 1 if values.size else 0, minlength)
    out = runtime_of(self).empty((size,), (1,), dt)
    if not values.size:
        return fill_(out, 0)
    reads = {"vals": self}      # not "x": the printer's index variable
    if weights is not None:    # summed in the result's dtype (the CPU sums in float64)
        reads["w"] = weights if weights.dtype is dt else weights.to(dt)
    window("aten::bincount", reads, {}, [(out, _loaded)], (values.size,), "sum",
           _BIN_COUNT_TERMS[weights is not None], dt.name)
    return out


def _loaded(B, index):
    return ops.load("red", "0")


def _histogram_term(B, index, rindex):
    """1 where element j falls in bin b: inside [lo, hi], at floor((x - lo) * bins / (hi - lo))
    (the top edge joins the last bin), each step rounded to the input's dtype as the CPU's
    NumPy arithmetic rounds it; a NaN position (an overflowing range) counts nowhere."""
    (b,), (j,) = index, rindex
    x, lo, hi = B["vals"].load((j,)), B["lo"].load(()), B["hi"].load(())
    dt = x.dtype
    width = ops.to_dtype(ops.sub(hi, lo), dt)
    scaled = ops.to_dtype(ops.mul(ops.to_dtype(ops.sub(x, lo), dt), ops.index_expr("bins", dt)),
                          dt)
    position = ops.to_dtype(ops.truediv(scaled, width), dt)
    inside = ops.logical_and(ops.logical_and(ops.ge(x, lo), ops.le(x, hi)),
                             ops.ge(position, ops.constant(0, dt)))
    at = ops.index_expr(f"min((long){position}, bins - 1) == {b}", "bool")
    return ops.to_dtype(ops.logical_and(inside, at), dt)


def histc(self, bins=100, min=0, max=0):
    """Equal-width bins between min and max (the data's range, read back, when they are
    equal); each bin counts the elements that fall in it."""
    dt = SO.histc.meta(self, bins, min, max).dtype
    lo, hi = float(min), float(max)
    flat = self.reshape(-1)
    if lo == hi and flat.numel():
        lo, hi = float(flat.amin().item()), float(flat.amax().item())
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise RuntimeError(f"torch.histc: range of [{lo:g}, {hi:g}] is not finite")
    if not lo < hi:
        raise RuntimeError("torch.histc: max must be larger than min")
    rt = runtime_of(self)
    out = rt.empty((bins,), (1,), dt)
    if not flat.numel():
        return fill_(out, 0)
    edges = {name: fill_(rt.empty((), (), dt), v) for name, v in (("lo", lo), ("hi", hi))}
    window("aten::histc", {"vals": flat, **edges}, {"bins": bins}, [(out, _loaded)],
           (flat.numel(),), "sum", _histogram_term, dt.name)
    return out


def kernels() -> dict:
    return {SO.sort: sort, SO.topk: topk, SO.kthvalue: kthvalue, SO.unique: unique,
            SO.unique_consecutive: unique_consecutive, SO.bincount: bincount, SO.histc: histc,
            SO.median: median_all(SO.median, False), SO.nanmedian: median_all(SO.nanmedian, True),
            SO.median_dim: median_dim(SO.median_dim, False),
            SO.nanmedian_dim: median_dim(SO.nanmedian_dim, True), SO.mode: mode}
