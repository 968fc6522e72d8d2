"""The FFT primitives of ops/fft.py (``_fft_c2c``, ``_fft_r2c``, ``_fft_c2r``) on the ``opencl``
device, so every ``torch.fft`` function, ``stft`` and ``istft`` run there, with gradients
through the primitives' derivatives.

A transform over several dims runs one dim after another on a contiguous complex copy; a dim of
``n`` points is a batch of rows (element k of a row at ``base + k * inner``, so no dim is moved):

- ``n`` with prime factors 2, 3, 5, 7 only: the Stockham autosort FFT (Bainville, "OpenCL Fast
  Fourier Transform"), radix-4 passes (one radix-2 pass where the power of two is odd), then
  radix-3, 5 and 7 passes (``radices``), each reading one buffer and writing the other (no bit
  reversal), one work-item per butterfly; twiddles read from a table of the n-th roots of unity
  (Note [FFT tables]).
- any other ``n``: Bluestein's chirp-z, the DFT as a convolution with the chirp
  w_k = exp(sign * i pi k^2 / n) (k^2 taken modulo 2n, so the angle stays small), done by two
  power-of-two FFTs of m >= 2n - 1 points (the chirp's own transform is a third).

Each dim's normalization factor (1, 1/sqrt(n), 1/n) is folded into its last pass. Hand-written
OpenCL C, not loop IR: a pass is a butterfly over two or four elements, which the IR cannot
express.
"""

import math

import numpy as np

from ...core.shape import contiguous_strides
from ...ops import fft as FFT
from .oclprinter import FP64
from .opencl_complex import helpers_for
from .opencl_pointwise import identity, is_device, new_output, pointwise, runtime_of

