"""``F.interpolate(..., antialias=True)``: bilinear and bicubic resampling whose filter widens
with the downscale factor, as PIL's and ATen's ``_upsample_{bilinear,bicubic}2d_aa``
(``aten/src/ATen/native/cpu/UpSampleKernel.cpp``).

Each spatial dim is a linear map: output index i reads the inputs around its centre
``scale * (i + 0.5)`` through the filter (a triangle for bilinear, Keys' cubic with a = -0.5
for bicubic) stretched by the scale when shrinking, the weights normalized to sum to one. The
maps are built once per call as matrices (NumPy, in float32, or float64 for float64 input, as ATen computes them) and applied
width first, then height, as ATen's separable kernel does, so autograd differentiates the two
products (ATen's backward is the same linear map transposed). Float32 and float64 only, as
ATen's CPU kernel (half types raise its error; uint8 images, which ATen resamples in fixed
point, raise strata's).
"""

import numpy as np

from ... import creation
from ...core import dtype as D
from ...ops import linalg as L
from ...ops import meta_rules as R
from ...ops import shape as S


def _triangle(x):
    x = np.abs(x)
    return np.where(x < 1, 1 - x, 0).astype(x.dtype)


def _keys_cubic(x):
    a = x.dtype.type(-0.5)
    x = np.abs(x)
    near = ((a + 2) * x - (a + 3)) * x * x + 1
    far = ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
    return np.where(x < 1, near, np.where(x < 2, far, 0)).astype(x.dtype)


_FILTERS = {"bilinear": (_triangle, 2), "bicubic": (_keys_cubic, 4)}


def _scale(in_size, out_size, align_corners, scale_factor, real):
    """ATen's ``area_pixel_compute_scale``: input pixels per output pixel."""
    if align_corners:
        return real((in_size - 1) / (out_size - 1)) if out_size > 1 else real(0)
    if scale_factor is not None and scale_factor > 0:
        return real(1.0 / scale_factor)
    return real(in_size / out_size)


def weights(in_size, out_size, mode, align_corners, scale_factor, real=np.float32):
    """The (out_size, in_size) matrix of one dim, computed in ``real`` (ATen's opmath type)
    as ``_compute_indices_min_size_weights_aa`` computes it (align_corners only changes the
    scale here: its 0.5 shift is for uint8 without antialias)."""
    filter_fn, interp_size = _FILTERS[mode]
    scale = _scale(in_size, out_size, align_corners, scale_factor, real)
    half_width = real(interp_size * 0.5)
    support = half_width * scale if scale >= 1 else half_width
    invscale = real(1) / scale if scale >= 1 else real(1)
    matrix = np.zeros((out_size, in_size), real)
    for i in range(out_size):
        center = scale * real(i + 0.5)
        lo = max(int(center - support + real(0.5)), 0)
        hi = min(int(center + support + real(0.5)), in_size)
        taps = filter_fn((np.arange(lo, hi, dtype=real) - center + real(0.5)) * invscale)
        total = taps.sum(dtype=real)
        matrix[i, lo:hi] = taps / total if total != 0 else taps
    return matrix


def interpolate_aa(input, output_size, mode, align_corners, scale_factors):
    """The antialiased resample of a 4-D ``input`` to ``output_size`` (two ints)."""
    dtype = input.dtype
    if dtype is D.uint8:
        raise NotImplementedError("strata: F.interpolate(antialias=True) of uint8 images (ATen's "
                                  "fixed-point path) is not supported; convert to float first")
    if dtype not in (D.float32, D.float64):       # half types too, as ATen's CPU kernel
        raise NotImplementedError(f"\"compute_index_ranges_weights\" not implemented for "
                                  f"'{R.type_name(dtype)}'")
    real = np.float64 if dtype is D.float64 else np.float32
    scales = scale_factors if scale_factors is not None else (None, None)
    (in_h, in_w), (out_h, out_w) = input.shape[2:], output_size
    x = input
    if out_w != in_w:        # along the contiguous dim first, as ATen's separable kernel
        w = weights(in_w, out_w, mode, align_corners, scales[1], real)
        x = L.matmul(x, S.t(creation.tensor(w, device=input.device, dtype=dtype)))
    if out_h != in_h:
        h = weights(in_h, out_h, mode, align_corners, scales[0], real)
        x = L.matmul(creation.tensor(h, device=input.device, dtype=dtype), x)
    return x if x is not input else input.clone()
