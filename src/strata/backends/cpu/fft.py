"""CPU kernels for the FFT primitives of ``ops/fft.py``: NumPy's pocketfft (``numpy.fft``).

NumPy transforms unnormalized forward and by 1/n backward, in the input's precision; the result
is scaled to the op's ``normalization`` and cast to the op's dtype (float32 in -> complex64 out,
as PyTorch).
"""

import math

import numpy as np

from ...ops import fft as FFT
from .array import data, wrap


def _scaled(out, normalization, signal_numel, numpy_scale):
    """``out`` (computed by NumPy with factor ``numpy_scale``) times the op's normalization."""
    factor = FFT.normalization_scale(normalization, signal_numel) / numpy_scale
    return out if factor == 1.0 else out * factor


def _numel(shape, dims):
    return math.prod(shape[d] for d in dims)


def fft_r2c_kernel(self, dim, normalization, onesided):
    spec = FFT.fft_r2c.meta(self, dim, normalization, onesided)
    a = data(self)
    if not dim:
        out = a.astype(spec.dtype.np)
    elif onesided:
        out = np.fft.rfftn(a, axes=dim)
    else:
        out = np.fft.fftn(a, axes=dim)
    return wrap(_scaled(out, normalization, _numel(a.shape, dim), 1.0), spec.dtype)


def fft_c2r_kernel(self, dim, normalization, last_dim_size):
    spec = FFT.fft_c2r.meta(self, dim, normalization, last_dim_size)
    sizes = [spec.shape[d] for d in dim]
    n = math.prod(sizes)
    out = np.fft.irfftn(data(self), s=sizes, axes=dim)   # 1/n included
    return wrap(_scaled(out, normalization, n, 1.0 / n if n else 1.0), spec.dtype)


def fft_c2c_kernel(self, dim, normalization, forward):
    spec = FFT.fft_c2c.meta(self, dim, normalization, forward)
    a = data(self)
    n = _numel(a.shape, dim)
    if not dim:
        return wrap(a.copy(), spec.dtype)
    if forward:
        return wrap(_scaled(np.fft.fftn(a, axes=dim), normalization, n, 1.0), spec.dtype)
    out = np.fft.ifftn(a, axes=dim)
    return wrap(_scaled(out, normalization, n, 1.0 / n if n else 1.0), spec.dtype)


KERNELS = {
    FFT.fft_r2c: fft_r2c_kernel,
    FFT.fft_c2r: fft_c2r_kernel,
    FFT.fft_c2c: fft_c2c_kernel,
}
