def call(args):
    (primals_1,) = args
    a_primals_1 = _input(primals_1, (4194304,), (4,), (1,))
    a_buf0 = np.empty((4194304,), np.float32)
    _run_kernel(lib, 'kernel1', 4194304, 1, (a_primals_1, a_buf0,))
    return [_tensor(a_buf0, 'float32')]

"""
#include <math.h>
#include <stdint.h>
#include <stdbool.h>

typedef union { float f; uint32_t u; } strata_float_word;
static inline uint32_t strata_bits_of(float f) { strata_float_word w; w.f = f; return w.u; }
static inline float strata_float_of(uint32_t u) { strata_float_word w; w.u = u; return w.f; }
/* float16 bits -> float, exact; inf and NaN keep their sign and payload */
static inline float strata_f16_to_float(uint16_t h) {
    const uint32_t sign = (uint32_t)(h & 0x8000u) << 16, rest = h & 0x7FFFu;
    const uint32_t normal = (rest << 13) + (112u << 23);      /* exponent bias 15 -> 127 */
    const uint32_t special = (rest << 13) | 0x7F800000u;
    const uint32_t small = strata_bits_of((float)rest * 0x1p-24f);   /* 0 and subnormals */
    return strata_float_of(sign | (rest >= 0x7C00u ? special : rest >= 0x0400u ? normal : small));
}
/* float -> float16 bits, round to nearest even (Maratyszcza's FP16: the addition rounds the
   mantissa to float16's width, a subnormal's too, in the FPU's rounding mode; a value beyond
   float16 becomes inf by the first product); a NaN keeps its sign and top payload bits and
   stays a NaN, as NumPy's npy_floatbits_to_halfbits */
static inline uint16_t strata_float_to_f16(float f) {
    const uint32_t w = strata_bits_of(f), twice = w + w, sign = (w >> 16) & 0x8000u;
    const uint32_t payload = (w & 0x007FFFFFu) >> 13;
    const uint32_t nan = 0x7C00u + payload + (payload == 0);
    uint32_t bias = twice & 0xFF000000u;
    bias = bias < 0x71000000u ? 0x71000000u : bias;
    const float base = strata_float_of((bias >> 1) + 0x07800000u) +
                       (fabsf(f) * 0x1p+112f) * 0x1p-110f;
    const uint32_t bits = strata_bits_of(base);
    const uint32_t finite = ((bits >> 13) & 0x7C00u) + (bits & 0x0FFFu);
    return (uint16_t)(sign | (twice > 0xFF000000u ? nan : finite));
}
static inline float strata_bf16_to_float(uint16_t b) { return strata_float_of((uint32_t)b << 16); }
/* float -> bfloat16 bits, round to nearest even on the bits; NaN -> 0x7FC0 with its sign */
static inline uint16_t strata_float_to_bf16(float f) {
    const uint32_t w = strata_bits_of(f);
    const uint32_t rounded = (w + 0x7FFFu + ((w >> 16) & 1u)) >> 16;
    return (uint16_t)(f != f ? ((w >> 16) & 0x8000u) | 0x7FC0u : rounded);
}

#pragma omp declare simd notinbranch
double exp(double) __attribute__((const));
#pragma omp declare simd notinbranch
float logf(float) __attribute__((const));
#pragma omp declare simd notinbranch
double log(double) __attribute__((const));
#pragma omp declare simd notinbranch
float tanhf(float) __attribute__((const));
#pragma omp declare simd notinbranch
double tanh(double) __attribute__((const));
#pragma omp declare simd notinbranch
double erf(double) __attribute__((const));
#pragma omp declare simd notinbranch
float log1pf(float) __attribute__((const));
#pragma omp declare simd notinbranch
double log1p(double) __attribute__((const));
#pragma omp declare simd notinbranch
float expm1f(float) __attribute__((const));
#pragma omp declare simd notinbranch
double expm1(double) __attribute__((const));
#pragma omp declare simd notinbranch
float sinf(float) __attribute__((const));
#pragma omp declare simd notinbranch
double sin(double) __attribute__((const));
#pragma omp declare simd notinbranch
float cosf(float) __attribute__((const));
#pragma omp declare simd notinbranch
double cos(double) __attribute__((const));

static inline float strata_erff(float x) {
    const float a = fabsf(x), u = a * a;
    float p = -1.2918689229479696e-08f;
    p = fmaf(p, u, 4.630949661077466e-06f);
    p = fmaf(p, u, 0.0003776882076635957f);
    p = fmaf(p, u, 0.003845648840069771f);
    p = fmaf(p, u, 0.05427737534046173f);
    p = fmaf(p, u, 0.1852433830499649f);
    p = fmaf(p, u, 1.128379225730896f);
    float q = 6.260756345000118e-05f;
    q = fmaf(q, u, 0.0013042271602898836f);
    q = fmaf(q, u, 0.015447145327925682f);
    q = fmaf(q, u, 0.11393533647060394f);
    q = fmaf(q, u, 0.49750107526779175f);
    q = fmaf(q, u, 1.0f);
    return copysignf(a >= 3.8325069f ? 1.0f : a * (p / q), x);
}

static inline float strata_expf(float x) {
    const float xc = x < -104.0f ? 0.0f : (x > 88.8f ? 88.8f : x);   /* NaN passes */
    union { float f; uint32_t u; } big = {.f = fmaf(xc, 1.44269504088896341f, 12582912.0f)};
    const float n = big.f - 12582912.0f;
    const float r = fmaf(n, 2.12194440e-4f, fmaf(n, -0.693359375f, xc));
    float p = 0.000198756915f;
    p = fmaf(p, r, 0.0013981999507f);
    p = fmaf(p, r, 0.0083334519073f);
    p = fmaf(p, r, 0.041665795894f);
    p = fmaf(p, r, 0.16666665459f);
    p = fmaf(p, r, 0.50000001201f);
    const float y = fmaf(p, r * r, r) + 1.0f;
    const int32_t ni = (int32_t)(big.u - 0x4b400000u), n1 = ni >> 1;
    union { float f; int32_t i; } s1 = {.i = (n1 + 127) << 23},
        s2 = {.i = (ni - n1 + 127) << 23};
    return x < -104.0f ? 0.0f : y * s1.f * s2.f;
}

#define MAX_PROP(a, b) (((a) != (a) || (a) > (b)) ? (a) : (b))
#define MIN_PROP(a, b) (((a) != (a) || (a) < (b)) ? (a) : (b))

typedef unsigned __int128 strata_u128;
#define STRATA_PCG_MULT (((strata_u128)2549297995355413924ULL << 64) | 4865540595714422341ULL)
#define STRATA_PCG_LANES 8
static inline strata_u128 strata_pcg_words(const int64_t* w) {
    return ((strata_u128)(uint64_t)w[0] << 64) | (uint64_t)w[1];
}
/* delta steps of state = state * MULT + inc are state * mult + plus */
static inline void strata_pcg_steps(strata_u128 inc, uint64_t delta, strata_u128* mult_out,
                                    strata_u128* plus_out) {
    strata_u128 acc_mult = 1, acc_plus = 0, mult = STRATA_PCG_MULT, plus = inc;
    for (; delta; delta >>= 1) {
        if (delta & 1) { acc_mult *= mult; acc_plus = acc_plus * mult + plus; }
        plus = (mult + 1) * plus;
        mult *= mult;
    }
    *mult_out = acc_mult;
    *plus_out = acc_plus;
}
static inline strata_u128 strata_pcg_jump(strata_u128 state, strata_u128 inc, uint64_t delta) {
    strata_u128 mult, plus;
    strata_pcg_steps(inc, delta, &mult, &plus);
    return state * mult + plus;
}
/* the 53 bits of the XSL-RR output of the state (hi, lo) that Generator.random scales by 2^-53 */
static inline uint64_t strata_pcg_bits53_halves(uint64_t hi, uint64_t lo) {
    const uint64_t x = hi ^ lo, rot = hi >> 58;
    return ((x >> rot) | (x << ((64 - rot) & 63))) >> 11;
}
static inline uint64_t strata_pcg_bits53(strata_u128 state) {
    return strata_pcg_bits53_halves((uint64_t)(state >> 64), (uint64_t)state);
}
/* (hi, lo) = (hi, lo) * (mh, ml) + (ph, pl) mod 2^128 in 64-bit words (Note [SIMD lanes]) */
static inline void strata_pcg_muladd(uint64_t* hi, uint64_t* lo, uint64_t mh, uint64_t ml,
                                     uint64_t ph, uint64_t pl) {
    const uint64_t a0 = *lo & 0xffffffffu, a1 = *lo >> 32, b0 = ml & 0xffffffffu, b1 = ml >> 32;
    const uint64_t p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0;
    const uint64_t mid = (p00 >> 32) + (p01 & 0xffffffffu) + (p10 & 0xffffffffu);
    const uint64_t low = (mid << 32) | (p00 & 0xffffffffu);
    const uint64_t high = a1 * b1 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);
    const uint64_t sum = low + pl;
    *hi = high + *lo * mh + *hi * ml + ph + (sum < low);
    *lo = sum;
}
/* lane l's jump from place p to p + l, and every lane's step of STRATA_PCG_LANES places */
typedef struct {
    uint64_t mh[STRATA_PCG_LANES], ml[STRATA_PCG_LANES], ph[STRATA_PCG_LANES],
        pl[STRATA_PCG_LANES], step_mh, step_ml, step_ph, step_pl;
} strata_pcg_lanes;
static inline void strata_pcg_lanes_init(strata_u128 inc, strata_pcg_lanes* k) {
    strata_u128 mult, plus;
    for (int l = 0; l < STRATA_PCG_LANES; l++) {
        strata_pcg_steps(inc, l, &mult, &plus);
        k->mh[l] = (uint64_t)(mult >> 64); k->ml[l] = (uint64_t)mult;
        k->ph[l] = (uint64_t)(plus >> 64); k->pl[l] = (uint64_t)plus;
    }
    strata_pcg_steps(inc, STRATA_PCG_LANES, &mult, &plus);
    k->step_mh = (uint64_t)(mult >> 64); k->step_ml = (uint64_t)mult;
    k->step_ph = (uint64_t)(plus >> 64); k->step_pl = (uint64_t)plus;
}

static inline int64_t strata_ipow(int64_t base, int64_t exponent) {
    if (exponent < 0) return base == 1 ? 1 : base == -1 ? ((exponent & 1) ? -1 : 1) : 0;
    uint64_t result = 1, b = (uint64_t)base;
    for (uint64_t e = (uint64_t)exponent; e; e >>= 1, b *= b) if (e & 1) result *= b;
    return (int64_t)result;
}
void kernel1(const float* restrict primals_1, float* restrict buf0, int64_t x_lo, int64_t x_hi) {
    #pragma omp simd
    for (int64_t x = x_lo; x < x_hi; x++) {
        const int64_t i0 = x;
        const float t4 = primals_1[i0];
        const float t5 = 1.5f;
        const float t6 = t4 * t5;
        const float t7 = 0.25f;
        const float t8 = t6 + t7;
        const float t9 = -t8;
        const float t10 = strata_expf(t9);
        const float t11 = 1 / (1 + t10);
        const float t12 = primals_1[i0];
        const float t13 = t11 * t12;
        const float t14 = 0.5f;
        const float t15 = t13 - t14;
        const float t16 = fabsf(t15);
        const float t17 = 1.0f;
        const float t18 = t16 + t17;
        const float t19 = logf(t18);
        const float t20 = 0.5f;
        const float t21 = t19 * t20;
        const float t22 = tanhf(t21);
        const float t23 = primals_1[i0];
        const float t24 = t22 + t23;
        const float t25 = t24 < 0 ? 0 : t24;
        const float t26 = 0.1f;
        const float t27 = t25 - t26;
        buf0[x] = t27;
    }
}
"""
