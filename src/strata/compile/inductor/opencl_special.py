"""OpenCL C of the special functions OpenCL's library lacks: digamma and polygamma (ATen's
``calc_digamma``, ``calc_trigamma`` and Cephes' Hurwitz ``zeta`` from ``ATen/native/Math.h``, as
backends/cpu/special.py computes them; ``zeta`` is also ``special.zeta``), ``erfinv`` (ATen's
``calc_erfinv``), the modified Bessel functions ``i0``, ``i0e``, ``i1``, ``i1e``, ``entr``,
the regularized incomplete gamma functions ``igamma``/``igammac`` (Cephes' power series and
continued fraction, as the CPU kernels) and the reparameterized Gamma sample's gradient
(``_standard_gamma_grad``), printed once per compute type (``float``, ``double``).

OpenCL C has no recursion: digamma's reflection for negative x is applied before the upward
steps, not by calling itself. A kernel gets the helpers its body calls (``helpers_for``).
"""

from ...backends.cpu.distributions import _COEF_UV
from ...backends.cpu.special import _I0E_A, _I0E_B, _I1E_A, _I1E_B

DIGAMMA = """T digamma_T(T x) {
    if (x == 0)                        /* +-0 give -+inf, as C's and SciPy's gamma functions */
        return copysign((T)INFINITY, -x);
    T reflection = 0;
    if (x < 0) {
        if (x == trunc(x))             /* negative integers and -inf */
            return (T)NAN;
        /* psi(x) = psi(1 - x) - pi / tan(pi * r), r the fractional part (accurate for |x| > 1) */
        const T r = x - trunc(x);
        reflection = (T)M_PI / tan((T)M_PI * r);
        x = 1 - x;
    }
    T result = 0;
    while (x < 10) {
        result -= 1 / x;
        x += 1;
    }
    if (x == 10)
        return result + (T)2.25175258906672110764 - reflection;
    T tail = 0;
    if (x < (T)1.0e17) {
        const T z = 1 / (x * x);
        const T a[7] = {8.33333333333333333333E-2, -2.10927960927960927961E-2,
                        7.57575757575757575758E-3, -4.16666666666666666667E-3,
                        3.96825396825396825397E-3, -8.33333333333333333333E-3,
                        8.33333333333333333333E-2};
        T p = a[0];
        for (int i = 1; i < 7; i++)
            p = p * z + a[i];
        tail = z * p;
    }
    return result + log(x) - (T)0.5 / x - tail - reflection;
}
"""

TRIGAMMA = """T trigamma_T(T x) {
    T sign = 1, result = 0;
    if (x < (T)0.5) {
        sign = -1;
        const T sin_pi_x = sin((T)M_PI * x);
        result -= ((T)M_PI * (T)M_PI) / (sin_pi_x * sin_pi_x);
        x = 1 - x;
    }
    for (int i = 0; i < 6; i++) {
        result += 1 / (x * x);
        x += 1;
    }
    const T ixx = 1 / (x * x);
    result += (1 + 1 / (2 * x) + ixx * ((T)(1.0 / 6) - ixx * ((T)(1.0 / 30) -
               ixx * (T)(1.0 / 42)))) / x;
    return sign * result;
}
"""

# Cephes' zeta(x, q) = sum over k >= 0 of (q + k)^-x: direct sums, then Euler-Maclaurin
ZETA = """T zeta_T(const T x, const T q) {
    const T machep = (T)1.11022302462515654042E-16;
    const T a_coefficients[12] = {12.0, -720.0, 30240.0, -1209600.0, 47900160.0,
        -1.8924375803183791606e9, 7.47242496e10, -2.950130727918164224e12,
        1.1646782814350067249e14, -4.5979787224074726105e15, 1.8152105401943546773e17,
        -7.1661652561756670113e18};
    if (x == 1)
        return (T)INFINITY;
    if (x < 1)
        return (T)NAN;
    if (q <= 0) {
        if (q == floor(q))
            return (T)INFINITY;
        if (x != floor(x))
            return (T)NAN;
    }
    T s = pow(q, -x), a = q, b = 0;
    int i = 0;
    while (i < 9 || a <= 9) {
        i += 1;
        a += 1;
        b = pow(a, -x);
        s += b;
        if (-machep * s < b && b < machep * s)
            return s;
    }
    const T w = a;
    s += b * w / (x - 1);
    s -= (T)0.5 * b;
    a = 1;
    T k = 0;
    for (int j = 0; j < 12; j++) {
        a *= x + k;
        b /= w;
        const T t = a * b / a_coefficients[j];
        s = s + t;
        if (fabs(t / s) < machep)
            return s;
        k += 1;
        a *= x + k;
        b /= w;
        k += 1;
    }
    return s;
}
"""

