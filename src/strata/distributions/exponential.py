"""``Exponential(rate)``: waiting times of a Poisson process."""

from .. import creation
from . import constraints
from .distribution import Distribution
from .utils import batch_shape_of, broadcast_all


class Exponential(Distribution):
    arg_constraints = {"rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, rate, validate_args=None):
        (self.rate,) = broadcast_all(rate)
        super().__init__(batch_shape_of((rate,), self.rate), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(Exponential, batch_shape, ("rate",), _instance)

    @property
    def mean(self):
        return self.rate.reciprocal()

    @property
    def mode(self):
        return creation.zeros_like(self.rate)

    @property
    def stddev(self):
        return self.rate.reciprocal()

    @property
    def variance(self):
        return self.rate.pow(-2)

    def rsample(self, sample_shape=()):
        u = creation.rand(tuple(self._extended_shape(sample_shape)), dtype=self.rate.dtype)
        return -(-u).log1p() / self.rate   # an Exp(1) draw by inversion, scaled

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return self.rate.log() - self.rate * value

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 1 - (-self.rate * value).exp()

    def icdf(self, value):
        return -(-value).log1p() / self.rate

    def entropy(self):
        return 1.0 - self.rate.log()
