"""``MixtureSameFamily(mixture_distribution, component_distribution)``: a Categorical picks one
of the k components the rightmost batch dim of ``component_distribution`` holds (a Gaussian
mixture: ``Normal(loc[..., k], scale[..., k])``); ``log_prob`` is the logsumexp over the
components of their log-probability plus the mixture's log-weight. As PyTorch's module."""

from ..autograd import no_grad
from ..core.shape import Size
from . import constraints
from .categorical import Categorical
from .distribution import Distribution


class MixtureSameFamily(Distribution):
    arg_constraints = {}
    has_rsample = False

    def __init__(self, mixture_distribution, component_distribution, validate_args=None):
        if not isinstance(mixture_distribution, Categorical):
            raise ValueError(" The Mixture distribution needs to be an  instance of "
                             "torch.distributions.Categorical")
        if not isinstance(component_distribution, Distribution):
            raise ValueError("The Component distribution need to be an instance of "
                             "torch.distributions.Distribution")
        mixture_batch = mixture_distribution.batch_shape
        component_batch = component_distribution.batch_shape[:-1]
        for a, b in zip(reversed(mixture_batch), reversed(component_batch)):
            if a != 1 and b != 1 and a != b:
                raise ValueError(f"`mixture_distribution.batch_shape` ({mixture_batch}) is not "
                                 f"compatible with `component_distribution.batch_shape`"
                                 f"({component_batch})")
        km = mixture_distribution.logits.shape[-1]
        kc = component_distribution.batch_shape[-1]
        if km != kc:
            raise ValueError(f"`mixture_distribution component` ({km}) does not equal "
                             f"`component_distribution.batch_shape[-1]` ({kc})")
        self._mixture_distribution = mixture_distribution
        self._component_distribution = component_distribution
        self._num_component = km
        self._event_ndims = len(component_distribution.event_shape)
        super().__init__(batch_shape=component_batch,
                         event_shape=component_distribution.event_shape,
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(MixtureSameFamily, _instance)
        batch_shape = Size(batch_shape)
        new._component_distribution = self._component_distribution.expand(
            tuple(batch_shape) + (self._num_component,))
        new._mixture_distribution = self._mixture_distribution.expand(batch_shape)
        new._num_component = self._num_component
        new._event_ndims = self._event_ndims
        Distribution.__init__(new, batch_shape, new._component_distribution.event_shape,
                              validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property
    def support(self):
        return self._component_distribution.support

    @property
    def mixture_distribution(self):
        return self._mixture_distribution

    @property
    def component_distribution(self):
        return self._component_distribution

    @property
    def mean(self):
        probs = self._pad_mixture_dimensions(self._mixture_distribution.probs)
        return (probs * self._component_distribution.mean).sum(-1 - self._event_ndims)

    @property
    def variance(self):
        probs = self._pad_mixture_dimensions(self._mixture_distribution.probs)
        component = self._component_distribution
        axis = -1 - self._event_ndims
        mean_of_variances = (probs * component.variance).sum(axis)
        variance_of_means = (probs * (component.mean - self._pad(self.mean)) ** 2.0).sum(axis)
        return mean_of_variances + variance_of_means

    def cdf(self, x):
        x = self._pad(x)
        return (self._component_distribution.cdf(x) * self._mixture_distribution.probs).sum(-1)

    def log_prob(self, x):
        if self._validate_args:
            self._validate_sample(x)
        log_prob_x = self._component_distribution.log_prob(self._pad(x))        # [S, B, k]
        log_weights = self._mixture_distribution.logits.log_softmax(-1)         # [B, k]
        return (log_prob_x + log_weights).logsumexp(-1)

    def sample(self, sample_shape=()):
        with no_grad():
            sample_shape = Size(sample_shape)
            gather_dim = len(sample_shape) + len(self.batch_shape)
            event_shape = tuple(self.event_shape)
            picks = self._mixture_distribution.sample(sample_shape)             # [S, B]
            samples = self._component_distribution.sample(sample_shape)         # [S, B, k, E]
            index = picks.reshape(*picks.shape, *([1] * (len(event_shape) + 1)))
            index = index.repeat(*([1] * len(picks.shape)), 1, *event_shape)
            return samples.gather(gather_dim, index).squeeze(gather_dim)

    def _pad(self, x):
        return x.unsqueeze(-1 - self._event_ndims)

    def _pad_mixture_dimensions(self, x):
        pad = 0 if len(self._mixture_distribution.batch_shape) == 1 else \
            len(self.batch_shape) - len(self._mixture_distribution.batch_shape)
        shape = tuple(x.shape)
        return x.reshape(*shape[:-1], *([1] * pad), shape[-1], *([1] * self._event_ndims))

    def __repr__(self):
        return (f"MixtureSameFamily(\n  {self._mixture_distribution},\n"
                f"  {self._component_distribution})")
