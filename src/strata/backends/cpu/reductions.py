"""CPU kernels for ``ops/reductions.py``: each reduction or scan is one NumPy call over the
tensor's strided view (no copy of non-contiguous inputs), accumulating in the op's compute dtype
(float32 for half types, as PyTorch's CPU opmath does).

NumPy can lay a reduction or a scan out like its (permuted) input; results are made row-major so
that they match what the meta functions promise.
"""

import math

import numpy as np

from ...core import dtype as D
from ...core.shape import contiguous_strides
from ...ops import meta_rules as R
from ...ops import reductions as RD
from . import native
from .array import COMPUTE, compute_data, data, real_part, wrap

# sum/cumsum's result dtype when no dtype= is given: integers and bool accumulate in int64
_SUM_DTYPE = {d: (d if d.category >= D.FLOATING else D.int64) for d in D.ALL_DTYPES}


def _axes(self, dims):
    """NumPy's axes for a reduction over ``dims`` (a 0-d tensor has none to name)."""
    return dims if self.ndim else None


def row_major(arr, dtype):
    """A fresh row-major tensor of ``dtype`` owning ``arr`` (a kernel's result), with
    PyTorch's contiguous strides also in its size-1 dims (a keepdim sum's), where NumPy's
    can be anything."""
    if type(arr) is np.ndarray and not arr.flags.c_contiguous:
        arr = arr.astype(dtype.np, order="C")
    out = wrap(arr, dtype)
    if out._array is not None and out._array.size:
        out._strides = contiguous_strides(out._shape)
    return out


def _source(self, dtype):
    """The input, cast to ``dtype`` first when the caller asked for one (as PyTorch does)."""
    arr = data(self)
    if dtype is not None and arr.dtype != dtype.np:
        arr = (arr if dtype.is_complex else real_part(arr)).astype(dtype.np)
    return arr


def _count(self, dims):
    """How many elements each output element reduces (a 0-d tensor's "dim 0" has one)."""
    if not self.ndim:
        return 1
    n = 1
    for d in dims:
        n *= self.shape[d]
    return n


# --- sum, prod, mean -----------------------------------------------------------------------------

def sum(self, dim=None, keepdim=False, dtype=None):
    if dim is None and not keepdim and dtype is None:  # x.sum(): the hot path, nothing to check
        dt = _SUM_DTYPE[self.dtype]
        arr = data(self)
        if arr.size == 1 and not dt.is_complex:
            # One element (a 0-d loss, a scalar): its value plus 0 (-0.0 sums to 0.0, as in
            # PyTorch), without NumPy's reduction machinery (0.9 us of a 3 us call).
            return wrap(np.array(arr.item() + 0, dt.np), dt)
        return wrap(np.add.reduce(arr, axis=None, dtype=COMPUTE[dt]), dt)
    if dtype is None and type(dim) is list and len(dim) == 1 and type(dim[0]) is int \
            and 0 <= dim[0] < len(self._shape):
        # one in-range dim (``sum_to``'s leading dim: every bias's gradient): nothing to wrap,
        # sort or cast
        dt = _SUM_DTYPE[self.dtype]
        arr = data(self)
        out = None
        if arr.dtype == dt.np:
            if dim[0] == 0:
                out = native.column_sum(arr)
                if out is not None and keepdim:
                    out = out.reshape((1,) + out.shape)
            else:
                out = _planes_sum(arr, dim, keepdim)
        if out is None:
            out = np.add.reduce(arr, axis=dim[0], dtype=COMPUTE[dt], keepdims=keepdim)
        return row_major(out, dt)
    dims = R.reduction_dims(self, dim)  # sum's meta is this rule and sum_dtype
    dt = R.sum_dtype(self, dtype)
    source = _source(self, dtype)
    out = _planes_sum(source, dims, keepdim) if source.dtype == dt.np else None
    if out is None:
        out = np.add.reduce(source, axis=_axes(self, dims), dtype=COMPUTE[dt], keepdims=keepdim)
    return row_major(out, dt)


# Note [Channel sums]: NumPy reduces over several axes, or the last one of a big array, on one
# thread: a convolution's bias gradient, ``grad.sum([0, 2, 3])`` of 32x32x26x26 float32, took
# 183 us (torch 28). Summing trailing dims is a generated row-sum kernel on the native pool
# (each row one vectorised sum); every dim but the channels (dim 1) is those row sums of each
# (sample, channel) plane, then NumPy's sum of the few samples. The additions run in another
# order than NumPy's, so the last bits can differ from the NumPy path (as from ATen's).
PLANES_SUM_MIN_SIZE = 1 << 16
PLANES_SUM_MIN_ROW = 16


