"""Dispatch modes: a ``with`` stack of objects that see every op, like ``TorchDispatchMode``.

While a mode is active the ``Python`` key is in the thread-local include set, so every call reaches
the Python-key fallback below, which hands the op to the innermost mode's ``__torch_dispatch__``.
The Python key sits below Autograd (as in PyTorch), so a mode sees what autograd redispatches:
backend-level ops, with composite ops already decomposed. Inside its own ``__torch_dispatch__`` a
mode is popped, so calling ``func(*args, **kwargs)`` there runs the op normally.

    class LoggingMode(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            print(func)
            return func(*args, **(kwargs or {}))
"""

from . import keys as K
from .dispatcher import register_fallback
from .tls import _state

_PYTHON_BIT = K.functionality_bit("Python")


class TorchDispatchMode:
    """Subclass and override ``__torch_dispatch__(self, func, types, args, kwargs)``; the base
    class runs every op unchanged."""

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))

    def __enter__(self):
        push_mode(self)
        return self

    def __exit__(self, *exc):
        pop_mode()


def push_mode(mode):
    s = _state
    s.mode_stack.append(mode)
    s.include |= _PYTHON_BIT


def pop_mode():
    s = _state
    mode = s.mode_stack.pop()
    if not s.mode_stack:
        s.include &= ~_PYTHON_BIT
    return mode


def _python_key_fallback(op, ks, args):
    """Split args as the schema does (keyword-only ones into kwargs) and call the mode."""
    n = op.binder.n_positional
    positional = args[:n]
    kwargs = dict(zip(op.binder.names[n:], args[n:]))
    types = tuple({type(a) for a in args if hasattr(a, "_keyset")})
    mode = pop_mode()
    try:
        return mode.__torch_dispatch__(op, types, positional, kwargs)
    finally:
        push_mode(mode)


register_fallback(K.DispatchKey.Python, _python_key_fallback)
