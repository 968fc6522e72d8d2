"""``strata.utils``: backend registration helpers (and, later, data loading)."""

from .backend_registration import rename_privateuse1_backend  # noqa: F401
