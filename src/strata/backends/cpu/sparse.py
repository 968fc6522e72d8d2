"""CPU kernels for sparse COO tensors, registered under the ``SparseCPU`` dispatch key.

Each kernel works on the (indices, values) pair with NumPy. ``to_sparse`` is the one kernel with a
dense input, so it sits in the ordinary CPU table.
"""

import numpy as np

from ..._tensor import make_sparse
from ...core import dtype as D
from ...ops import factory as F
from ...ops import linalg as L
from ...ops import meta_rules as R
from ...ops import pointwise as P
from ...ops import reductions as RD
from ...ops import shape as S
from ...ops import sparse as SP
from .array import data, wrap
from .elementwise import target


def _parts(t):
    indices, values = t._sparse
    return data(indices), data(values)


def _sparse_from(indices, values, shape, dtype):
    return make_sparse(wrap(np.ascontiguousarray(indices, dtype=np.int64), D.int64),
                       wrap(np.ascontiguousarray(values), dtype), shape)


def dense_array(t):
    """The dense NumPy array of a sparse tensor (duplicates summed)."""
    idx, vals = _parts(t)
    out = np.zeros(tuple(t.shape), dtype=vals.dtype)
    np.add.at(out, tuple(idx), vals)
    return out


def to_dense(self, dtype=None, masked_grad=None):
    if dtype is not None:
        raise RuntimeError("dtype argument is not supported by sparse_to_dense")
    return wrap(dense_array(self), self.dtype)


def coalesce(self):
    idx, vals = _parts(self)
    if idx.shape[1] == 0:
        return _sparse_from(idx, vals, tuple(self.shape), self.dtype)
    flat = np.ravel_multi_index(tuple(idx), tuple(self.shape[:idx.shape[0]]))
    uniq, inverse = np.unique(flat, return_inverse=True)
    summed = np.zeros((len(uniq),) + vals.shape[1:], dtype=vals.dtype)
    np.add.at(summed, inverse, vals)
    new_idx = np.array(np.unravel_index(uniq, tuple(self.shape[:idx.shape[0]])))
    out = _sparse_from(new_idx, summed, tuple(self.shape), self.dtype)
    out.__dict__["_coalesced"] = True
    return out


def to_sparse(self, sparse_dim):
    arr = data(self)
    if sparse_dim != arr.ndim:
        raise RuntimeError("strata: to_sparse supports sparse_dim == ndim only (hybrid sparse "
                           "tensors are not supported)")
    idx = np.array(np.nonzero(arr), dtype=np.int64).reshape(arr.ndim, -1)
    out = _sparse_from(idx, arr[tuple(idx)], tuple(self.shape), self.dtype)
    out.__dict__["_coalesced"] = True
    return out


def add(self, other, alpha=1):
    s_sparse = self.layout == "sparse_coo"
    o_sparse = getattr(other, "layout", "strided") == "sparse_coo"
    if s_sparse and o_sparse:
        if tuple(self.shape) != tuple(other.shape):
            raise RuntimeError(f"add: expected sizes of 'self' and 'other' to match, but "
                               f"{list(self.shape)} != {list(other.shape)}")
        (i1, v1), (i2, v2) = _parts(self), _parts(other)
        dt = D.promote_types(self.dtype, other.dtype)
        vals = np.concatenate([v1.astype(dt.np), (v2 * alpha).astype(dt.np)])
        return _sparse_from(np.concatenate([i1, i2], axis=1), vals, tuple(self.shape), dt)
    if s_sparse:
        raise RuntimeError("add(sparse, dense) is not supported. Use add(dense, sparse) instead.")
    a = data(self)
    b = dense_array(other) if o_sparse else data(other)
    dt = D.result_type(self, other)
    if tuple(np.shape(a)) != tuple(np.shape(b)) and np.ndim(b) and np.ndim(a):
        if tuple(np.broadcast_shapes(np.shape(a), np.shape(b))) != tuple(self.shape):
            raise RuntimeError("add(sparse, dense) does not support broadcasting")
    return wrap(np.add(a, np.multiply(b, alpha)).astype(dt.np), dt)


def add_(self, other, alpha=1):
    """``dense.add_(sparse, alpha=)``: each stored value (times alpha) added into its element,
    duplicates accumulating in order, as ATen's ``add_out_dense_sparse_cpu``. An optimizer step
    with a sparse gradient (``nn.Embedding(sparse=True)`` + SGD) is this call. ``sparse.add_``
    (two sparse gradients of one embedding summed by the backward) keeps both entry lists,
    uncoalesced, as the out-of-place ``add``."""
    if self.layout == "sparse_coo":
        total = add(self, other, alpha)
        if total.dtype is not self.dtype:
            raise RuntimeError(f"Can't convert result type {R.type_name(total.dtype)} to output "
                               f"{R.type_name(self.dtype)} in add operation")
        self.__dict__["_sparse"] = total._sparse
        self.__dict__.pop("_coalesced", None)
        return self
    if tuple(self.shape) != tuple(other.shape):
        raise RuntimeError(f"add: expected 'self' and 'other' to have same size, but self has "
                           f"size {list(self.shape)} while other has size {list(other.shape)} "
                           f"(FYI: dense-sparse addition does not currently support "
                           f"broadcasting)")
    dt = D.result_type(self, other)
    if not D.can_cast(dt, self.dtype):
        raise RuntimeError(f"Can't convert result type {R.type_name(dt)} to output "
                           f"{R.type_name(self.dtype)} in add operation")
    idx, vals = _parts(other)
    np.add.at(target(self), tuple(idx), np.multiply(vals.astype(dt.np), alpha))
    return self


