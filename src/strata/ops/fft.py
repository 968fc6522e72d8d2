"""Discrete Fourier transforms: three primitives and the ``torch.fft`` functions over them.

The primitives are ATen's: ``_fft_r2c`` (real -> complex, optionally only the non-redundant
half of the last transformed dim), ``_fft_c2r`` (its inverse: a Hermitian half -> real) and
``_fft_c2c``. ``normalization`` is ATen's ``fft_norm_mode``: 0 none, 1 by 1/sqrt(n), 2 by 1/n,
where n is the number of points of the transformed signal. The ``fft_*`` functions are composites
following ``torch/_refs/fft.py``: promote, resize (zero-pad or trim) the input, pick the norm.

    import strata as torch
    torch.fft.rfft(torch.tensor([1., 2., 3., 4.]))   # tensor([10.+0.j, -2.+2.j, -2.+0.j])
"""

import math

from ..core import dtype as D
from ..core.shape import wrap_dim
from . import meta_rules as R
from . import nn as N
from . import shape as S
from .complex import conj
from .factory import arange
from .op import TensorSpec, defop, register_decomposition
from .pointwise import mul

_FFT_DTYPES = (D.float32, D.float64, D.complex64, D.complex128)
NORM_NONE, NORM_BY_ROOT_N, NORM_BY_N = 0, 1, 2


# --- primitives -----------------------------------------------------------------------------
def _check_fft_dtype(self):
    if self.dtype not in _FFT_DTYPES:
        raise RuntimeError(f"Unsupported dtype {R.type_name(self.dtype)}")


def _r2c_meta(self, dim, normalization, onesided):
    _check_fft_dtype(self)
    if self.dtype.is_complex:
        raise RuntimeError(f"_fft_r2c expects a real input tensor, but got "
                           f"{R.type_name(self.dtype)}")
    shape = list(self.shape)
    if onesided:
        last = dim[-1]
        shape[last] = shape[last] // 2 + 1
    return TensorSpec(tuple(shape), self.dtype.to_complex(), R.contiguous_strides(shape))


def _c2r_meta(self, dim, normalization, last_dim_size):
    _check_fft_dtype(self)
    shape = list(self.shape)
    shape[dim[-1]] = last_dim_size
    return TensorSpec(tuple(shape), self.dtype.to_real(), R.contiguous_strides(shape))


def _c2c_meta(self, dim, normalization, forward):
    _check_fft_dtype(self)
    if not self.dtype.is_complex:
        raise RuntimeError(f"_fft_c2c expects a complex input tensor, but got "
                           f"{R.type_name(self.dtype)}")
    shape = tuple(self.shape)
    return TensorSpec(shape, self.dtype, R.contiguous_strides(shape))


fft_r2c = defop("_fft_r2c(Tensor self, int[] dim, int normalization, bool onesided) -> Tensor",
                _r2c_meta, function=True)
fft_c2r = defop("_fft_c2r(Tensor self, int[] dim, int normalization, SymInt last_dim_size) "
                "-> Tensor", _c2r_meta, function=True)
fft_c2c = defop("_fft_c2c(Tensor self, SymInt[] dim, int normalization, bool forward) -> Tensor",
                _c2c_meta, function=True)


# --- argument handling shared by the torch.fft functions -----------------------------------
def norm_mode(norm, forward):
    """``norm=`` as ATen's ``fft_norm_mode`` for a transform in the given direction."""
    if norm is None or norm == "backward":
        return NORM_NONE if forward else NORM_BY_N
    if norm == "forward":
        return NORM_BY_N if forward else NORM_NONE
    if norm == "ortho":
        return NORM_BY_ROOT_N
    raise RuntimeError(f"Invalid normalization mode: \"{norm}\"")


def _promote(x, require_complex):
    """Integers and bool compute in the default float dtype; ``require_complex`` also makes real
    inputs complex (``promote_tensor_fft``). Half types have no CPU FFT in PyTorch."""
    dt = x.dtype
    if dt.category < D.FLOATING:
        dt = D.get_default_dtype()
    if dt in (D.float16, D.bfloat16):
        raise RuntimeError(f"Unsupported dtype {R.type_name(dt)}")
    if require_complex:
        dt = dt.to_complex()
    return x if dt is x.dtype else x.to(dt)


