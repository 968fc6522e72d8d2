"""``strata.utils``: backend registration helpers, data loading, activation checkpointing."""

from . import (
    checkpoint,  # noqa: F401
    data,  # noqa: F401
    dlpack,  # noqa: F401
    tensorboard,  # noqa: F401
)
from .backend_registration import rename_privateuse1_backend  # noqa: F401
