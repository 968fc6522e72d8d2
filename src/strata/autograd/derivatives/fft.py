"""Derivatives of the FFT primitives of ``ops/fft.py`` (``fft_r2c_backward`` and
``fft_c2r_backward`` in FunctionsManual.cpp)."""

from ...ops import complex as CX
from ...ops import factory as F
from ...ops import fft as FFT
from ...ops import nn as N
from ...ops import pointwise as P
from ...ops import shape as S
from . import derivative


@derivative(FFT.fft_c2c, "FftC2CBackward0")
def _c2c(ctx, grad):
    return FFT.fft_c2c(grad, ctx.dim, ctx.normalization, not ctx.forward)


@derivative(FFT.fft_r2c, "FftR2CBackward0")
def _r2c(ctx, grad):
    """A one-sided transform dropped the upper half: pad it back with zeros, then the inverse
    complex transform's real part."""
    if ctx.onesided:
        last = ctx.dim[-1]
        missing = ctx.sizes("self")[last] - grad._shape[last]
        if missing > 0:
            pad = [0] * (2 * grad.ndim)
            pad[2 * (grad.ndim - 1 - last) + 1] = missing
            grad = N.constant_pad_nd(grad, pad, 0)
    return CX.real(FFT.fft_c2c(grad, ctx.dim, ctx.normalization, False))


@derivative(FFT.fft_c2r, "FftC2RBackward0")
def _c2r(ctx, grad):
    """The real transform of the gradient; bins whose mirror image lies outside the one-sided
    half stood for two in forward, so they count twice."""
    g = FFT.fft_r2c(grad, ctx.dim, ctx.normalization, True)
    last = ctx.dim[-1]
    doubled = grad._shape[last] - g._shape[last]
    if doubled > 0:
        n = g._shape[last]
        weight = S.cat([F.full((1,), 1.0, dtype=grad.dtype, device=grad.device),
                        F.full((doubled,), 2.0, dtype=grad.dtype, device=grad.device),
                        F.full((n - 1 - doubled,), 1.0, dtype=grad.dtype, device=grad.device)],
                       0)
        shape = [1] * g.ndim
        shape[last] = n
        g = P.mul(g, S.reshape(weight, shape))
    return g
