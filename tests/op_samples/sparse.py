"""Sample inputs for the ops of ``ops/sparse.py`` (sparse tensors are built inside the lambdas)."""

import numpy as np
from op_samples import Sample

_m = np.array([[0.0, 2.0, 0.0], [3.0, 0.0, -1.0]], np.float32)

SAMPLES = {
    "aten::to_sparse.sparse_dim": [Sample(lambda m, x: x.to_sparse().to_dense(), (_m,),
                                          meta=False, noncontiguous=False)],
    "aten::to_dense": [Sample(lambda m, x: x.to_sparse().to_dense(), (_m,), meta=False),
                       Sample(lambda m, x: (x.to_sparse() * 2).to_dense(), (_m,), meta=False)],
    "aten::coalesce": [Sample(lambda m, x: (x.to_sparse() + x.to_sparse()).coalesce().to_dense(),
                              (_m,), meta=False)],
    "aten::sparse_mask": [Sample(lambda m, x: (x * 3).sparse_mask(x.to_sparse()).to_dense(),
                                 (_m,), meta=False, noncontiguous=False)],
}
