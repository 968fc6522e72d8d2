"""``strata.distributions``: probability distributions with PyTorch's API
(``torch/distributions``): parameters validated against ``constraints``, ``sample``/``rsample``
(reparameterised where PyTorch has it), ``log_prob``, moments, ``kl_divergence``."""

from . import constraints, kl_mixed, transforms  # noqa: F401  (kl_mixed registers KL rules)
from .bernoulli import Bernoulli  # noqa: F401
from .beta import Beta  # noqa: F401
from .binomial import Binomial  # noqa: F401
from .categorical import Categorical  # noqa: F401
from .cauchy import Cauchy  # noqa: F401
from .chi2 import Chi2  # noqa: F401
from .dirichlet import Dirichlet  # noqa: F401
from .distribution import Distribution  # noqa: F401
from .exponential import Exponential  # noqa: F401
from .gamma import Gamma  # noqa: F401
from .geometric import Geometric  # noqa: F401
from .gumbel import Gumbel  # noqa: F401
from .half_cauchy import HalfCauchy  # noqa: F401
from .half_normal import HalfNormal  # noqa: F401
from .independent import Independent  # noqa: F401
from .kl import kl_divergence, register_kl  # noqa: F401
from .laplace import Laplace  # noqa: F401
from .log_normal import LogNormal  # noqa: F401
from .mixture_same_family import MixtureSameFamily  # noqa: F401
from .multinomial import Multinomial  # noqa: F401
from .multivariate_normal import MultivariateNormal  # noqa: F401
from .normal import Normal  # noqa: F401
from .one_hot_categorical import OneHotCategorical  # noqa: F401
from .poisson import Poisson  # noqa: F401
from .relaxed_bernoulli import RelaxedBernoulli  # noqa: F401
from .studentT import StudentT  # noqa: F401
from .transformed_distribution import TransformedDistribution  # noqa: F401
from .transforms import (  # noqa: F401
    AbsTransform,
    AffineTransform,
    ExpTransform,
    SigmoidTransform,
    Transform,
)
from .uniform import Uniform  # noqa: F401
from .von_mises import VonMises  # noqa: F401
