"""Derivatives of ``ops/special.py``, in its order (``tools/autograd/derivatives.yaml``)."""

import math

from ...core import dtype as D
from ...ops import pointwise as P
from ...ops import pointwise_composites as PC
from ...ops import special as SP
from . import conj, derivative, is_tensor
from .pointwise import _unary

TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)


# --- unary, float result -----------------------------------------------------------------------
_unary(SP.erf, "ErfBackward0", ("self",),
       lambda c, g: P.mul(g, P.mul(P.exp(P.neg(P.mul(c.self, c.self))), TWO_OVER_SQRT_PI)))
_unary(SP.erfc, "ErfcBackward0", ("self",),
       lambda c, g: P.mul(g, P.mul(P.exp(P.neg(P.mul(c.self, c.self))), -TWO_OVER_SQRT_PI)))
_unary(SP.erfinv, "ErfinvBackward0", ("result",),
       lambda c, g: P.mul(g, P.mul(P.exp(P.mul(c.result, c.result)),
                                   0.5 * math.sqrt(math.pi))))
_unary(SP.lgamma, "LgammaBackward0", ("self",), lambda c, g: P.mul(g, SP.digamma(c.self)))
_unary(SP.i0, "I0Backward0", ("self",), lambda c, g: P.mul(g, SP.special_i1(c.self)))
_unary(SP.special_entr, "SpecialEntrBackward0", ("self",),
       lambda c, g: P.mul(g, P.neg(P.add(P.log(c.self), 1))))   # inf at 0, NaN below, as ATen
_unary(SP.special_i0e, "SpecialI0EBackward0", ("self", "result"),
       lambda c, g: P.mul(g, P.sub(SP.special_i1e(c.self), P.mul(P.sign(c.self), c.result))))


def _bessel_i1_backward(derivative_at):
    """``i1_backward``: 0.5 wherever |x| <= eps (also nan), where the formula divides by x."""
    def formula(ctx, grad):
        x = ctx.self
        regular = P.gt(P.abs(x), D.finfo(x.dtype).eps)
        safe = P.where(regular, x, D.finfo(x.dtype).eps)
        return P.mul(grad, P.where(regular, derivative_at(safe, ctx.result), 0.5))
    return formula


_unary(SP.special_i1, "SpecialI1Backward0", ("self", "result"), _bessel_i1_backward(
    lambda x, r: P.sub(SP.i0(x), P.div(r, x))))
_unary(SP.special_i1e, "SpecialI1EBackward0", ("self", "result"), _bessel_i1_backward(
    lambda x, r: P.sub(SP.special_i0e(x), P.mul(r, P.add(P.sign(x), P.reciprocal(x))))))
_unary(SP.digamma, "DigammaBackward0", ("self",), lambda c, g: P.mul(g, SP.polygamma(1, c.self)))


@derivative(SP.polygamma, "PolygammaBackward0", save=("self",))
def _polygamma(ctx, grad):
    return P.mul(grad, SP.polygamma(ctx.n + 1, ctx.self))


# polygamma_ takes (self, n), not polygamma's (n, self): a row of its own, same formula
derivative(SP.polygamma_, "PolygammaBackward1", save=("self",))(_polygamma)


# --- binary -------------------------------------------------------------------------------------
def _zeta_name(self, other):
    """PyTorch's rows: (Tensor, Tensor), then self_scalar, then other_scalar."""
    if is_tensor(self) and is_tensor(other):
        return "SpecialZetaBackward0"
    return f"SpecialZetaBackward{1 if is_tensor(other) else 2}"


@derivative(SP.special_zeta, _zeta_name, save=("self", "other"))
def _special_zeta(ctx, grad):
    if ctx.needs[0]:
        raise NotImplementedError("the derivative for 'zeta' with respect to 'self' is not "
                                  "implemented.")
    x = ctx.self   # a tensor or a Python number
    shifted, minus_x = (P.add(x, 1.0), P.neg(x)) if is_tensor(x) else (x + 1.0, -x)
    return None, P.mul(grad, P.mul(SP.special_zeta(shifted, ctx.other), minus_x))


def _igamma_derivative(op, stem, sign):
    """d/dx P(a, x) = x^(a-1) e^-x / Gamma(a) = -d/dx Q(a, x); none with respect to ``a``."""
    @derivative(op, f"{stem}Backward0", save=("self", "other"))
    def backward(ctx, grad):
        if ctx.needs[0]:
            raise NotImplementedError(f"the derivative for '{stem.lower()}: input' is not "
                                      "implemented.")
        a, x = ctx.self, ctx.other
        density = P.exp(P.sub(P.sub(P.mul(P.sub(a, 1), P.log(x)), x), SP.lgamma(a)))
        return None, P.mul(grad, density if sign > 0 else P.neg(density))
    return backward


_igamma_derivative(SP.igamma, "Igamma", 1)
_igamma_derivative(SP.igammac, "Igammac", -1)


# --- composites with rows of their own (CompositeExplicitAutograd in backends/composite.py) -----
def _xlogy_name(self, other):
    """A Python-number self or other is ATen's Scalar_Self (row 1) or Scalar_Other (row 2)."""
    return "XlogyBackward1" if not is_tensor(self) else \
        "XlogyBackward2" if not is_tensor(other) else "XlogyBackward0"


@derivative(SP.xlogy, _xlogy_name, save=("self", "other"))
def _xlogy(ctx, grad):
    x, y = ctx.self, ctx.other
    return (P.mul(grad, SP.xlogy(P.ne(x, 0), y)) if ctx.needs[0] else None,
            P.div(P.mul(grad, x), y) if ctx.needs[1] else None)


def _logit_backward(ctx, grad):
    """grad / (x (1 - x)) inside the domain, grad * inf at its ends (the sign of -0.0 does not
    matter, as in ATen's kernel); outside, NaN (no eps) or 0 (clamped by eps)."""
    x, eps = ctx.self, ctx.eps
    at_end = P.logical_or(P.eq(x, 0), P.eq(x, 1))
    inner = P.where(at_end, P.mul(grad, math.inf), P.div(grad, P.mul(x, PC.rsub(x, 1))))
    if eps is None:
        outside = P.logical_or(P.lt(x, 0), P.gt(x, 1))
        return P.where(outside, math.nan, inner)
    outside = P.logical_or(P.lt(x, eps), P.gt(x, 1 - eps))
    return P.where(outside, 0.0, inner)


derivative(SP.logit, "LogitBackward0", save=("self",))(_logit_backward)


@derivative(SP.sinc, "SincBackward0", save=("self",))
def _sinc(ctx, grad):
    """(pi x cos(pi x) - sin(pi x)) / (pi x^2), 0 at x = 0 (``sinc_backward``)."""
    x = ctx.self
    x_pi = P.mul(x, math.pi)
    x_squared_pi = P.mul(P.mul(x, x), math.pi)
    out = P.div(P.mul(grad, P.sub(P.mul(x_pi, P.cos(x_pi)), P.sin(x_pi))), conj(x_squared_pi))
    return P.where(P.eq(x_squared_pi, 0), 0.0, out)


@derivative(SP.mvlgamma, "MvlgammaBackward0", save=("self",))
def _mvlgamma(ctx, grad):
    """grad * sum_j digamma(x - j/2), j < p (``mvlgamma_backward``)."""
    x = ctx.self
    total = SP.digamma(x)
    for j in range(1, ctx.p):
        total = P.add(total, SP.digamma(P.sub(x, j / 2)))
    return P.mul(grad, total)
