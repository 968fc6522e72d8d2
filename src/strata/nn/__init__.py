"""``strata.nn``: functional ops now; Module, layers and init come with the autograd work."""

from . import functional  # noqa: F401
