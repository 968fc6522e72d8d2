"""``Cauchy(loc, scale)``: the ratio of two centred normals; no mean and infinite variance."""

import math

from .. import creation
from .loc_scale import LocScale


class Cauchy(LocScale):
    """Reparameterised by inversion: loc + scale * tan(pi * (u - 1/2)) for u ~ U(0, 1), which is
    how PyTorch's ``cauchy_`` draws."""

    @property
    def mean(self):
        return creation.full(tuple(self._extended_shape()), math.nan, dtype=self.loc.dtype)

    @property
    def variance(self):
        return creation.full(tuple(self._extended_shape()), math.inf, dtype=self.loc.dtype)

    def rsample(self, sample_shape=()):
        u = creation.rand(tuple(self._extended_shape(sample_shape)), dtype=self.loc.dtype)
        return self.loc + (math.pi * (u - 0.5)).tan() * self.scale

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return -math.log(math.pi) - self.scale.log() - \
            (((value - self.loc) / self.scale) ** 2).log1p()

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return ((value - self.loc) / self.scale).atan() / math.pi + 0.5

    def icdf(self, value):
        return (math.pi * (value - 0.5)).tan() * self.scale + self.loc

    def entropy(self):
        return math.log(4 * math.pi) + self.scale.log()