POLYGAMMA = """T polygamma_T(const long n, const T x) {
    if (n == 0)
        return digamma_T(x);
    if (n == 1)
        return trigamma_T(x);
    /* (-1)^(n+1) n! zeta(n + 1, x) */
    return ((n % 2) ? (T)1 : (T)-1) * exp(lgamma((T)n + 1)) * zeta_T((T)(n + 1), x);
}
"""

# ATen's calc_erfinv: a rational first guess (Giles' central and tail ranges), then two Newton
# steps on erf
ERFINV = """T erfinv_T(const T y) {
    const T a[4] = {0.886226899, -1.645349621, 0.914624893, -0.140543331};
    const T b[4] = {-2.118377725, 1.442710462, -0.329097515, 0.012229801};
    const T c[4] = {-1.970840454, -1.624906493, 3.429567803, 1.641345311};
    const T d[2] = {3.543889200, 1.637067800};
    const T y_abs = fabs(y);
    if (y_abs > 1)
        return (T)NAN;
    if (y_abs == 1)
        return copysign((T)INFINITY, y);
    T x;
    if (y_abs <= (T)0.7) {
        const T z = y * y;
        const T num = ((a[3] * z + a[2]) * z + a[1]) * z + a[0];
        const T dem = (((b[3] * z + b[2]) * z + b[1]) * z + b[0]) * z + 1;
        x = y * num / dem;
    } else {
        const T z = sqrt(-log((1 - y_abs) / 2));
        const T num = ((c[3] * z + c[2]) * z + c[1]) * z + c[0];
        const T dem = (d[1] * z + d[0]) * z + 1;
        x = copysign(num, y) / dem;
    }
    const T two_over_sqrt_pi = (T)1.12837916709551257390;
    x = x - (erf(x) - y) / (two_over_sqrt_pi * exp(-x * x));
    x = x - (erf(x) - y) / (two_over_sqrt_pi * exp(-x * x));
    return x;
}
"""

# Cephes' modified Bessel functions of the first kind (ATen's calc_i0 ... calc_i1e): Chebyshev
# series on [0, 8] and in 1/x beyond, with the CPU kernels' coefficients (one place for them)
def _coefficients(values) -> str:
    return "{" + ", ".join(repr(v) for v in values) + "}"


BESSEL = f"""T chbevl_T(const T x, const T *c, const int n) {{
    T b0 = c[0], b1 = 0, b2 = 0;
    for (int i = 1; i < n; i++) {{
        b2 = b1;
        b1 = b0;
        b0 = x * b1 - b2 + c[i];
    }}
    return (T)0.5 * (b0 - b2);
}}
T i0e_T(const T x) {{
    const T a = fabs(x);
    const T near[{len(_I0E_A)}] = {_coefficients(_I0E_A)};
    const T far[{len(_I0E_B)}] = {_coefficients(_I0E_B)};
    return a <= 8 ? chbevl_T(a / 2 - 2, near, {len(_I0E_A)}) :
                    chbevl_T(32 / a - 2, far, {len(_I0E_B)}) / sqrt(a);
}}
T i1e_T(const T x) {{
    const T a = fabs(x);
    const T near[{len(_I1E_A)}] = {_coefficients(_I1E_A)};
    const T far[{len(_I1E_B)}] = {_coefficients(_I1E_B)};
    const T scaled = a <= 8 ? chbevl_T(a / 2 - 2, near, {len(_I1E_A)}) * a :
                              chbevl_T(32 / a - 2, far, {len(_I1E_B)}) / sqrt(a);
    return copysign(scaled, x);
}}
T i0_T(const T x) {{
    return exp(fabs(x)) * i0e_T(x);        /* inf * 0 at x = inf: NaN, as ATen */
}}
T i1_T(const T x) {{
    return i1e_T(x) * exp(fabs(x));
}}
"""