def _planes_sum(arr, dims, keepdim):
    """``arr.sum(dims)`` by row sums (Note [Channel sums]), or None where NumPy runs."""
    nd, k = arr.ndim, len(dims)
    if arr.size < PLANES_SUM_MIN_SIZE or not 0 < k < nd:
        return None
    dims = sorted(dims)
    if dims == list(range(nd - k, nd)):              # trailing dims: a sum per row
        row = math.prod(arr.shape[nd - k:])
        out = native.row_sums(arr, row) if row >= PLANES_SUM_MIN_ROW else None
        if out is None:
            return None
        out = out.reshape(arr.shape[:nd - k])
    elif nd >= 3 and dims == [0, *range(2, nd)]:     # all but the channels
        n, c = arr.shape[:2]
        plane = arr.size // max(1, n * c)
        if plane < PLANES_SUM_MIN_ROW:
            return None
        sums = native.row_sums(arr, plane)
        if sums is None:
            return None
        out = np.add.reduce(sums.reshape(n, c), axis=0)
    else:
        return None
    if keepdim:
        out = out.reshape(tuple(1 if d in dims else s for d, s in enumerate(arr.shape)))
    return out



def prod(self, dtype=None):
    dt = RD.prod.meta(self, dtype).dtype
    return wrap(np.multiply.reduce(_source(self, dtype), axis=None, dtype=COMPUTE[dt]), dt)


def prod_dim(self, dim, keepdim=False, dtype=None):
    spec, d = RD.one_dim_meta(self, dim, keepdim, R.sum_dtype(self, dtype))
    out = np.multiply.reduce(_source(self, dtype), axis=d if self.ndim else None,
                             dtype=COMPUTE[spec.dtype], keepdims=keepdim)
    return row_major(out, spec.dtype)


def mean(self, dim=None, keepdim=False, dtype=None):
    dims = R.reduction_dims(self, dim)  # mean's meta is this rule and the dtype check
    dt = RD.mean_dtype(self, dtype)
    cdt = COMPUTE[dt]
    total = np.add.reduce(_source(self, dtype), axis=_axes(self, dims), dtype=cdt,
                          keepdims=keepdim)
    # an empty reduction is 0 / 0 = nan, as in PyTorch
    return row_major(np.true_divide(total, _count(self, dims), dtype=cdt), dt)


# --- extrema --------------------------------------------------------------------------------------

def _extremum(ufunc, op):
    name = op.schema.name

    def kernel(self, dim=(), keepdim=False):
        if self.dtype.is_complex:
            op.meta(self, dim, keepdim)   # PyTorch's error
        if not keepdim and type(dim) in (tuple, list) and not dim and self.numel():
            return wrap(ufunc.reduce(data(self), axis=None), self.dtype)  # all: nothing to check
        dims = R.reduction_dims(self, dim)  # the op's meta is these two checks
        RD.check_identity_free(name, self, dim)
        out = ufunc.reduce(data(self), axis=_axes(self, dims), keepdims=keepdim)
        return row_major(out, self.dtype)
    return kernel


def _full_extremum(ufunc, op):
    """max()/min(): amax/amin of every element."""

    def kernel(self):
        if not self.numel() or self.dtype.is_complex:
            op.meta(self)
        return wrap(ufunc.reduce(data(self), axis=None), self.dtype)
    return kernel


def _extremum_dim(argfn, op):
    """max.dim/min.dim: the first extremal element (NaN counts as extremal) and its index."""
    def kernel(self, dim, keepdim=False):
        op.meta(self, dim, keepdim)
        arr = data(self)
        if self.ndim == 0:
            return wrap(arr.copy(), self.dtype), wrap(np.zeros((), np.int64), D.int64)
        d = dim % self.ndim
        idx = argfn(compute_data(self, self.dtype), axis=d, keepdims=True)
        values = np.take_along_axis(arr, idx, axis=d)
        if not keepdim:
            idx, values = idx.squeeze(d), values.squeeze(d)
        return row_major(values, self.dtype), row_major(idx, D.int64)
    return kernel


def _arg(argfn, op):
    def kernel(self, dim=None, keepdim=False):
        op.meta(self, dim, keepdim)
        axis = None if dim is None or self.ndim == 0 else dim % self.ndim
        out = argfn(compute_data(self, self.dtype), axis=axis, keepdims=keepdim)
        return row_major(out, D.int64)
    return kernel


# --- variance, logical reductions, norms -----------------------------------------------------

def var(self, dim=None, correction=None, keepdim=False):
    dt = RD.var.meta(self, dim, correction, keepdim).dtype
    dims = R.reduction_dims(self, dim)
    axis = _axes(self, dims)
    x = compute_data(self, self.dtype if self.dtype.is_complex else dt)
    n = _count(self, dims)
    dev = x - np.true_divide(np.add.reduce(x, axis=axis, keepdims=True), n)
    if self.dtype.is_complex:   # |dev|^2
        dev = np.abs(dev)
    squares = np.add.reduce(np.multiply(dev, dev), axis=axis, keepdims=keepdim)
    # PyTorch divides by max(0, N - correction): too few elements give inf or nan
    divisor = n - (1 if correction is None else correction)
    return row_major(np.true_divide(squares, divisor if divisor > 0 else 0), dt)


