"""Sparse COO ops: conversions between layouts.

A sparse COO tensor (``layout=strata.sparse_coo``) holds ``indices`` (sparse_dim x nnz, int64) and
``values`` (nnz, ...) and dispatches on the ``Sparse`` functionality key, so its kernels
(``backends/cpu/sparse.py``, registered under ``SparseCPU``) are found by the usual key-set rules:
``sparse + dense`` runs the SparseCPU kernel of ``add`` because Sparse sits above Dense in the key
order, and ``sparse @ dense`` runs SparseCPU's ``mm``. Ops tagged "sparse" only have kernels for
sparse inputs (to_dense, coalesce) or produce sparse outputs (to_sparse).
"""

from . import meta_rules as R
from .op import TensorSpec, defop


def _to_dense_meta(self, dtype=None, masked_grad=None):
    shape = tuple(self.shape)
    return TensorSpec(shape, dtype or self.dtype, R.contiguous_strides(shape))


def _data_dependent(self, *args):
    raise RuntimeError("to_sparse/coalesce have a data-dependent number of non-zeros; the meta "
                       "device cannot compute it")


to_dense = defop("to_dense(Tensor self, ScalarType? dtype=None, *, bool? masked_grad=None) -> "
                 "Tensor", _to_dense_meta, tags=("sparse",))
to_sparse = defop("to_sparse.sparse_dim(Tensor self, int sparse_dim) -> Tensor", _data_dependent,
                  tags=("sparse",))
coalesce = defop("coalesce(Tensor self) -> Tensor", _data_dependent, tags=("sparse",))
# ``dense.sparse_mask(mask)``: dense's elements at mask's indices, as a sparse tensor like mask
# (Adagrad's sparse update reads its accumulator this way); it dispatches on mask's Sparse key.
sparse_mask = defop("sparse_mask(Tensor self, Tensor mask) -> Tensor", _data_dependent,
                    method=True, tags=("sparse",))
