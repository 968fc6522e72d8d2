"""``strata.library``: the public face of ``strata/dispatch/library.py`` (as ``torch.library``)."""

from .dispatch.library import (  # noqa: F401
    Library, define, fallthrough_kernel, impl, register_fake,
)