def _logical(ufunc, op):
    def kernel(self, dim=None, keepdim=False):
        dt = op.meta(self, dim, keepdim).dtype
        arr = data(self)
        out = ufunc.reduce(arr if arr.dtype.kind == "b" else arr != 0,
                           axis=_axes(self, RD.logical_dims(self, dim)), keepdims=keepdim)
        return row_major(out, dt)
    return kernel


def vector_norm(self, ord=2, dim=None, keepdim=False, dtype=None):
    dt = RD.vector_norm.meta(self, ord, dim, keepdim, dtype).dtype
    axis = _axes(self, R.reduction_dims(self, dim))
    x = np.abs(compute_data(self, self.dtype if self.dtype.is_complex else dt))
    if ord == 2:
        out = np.sqrt(np.add.reduce(np.multiply(x, x), axis=axis, keepdims=keepdim))
    elif ord == 1:
        out = np.add.reduce(x, axis=axis, keepdims=keepdim)
    elif ord == np.inf:
        out = np.maximum.reduce(x, axis=axis, keepdims=keepdim)
    elif ord == -np.inf:
        out = np.minimum.reduce(x, axis=axis, keepdims=keepdim)
    elif ord == 0:
        out = np.add.reduce(x != 0, axis=axis, keepdims=keepdim, dtype=x.dtype)
    else:
        out = np.power(np.add.reduce(np.power(x, ord), axis=axis, keepdims=keepdim), 1.0 / ord)
    return row_major(out, dt)


# --- scans -------------------------------------------------------------------------------------

def _scan(ufunc, op):
    def kernel(self, dim, dtype=None):
        dt = op.meta(self, dim, dtype).dtype
        src = _source(self, dtype)
        if self.ndim == 0:
            return wrap(src.astype(dt.np), dt)
        return row_major(ufunc.accumulate(src, axis=dim % self.ndim, dtype=COMPUTE[dt]), dt)
    return kernel


def _cum_extremum(ufunc, op):
    """cummax/cummin: the running extremum; its index moves to every later element that ties
    it (PyTorch compares with >= / <=), and NaN, once seen, sticks to its latest occurrence."""
    def kernel(self, dim):
        op.meta(self, dim)
        if self.ndim == 0:
            return wrap(data(self).copy(), self.dtype), wrap(np.zeros((), np.int64), D.int64)
        d = dim % self.ndim
        x = compute_data(self, self.dtype)
        running = ufunc.accumulate(x, axis=d)
        moved = x == running
        if self.dtype.category == D.FLOATING:
            moved |= np.isnan(x)
        positions = np.arange(x.shape[d]).reshape((-1,) + (1,) * (x.ndim - d - 1))
        idx = np.maximum.accumulate(np.where(moved, positions, 0), axis=d)
        return row_major(running, self.dtype), row_major(idx, D.int64)
    return kernel


def logcumsumexp(self, dim):
    dt = RD.logcumsumexp.meta(self, dim).dtype
    x = compute_data(self, dt)
    if self.ndim == 0:
        return wrap(np.array(x, copy=True), dt)
    return row_major(np.logaddexp.accumulate(x, axis=dim % self.ndim), dt)


KERNELS = {
    RD.sum: sum,
    RD.prod: prod,
    RD.prod_dim: prod_dim,
    RD.mean: mean,
    RD.amax: _extremum(np.maximum, RD.amax),
    RD.amin: _extremum(np.minimum, RD.amin),
    RD.max: _full_extremum(np.maximum, RD.max),
    RD.min: _full_extremum(np.minimum, RD.min),
    RD.max_dim: _extremum_dim(np.ndarray.argmax, RD.max_dim),
    RD.min_dim: _extremum_dim(np.ndarray.argmin, RD.min_dim),
    RD.argmax: _arg(np.ndarray.argmax, RD.argmax),
    RD.argmin: _arg(np.ndarray.argmin, RD.argmin),
    RD.var: var,
    RD.all: _logical(np.logical_and, RD.all),
    RD.any: _logical(np.logical_or, RD.any),
    RD.vector_norm: vector_norm,
    RD.cumsum: _scan(np.add, RD.cumsum),
    RD.cumprod: _scan(np.multiply, RD.cumprod),
    RD.cummax: _cum_extremum(np.maximum, RD.cummax),
    RD.cummin: _cum_extremum(np.minimum, RD.cummin),
    RD.logcumsumexp: logcumsumexp,
}
