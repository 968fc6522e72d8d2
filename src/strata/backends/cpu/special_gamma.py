"""The gamma family of special functions, vectorised over NumPy arrays: ``lgamma`` (fdlibm's
``e_lgamma_r.c``), ``digamma``/``polygamma``/``zeta`` (ATen's ``calc_digamma``,
``calc_trigamma`` and ``zeta``, ``Math.h``) and the incomplete gamma functions ``igamma`` /
``igammac`` (Cephes' ``igam.c``).

Separate from ``special.py``, which holds the erf family, the Bessel functions and the kernel
table that runs all of them; both evaluate their approximations with ``approximation.py``.
"""

import math

import numpy as np

from .approximation import _SMALL, _elementwise, _poly, _ratio, _split


def _math_lgamma(v):
    try:
        return math.lgamma(v)
    except ValueError:  # a pole: 0 or a negative integer
        return math.inf


# --- lgamma (fdlibm e_lgamma_r.c) ----------------------------------------------------------------
_TC = 1.46163214496836224576e+00
_TF = -1.21486290535849611461e-01
_TT = -3.63867699703950536541e-18
_A = (7.72156649015328655494e-02, 3.22467033424113591611e-01, 6.73523010531292681824e-02,
      2.05808084325167332806e-02, 7.38555086081402883957e-03, 2.89051383673415629091e-03,
      1.19270763183362067845e-03, 5.10069792153511336608e-04, 2.20862790713908385557e-04,
      1.08011567247583939954e-04, 2.52144565451257326939e-05, 4.48640949618915160150e-05)
_T = (4.83836122723810047042e-01, -1.47587722994593911752e-01, 6.46249402391333854778e-02,
      -3.27885410759859649565e-02, 1.79706750811820387126e-02, -1.03142241298341437450e-02,
      6.10053870246291332635e-03, -3.68452016781138256760e-03, 2.25964780900612472250e-03,
      -1.40346469989232843813e-03, 8.81081882437654011382e-04, -5.38595305356740546715e-04,
      3.15632070903625950361e-04, -3.12754168375120860518e-04, 3.35529192635519073543e-04)
_U = (-7.72156649015328655494e-02, 6.32827064025093366517e-01, 1.45492250137234768737e+00,
      9.77717527963372745603e-01, 2.28963728064692451092e-01, 1.33810918536787660377e-02)
_V = (1.0, 2.45597793713041134822e+00, 2.12848976379893395361e+00, 7.69285150456672783825e-01,
      1.04222645593369134254e-01, 3.21709242282423911810e-03)
_S = (-7.72156649015328655494e-02, 2.14982415960608852501e-01, 3.25778796408930981787e-01,
      1.46350472652464452805e-01, 2.66422703033638609560e-02, 1.84028451407337715652e-03,
      3.19475326584100867617e-05)
_R = (1.0, 1.39200533467621045958e+00, 7.21935547567138069525e-01, 1.71933865632803078993e-01,
      1.86459191715652901344e-02, 7.77942496381893596434e-04, 7.32668430744625636189e-06)
_W = (4.18938533204672725052e-01, 8.33333333333329678849e-02, -2.77777777728775536470e-03,
      7.93650558643019558500e-04, -5.95187557450339963135e-04, 8.36339918996282139126e-04,
      -1.63092934096575273989e-03)


def _lgamma_near_1_2(y, kind):
    """The three rational fits around lgamma's zeros at 1 and 2 (fdlibm cases 0, 1, 2)."""
    if kind == 0:
        z = y * y
        return y * _poly(z, _A[0::2]) + z * _poly(z, _A[1::2]) - 0.5 * y
    if kind == 1:
        z = y * y
        w = z * y
        p = z * _poly(w, _T[0::3]) - (_TT - w * (_poly(w, _T[1::3]) + y * _poly(w, _T[2::3])))
        return _TF + p
    return -0.5 * y + y * _ratio(y, _U, _V)