def _resize(x, dims, sizes):
    """Trim or zero-pad each of ``dims`` to its size in ``sizes`` (-1: keep)."""
    pad = [0] * (2 * x.ndim)
    padded = False
    for d, n in zip(dims, sizes):
        have = x.shape[d]
        if n == -1 or n == have:
            continue
        if have < n:
            pad[2 * (x.ndim - 1 - d) + 1] = n - have
            padded = True
        else:
            x = S.slice(x, d, 0, n)
    return N.constant_pad_nd(x, pad, 0) if padded else x


def _check_points(n):
    if n < 1:
        raise RuntimeError(f"Invalid number of data points ({n}) specified")


def _one_dim(x, n, dim):
    d = wrap_dim(dim, x.ndim, scalar_ok=False)
    size = x.shape[d] if n is None else n
    _check_points(size)
    return d, size


def _real_input(name, x, message="a real input tensor"):
    if x.dtype.is_complex:
        raise RuntimeError(f"{name} expects {message}, but got {R.type_name(x.dtype)}")


def shape_and_dims(x, s, dim):
    """``(sizes, dims)`` of an n-dimensional transform (``_canonicalize_fft_shape_and_dim_args``):
    ``s`` alone picks the last ``len(s)`` dims, ``dim`` alone keeps their sizes, neither means
    every dim; -1 in ``s`` keeps that dim's size."""
    if dim is not None:
        dims = tuple(wrap_dim(d, x.ndim, scalar_ok=False)
                     for d in ((dim,) if isinstance(dim, int) else dim))
        if len(set(dims)) != len(dims):
            raise RuntimeError("FFT dims must be unique")
    if s is not None:
        s = (s,) if isinstance(s, int) else tuple(s)
        if dim is not None and len(dims) != len(s):
            raise RuntimeError("When given, dim and shape arguments must have the same length")
        if len(s) > x.ndim:
            raise RuntimeError(f"Got shape with {len(s)} values but input tensor only has "
                               f"{x.ndim} dimensions.")
        if dim is None:
            dims = tuple(range(x.ndim - len(s), x.ndim))
        sizes = tuple(x.shape[d] if n == -1 else n for n, d in zip(s, dims))
    elif dim is None:
        dims, sizes = tuple(range(x.ndim)), tuple(x.shape)
    else:
        sizes = tuple(x.shape[d] for d in dims)
    for n in sizes:
        _check_points(n)
    return sizes, dims


# --- the torch.fft functions -----------------------------------------------------------------
_ONE_DIM = "(Tensor self, SymInt? n=None, int dim=-1, str? norm=None) -> Tensor"
_N_DIM = "(Tensor self, SymInt[1]? s=None, int[1]? dim=None, str? norm=None) -> Tensor"
_TWO_DIM = "(Tensor self, SymInt[1]? s=None, int[1] dim=[-2,-1], str? norm=None) -> Tensor"

fft_fft = defop(f"fft_fft{_ONE_DIM}")
fft_ifft = defop(f"fft_ifft{_ONE_DIM}")
fft_rfft = defop(f"fft_rfft{_ONE_DIM}")
fft_irfft = defop(f"fft_irfft{_ONE_DIM}")
fft_hfft = defop(f"fft_hfft{_ONE_DIM}")
fft_ihfft = defop(f"fft_ihfft{_ONE_DIM}")
fft_fftn = defop(f"fft_fftn{_N_DIM}")
fft_ifftn = defop(f"fft_ifftn{_N_DIM}")
fft_rfftn = defop(f"fft_rfftn{_N_DIM}")
fft_irfftn = defop(f"fft_irfftn{_N_DIM}")
fft_fft2 = defop(f"fft_fft2{_TWO_DIM}")
fft_ifft2 = defop(f"fft_ifft2{_TWO_DIM}")
fft_rfft2 = defop(f"fft_rfft2{_TWO_DIM}")
fft_irfft2 = defop(f"fft_irfft2{_TWO_DIM}")


