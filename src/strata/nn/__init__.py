"""``strata.nn``: Module, layers, functional, init, utils — PyTorch's torch.nn."""

from . import functional, init, parallel  # noqa: F401
from . import utils as _nn_utils
from .modules import *  # noqa: F401,F403
from .modules import module  # noqa: F401
from .parameter import Buffer, Parameter, UninitializedBuffer, UninitializedParameter  # noqa: F401
from .parallel import DataParallel  # noqa: F401
from .functional.linear_loss import LinearCrossEntropyOptions  # noqa: F401

utils = _nn_utils   # the star import brought torch.nn.modules.utils in under this name
