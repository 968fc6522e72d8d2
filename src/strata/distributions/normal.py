"""``Normal(loc, scale)`` with reparameterised sampling."""

import math

from .. import creation
from ..core.shape import broadcast_shapes
from .distribution import Distribution


def _as_tensor(x, ref=None):
    if hasattr(x, "_keyset"):
        return x
    return creation.tensor(float(x), dtype=ref.dtype if ref is not None else None)


class Normal(Distribution):
    has_rsample = True
    arg_names = ("loc", "scale")

    def __init__(self, loc, scale, validate_args=None):
        loc = _as_tensor(loc, scale if hasattr(scale, "_keyset") else None)
        scale = _as_tensor(scale, loc)
        shape = broadcast_shapes(tuple(loc.shape), tuple(scale.shape))
        self.loc, self.scale = loc.expand(shape), scale.expand(shape)
        if validate_args is not False and bool((scale <= 0).any()):
            raise ValueError("Expected parameter scale of distribution Normal to satisfy the "
                             "constraint GreaterThan(lower_bound=0.0), but found invalid values")
        super().__init__(shape, (), validate_args)

    @property
    def mean(self):
        return self.loc

    @property
    def stddev(self):
        return self.scale

    @property
    def variance(self):
        return self.scale.pow(2)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        eps = creation.randn(shape, dtype=self.loc.dtype)
        return self.loc + eps * self.scale

    def log_prob(self, value):
        var = self.scale ** 2
        return -((value - self.loc) ** 2) / (2 * var) - self.scale.log() - \
            math.log(math.sqrt(2 * math.pi))

    def entropy(self):
        return 0.5 + 0.5 * math.log(2 * math.pi) + self.scale.log()