def _lgamma_below_2(x):
    """0 < x < 2: around the zeros at 1 and 2, via lgamma(x) = lgamma(x + 1) - log(x) below 0.9.
    The cut points are fdlibm's (its tests look at the high word of x)."""
    low = x < 0.9000000953674316
    r = np.where(low, -np.log(x), 0.0)
    y = np.empty_like(x)
    kind = np.empty(x.shape, np.int8)
    for mask, base, hi_cut, mid_cut in ((low, 1.0, 0.7315998077392578, 0.23163998126983643),
                                        (~low, 2.0, 1.7316312789916992, 1.2316322326660156)):
        hi = mask & (x >= hi_cut)
        mid = mask & (x < hi_cut) & (x >= mid_cut)
        rest = mask & (x < mid_cut)
        y[hi], kind[hi] = base - x[hi], 0
        y[mid], kind[mid] = x[mid] - (_TC - (2.0 - base)), 1
        y[rest], kind[rest] = x[rest] - (base - 1.0), 2
    for k in (0, 1, 2):
        idx = np.flatnonzero(kind == k)
        r[idx] += _lgamma_near_1_2(y[idx], k)
    r[(x == 1.0) | (x == 2.0)] = 0.0
    return r


def _lgamma_below_8(x):
    """2 <= x < 8: a fit on [2, 3) plus log((x-1)(x-2)...) to step down."""
    i = np.floor(x)
    y = x - i
    r = 0.5 * y + y * _ratio(y, _S, _R)
    z = np.ones_like(y)
    for k in range(2, 7):  # lgamma(1 + s) = log(s) + lgamma(s)
        z = np.where(i > k, z * (y + k), z)
    return r + np.log(z)


def _lgamma_large(x):
    """x >= 8: Stirling's series with a rational correction."""
    z = 1.0 / x
    w = _W[0] + z * _poly(z * z, _W[1:])
    return (x - 0.5) * (np.log(x) - 1.0) + w


def _lgamma_positive(x):
    """lgamma for finite x > 0."""
    out = np.empty_like(x)
    for piece, mask in ((lambda v: -np.log(v), x < 2.0 ** -70),
                        (_lgamma_below_2, (x >= 2.0 ** -70) & (x < 2.0)),
                        (_lgamma_below_8, (x >= 2.0) & (x < 8.0)),
                        (_lgamma_large, (x >= 8.0) & (x < 2.0 ** 58)),
                        (lambda v: v * (np.log(v) - 1.0), x >= 2.0 ** 58)):
        idx, v = _split(x, mask)
        out[idx] = piece(v)
    return out


def _abs_sin_pi(x):
    """|sin(pi x)| with the argument reduced exactly (fdlibm's sin_pi), so it stays accurate
    next to the integers where lgamma has its poles."""
    y = np.fmod(np.abs(x), 2.0)
    n = np.floor(y * 4.0)
    arg = np.select([n < 1, n < 3, n < 5, n < 7], [y, 0.5 - y, 1.0 - y, y - 1.5], y - 2.0)
    return np.abs(np.where((n >= 1) & (n < 3) | (n >= 5) & (n < 7), np.cos(np.pi * arg),
                           np.sin(np.pi * arg)))


def lgamma(x):
    x = np.asarray(x, dtype=np.float64)
    if x.size < _SMALL:
        return _elementwise(_math_lgamma, x)
    flat = x.reshape(-1)
    out = np.where(np.isnan(flat), np.nan, np.inf)  # poles (0, negative integers) and +-inf
    i, xp = _split(flat, np.isfinite(flat) & (flat > 0))
    out[i] = _lgamma_positive(xp)
    j, xn = _split(flat, np.isfinite(flat) & (flat < 0) & (flat != np.floor(flat)))
    # reflection: lgamma(x) = log(pi / |sin(pi x) x|) - lgamma(-x)
    out[j] = np.log(np.pi / (_abs_sin_pi(xn) * np.abs(xn))) - _lgamma_positive(-xn)
    return out.reshape(x.shape)


# --- digamma / polygamma (PyTorch's calc_digamma, calc_trigamma and zeta, ATen's Math.h) --------
# Each runs in the precision of its input array (float32 or float64), as ATen's float and double
# versions do, so results agree to the last bits.

_PSI_10 = 2.25175258906672110764   # digamma(10)
_DIGAMMA_A = (8.33333333333333333333e-2, -2.10927960927960927961e-2, 7.57575757575757575758e-3,
              -4.16666666666666666667e-3, 3.96825396825396825397e-3,
              -8.33333333333333333333e-3, 8.33333333333333333333e-2)


def _polevl(x, coeffs):
    """Cephes' polevl: coeffs[0] * x^N + ... + coeffs[N] (highest degree first)."""
    out = np.full_like(x, coeffs[0])
    for c in coeffs[1:]:
        out = out * x + c
    return out


