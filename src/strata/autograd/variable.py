"""``autograd.Variable``: the pre-0.4 wrapper, today a tensor. ``Variable(t)`` is ``t``
detached (same memory) with the requested ``requires_grad``; every tensor is a Variable for
``isinstance``, as in PyTorch (``torch/autograd/variable.py``)."""

from .. import _tensor
from ..core import dtype as D
from ..ops import factory as F


class _VariableMeta(type):
    def __instancecheck__(cls, other):
        return isinstance(other, _tensor.Tensor)


class Variable(metaclass=_VariableMeta):
    """``Variable(data=None, requires_grad=False)`` -> a Tensor.

        >>> v = strata.autograd.Variable(strata.ones(2), requires_grad=True)
        >>> v.is_leaf, isinstance(v, strata.autograd.Variable)
        (True, True)
    """

    def __new__(cls, data=None, requires_grad=False, volatile=False):
        if data is None:
            data = F.empty((0,))
        if not isinstance(data, _tensor.Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        if requires_grad and data.dtype.category < D.FLOATING:
            raise RuntimeError("Only Tensors of floating point and complex dtype can require "
                               "gradients")
        out = data.detach()
        return out.requires_grad_() if requires_grad else out
