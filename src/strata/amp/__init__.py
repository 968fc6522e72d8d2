"""``strata.amp``: automatic mixed precision — ``autocast`` and ``GradScaler``."""

from .autocast_mode import autocast, is_autocast_available  # noqa: F401
from .grad_scaler import GradScaler  # noqa: F401
