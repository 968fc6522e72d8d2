"""CPU kernels for ``ops/indexing.py``: NumPy advanced indexing, ``ufunc.at`` for accumulation.

Advanced indexing has the same rules in NumPy and PyTorch (index arrays broadcast; their dims
replace the indexed dims in place when adjacent, else lead), so ``index.Tensor`` is ``a[key]``
once the op's checks have run and masks are expanded into their ``nonzero`` columns.
"""

import warnings

import numpy as np

from ...core import dtype as D
from ...ops import indexing as I
from ...ops import meta_rules as R
from . import native
from .array import COMPUTE, add_at, compute_data, data, wrap

_FEW = 16   # index elements up to which Python's min/max over a list beat NumPy's


def check_bounds(arr, dim, size, error=IndexError, wrap_negative=True):
    """Raise PyTorch's "index i is out of bounds" for the first bad entry of an index array."""
    n = arr.size
    if n == 0:
        return
    low = -size if wrap_negative else 0
    if n <= _FEW:   # NumPy's min and max cost about 1 us each, whatever the size
        values = arr.ravel().tolist()
        if min(values) >= low and max(values) < size:
            return
    elif arr.min() >= low and arr.max() < size:
        return
    bad = arr[(arr < low) | (arr >= size)].flat[0]
    raise error(f"index {bad} is out of bounds for dimension {dim} with size {size}")


def _index_arrays(self, indices):
    """One entry per indexed dim: None (a full slice) or an integer array; masks expanded."""
    I.check_indices(self, indices)
    arrays = []
    for i in indices:
        if i is None:
            arrays.append(None)
        elif I.is_mask(i):
            if i.ndim == 0:  # PyTorch fails an internal assert here; Python indexing is fine
                raise IndexError("a 0-dim boolean index is not supported by aten::index.Tensor "
                                 "and aten::index_put_ (use x[mask] instead)")
            I.check_mask(self, i, len(arrays))
            if i.dtype is D.uint8:
                warnings.warn("indexing with dtype torch.uint8 is now deprecated, please use a "
                              "dtype torch.bool instead.", UserWarning, stacklevel=4)
            arrays.extend(np.nonzero(data(i)))
        else:
            arrays.append(data(i))
    return arrays


def _validate(self, arrays):
    """The indexing result's shape; PyTorch's errors for indices that do not broadcast or are out
    of bounds (the message counts the index tensors, not the dims of self)."""
    shape = I.index_result_shape(self._shape, [None if a is None else a.shape for a in arrays])
    defined = [(dim, a) for dim, a in enumerate(arrays) if a is not None]
    for k, (dim, a) in enumerate(defined):
        check_bounds(a, k, self._shape[dim])
    return shape


def _key(arrays):
    return tuple(slice(None) if a is None else a for a in arrays)


def index(self, indices):
    arrays = _index_arrays(self, indices)
    try:
        out = data(self)[_key(arrays)]
    except IndexError:  # NumPy found a bad index: raise PyTorch's error for it
        _validate(self, arrays)
        raise
    return wrap(out if out.flags.c_contiguous else np.ascontiguousarray(out), self.dtype)


def _mask_for_fill(self, indices, start):
    """The single mask of ``x[mask] = v``, shaped to broadcast against ``self``."""
    mask = indices[start]
    I.check_mask(self, mask, start)
    m = data(mask).astype(bool, copy=False)
    return m.reshape(m.shape + (1,) * (self.ndim - start - m.ndim))


def index_put_(self, indices, values, accumulate=False):
    start = I.single_mask_fill(indices, values, accumulate)
    if start is not None:
        I.check_indices(self, indices)
        np.copyto(data(self), fill_value(values, self.dtype), casting="unsafe",
                  where=_mask_for_fill(self, indices, start))
        return self
    arrays = _index_arrays(self, indices)
    I.check_put_values(self, _validate(self, arrays), values)
    key, arr, v = _key(arrays), data(self), data(values)
    if not accumulate:
        arr[key] = v
    elif arr.dtype == COMPUTE[self.dtype]:
        add_at(arr, key, v)
    else:  # half types accumulate in float32 and round once
        acc = arr.astype(COMPUTE[self.dtype])
        add_at(acc, key, v.astype(acc.dtype))
        np.copyto(arr, acc, casting="unsafe")
    return self


def fill_value(value, dtype):
    """A Scalar or 0-dim tensor fill value as the Python number ``dtype`` stores (checked)."""
    if R.is_tensor(value):
        arr = data(value).reshape(())
        value = arr.item() if arr.dtype.kind in "biuf" else float(arr)  # bfloat16: kind "V"
    return R.check_scalar_fits(value, dtype)


def masked_fill(self, mask, value):
    I.masked_fill.meta(self, mask, value)
    fill = np.array(fill_value(value, self.dtype), self.dtype.np)
    generated = native.masked_fill_rows(data(self), data(mask), fill)
    if generated is not None:
        return wrap(generated, self.dtype)
    out = np.where(data(mask), fill, data(self))
    return wrap(out if out.flags.c_contiguous else np.ascontiguousarray(out), self.dtype)


