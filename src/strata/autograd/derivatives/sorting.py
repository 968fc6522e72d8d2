"""Derivatives of ``ops/sorting.py``: the values of a sort or selection take the gradient at
the positions their indices name; ``unique`` and friends have none (as in PyTorch)."""

from ...ops import sorting as SO
from . import derivative, non_differentiable
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

# histc counts (a flat function); unique/bincount have no derivative in PyTorch either.
non_differentiable(SO.histc)
