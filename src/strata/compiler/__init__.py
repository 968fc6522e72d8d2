"""``strata.compiler``: the user-facing compiler controls (``torch.compiler``), re-exported
from ``strata/compile/``."""

from ..compile import disable, reset  # noqa: F401
from ..compile.backends import list_backends  # noqa: F401
from ..compile.capture.in_graph import is_compiling  # noqa: F401

__all__ = ["disable", "reset", "list_backends", "is_compiling"]