SOURCE = """/* table[at] (a root of unity), conjugated for sign -1 */
V root(__global const V* table, const long at, const T sign) {
    const V w = table[at];
    return (V)(w.x, sign * w.y);
}
long row_base(const long row, const long n, const long inner) {
    return (row / inner) * n * inner + row % inner;
}
/* one radix-2 Stockham pass over the rows: butterflies of span p (p = 1, 2, 4, ..., n / 2);
   roots[j] = exp(2 pi i j / n) */
__kernel void radix2(__global const V* src, const long src_off, __global V* dst,
                     const long dst_off, __global const V* roots, const long roots_off,
                     const long n, const long inner, const long p, const T sign,
                     const T scale) {
    const long i = get_global_id(0), row = get_global_id(1);
    const long base = row_base(row, n, inner), halfway = n / 2;
    const long k = i & (p - 1);
    const V u0 = src[src_off + base + i * inner];
    const V twiddle = root(roots + roots_off, k * (n / (2 * p)), sign);
    const V u1 = cmul_T(src[src_off + base + (i + halfway) * inner], twiddle);
    const long j = ((i - k) << 1) + k;
    dst[dst_off + base + j * inner] = (u0 + u1) * scale;
    dst[dst_off + base + (j + p) * inner] = (u0 - u1) * scale;
}
/* one radix-4 Stockham pass: two radix-2 stages in one read and one write of the rows, span p
   to 4p (twiddles exp(sign * i * pi * j * k / 2p) for the inputs j = 1, 2, 3) */
__kernel void radix4(__global const V* src, const long src_off, __global V* dst,
                     const long dst_off, __global const V* roots, const long roots_off,
                     const long n, const long inner, const long p, const T sign,
                     const T scale) {
    const long i = get_global_id(0), row = get_global_id(1);
    const long quarter = n / 4, k = i & (p - 1), step = k * (n / (4 * p));
    __global const V* x = src + src_off + row_base(row, n, inner) + i * inner;
    roots += roots_off;
    const V u0 = x[0];
    const V u1 = cmul_T(x[quarter * inner], root(roots, step, sign));
    const V u2 = cmul_T(x[2 * quarter * inner], root(roots, 2 * step, sign));
    const V u3 = cmul_T(x[3 * quarter * inner], root(roots, 3 * step, sign));
    const V v0 = u0 + u2, v1 = u0 - u2, v2 = u1 + u3, d = u1 - u3;
    const V v3 = (V)(-sign * d.y, sign * d.x);           /* (u1 - u3) * sign * i */
    __global V* y = dst + dst_off + row_base(row, n, inner) + (((i - k) << 2) + k) * inner;
    y[0] = (v0 + v2) * scale;
    y[p * inner] = (v1 + v3) * scale;
    y[2 * p * inner] = (v0 - v2) * scale;
    y[3 * p * inner] = (v1 - v3) * scale;
}
/* Bluestein: a[row, k] = x[row, k] * w_k, zero past n; chirp[q] = exp(i pi q / n) */
__kernel void chirp_premultiply(__global const V* src, const long src_off, __global V* a,
                                const long a_off, __global const V* chirp,
                                const long chirp_off, const long n, const long inner,
                                const long m, const T sign) {
    const long k = get_global_id(0), row = get_global_id(1);
    V value = (V)(0, 0);
    if (k < n)
        value = cmul_T(src[src_off + row_base(row, n, inner) + k * inner],
                     root(chirp + chirp_off, (k * k) % (2 * n), sign));
    a[a_off + row * m + k] = value;
}
/* Bluestein's filter: conj(w_k) at k and at m - k, zero between */
__kernel void chirp_filter(__global V* b, const long b_off, __global const V* chirp,
                           const long chirp_off, const long n, const long m, const T sign) {
    const long k = get_global_id(0);
    const long at = k < n ? k : (k > m - n ? m - k : -1);
    b[b_off + k] = at < 0 ? (V)(0, 0) : root(chirp + chirp_off, (at * at) % (2 * n), -sign);
}
__kernel void spectrum_multiply(__global V* a, const long a_off, __global const V* b,
                                const long b_off, const long m) {
    const long k = get_global_id(0), row = get_global_id(1);
    a[a_off + row * m + k] = cmul_T(a[a_off + row * m + k], b[b_off + k]);
}
/* Bluestein: X_k = w_k * (the convolution at k), times the dim's normalization */
__kernel void chirp_postmultiply(__global const V* a, const long a_off, __global V* dst,
                                 const long dst_off, __global const V* chirp,
                                 const long chirp_off, const long n, const long inner,
                                 const long m, const T sign, const T scale) {
    const long k = get_global_id(0), row = get_global_id(1);
    dst[dst_off + row_base(row, n, inner) + k * inner] =
        cmul_T(a[a_off + row * m + k], root(chirp + chirp_off, (k * k) % (2 * n), sign)) * scale;
}
/* a real row of n = 2h points as h complex points z_j = x_2j + i x_2j+1 */
__kernel void pack_real(__global const T* src, const long src_off, __global V* dst,
                        const long dst_off, const long h, const long inner) {
    const long j = get_global_id(0), row = get_global_id(1);
    __global const T* x = src + src_off + row_base(row, 2 * h, inner) + 2 * j * inner;
    dst[dst_off + row_base(row, h, inner) + j * inner] = (V)(x[0], x[inner]);
}
/* X_k, k <= h, of the real row from Z, the h-point transform of its packing: the transforms
   of the even and odd points are (Z_k + conj(Z_{h-k})) / 2 and (Z_k - conj(Z_{h-k})) / 2i;
   roots[j] = exp(2 pi i j / 2h) */
__kernel void split_real(__global const V* z, const long z_off, __global V* dst,
                         const long dst_off, __global const V* roots, const long roots_off,
                         const long h, const long inner, const T scale) {
    const long k = get_global_id(0), row = get_global_id(1);
    __global const V* zrow = z + z_off + row_base(row, h, inner);
    const V a = zrow[(k % h) * inner], b = zrow[((h - k) % h) * inner];
    const V even = (V)(a.x + b.x, a.y - b.y) / 2;
    const V d = (V)(a.x - b.x, a.y + b.y) / 2;
    const V odd = (V)(d.y, -d.x);                     /* d / i */
    dst[dst_off + row_base(row, h + 1, inner) + k * inner] =
        (even + cmul_T(root(roots + roots_off, k, -1), odd)) * scale;
}
/* split_real's inverse: Z_k = E_k + i O_k (k < h) from the Hermitian half X_0..X_h of a real
   row of n = 2h points (given of them stored, the rest 0; the imaginary parts of X_0 and X_h
   are ignored, as pocketfft ignores them) */
__kernel void merge_real(__global const V* src, const long src_off, __global V* z,
                         const long z_off, __global const V* roots, const long roots_off,
                         const long given, const long h, const long inner) {
    const long k = get_global_id(0), row = get_global_id(1);
    __global const V* x = src + src_off + row_base(row, given, inner);
    V a = k < given ? x[k * inner] : (V)(0, 0), b = h - k < given ? x[(h - k) * inner] : (V)(0, 0);
    if (k == 0)
        a.y = b.y = 0;
    const V even = (V)(a.x + b.x, a.y - b.y) / 2;
    const V odd = cmul_T(root(roots + roots_off, k, 1), (V)(a.x - b.x, a.y + b.y) / 2);
    z[z_off + row_base(row, h, inner) + k * inner] = (V)(even.x - odd.y, even.y + odd.x);
}
/* pack_real's inverse, scaled: x_2j = Re z_j, x_2j+1 = Im z_j */
__kernel void unpack_real(__global const V* z, const long z_off, __global T* dst,
                          const long dst_off, const long h, const long inner, const T scale) {
    const long j = get_global_id(0), row = get_global_id(1);
    const V v = z[z_off + row_base(row, h, inner) + j * inner] * scale;
    __global T* y = dst + dst_off + row_base(row, 2 * h, inner) + 2 * j * inner;
    y[0] = v.x;
    y[inner] = v.y;
}
/* a real transform's Hermitian half (h points) -> all n points: X_{n-k} = conj(X_k) */
__kernel void hermitian_extend(__global const V* src, const long src_off, __global V* dst,
                               const long dst_off, const long h, const long n,
                               const long inner) {
    const long k = get_global_id(0), row = get_global_id(1);
    const long at = k <= n / 2 ? k : n - k;
    V value = at < h ? src[src_off + row_base(row, h, inner) + at * inner] : (V)(0, 0);
    if (k > n / 2)
        value.y = -value.y;
    dst[dst_off + row_base(row, n, inner) + k * inner] = value;
}
"""


