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

# Note [Short runs]: a 3x3 convolution's rows are a few elements (11 floats); memcpy's call and
# its size dispatch cost more than the copy. Two overlapping fixed-size copies (each one
# unaligned vector load and store) cover any length from 4 bytes up, as glibc's own small
# memcpy does; longer runs are whole 32-byte chunks plus an overlapping last one.
_COPY_RUN = """
static inline void copy_run(void* restrict dst, const void* restrict src, size_t n) {
    char* d = dst;
    const char* s = src;
    if (n >= 32) {
        for (size_t k = 0; k + 32 <= n; k += 32) memcpy(d + k, s + k, 32);
        memcpy(d + n - 32, s + n - 32, 32);
    } else if (n >= 16) {
        memcpy(d, s, 16);
        memcpy(d + n - 16, s + n - 16, 16);
    } else if (n >= 8) {
        memcpy(d, s, 8);
        memcpy(d + n - 8, s + n - 8, 8);
    } else if (n >= 4) {
        memcpy(d, s, 4);
        memcpy(d + n - 4, s + n - 4, 4);
    }
}
"""

# Note [Convolution drivers]: a whole chunk of a convolution's blocks in one C call, the GEMMs
# through BLAS's own CBLAS function (its address from backends/cpu/blas.py, ``ilp64`` its
# integer width): Python's per-block views, ``np.dot`` and ctypes calls held the GIL for about
# 10 us a sample, which the pool's other thread waited behind. ``p`` holds the geometry in the
# order nn.py writes it, ending with the pool chunk's length and each scratch's elements per
# chunk: ``buffer``/``product`` hold every chunk's scratch (nn.py ``_run_driver``), and a chunk
# takes its own, so the chunks run on the native pool, which calls one C function per chunk,
# instead of the Python pool, whose threads allocated each chunk's scratch under the GIL and
# woke in 20-50 us (conv2d over 32x32x13x13, 64 3x3 filters: 925 -> ~820 us on two threads).
_DRIVERS = """
typedef void (*gemm64_{dtype}_fn)(int, int, int, int64_t, int64_t, int64_t, {ctype},
                                  const {ctype}*, int64_t, const {ctype}*, int64_t, {ctype},
                                  {ctype}*, int64_t);
typedef void (*gemm32_{dtype}_fn)(int, int, int, int, int, int, {ctype}, const {ctype}*, int,
                                  const {ctype}*, int, {ctype}, {ctype}*, int);

/* row-major c = op(a) @ op(b) + beta * c (cblas.h's enums: 101 row-major, 111/112 plain or
   transposed) */
static void gemm_{dtype}(const void* fn, int64_t ilp64, int ta, int tb, int64_t m, int64_t n,
                         int64_t k, const {ctype}* a, int64_t lda, const {ctype}* b,
                         int64_t ldb, {ctype} beta, {ctype}* c, int64_t ldc) {{
    if (ilp64)
        ((gemm64_{dtype}_fn)fn)(101, ta ? 112 : 111, tb ? 112 : 111, m, n, k, 1, a, lda, b, ldb,
                                beta, c, ldc);
    else
        ((gemm32_{dtype}_fn)fn)(101, ta ? 112 : 111, tb ? 112 : 111, (int)m, (int)n, (int)k, 1,
                                a, (int)lda, b, (int)ldb, beta, c, (int)ldc);
}}

/* The forward, samples [lo, hi) in blocks of p[20]: each block's im2col, one GEMM per group
   (straight into the sample's (F, oh*ow) output for a one-sample block, else into ``product``
   then copied per sample), the bias added and, if p[21], a ReLU applied while the block is in
   cache. */
void conv2d_{dtype}(const void* gemm, const int64_t* restrict p, const {ctype}* restrict in,
                    const {ctype}* restrict weight, const {ctype}* restrict bias,
                    {ctype}* restrict out, {ctype}* restrict cols, {ctype}* restrict product,
                    int64_t lo, int64_t hi) {{
    const int64_t ilp64 = p[0], c = p[1], sn = p[4], oh = p[8], ow = p[9], kh = p[10],
                  kw = p[11], groups = p[18], f = p[19], block = p[20], relu = p[21];
    const int64_t plane = oh * ow, rows = c * kh * kw, kg = rows / groups, fg = f / groups;
    cols += lo / p[22] * p[23];          /* this chunk's scratch (Note [Convolution drivers]) */
    product += lo / p[22] * p[24];
    for (int64_t first = lo; first < hi; first += block) {{
        const int64_t m = hi - first < block ? hi - first : block, width = m * plane;
        {ctype}* sample = out + first * f * plane;
        im2col_{dtype}(in + first * sn, cols, m, c, p[2], p[3], sn, p[5], p[6], p[7], oh, ow,
                       kh, kw, p[12], p[13], p[14], p[15], p[16], p[17], 0, rows);
        for (int64_t g = 0; g < groups; g++)
            gemm_{dtype}(gemm, ilp64, 0, 0, fg, width, kg, weight + g * fg * kg, kg,
                         cols + g * kg * width, width, 0,
                         (m == 1 ? sample : product) + g * fg * width, width);
        for (int64_t b = 0; b < m; b++) {{
            for (int64_t fi = 0; fi < f; fi++) {{
                {ctype}* o = sample + (b * f + fi) * plane;
                if (m > 1) memcpy(o, product + fi * width + b * plane, plane * sizeof({ctype}));
                if (bias) {{
                    const {ctype} add = bias[fi];
                    #pragma omp simd
                    for (int64_t k = 0; k < plane; k++) o[k] += add;
                }}
                if (relu) {{
                    #pragma omp simd
                    for (int64_t k = 0; k < plane; k++) o[k] = o[k] < 0 ? 0 : o[k];
                }}
            }}
        }}
    }}
}}

/* The transposed convolution of one group (the input gradient), samples [lo, hi): per sample
   the GEMM x[n]^T (L, Cin) @ weights (Cin, kh*kw*C) makes channels-last columns in ``buffer``,
   which col2im adds into the sample's image through the scratch after them. */
void conv_transpose2d_{dtype}(const void* gemm, const int64_t* restrict p,
                              const {ctype}* restrict x, const {ctype}* restrict weights,
                              {ctype}* restrict image, {ctype}* restrict buffer, int64_t lo,
                              int64_t hi) {{
    const int64_t ilp64 = p[0], cin = p[1], plane = p[2], width = p[3], c = p[4], h = p[5],
                  w = p[6];
    buffer += lo / p[17] * p[18];        /* this chunk's scratch */
    for (int64_t n = lo; n < hi; n++) {{
        gemm_{dtype}(gemm, ilp64, 1, 0, plane, width, cin, x + n * cin * plane, plane, weights,
                     width, 0, buffer, width);
        col2im_channels_last_{dtype}(buffer, image + n * c * h * w, buffer + plane * width, c,
                                     h, w, p[7], p[8], p[9], p[10], p[11], p[12], p[13], p[14],
                                     p[15], p[16]);
    }}
}}

/* A kernel larger than its output (the weight gradient, nn.py ``_conv_by_kernel_rows``),
   channel blocks [lo, hi) of p[19] channels: the kernel-row columns of the block, then its
   partial sum (rows, F) = cols @ w^T, by p[23]: 0, one GEMM per channel, accumulated, w read
   in place (the output gradient seen as a kernel is a transposed view, each channel an
   (F, kh*kw) matrix); 1, one GEMM, the block's channels being one matrix in place; 2, one
   GEMM after gathering them into the scratch after the columns. */
void conv2d_kernel_rows_{dtype}(const void* gemm, const int64_t* restrict p,
                                const {ctype}* restrict in, const {ctype}* restrict w,
                                {ctype}* restrict partial, {ctype}* restrict cols, int64_t lo,
                                int64_t hi) {{
    const int64_t ilp64 = p[0], n = p[1], c = p[2], x_batch = p[5], x_channel = p[6],
                  oh = p[9], ow = p[10], kh = p[11], kw = p[12], step = p[19], f = p[20],
                  wf = p[21], wc = p[22];
    const int64_t rows = n * oh * ow, area = kh * kw;
    cols += lo / p[24] * p[25];          /* this chunk's scratch */
    for (int64_t block = lo; block < hi; block++) {{
        const int64_t first = block * step, size = c - first < step ? c - first : step;
        {ctype}* sum = partial + block * rows * f;
        /* the input read as (C, N, H, W): kernel and output, stride and dilation exchanged */
        im2col_{dtype}(in + first * x_channel, cols, size, n, p[3], p[4], x_channel, x_batch,
                       p[7], p[8], kh, kw, oh, ow, p[17], p[18], p[15], p[16], p[13], p[14], 0,
                       rows);
        if (p[23] == 0) {{   /* few rows: per-channel GEMMs run faster than one long one */
            for (int64_t a = 0; a < size; a++)
                gemm_{dtype}(gemm, ilp64, 0, 1, rows, f, area, cols + a * area, size * area,
                             w + (first + a) * wc, wf, a ? 1 : 0, sum, f);
            continue;
        }}
        const {ctype}* slab = w + first * area;
        int64_t ld = wf;
        if (p[23] == 2) {{   /* the block's channels gathered into one (F, size*kh*kw) matrix */
            {ctype}* gathered = cols + rows * step * area;
            for (int64_t fi = 0; fi < f; fi++)
                for (int64_t a = 0; a < size; a++)
                    memcpy(gathered + (fi * size + a) * area, w + fi * wf + (first + a) * wc,
                           area * sizeof({ctype}));
            slab = gathered;
            ld = size * area;
        }}
        gemm_{dtype}(gemm, ilp64, 0, 1, rows, f, size * area, cols, size * area, slab, ld, 0,
                     sum, f);
    }}
}}

/* The weight gradient's partial sums (blocks, rows = N*P, F), one per channel block (above),
   added in block order into block 0 (the bits of NumPy's ``partial.sum(0)``) and written
   transposed into the (N, F, P) image; samples [lo, hi), so the pool's threads share it. */
void sum_partials_{dtype}({ctype}* restrict partial, {ctype}* restrict image, int64_t blocks,
                          int64_t rows, int64_t plane, int64_t f, int64_t lo, int64_t hi) {{
    for (int64_t n = lo; n < hi; n++) {{
        for (int64_t q = 0; q < plane; q++) {{
            {ctype}* sum = partial + (n * plane + q) * f;
            for (int64_t b = 1; b < blocks; b++) {{
                const {ctype}* add = sum + b * rows * f;
                #pragma omp simd
                for (int64_t fi = 0; fi < f; fi++) sum[fi] += add[fi];
            }}
            for (int64_t fi = 0; fi < f; fi++) image[(n * f + fi) * plane + q] = sum[fi];
        }}
    }}
}}
"""


