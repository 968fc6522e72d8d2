"""Derivatives of ``ops/loss.py``: the primitive losses are nll_loss (with its backward, itself
differentiable) and binary_cross_entropy; the others decompose into pointwise ops."""

from ...ops import loss as LO
from ...ops import pointwise as P
from ...ops import shape as S
from . import derivative, zeros


@derivative(LO.nll_loss_forward, "NllLossBackward0", save=("self", "target", "weight", "result1"),
            outputs=(True, False))
def _nll_loss_forward(ctx, grad, _g_total_weight=None):
    return LO.nll_loss_backward(grad, ctx.self, ctx.target, ctx.weight, ctx.reduction,
                                ctx.ignore_index, ctx.result1), None, None


@derivative(LO.nll_loss_backward, "NllLossBackwardBackward0", save=("target", "weight"))
def _nll_loss_backward(ctx, grad):
    """nll_loss_backward is linear in grad_output: its adjoint is nll_loss of the gradient."""
    g_out = None
    if ctx.needs[0]:
        g_out = LO.nll_loss_forward(grad, ctx.target, ctx.weight, ctx.reduction,
                                    ctx.ignore_index)[0]
    return (g_out, zeros(ctx.sizes("self"), grad) if ctx.needs[1] else None,
            None, None, None)


@derivative(LO.binary_cross_entropy, "BinaryCrossEntropyBackward0",
            save=("self", "target", "weight"))
def _binary_cross_entropy(ctx, grad):
    x, y, w, reduction = ctx.self, ctx.target, ctx.weight, ctx.reduction
    g_x = g_y = None
    if ctx.needs[0]:
        g_x = LO.binary_cross_entropy_backward(grad, x, y, w, reduction)
    if ctx.needs[1]:   # d/dy of -(y log x + (1 - y) log(1 - x)); unclamped, as in PyTorch
        g_y = P.mul(grad, P.sub(P.log1p(P.neg(x)), P.log(x)))
        if w is not None:
            g_y = P.mul(g_y, w)
        if LO.reduction_enum(reduction) == LO.MEAN:
            g_y = P.div(g_y, x.numel())
    return g_x, g_y, None


# --- regression losses with rows of their own (CompositeExplicitAutograd in
# backends/composite.py): grad * the pointwise loss's slope in ``self``; ``target``'s is its
# negative
def _regression(op, name, slope):
    @derivative(op, name, save=("self", "target"))
    def formula(ctx, grad):
        s = slope(ctx, P.sub(ctx.self, ctx.target))
        if LO.reduction_enum(ctx.reduction) != LO.NONE:   # spread the reduced grad over s
            grad = S.expand(grad, s._shape)
            if LO.reduction_enum(ctx.reduction) == LO.MEAN:
                grad = P.div(grad, max(s.numel(), 1))
        g_x = P.mul(grad, s)
        return (g_x if ctx.needs[0] else None, P.neg(g_x) if ctx.needs[1] else None)


_regression(LO.mse_loss, "MseLossBackward0", lambda c, d: P.mul(d, 2))
# ATen's kernels: the slope is d inside the band, +-delta (+-1) from its edges on
_regression(LO.huber_loss, "HuberLossBackward0", lambda c, d: P.clamp(d, -c.delta, c.delta))
_regression(LO.smooth_l1_loss, "SmoothL1LossBackward0",
            lambda c, d: P.where(P.le(d, -c.beta), -1.0, P.where(
                P.ge(d, c.beta), 1.0, P.div(d, c.beta) if c.beta else d)))
