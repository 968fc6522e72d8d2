"""``strata.fx``, as ``torch.fx``: a re-export of the compiler's graph IR (strata.compile.fx)."""

from ..compile.fx import *  # noqa: F401,F403
from ..compile.fx import __all__  # noqa: F401
