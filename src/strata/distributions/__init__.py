"""``strata.distributions``: probability distributions with PyTorch's API
(``torch/distributions``)."""

from .bernoulli import Bernoulli  # noqa: F401
from .categorical import Categorical  # noqa: F401
from .distribution import Distribution  # noqa: F401
from .normal import Normal  # noqa: F401