def _c2c_or_r2c(x, n, dim, norm, forward):
    """``fft``/``ifft``: a real input takes the two-sided real transform (conjugated for the
    inverse, since ifft(x) = conj(fft(x)) / n for real x)."""
    x = _promote(x, require_complex=False)
    d, size = _one_dim(x, n, dim)
    x = _resize(x, (d,), (size,))
    mode = norm_mode(norm, forward)
    if x.dtype.is_complex:
        return fft_c2c(x, [d], mode, forward)
    out = fft_r2c(x, [d], mode, False)
    return out if forward else conj(out)


@register_decomposition(fft_fft)
def _fft(self, n=None, dim=-1, norm=None):
    return _c2c_or_r2c(self, n, dim, norm, True)


@register_decomposition(fft_ifft)
def _ifft(self, n=None, dim=-1, norm=None):
    return _c2c_or_r2c(self, n, dim, norm, False)


def _r2c(name, x, n, dim, norm, forward):
    _real_input(name, x)
    x = _promote(x, require_complex=False)
    d, size = _one_dim(x, n, dim)
    out = fft_r2c(_resize(x, (d,), (size,)), [d], norm_mode(norm, forward), True)
    return out if forward else conj(out)


@register_decomposition(fft_rfft)
def _rfft(self, n=None, dim=-1, norm=None):
    return _r2c("rfft", self, n, dim, norm, True)


@register_decomposition(fft_ihfft)
def _ihfft(self, n=None, dim=-1, norm=None):
    return _r2c("ihfft", self, n, dim, norm, False)


