"""Derivatives of ``ops/loss.py``: the primitive losses are nll_loss (with its backward, itself
differentiable) and binary_cross_entropy; the others decompose into pointwise ops."""

import math

from ...ops import activation as A
from ...ops import loss as LO
from ...ops import pointwise as P
from ...ops import pointwise_composites as PC
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


# binary_cross_entropy_backward is a composite with a row of its own (CompositeExplicitAutograd):
# FunctionsManual.cpp's binary_cross_entropy_double_backward(_grad_output/_target). ATen refuses
# a weight that requires grad; strata differentiates it (the backward is linear in it).
@derivative(LO.binary_cross_entropy_backward, "BinaryCrossEntropyBackwardBackward0",
            save=("grad_output", "self", "target", "weight"))
def _binary_cross_entropy_backward(ctx, grad):
    eps = 1e-12
    go, x, y, w = ctx.grad_output, ctx.self, ctx.target, ctx.weight
    mean = LO.reduction_enum(ctx.reduction) == LO.MEAN

    def scaled(t):   # times the weight, over the element count for a mean
        t = t if w is None else P.mul(t, w)
        return P.div(t, x.numel()) if mean else t

    g_go = g_x = g_y = g_w = None
    if ctx.needs[0]:   # summed to grad_output's shape by the engine
        g_go = scaled(P.mul(grad, P.div(P.sub(x, y), P.mul(P.add(PC.rsub(x, 1), eps),
                                                             P.add(x, eps)))))
    if ctx.needs[1]:
        curvature = P.div(P.add(P.sub(P.mul(x, x), P.mul(P.mul(x, y), 2)), y),
                          P.mul(P.pow(P.add(x, eps), 2), P.pow(P.add(PC.rsub(x, 1), eps), 2)))
        g_x = scaled(P.mul(curvature, P.mul(grad, go)))
    denom = PC.clamp_min(P.mul(PC.rsub(x, 1), x), eps) if ctx.needs[2] or ctx.needs[3] else None
    if ctx.needs[2]:
        g_y = scaled(P.div(P.neg(P.mul(grad, go)), denom))
    if ctx.needs[3]:
        g_w = P.mul(P.div(P.mul(P.mul(grad, go), P.sub(x, y)), denom), 1 / x.numel() if mean
                    else 1)
    return g_go, g_x, g_y, g_w


# binary_cross_entropy_with_logits is a composite with a row of its own (CompositeExplicitAutograd).
# ATen refuses a weight or pos_weight that requires grad; strata differentiates both (the loss is
# linear in each), checked by finite differences in tests/test_inplace_view_rules.py.
@derivative(LO.binary_cross_entropy_with_logits, "BinaryCrossEntropyWithLogitsBackward0",
            save=("self", "target", "weight", "pos_weight"))
def _bce_with_logits(ctx, grad):
    """loss = (1 - y) x - w_log log_sigmoid(x), w_log = 1 + (pos_weight - 1) y, times weight:
    d/dx = w_log sigmoid(x) - pos_weight y (ATen's form), d/dy = -x - (pos_weight - 1)
    log_sigmoid(x)."""
    x, y, w, pw = ctx.self, ctx.target, ctx.weight, ctx.pos_weight
    r = LO.reduction_enum(ctx.reduction)
    g = grad
    if r != LO.NONE:   # spread the reduced gradient over the loss's elements
        shape = P.add(x, y)._shape if pw is None else P.add(P.add(x, y), pw)._shape
        g = S.expand(grad, shape)
        if r == LO.MEAN:
            g = P.div(g, max(math.prod(shape), 1))
    g_w = g if w is None else P.mul(g, w)
    log_sig = A.log_sigmoid(x)
    g_x = g_y = g_weight = g_pw = None
    if ctx.needs[0]:
        slope = P.sub(P.sigmoid(x), y) if pw is None else \
            P.sub(P.mul(P.add(P.mul(P.sub(pw, 1), y), 1), P.sigmoid(x)), P.mul(pw, y))
        g_x = P.mul(g_w, slope)
    if ctx.needs[1]:
        slope = P.neg(x) if pw is None else P.sub(P.neg(x), P.mul(P.sub(pw, 1), log_sig))
        g_y = P.mul(g_w, slope)
    if ctx.needs[2]:
        w_log = 1 if pw is None else P.add(P.mul(P.sub(pw, 1), y), 1)
        g_weight = P.mul(g, P.sub(P.mul(PC.rsub(y, 1), x), P.mul(w_log, log_sig)))
    if ctx.needs[3]:
        g_pw = P.mul(g_w, P.neg(P.mul(y, log_sig)))
    return g_x, g_y, g_weight, g_pw
