"""Grad modes as dispatcher thread-local state (``torch/autograd/grad_mode.py``).

``no_grad``/``enable_grad``/``set_grad_enabled`` flip ``state().grad_enabled``, which the
autograd kernel reads; no dispatch key changes. ``inference_mode`` also removes the Autograd and
ADInplaceOrView keys from every dispatch through the TLS exclude set, so both layers are skipped.
Each works as a context manager and as a decorator.
"""

import functools

from ..dispatch.keys import functionality_bit
from ..dispatch.tls import state

_INFERENCE_EXCLUDE = functionality_bit("Autograd") | functionality_bit("ADInplaceOrView")


class _DecoratorContextManager:
    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.clone():
                return fn(*args, **kwargs)
        return wrapper

    def clone(self):
        return self.__class__()


class no_grad(_DecoratorContextManager):
    """Ops inside record no autograd graph: ``with strata.no_grad(): w -= lr * w.grad``."""

    def __enter__(self):
        s = state()
        self.prev = s.grad_enabled
        s.grad_enabled = False

    def __exit__(self, *exc):
        state().grad_enabled = self.prev


class enable_grad(_DecoratorContextManager):
    def __enter__(self):
        s = state()
        self.prev = s.grad_enabled
        s.grad_enabled = True

    def __exit__(self, *exc):
        state().grad_enabled = self.prev


class set_grad_enabled(_DecoratorContextManager):
    """``set_grad_enabled(False)`` takes effect at once, and restores on ``__exit__``."""

    def __init__(self, mode):
        s = state()
        self.prev = s.grad_enabled
        self.mode = bool(mode)
        s.grad_enabled = self.mode

    def __enter__(self):
        state().grad_enabled = self.mode

    def __exit__(self, *exc):
        state().grad_enabled = self.prev

    def clone(self):
        return self.__class__(self.mode)


class inference_mode(_DecoratorContextManager):
    def __init__(self, mode=True):
        self.mode = mode

    def __enter__(self):
        s = state()
        self.prev = (s.grad_enabled, s.exclude, s.inference_mode)
        if self.mode:
            s.grad_enabled = False
            s.exclude |= _INFERENCE_EXCLUDE
            s.inference_mode = True

    def __exit__(self, *exc):
        s = state()
        s.grad_enabled, s.exclude, s.inference_mode = self.prev

    def clone(self):
        return self.__class__(self.mode)


def is_grad_enabled() -> bool:
    return state().grad_enabled


def is_inference_mode_enabled() -> bool:
    return state().inference_mode
