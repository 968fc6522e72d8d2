"""``Multinomial(total_count=1, probs=None, logits=None)``: category counts over
``total_count`` draws of a Categorical; the last dim of ``probs`` indexes the categories.

``sample`` needs one ``total_count`` for the whole batch; ``log_prob`` takes any counts.

    >>> round(Multinomial(2, strata.tensor([1.0, 1.0])).log_prob(strata.tensor([2.0, 0.0]))
    ...       .item(), 4)
    -1.3863
"""

import math

from .. import creation
from ..core import dtype as D
from ..core.shape import Size
from . import constraints
from .binomial import Binomial
from .categorical import Categorical
from .distribution import Distribution
from .utils import broadcast_all


class Multinomial(Distribution):
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        if not isinstance(total_count, int):
            raise NotImplementedError("inhomogeneous total_count is not supported")
        self.total_count = total_count
        self._categorical = Categorical(probs=probs, logits=logits)
        # each category's count is Binomial(total_count, p_k): its pmf gives the entropy
        self._binomial = Binomial(total_count=total_count, probs=self.probs)
        super().__init__(self._categorical.batch_shape, self._categorical.param_shape[-1:],
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Multinomial, _instance)
        batch_shape = Size(batch_shape)
        new.total_count = self.total_count
        new._categorical = self._categorical.expand(batch_shape)
        new._binomial = self._binomial.expand(batch_shape + self._event_shape)
        Distribution.__init__(new, batch_shape, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=1)
    def support(self):
        return constraints.multinomial(self.total_count)

    @property
    def logits(self):
        return self._categorical.logits

    @property
    def probs(self):
        return self._categorical.probs

    @property
    def param_shape(self):
        return self._categorical.param_shape

    @property
    def mean(self):
        return self.probs * self.total_count

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=()):
        """``total_count`` Categorical draws, counted per category with ``scatter_add_``."""
        sample_shape = Size(sample_shape)
        samples = self._categorical.sample(Size((self.total_count,)) + sample_shape)
        samples = samples.permute(*range(1, samples.dim()), 0)   # the draws dim last
        counts = creation.zeros(tuple(self._extended_shape(sample_shape)), dtype=D.int64)
        counts.scatter_add_(-1, samples, creation.ones_like(samples))
        return counts.type_as(self.probs)

    def entropy(self):
        """n H(cat) - log n! + sum_k E[log x_k!], the expectation over Binomial(n, p_k)."""
        n = creation.tensor(self.total_count)
        term1 = n * self._categorical.entropy() - (n + 1).lgamma()
        support = self._binomial.enumerate_support(expand=False)[1:]
        binomial_probs = self._binomial.log_prob(support).exp()
        weights = (support + 1).lgamma()
        return term1 + (binomial_probs * weights).sum([0, -1])

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        log_factorial_n = (value.sum(-1) + 1).lgamma()
        log_factorial_xs = (value + 1).lgamma().sum(-1)
        logits = logits.masked_fill((value == 0) & (logits == -math.inf), 0)   # 0 * log 0 = 0
        return log_factorial_n - log_factorial_xs + (logits * value).sum(-1)
