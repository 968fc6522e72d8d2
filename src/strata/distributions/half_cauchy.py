"""``HalfCauchy(scale)``: |X| for X ~ Cauchy(0, scale); infinite mean."""

import math

from .. import creation
from .cauchy import Cauchy
from .folded import Folded


class HalfCauchy(Folded):
    base_family = Cauchy

    @property
    def mean(self):
        return creation.full(tuple(self._extended_shape()), math.inf, dtype=self.scale.dtype)

    @property
    def variance(self):
        return self.base_dist.variance

    def _as_value(self, value):
        # PyTorch's HalfCauchy (not HalfNormal) takes a number or a tensor of another dtype
        return creation.as_tensor(value, dtype=self.scale.dtype)
