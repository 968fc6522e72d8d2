"""Derivatives of ``ops/pointwise.py`` and ``pointwise_composites.py``, in their order
(``tools/autograd/derivatives.yaml``)."""

import math

from ...ops import activation as A
from ...ops import complex as CX
from ...ops import pointwise as P
from ...ops import pointwise_composites as PC
from . import conj, derivative, is_tensor, non_differentiable, zeros, zeros_for

LN2 = math.log(2.0)
LN10 = math.log(10.0)


def _tanh_backward(grad, result):
    """grad * conj(1 - tanh^2); the fused kernel covers the real case."""
    if not result.dtype.is_complex:
        return A.tanh_backward(grad, result)
    return P.mul(grad, conj(P.sub(1, P.mul(result, result))))


def _unary(op, name, save, fn, inplace=None):
    """A one-input op whose gradient is ``grad * fn(ctx)``-shaped: ``fn(ctx, grad)``.
    ``inplace`` = (op_, name): an in-place form with a row (and node name) of its own."""
    derivative(op, name, save=save)(lambda ctx, grad: fn(ctx, grad))
    if inplace is not None:
        derivative(inplace[0], inplace[1], save=save)(lambda ctx, grad: fn(ctx, grad))


# --- unary, float result -----------------------------------------------------------------------
_unary(P.exp, "ExpBackward0", ("result",), lambda c, g: P.mul(g, conj(c.result)))
_unary(P.exp2, "Exp2Backward0", ("result",), lambda c, g: P.mul(g, P.mul(c.result, LN2)))
_unary(P.expm1, "Expm1Backward0", ("result",), lambda c, g: P.mul(g, P.add(c.result, 1)))
_unary(P.log, "LogBackward0", ("self",), lambda c, g: P.div(g, conj(c.self)))
_unary(P.log2, "Log2Backward0", ("self",), lambda c, g: P.div(g, P.mul(c.self, LN2)))
_unary(P.log10, "Log10Backward0", ("self",), lambda c, g: P.div(g, P.mul(c.self, LN10)))
_unary(P.log1p, "Log1PBackward0", ("self",), lambda c, g: P.div(g, P.add(c.self, 1)))
_unary(P.sqrt, "SqrtBackward0", ("result",), lambda c, g: P.div(g, P.mul(conj(c.result), 2)))
_unary(P.rsqrt, "RsqrtBackward0", ("result",),
       lambda c, g: P.mul(g, P.mul(P.pow(c.result, 3), -0.5)))
_unary(P.sin, "SinBackward0", ("self",), lambda c, g: P.mul(g, conj(P.cos(c.self))))
_unary(P.cos, "CosBackward0", ("self",), lambda c, g: P.mul(g, P.neg(conj(P.sin(c.self)))))
_unary(P.tan, "TanBackward0", ("result",),
       lambda c, g: P.mul(g, P.add(P.mul(c.result, c.result), 1)))
_unary(P.asin, "AsinBackward0", ("self",),
       lambda c, g: P.mul(g, P.rsqrt(P.sub(1, P.mul(c.self, c.self)))))
_unary(P.acos, "AcosBackward0", ("self",),
       lambda c, g: P.mul(g, P.neg(P.rsqrt(P.sub(1, P.mul(c.self, c.self))))))
_unary(P.atan, "AtanBackward0", ("self",),
       lambda c, g: P.div(g, P.add(P.mul(c.self, c.self), 1)))
_unary(P.sinh, "SinhBackward0", ("self",), lambda c, g: P.mul(g, P.cosh(c.self)))
_unary(P.cosh, "CoshBackward0", ("self",), lambda c, g: P.mul(g, P.sinh(c.self)))
_unary(P.tanh, "TanhBackward0", ("result",), lambda c, g: _tanh_backward(g, c.result))
# derivatives.yaml gives asinh_/acosh_/atanh_ rows of their own (they refuse complex input)
_unary(P.asinh, "AsinhBackward0", ("self",),
       lambda c, g: P.mul(g, P.rsqrt(P.add(P.mul(c.self, c.self), 1))),
       inplace=(P.asinh_, "AsinhBackward1"))
