"""``strata.nn``: Module, layers, functional, init, utils — PyTorch's torch.nn."""

from . import functional, init, parallel, utils  # noqa: F401
from .modules import *  # noqa: F401,F403
from .modules import module  # noqa: F401
from .parameter import Buffer, Parameter  # noqa: F401
from .parallel import DataParallel  # noqa: F401