def masked_fill_(self, mask, value):
    I.masked_fill_.meta(self, mask, value)
    np.copyto(data(self), fill_value(value, self.dtype), casting="unsafe", where=data(mask))
    return self


def masked_select(self, mask):
    shape = I._check_mask_select(self, mask)
    arr = np.broadcast_to(data(self), shape)
    return wrap(arr[np.broadcast_to(data(mask), shape)], self.dtype)


def masked_scatter_(self, mask, source):
    I.masked_scatter_.meta(self, mask, source)
    m = np.broadcast_to(data(mask), tuple(self.shape))
    n = int(np.count_nonzero(m))
    if n > source.numel():
        raise RuntimeError("Number of elements of source < number of ones in mask")
    src = data(source).reshape(-1)[:n]
    data(self)[m] = src
    return self


def nonzero(self):
    arr = data(self)
    if arr.ndim == 0:
        return wrap(np.zeros((1 if arr != 0 else 0, 0), np.int64), D.int64)
    coords = np.nonzero(arr != 0)
    # column-major, as PyTorch lays it out: each column (nonzero(as_tuple=True)) is contiguous
    out = np.empty((coords[0].size, arr.ndim), np.int64, order="F")
    for d, c in enumerate(coords):
        out[:, d] = c
    return wrap(out, D.int64)


def _flat_bounds(idx, numel):
    if idx.size and (idx.min() < -numel or idx.max() >= numel):
        bad = idx[(idx < -numel) | (idx >= numel)].flat[0]
        raise IndexError(f"out of range: tried to access index {bad} on a tensor of {numel} "
                         f"elements.")


def take(self, index):
    spec = I.take.meta(self, index)
    idx = data(index)
    _flat_bounds(idx, self.numel())
    if idx.size == 0:
        return wrap(np.empty(spec.shape, self.dtype.np), self.dtype)
    return wrap(np.take(data(self), idx), self.dtype)


def put_(self, index, source, accumulate=False):
    I.put_.meta(self, index, source, accumulate)
    idx = data(index).reshape(-1)
    _flat_bounds(idx, self.numel())
    if idx.size == 0:
        return self
    arr = data(self)
    coords = np.unravel_index(np.where(idx < 0, idx + arr.size, idx), arr.shape)
    src = data(source).reshape(-1)
    if not accumulate:
        arr[coords] = src
    elif arr.dtype == COMPUTE[self.dtype]:
        np.add.at(arr, coords, src)
    else:
        acc = arr.astype(COMPUTE[self.dtype])
        np.add.at(acc, coords, src.astype(acc.dtype))
        np.copyto(arr, acc, casting="unsafe")
    return self


def _binary_search(seq, values, right):
    """Lower (or upper) bound of each value in the last dim of ``seq``, vectorised, with
    PyTorch's comparisons: a NaN compares false both ways, where NumPy would sort it last."""
    n = seq.shape[-1]
    rows = seq.reshape(-1, n)                  # one row per batch of values (1 for a 1-D seq)
    vals = values.reshape(rows.shape[0], -1)
    row = np.arange(rows.shape[0])[:, None]
    lo = np.zeros(vals.shape, np.int64)
    hi = np.full(vals.shape, n, np.int64)
    while True:
        active = lo < hi
        if not active.any():
            return lo.reshape(values.shape)
        mid = (lo + hi) // 2
        mid_val = rows[row, np.minimum(mid, n - 1)]
        go_right = ~(mid_val > vals) if right else ~(mid_val >= vals)
        lo = np.where(active & go_right, mid + 1, lo)
        hi = np.where(active & ~go_right, mid, hi)


def searchsorted(sorted_sequence, self, out_int32=False, right=False, side=None, sorter=None):
    spec = I.searchsorted.meta(sorted_sequence, self, out_int32, right, side, sorter)
    right = I.searchsorted_side(right, side)
    dt = R.promote(sorted_sequence, self)
    seq, values = compute_data(sorted_sequence, dt), compute_data(self, dt)
    if sorter is not None:
        order = data(sorter)
        if order.size and (order.min() < 0 or order.max() >= order.shape[-1]):
            raise RuntimeError("torch.searchsorted(): sorter index out of range")
        seq = np.take_along_axis(seq, order, axis=-1)
    if values.size == 0 or seq.shape[-1] == 0:
        out = np.zeros(values.shape, np.int64)
    elif seq.ndim == 1 and not (seq.dtype.kind == "f" and
                                (np.isnan(seq).any() or np.isnan(values).any())):
        out = np.searchsorted(seq, values, side="right" if right else "left")
    else:
        out = _binary_search(seq, values, right)
    return wrap(np.asarray(out, spec.dtype.np), spec.dtype)


KERNELS = {I.index: index, I.index_put_: index_put_, I.masked_fill: masked_fill,
           I.masked_fill_tensor: masked_fill, I.masked_fill_: masked_fill_,
           I.masked_fill_tensor_: masked_fill_, I.masked_select: masked_select,
           I.masked_scatter_: masked_scatter_, I.nonzero: nonzero, I.take: take, I.put_: put_,
           I.searchsorted: searchsorted}