_unary(P.acosh, "AcoshBackward0", ("self",),
       lambda c, g: P.mul(g, P.rsqrt(P.sub(P.mul(c.self, c.self), 1))),
       inplace=(P.acosh_, "AcoshBackward1"))
_unary(P.atanh, "AtanhBackward0", ("self",),
       lambda c, g: P.div(g, P.sub(1, P.mul(c.self, c.self))),
       inplace=(P.atanh_, "AtanhBackward1"))
_unary(P.sigmoid, "SigmoidBackward0", ("result",),
       lambda c, g: A.sigmoid_backward(g, c.result))
_unary(P.reciprocal, "ReciprocalBackward0", ("result",),   # -grad * (result * result).conj()
       lambda c, g: P.mul(g, P.neg(conj(P.mul(c.result, c.result)))))


# --- unary, dtype kept --------------------------------------------------------------------------
_unary(P.abs, "AbsBackward0", ("self",), lambda c, g: P.mul(g, CX.sgn(c.self)))
_unary(P.neg, "NegBackward0", (), lambda c, g: P.neg(g))
for _op, _name in ((P.sign, "SignBackward0"), (P.floor, "FloorBackward0"),
                   (P.ceil, "CeilBackward0"), (P.trunc, "TruncBackward0")):
    _unary(_op, _name, (), lambda c, g: zeros(g._shape, g))
derivative(P.round, lambda self, decimals=0: f"RoundBackward{0 if decimals == 0 else 1}")(
    lambda c, g: zeros(g._shape, g))
_unary(P.frac, "FracBackward0", (), lambda c, g: g)
_unary(P.relu, "ReluBackward0", ("result",),     # ATen's: NaN passes the grad
       lambda c, g: A.threshold_backward(g, c.result, 0))


@derivative(P.gelu, "GeluBackward0", save=("self",))
def _gelu(ctx, grad):
    return A.gelu_backward(grad, ctx.self, approximate=ctx.approximate)


@derivative(P.silu, "SiluBackward0", save=("self",))
def _silu(ctx, grad):
    return A.silu_backward(grad, ctx.self)


# --- binary arithmetic --------------------------------------------------------------------------
@derivative(P.add, "AddBackward0")
def _add(ctx, grad):
    alpha = ctx.alpha
    return grad, (grad if alpha == 1 else P.mul(grad, alpha)) if ctx.needs[1] else None


@derivative(P.sub, "SubBackward0")
def _sub(ctx, grad):
    return grad, P.mul(grad, -ctx.alpha) if ctx.needs[1] else None


@derivative(P.mul, "MulBackward0", save=("self if other", "other if self"))
def _mul(ctx, grad):
    return (P.mul(grad, conj(ctx.other)) if ctx.needs[0] else None,
            P.mul(grad, conj(ctx.self)) if ctx.needs[1] else None)


@derivative(P.div, "DivBackward0", save=("self if other", "other"))
def _div(ctx, grad):
    other = conj(ctx.other)
    return (P.div(grad, other) if ctx.needs[0] else None,
            P.neg(P.mul(grad, P.div(P.div(conj(ctx.self), other), other)))
            if ctx.needs[1] else None)


@derivative(P.div_mode, "DivBackward2", save=("self if other", "other"))
def _div_mode(ctx, grad):
    if ctx.rounding_mode is not None:   # floor/trunc division is piecewise constant
        return (zeros(grad._shape, grad) if ctx.needs[0] else None,
                zeros_for(ctx, "other", grad) if ctx.needs[1] else None)
    return _div(ctx, grad)


def _scalar_other_name(stem):
    return lambda self, other: f"{stem}{1 if is_tensor(other) else 0}"


@derivative(P.remainder, _scalar_other_name("RemainderBackward"), save=("self if other",
                                                                        "other if other"))
def _remainder(ctx, grad):
    return grad, (P.neg(P.mul(grad, P.div_mode(ctx.self, ctx.other, "floor")))
                  if ctx.needs[1] else None)