def _digamma_positive(x):
    """x > 0 (or NaN, +inf): step up to x >= 10 with psi(x) = psi(x + 1) - 1 / x, then the
    asymptotic series."""
    result = np.zeros_like(x)
    for _ in range(10):   # ten steps take any x > 0 to 10 or beyond
        small = x < 10
        if not small.any():
            break
        result -= np.where(small, 1 / x, 0)
        x = np.where(small, x + 1, x)
    z = 1 / (x * x)
    tail = np.where(x < 1e17, z * _polevl(z, _DIGAMMA_A), 0)
    return np.where(x == 10, result + _PSI_10, result + np.log(x) - 0.5 / x - tail)


def digamma(x):
    x = np.asarray(x).reshape(-1)
    zero = x == 0
    pole = (x < 0) & (x == np.trunc(x))         # negative integers and -inf
    reflect = (x < 0) & ~pole
    out = _digamma_positive(np.where(reflect, 1 - x, np.where(zero | pole, 1, x)))
    if reflect.any():
        # psi(x) = psi(1 - x) - pi / tan(pi * frac(x)), the correction in double, as ATen
        frac = np.fmod(x[reflect].astype(np.float64), 1.0)
        out[reflect] -= (np.pi / np.tan(np.pi * frac)).astype(x.dtype)
    out[zero] = np.copysign(np.inf, -x[zero])   # +-0 give -+inf
    out[pole] = np.nan
    return out


def _trigamma(x):
    """calc_trigamma: reflection below 1/2, six steps up, then the asymptotic series."""
    negative = x < 0.5
    sin_pi_x = np.sin(np.where(negative, x, 0) * x.dtype.type(np.pi))
    result = np.where(negative, -(x.dtype.type(np.pi) ** 2) / (sin_pi_x * sin_pi_x), 0)
    x = np.where(negative, 1 - x, x)
    for _ in range(6):
        result = result + 1 / (x * x)
        x = x + 1
    ixx = 1 / (x * x)
    result = result + (1 + 1 / (2 * x) + ixx * (x.dtype.type(1 / 6) - ixx * (
        x.dtype.type(1 / 30) - ixx * x.dtype.type(1 / 42)))) / x
    return np.where(negative, -result, result)


_MACHEP = 1.11022302462515654042e-16
_ZETA_A = (12.0, -720.0, 30240.0, -1209600.0, 47900160.0, -1.8924375803183791606e9,
           7.47242496e10, -2.950130727918164224e12, 1.1646782814350067249e14,
           -4.5979787224074726105e15, 1.8152105401943546773e17, -7.1661652561756670113e18)


def _hurwitz_zeta(s, q):
    """zeta(s, q) = sum over k >= 0 of (q + k)^-s for an integer s > 1 (Cephes' algorithm, as in
    ATen): direct sums until the terms are negligible or q + k > 9, then Euler-Maclaurin. Each
    element stops at its own step, as the scalar loop does."""
    q = q.astype(np.float64)
    total = q ** -s
    a, b = q.copy(), np.zeros_like(q)
    active = ~((q <= 0) & (q == np.floor(q)))   # poles: q a non-positive integer (or -inf)
    i = 0
    while True:
        running = active & ((i < 9) | (a <= 9))
        if not running.any():
            break
        i += 1
        a = np.where(running, a + 1, a)
        b = np.where(running, a ** -s, b)
        total = np.where(running, total + b, total)
        active &= ~(running & (-_MACHEP * total < b) & (b < _MACHEP * total))
    w = a
    total = np.where(active, total + b * w / (s - 1) - 0.5 * b, total)
    factor, k = 1.0, 0.0
    for coeff in _ZETA_A:
        if not active.any():
            break
        factor *= s + k
        b = b / w
        t = factor * b / coeff
        total = np.where(active, total + t, total)
        active &= ~(np.abs(t / total) < _MACHEP)
        factor *= s + k + 1
        b = b / w
        k += 2
    total[(q <= 0) & (q == np.floor(q))] = np.inf
    return total


def zeta(x, q):
    """The Hurwitz zeta function with Cephes' domain rules: inf at x == 1 and at poles of q,
    nan for x < 1 and for a negative non-integer q with a non-integer x."""
    x, q = np.broadcast_arrays(np.asarray(x, np.float64), np.asarray(q, np.float64))
    with np.errstate(all="ignore"):
        out = _hurwitz_zeta(x, q)
    out = np.where((q <= 0) & (q != np.floor(q)) & (x != np.floor(x)), np.nan, out)
    out = np.where(x < 1, np.nan, out)
    return np.where(x == 1, np.inf, out)