def mul(self, other):
    if getattr(other, "layout", "strided") == "sparse_coo" or (
            hasattr(other, "_keyset") and other.ndim > 0):
        raise RuntimeError("strata: sparse * tensor supports a scalar or 0-dim other only")
    idx, vals = _parts(self)
    factor = data(other)
    dt = D.result_type(self, other)
    return _sparse_from(idx, (vals * factor).astype(dt.np), tuple(self.shape), dt)


def mul_(self, other):
    """``sparse.mul_(number)`` (SGD's momentum buffer of a sparse gradient): the values
    scaled in place, in the tensor's dtype."""
    product = mul(self, other)
    if product.dtype is not self.dtype:
        raise RuntimeError(f"result type {R.type_name(product.dtype)} can't be cast to the "
                           f"desired output type {R.type_name(self.dtype)}")
    data(self._values())[...] = data(product._values())
    return self


def sparse_mask(self, mask):
    if tuple(self.shape) != tuple(mask.shape):
        raise RuntimeError(f"sparse_mask(): operands have incompatible sizes; self has size "
                           f"{list(self.shape)} but mask has size {list(mask.shape)}")
    if self.is_sparse:
        raise RuntimeError("strata: sparse_mask of a sparse tensor is not supported (only "
                           "dense.sparse_mask(sparse))")
    idx, _ = _parts(mask)
    out = _sparse_from(idx.copy(), data(self)[tuple(idx)], tuple(self.shape), self.dtype)
    if mask.is_coalesced():
        out.__dict__["_coalesced"] = True
    return out


def mm(self, mat2):
    """sparse @ dense -> dense (``torch.sparse.mm`` / ``spmm``); dense @ sparse too."""
    if self.ndim != 2 or mat2.ndim != 2:
        raise RuntimeError("mm: both arguments must be matrices")
    if self.shape[1] != mat2.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({self.shape[0]}x"
                           f"{self.shape[1]} and {mat2.shape[0]}x{mat2.shape[1]})")
    dt = D.promote_types(self.dtype, mat2.dtype)
    if self.layout == "sparse_coo" and mat2.layout != "sparse_coo" and self.dense_dim() == 0:
        (rows, cols), vals = _parts(self)
        dense = data(mat2)
        out = np.zeros((self.shape[0], mat2.shape[1]), dtype=dt.np)
        np.add.at(out, rows, vals[:, None].astype(dt.np) * dense[cols])
        return wrap(out, dt)
    left = dense_array(self) if self.layout == "sparse_coo" else data(self)
    right = dense_array(mat2) if mat2.layout == "sparse_coo" else data(mat2)
    return wrap(np.matmul(left, right).astype(dt.np), dt)


def transpose(self, dim0, dim1):
    idx, vals = _parts(self)
    n = self.ndim
    d0, d1 = dim0 % n, dim1 % n
    if max(d0, d1) >= idx.shape[0]:
        raise RuntimeError("strata: transpose of a hybrid sparse tensor's dense dims is not "
                           "supported")
    order = list(range(n))
    order[d0], order[d1] = order[d1], order[d0]
    shape = tuple(self.shape[i] for i in order)
    return _sparse_from(idx[order], vals.copy(), shape, self.dtype)


def t(self):
    if self.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 sparse and 0 dense dimensions, but "
                           f"got {self.ndim} sparse and 0 dense dimensions")
    return transpose(self, 0, 1) if self.ndim == 2 else clone(self)


def to_copy(self, dtype=None, layout=None, device=None, pin_memory=None, non_blocking=False,
            memory_format=None):
    if device is not None and str(device) != "cpu":
        raise RuntimeError(f"strata: sparse tensors live on the CPU only, not on '{device}'")
    idx, vals = _parts(self)
    dt = dtype or self.dtype
    return _sparse_from(idx.copy(), vals.astype(dt.np), tuple(self.shape), dt)


def clone(self, memory_format=None):
    idx, vals = _parts(self)
    return _sparse_from(idx.copy(), vals.copy(), tuple(self.shape), self.dtype)


def detach(self):
    indices, values = self._sparse
    return make_sparse(indices, values, tuple(self.shape))


def neg(self):
    idx, vals = _parts(self)
    return _sparse_from(idx, -vals, tuple(self.shape), self.dtype)


def sum(self, dim=None, keepdim=False, dtype=None):
    dense = to_dense(self)
    return RD.sum(dense, dim, keepdim, dtype=dtype)


KERNELS = {SP.to_sparse: to_sparse}
SPARSE_KERNELS = {
    SP.to_dense: to_dense, SP.coalesce: coalesce, SP.sparse_mask: sparse_mask, P.add: add,
    P.add_: add_, P.mul: mul, P.mul_: mul_,
    P.neg: neg, L.mm: mm, S.transpose: transpose, S.t: t, F._to_copy: to_copy, F.clone: clone,
    S.detach: detach, RD.sum: sum,
}
