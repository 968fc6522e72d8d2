"""``Bernoulli(probs=None, logits=None)``."""

from ..nn import functional as F
from .distribution import Distribution


class Bernoulli(Distribution):
    arg_names = ("probs",)

    def __init__(self, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            self.probs = probs
            eps = 1.1920928955078125e-07
            p = probs.clamp(eps, 1 - eps)
            self.logits = p.log() - (1 - p).log()
        else:
            self.logits = logits
            self.probs = logits.sigmoid()
        super().__init__(self.probs.shape, (), validate_args)

    @property
    def mean(self):
        return self.probs

    @property
    def variance(self):
        return self.probs * (1 - self.probs)

    def _sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        return self.probs.expand(shape).bernoulli()

    def log_prob(self, value):
        return -F.binary_cross_entropy_with_logits(self.logits, value, reduction="none")

    def entropy(self):
        return F.binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none")
