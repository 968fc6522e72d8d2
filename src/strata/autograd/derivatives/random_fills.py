"""Derivatives of ``ops/random_fills.py``: each op overwrites ``self`` with draws, so the old
value gets a zero gradient (derivatives.yaml's ``zeros_like(grad)``), as does ``bernoulli_``'s
tensor of probabilities; the result is not differentiable in anything."""

from ...ops import random_fills as RF
from . import derivative, zeros, zeros_for


def _overwritten(ctx, grad):
    return zeros(grad._shape, grad)


derivative(RF.random_from, "RandomBackward0")(_overwritten)
derivative(RF.random_to, "RandomBackward1")(_overwritten)
derivative(RF.random_, "RandomBackward2")(_overwritten)


@derivative(RF.bernoulli_tensor_, "BernoulliBackward1")
def _bernoulli_tensor_(ctx, grad):
    return (zeros(grad._shape, grad) if ctx.needs[0] else None,
            zeros_for(ctx, "p", grad) if ctx.needs[1] else None)


derivative(RF.bernoulli_float, "BernoulliBackward2")(_overwritten)
derivative(RF.exponential_, "ExponentialBackward0")(_overwritten)
derivative(RF.geometric_, "GeometricBackward0")(_overwritten)
derivative(RF.cauchy_, "CauchyBackward0")(_overwritten)
derivative(RF.log_normal_, "LogNormalBackward0")(_overwritten)
