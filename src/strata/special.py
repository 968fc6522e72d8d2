"""``strata.special``: PyTorch's special-function namespace, as functions over strata ops.

Most entries are other names for ops that also live at the top level (``expit`` is ``sigmoid``,
``gammaln`` is ``lgamma``); the rest are composites of existing ops, so autograd works through
them. ``log_ndtr`` and ``ndtri`` work in float64 internally: their tails need it, as Cephes'
kernels that PyTorch runs do.

    >>> import strata
    >>> strata.special.ndtr(strata.tensor([0.0, 1.0]))
    tensor([0.5000, 0.8413])
"""

import math

from .core import dtype as D
from .functions import write_out as _write_out
from .ops import activation as A
from .ops import pointwise as P
from .ops import pointwise_composites as PC
from .ops import reductions as RD
from .ops import special as SP
from .ops.meta_rules import float_result as _float_result
from .ops.meta_rules import is_tensor as _is_tensor

_SQRT1_2 = math.sqrt(0.5)
_LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)


def _exported(name, fn, doc):
    """``fn`` as ``strata.special.<name>``, with PyTorch's ``out=`` keyword."""
    def function(*args, out=None, **kwargs):
        result = fn(*args, **kwargs)
        return result if out is None else _write_out(out, result)
    function.__name__ = function.__qualname__ = name
    function.__doc__ = doc
    return function


def _in_float(x):
    """``x`` in the dtype a float-result op gives it (integers: the default float dtype)."""
    dt = _float_result(x)
    return x if x.dtype is dt else x.to(dt)


def _xlog1py(self, other):
    """x * log1p(y): 0 where x == 0 (even for y <= -1 or y == inf), NaN wherever y is NaN.
    Where x == 0, log1p sees 0 in place of a y that would make 0 * log1p(y) NaN; elsewhere the
    product is left alone, so x's gradient is log1p(y), as in PyTorch."""
    like = self if _is_tensor(self) else other
    dt = _float_result(self, other)
    x, y = PC._as_dtype(self, dt, like), PC._as_dtype(other, dt, like)
    unsafe = P.logical_and(P.eq(x, 0), P.logical_or(P.le(y, -1), P.eq(y, math.inf)))
    return P.mul(x, P.log1p(P.where(unsafe, 0.0, y)))


def _ndtr(self):
    x = _in_float(self)
    return P.mul(SP.erfc(P.mul(x, -_SQRT1_2)), 0.5)


# Asymptotic series of log(ndtr(x)) + x^2/2 + log(-x) + log(sqrt(2 pi)) below -30: the terms
# (-1)^n (2n - 1)!! / x^(2n), of which eight reach double precision there.
_TAIL = -30.0


def _log_ndtr64(x):
    """Three branches, each fed only values in its own range (so the unused ones stay finite
    and their zero gradients do not turn into nan)."""
    high, low = P.gt(x, -1.0), P.lt(x, _TAIL)
    xu = P.mul(P.where(high, x, 0.0), _SQRT1_2)
    upper = P.log1p(P.mul(SP.erfc(xu), -0.5))                  # x > -1: ndtr near 1
    xm = P.mul(P.where(P.logical_or(high, low), -1.0, x), -_SQRT1_2)
    middle = P.log(P.mul(SP.erfc(xm), 0.5))                    # -30 <= x <= -1
    xt = P.where(low, x, _TAIL)
    inv2 = P.reciprocal(P.mul(xt, xt))
    series, term = 1.0, 1.0
    for n in range(1, 9):
        term = P.mul(P.mul(inv2, -(2 * n - 1)), term)
        series = P.add(term, series)
    tail = P.sub(P.sub(P.log(series), P.mul(P.mul(xt, xt), 0.5)),
                 P.add(P.log(P.neg(xt)), _LOG_SQRT_2PI))
    return P.where(high, upper, P.where(low, tail, middle))


def _log_ndtr(self):
    x = _in_float(self)
    return _log_ndtr64(x.to(D.float64)).to(x.dtype)


def _ndtri(self):
    """The inverse of ndtr: sqrt(2) erfinv(2p - 1) (or an asymptotic guess in the far tail),
    then Newton steps on log(ndtr(x)) = log(p), in float64 on the smaller of p and 1 - p."""
    p = _in_float(self)
    p64 = p.to(D.float64)
    upper = P.gt(p64, 0.5)
    q = P.where(upper, PC.rsub(p64, 1.0), p64)
    guess = P.mul(SP.erfinv(P.sub(P.mul(q, 2.0), 1.0)), math.sqrt(2.0))
    far = P.neg(P.sqrt(P.mul(P.log(q), -2.0)))
    x = P.where(P.lt(q, 1e-8), far, guess)
    log_q = P.log(q)
    interior = P.logical_and(P.gt(q, 0), P.isfinite(x))
    for _ in range(4):
        xs = P.where(interior, x, 0.0)
        log_cdf = _log_ndtr64(xs)
        log_pdf = P.sub(P.mul(P.mul(xs, xs), -0.5), _LOG_SQRT_2PI)
        step = P.mul(P.sub(log_cdf, log_q), P.exp(P.sub(log_cdf, log_pdf)))
        x = P.where(interior, P.sub(xs, step), x)
    x = P.where(P.eq(q, 0), -math.inf, x)
    x = P.where(P.logical_or(P.lt(p64, 0), P.gt(p64, 1)), math.nan, x)
    return P.where(upper, P.neg(x), x).to(p.dtype)


def _softmax(input, dim, *, dtype=None):
    return A.softmax(input, dim, dtype)


def _log_softmax(input, dim, *, dtype=None):
    return A.log_softmax(input, dim, dtype)


def _logsumexp(input, dim, keepdim=False):
    return RD.logsumexp(input, dim, keepdim)