# -x log x for x > 0, 0 at 0, -inf below; NaN stays NaN (ATen's entr)
ENTR = """T entr_T(const T x) {
    if (x > 0)
        return -x * log(x);
    return x == 0 ? (T)0 : x != x ? x : (T)-INFINITY;
}
"""

# Cephes' igam.c as backends/cpu/special.py runs it: P(a, x) by its power series for
# x <= max(1, a), Q(a, x) by its continued fraction beyond (ATen's calc_igamma also switches to
# an asymptotic series where a ~ x > 20; the series and fraction converge there too); ATen's
# machine epsilon and rescaling bounds per type; the edges of the domain in ATen's order.
IGAMMA = """T igam_prefactor_T(const T a, const T x) {          /* x^a e^-x / Gamma(a) */
    return exp(a * log(x) - x - lgamma(a));
}
T igam_series_T(const T a, const T x) {
    const T machep = sizeof(T) == 8 ? (T)1.11022302462515654042E-16 : (T)5.9604644775390625E-8;
    T r = a, c = 1, total = 1;
    for (int i = 0; i < 20000 && c > total * machep; i++) {
        r += 1;
        c *= x / r;
        total += c;
    }
    return total * igam_prefactor_T(a, x) / a;
}
T igamc_fraction_T(const T a, const T x) {
    const T machep = sizeof(T) == 8 ? (T)1.11022302462515654042E-16 : (T)5.9604644775390625E-8;
    const T big = sizeof(T) == 8 ? (T)4.503599627370496e15 : (T)16777216.0;
    const T biginv = sizeof(T) == 8 ? (T)2.22044604925031308085e-16 : (T)5.9604644775390625E-8;
    T y = 1 - a, z = x + 2 - a, c = 0;
    T pkm2 = 1, qkm2 = x, pkm1 = x + 1, qkm1 = z * x;
    T ans = pkm1 / qkm1, change = 1;
    for (int i = 0; i < 20000 && change > machep; i++) {
        c += 1;
        y += 1;
        z += 2;
        const T yc = y * c;
        const T pk = pkm1 * z - pkm2 * yc, qk = qkm1 * z - qkm2 * yc;
        if (qk != 0) {
            const T r = pk / qk;
            change = fabs((ans - r) / r);
            ans = r;
        } else {
            change = 1;
        }
        pkm2 = pkm1;
        pkm1 = pk;
        qkm2 = qkm1;
        qkm1 = qk;
        if (fabs(pk) > big) {
            pkm2 *= biginv;
            pkm1 *= biginv;
            qkm2 *= biginv;
            qkm1 *= biginv;
        }
    }
    return ans * igam_prefactor_T(a, x);
}
T incomplete_gamma_T(const T a, const T x, const int upper) {
    if (a != a || x != x)
        return (T)NAN;
    T lower;
    if (a < 0 || x < 0)
        lower = (T)NAN;
    else if (a == 0)
        lower = x > 0 ? (T)1 : (T)NAN;
    else if (x == 0)
        lower = 0;
    else if (isinf(a))
        lower = isinf(x) ? (T)NAN : (T)0;
    else if (isinf(x))
        lower = 1;
    else if (x > 1 && x > a) {
        const T q = igamc_fraction_T(a, x);
        return upper ? q : 1 - q;
    } else {
        const T p = igam_series_T(a, x);
        return upper ? 1 - p : p;
    }
    return upper ? 1 - lower : lower;
}
T igamma_T(const T a, const T x) {
    return incomplete_gamma_T(a, x, 0);
}
T igammac_T(const T a, const T x) {
    return incomplete_gamma_T(a, x, 1);
}
"""

