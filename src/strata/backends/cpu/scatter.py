"""CPU kernels for ``ops/scatter.py``: gather/scatter through coordinate arrays, ``ufunc.at`` for
the reductions (it accumulates duplicates, where plain assignment keeps the last write)."""

import functools

import numpy as np
from numpy.lib.stride_tricks import as_strided

from ...core import dtype as D
from ...core.shape import storage_extent, wrap_dim
from ...ops import meta_rules as R
from ...ops import scatter as S
from . import native
from .array import COMPUTE, add_at, compute_data, data, wrap
from .factory import strided
from .indexing import check_bounds, fill_value


def _at_least_1d(arr):
    """PyTorch's gather/scatter treat a 0-dim tensor as one element of a 1-D one."""
    return arr.reshape(1) if arr.ndim == 0 else arr


def _coords(idx, d):
    """Index arrays addressing ``(i_0, ..., idx[i], ..., i_n)`` for every position ``i`` of
    ``idx``: the positions themselves on every dim but ``d``, broadcast against each other."""
    coords = list(_positions(idx.shape, d))
    coords[d] = idx
    return tuple(coords)


@functools.lru_cache(maxsize=256)
def _positions(shape, d):
    """The position arrays of ``_coords`` for one index shape (a backward pass scatters into
    the same shapes step after step); read-only, since they are shared."""
    ndim = len(shape)
    coords = []
    for k, n in enumerate(shape):
        positions = np.arange(n).reshape((1,) * k + (n,) + (1,) * (ndim - k - 1))
        positions.flags.writeable = False
        coords.append(None if k == d else positions)
    return tuple(coords)


def gather(self, dim, index, sparse_grad=False):
    spec = S.gather.meta(self, dim, index, sparse_grad)
    if 0 in spec.shape:
        return wrap(np.empty(spec.shape, self.dtype.np), self.dtype)
    d = wrap_dim(dim, len(self._shape))
    arr, idx = _at_least_1d(data(self)), _at_least_1d(data(index))
    check_bounds(idx, d, arr.shape[d], RuntimeError, wrap_negative=False)
    out = arr[_coords(idx, d)]   # a fresh array: a reshape to a 0-dim result only views it
    return wrap(out if out.shape == spec.shape else out.reshape(spec.shape), self.dtype)


_UFUNCS = {"sum": np.add, "mean": np.add, "prod": np.multiply, "amax": np.maximum,
           "amin": np.minimum}


def _identity(reduction, np_dtype):
    """What an element starts from when ``include_self=False`` drops self's value."""
    if reduction in ("sum", "mean"):
        return 0
    if reduction == "prod":
        return 1
    if np_dtype.kind == "b":
        return reduction == "amin"
    if np_dtype.kind == "f":
        return np.inf if reduction == "amin" else -np.inf
    info = np.iinfo(np_dtype)
    return info.max if reduction == "amin" else info.min


def _scatter(self, dim, index, src, reduction=None, include_self=True):
    """``self`` copied, with ``src`` (a tensor or a number) scattered into it along ``dim``."""
    dt = self.dtype
    out = np.array(compute_data(self, dt), order="C")
    if 0 in index._shape:
        return wrap(out, dt)
    d = wrap_dim(dim, len(self._shape))
    target, idx = _at_least_1d(out), _at_least_1d(data(index))
    check_bounds(idx, d, target.shape[d], RuntimeError, wrap_negative=False)
    coords = _coords(idx, d)
    if hasattr(src, "dtype"):
        values = _at_least_1d(compute_data(src, dt))
        if values.shape != idx.shape:
            values = values[tuple(slice(0, n) for n in idx.shape)]
    else:
        values = np.full(idx.shape, src, out.dtype)
    if reduction is None:
        target[coords] = values
        return wrap(out, dt)
    if not include_self:
        target[coords] = _identity(reduction, out.dtype)
    if idx.size == 1 and reduction == "sum":
        # one index (a gather's backward at batch 1): nothing can repeat, so a plain indexed
        # add is ``add.at`` without its setup (3 us for one element)
        target[coords] += values
    else:
        _UFUNCS[reduction].at(target, coords, values)
    if reduction == "mean":
        count = np.full(target.shape, int(include_self), np.int64)
        np.add.at(count, coords, 1)
        count[count == 0] = 1
        if out.dtype.kind in "iu":
            np.floor_divide(target, count, out=target)
        else:
            np.true_divide(target, count, out=target, casting="unsafe")
    return wrap(out, dt)


def scatter(self, dim, index, src):
    S.scatter.meta(self, dim, index, src)
    return _scatter(self, dim, index, src)


def scatter_value(self, dim, index, value):
    S.scatter_value.meta(self, dim, index, value)
    return _scatter(self, dim, index, R.check_scalar_fits(value, self.dtype))


def scatter_add(self, dim, index, src):
    S.scatter_add.meta(self, dim, index, src)
    return _scatter(self, dim, index, src, "sum")