def _round(input, *, decimals=0):
    return P.round(input, decimals=decimals)


erf = _exported("erf", SP.erf, "The error function.")
erfc = _exported("erfc", SP.erfc, "1 - erf(x), accurate where erf is near 1.")
erfinv = _exported("erfinv", SP.erfinv, "The inverse of erf on (-1, 1).")
expit = _exported("expit", P.sigmoid, "The logistic sigmoid 1 / (1 + exp(-x)).")
logit = _exported("logit", SP.logit,
                  "log(p / (1 - p)), with p clamped to [eps, 1 - eps] if eps is given.")
exp2 = _exported("exp2", P.exp2, "2 ** x.")
expm1 = _exported("expm1", P.expm1, "exp(x) - 1, accurate near 0.")
log1p = _exported("log1p", P.log1p, "log(1 + x), accurate near 0.")
xlogy = _exported("xlogy", SP.xlogy, "x * log(y), 0 where x == 0.")
xlog1py = _exported("xlog1py", _xlog1py, "x * log1p(y), 0 where x == 0.")
entr = _exported("entr", SP.special_entr, "Elementwise entropy -x log x (0 at 0, -inf below).")
sinc = _exported("sinc", SP.sinc, "The normalised sinc sin(pi x) / (pi x).")
round = _exported("round", _round, "Round half to even, to ``decimals`` places.")
i0 = _exported("i0", SP.i0, "The modified Bessel function of the first kind, order 0.")
i0e = _exported("i0e", SP.special_i0e, "exp(-|x|) * i0(x), which does not overflow.")
i1 = _exported("i1", SP.special_i1, "The modified Bessel function of the first kind, order 1.")
i1e = _exported("i1e", SP.special_i1e, "exp(-|x|) * i1(x), which does not overflow.")


def _not_differentiable(fn):
    """ATen's special functions without a derivative row: an output that does not require
    grad, whatever the input."""
    def run(x):
        return fn(x.detach() if _is_tensor(x) else x)
    return run


def _infinite_to_nan(fn):
    """``fn`` with +-inf giving NaN, as ATen's ``modified_bessel_i0/i1`` kernels answer."""
    def run(x):
        x = _in_float(x)
        return P.where(P.isinf(x), math.nan, fn(x))
    return run


def _spherical_bessel_j0(x):
    """sin(x) / x; ATen's Taylor polynomial below |x| = 0.5, 0 at +-inf."""
    x = _in_float(x)
    u = P.mul(x, x)
    series = 1.0 / 6227020800.0
    for c in (-1.0 / 39916800.0, 1.0 / 362880.0, -1.0 / 5040.0, 1.0 / 120.0, -1.0 / 6.0):
        series = P.add(P.mul(u, series), c)
    small = P.add(P.mul(u, series), 1.0)
    large = P.div(P.sin(x), x)
    return P.where(P.isinf(x), 0.0, P.where(P.lt(P.abs(x), 0.5), small, large))


modified_bessel_i0 = _exported("modified_bessel_i0", _not_differentiable(
    _infinite_to_nan(SP.i0)), "i0 as ATen's modified_bessel_i0: NaN at +-inf, no gradient.")
modified_bessel_i1 = _exported("modified_bessel_i1", _not_differentiable(
    _infinite_to_nan(SP.special_i1)), "i1 as ATen's modified_bessel_i1: NaN at +-inf, no "
    "gradient.")
spherical_bessel_j0 = _exported("spherical_bessel_j0", _not_differentiable(
    _spherical_bessel_j0), "The spherical Bessel function of the first kind, order 0.")
ndtr = _exported("ndtr", _ndtr, "The standard normal CDF.")
log_ndtr = _exported("log_ndtr", _log_ndtr,
                     "log of the standard normal CDF, accurate in the lower tail.")
ndtri = _exported("ndtri", _ndtri, "The inverse of the standard normal CDF.")
gammaln = _exported("gammaln", SP.lgamma, "log |Gamma(x)|.")
digamma = _exported("digamma", SP.digamma, "The logarithmic derivative of Gamma.")
psi = _exported("psi", SP.digamma, "The logarithmic derivative of Gamma (alias of digamma).")
polygamma = _exported("polygamma", SP.polygamma,
                      "The n-th derivative of digamma: polygamma(n, input).")
multigammaln = _exported("multigammaln", SP.mvlgamma,
                         "log of the multivariate gamma function of dimension p.")
zeta = _exported("zeta", SP.special_zeta, "The Hurwitz zeta function zeta(x, q).")
gammainc = _exported("gammainc", SP.igamma,
                     "The regularized lower incomplete gamma function P(input, other).")
gammaincc = _exported("gammaincc", SP.igammac,
                      "The regularized upper incomplete gamma function Q(input, other).")
softmax = _exported("softmax", _softmax, "softmax(input, dim, *, dtype=None).")
log_softmax = _exported("log_softmax", _log_softmax, "log_softmax(input, dim, *, dtype=None).")
logsumexp = _exported("logsumexp", _logsumexp, "log(sum(exp(input), dim)), computed stably.")

__all__ = [
    "digamma",
    "entr",
    "erf",
    "erfc",
    "erfinv",
    "exp2",
    "expit",
    "expm1",
    "gammainc",
    "gammaincc",
    "gammaln",
    "i0",
    "i0e",
    "i1",
    "i1e",
    "log1p",
    "log_ndtr",
    "log_softmax",
    "logit",
    "logsumexp",
    "modified_bessel_i0",
    "modified_bessel_i1",
    "multigammaln",
    "ndtr",
    "ndtri",
    "polygamma",
    "psi",
    "round",
    "sinc",
    "softmax",
    "spherical_bessel_j0",
    "xlog1py",
    "xlogy",
    "zeta",
]