ODD_RADICES = (3, 5, 7)
# one Stockham pass of a small odd radix R (3, 5 or 7; after the radix-4/2 passes, so the span p
# need not be a power of two): R inputs twiddled by exp(sign * 2 pi i j k / Rp), their R-point
# DFT, written R apart by p. R is a literal, so the compiler unrolls the loops.
RADIX_ODD = """__kernel void radixR(__global const V* src, const long src_off, __global V* dst,
                     const long dst_off, __global const V* roots, const long roots_off,
                     const long n, const long inner, const long p, const T sign,
                     const T scale) {
    const long i = get_global_id(0), row = get_global_id(1);
    const long base = row_base(row, n, inner), k = i % p, step = n / (R * p);
    roots += roots_off;
    V u[R];
    for (int j = 0; j < R; j++)
        u[j] = cmul_T(src[src_off + base + (i + j * (n / R)) * inner],
                      root(roots, j * k * step, sign));
    __global V* y = dst + dst_off + base + ((i - k) * R + k) * inner;
    for (int m = 0; m < R; m++) {
        V sum = u[0];
        for (int j = 1; j < R; j++)
            sum += cmul_T(u[j], root(roots, ((j * m) % R) * (n / R), sign));
        y[m * p * inner] = sum * scale;
    }
}
"""


def _source(ctype):
    """SOURCE for one part type, after the complex helpers it calls (opencl_complex.py)."""
    odd = "".join(RADIX_ODD.replace("R", str(r)) for r in ODD_RADICES)
    body = (SOURCE + odd).replace("cmul_T(", f"cmul_{ctype}(")
    return f"{helpers_for(body)}#define T {ctype}\n#define V {ctype}2\n{body}"


_SOURCES = {"complex64": _source("float"), "complex128": FP64 + _source("double")}
_REAL = {"complex64": np.float32, "complex128": np.float64}


def _launch(kernel, dtype, size, args, tensors):
    rt = runtime_of(tensors[0])
    values = []
    for a in args:
        values += rt.buffer_of(a) if is_device(a) else [a]
    rt.launch(f"aten::_fft:{kernel}", _SOURCES[dtype.name], kernel, size, values, tensors)


def _empty_like(x, shape=None, dtype=None):
    """A contiguous tensor on x's device (x's shape and dtype unless given)."""
    shape = tuple(x._shape) if shape is None else tuple(shape)
    return runtime_of(x).empty(shape, contiguous_strides(shape), dtype or x.dtype)


# Note [FFT tables]: the roots of unity are computed once per (device, dtype, length) on the
# host in float64 (NumPy's exp, correctly rounded to the dtype) and kept on the device, as cuFFT
# keeps a plan per size. Computing them in the kernels (cospi/sinpi per butterfly) made a pass
# on PoCL 8-30 times slower (its trigonometry is software) and less accurate in float32.
_TABLES = {}


