"""Eager CPU kernels of 2-d convolution's data movement (issue 9 §5): im2col and col2im.

Convolution is im2col + one GEMM per group (backends/cpu/nn.py); BLAS does the arithmetic. The
NumPy im2col pads the input, takes a strided view of every window and copies it transposed into
the ``(C, kh, kw, N, oh, ow)`` column matrix: a 6-d strided copy that NumPy runs element by
element, about a third of a small CNN's convolution time. ``im2col2d`` writes the same matrix
in one pass, reading the input through its strides (no padded copy, zeros written where a window
overhangs), each column row a contiguous run. ``col2im2d`` is its adjoint for the transposed
convolution (the input gradient): each kernel offset's block of columns added into the output
image, offsets in row-major order as NumPy's ``col2im_nd`` adds them, so both give the same
bits, and padding cropped on the fly. ``col2im2d_channels_last`` sums one sample's columns
stored ``(bh, bw, kh, kw, C)`` (what ``x[n]^T @ w`` makes), each add a run of C channels
instead of a few output columns. The C is printed once per dtype and built by the CPU
backend's one build path (backends/cpu/native.py); the first two cover ``[lo, hi)`` of their
outer loop (column rows, output planes), so the caller's threads can split them; the caller
(backends/cpu/nn.py, Note [Batch-blocked convolution]) mostly runs them per block of samples.
"""

import ctypes

from ...backends.cpu import native
from .ir import C_TYPES

LIBRARY = "eager_conv"
DTYPES = ("float32", "float64")

# the outputs j (of ``count``) whose input column j * step + shift lies in [0, size)
_COLUMN_RANGE = """
static inline void column_range(int64_t shift, int64_t step, int64_t size, int64_t count,
                                int64_t* j0, int64_t* j1) {
    *j0 = shift >= 0 ? 0 : (-shift + step - 1) / step;
    *j1 = size - shift <= 0 ? 0 : (size - shift + step - 1) / step;
    if (*j1 > count) *j1 = count;
    if (*j0 > *j1) *j0 = *j1;
}
"""

_KERNELS = """
void im2col2d_{dtype}(const {ctype}* restrict in, {ctype}* restrict cols, int64_t n,
                      int64_t c, int64_t h, int64_t w, int64_t stride_n, int64_t stride_c,
                      int64_t stride_h, int64_t stride_w, int64_t oh, int64_t ow, int64_t kh,
                      int64_t kw, int64_t sh, int64_t sw, int64_t ph, int64_t pw, int64_t dh,
                      int64_t dw, int64_t lo, int64_t hi) {{
    for (int64_t q = lo; q < hi; q++) {{   /* one row (channel, ki, kj) of the column matrix */
        const int64_t ci = q / (kh * kw), ki = (q / kw) % kh, kj = q % kw;
        const int64_t shift = kj * dw - pw;
        int64_t j0, j1;
        column_range(shift, sw, w, ow, &j0, &j1);
        for (int64_t b = 0; b < n; b++) {{
            const {ctype}* x = in + b * stride_n + ci * stride_c;
            {ctype}* dst = cols + (q * n + b) * oh * ow;
            for (int64_t oi = 0; oi < oh; oi++) {{
                {ctype}* d = dst + oi * ow;
                const int64_t r = oi * sh - ph + ki * dh;
                if (r < 0 || r >= h) {{
                    for (int64_t oj = 0; oj < ow; oj++) d[oj] = 0;
                    continue;
                }}
                const {ctype}* src = x + r * stride_h;
                for (int64_t oj = 0; oj < j0; oj++) d[oj] = 0;
                if (sw == 1 && stride_w == 1) {{   /* a contiguous run: no gather */
                    memcpy(d + j0, src + j0 + shift, (j1 - j0) * sizeof({ctype}));
                }} else {{
                    #pragma omp simd
                    for (int64_t oj = j0; oj < j1; oj++) d[oj] = src[(oj * sw + shift) * stride_w];
                }}
                for (int64_t oj = j1; oj < ow; oj++) d[oj] = 0;
            }}
        }}
    }}
}}

void col2im2d_{dtype}(const {ctype}* restrict cols, {ctype}* restrict out, int64_t n,
                      int64_t c, int64_t h, int64_t w, int64_t bh, int64_t bw, int64_t kh,
                      int64_t kw, int64_t sh, int64_t sw, int64_t ph, int64_t pw, int64_t dh,
                      int64_t dw, int64_t lo, int64_t hi) {{
    for (int64_t p = lo; p < hi; p++) {{   /* one output plane (sample, channel) */
        const int64_t b = p / c, ci = p % c;
        {ctype}* o = out + p * h * w;
        for (int64_t k = 0; k < h * w; k++) o[k] = 0;
        for (int64_t ki = 0; ki < kh; ki++) {{
            for (int64_t kj = 0; kj < kw; kj++) {{
                const {ctype}* src = cols + (((ci * kh + ki) * kw + kj) * n + b) * bh * bw;
                const int64_t shift = kj * dw - pw;
                int64_t j0, j1;
                column_range(shift, sw, w, bw, &j0, &j1);
                for (int64_t bi = 0; bi < bh; bi++) {{
                    const int64_t r = bi * sh - ph + ki * dh;
                    if (r < 0 || r >= h) continue;
                    {ctype}* row = o + r * w;
                    const {ctype}* s = src + bi * bw;
                    if (sw == 1) {{   /* contiguous: a vector add */
                        {ctype}* d = row + shift;
                        #pragma omp simd
                        for (int64_t bj = j0; bj < j1; bj++) d[bj] += s[bj];
                    }} else {{
                        #pragma omp simd
                        for (int64_t bj = j0; bj < j1; bj++) row[bj * sw + shift] += s[bj];
                    }}
                }}
            }}
        }}
    }}
}}

/* One sample's columns in channels-last order, (bh, bw, kh, kw, c), summed into its (c, h, w)
   image through the (h, w, c) scratch ``acc``: every add is a run of c channels. */
void col2im2d_channels_last_{dtype}(const {ctype}* restrict cols, {ctype}* restrict out,
                                    {ctype}* restrict acc, int64_t c, int64_t h, int64_t w,
                                    int64_t bh, int64_t bw, int64_t kh, int64_t kw, int64_t sh,
                                    int64_t sw, int64_t ph, int64_t pw, int64_t dh,
                                    int64_t dw) {{
    for (int64_t k = 0; k < h * w * c; k++) acc[k] = 0;
    for (int64_t bi = 0; bi < bh; bi++) {{
        for (int64_t ki = 0; ki < kh; ki++) {{
            const int64_t r = bi * sh - ph + ki * dh;
            if (r < 0 || r >= h) continue;
            for (int64_t bj = 0; bj < bw; bj++) {{
                const {ctype}* s = cols + ((bi * bw + bj) * kh + ki) * kw * c;
                for (int64_t kj = 0; kj < kw; kj++) {{
                    const int64_t col = bj * sw - pw + kj * dw;
                    if (col < 0 || col >= w) continue;
                    {ctype}* a = acc + (r * w + col) * c;
                    const {ctype}* v = s + kj * c;
                    #pragma omp simd
                    for (int64_t ci = 0; ci < c; ci++) a[ci] += v[ci];
                }}
            }}
        }}
    }}
    for (int64_t ci = 0; ci < c; ci++)
        for (int64_t k = 0; k < h * w; k++) out[ci * h * w + k] = acc[k * c + ci];
}}
"""


def source() -> str:
    body = "".join(_KERNELS.format(dtype=d, ctype=C_TYPES[d]) for d in DTYPES)
    return "#include <stdint.h>\n#include <string.h>\n" + _COLUMN_RANGE + body


def _signatures():
    i64, ptr = ctypes.c_int64, ctypes.c_void_p
    out = {}
    for d in DTYPES:
        out[f"im2col2d_{d}"] = (ptr,) * 2 + (i64,) * 20
        out[f"col2im2d_{d}"] = (ptr,) * 2 + (i64,) * 16
        out[f"col2im2d_channels_last_{d}"] = (ptr,) * 3 + (i64,) * 13
    return out


native.register_generated(LIBRARY, source, _signatures())