def polygamma(x, n):
    x = np.asarray(x)
    if n == 0:
        return digamma(x).reshape(x.shape)
    if n == 1:
        return _trigamma(x)
    # (-1)^(n+1) n! zeta(n + 1, x), in double (ATen's zeta accumulates in double too)
    sign = 1.0 if n % 2 else -1.0
    return (sign * math.exp(math.lgamma(n + 1.0)) * _hurwitz_zeta(n + 1, x)).astype(x.dtype)


# --- igamma / igammac (Cephes' igam.c: a power series and a continued fraction) ---------------
# ATen's calc_igamma/calc_igammac (Math.h) add an asymptotic series (DiDonato & Morris) for
# a ~ x > 20; here the series and continued fraction run there too, in float64, which costs
# more iterations but keeps ~1e-12 relative accuracy for a up to ~1e4.
_BIG, _BIGINV = 4.503599627370496e15, 2.22044604925031308085e-16
_MAX_ITER = 20000


def _igam_prefactor(a, x):
    """x^a e^-x / Gamma(a), in logs."""
    return np.exp(a * np.log(x) - x - lgamma(a))


def _igam_series(a, x):
    """P(a, x) = x^a e^-x / Gamma(a+1) * sum_k x^k / ((a+1)...(a+k)), for x <= max(1, a)."""
    r, c, total = a.copy(), np.ones_like(a), np.ones_like(a)
    active = np.arange(a.size)
    for _ in range(_MAX_ITER):
        r[active] += 1
        c[active] *= x[active] / r[active]
        total[active] += c[active]
        active = active[c[active] > total[active] * _MACHEP]
        if not active.size:
            break
    return total * _igam_prefactor(a, x) / a


def _igamc_fraction(a, x):
    """Q(a, x) by its continued fraction (Cephes igamc), for x > max(1, a)."""
    y, z, c = 1.0 - a, x + 2.0 - a, np.zeros_like(a)
    pkm2, qkm2, pkm1, qkm1 = np.ones_like(a), x.copy(), x + 1.0, z * x
    ans = pkm1 / qkm1
    active = np.arange(a.size)
    for _ in range(_MAX_ITER):
        i = active
        c[i] += 1
        y[i] += 1
        z[i] += 2
        yc = y[i] * c[i]
        pk = pkm1[i] * z[i] - pkm2[i] * yc
        qk = qkm1[i] * z[i] - qkm2[i] * yc
        nonzero = qk != 0
        r = np.where(nonzero, pk / np.where(nonzero, qk, 1.0), ans[i])
        change = np.where(nonzero, np.abs((ans[i] - r) / r), 1.0)
        ans[i] = r
        pkm2[i], pkm1[i], qkm2[i], qkm1[i] = pkm1[i], pk, qkm1[i], qk
        big = np.abs(pk) > _BIG
        if big.any():
            for arr_ in (pkm2, pkm1, qkm2, qkm1):
                arr_[i[big]] *= _BIGINV
        active = i[change > _MACHEP]
        if not active.size:
            break
    return ans * _igam_prefactor(a, x)


def _incomplete_gamma(a, x, upper):
    """P(a, x) (``upper`` False) or Q(a, x) with ATen's domain rules."""
    a, x = np.broadcast_arrays(*(np.asarray(v, np.float64) for v in (a, x)))
    out = np.full(a.shape, np.nan)
    lower_value = np.select(  # P at the edges of the domain (Q = 1 - P there), in ATen's order
        [(a < 0) | (x < 0), a == 0, x == 0, np.isinf(a), np.isinf(x)],
        [np.nan, np.where(x > 0, 1.0, np.nan), 0.0, np.where(np.isinf(x), np.nan, 0.0), 1.0],
        np.nan)
    edge = (a <= 0) | (x <= 0) | np.isinf(a) | np.isinf(x)
    out[edge] = 1.0 - lower_value[edge] if upper else lower_value[edge]
    inside = ~edge & ~np.isnan(a) & ~np.isnan(x)
    by_fraction = inside & (x > 1) & (x > a)
    by_series = inside & ~by_fraction
    if by_series.any():
        p = _igam_series(a[by_series], x[by_series])
        out[by_series] = 1.0 - p if upper else p
    if by_fraction.any():
        q = _igamc_fraction(a[by_fraction], x[by_fraction])
        out[by_fraction] = q if upper else 1.0 - q
    return out


def igamma(a, x):
    return _incomplete_gamma(a, x, upper=False).astype(np.result_type(a, x), copy=False)


def igammac(a, x):
    return _incomplete_gamma(a, x, upper=True).astype(np.result_type(a, x), copy=False)
