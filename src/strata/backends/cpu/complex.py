"""CPU kernels for ``ops/complex.py`` (its views need none: they share the view kernel)."""

import numpy as np

from ...ops import complex as CX
from .array import COMPUTE, data, wrap
from .elementwise import add_kernels, result, unary
from .pointwise import _sign


def _sgn(a):
    """z / |z| for complex (0 at 0), the sign otherwise (0 for NaN, as PyTorch's)."""
    if not np.iscomplexobj(a):
        return _sign(a)
    magnitude = np.abs(a)
    return np.where(magnitude == 0, 0, a / np.where(magnitude == 0, 1, magnitude))


def _angle_of_input(self):
    return self.dtype if self.dtype.is_complex else CX.angle_dtype(self)


def _complex_kernel(real, imag):
    spec = CX.complex.meta(real, imag)
    out = np.empty(spec.shape, COMPUTE[spec.dtype])
    out.real, out.imag = data(real), data(imag)
    return wrap(out, spec.dtype)


def _polar_kernel(abs, angle):
    spec = CX.polar.meta(abs, angle)
    r, theta = data(abs), data(angle)
    out = np.empty(spec.shape, COMPUTE[spec.dtype])
    out.real, out.imag = r * np.cos(theta), r * np.sin(theta)
    return wrap(out, spec.dtype)


def _angle_kernel(self):
    dt = CX.angle_dtype(self)
    return result(np.angle(data(self).astype(COMPUTE[_angle_of_input(self)], copy=False)), dt,
                  (self,))


def _table():
    t = {}
    add_kernels(t, CX, "conj_physical", unary, np.conjugate)
    add_kernels(t, CX, "sgn", unary, _sgn)
    t[CX.angle] = _angle_kernel
    t[CX.complex] = _complex_kernel
    t[CX.polar] = _polar_kernel
    return t


KERNELS = _table()
