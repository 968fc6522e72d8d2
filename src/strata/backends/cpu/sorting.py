"""CPU kernels for ``ops/sorting.py``.

Every sort is NumPy's stable sort, so equal elements keep their input order (ascending and
descending), which is what PyTorch's CPU sort returns too. Half types are sorted through their
exact float32 values (NumPy's sort misplaces NaN for ml_dtypes' bfloat16), so every returned
value is exactly an input element.
"""

import math

import numpy as np

from ...core import dtype as D
from ...ops import sorting as RS
from .array import COMPUTE, compute_data, data, wrap
from .reductions import row_major


def _sortable(self):
    return compute_data(self, self.dtype)


def _argsort(x, d, descending):
    """Stable argsort along ``d``; descending keeps equal elements in input order and NaN first."""
    if not descending:
        return np.argsort(x, axis=d, kind="stable")
    reversed_order = np.argsort(np.flip(x, d), axis=d, kind="stable")
    return np.flip(x.shape[d] - 1 - reversed_order, d)


def _scalar_pair(self):
    """Value and index of a 0-d tensor, the answer of every selection op on one element."""
    return wrap(data(self).copy(), self.dtype), wrap(np.zeros((), np.int64), D.int64)


def _pick(self, idx, d, keepdim=True):
    """(values, indices) at ``idx`` (positions along ``d``), dropping ``d`` unless keepdim."""
    values = np.take_along_axis(data(self), idx, axis=d)
    if not keepdim:
        idx, values = idx.squeeze(d), values.squeeze(d)
    return row_major(values, self.dtype), row_major(idx, D.int64)


# --- sort and selection -------------------------------------------------------------------------

def sort(self, stable=None, dim=-1, descending=False):
    RS.sort.meta(self, stable, dim, descending)
    if self.ndim == 0:
        return _scalar_pair(self)
    d = dim % self.ndim
    return _pick(self, _argsort(_sortable(self), d, descending), d)


def topk(self, k, dim=-1, largest=True, sorted=True):
    RS.topk.meta(self, k, dim, largest, sorted)
    if self.ndim == 0:  # PyTorch returns the element even for k=0
        return _scalar_pair(self)
    d = dim % self.ndim
    x = _sortable(self)
    n = x.shape[d]
    if 0 < 4 * k < n:
        # Few of many (a vocabulary's top-k): partition, then sort only the k candidates, taken
        # in input order so that equal values come out by index.
        part = np.argpartition(x, n - k if largest else k - 1, axis=d)
        keep = np.arange(n - k, n) if largest else np.arange(k)
        candidates = np.sort(np.take(part, keep, axis=d), axis=d)
        order = _argsort(np.take_along_axis(x, candidates, axis=d), d, largest)
        idx = np.take_along_axis(candidates, order, axis=d)
    else:
        idx = np.take(_argsort(x, d, largest), np.arange(k), axis=d)
    return _pick(self, idx, d)


def kthvalue(self, k, dim=-1, keepdim=False):
    RS.kthvalue.meta(self, k, dim, keepdim)
    if self.ndim == 0:
        return _scalar_pair(self)
    d = dim % self.ndim
    idx = np.take(_argsort(_sortable(self), d, False), [k - 1], axis=d)
    return _pick(self, idx, d, keepdim)


