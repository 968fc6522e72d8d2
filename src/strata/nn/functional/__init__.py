"""``strata.nn.functional``: PyTorch's functional API, one submodule per kind of op."""

from .activations import *  # noqa: F401,F403
from .attention import *  # noqa: F401,F403
from .fractional import *  # noqa: F401,F403
from .layers import *  # noqa: F401,F403
from .linear_loss import *  # noqa: F401,F403
from .losses import *  # noqa: F401,F403
from .sampling import *  # noqa: F401,F403