# ATen's standard_gamma_grad_one (Distributions.h): d(sample)/d(alpha) of a standard Gamma
# sample x, by a Taylor series for x < 0.8, Rice's saddle point expansion for alpha > 8, else a
# bivariate rational approximation (the CPU kernel's coefficients); its bounds are float
# literals, compared in the compute type as ATen compares them.
GAMMA_GRAD = f"""T standard_gamma_grad_T(const T alpha, const T x) {{
    if (x < 0.8f) {{
        T numer = 1, denom = alpha;
        T series1 = numer / denom, series2 = numer / (denom * denom);
        for (int i = 1; i <= 5; i++) {{
            numer *= -x / i;
            denom += 1;
            series1 += numer / denom;
            series2 += numer / (denom * denom);
        }}
        const T pow_x_alpha = pow(x, alpha), pdf = pow(x, alpha - 1) * exp(-x);
        const T cdf = pow_x_alpha * series1;
        const T cdf_alpha = (log(x) - digamma_T(alpha)) * cdf - pow_x_alpha * series2;
        const T result = -cdf_alpha / pdf;
        return result != result ? 0 : result;
    }}
    if (alpha > 8.0f) {{
        if (0.9f * alpha <= x && x <= 1.1f * alpha) {{
            const T numer_1 = 1 + 24 * alpha * (1 + 12 * alpha);
            const T numer_2 = 1440 * (alpha * alpha) + 6 * x * (53 - 120 * x) -
                65 * x * x / alpha + alpha * (107 + 3600 * x);
            return numer_1 * numer_2 / (1244160 * (alpha * alpha) * (alpha * alpha));
        }}
        const T denom = sqrt(8 * alpha), term2 = denom / (alpha - x);
        const T term3 = pow(x - alpha - alpha * log(x / alpha), (T)-1.5);
        const T term23 = x < alpha ? term2 - term3 : term2 + term3;
        const T term1 = log(x / alpha) * term23 -
            sqrt(2 / alpha) * (alpha + x) / ((alpha - x) * (alpha - x));
        const T stirling = 1 + 1 / (12 * alpha) * (1 + 1 / (24 * alpha));
        return -stirling * x * term1 / denom;
    }}
    const T u = log(x / alpha), v = log(alpha);
    const T coef_uv[3][8] = {{{", ".join(_coefficients(row) for row in _COEF_UV.tolist())}}};
    T c[8];
    for (int i = 0; i < 8; i++)
        c[i] = coef_uv[0][i] + u * (coef_uv[1][i] + u * coef_uv[2][i]);
    const T p = c[0] + v * (c[1] + v * (c[2] + v * c[3]));
    const T q = c[4] + v * (c[5] + v * (c[6] + v * c[7]));
    return exp(p / q);
}}
"""

_NEEDS = {"polygamma": ("digamma", "trigamma", "zeta"), "i0e": ("bessel",), "i1e": ("bessel",),
          "i0": ("bessel",), "i1": ("bessel",), "standard_gamma_grad": ("digamma",)}
_SOURCES = {"digamma": DIGAMMA, "trigamma": TRIGAMMA, "zeta": ZETA, "polygamma": POLYGAMMA,
            "erfinv": ERFINV, "bessel": BESSEL, "entr": ENTR, "igamma": IGAMMA,
            "standard_gamma_grad": GAMMA_GRAD}
# the functions a kernel body may call, by the helper that defines them
_CALLABLE = {"digamma": "digamma", "trigamma": "trigamma", "zeta": "zeta",
             "polygamma": "polygamma", "erfinv": "erfinv", "i0e": "bessel", "i1e": "bessel",
             "i0": "bessel", "i1": "bessel", "entr": "entr", "igamma": "igamma",
             "igammac": "igamma", "standard_gamma_grad": "standard_gamma_grad"}


def helpers_for(body) -> str:
    """The definitions of the special functions ``body`` calls, each before its callers; the
    type ``T`` of a helper is a macro around it."""
    text = ""
    for ctype in ("float", "double"):
        called = {fn for fn in _CALLABLE if f"{fn}_{ctype}(" in body}
        called = {_CALLABLE[fn] for fn in called} | {
            needed for fn in called for needed in _NEEDS.get(fn, ())}
        for name, source in _SOURCES.items():         # in dependency order
            if name in called:
                typed = source.replace("_T(", f"_{ctype}(")
                text += f"#define T {ctype}\n{typed}#undef T\n"
    return text
