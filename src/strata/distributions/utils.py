"""Helpers shared by the distributions (``torch/distributions/utils.py``)."""

import numbers

from .. import creation
from ..core import dtype as D
from ..core.shape import Size
from ..frontend.shape import broadcast_tensors


def is_tensor(x):
    return hasattr(x, "_keyset")


def broadcast_all(*values):
    """Tensors broadcast together; numbers become tensors of the first tensor's dtype and
    device (or the default dtype, on the CPU)."""
    if not all(is_tensor(v) or isinstance(v, numbers.Number) for v in values):
        raise ValueError("Input arguments must all be instances of Number, torch.Tensor or "
                         "objects implementing __torch_function__.")
    like = next((v for v in values if is_tensor(v)), None)
    dtype = like.dtype if like is not None else D.get_default_dtype()
    device = like.device if like is not None else None
    return broadcast_tensors(*(v if is_tensor(v) else creation.tensor(v, dtype=dtype,
                                                                      device=device)
                               for v in values))


def sum_rightmost(value, dim):
    """Sum out the ``dim`` rightmost dims (``_sum_rightmost``)."""
    return value.reshape(tuple(value.shape[:value.dim() - dim]) + (-1,)).sum(-1) if dim else value


def clamp_probs(probs):
    eps = D.finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def logits_to_probs(logits, is_binary=False):
    return logits.sigmoid() if is_binary else logits.softmax(-1)


def probs_to_logits(probs, is_binary=False):
    p = clamp_probs(probs)
    return p.log() - (-p).log1p() if is_binary else p.log()


def standard_normal(shape, like):
    return creation.randn(tuple(shape), dtype=like.dtype, device=like.device)


def param_tensor(value, like):
    """A Python number as a tensor with ``like``'s dtype and device."""
    return value if is_tensor(value) else creation.tensor(float(value), dtype=like.dtype,
                                                          device=like.device)


class lazy_property:
    """A property computed on first access and then stored on the instance (``probs`` from
    ``logits`` and the other way round), so only the given parametrisation is validated."""

    def __init__(self, wrapped):
        self.wrapped = wrapped
        self.__doc__ = wrapped.__doc__

    def __get__(self, instance, obj_type=None):
        if instance is None:
            return self
        value = self.wrapped(instance)
        instance.__dict__[self.wrapped.__name__] = value
        return value


def one_of(probs, logits):
    """The one parametrisation given, as ``(name, value)``."""
    if (probs is None) == (logits is None):
        raise ValueError("Either `probs` or `logits` must be specified, but not both.")
    return ("probs", probs) if probs is not None else ("logits", logits)


class ProbsOrLogits:
    """``probs`` and ``logits`` of a distribution given one of them: the other is derived on
    first use. ``_is_binary`` picks sigmoid/logit (Bernoulli, Binomial) or softmax/log."""

    _is_binary = True

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, self._is_binary)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, self._is_binary)

    def _set_param(self, probs, logits):
        """Keep the one parametrisation given (``one_of``), broadcast to a tensor; returns the
        batch shape it gives."""
        name, value = one_of(probs, logits)
        (param,) = broadcast_all(value)
        setattr(self, name, param)
        return batch_shape_of((value,), param)

    @property
    def _param(self):
        return self.__dict__["probs"] if "probs" in self.__dict__ else self.__dict__["logits"]

    @property
    def param_shape(self):
        return self._param.size()


def batch_shape_of(args, param):
    """A distribution's batch shape: ``()`` when every argument was a Python number."""
    return Size() if all(isinstance(a, numbers.Number) for a in args) else param.size()
