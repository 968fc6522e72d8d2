"""``strata.utils``: backend registration helpers (and, later, data loading)."""

from .backend_registration import rename_privateuse1_backend  # noqa: F401
from . import data  # noqa: F401
from . import tensorboard  # noqa: F401,E402
