"""Sparse COO tensors: ``strata.sparse_coo_tensor``, ``strata.spmm``, ``strata.sparse.mm``.

The tensors themselves dispatch on the SparseCPU key (``ops/sparse.py``,
``backends/cpu/sparse.py``)."""

import numpy as np

from .._tensor import _is_tensor, make_sparse
from ..core import dtype as D
from ..creation import tensor


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
