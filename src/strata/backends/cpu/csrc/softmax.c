/* Softmax and log-softmax over the last dim of float32 rows, one row at a time.
 *
 * ATen's vectorised kernel (aten/src/ATen/native/cpu/SoftMaxKernel.cpp) makes three passes over
 * each row while the row sits in L1: the max, exp(x - max) and its sum, then the scaling. NumPy
 * can only run each pass over a whole block of rows, one Python call per pass (see
 * backends/cpu/native.py); this file is the fused per-row form. Each loop is written so the
 * compiler vectorises it (-O3 -march=native -fopenmp-simd); nothing here allocates or locks, and
 * the caller (parallel_for) gives each thread its own range of rows.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#define EXP_LO -87.33654f        /* below it exp(x) is subnormal */
#define EXP_ZERO -103.972076f    /* below it exp(x) rounds to 0 */

/* exp(x) for x <= 0 (an argument after the row max is subtracted), or NaN.
 * Cephes' expf: x = n ln2 + r with |r| <= ln2/2, exp(r) by a degree-6 polynomial, 2^n built in
 * the exponent bits. Below EXP_LO the result would be subnormal: it is 0 here, and the rare row
 * with such terms gets them from libm's expf afterwards (subnormal_fixup), so results match
 * ATen's without slowing the common row. NaN stays NaN; -inf gives 0. */
static inline float exp_nonpositive(float x) {
    const float lo = EXP_LO;
    float xc = x < lo ? lo : x;
    float n = __builtin_rintf(xc * 1.44269504088896341f);
    float r = __builtin_fmaf(n, -0.693359375f, xc);          /* ln2 split in two for accuracy */
    r = __builtin_fmaf(n, 2.12194440e-4f, r);
    float p = 1.9875691500e-4f;
    p = __builtin_fmaf(p, r, 1.3981999507e-3f);
    p = __builtin_fmaf(p, r, 8.3334519073e-3f);
    p = __builtin_fmaf(p, r, 4.1665795894e-2f);
    p = __builtin_fmaf(p, r, 1.6666665459e-1f);
    p = __builtin_fmaf(p, r, 5.0000001201e-1f);
    p = __builtin_fmaf(p, r * r, r) + 1.0f;
    int32_t bits = ((int32_t)n + 127) << 23;
    float scale;
    memcpy(&scale, &bits, sizeof scale);
    float y = x < lo ? 0.0f : p * scale;
    return x != x ? x : y;
}

/* The row max, NaN if any element is NaN (so the whole row becomes NaN, as in ATen). */
static inline float row_max(const float *x, int64_t n) {
    float m = -INFINITY;
    int nan = 0;
#pragma omp simd reduction(max : m) reduction(| : nan)
    for (int64_t j = 0; j < n; j++) {
        m = x[j] > m ? x[j] : m;
        nan |= x[j] != x[j];
    }
    return nan ? NAN : m;
}

/* The subnormal terms of a row (too small to change its sum), from libm. */
static void subnormal_fixup(const float *xr, float *o, int64_t n, float m) {
    for (int64_t j = 0; j < n; j++) {
        float d = xr[j] - m;
        if (d < EXP_LO)
            o[j] = expf(d);
    }
}

/* out[i, :] = softmax(x[i, :]); rows are x_stride / out_stride elements apart. */
void softmax_rows(const float *x, float *out, int64_t rows, int64_t n, int64_t x_stride,
                  int64_t out_stride) {
    for (int64_t i = 0; i < rows; i++) {
        const float *xr = x + i * x_stride;
        float *o = out + i * out_stride;
        float m = row_max(xr, n), s = 0.0f;
        int subnormal = 0;
#pragma omp simd reduction(+ : s) reduction(| : subnormal)
        for (int64_t j = 0; j < n; j++) {
            float d = xr[j] - m;
            float e = exp_nonpositive(d);
            o[j] = e;
            s += e;
            subnormal |= (d < EXP_LO) & (d >= EXP_ZERO);
        }
        if (subnormal)
            subnormal_fixup(xr, o, n, m);
        float inv = 1.0f / s;
#pragma omp simd
        for (int64_t j = 0; j < n; j++)
            o[j] *= inv;
    }
}

/* out[i, :] = (x - max) - log(sum(exp(x - max))), in ATen's order: subtracting the max first
 * keeps results near 0 accurate when the max is large. */
void log_softmax_rows(const float *x, float *out, int64_t rows, int64_t n, int64_t x_stride,
                      int64_t out_stride) {
    for (int64_t i = 0; i < rows; i++) {
        const float *xr = x + i * x_stride;
        float *o = out + i * out_stride;
        float m = row_max(xr, n), s = 0.0f;
#pragma omp simd reduction(+ : s)
        for (int64_t j = 0; j < n; j++)
            s += exp_nonpositive(xr[j] - m);
        float log_s = logf(s);
#pragma omp simd
        for (int64_t j = 0; j < n; j++)
            o[j] = (xr[j] - m) - log_s;
    }
}
