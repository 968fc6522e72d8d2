"""The OpenCL device's ``histogram`` (both overloads), ``unique(dim=)`` and
``unique_consecutive(dim=)``, as the CPU device computes them (backends/cpu/sorting.py).

``histogram``: the edges are one kernel (ATen's linspace in the input's compute dtype, from the
low end for the first half and the high end for the rest, the data's range kept on the device),
then each bin sums, over every element, its weight (or 1) where the element falls in the bin
(the last bin includes its right edge), and ``density`` divides by the total times the bin's
width: no atomics, no host read.

``unique(dim=)``: slices along ``dim`` compared as rows of a (n, m) matrix: one kernel finds, for
each pair of rows, the first column where they differ, one ranks each row (rows that sort
before it lexicographically, or equal ones earlier), one places each row at its rank; where a
row of that order starts a new value is found on the device and read back (the result's size:
one sync, as ``unique`` without a dim), and the unique slices are gathered on the device.
``unique_consecutive(dim=)`` flags each row that differs from the one before, with no ranking.
"""

import numpy as np

from ..._tensor import from_array
from ...core import dtype as D
from ...core.shape import contiguous_strides
from ...ops import sorting as SO
from .ir import ops
from .opencl_checks import host_indices
from .opencl_nn import _reduced, window
from .opencl_pointwise import fill_, identity, pointwise, runtime_of
from .opencl_rows import opmath

# --- histogram ----------------------------------------------------------------------------------


def _edge_term(B, index, rindex):
    """Edge i of ``bins`` equal bins between lo and hi (widened by 0.5 each way when equal):
    lo + step * i for the first half, hi - step * (bins - i) for the rest."""
    (i,) = index
    lo, hi = B["lo"].load(()), B["hi"].load(())
    dt = lo.dtype
    same = ops.eq(lo, hi)
    half = ops.constant(0.5, dt)
    low = ops.where(same, ops.sub(lo, half), lo)
    high = ops.where(same, ops.add(hi, half), hi)
    step = ops.truediv(ops.sub(high, low), ops.index_expr("bins", dt))
    from_low = ops.add(low, ops.mul(step, ops.index_expr(i, dt)))
    from_high = ops.sub(high, ops.mul(step, ops.index_expr(f"bins - {i}", dt)))
    return ops.where(ops.index_expr(f"{i} < (bins + 1) / 2", "bool"), from_low, from_high)


def _in_bin(B, b, j):
    """Whether element j falls in bin b: edges[b] <= x < edges[b + 1] (<= for the last bin)."""
    x = B["vals"].load((j,))
    x = x if x.dtype == B["edges"].dtype else ops.to_dtype(x, B["edges"].dtype)
    left, right = B["edges"].load((b,)), B["edges"].load((f"({b} + 1)",))
    last = ops.index_expr(f"{b} == bins - 1", "bool")
    below_right = ops.logical_or(ops.lt(x, right), ops.logical_and(last, ops.le(x, right)))
    return ops.logical_and(ops.ge(x, left), below_right), x.dtype


def _count_term(B, index, rindex):
    inside, dt = _in_bin(B, index[0], rindex[0])
    one = ops.constant(1, dt)
    if "w" in B:
        w = B["w"].load(rindex)
        one = w if w.dtype == dt else ops.to_dtype(w, dt)
    return ops.where(inside, one, ops.constant(0, dt))


def _total_term(B, index, rindex):
    return B["hist"].load(rindex)


def _density(B, index):
    """hist[b] / (the total * the bin's width)."""
    (b,) = index
    width = ops.sub(B["edges"].load((f"({b} + 1)",)), B["edges"].load((b,)))
    return ops.truediv(B["hist"].load((b,)), ops.mul(ops.load("red", "0"), width))


def _scalar(rt, value, dtype):
    return fill_(rt.empty((), (), dtype), value)


