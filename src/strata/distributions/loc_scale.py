"""What the location-scale families (Normal, Laplace, Cauchy) share: ``loc`` and ``scale``
broadcast together, ``expand``, and mean = mode = loc (Cauchy overrides mean: it has none)."""

from . import constraints
from .distribution import Distribution
from .utils import batch_shape_of, broadcast_all


class LocScale(Distribution):
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        super().__init__(batch_shape_of((loc, scale), self.loc), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        # the family (Normal, Laplace, Cauchy), so a user subclass with its own __init__ gets
        # PyTorch's "must also define a custom .expand()" error
        family = next(c for c in type(self).__mro__ if c.__base__ is LocScale)
        return self._expand_params(family, batch_shape, ("loc", "scale"), _instance)

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc
