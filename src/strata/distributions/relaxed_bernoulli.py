"""``RelaxedBernoulli(temperature, probs=None, logits=None)``: the Concrete (Gumbel-softmax)
relaxation of a Bernoulli, values in (0, 1) with reparameterised samples; as in PyTorch, the
sigmoid of a ``LogitRelaxedBernoulli`` (Maddison et al. 2017, Jang et al. 2017)."""


from .. import creation
from . import constraints
from .distribution import Distribution
from .transformed_distribution import TransformedDistribution
from .transforms import SigmoidTransform
from .utils import ProbsOrLogits, broadcast_all, clamp_probs


class LogitRelaxedBernoulli(ProbsOrLogits, Distribution):
    """The logit of a RelaxedBernoulli: (logit(u) + logit(p)) / temperature for u ~ U(0, 1)."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.real

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        self.temperature = temperature
        super().__init__(self._set_param(probs, logits), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._expand_params(LogitRelaxedBernoulli, batch_shape, ("probs", "logits"),
                                  _instance)
        new.temperature = self.temperature
        return new

    def rsample(self, sample_shape=()):
        shape = tuple(self._extended_shape(sample_shape))
        probs = clamp_probs(self.probs.expand(shape))
        uniforms = clamp_probs(creation.rand(shape, dtype=probs.dtype, device=probs.device))
        return (uniforms.log() - (-uniforms).log1p() + probs.log() - (-probs).log1p()) / \
            self.temperature

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        diff = logits - value.mul(self.temperature)
        return self.temperature.log() + diff - 2 * diff.exp().log1p()


class RelaxedBernoulli(TransformedDistribution):
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        base = LogitRelaxedBernoulli(temperature, probs, logits)
        super().__init__(base, SigmoidTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(RelaxedBernoulli, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def temperature(self):
        return self.base_dist.temperature

    @property
    def logits(self):
        return self.base_dist.logits

    @property
    def probs(self):
        return self.base_dist.probs