def scatter_reduce(self, dim, index, src, reduce, include_self=True):
    S.scatter_reduce.meta(self, dim, index, src, reduce, include_self)
    return _scatter(self, dim, index, src, S.scatter_reduction(reduce), include_self)


def check_select_index(idx, size, rows):
    """index_select's error for an index outside [0, size): ATen checks ``rows`` (dim 0, as
    embedding, or a 0-D/1-D self) with TORCH_CHECK_INDEX, other dims in a gather (also the
    compiled graphs' Check step, compile/inductor/compile_fx.py)."""
    idx = idx.reshape(-1)
    if idx.size and (idx.min() < 0 or idx.max() >= size):
        if rows:
            raise IndexError("index out of range in self")
        bad = idx[(idx < 0) | (idx >= size)][0]
        raise RuntimeError(f"INDICES element is out of DATA bounds, id={bad} axis_dim={size}")


def index_select(self, dim, index):
    S.index_select.meta(self, dim, index)
    arr, idx = data(self), data(index).reshape(-1)
    size = arr.shape[wrap_dim(dim, arr.ndim)] if arr.ndim else 1
    check_select_index(idx, size, arr.ndim <= 1 or wrap_dim(dim, arr.ndim) == 0)
    if arr.ndim == 0:
        return wrap(arr.copy(), self.dtype)
    return wrap(np.take(arr, idx, axis=wrap_dim(dim, arr.ndim)), self.dtype)


def _dim_key(self, dim, index, error, prefix="", wrap_negative=False):
    """The target view (0-dim self as 1-D) and the NumPy key for ``dim``-th index ``index``."""
    target = _at_least_1d(data(self))
    d = wrap_dim(dim, target.ndim)
    idx = data(index).reshape(-1)
    size = target.shape[d]
    low = -size if wrap_negative else 0
    if idx.size and (idx.min() < low or idx.max() >= size):
        bad = idx[(idx < low) | (idx >= size)][0]
        raise error(f"{prefix}index {bad} is out of bounds for dimension {d} with size {size}")
    return target, (slice(None),) * d + (idx,)


def index_add_(self, dim, index, source, alpha=1):
    S.index_add_.meta(self, dim, index, source, alpha)
    if self.ndim <= 1:   # ATen's 0-D/1-D loop checks each index with TORCH_CHECK_INDEX
        idx = data(index).reshape(-1)
        if idx.size and (idx.min() < 0 or idx.max() >= self.numel()):
            raise IndexError("index out of range in self")
    target, key = _dim_key(self, dim, index, RuntimeError)
    dt = self.dtype
    src = _at_least_1d(compute_data(source, dt))
    if alpha != 1:
        cast = bool if dt is D.bool_ else int if dt.category == D.INTEGRAL else float
        src = src * np.asarray(cast(alpha), src.dtype)
    if target.dtype == COMPUTE[dt]:
        if not (len(key) == 1 and native.index_add_rows(target, key[0], src)):
            add_at(target, key, src)
    else:  # half types accumulate in float32 and round once
        acc = target.astype(COMPUTE[dt])
        add_at(acc, key, src)
        np.copyto(target, acc, casting="unsafe")
    return self


def index_copy_(self, dim, index, source):
    S.index_copy_.meta(self, dim, index, source)
    target, key = _dim_key(self, dim, index, IndexError, "index_copy_(): ")
    src = data(source)
    target[key] = src.reshape(1) if src.ndim == 0 else src
    return self


def index_fill_(self, dim, index, value):
    S.index_fill_.meta(self, dim, index, value)
    target, key = _dim_key(self, dim, index, IndexError, wrap_negative=True)
    target[key] = fill_value(value, self.dtype)
    return self


def as_strided_scatter(self, src, size, stride, storage_offset=None):
    """Note [as_strided_scatter geometry] (ops/scatter.py): self's elements, then the view's,
    are written into one scratch storage, and self's positions are read back from it."""
    spec = S.as_strided_scatter.meta(self, src, size, stride, storage_offset)
    strides, base_offset, _ = S.scatter_base_geometry(self)
    offset = base_offset if storage_offset is None else storage_offset
    shape, size = tuple(self._shape), tuple(size)
    storage = np.empty(max(base_offset + storage_extent(shape, strides),
                           offset + storage_extent(size, stride)), self.dtype.np)

    def place(at, sizes, steps):
        return as_strided(storage[at:], sizes, [s * storage.itemsize for s in steps])
    place(base_offset, shape, strides)[...] = data(self)
    if 0 not in size:
        np.copyto(place(offset, size, stride), data(src), casting="unsafe")
    out = strided(spec.shape, spec.strides, spec.dtype)
    np.copyto(data(out), place(base_offset, shape, strides))
    return out


KERNELS = {S.gather: gather, S.as_strided_scatter: as_strided_scatter, S.scatter: scatter,
           S.scatter_value: scatter_value,
           S.scatter_add: scatter_add, S.scatter_reduce: scatter_reduce,
           S.index_select: index_select, S.index_add_: index_add_, S.index_copy_: index_copy_,
           S.index_fill_: index_fill_, S.index_fill_tensor_: index_fill_}