@derivative(P.fmod, _scalar_other_name("FmodBackward"), save=("self if other", "other if other"))
def _fmod(ctx, grad):
    return grad, (P.neg(P.mul(grad, P.div_mode(ctx.self, ctx.other, "trunc")))
                  if ctx.needs[1] else None)


def _pow_name(self, exponent):
    if not is_tensor(exponent):
        return "PowBackward0"
    return "PowBackward1" if is_tensor(self) else "PowBackward2"


@derivative(P.pow, _pow_name, save=("self", "exponent", "result if exponent"))
def _pow(ctx, grad):
    x, e = ctx.self, ctx.exponent
    gx = ge = None
    if ctx.needs[0]:
        if is_tensor(e):
            gx = P.where(P.eq(e, 0), 0.0, P.mul(grad, conj(P.mul(e, P.pow(x, P.sub(e, 1))))))
        elif e == 0:
            gx = zeros(grad._shape, grad)
        else:
            gx = P.mul(grad, conj(P.mul(P.pow(x, e - 1), e)))
    if ctx.needs[1]:
        r = ctx.result
        if is_tensor(x):
            at_zero = P.logical_and(P.eq(x, 0), P.ge(e, 0))
            ge = P.mul(grad, P.where(at_zero, 0.0, conj(P.mul(r, P.log(x)))))
        elif x == 0:   # 0 ** e: flat for e >= 0, else result * log(0) = -inf
            ge = P.mul(grad, P.where(P.ge(e, 0), 0.0, P.mul(r, -math.inf)))
        else:
            ge = P.mul(grad, P.mul(r, math.log(x) if x > 0 else math.nan))
    return gx, ge


@derivative(P.atan2, "Atan2Backward0", save=("self", "other"))
def _atan2(ctx, grad):
    """``grad * other / r^2`` and ``-grad * self / r^2``, with ATen's reciprocal of r^2 set
    to 0 where it is infinite: at the origin the gradients are (+-)0, not NaN."""
    x, y = ctx.self, ctx.other
    recip = P.reciprocal(P.add(P.mul(x, x), P.mul(y, y)))
    recip = P.where(P.isinf(recip), 0.0, recip)
    return (P.mul(P.mul(grad, y), recip) if ctx.needs[0] else None,
            P.mul(P.mul(grad, P.neg(x)), recip) if ctx.needs[1] else None)


def _max_min(op, name, lose_self):
    @derivative(op, name, save=("self", "other"))
    def formula(ctx, grad):
        x, y = ctx.self, ctx.other
        half = P.where(P.eq(x, y), P.mul(grad, 0.5), grad)
        return (P.where(lose_self(x, y), 0.0, half) if ctx.needs[0] else None,
                P.where(lose_self(y, x), 0.0, half) if ctx.needs[1] else None)


_max_min(P.maximum, "MaximumBackward0", P.lt)
_max_min(P.minimum, "MinimumBackward0", P.gt)


def _fmax_fmin(op, name, wins):
    @derivative(op, name, save=("self", "other"))
    def formula(ctx, grad):
        x, y = ctx.self, ctx.other
        self_wins = P.logical_or(wins(x, y), P.isnan(y))
        return (P.where(self_wins, grad, 0.0) if ctx.needs[0] else None,
                P.where(self_wins, 0.0, grad) if ctx.needs[1] else None)


_fmax_fmin(P.fmax, "FmaxBackward0", P.ge)
_fmax_fmin(P.fmin, "FminBackward0", P.le)


@derivative(P.hypot, "HypotBackward0", save=("self if self", "other if other", "result"))
def _hypot(ctx, grad):
    r = ctx.result
    return (P.mul(grad, P.div(ctx.self, r)) if ctx.needs[0] else None,
            P.mul(grad, P.div(ctx.other, r)) if ctx.needs[1] else None)


# derivatives.yaml lists copysign.Tensor before copysign.Scalar (remainder/fmod the other way)
@derivative(P.copysign, lambda self, other: f"CopysignBackward{0 if is_tensor(other) else 1}",
            save=("self", "result"))
