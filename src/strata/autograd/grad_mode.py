"""Grad modes: ``no_grad``, ``enable_grad``, ``set_grad_enabled``, ``inference_mode``.

All of them are thread-local (they live in the dispatcher's TLS, ``strata.dispatch.state()``) and
work as context managers and as decorators, as in ``torch/autograd/grad_mode.py``:

    >>> with strata.no_grad():
    ...     y = x * 2            # not recorded: y.requires_grad is False
    >>> @strata.no_grad()
    ... def update(p): p -= 0.1 * p.grad

* grad mode off only tells the autograd kernel not to record; every key still dispatches.
* ``inference_mode`` also removes the Autograd key from every call (TLS exclude), so autograd costs
  nothing, and tensors made inside are *inference tensors* (Note [Inference tensors]).
"""

import functools
import inspect

from ..dispatch import tls
from ..dispatch.keys import functionality_bit
from ..dispatch.tls import _state

AUTOGRAD_BIT = functionality_bit("Autograd")


def is_grad_enabled() -> bool:
    return _state.grad_enabled


def is_inference_mode_enabled() -> bool:
    return _state.inference_mode


class _DecoratorContextManager:
    """A context manager that can also decorate a function (each call runs inside it)."""

    def __call__(self, func):
        if inspect.isclass(func):
            raise TypeError(f"{type(self).__name__} cannot decorate a class")
        if inspect.isgeneratorfunction(func):
            @functools.wraps(func)
            def generator(*args, **kwargs):
                gen = func(*args, **kwargs)
                with self.clone():
                    response = gen.send(None)
                while True:
                    try:
                        request = yield response
                    except GeneratorExit:
                        with self.clone():
                            gen.close()
                        raise
                    try:
                        with self.clone():
                            response = gen.send(request)
                    except StopIteration as e:
                        return e.value
            return generator

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with self.clone():
                return func(*args, **kwargs)
        return wrapper

    def clone(self):
        return type(self)()


class no_grad(_DecoratorContextManager):
    """Disable gradient recording in this thread (ops are computed, not recorded)."""

    def __enter__(self):
        self.prev = _state.grad_enabled
        _state.grad_enabled = False

    def __exit__(self, *exc):
        _state.grad_enabled = self.prev


class enable_grad(_DecoratorContextManager):
    """Re-enable gradient recording inside ``no_grad`` (not inside ``inference_mode``'s
    excluded keys: there nothing reaches the autograd kernel)."""

    def __enter__(self):
        self.prev = _state.grad_enabled
        _state.grad_enabled = True

    def __exit__(self, *exc):
        _state.grad_enabled = self.prev


class set_grad_enabled(_DecoratorContextManager):
    """``set_grad_enabled(False)`` switches grad mode at once; used with ``with`` it restores the
    previous mode on exit."""

    def __init__(self, mode: bool):
        self.prev = _state.grad_enabled
        self.mode = bool(mode)
        _state.grad_enabled = self.mode

    def __call__(self, func):
        _state.grad_enabled = self.prev   # as a decorator, it must not change the mode now
        return super().__call__(func)

    def __enter__(self):
        _state.grad_enabled = self.mode

    def __exit__(self, *exc):
        _state.grad_enabled = self.prev

    def clone(self):
        return type(self)(self.mode)

    def __repr__(self):
        return f"strata.autograd.grad_mode.set_grad_enabled(mode={self.mode})"


class inference_mode(_DecoratorContextManager):
    """Like ``no_grad``, and cheaper: the Autograd key is excluded from every call, so no autograd
    kernel runs. Tensors created inside are inference tensors: they cannot be saved for backward
    or updated in place outside the mode.

    As in PyTorch's ``c10::InferenceMode``, only the Autograd key is excluded: in-place ops on
    normal tensors still pass ADInplaceOrView and bump their version counters.
    """

    def __init__(self, mode: bool = True):
        self.mode = bool(mode)

    def __new__(cls, mode=True):
        if isinstance(mode, bool):
            return super().__new__(cls)
        return cls()(mode)   # used bare as a decorator: @inference_mode

    def __enter__(self):
        s = _state
        self.prev = (s.grad_enabled, s.inference_mode, s.exclude)
        s.inference_mode = self.mode
        tls.inference_mode_used = tls.inference_mode_used or self.mode
        s.grad_enabled = not self.mode
        s.exclude = s.exclude | AUTOGRAD_BIT if self.mode else s.exclude & ~AUTOGRAD_BIT

    def __exit__(self, *exc):
        s = _state
        s.grad_enabled, s.inference_mode, s.exclude = self.prev

    def clone(self):
        return type(self)(self.mode)
