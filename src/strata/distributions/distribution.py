"""The ``Distribution`` base: batch/event shapes, argument and sample validation, ``expand``.

Validation is on by default, as in PyTorch: a parameter outside its ``arg_constraints`` raises
``ValueError`` at construction, and a value outside ``support`` raises in ``log_prob``.
"""

import warnings

from ..autograd.grad_mode import no_grad
from ..core.shape import Size
from . import constraints
from .utils import lazy_property


class Distribution:
    has_rsample = False
    has_enumerate_support = False
    _validate_args = __debug__

    @staticmethod
    def set_default_validate_args(value):
        if value not in [True, False]:
            raise ValueError
        Distribution._validate_args = value

    def __init__(self, batch_shape=(), event_shape=(), validate_args=None):
        self._batch_shape = Size(batch_shape)
        self._event_shape = Size(event_shape)
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            for param, constraint in self.arg_constraints.items():
                if constraints.is_dependent(constraint):
                    continue
                if param not in self.__dict__ and \
                        isinstance(getattr(type(self), param), lazy_property):
                    continue   # the other parametrisation was given
                value = getattr(self, param)
                with no_grad():   # a yes/no answer: the checks' ops need no autograd record
                    valid = constraint._all_valid(value)
                if not valid:
                    raise ValueError(
                        f"Expected parameter {param} ({type(value).__name__} of shape "
                        f"{tuple(value.shape)}) of distribution {self!r} to satisfy the "
                        f"constraint {constraint!r}, but found invalid values:\n{value}")

    def expand(self, batch_shape, _instance=None):
        raise NotImplementedError  # by design: abstract here, as in PyTorch

    @property
    def batch_shape(self):
        return self._batch_shape

    @property
    def event_shape(self):
        return self._event_shape

    @property
    def arg_constraints(self):
        raise NotImplementedError  # by design: abstract here, as in PyTorch

    @property
    def support(self):
        raise NotImplementedError  # by design: abstract here, as in PyTorch

    @property
    def mean(self):
        raise NotImplementedError(f"{type(self)} does not implement mean")

    @property
    def mode(self):
        raise NotImplementedError(f"{type(self)} does not implement mode")

    @property
    def variance(self):
        raise NotImplementedError(f"{type(self)} does not implement variance")

    @property
    def stddev(self):
        return self.variance.sqrt()

    def sample(self, sample_shape=()):
        """A draw of shape ``sample_shape + batch_shape + event_shape``, without gradient."""
        with no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=()):
        raise NotImplementedError  # by design: abstract here, as in PyTorch

    def sample_n(self, n):
        warnings.warn("sample_n will be deprecated. Use .sample((n,)) instead", UserWarning)
        return self.sample(Size((n,)))

    def log_prob(self, value):
        raise NotImplementedError  # by design: abstract here, as in PyTorch

    def cdf(self, value):
        raise NotImplementedError  # by design: abstract here, as in PyTorch

    def icdf(self, value):
        raise NotImplementedError  # by design: abstract here, as in PyTorch

    def enumerate_support(self, expand=True):
        raise NotImplementedError  # by design: abstract here, as in PyTorch

    def entropy(self):
        raise NotImplementedError  # by design: abstract here, as in PyTorch

    def perplexity(self):
        return self.entropy().exp()

    def _extended_shape(self, sample_shape=()):
        return Size(tuple(sample_shape) + tuple(self._batch_shape) + tuple(self._event_shape))

    def _validate_sample(self, value):
        if not hasattr(value, "_keyset"):
            raise ValueError("The value argument to log_prob must be a Tensor")
        event_dim_start = value.dim() - len(self._event_shape)
        if value.shape[event_dim_start:] != self._event_shape:
            raise ValueError(f"The right-most size of value must match event_shape: "
                             f"{value.size()} vs {self._event_shape}.")
        actual, expected = value.size(), self._batch_shape + self._event_shape
        for i, j in zip(reversed(actual), reversed(expected)):
            if i != 1 and j != 1 and i != j:
                raise ValueError(f"Value is not broadcastable with batch_shape+event_shape: "
                                 f"{actual} vs {expected}.")
        support = self.support
        if not support._all_valid(value):
            raise ValueError(
                f"Expected value argument ({type(value).__name__} of shape "
                f"{tuple(value.shape)}) to be within the support ({support!r}) of the "
                f"distribution {self!r}, but found invalid values:\n{value}")

    def _get_checked_instance(self, cls, _instance=None):
        if _instance is None and type(self).__init__ != cls.__init__:
            raise NotImplementedError(
                f"Subclass {type(self).__name__} of {cls.__name__} that defines a custom "
                f"__init__ method must also define a custom .expand() method.")
        return type(self).__new__(type(self)) if _instance is None else _instance

    def _expand_params(self, cls, batch_shape, names, _instance=None):
        """``cls.expand``: each parameter in ``names`` present on this instance is expanded to
        the new batch shape (keeping its trailing event dims) on a new ``cls`` instance."""
        new = self._get_checked_instance(cls, _instance)
        batch_shape = Size(batch_shape)
        for name in names:
            if name in self.__dict__:
                value = self.__dict__[name]
                event = tuple(value.shape[len(self._batch_shape):])
                setattr(new, name, value.expand(tuple(batch_shape) + event))
        Distribution.__init__(new, batch_shape, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def __repr__(self):
        names = [k for k in self.arg_constraints if k in self.__dict__]
        shown = ", ".join(f"{p}: {v if v.numel() == 1 else v.size()}"
                          for p in names for v in (self.__dict__[p],))
        return f"{type(self).__name__}({shown})"