def _copysign(ctx, grad):
    x = ctx.self
    gx = None
    if ctx.needs[0]:
        gx = P.mul(grad, P.where(P.eq(x, 0), 0.0, P.div(ctx.result, x)))
    return gx, zeros_for(ctx, "other", grad) if ctx.needs[1] else None


# --- ternary -----------------------------------------------------------------------------------
@derivative(P.where, "WhereBackward0", save=("condition",))
def _where(ctx, grad):
    cond = ctx.condition
    return (None,
            P.where(cond, grad, 0.0) if ctx.needs[1] else None,
            P.where(cond, 0.0, grad) if ctx.needs[2] else None)


def _clamp_name(self, min=None, max=None):
    return "ClampBackward0" if is_tensor(min) or is_tensor(max) else "ClampBackward1"


@derivative(P.clamp, _clamp_name, save=("self", "min", "max"))
def _clamp(ctx, grad):
    """``clamp_backward_min_max``: self passes where min <= self <= max; min gets the gradient
    where self < min (and min < max), max where self > max (or max < min)."""
    x, lo, hi = ctx.self, ctx.min, ctx.max
    gx = glo = ghi = None
    if lo is not None and hi is not None:
        if ctx.needs[0]:
            gx = P.where(P.logical_and(P.ge(x, lo), P.le(x, hi)), grad, 0.0)
        if ctx.needs[1]:
            glo = P.where(P.logical_and(P.lt(x, lo), P.lt(lo, hi)), grad, 0.0)
        if ctx.needs[2]:
            ghi = P.where(P.logical_or(P.gt(x, hi), P.lt(hi, lo)), grad, 0.0)
    elif lo is not None:
        gx = P.where(P.ge(x, lo), grad, 0.0) if ctx.needs[0] else None
        glo = P.where(P.lt(x, lo), grad, 0.0) if ctx.needs[1] else None
    else:
        gx = P.where(P.le(x, hi), grad, 0.0) if ctx.needs[0] else None
        ghi = P.where(P.gt(x, hi), grad, 0.0) if ctx.needs[2] else None
    return gx, glo, ghi


# clamp_min/clamp_max (and their in-place forms) are composites over clamp with rows of their own
# (CompositeExplicitAutograd in backends/composite.py): one ClampMin/ClampMax node, as ATen's.
@derivative(PC.clamp_min, lambda self, min: f"ClampMinBackward{1 if is_tensor(min) else 0}",
            save=("self", "min"))
def _clamp_min(ctx, grad):
    x, lo = ctx.self, ctx.min   # a NaN self passes to neither
    return (P.where(P.ge(x, lo), grad, 0.0) if ctx.needs[0] else None,
            P.where(P.lt(x, lo), grad, 0.0) if ctx.needs[1] else None)


@derivative(PC.clamp_max, lambda self, max: f"ClampMaxBackward{1 if is_tensor(max) else 0}",
            save=("self", "max"))
def _clamp_max(ctx, grad):
    x, hi = ctx.self, ctx.max
    return (P.where(P.le(x, hi), grad, 0.0) if ctx.needs[0] else None,
            P.where(P.gt(x, hi), grad, 0.0) if ctx.needs[1] else None)


@derivative(P.nan_to_num, "NanToNumBackward0", save=("self",))
def _nan_to_num(ctx, grad):
    return P.mul(grad, P.isfinite(ctx.self))


# --- comparisons and logic -----------------------------------------------------------------------
# Out of place they return bool (no gradient flows); their in-place forms keep self's float dtype
# and are flat: zero gradient for both arguments (``eq_.Tensor`` in derivatives.yaml).
def _flat(ctx, grad):
    return (zeros(grad._shape, grad) if ctx.needs[0] else None,
            zeros_for(ctx, "other", grad) if ctx.needs[1] else None)


for _op, _stem in ((P.eq, "Eq"), (P.ne, "Ne"), (P.lt, "Lt"), (P.le, "Le"), (P.gt, "Gt"),
                   (P.ge, "Ge")):
    derivative(_op, _scalar_other_name(f"{_stem}Backward"))(_flat)