def _median(ignore_nan, op):
    """median()/nanmedian() of all elements: the lower median; NaN wins unless ignored."""
    def kernel(self):
        op.meta(self)
        x = _sortable(self).reshape(-1)
        if self.dtype.category == D.FLOATING:
            nan = np.isnan(x)
            if ignore_nan:
                x = x[~nan]
            elif nan.any():
                x = x[:0]
        n = x.size
        value = np.partition(x, (n - 1) // 2)[(n - 1) // 2] if n else np.nan
        return wrap(np.array(value, dtype=COMPUTE[self.dtype]), self.dtype)
    return kernel


def _median_dim(ignore_nan, op):
    """median.dim/nanmedian.dim: the lower median of each slice and its index. NaN sorts last, so
    median picks the first NaN of a slice that has one; nanmedian skips them."""
    def kernel(self, dim, keepdim=False):
        op.meta(self, dim, keepdim)
        if self.ndim == 0:
            return _scalar_pair(self)
        d = dim % self.ndim
        x = _sortable(self)
        order = _argsort(x, d, False)
        n = x.shape[d]
        if self.dtype.category == D.FLOATING:
            nans = np.add.reduce(np.isnan(x), axis=d, keepdims=True)
            if ignore_nan:  # a slice of NaNs only picks its middle NaN, as median does
                k = np.where(nans < n, (n - nans - 1) // 2, (n - 1) // 2)
            else:
                k = np.where(nans > 0, n - nans, (n - 1) // 2)
        else:
            k = np.full(order.shape[:d] + (1,) + order.shape[d + 1:], (n - 1) // 2)
        return _pick(self, np.take_along_axis(order, k, axis=d), d, keepdim)
    return kernel


def mode(self, dim=-1, keepdim=False):
    """The most frequent value of each slice (the smallest on a tie) and the index of its last
    occurrence, as PyTorch's CPU kernel returns. (With NaNs PyTorch's answer is unspecified: its
    sort has no order for them; here no two NaNs are equal.)"""
    RS.mode.meta(self, dim, keepdim)
    if self.ndim == 0:
        return _scalar_pair(self)
    d = dim % self.ndim
    moved = np.moveaxis(_sortable(self), d, -1)
    lead, n = moved.shape[:-1], moved.shape[-1]
    rows = moved.reshape(-1, n)
    m = rows.shape[0]
    order = np.argsort(rows, axis=1, kind="stable")
    s = np.take_along_axis(rows, order, axis=1)
    starts = np.ones((m, n), dtype=bool)
    starts[:, 1:] = s[:, 1:] != s[:, :-1]
    run = np.cumsum(starts, axis=1) - 1 + (np.arange(m) * n)[:, None]  # a global id per run
    run_length = np.bincount(run.reshape(-1), minlength=m * n)[run]
    first = np.argmax(run_length, axis=1)  # the first longest run holds the smallest value
    row = np.arange(m)
    last = first + run_length[row, first] - 1  # stable sort: its last element has the top index
    values, idx = s[row, last].reshape(lead), order[row, last].reshape(lead)
    if keepdim:
        values, idx = np.expand_dims(values, d), np.expand_dims(idx, d)
    return row_major(values, self.dtype), row_major(idx, D.int64)


# --- uniqueness and counting ----------------------------------------------------------------------

def _empty_index():
    return wrap(np.empty((0,), np.int64), D.int64)


def unique(self, sorted=True, return_inverse=False, return_counts=False):
    """Always sorted (as PyTorch's CPU kernel); NaNs are all distinct. Outputs not asked for
    come back empty."""
    x = _sortable(self).reshape(-1)
    values, first, inverse, counts = np.unique(x, return_index=True, return_inverse=True,
                                               return_counts=True, equal_nan=False)
    return (row_major(data(self).reshape(-1)[first], self.dtype),
            wrap(inverse.reshape(self.shape), D.int64) if return_inverse else _empty_index(),
            wrap(counts, D.int64) if return_counts else _empty_index())


def unique_dim(self, dim, sorted=True, return_inverse=False, return_counts=False):
    """Unique slices along ``dim``, sorted lexicographically; inverse and counts always."""
    d = RS.check_unique_dim(self, dim)
    _, first, inverse, counts = np.unique(_sortable(self), return_index=True,
                                          return_inverse=True, return_counts=True, axis=d)
    return (row_major(np.take(data(self), first, axis=d), self.dtype),
            wrap(inverse.reshape(-1), D.int64), wrap(counts, D.int64))


def unique_consecutive(self, return_inverse=False, return_counts=False, dim=None):
    if dim is None:
        d, source = 0, data(self).reshape(-1)
        slices = _sortable(self).reshape(-1, 1)
    else:
        d, source = RS.check_unique_dim(self, dim), data(self)
        slices = np.moveaxis(_sortable(self), d, 0)
        slices = slices.reshape(slices.shape[0], math.prod(slices.shape[1:]))
    n = slices.shape[0]
    new = np.ones(n, dtype=bool)  # does slice i start a new group?
    new[1:] = np.any(slices[1:] != slices[:-1], axis=1)
    starts = np.flatnonzero(new)
    inverse = np.cumsum(new) - 1
    return (row_major(np.take(source, starts, axis=d), self.dtype),
            wrap(inverse.reshape(self.shape) if dim is None else inverse, D.int64)
            if return_inverse else _empty_index(),
            wrap(np.diff(np.append(starts, n)), D.int64) if return_counts else _empty_index())


def bincount(self, weights=None, minlength=0):
    dt = RS.check_bincount(self, weights, minlength)
    x = data(self)
    if x.size and x.min() < 0:
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    w = None if weights is None else compute_data(weights, D.float64)
    return wrap(np.bincount(x, weights=w, minlength=minlength), dt)


def _format_edge(value):
    """A bin edge as PyTorch's C++ prints it in error messages (``%g``-like)."""
    return f"{value:g}"


def histc(self, bins=100, min=0, max=0):
    """Equal-width bins between min and max (the data's range when they are equal); the math
    runs in the input's dtype, as PyTorch's linear-interpolation kernel does."""
    dt = RS.histc.meta(self, bins, min, max).dtype
    x = data(self).reshape(-1)
    lo, hi = float(min), float(max)
    if lo == hi and x.size:
        lo, hi = float(x.min()), float(x.max())
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise RuntimeError(f"torch.histc: range of [{_format_edge(lo)}, {_format_edge(hi)}] is "
                           f"not finite")
    if not lo < hi:
        raise RuntimeError("torch.histc: max must be larger than min")
    left, right = np.array(lo, dtype=dt.np), np.array(hi, dtype=dt.np)
    inside = x[(x >= left) & (x <= right)]
    pos = ((inside - left) * bins / (right - left)).astype(np.int64)
    pos = pos[pos >= 0]      # a range that overflows dt gives nan positions: counted nowhere
    counts = np.bincount(np.minimum(pos, bins - 1), minlength=bins)  # max joins the last bin
    return wrap(counts, dt)


# --- histograms (PyTorch's HistogramKernel.cpp: edges by linspace, bins by edge search) --------
def _linspace_edges(low, high, count, dtype):
    """``linspace`` as ATen computes it in the input's dtype: from the start for the first half,
    from the end for the rest, so both ends are exact."""
    steps = count + 1
    low, high = dtype.type(low), dtype.type(high)
    step = (high - low) / dtype.type(count)
    i = np.arange(steps)
    half = steps // 2
    return np.where(i < half, low + step * i.astype(dtype),
                    high - step * (steps - 1 - i).astype(dtype)).astype(dtype)


def _histogram(values, edges, weight, density):
    """Counts (weighted) of ``values`` between ``edges``; the last bin includes its right edge
    and values outside are dropped."""
    inside = (values >= edges[0]) & (values <= edges[-1])
    where = np.searchsorted(edges, values[inside], side="right") - 1
    where = np.minimum(where, len(edges) - 2)
    w = None if weight is None else weight[inside]
    hist = np.bincount(where, weights=w, minlength=len(edges) - 1).astype(values.dtype)
    if density:
        hist = hist / (hist.sum() * np.diff(edges))
    return hist.astype(values.dtype)


def histogram_bin_ct(self, bins=100, range=None, weight=None, density=False):
    spec = RS.histogram_bin_ct.meta(self, bins, range, weight, density)[0]
    values = compute_data(self, spec.dtype).reshape(-1)
    if range is not None:
        low, high = range
    elif values.size:
        low, high = values.min(), values.max()
    else:
        low, high = 0.0, 1.0
    if low == high:
        low, high = low - 0.5, high + 0.5
    edges = _linspace_edges(low, high, bins, values.dtype)
    w = None if weight is None else compute_data(weight, spec.dtype).reshape(-1)
    return (wrap(_histogram(values, edges, w, density), spec.dtype),
            wrap(edges, spec.dtype))


def histogram_bins_tensor(self, bins, weight=None, density=False):
    spec = RS.histogram_bins_tensor.meta(self, bins, weight, density)[0]
    values = compute_data(self, spec.dtype).reshape(-1)
    edges = compute_data(bins, spec.dtype).reshape(-1)
    w = None if weight is None else compute_data(weight, spec.dtype).reshape(-1)
    return wrap(_histogram(values, edges, w, density), spec.dtype), wrap(edges.copy(), spec.dtype)


KERNELS = {
    RS.sort: sort,
    RS.topk: topk,
    RS.kthvalue: kthvalue,
    RS.median: _median(False, RS.median),
    RS.median_dim: _median_dim(False, RS.median_dim),
    RS.nanmedian: _median(True, RS.nanmedian),
    RS.nanmedian_dim: _median_dim(True, RS.nanmedian_dim),
    RS.mode: mode,
    RS.unique: unique,
    RS.unique_dim: unique_dim,
    RS.unique_consecutive: unique_consecutive,
    RS.bincount: bincount,
    RS.histc: histc,
    RS.histogram_bin_ct: histogram_bin_ct,
    RS.histogram_bins_tensor: histogram_bins_tensor,
}

