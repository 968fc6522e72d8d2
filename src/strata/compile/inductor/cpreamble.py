"""The C text every generated file starts with (``PREAMBLE``): headers, the SIMD declarations
of libm, strata's own float32 erf, NaN-propagating max/min, NumPy's PCG64 and ATen's integer
power. Split from cprinter.py, which prints the kernels after it.

Note [Vector math]: glibc declares the SIMD variants of libm (libmvec) only under -ffast-math,
so the preamble declares them itself (``#pragma omp declare simd``); gcc then calls e.g.
``_ZGVeN16v_expf`` from vectorised loops. They are declared ``const`` (true with
-fno-math-errno): sin and cos are not gcc builtins here (Note [No sincos] in native.py), and a
loop calling a function gcc cannot see is pure keeps its branches (a ternary's, a clamp's) and
is not vectorised at all. glibc documents libmvec's error as at most 4 ulp;
tests/compile/test_inductor_vector_math.py measures it against float64 (docs/inductor.md).
float32 erf and exp are the exceptions, inlined into the vector loop: libmvec's ``erff`` cost as
much as all of torch's gelu (``strata_erff``, Note [float32 erf]), and its ``expf`` calls scalar
``expf`` for every lane out of its fast range, -inf included (``strata_expf``, Note [float32 exp]).
"""

from .half import C_HELPERS

VECTOR_MATH = ("exp", "log", "tanh", "erf", "log1p", "expm1", "sin", "cos")
# libm function -> the preamble's float32 version
OWN_FLOAT32_MATH = {"erf": "strata_erff", "exp": "strata_expf"}

# Note [float32 erf]
# erf(x) = x * P(x^2) / Q(x^2) for |x| < 3.8325069 (above it erf rounds to 1 in float32): one
# division and two Horner chains, no exp, no table, no branch, so gcc inlines and vectorises it
# (ATen's Vectorized<float>::erf is Abramowitz-Stegun 7.1.26: a division, a polynomial and one
# exp). The coefficients are a relative least-squares rational fit (P degree 6,
# Q degree 5 in x^2, Q(0) = 1) of erf(x)/x on [0, 3.92] in float64 (Sanathanan-Koerner
# iterations; fit error 2.2e-9), rounded to float32. Measured over every float32 input against
# float64 erf: at most 6.5 ulp (absolute error <= 3.9e-7; ATen's gelu erf: 1.1e-6), the error
# growing towards |x| ~ 3.6 where P and Q reach the top of their binades; NaN, +-inf, +-0 and
# subnormals as libm. tests/compile/test_inductor_vector_math.py asserts the bound.
ERF_P = (1.128379225730896, 0.1852433830499649, 0.05427737534046173, 0.003845648840069771,
         0.0003776882076635957, 4.630949661077466e-06, -1.2918689229479696e-08)
ERF_Q = (1.0, 0.49750107526779175, 0.11393533647060394, 0.015447145327925682,
         0.0013042271602898836, 6.260756345000118e-05)
ERF_ONE_FROM = 3.8325069    # erfinv(1 - 2^-25): from here erf(x) rounds to 1.0f


def _horner(name, coefficients, variable):
    """C lines computing the polynomial ``sum(c[i] * variable^i)`` into ``name``: each step one
    explicit ``fmaf`` (one rounding, an instruction under -march=native), as the measured error
    assumes; kernels are built without implicit contraction (Note [No contraction])."""
    top, *rest = reversed(coefficients)
    return [f"    float {name} = {top!r}f;",
            *(f"    {name} = fmaf({name}, {variable}, {c!r}f);" for c in rest)]


STRATA_ERFF = "\n".join([
    "static inline float strata_erff(float x) {",
    "    const float a = fabsf(x), u = a * a;",
    *_horner("p", ERF_P, "u"), *_horner("q", ERF_Q, "u"),
    # NaN fails the comparison, and a * (p / q) is NaN
    f"    return copysignf(a >= {ERF_ONE_FROM!r}f ? 1.0f : a * (p / q), x);",
    "}",
])