def _histogram(op_name, flat, edges, weight, density, spec):
    """(hist, edges) of ``spec``'s dtype from compute-dtype ``edges`` (bins + 1,)."""
    rt = runtime_of(flat)
    bins = edges._shape[0] - 1
    compute = edges.dtype
    hist = rt.empty((bins,), (1,), compute)
    if flat.numel():
        reads = {"vals": flat, "edges": edges}
        if weight is not None:
            reads["w"] = weight.reshape(-1)
        window(op_name, reads, {"bins": bins}, [(hist, _reduced)], (flat.numel(),), "sum",
               _count_term, compute.name)
    else:
        fill_(hist, 0)
    if density:
        counts, hist = hist, rt.empty((bins,), (1,), compute)
        window(op_name, {"hist": counts, "edges": edges}, {}, [(hist, _density)], (bins,),
               "sum", _total_term, compute.name)
    return tuple(t if t.dtype is spec.dtype else
                 pointwise(op_name, identity, [(t, spec.dtype)],
                           rt.empty(tuple(t._shape), (1,), spec.dtype)) for t in (hist, edges))


def histogram_bin_ct(self, bins=100, range=None, weight=None, density=False):
    spec = SO.histogram_bin_ct.meta(self, bins, range, weight, density)[0]
    rt = runtime_of(self)
    compute = opmath(spec.dtype)
    flat = self.reshape(-1)
    if range is not None:
        lo, hi = (_scalar(rt, v, compute) for v in range)
    elif flat.numel():            # the data's range, kept on the device
        lo, hi = flat.amin(), flat.amax()
    else:
        lo, hi = _scalar(rt, 0.0, compute), _scalar(rt, 1.0, compute)
    if lo.dtype is not compute:
        lo, hi = (pointwise("aten::histogram.bin_ct", identity, [(t, compute)],
                            rt.empty((), (), compute)) for t in (lo, hi))
    edges = rt.empty((bins + 1,), (1,), compute)
    window("aten::histogram.bin_ct", {"lo": lo, "hi": hi}, {"bins": bins},
           [(edges, _reduced)], (1,), "sum", _edge_term, compute.name)
    return _histogram("aten::histogram.bin_ct", flat, edges, weight, density, spec)


def histogram_bins_tensor(self, bins, weight=None, density=False):
    spec = SO.histogram_bins_tensor.meta(self, bins, weight, density)[0]
    compute = opmath(spec.dtype)
    n = bins.numel()
    edges = pointwise("aten::histogram.bins_tensor", identity, [(bins.reshape(-1), compute)],
                      runtime_of(self).empty((n,), (1,), compute))
    return _histogram("aten::histogram.bins_tensor", self.reshape(-1), edges, weight, density,
                      spec)


# --- unique(dim=) -------------------------------------------------------------------------------

def _first_difference_term(B, index, rindex):
    """Column k where rows i and j differ, else m (the row length): reduced by min."""
    i, j = index
    (k,) = rindex
    a, b = B["rows"].load((i, k)), B["rows"].load((j, k))
    return ops.index_expr(f"{a} != {b} ? {k} : m", "int64")


def _sorts_before(B, j, i):
    """Whether row j sorts before row i: smaller at their first difference, or equal and
    earlier (a stable order)."""
    at = B["diff"].load((j, i))
    column = f"min({at}, m - 1)"
    a, b = B["rows"].load((j, column)), B["rows"].load((i, column))
    return f"({at} < m ? {a} < {b} : {j} < {i})"


def _rank_term(B, index, rindex):
    return ops.index_expr(_sorts_before(B, rindex[0], index[0]), "int64")


def _place_term(B, index, rindex):
    (r,), (j,) = index, rindex
    return ops.index_expr(f"{B['rank'].load((j,))} == {r} ? {j} : 0", "int64")


def _starts_value_term(B, index, rindex):
    """1 where the row at sorted position r + 1 differs from the one at r."""
    (r,) = index
    here, before = B["order"].load((f"({r} + 1)",)), B["order"].load((r,))
    return ops.index_expr(f"{B['diff'].load((here, before))} < m", "int64")


