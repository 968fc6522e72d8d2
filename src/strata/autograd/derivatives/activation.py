"""Derivatives of ``ops/activation.py``: the primitives are softmax and log_softmax (the other
activations decompose into pointwise ops)."""

from ...core.shape import wrap_dim
from ...ops import activation as A
from ...ops import pointwise as P
from ...ops import reductions as RD
from . import derivative, non_differentiable


@derivative(A._softmax, "SoftmaxBackward0", save=("result",))
def _softmax(ctx, grad):
    """(g - sum(g * y)) * y along the dim; written with ops so it differentiates again."""
    y = ctx.result
    d = wrap_dim(ctx.dim, y.ndim)
    return P.mul(P.sub(grad, RD.sum(P.mul(grad, y), [d], True)), y)


@derivative(A._log_softmax, "LogSoftmaxBackward0", save=("result",))
def _log_softmax(ctx, grad):
    """g - exp(y) * sum(g) along the dim."""
    y = ctx.result
    d = wrap_dim(ctx.dim, y.ndim)
    return P.sub(grad, P.mul(P.exp(y), RD.sum(grad, [d], True)))


non_differentiable(A.one_hot)
