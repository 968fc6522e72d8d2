"""CPU kernels for ``ops/distributions.py``: NumPy's samplers, drawing from strata's generator.

The streams differ from PyTorch's (NumPy's Marsaglia-Tsang gamma, PTRS Poisson, BTPE binomial
against PyTorch's own), the distributions do not. Gamma draws are clamped to the dtype's smallest
normal number, as PyTorch does, so a Dirichlet normalisation never divides by zero.
``_standard_gamma_grad`` is ATen's ``standard_gamma_grad_one`` (``ATen/native/Distributions.h``),
vectorised: one formula per region of (alpha, x), picked with ``np.where``.
"""

import numpy as np

from ...core import dtype as D
from ...ops import distributions as DS
from ...random import generator_for
from .array import data, wrap
from .special_gamma import digamma


def _gamma_draws(alpha, dtype, generator):
    """Standard Gamma(alpha) draws in float64, clamped to ``dtype``'s smallest normal. As in
    PyTorch, alpha <= 0 or nan gives that smallest normal and alpha = inf gives inf (NumPy
    refuses such shapes)."""
    alpha = np.asarray(alpha, dtype=np.float64)
    valid = (alpha > 0) & (alpha < np.inf)
    draws = generator_for(generator).standard_gamma(np.where(valid, alpha, 1.0))
    draws = np.where(valid, draws, np.where(alpha == np.inf, np.inf, 0.0))
    return np.maximum(draws, D.finfo(dtype).tiny)


def _standard_gamma(self, generator=None):
    spec = DS._standard_gamma.meta(self, generator)
    alpha = data(self).astype(np.float64)
    return wrap(_gamma_draws(alpha, spec.dtype, generator), spec.dtype)


def _small_x(alpha, x):
    """A Taylor series of the Gamma CDF for x < 0.8."""
    numer, denom = np.ones_like(x), alpha.copy()
    series1, series2 = numer / denom, numer / (denom * denom)
    for i in range(1, 6):
        numer = numer * (-x / i)
        denom = denom + 1
        series1 = series1 + numer / denom
        series2 = series2 + numer / (denom * denom)
    pow_x_alpha = x ** alpha
    pdf = x ** (alpha - 1) * np.exp(-x)
    cdf = pow_x_alpha * series1
    cdf_alpha = (np.log(x) - digamma(alpha).reshape(x.shape)) * cdf - pow_x_alpha * series2
    result = -cdf_alpha / pdf
    return np.where(np.isnan(result), 0.0, result)


# ATen's region bounds are float literals (0.8f), compared in double
_F32 = {v: float(np.float32(v)) for v in (0.8, 0.9, 1.1)}


def _large_alpha(alpha, x):
    """Rice's saddle point expansion for alpha > 8."""
    near = (_F32[0.9] * alpha <= x) & (x <= _F32[1.1] * alpha)
    numer_1 = 1 + 24 * alpha * (1 + 12 * alpha)
    numer_2 = 1440 * alpha * alpha + 6 * x * (53 - 120 * x) - 65 * x * x / alpha + \
        alpha * (107 + 3600 * x)
    close = numer_1 * numer_2 / (1244160 * alpha ** 4)
    denom = np.sqrt(8 * alpha)
    term2 = denom / (alpha - x)
    term3 = (x - alpha - alpha * np.log(x / alpha)) ** -1.5
    term23 = np.where(x < alpha, term2 - term3, term2 + term3)
    term1 = np.log(x / alpha) * term23 - np.sqrt(2 / alpha) * (alpha + x) / (alpha - x) ** 2
    stirling = 1 + 1 / (12 * alpha) * (1 + 1 / (24 * alpha))
    return np.where(near, close, -stirling * x * term1 / denom)


_COEF_UV = np.array([
    [0.16009398, -0.094634809, 0.025146376, -0.0030648343,
     1, 0.32668115, 0.10406089, 0.0014179084],
    [0.53487893, 0.1298071, 0.065735949, -0.0015649758,
     0.16639465, 0.020070113, -0.0035938915, -0.00058392623],
    [0.040121004, -0.0065914022, -0.0026286047, -0.0013441777,
     0.017050642, -0.0021309326, 0.00085092367, -1.5247877e-07],
])


def _rational(alpha, x):
    """A bivariate rational approximation in u = log(x / alpha), v = log(alpha)."""
    u, v = np.log(x / alpha)[..., None], np.log(alpha)
    c = _COEF_UV[0] + u * (_COEF_UV[1] + u * _COEF_UV[2])
    p = c[..., 0] + v * (c[..., 1] + v * (c[..., 2] + v * c[..., 3]))
    q = c[..., 4] + v * (c[..., 5] + v * (c[..., 6] + v * c[..., 7]))
    return np.exp(p / q)


def _standard_gamma_grad(self, output):
    spec = DS._standard_gamma_grad.meta(self, output)
    alpha, x = np.broadcast_arrays(data(self).astype(np.float64),
                                   data(output).astype(np.float64))
    with np.errstate(all="ignore"):
        grad = np.where(x < _F32[0.8], _small_x(alpha, x),
                        np.where(alpha > 8.0, _large_alpha(alpha, x), _rational(alpha, x)))
    return wrap(grad, spec.dtype)


def _sample_dirichlet(self, generator=None):
    spec = DS._sample_dirichlet.meta(self, generator)
    gammas = _gamma_draws(data(self).astype(np.float64), spec.dtype, generator)
    total = gammas.sum(-1, keepdims=True) if gammas.ndim else gammas   # 0-dim: one category
    return wrap(gammas / total, spec.dtype)


_POISSON_RATE_MAX = 9.2e18


def _poisson(self, generator=None):
    spec = DS.poisson.meta(self, generator)
    rate = data(self).astype(np.float64)
    if not np.all(rate >= 0):
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    # Rates past NumPy's limit (~9.2e18, inf): PyTorch's int64 count overflows to -2**63.
    huge = rate > _POISSON_RATE_MAX
    draws = np.asarray(generator_for(generator).poisson(np.where(huge, 0.0, rate)),
                       dtype=np.float64)   # a 0-dim rate draws a Python int
    return wrap(np.where(huge, float(-2 ** 63), draws), spec.dtype)


def _binomial(count, prob, generator=None):
    spec = DS.binomial.meta(count, prob, generator)
    count = data(count).astype(np.float64)
    if not (count < 2.0 ** 63).all():   # inf, nan, huge: PyTorch's sampler never returns
        raise RuntimeError("binomial: count must be finite and below 2**63")
    n = np.maximum(np.floor(count), 0).astype(np.int64)
    p = data(prob).astype(np.float64)
    n, p = np.broadcast_arrays(n, p)
    nan = np.isnan(p)
    draws = generator_for(generator).binomial(n, np.where(nan, 0.0, np.clip(p, 0.0, 1.0)))
    return wrap(np.where(nan, np.nan, draws), spec.dtype)   # a nan probability draws nan


KERNELS = {
    DS._standard_gamma: _standard_gamma, DS._standard_gamma_grad: _standard_gamma_grad,
    DS._sample_dirichlet: _sample_dirichlet, DS.poisson: _poisson, DS.binomial: _binomial,
}
