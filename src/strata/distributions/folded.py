"""What HalfNormal and HalfCauchy share: |X| for X from a zero-centred symmetric base, so the
density is twice the base's on [0, inf) and the CDF is 2 F(x) - 1 (``torch/distributions/
half_normal.py``, ``half_cauchy.py``)."""

import math

from .. import creation
from . import constraints
from .transformed_distribution import TransformedDistribution
from .transforms import AbsTransform


class Folded(TransformedDistribution):
    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    base_family = None   # the symmetric base: Normal or Cauchy

    def __init__(self, scale, validate_args=None):
        base_dist = self.base_family(0, scale, validate_args=False)
        super().__init__(base_dist, AbsTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        family = next(c for c in type(self).__mro__ if c.__base__ is Folded)
        new = self._get_checked_instance(family, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def scale(self):
        return self.base_dist.scale

    @property
    def mode(self):
        return creation.zeros_like(self.scale)

    def _as_value(self, value):
        return value

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value = self._as_value(value)
        log_prob = self.base_dist.log_prob(value) + math.log(2)
        return log_prob.where(value >= 0, -math.inf)

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 2 * self.base_dist.cdf(value) - 1

    def icdf(self, prob):
        return self.base_dist.icdf((prob + 1) / 2)

    def entropy(self):
        return self.base_dist.entropy() - math.log(2)
