"""The C text every generated file starts with (``PREAMBLE``): headers, the SIMD declarations
of libm, strata's own float32 erf, NaN-propagating max/min, NumPy's PCG64 and ATen's integer
power. Split from cprinter.py, which prints the kernels after it.

Note [Vector math]: glibc declares the SIMD variants of libm (libmvec) only under -ffast-math,
so the preamble declares them itself (``#pragma omp declare simd``); gcc then calls e.g.
``_ZGVeN16v_expf`` from vectorised loops. glibc documents libmvec's error as at most 4 ulp;
tests/compile/test_inductor_vector_math.py measures it against float64 (docs/inductor.md).
float32 erf is the exception: libmvec's ``erff`` cost as much as all of torch's gelu, so it is
``strata_erff`` below (Note [float32 erf]), inlined into the vector loop.
"""

from .half import C_HELPERS

VECTOR_MATH = ("exp", "log", "tanh", "erf", "log1p", "expm1", "sin", "cos")
OWN_FLOAT32_MATH = {"erf": "strata_erff"}    # libm function -> the preamble's float32 version

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

# Note [Random draws] (ir.py): NumPy's PCG64 (XSL-RR 128/64) and its ``Generator.random``
# doubles, and the jump ahead by ``delta`` steps (its ``advance``: pcg_advance_lcg_128).
PCG64 = """\
typedef unsigned __int128 strata_u128;
#define STRATA_PCG_MULT (((strata_u128)2549297995355413924ULL << 64) | 4865540595714422341ULL)
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
/* the 53 bits of the XSL-RR output of a state that NumPy's Generator.random scales by 2^-53 */
static inline uint64_t strata_pcg_bits53(strata_u128 state) {
    const uint64_t x = (uint64_t)(state >> 64) ^ (uint64_t)state;
    const unsigned rot = (unsigned)(state >> 122);
    return ((x >> rot) | (x << ((-rot) & 63))) >> 11;
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
    *(f"#pragma omp declare simd notinbranch\n{t} {fn}{s}({t});"
      for fn in VECTOR_MATH for t, s in (("float", "f"), ("double", ""))
      if not (t == "float" and fn in OWN_FLOAT32_MATH)),
    "", STRATA_ERFF, "",
    # NaN-propagating max/min (torch.maximum, amax): a NaN operand wins
    "#define MAX_PROP(a, b) (((a) != (a) || (a) > (b)) ? (a) : (b))",
    "#define MIN_PROP(a, b) (((a) != (a) || (a) < (b)) ? (a) : (b))",
    "", PCG64, "", STRATA_IPOW, "",
])