non_differentiable(
    P.isnan, P.isinf, P.isfinite, P.signbit, P.logical_not, P.logical_and, P.logical_or,
    P.logical_xor, P.bitwise_not, P.bitwise_and, P.bitwise_or, P.bitwise_xor,
    P.bitwise_left_shift, P.bitwise_right_shift)


@derivative(P.frexp, "FrexpBackward0", save=("result1",))
def _frexp(ctx, grad, _exponent_grad=None):
    return PC.ldexp(grad, P.neg(ctx.result1))   # grad / 2 ** exponent, in grad's dtype


# --- composites with rows of their own ---------------------------------------------------------
# rsub, lerp, addcmul and addcdiv (and the in-place forms, which use these rows) decompose below
# autograd (CompositeExplicitAutograd in backends/composite.py), so each records one node as ATen.
@derivative(PC.rsub, "RsubBackward0")
def _rsub(ctx, grad):
    return (P.mul(grad, -conj(ctx.alpha)) if ctx.needs[0] else None,
            grad if ctx.needs[1] else None)


@derivative(PC.lerp, lambda self, end, weight: f"LerpBackward{1 if is_tensor(weight) else 0}",
            save=("self if weight", "end if weight", "weight"))
def _lerp(ctx, grad):
    w = ctx.weight   # a tensor or a Python number
    return (P.mul(grad, conj(PC.rsub(w, 1) if is_tensor(w) else 1 - w)) if ctx.needs[0] else None,
            P.mul(grad, conj(w)) if ctx.needs[1] else None,
            P.mul(grad, conj(P.sub(ctx.end, ctx.self))) if ctx.needs[2] else None)


@derivative(PC.addcmul, "AddcmulBackward0",
            save=("tensor1 if tensor2", "tensor2 if tensor1"))
def _addcmul(ctx, grad):
    value = ctx.value
    return (grad if ctx.needs[0] else None,
            P.mul(grad, conj(P.mul(ctx.tensor2, value))) if ctx.needs[1] else None,
            P.mul(grad, conj(P.mul(ctx.tensor1, value))) if ctx.needs[2] else None)


@derivative(PC.addcdiv, "AddcdivBackward0", save=("tensor1 if tensor2", "tensor2"))
def _addcdiv(ctx, grad):
    t1, t2, value = ctx.tensor1, ctx.tensor2, ctx.value
    return (grad if ctx.needs[0] else None,
            P.mul(grad, conj(P.div(value, t2))) if ctx.needs[1] else None,
            P.mul(grad, conj(P.div(P.mul(t1, -value), P.mul(t2, t2)))) if ctx.needs[2]
            else None)


@derivative(PC.logaddexp, "LogaddexpBackward0", save=("self", "other"))
def _logaddexp(ctx, grad):
    x, y = ctx.self, ctx.other
    return (P.div(grad, P.add(P.exp(P.sub(y, x)), 1)) if ctx.needs[0] else None,
            P.div(grad, P.add(P.exp(P.sub(x, y)), 1)) if ctx.needs[1] else None)


@derivative(PC.logaddexp2, "Logaddexp2Backward0", save=("self", "other"))
def _logaddexp2(ctx, grad):
    x, y = ctx.self, ctx.other
    return (P.div(grad, P.add(P.exp2(P.sub(y, x)), 1)) if ctx.needs[0] else None,
            P.div(grad, P.add(P.exp2(P.sub(x, y)), 1)) if ctx.needs[1] else None)


@derivative(PC.ldexp, "LdexpBackward0", save=("self if other", "other"))
def _ldexp(ctx, grad):
    """self * 2**other: d/dself = 2**other, d/dother = self * 2**other * ln 2."""
    scale = P.exp2(ctx.other)
    return (P.mul(grad, scale) if ctx.needs[0] else None,
            P.mul(grad, P.mul(P.mul(ctx.self, scale), LN2)) if ctx.needs[1] else None)