# Note [float32 exp]
# libmvec's ``_ZGVeN16v_expf`` leaves its fast path for a vector with any lane out of
# |x| <= 87.3 and calls scalar ``expf`` lane by lane: a causal attention mask makes half of a
# softmax's inputs -inf, and its exp cost 2.2 ns an element instead of 0.3 (one thread). So
# float32 exp is strata's own, branch-free and call-free: x = n ln2 + r with n = rint(x / ln2)
# (the 1.5 * 2^23 rounding trick, n read from the float's low bits: no float -> int
# conversion), r by Cody-Waite in two ``fmaf`` steps, e^r = 1 + r + r^2 P(r) with Cephes'
# ``expf`` polynomial (P of degree 5, explicit ``fmaf`` Horner steps), times 2^n as two normal
# powers of two so only the last product rounds (a subnormal result is rounded once).
# x < -104 (where exp rounds to 0, -inf included) gives 0 without forming a subnormal product
# (an underflow costs a microcode assist); x > 88.8 is clamped there, where the product
# overflows to inf; NaN passes through. Measured against float64 over every 7th float32 bit
# pattern: at most 1.01 ulp (libmvec: 2.6 on [-87, 88]), 0.3 ns an element on one thread
# whatever the inputs; tests/compile/test_inductor_vector_math.py asserts the bound.
EXP_P = (5.0000001201e-1, 1.6666665459e-1, 4.1665795894e-2, 8.3334519073e-3, 1.3981999507e-3,
         1.9875691500e-4)
STRATA_EXPF = "\n".join([
    "static inline float strata_expf(float x) {",
    "    const float xc = x < -104.0f ? 0.0f : (x > 88.8f ? 88.8f : x);   /* NaN passes */",
    "    union { float f; uint32_t u; } big = {.f = fmaf(xc, 1.44269504088896341f, 12582912.0f)};",
    "    const float n = big.f - 12582912.0f;",
    "    const float r = fmaf(n, 2.12194440e-4f, fmaf(n, -0.693359375f, xc));",
    *_horner("p", EXP_P, "r"),
    "    const float y = fmaf(p, r * r, r) + 1.0f;",
    "    const int32_t ni = (int32_t)(big.u - 0x4b400000u), n1 = ni >> 1;",
    "    union { float f; int32_t i; } s1 = {.i = (n1 + 127) << 23},",
    "        s2 = {.i = (ni - n1 + 127) << 23};",
    "    return x < -104.0f ? 0.0f : y * s1.f * s2.f;",
    "}",
])

# Note [Random draws] (ir.py): NumPy's PCG64 (XSL-RR 128/64) and its ``Generator.random``
# doubles, and the jump ahead by ``delta`` steps (its ``advance``: pcg_advance_lcg_128).
# Note [SIMD lanes]: a 128-bit multiply does not vectorise, so the kernels draw in
# STRATA_PCG_LANES lanes whose states are 64-bit halves: lane l holds place p + l and steps
# 8 places at a time, ``(hi, lo) * (mh, ml) + (ph, pl)`` written with 32x32 -> 64 bit products
# for the high word of lo * ml, which gcc turns into vector multiplies (AVX-512: 8 lanes a
# vector). The same arithmetic mod 2^128 as one scalar chain, so the same draws bit for bit.
# Each lane's step waits for its previous one (a chain of multiplies, ~25 cycles), so one
# vector of 8 lanes left the multipliers idle: 16 lanes (two independent vectors) took a
# dropout over 1024 rows of 512 from 2.1 to 1.45 ns an element on one thread, 32 no further.
PCG64 = """\
typedef unsigned __int128 strata_u128;
#define STRATA_PCG_MULT (((strata_u128)2549297995355413924ULL << 64) | 4865540595714422341ULL)
#define STRATA_PCG_LANES 16
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
}"""

# Integer powers as ATen's powi (and eager's): by squaring in unsigned arithmetic, which wraps
# as NumPy's, then the result's type; a negative exponent leaves 1 for 1, +-1 for -1, else 0.
STRATA_IPOW = """static inline int64_t strata_ipow(int64_t base, int64_t exponent) {
    if (exponent < 0) return base == 1 ? 1 : base == -1 ? ((exponent & 1) ? -1 : 1) : 0;
    uint64_t result = 1, b = (uint64_t)base;
    for (uint64_t e = (uint64_t)exponent; e; e >>= 1, b *= b) if (e & 1) result *= b;
    return (int64_t)result;
}"""

PREAMBLE = "\n".join([
    "#include <math.h>", "#include <stdint.h>", "#include <stdbool.h>", "", C_HELPERS,
    *(f"#pragma omp declare simd notinbranch\n{t} {fn}{s}({t}) __attribute__((const));"
      for fn in VECTOR_MATH for t, s in (("float", "f"), ("double", ""))
      if not (t == "float" and fn in OWN_FLOAT32_MATH)),
    "", STRATA_ERFF, "", STRATA_EXPF, "",
    # NaN-propagating max/min (torch.maximum, amax): a NaN operand wins
    "#define MAX_PROP(a, b) (((a) != (a) || (a) > (b)) ? (a) : (b))",
    "#define MIN_PROP(a, b) (((a) != (a) || (a) < (b)) ? (a) : (b))",
    "", PCG64, "", STRATA_IPOW, "",
])