def _table(x, kind, n):
    """``roots``: exp(2 pi i j / n), j < n; ``chirp``: exp(i pi q / n), q < 2n (Bluestein)."""
    key = (x.device, x.dtype.name, kind, n)
    table = _TABLES.get(key)
    if table is None:
        turns = np.arange(n) / n if kind == "roots" else np.arange(2 * n) / (2 * n)
        values = np.exp(2j * np.pi * turns).astype(x.dtype.np)
        table = _TABLES[key] = _empty_like(x, values.shape)
        runtime_of(x).upload(table, values)
    return table


def radices(n):
    """The Stockham passes of ``n`` points, in order: radix 4 while it divides what is left of
    the power of two, one radix 2 if needed, then 3, 5 and 7; None if another prime divides n
    (Bluestein's case)."""
    twos = (n & -n).bit_length() - 1
    passes = [4] * (twos // 2) + [2] * (twos % 2)
    rest = n >> twos
    for r in ODD_RADICES:
        while rest % r == 0:
            passes.append(r)
            rest //= r
    return passes if rest == 1 else None


def _stockham(x, scratch, n, inner, batch, sign, scale):
    """The rows of ``x`` transformed by the Stockham passes of ``radices(n)``, ping-ponging
    with ``scratch``; returns the tensor holding the result."""
    real = _REAL[x.dtype.name]
    roots = _table(x, "roots", n)
    src, dst, p = x, scratch, 1
    for radix in radices(n):
        factor = real(scale if radix * p == n else 1.0)
        _launch(f"radix{radix}", x.dtype, (n // radix, batch),
                [src, dst, roots, n, inner, p, real(sign), factor], [src, dst, roots])
        src, dst, p = dst, src, radix * p
    return src


def _bluestein(x, out, n, inner, batch, sign, scale):
    """Rows of ``n`` points (any n) of ``x`` transformed into ``out``: Bluestein's chirp-z."""
    m = 1 << (2 * n - 2).bit_length()          # the power of two >= 2n - 1
    real, dt = _REAL[x.dtype.name], x.dtype
    a, a_scratch = _empty_like(x, (batch, m)), _empty_like(x, (batch, m))
    b, chirp = _empty_like(x, (m,)), _table(x, "chirp", n)
    _launch("chirp_premultiply", dt, (m, batch), [x, a, chirp, n, inner, m, real(sign)],
            [x, a, chirp])
    _launch("chirp_filter", dt, (m,), [b, chirp, n, m, real(sign)], [b, chirp])
    spectrum = _stockham(a, a_scratch, m, 1, batch, -1.0, 1.0)
    free = a_scratch if spectrum is a else a
    b = _stockham(b, _empty_like(b), m, 1, 1, -1.0, 1.0)
    _launch("spectrum_multiply", dt, (m, batch), [spectrum, b, m], [spectrum, b])
    a = _stockham(spectrum, free, m, 1, batch, 1.0, 1.0 / m)
    _launch("chirp_postmultiply", dt, (n, batch),
            [a, out, chirp, n, inner, m, real(sign), real(scale)], [a, out, chirp])
    return out


def _transform_dim(x, d, sign, scale):
    """``x`` (contiguous, complex) transformed along dim ``d``; returns the result (``x`` or a
    new tensor)."""
    shape = tuple(x._shape)
    n = shape[d]
    inner = math.prod(shape[d + 1:])
    batch = math.prod(shape) // n
    if n == 1:              # the identity, and every norm's factor is 1
        return x
    if radices(n) is not None:
        return _stockham(x, _empty_like(x), n, inner, batch, sign, scale)
    return _bluestein(x, _empty_like(x), n, inner, batch, sign, scale)


def _c2c(x, dims, normalization, forward):
    """The complex transform of contiguous ``x`` over ``dims``; each dim applies its own factor
    (1/sqrt(n1 n2) = 1/sqrt(n1) * 1/sqrt(n2), and so on)."""
    sign = -1.0 if forward else 1.0
    for d in dims:
        scale = FFT.normalization_scale(normalization, x._shape[d])
        x = _transform_dim(x, d, sign, scale)
    return x


def _contiguous_copy(self, dtype):
    out = _empty_like(self, dtype=dtype)
    return pointwise("aten::_fft_copy", identity, [(self, dtype)], out)


def fft_c2c(self, dim, normalization, forward):
    spec = FFT.fft_c2c.meta(self, dim, normalization, forward)
    x = _contiguous_copy(self, spec.dtype)
    if not x.numel():
        return x
    return _c2c(x, [d % self.ndim for d in dim], normalization, forward)


def fft_r2c(self, dim, normalization, onesided):
    """The transform of a real input. ``onesided`` keeps the first n // 2 + 1 points of the
    last dim (the others are their conjugates): for an even n, by a transform of n / 2 points
    (``_half_length``), then the other dims; else the input made complex is transformed whole
    and cut."""
    spec = FFT.fft_r2c.meta(self, dim, normalization, onesided)
    dims = [d % self.ndim for d in dim]
    if not math.prod(self._shape):
        return new_output(spec, self)
    if onesided and self._shape[dims[-1]] % 2 == 0:
        half = _half_length(self, dims[-1], spec.dtype, normalization)
        return _c2c(half, dims[:-1], normalization, True)
    x = _contiguous_copy(self, spec.dtype)
    full = _c2c(x, dims, normalization, True)
    if tuple(full._shape) == tuple(spec.shape):
        return full
    last = dim[-1] % self.ndim
    return _contiguous_copy(full.narrow(last, 0, spec.shape[last]), spec.dtype)


def _half_length(self, d, dtype, normalization):
    """The first n / 2 + 1 points of the transform along ``d`` of the real ``self`` (n even):
    its n points packed as n / 2 complex ones, their transform, split into the real row's."""
    real = self if self.is_contiguous() else _contiguous_copy(self, self.dtype)
    shape = list(real._shape)
    n = shape[d]
    h = shape[d] = n // 2
    packed = _empty_like(real, shape, dtype)
    inner = math.prod(shape[d + 1:])
    batch = math.prod(shape) // h
    _launch("pack_real", dtype, (h, batch), [real, packed, h, inner], [real, packed])
    spectrum = _transform_dim(packed, d, -1.0, 1.0)
    shape[d] = h + 1
    out = _empty_like(real, shape, dtype)
    roots = _table(out, "roots", n)
    scale = _REAL[dtype.name](FFT.normalization_scale(normalization, n))
    _launch("split_real", dtype, (h + 1, batch), [spectrum, out, roots, h, inner, scale],
            [spectrum, out, roots])
    return out


def _half_length_inverse(x, out, d, n, normalization):
    """``out`` (real, n even points along ``d``) from the Hermitian halves along ``d`` of
    ``x``: Z from ``merge_real``, its inverse transform of n / 2 points, unpacked. The
    unnormalized inverse of n / 2 points gives half of the n-point one, hence the 2."""
    shape = list(x._shape)
    given, h = shape[d], n // 2
    shape[d] = h
    packed = _empty_like(x, shape)
    inner = math.prod(shape[d + 1:])
    batch = math.prod(shape) // h
    roots = _table(x, "roots", n)
    _launch("merge_real", x.dtype, (h, batch), [x, packed, roots, given, h, inner],
            [x, packed, roots])
    spectrum = _transform_dim(packed, d, 1.0, 1.0)
    scale = _REAL[x.dtype.name](2 * FFT.normalization_scale(normalization, n))
    _launch("unpack_real", x.dtype, (h, batch), [spectrum, out, h, inner, scale],
            [spectrum, out])
    return out


def fft_c2r(self, dim, normalization, last_dim_size):
    """The inverse of ``fft_r2c``: the other dims' inverse transforms, then the last dim's. For
    an even length that is ``merge_real``, a transform of n / 2 points and ``unpack_real``;
    for an odd one, the Hermitian half extended to all n points, inverse-transformed, its real
    part (pocketfft's c2r ignores the imaginary parts of X_0 and X_{n/2} the same way)."""
    spec = FFT.fft_c2r.meta(self, dim, normalization, last_dim_size)
    out = new_output(spec, self)
    if not out.numel():
        return out
    dims = [d % self.ndim for d in dim]
    x = _c2c(_contiguous_copy(self, self.dtype), dims[:-1], normalization, False)
    last, shape = dims[-1], list(x._shape)
    h, n = shape[last], last_dim_size
    if n % 2 == 0:
        return _half_length_inverse(x, out, last, n, normalization)
    shape[last] = n
    full = _empty_like(x, shape)
    inner = math.prod(shape[last + 1:])
    _launch("hermitian_extend", x.dtype, (n, math.prod(shape) // n),
            [x, full, h, n, inner], [x, full])
    full = _transform_dim(full, last, 1.0, FFT.normalization_scale(normalization, n))
    return pointwise("aten::_fft_c2r", identity, [(full, full.dtype)], out)


def kernels() -> dict:
    return {FFT.fft_c2c: fft_c2c, FFT.fft_r2c: fft_r2c, FFT.fft_c2r: fft_c2r}