def _differs_from_previous_term(B, index, rindex):
    """1 where row r + 1 differs from row r in column k: reduced by max over the columns."""
    (r,), (k,) = index, rindex
    a, b = B["rows"].load((f"({r} + 1)", k)), B["rows"].load((r, k))
    return ops.index_expr(f"{a} != {b}", "int64")


def _as_rows(self, d):
    """``self``'s slices along ``d`` as the rows of an (n, m) matrix."""
    return self.movedim(d, 0).reshape(self._shape[d], -1)


def _grouped(self, d, starts, sorted_rows, return_inverse, return_counts):
    """(values, inverse, counts) from the host's flags of the (sorted) rows that start a new
    value: the values gathered on the device, inverse and counts uploaded (empty where not
    asked for)."""
    first = np.flatnonzero(starts)
    inverse = np.empty(len(starts), np.int64)
    inverse[sorted_rows] = np.cumsum(starts) - 1
    picked = from_array(np.ascontiguousarray(sorted_rows[first], np.int64)).to(self.device)
    values = self.index_select(d, picked).contiguous()
    counts = np.diff(np.append(first, len(starts)))
    empty = np.zeros(0, np.int64)
    return values, *(from_array(np.ascontiguousarray(a if wanted else empty, np.int64))
                     .to(self.device) for a, wanted in ((inverse, return_inverse),
                                                        (counts, return_counts)))


def unique_consecutive_dim(self, dim, return_inverse=False, return_counts=False):
    """``unique_consecutive`` along ``dim``: the first of each run of equal neighbouring
    slices; one kernel flags where a slice differs from the one before (read back: the
    result's size)."""
    d = SO.check_unique_dim(self, dim)
    n = self._shape[d]
    starts = np.ones(n, bool)
    if n > 1:
        rows = _as_rows(self, d)
        flags = runtime_of(self).empty((n - 1,), (1,), D.int64)
        window("aten::unique_consecutive", {"rows": rows}, {}, [(flags, _reduced)],
               (rows._shape[1],), "max", _differs_from_previous_term, "int64")
        starts[1:] = host_indices(flags).astype(bool)
    return _grouped(self, d, starts, np.arange(n), return_inverse, return_counts)


def unique_dim(self, dim, sorted=True, return_inverse=False, return_counts=False):
    """Unique slices along ``dim``, sorted lexicographically; inverse and counts always."""
    d = SO.check_unique_dim(self, dim)
    op_name = "aten::unique_dim"
    rt = runtime_of(self)
    n = self._shape[d]
    if n == 0:
        empty = rt.empty((0,), (1,), D.int64)
        return self.clone(), empty, rt.empty((0,), (1,), D.int64)
    rows = _as_rows(self, d)
    m = rows._shape[1]
    ints = {"m": m}

    def index_buffer(shape):
        return rt.empty(shape, contiguous_strides(shape), D.int64)
    diff, rank, order = index_buffer((n, n)), index_buffer((n,)), index_buffer((n,))
    window(op_name, {"rows": rows}, ints, [(diff, _reduced)], (m,), "min",
           _first_difference_term, "int64")
    window(op_name, {"rows": rows, "diff": diff}, ints, [(rank, _reduced)], (n,), "sum",
           _rank_term, "int64")
    window(op_name, {"rank": rank}, {}, [(order, _reduced)], (n,), "sum", _place_term, "int64")
    starts = np.ones(n, bool)
    if n > 1:
        flags = index_buffer((n - 1,))
        window(op_name, {"order": order, "diff": diff}, ints, [(flags, _reduced)], (1,), "sum",
               _starts_value_term, "int64")
        starts[1:] = host_indices(flags).astype(bool)
    return _grouped(self, d, starts, host_indices(order), True, True)


def kernels() -> dict:
    return {SO.histogram_bin_ct: histogram_bin_ct,
            SO.histogram_bins_tensor: histogram_bins_tensor, SO.unique_dim: unique_dim}
