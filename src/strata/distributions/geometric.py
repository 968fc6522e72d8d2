"""``Geometric(probs=None, logits=None)``: failures before the first success, on {0, 1, ...}
(``Tensor.geometric_`` counts trials instead, on {1, 2, ...})."""

from .. import creation
from ..autograd.grad_mode import no_grad
from ..core import dtype as D
from ..nn import functional as F
from . import constraints
from .distribution import Distribution
from .utils import ProbsOrLogits, broadcast_all


class Geometric(ProbsOrLogits, Distribution):
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, probs=None, logits=None, validate_args=None):
        super().__init__(self._set_param(probs, logits), validate_args=validate_args)
        if self._validate_args and probs is not None and not bool((self.probs > 0).all()):
            # probs = 0 is in the unit interval but has no success to wait for
            param = self.probs
            raise ValueError(
                f"Expected parameter probs ({type(param).__name__} of shape "
                f"{tuple(param.shape)}) of distribution {self!r} to be positive but found "
                f"invalid values:\n{param[~(param > 0)]}")

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(Geometric, batch_shape, ("probs", "logits"), _instance)

    @property
    def mean(self):
        return 1.0 / self.probs - 1.0

    @property
    def mode(self):
        return creation.zeros_like(self.probs)

    @property
    def variance(self):
        return (1.0 / self.probs - 1.0) / self.probs

    def sample(self, sample_shape=()):
        """floor(log u / log(1 - p)), by inversion of the CDF."""
        shape = tuple(self._extended_shape(sample_shape))
        tiny = D.finfo(self.probs.dtype).tiny
        with no_grad():
            u = creation.empty(shape, dtype=self.probs.dtype).uniform_(tiny, 1)
            return (u.log() / (-self.probs).log1p()).floor()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value, probs = broadcast_all(value, self.probs)
        probs = probs.masked_fill((probs == 1) & (value == 0), 0)   # 0 * log(0) = 0
        return value * (-probs).log1p() + self.probs.log()

    def entropy(self):
        return F.binary_cross_entropy_with_logits(self.logits, self.probs,
                                                  reduction="none") / self.probs
