"""Sparse COO tensors: ``strata.sparse_coo_tensor``, ``strata.spmm``, ``strata.sparse.mm``.

The tensors themselves dispatch on the SparseCPU key (``ops/sparse.py``,
``backends/cpu/sparse.py``)."""

import math

import numpy as np

from .._tensor import _is_tensor, make_sparse
from ..core import dtype as D
from ..creation import tensor
from ..ops.meta_rules import type_name


def sparse_coo_tensor(indices, values, size=None, *, dtype=None, device=None, pin_memory=False,
                      requires_grad=False, check_invariants=None, is_coalesced=None):
    """A sparse COO tensor from ``indices`` (sparse_dim x nnz) and ``values`` (nnz, then one
    size per dense dim: a hybrid tensor, as ``nn.Embedding(sparse=True)``'s gradient); indices
    of any dtype convert to int64, as PyTorch's do."""
    indices = indices.to(D.int64) if _is_tensor(indices) else tensor(indices, dtype=D.int64)
    values = values if _is_tensor(values) else tensor(values, dtype=dtype)
    if dtype is not None and values.dtype is not dtype:
        values = values.to(dtype)
    if indices.ndim != 2:
        raise RuntimeError(f"indices must be sparse_dim x nnz, but got: {list(indices.shape)}")
    if values.ndim == 0 or indices.shape[1] != values.shape[0]:
        raise RuntimeError(f"indices and values must have same nnz, but got nnz from indices: "
                           f"{indices.shape[1]}, nnz from values: "
                           f"{values.shape[0] if values.ndim else 0}")
    if device is not None and str(device) != "cpu":
        raise RuntimeError(f"strata: sparse tensors live on the CPU only, not on '{device}'")
    sparse_dim, dense_sizes = indices.shape[0], tuple(values.shape[1:])
    idx = indices.numpy()
    if size is None:
        size = tuple(int(m) + 1 for m in idx.max(axis=1)) if idx.size else (0,) * sparse_dim
        size += dense_sizes
    size = tuple(size)
    if len(size) != sparse_dim + len(dense_sizes):
        raise RuntimeError(f"'len(size) == sparse_dim + dense_dim' is not satisfied: len(size) "
                           f"= {len(size)}, sparse_dim = {sparse_dim}, dense_dim = "
                           f"{len(dense_sizes)}")
    if size[sparse_dim:] != dense_sizes:
        raise RuntimeError(f"values has incorrect size, expected "
                           f"{[values.shape[0], *size[sparse_dim:]]}, got {list(values.shape)}")
    if idx.size:
        too_big = np.nonzero(idx.max(axis=1) >= np.array(size[:sparse_dim]))[0]
        if idx.min() < 0 or too_big.size:
            d = int(too_big[0]) if too_big.size else 0
            raise RuntimeError(f"size is inconsistent with indices: for dim {d}, size is "
                               f"{size[d]} but found index {int(idx[d].max())}")
    out = make_sparse(indices.detach(), values.detach(), size)
    if is_coalesced:
        out.__dict__["_coalesced"] = True
    return out.requires_grad_() if requires_grad else out


def spmm(input, mat2):
    """``sparse @ dense`` (``torch.spmm``)."""
    return input @ mat2


def mm(mat1, mat2):
    """``torch.sparse.mm``."""
    return mat1 @ mat2


def sum(input, dim=None, dtype=None):
    dense = input.to_dense()
    return dense.sum(dtype=dtype) if dim is None else dense.sum(dim, dtype=dtype)


def softmax(input, dim, *, dtype=None):
    """``torch.sparse.softmax``: along ``dim``, over the elements a sparse tensor specifies
    (the unspecified ones count as -inf, not 0); a sparse tensor with the input's indices."""
    return _sparse_softmax(input, dim, dtype, log=False)


def log_softmax(input, dim, *, dtype=None):
    """``torch.sparse.log_softmax``, as ``softmax``."""
    return _sparse_softmax(input, dim, dtype, log=True)


def _sparse_softmax(input, dim, dtype, log):
    from ..core.shape import wrap_dim
    name = "log_softmax" if log else "softmax"
    if not input.is_sparse:
        raise NotImplementedError(f"Could not run 'aten::_sparse_{name}' with arguments from "
                                  f"the '{input.device.type.upper()}' backend: it takes a sparse "
                                  f"COO tensor")
    if input.requires_grad:
        raise NotImplementedError(f"strata: torch.sparse.{name} has no gradient yet (autograd "
                                  f"does not flow through sparse tensors in strata)")
    x = input.coalesce()
    values = x.values() if dtype is None else x.values().to(dtype)
    if not values.dtype.is_floating_point:
        raise NotImplementedError(f"\"{name}\" not implemented for "
                                  f"'{type_name(values.dtype)}'")
    dim = wrap_dim(dim, x.ndim)
    sparse_dim = x.sparse_dim()
    if dim >= sparse_dim:                  # a dense dim: each specified row of values alone
        along = dim - sparse_dim + 1
        out = values.log_softmax(along) if log else values.softmax(along)
    else:
        # the elements that share every index but ``dim``'s form one softmax
        keys = np.delete(x.indices().numpy(), dim, axis=0)
        groups = np.unique(keys, axis=1, return_inverse=True)[1].reshape(-1) if keys.size \
            else np.zeros(values.shape[0], np.int64)
        count = int(groups.max()) + 1 if groups.size else 0
        segment = tensor(groups, dtype=D.int64)
        spread = segment.view(-1, *([1] * (values.ndim - 1))).expand(values.shape)
        top = values.new_full((count, *values.shape[1:]), -math.inf).scatter_reduce(
            0, spread, values, "amax")
        shifted = values - top[segment]
        total = values.new_zeros((count, *values.shape[1:])).index_add(0, segment,
                                                                       shifted.exp())
        out = shifted - total.log()[segment] if log else shifted.exp() / total[segment]
    return sparse_coo_tensor(x.indices(), out, tuple(x.shape), is_coalesced=True)

