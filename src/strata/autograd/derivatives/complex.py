"""Derivatives of ``ops/complex.py`` (``tools/autograd/derivatives.yaml``; Note [Complex
gradients] in this package's ``__init__`` gives the convention)."""

from ...ops import complex as CX
from ...ops import pointwise as P
from . import conj, derivative, zeros


# --- views ------------------------------------------------------------------------------------
@derivative(CX.view_as_real, "ViewAsRealBackward0")
def _view_as_real(ctx, grad):
    return CX.view_as_complex(grad.contiguous())


@derivative(CX.view_as_complex, "ViewAsComplexBackward0")
def _view_as_complex(ctx, grad):
    return CX.view_as_real(grad)


# --- pointwise ----------------------------------------------------------------------------------
@derivative(CX.conj_physical, "ConjPhysicalBackward0")
def _conj_physical(ctx, grad):
    return conj(grad)


@derivative(CX.angle, "AngleBackward0", save=("self",))
def _angle(ctx, grad):
    """``angle_backward``: i z / |z|^2 times the real gradient; flat for real inputs."""
    z = ctx.self
    if not z.dtype.is_complex:
        return zeros(z._shape, z)
    magnitude = P.abs(z)
    scaled = P.mul(P.div(P.mul(grad, z), P.mul(magnitude, magnitude)), 1j)
    return P.where(P.eq(z, 0), 0.0, scaled)


@derivative(CX.sgn, "SgnBackward0", save=("self", "result"))
def _sgn(ctx, grad):
    """``sgn_backward``: (g - Re(g conj(s)) s) / |z| for complex z, zero for real inputs."""
    z, s = ctx.self, ctx.result
    if not z.dtype.is_complex:
        return zeros(z._shape, z)
    magnitude = P.abs(z)
    radial = P.mul(CX.real(P.mul(grad, conj(s))), s)
    return P.where(P.eq(magnitude, 0), 0.0, P.div(P.sub(grad, radial), magnitude))


# --- building complex tensors -----------------------------------------------------------------
@derivative(CX.complex, "ComplexBackward0")
def _complex(ctx, grad):
    return (CX.real(grad) if ctx.needs[0] else None,
            CX.imag(grad) if ctx.needs[1] else None)


@derivative(CX.polar, "PolarBackward0", save=("abs", "angle", "result"))
def _polar(ctx, grad):
    """z = r e^{i theta}: dL/dr = Re(conj(g) e^{i theta}), dL/dtheta = Re(conj(g) i z)."""
    unit = CX.polar(P.add(P.mul(ctx.abs, 0), 1), ctx.angle)
    return (CX.real(P.mul(conj(grad), unit)) if ctx.needs[0] else None,
            CX.real(P.mul(P.mul(conj(grad), ctx.result), 1j)) if ctx.needs[1] else None)