def _c2r(x, n, dim, norm, forward):
    """``irfft`` (inverse) and ``hfft`` (forward: the conjugated input's inverse transform)."""
    x = _promote(x, require_complex=True)
    d = wrap_dim(dim, x.ndim, scalar_ok=False)
    last = 2 * (x.shape[d] - 1) if n is None else n
    _check_points(last)
    if n is not None:
        x = _resize(x, (d,), (last // 2 + 1,))
    if forward:
        x = conj(x)
    return fft_c2r(x, [d], norm_mode(norm, forward), last)


@register_decomposition(fft_irfft)
def _irfft(self, n=None, dim=-1, norm=None):
    return _c2r(self, n, dim, norm, False)


@register_decomposition(fft_hfft)
def _hfft(self, n=None, dim=-1, norm=None):
    return _c2r(self, n, dim, norm, True)


def _c2c_n(x, s, dim, norm, forward):
    sizes, dims = shape_and_dims(x, s, dim)
    x = _promote(x, require_complex=True)
    return fft_c2c(_resize(x, dims, sizes), list(dims), norm_mode(norm, forward), forward)


@register_decomposition(fft_fftn)
def _fftn(self, s=None, dim=None, norm=None):
    return _c2c_n(self, s, dim, norm, True)


@register_decomposition(fft_ifftn)
def _ifftn(self, s=None, dim=None, norm=None):
    return _c2c_n(self, s, dim, norm, False)


@register_decomposition(fft_fft2)
def _fft2(self, s=None, dim=(-2, -1), norm=None):
    return _c2c_n(self, s, dim, norm, True)


@register_decomposition(fft_ifft2)
def _ifft2(self, s=None, dim=(-2, -1), norm=None):
    return _c2c_n(self, s, dim, norm, False)


def _rfftn_impl(name, x, s, dim, norm):
    _real_input(name, x, "a real-valued input tensor")
    sizes, dims = shape_and_dims(x, s, dim)
    x = _promote(x, require_complex=False)
    return fft_r2c(_resize(x, dims, sizes), list(dims), norm_mode(norm, True), True)


@register_decomposition(fft_rfftn)
def _rfftn(self, s=None, dim=None, norm=None):
    return _rfftn_impl("rfftn", self, s, dim, norm)


@register_decomposition(fft_rfft2)
def _rfft2(self, s=None, dim=(-2, -1), norm=None):
    return _rfftn_impl("rfftn", self, s, dim, norm)


def _irfftn_impl(name, x, s, dim, norm):
    sizes, dims = shape_and_dims(x, s, dim)
    if not sizes:
        raise RuntimeError(f"{name} must transform at least one axis")
    s_last = None if s is None else ((s,) if isinstance(s, int) else tuple(s))[-1]
    last = 2 * (x.shape[dims[-1]] - 1) if s_last in (None, -1) else sizes[-1]
    _check_points(last)
    x = _promote(x, require_complex=True)
    x = _resize(x, dims, sizes[:-1] + (last // 2 + 1,))
    return fft_c2r(x, list(dims), norm_mode(norm, False), last)


@register_decomposition(fft_irfftn)
def _irfftn(self, s=None, dim=None, norm=None):
    return _irfftn_impl("irfftn", self, s, dim, norm)


@register_decomposition(fft_irfft2)
def _irfft2(self, s=None, dim=(-2, -1), norm=None):
    return _irfftn_impl("irfftn", self, s, dim, norm)


# --- helpers: sample frequencies and shifts --------------------------------------------------
_FREQ = ("(int n, float d=1.0, *, ScalarType? dtype=None, Layout? layout=None, "
         "Device? device=None, bool? pin_memory=False) -> Tensor")
fft_fftfreq = defop(f"fft_fftfreq{_FREQ}", tags=("factory",))
fft_rfftfreq = defop(f"fft_rfftfreq{_FREQ}", tags=("factory",))
fft_fftshift = defop("fft_fftshift(Tensor self, int[1]? dim=None) -> Tensor")
fft_ifftshift = defop("fft_ifftshift(Tensor self, int[1]? dim=None) -> Tensor")


def _freq_dtype(name, dtype):
    dtype = D.get_default_dtype() if dtype is None else dtype
    if dtype.category < D.FLOATING:
        raise RuntimeError(f"{name} requires a floating point or complex dtype")
    return dtype


@register_decomposition(fft_fftfreq)
def _fftfreq(n, d=1.0, dtype=None, layout=None, device=None, pin_memory=False):
    """[0, 1, ..., (n-1)//2, -(n//2), ..., -1] / (d * n), as ``fft_fftfreq`` in SpectralOps.cpp
    (which multiplies by the reciprocal)."""
    dtype = _freq_dtype("fftfreq", dtype)
    index = S.cat([arange(0, (n + 1) // 2, 1, dtype=dtype, device=device),
                   arange(-(n // 2), 0, 1, dtype=dtype, device=device)], 0)
    return mul(index, 1.0 / (n * d))


@register_decomposition(fft_rfftfreq)
def _rfftfreq(n, d=1.0, dtype=None, layout=None, device=None, pin_memory=False):
    dtype = _freq_dtype("rfftfreq", dtype)
    return mul(arange(0, n // 2 + 1, 1, dtype=dtype, device=device), 1.0 / (n * d))


def _shift(x, dim, sign):
    dims = tuple(range(x.ndim)) if dim is None else \
        ((dim,) if isinstance(dim, int) else tuple(dim))
    if not dims:
        return x.clone()
    sizes = [x.shape[wrap_dim(d, x.ndim)] for d in dims]
    shifts = [n // 2 if sign > 0 else (n + 1) // 2 for n in sizes]
    return S.roll(x, shifts, list(dims))


@register_decomposition(fft_fftshift)
def _fftshift(self, dim=None):
    return _shift(self, dim, 1)


@register_decomposition(fft_ifftshift)
def _ifftshift(self, dim=None):
    return _shift(self, dim, -1)


def normalization_scale(normalization, signal_numel):
    """The factor ``normalization`` applies to a transform of ``signal_numel`` points."""
    if normalization == NORM_BY_ROOT_N:
        return 1.0 / math.sqrt(signal_numel)
    if normalization == NORM_BY_N:
        return 1.0 / signal_numel
    return 1.0

