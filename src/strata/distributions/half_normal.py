"""``HalfNormal(scale)``: |X| for X ~ Normal(0, scale)."""

import math

from .folded import Folded
from .normal import Normal


class HalfNormal(Folded):
    base_family = Normal

    @property
    def mean(self):
        return self.scale * math.sqrt(2 / math.pi)

    @property
    def variance(self):
        return self.scale.pow(2) * (1 - 2 / math.pi)
