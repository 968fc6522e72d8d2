"""``Dirichlet(concentration)``: distributions over the probability simplex.

``rsample`` normalises independent Gamma draws, each reparameterised by ``_standard_gamma``'s
implicit gradient, so gradients reach the concentration through the normalisation. (PyTorch
differentiates the Dirichlet CDF directly with ``_dirichlet_grad``: a different, equally unbiased
gradient estimator; the samples have the same distribution.)
"""

from ..nn import functional as F
from ..ops import distributions as DS
from . import constraints
from .distribution import Distribution


class Dirichlet(Distribution):
    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, concentration, validate_args=None):
        if concentration.dim() < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        super().__init__(concentration.shape[:-1], concentration.shape[-1:],
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(Dirichlet, batch_shape, ("concentration",), _instance)

    def rsample(self, sample_shape=()):
        shape = tuple(self._extended_shape(sample_shape))
        gammas = DS._standard_gamma(self.concentration.expand(shape))
        return gammas / gammas.sum(-1, keepdim=True)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        c = self.concentration
        return (c - 1.0).xlogy(value).sum(-1) + c.sum(-1).lgamma() - c.lgamma().sum(-1)

    @property
    def mean(self):
        return self.concentration / self.concentration.sum(-1, True)

    @property
    def mode(self):
        """The mode; where every concentration is below 1 it sits on a vertex (one-hot)."""
        cm1 = (self.concentration - 1).clamp(min=0.0)
        mode = cm1 / cm1.sum(-1, True)
        vertex = F.one_hot(mode.argmax(-1), cm1.shape[-1]).to(mode.dtype)
        below_one = (self.concentration < 1).all(-1, keepdim=True)
        return vertex.where(below_one, mode)

    @property
    def variance(self):
        c = self.concentration
        c0 = c.sum(-1, True)
        return c * (c0 - c) / (c0.pow(2) * (c0 + 1))

    def entropy(self):
        c = self.concentration
        k, a0 = c.size(-1), c.sum(-1)
        return c.lgamma().sum(-1) - a0.lgamma() - (k - a0) * a0.digamma() - \
            ((c - 1.0) * c.digamma()).sum(-1)
