"""Derivatives of ``ops/sorting.py``: the values of a sort or selection take the gradient at
the positions their indices name; ``unique`` and friends have none (as in PyTorch)."""

from ...ops import sorting as SO
from . import derivative, non_differentiable, not_implemented
from .reductions import evenly_distribute, select_backward_by_index


def _selected(op, name, keepdim_arg=True):
    @derivative(op, name, save=("result1",))
    def formula(ctx, grad, _indices_grad=None):
        keepdim = ctx.keepdim if keepdim_arg else True
        return select_backward_by_index(grad, ctx.sizes("self"), ctx.dim, ctx.result1, keepdim)


_selected(SO.sort, "SortBackward0", keepdim_arg=False)
_selected(SO.topk, "TopkBackward0", keepdim_arg=False)
_selected(SO.kthvalue, "KthvalueBackward0")
_selected(SO.median_dim, "MedianBackward1")
_selected(SO.nanmedian_dim, "NanmedianBackward1")
_selected(SO.mode, "ModeBackward0")


def _median(op, name):
    @derivative(op, name, save=("self", "result"))
    def formula(ctx, grad):
        return evenly_distribute(grad, ctx.self, ctx.result)


_median(SO.median, "MedianBackward0")
_median(SO.nanmedian, "NanmedianBackward0")

# histc counts (a flat function); bincount has no derivative in PyTorch either, and unique's
# rows refuse (a node whose backward raises)
non_differentiable(SO.histc)
not_implemented(SO.unique, "Unique2Backward0")
not_implemented(SO.unique_dim, "UniqueDimBackward0")
not_implemented(SO.unique_consecutive, "UniqueConsecutiveBackward0")
