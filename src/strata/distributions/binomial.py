"""``Binomial(total_count=1, probs=None, logits=None)``: successes in ``total_count`` trials."""

from .. import creation
from ..ops import distributions as DS
from . import constraints
from .distribution import Distribution
from .utils import ProbsOrLogits, broadcast_all, one_of


def _clamp_by_zero(x):
    return (x.clamp(min=0) + x - x.clamp(max=0)) / 2


class Binomial(ProbsOrLogits, Distribution):
    arg_constraints = {"total_count": constraints.nonnegative_integer,
                       "probs": constraints.unit_interval, "logits": constraints.real}
    has_enumerate_support = True

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        name, value = one_of(probs, logits)
        total_count, param = broadcast_all(total_count, value)
        self.total_count = total_count.type_as(param)
        setattr(self, name, param)
        super().__init__(param.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(Binomial, batch_shape, ("total_count", "probs", "logits"),
                                   _instance)

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self.total_count)

    @property
    def mean(self):
        return self.total_count * self.probs

    @property
    def mode(self):
        return ((self.total_count + 1) * self.probs).floor().clamp(max=self.total_count)

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=()):
        shape = tuple(self._extended_shape(sample_shape))
        return DS.binomial(self.total_count.detach().expand(shape),
                           self.probs.detach().expand(shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        n, logits = self.total_count, self.logits
        normalize = n * _clamp_by_zero(logits) + n * (-logits.abs()).exp().log1p() - \
            (n + 1).lgamma()
        return value * logits - (value + 1).lgamma() - (n - value + 1).lgamma() - normalize

    def _homogeneous_count(self, what):
        total_count = int(self.total_count.max())
        if not self.total_count.min() == total_count:
            raise NotImplementedError(f"Inhomogeneous total count not supported by `{what}`.")
        return total_count

    def entropy(self):
        self._homogeneous_count("entropy")
        log_prob = self.log_prob(self.enumerate_support(False))
        return -(log_prob.exp() * log_prob).sum(0)

    def enumerate_support(self, expand=True):
        total_count = self._homogeneous_count("enumerate_support")
        values = creation.arange(1 + total_count, dtype=self._param.dtype)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        return values.expand((-1,) + tuple(self._batch_shape)) if expand else values