_KERNELS = """
static void im2col_{dtype}(const {ctype}* restrict in, {ctype}* restrict cols, int64_t n,
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
                    copy_run(d + j0, src + j0 + shift, (j1 - j0) * sizeof({ctype}));
                }} else {{
                    #pragma omp simd
                    for (int64_t oj = j0; oj < j1; oj++) d[oj] = src[(oj * sw + shift) * stride_w];
                }}
                for (int64_t oj = j1; oj < ow; oj++) d[oj] = 0;
            }}
        }}
    }}
}}

void im2col2d_{dtype}(const {ctype}* restrict in, {ctype}* restrict cols, int64_t n,
                      int64_t c, int64_t h, int64_t w, int64_t stride_n, int64_t stride_c,
                      int64_t stride_h, int64_t stride_w, int64_t oh, int64_t ow, int64_t kh,
                      int64_t kw, int64_t sh, int64_t sw, int64_t ph, int64_t pw, int64_t dh,
                      int64_t dw, int64_t lo, int64_t hi) {{
    im2col_{dtype}(in, cols, n, c, h, w, stride_n, stride_c, stride_h, stride_w, oh, ow, kh, kw,
                   sh, sw, ph, pw, dh, dw, lo, hi);
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
static void col2im_channels_last_{dtype}(const {ctype}* restrict cols, {ctype}* restrict out,
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

void col2im2d_channels_last_{dtype}(const {ctype}* restrict cols, {ctype}* restrict out,
                                    {ctype}* restrict acc, int64_t c, int64_t h, int64_t w,
                                    int64_t bh, int64_t bw, int64_t kh, int64_t kw, int64_t sh,
                                    int64_t sw, int64_t ph, int64_t pw, int64_t dh,
                                    int64_t dw) {{
    col2im_channels_last_{dtype}(cols, out, acc, c, h, w, bh, bw, kh, kw, sh, sw, ph, pw, dh,
                                 dw);
}}
""" + _DRIVERS


def source() -> str:
    body = "".join(_KERNELS.format(dtype=d, ctype=C_TYPES[d]) for d in DTYPES)
    return "#include <stdint.h>\n#include <string.h>\n" + _COLUMN_RANGE + _COPY_RUN + body


def _signatures():
    i64, ptr = ctypes.c_int64, ctypes.c_void_p
    out = {}
    for d in DTYPES:
        out[f"conv2d_{d}"] = (ptr,) * 8 + (i64,) * 2
        out[f"conv_transpose2d_{d}"] = (ptr,) * 6 + (i64,) * 2
        out[f"conv2d_kernel_rows_{d}"] = (ptr,) * 6 + (i64,) * 2
        out[f"sum_partials_{d}"] = (ptr,) * 2 + (i64,) * 6
        out[f"im2col2d_{d}"] = (ptr,) * 2 + (i64,) * 20
        out[f"col2im2d_{d}"] = (ptr,) * 2 + (i64,) * 16
        out[f"col2im2d_channels_last_{d}"] = (ptr,) * 3 + (i64,) * 13
    return out


native.register_generated(LIBRARY, source, _signatures())
