"""``Categorical(probs=None, logits=None)``: one of K categories per batch element."""

import math

from .. import creation
from ..core import dtype as D
from ..core.shape import Size
from ..frontend.shape import broadcast_tensors
from . import constraints
from .distribution import Distribution
from .utils import ProbsOrLogits, one_of


class Categorical(ProbsOrLogits, Distribution):
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    has_enumerate_support = True
    _is_binary = False

    def __init__(self, probs=None, logits=None, validate_args=None):
        name, value = one_of(probs, logits)
        if value.dim() < 1:
            raise ValueError(f"`{name}` parameter must be at least one-dimensional.")
        if name == "probs":
            self.probs = value / value.sum(-1, keepdim=True)
        else:
            # PyTorch writes ``value - value.logsumexp(-1, keepdim=True)``: the same values (to
            # an ulp) and gradient, in one primitive here instead of a composite of eight ops
            self.logits = value.log_softmax(-1)
        self._num_events = self._param.shape[-1]
        batch_shape = self._param.shape[:-1] if self._param.dim() > 1 else Size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._expand_params(Categorical, batch_shape, ("probs", "logits"), _instance)
        new._num_events = self._num_events
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self._num_events - 1)

    @property
    def mean(self):
        return creation.full(self._extended_shape(), math.nan, dtype=self.probs.dtype)

    @property
    def mode(self):
        return self.probs.argmax(-1)

    @property
    def variance(self):
        return creation.full(self._extended_shape(), math.nan, dtype=self.probs.dtype)

    def sample(self, sample_shape=()):
        sample_shape = Size(sample_shape)
        probs = self.__dict__.get("probs")
        # from logits, the draws (which carry no gradient) come from a softmax that records no
        # node; ``probs`` itself is made, with its graph, on first use, as before
        probs_2d = probs.detach() if probs is not None else self.logits.detach().softmax(-1)
        if probs_2d.dim() != 2 or not self._num_events:   # a batch of one dim is 2-D already
            probs_2d = probs_2d.reshape(-1, self._num_events)
        n = sample_shape.numel()
        if n == 1:   # (batch, 1) holds its draws in the order (1, batch) does: no transpose
            samples = probs_2d.multinomial(1, True)
            if not sample_shape and self._param.dim() == 2:
                return samples.squeeze(1)   # (batch,): reshape's view, without its size rules
        elif n:
            samples = probs_2d.multinomial(n, True).t()
        else:
            samples = creation.empty((0, probs_2d.shape[0]), dtype=D.int64)
        return samples.reshape(self._extended_shape(sample_shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        # ``long()`` of an int64 tensor is the tensor itself: skip the conversion's call
        index = (value if value.dtype is D.int64 else value.long()).unsqueeze(-1)
        logits = self.logits
        if index._shape[:-1] == logits._shape[:-1]:   # one value per batch element: nothing
            return logits.gather(-1, index).squeeze(-1)   # to broadcast (fewer ops, same result)
        index, log_pmf = broadcast_tensors(index, logits)
        return log_pmf.gather(-1, index[..., :1]).squeeze(-1)

    def entropy(self):
        logits = self.logits.clamp(min=D.finfo(self.logits.dtype).min)
        return -(logits * self.probs).sum(-1)

    def enumerate_support(self, expand=True):
        values = creation.arange(self._num_events, dtype=D.int64)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        return values.expand((-1,) + tuple(self._batch_shape)) if expand else values
