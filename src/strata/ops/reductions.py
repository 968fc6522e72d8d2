"""Reductions, scans and sorting.

``dim`` accepts None (all dims), an int or a list; ``keepdim`` keeps reduced dims as size 1.
Integer and bool inputs of ``sum``/``prod`` accumulate in int64; ``mean`` and friends need a
floating dtype (PyTorch's "could not infer output dtype" error otherwise).
"""

from ..core import dtype as D
from . import meta_rules as R
from .op import defop


def _sum_meta(self, dim=None, keepdim=False, dtype=None):
    return R.reduction_meta(self, dim, keepdim, R.sum_dtype(self, dtype))


sum = defop("sum.dim_IntList(Tensor self, int[1]? dim=None, bool keepdim=False, *, "
            "ScalarType? dtype=None) -> Tensor", _sum_meta, method=True, function=True,
            tags=("reduction",))
