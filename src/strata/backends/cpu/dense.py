"""CPU kernels for ``ops/dense.py``: embedding lookup and ``max_norm`` renormalization."""

import numpy as np

from ...ops import dense as DN
from .array import COMPUTE, data, wrap


def check_rows(indices, rows):
    """ATen's IndexError for an embedding index outside [0, rows) (also the compiled graphs'
    check step, compile/inductor/compile_fx.py)."""
    if indices.size and (indices.min() < 0 or indices.max() >= rows):
        raise IndexError("index out of range in self")


def embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    spec = DN.embedding.meta(weight, indices, padding_idx, scale_grad_by_freq, sparse)
    idx = data(indices)
    check_rows(idx, weight.shape[0])
    return wrap(np.take(data(weight), idx, axis=0), spec.dtype)


def embedding_renorm_(self, indices, max_norm, norm_type):
    """Rescale, in place, the rows ``indices`` whose p-norm exceeds ``max_norm``."""
    DN.embedding_renorm_.meta(self, indices, max_norm, norm_type)
    w = data(self)
    rows = np.unique(data(indices))
    if rows.size and (rows[0] < 0 or rows[-1] >= w.shape[0]):
        raise IndexError("index out of range in self")
    values = w[rows].astype(COMPUTE[self.dtype])
    norms = np.linalg.norm(values, ord=norm_type, axis=1)
    big = norms > max_norm
    w[rows[big]] = values[big] * (max_norm / (norms[big] + 1e-7))[:, None]
    return self


KERNELS = {DN.embedding: embedding, DN.embedding_renorm_: embedding_renorm_}
