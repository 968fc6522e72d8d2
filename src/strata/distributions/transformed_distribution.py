"""``TransformedDistribution(base_distribution, transforms)``: the distribution of
``transforms[-1](...transforms[0](x))`` for x from the base, with the change-of-variables
``log_prob``. The transforms here keep shapes and event dims (elementwise, or Affine over an
event), which is what the event-dim bookkeeping below assumes.
"""

from ..core.shape import Size
from . import constraints
from .distribution import Distribution
from .independent import Independent
from .transforms import Transform
from .utils import sum_rightmost


class TransformedDistribution(Distribution):
    arg_constraints = {}

    def __init__(self, base_distribution, transforms, validate_args=None):
        if isinstance(transforms, Transform):
            self.transforms = [transforms]
        elif isinstance(transforms, list):
            if not all(isinstance(t, Transform) for t in transforms):
                raise ValueError("transforms must be a Transform or a list of Transforms")
            self.transforms = transforms
        else:
            raise ValueError(  # noqa: TRY004  (PyTorch's exception type)
                f"transforms must be a Transform or list, but was {transforms}")
        base_shape = tuple(base_distribution.batch_shape) + tuple(base_distribution.event_shape)
        base_event_dim = len(base_distribution.event_shape)
        domain_event_dim = max((t.domain.event_dim for t in self.transforms), default=0)
        if len(base_shape) < domain_event_dim:
            raise ValueError(f"base_distribution needs to have shape with size at least "
                             f"{domain_event_dim}, but got {base_shape}.")
        forward_shape = base_shape
        for t in self.transforms:
            forward_shape = tuple(t.forward_shape(forward_shape))
        expanded_base_shape = forward_shape
        for t in reversed(self.transforms):
            expanded_base_shape = tuple(t.inverse_shape(expanded_base_shape))
        if base_shape != expanded_base_shape:
            base_batch = expanded_base_shape[:len(expanded_base_shape) - base_event_dim]
            base_distribution = base_distribution.expand(base_batch)
        if domain_event_dim > base_event_dim:
            base_distribution = Independent(base_distribution, domain_event_dim - base_event_dim)
        self.base_dist = base_distribution
        event_dim = max(domain_event_dim, base_event_dim)
        cut = len(forward_shape) - event_dim
        super().__init__(forward_shape[:cut], forward_shape[cut:], validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(TransformedDistribution, _instance)
        batch_shape = Size(batch_shape)
        shape = tuple(batch_shape) + tuple(self._event_shape)
        for t in reversed(self.transforms):
            shape = tuple(t.inverse_shape(shape))
        base_batch = shape[:len(shape) - len(self.base_dist.event_shape)]
        new.base_dist = self.base_dist.expand(base_batch)
        new.transforms = self.transforms
        Distribution.__init__(new, batch_shape, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property(is_discrete=False)
    def support(self):
        if not self.transforms:
            return self.base_dist.support
        support = self.transforms[-1].codomain
        if len(self._event_shape) > support.event_dim:
            support = constraints.independent(support, len(self._event_shape) - support.event_dim)
        return support

    @property
    def has_rsample(self):
        return self.base_dist.has_rsample

    def sample(self, sample_shape=()):
        x = self.base_dist.sample(sample_shape)
        for t in self.transforms:
            x = t(x)
        return x

    def rsample(self, sample_shape=()):
        x = self.base_dist.rsample(sample_shape)
        for t in self.transforms:
            x = t(x)
        return x

    def log_prob(self, value):
        """Pull ``value`` back through the transforms, subtracting each log |Jacobian|."""
        if self._validate_args:
            self._validate_sample(value)
        event_dim = len(self._event_shape)
        log_prob, y = 0.0, value
        for t in reversed(self.transforms):
            x = t.inv(y)
            event_dim += t.domain.event_dim - t.codomain.event_dim
            log_prob = log_prob - sum_rightmost(t.log_abs_det_jacobian(x, y),
                                                event_dim - t.domain.event_dim)
            y = x
        return log_prob + sum_rightmost(self.base_dist.log_prob(y),
                                        event_dim - len(self.base_dist.event_shape))

    def _monotonize_cdf(self, value):
        """A decreasing transform flips the CDF: F(y) = 1 - F_base(x)."""
        sign = 1
        for t in self.transforms:
            sign = sign * t.sign
        if isinstance(sign, int) and sign == 1:
            return value
        return sign * (value - 0.5) + 0.5

    def cdf(self, value):
        for t in self.transforms[::-1]:
            value = t.inv(value)
        if self._validate_args:
            self.base_dist._validate_sample(value)
        return self._monotonize_cdf(self.base_dist.cdf(value))

    def icdf(self, value):
        value = self.base_dist.icdf(self._monotonize_cdf(value))
        for t in self.transforms:
            value = t(value)
        return value
