"""Thread-local dispatcher state, behind one accessor: ``state()``.

* ``include``/``exclude``: key bits added to / removed from every call's key set
  (``c10/core/impl/LocalDispatchKeySet.h``). ``inference_mode`` excludes autograd this way.
* ``grad_enabled``: read by the autograd kernel; ``no_grad`` flips it without touching keys.
* ``mode_stack``: active dispatch modes (``strata.dispatch.modes``).
"""

import threading
from contextlib import contextmanager


class _DispatchState(threading.local):
    include = 0
    exclude = 0
    grad_enabled = True
    inference_mode = False

    def __init__(self):
        self.mode_stack = []


_state = _DispatchState()
# Has any thread entered inference mode? Until then making a tensor skips the thread-local read
# of ``inference_mode`` (an attribute of a ``threading.local`` costs about 0.1 us).
inference_mode_used = False


def state() -> _DispatchState:
    return _state


def is_compiling() -> bool:
    """True inside a captured frame: capture folds the call to the constant True
    (compile/capture/builtins.py). It lives here so that layers above the compiler (optim/)
    can ask."""
    return False


@contextmanager
def include_keys(keyset: int):
    """Add keys to every dispatch in this thread (``IncludeDispatchKeyGuard``)."""
    s = _state
    saved = s.include
    s.include = saved | keyset
    try:
        yield
    finally:
        s.include = saved


@contextmanager
def exclude_keys(keyset: int):
    """Remove keys from every dispatch in this thread (``ExcludeDispatchKeyGuard``)."""
    s = _state
    saved = s.exclude
    s.exclude = saved | keyset
    try:
        yield
    finally:
        s.exclude = saved
