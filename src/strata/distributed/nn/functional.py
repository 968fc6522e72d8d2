"""Differentiable collectives (``torch/distributed/nn/functional.py``), e.g. for SyncBatchNorm.

``all_reduce`` with SUM: every rank's output is the sum of every rank's input, so the gradient
of each rank's input is the sum of every rank's output gradient: another all-reduce, issued in
backward (in the same order on every rank, as the graph is the same).
"""

from ...autograd.function import Function
from .. import collectives
from ..buffers import ReduceOp


class _AllReduceSum(Function):
    @staticmethod
    def forward(ctx, group, tensor):
        ctx.group = group
        out = tensor.clone()
        collectives.all_reduce(out, ReduceOp.SUM, group=group)
        return out

    @staticmethod
    def backward(ctx, grad_output):
        grad = grad_output.contiguous().clone()
        collectives.all_reduce(grad, ReduceOp.SUM, group=ctx.group)
        return None, grad


def all_reduce(tensor, op=ReduceOp.SUM, group=None):
    """Out-of-place, differentiable all-reduce (SUM only)."""
    if op is not ReduceOp.SUM:
        raise NotImplementedError(f"strata.distributed.nn.functional.all_reduce: only "
                                  f"ReduceOp.SUM is differentiable here, got {op}")
    return _AllReduceSum.apply(group, tensor)
