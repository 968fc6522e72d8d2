"""``Categorical(probs=None, logits=None)``: one of K categories per batch element."""

from .. import creation
from ..core import dtype as D
from ..core.shape import Size
from .distribution import Distribution


class Categorical(Distribution):
    arg_names = ("probs",)

    def __init__(self, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            if probs.dim() < 1:
                raise ValueError("`probs` parameter must be at least one-dimensional.")
            self.probs = probs / probs.sum(-1, keepdim=True)
            if validate_args is not False and (
                    bool((probs < 0).any()) or not bool(probs.isfinite().all())):
                raise ValueError(f"Expected parameter probs (Tensor of shape {tuple(probs.shape)}) "
                                 "of distribution Categorical to satisfy the constraint "
                                 "Simplex(), but found invalid values")
            self.logits = self.probs.clamp(min=D.finfo(self.probs.dtype).tiny).log()
        else:
            if logits.dim() < 1:
                raise ValueError("`logits` parameter must be at least one-dimensional.")
            self.logits = logits - logits.logsumexp(dim=-1, keepdim=True)
            self.probs = self.logits.softmax(-1)
        self._num_events = self.probs.shape[-1]
        super().__init__(self.probs.shape[:-1], (), validate_args)

    @property
    def param_shape(self):
        return self.probs.shape

    @property
    def mean(self):
        return creation.full(self._extended_shape(), float("nan"), dtype=self.probs.dtype)

    def _sample(self, sample_shape=()):
        sample_shape = Size(sample_shape)
        probs_2d = self.probs.reshape(-1, self._num_events)
        n = sample_shape.numel()
        samples = probs_2d.multinomial(n, True).t() if n else \
            creation.empty((0, probs_2d.shape[0]), dtype=D.int64)
        return samples.reshape(self._extended_shape(sample_shape))

    def log_prob(self, value):
        if self._validate_args:
            if value.dtype.is_floating_point and not bool((value == value.floor()).all()):
                raise ValueError("Expected value argument to be within the support "
                                 "(IntegerInterval) of the distribution Categorical")
        value = value.long().unsqueeze(-1)
        value, log_pmf = _broadcast(value, self.logits)
        return log_pmf.gather(-1, value[..., :1]).squeeze(-1)

    def entropy(self):
        min_real = D.finfo(self.logits.dtype).min
        logits = self.logits.clamp(min=min_real)
        return -(logits * self.probs).sum(-1)

    def enumerate_support(self, expand=True):
        values = creation.arange(self._num_events, dtype=D.int64)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        return values.expand((-1,) + tuple(self._batch_shape)) if expand else values


def _broadcast(value, logits):
    """Broadcast value (..., 1) and logits (..., K) against each other, as PyTorch does."""
    from ..ops.shape import broadcast_to
    from ..core.shape import broadcast_shapes
    batch = broadcast_shapes(tuple(value.shape[:-1]), tuple(logits.shape[:-1]))
    return (broadcast_to(value, batch + (1,)),
            broadcast_to(logits, batch + (logits.shape[-1],)))
