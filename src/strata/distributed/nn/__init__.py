"""``strata.distributed.nn``: collectives that autograd can differentiate through."""

from . import functional  # noqa: F401
