"""Derivatives of ``ops/factory.py``: copies, fills and random ops (whose outputs do not depend
differentiably on the overwritten input)."""

from ...ops import factory as F
from ...ops import reductions as RD
from . import derivative, non_differentiable, zeros


@derivative(F._to_copy, "ToCopyBackward0")
def _to_copy(ctx, grad):
    return grad   # validate_outputs casts it back to the input's dtype and device


@derivative(F.clone, "CloneBackward0")
def _clone(ctx, grad):
    return grad


@derivative(F.copy_, "CopyBackwards")
def _copy_(ctx, grad):
    """The old value of self is overwritten (zero gradient); src gets the gradient, summed back
    over broadcast dims and cast to its dtype by validate_outputs."""
    return (zeros(grad._shape, grad) if ctx.needs[0] else None,
            grad if ctx.needs[1] else None)


def _overwritten(ctx, grad):
    return zeros(grad._shape, grad)


derivative(F.fill_, "FillBackward2")(_overwritten)
# zero_ is fill_(0) with a row (and node) of its own, as ATen's (CompositeExplicitAutograd)
derivative(F.zero_, "ZeroBackward0")(_overwritten)


@derivative(F.fill_tensor_, "FillBackward3")   # a composite over copy_ (CompositeExplicitAutograd)
def _fill_tensor_(ctx, grad):
    """self is overwritten; the one value reaches every element, so its gradient is the sum."""
    return (zeros(grad._shape, grad) if ctx.needs[0] else None,
            RD.sum(grad) if ctx.needs[1] else None)
derivative(F.normal_, "NormalBackward0")(_overwritten)
derivative(F.uniform_, "UniformBackward0")(_overwritten)
derivative(F.bernoulli_tensor, "BernoulliBackward0")(_overwritten)
# bernoulli.p has no formula in PyTorch either: backward through it raises.

# resize_ refuses tensors that require grad (kernel.resize_kernel); view(dtype) reinterprets bits
non_differentiable(F.view_dtype, F.resize_)
