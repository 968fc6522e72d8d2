"""Derivatives of ``ops/dropout.py``: ``native_dropout`` (a composite with a row of its own,
CompositeExplicitAutograd in backends/composite.py) scales the gradient by the mask it drew."""

from ...ops import dropout as DO
from ...ops import pointwise as P
from . import derivative


@derivative(DO.native_dropout, "NativeDropoutBackward0", save=("result1",), outputs=(True, False))
def _native_dropout(ctx, grad, _grad_mask=None):
    """grad * mask / (1 - p) in training (0 for p = 1), grad * mask in eval. (ATen scales by 1
    when ``train`` is None, though the forward pass then trains; strata's gradient follows the
    forward pass.)"""
    p, train = ctx.p, ctx.train
    scale = 1.0 if train is False else 0.0 if p == 1 else 1.0 / (1.0 - p)
    return P.mul(P.mul(grad, ctx.result1), scale)
