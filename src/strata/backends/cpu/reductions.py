"""CPU kernels for ``ops/reductions.py``."""

import numpy as np

from ...ops import meta_rules as R
from ...ops import reductions as RD
from .array import COMPUTE, data, wrap


def sum(self, dim=None, keepdim=False, dtype=None):
    spec = RD.sum.meta(self, dim, keepdim, dtype)
    dims = R.reduction_dims(self, dim)
    out = np.sum(data(self), axis=dims, keepdims=keepdim, dtype=COMPUTE[spec.dtype])
    return wrap(out, spec.dtype)


KERNELS = {RD.sum: sum}
