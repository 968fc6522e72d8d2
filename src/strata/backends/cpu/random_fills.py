"""CPU kernels for ``ops/random_fills.py``: ``random_``, ``bernoulli_``, ``exponential_``,
``geometric_``, ``cauchy_`` and ``log_normal_`` drawn from the NumPy generator.

The continuous draws are PyTorch's transformations (``TransformationHelper.h``) of
``Generator.random`` doubles in [0, 1) or of standard normals, computed in double and cast
into ``self`` as PyTorch's ``static_cast`` does (``cast_into``); ``random_`` draws int64s
uniformly in its inclusive bounds with ``Generator.integers`` (unbiased, where PyTorch's
``random % range`` is biased by under 2**-32 for the ranges it takes 32-bit draws for).
"""

import math

import numpy as np

from ...ops import random_fills as RF
from ...random import generator_for
from .array import data
from .factory import cast_into, check_bernoulli_probs, fill_bernoulli, fill_bernoulli_probs

_INT64 = np.iinfo(np.int64)


def _store(self, values):
    """``self`` (any layout) gets ``values`` (doubles or int64s of its shape), cast to its dtype;
    a value past an integer dtype's range wraps as the C cast does, without NumPy's warning."""
    with np.errstate(invalid="ignore", over="ignore"):
        cast_into(data(self), values)
    return self


def _uniform(self, generator):
    return generator_for(generator).random(tuple(self.shape))


# --- random_ -------------------------------------------------------------------------------------

def _random_integers(self, bounds, generator):
    if not self.numel():
        return self
    low, high = bounds if bounds is not None else (_INT64.min, _INT64.max)
    values = generator_for(generator).integers(low, high, tuple(self.shape), dtype=np.int64,
                                               endpoint=True)
    return _store(self, values)


# --- bernoulli_ ----------------------------------------------------------------------------------

def bernoulli_float(self, p=0.5, generator=None):
    RF.bernoulli_float.meta(self, p)
    if self.numel():
        fill_bernoulli(data(self), p, generator)
    return self


def bernoulli_tensor_(self, p, generator=None):
    RF.bernoulli_tensor_.meta(self, p)
    if self.numel():
        probs = np.broadcast_to(data(p), tuple(self.shape))
        check_bernoulli_probs(probs)
        fill_bernoulli_probs(data(self), probs, generator)
    return self


# --- continuous (and geometric) ------------------------------------------------------------------

def exponential_(self, lambd=1.0, generator=None):
    """-log(1 - u) / lambda (0 included, as PyTorch's CPU draw)."""
    RF.exponential_.meta(self, lambd)
    if not self.numel():
        return self
    return _store(self, np.log1p(-_uniform(self, generator)) * (-1.0 / lambd))


def geometric_(self, p, generator=None):
    """ceil(log(u) / log(1 - p)): the number of trials up to the first success (from 1)."""
    RF.geometric_.meta(self, p)
    if not self.numel():
        return self
    with np.errstate(divide="ignore"):   # u = 0 (once in 2**53 draws) gives inf, as PyTorch's
        return _store(self, np.ceil(np.log(_uniform(self, generator)) / math.log(1.0 - p)))


def cauchy_(self, median=0.0, sigma=1.0, generator=None):
    """median + sigma * tan(pi * (u - 1/2)), the inverse of Cauchy's distribution function."""
    RF.cauchy_.meta(self, median, sigma)
    if not self.numel():
        return self
    return _store(self, median + sigma * np.tan(math.pi * (_uniform(self, generator) - 0.5)))


def log_normal_(self, mean=1.0, std=2.0, generator=None):
    """exp of a normal(mean, std) draw."""
    RF.log_normal_.meta(self, mean, std)
    if not self.numel():
        return self
    normal = generator_for(generator).standard_normal(tuple(self.shape))
    with np.errstate(over="ignore"):
        return _store(self, np.exp(normal * std + mean))


KERNELS = {
    **RF.random_kernels(_random_integers),
    RF.bernoulli_float: bernoulli_float, RF.bernoulli_tensor_: bernoulli_tensor_,
    RF.exponential_: exponential_, RF.geometric_: geometric_, RF.cauchy_: cauchy_,
    RF.log_normal_: log_normal_,
}
