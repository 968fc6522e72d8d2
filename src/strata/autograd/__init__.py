"""Layer 4: autograd. For now only the ADInplaceOrView key and a transparent Autograd key."""

from ..dispatch.dispatcher import FALLTHROUGH, register_fallback
from ..dispatch.keys import BACKENDS, DispatchKey
from . import inplace_or_view


def register():
    inplace_or_view.register()
    for backend in BACKENDS:
        register_fallback(getattr(DispatchKey, "Autograd" + backend), FALLTHROUGH)
