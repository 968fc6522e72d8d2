"""``strata.distributions``: probability distributions with PyTorch's API
(``torch/distributions``): parameters validated against ``constraints``, ``sample``/``rsample``
(reparameterised where PyTorch has it), ``log_prob``, moments, ``kl_divergence``."""

from . import constraints, transforms  # noqa: F401
from .bernoulli import Bernoulli  # noqa: F401
from .beta import Beta  # noqa: F401
from .binomial import Binomial  # noqa: F401
from .categorical import Categorical  # noqa: F401
from .dirichlet import Dirichlet  # noqa: F401
from .distribution import Distribution  # noqa: F401
from .exponential import Exponential  # noqa: F401
from .gamma import Gamma  # noqa: F401
from .independent import Independent  # noqa: F401
from .kl import kl_divergence, register_kl  # noqa: F401
from .laplace import Laplace  # noqa: F401
from .log_normal import LogNormal  # noqa: F401
from .multivariate_normal import MultivariateNormal  # noqa: F401
from .normal import Normal  # noqa: F401
from .one_hot_categorical import OneHotCategorical  # noqa: F401
from .poisson import Poisson  # noqa: F401
from .transformed_distribution import TransformedDistribution  # noqa: F401
from .transforms import AffineTransform, ExpTransform, SigmoidTransform, Transform  # noqa: F401
from .uniform import Uniform  # noqa: F401
