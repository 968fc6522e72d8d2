"""Tensor's Python operators (``x + y``, ``x @ w``, ``-x``, ``x == y``, ...), as a mixin.

Kept apart from ``_tensor.py`` because operators are one concern with rules of their own: the
fast path past ``call`` (Note [Operator fast path]), NumPy operands (Note [NumPy operands]) and
reflected forms. ``Tensor`` inherits them; their qualnames read ``Tensor.__add__`` (the tracer
names a call's frontend entry point by them).
"""

import functools

import numpy as np

from .core import dtype as D
from .dispatch.tls import _state as _tls
from .ops import aten
from .ops import pointwise as P


# Note [NumPy operands]: PyTorch's binary operators answer NotImplemented for a NumPy array
# operand, so Python asks the array's reflected operator: NumPy computes the op (with NumPy's
# promotion) and ``Tensor.__array_wrap__`` turns the result into a tensor. ``ndarray + tensor``
# then raises TypeError, as in PyTorch: the array defers (``__array_priority__``) and so do we.
# ``==`` and ``!=`` instead compare elementwise as tensors (PyTorch does for ``==``), and
# ``array / tensor`` is ``tensor.reciprocal() * array``, as PyTorch's ``__rtruediv__`` is.
def _binary_operator(name, op, *extra, reflected=False):
    """``Tensor.__<name>__``: ``op(self, other, *extra)`` (``op(other, self, *extra)`` when
    ``reflected``), NotImplemented for a NumPy array operand; one frame per Python operator.
    It calls the kernel ``call`` would pick, past ``call`` (Note [Operator fast path])."""
    entries = op._operator_entries
    fast = not reflected and op.tensor_positions == (0, 1) and op.nargs == 2 + len(extra) \
        and not op.tensorlist_positions and op.device_position is None
    if fast and len(extra) < 2:
        operator = _fast_operator(op, entries, *extra)
    elif reflected:
        def operator(self, other):
            if isinstance(other, np.ndarray):
                return NotImplemented
            return op(other, self, *extra)
    else:
        def operator(self, other):
            if isinstance(other, np.ndarray):
                return NotImplemented
            return op(self, other, *extra)
    operator.__name__ = f"__{name}__"
    operator.__qualname__ = f"Tensor.__{name}__"
    # the tracer names the frontend entry point by its code's qualname (dispatcher._call_traced)
    operator.__code__ = operator.__code__.replace(co_qualname=operator.__qualname__)
    return operator


def _fast_operator(op, entries, *extra):
    """The operator of Note [Operator fast path], one copy per number of extra arguments (none,
    or an add's or sub's alpha): a call with ``*extra`` costs as much again as one without."""
    if not extra:
        def operator(self, other):
            keys = getattr(other, "_keyset", None)
            if keys is None:   # not a tensor
                if isinstance(other, np.ndarray):
                    return NotImplemented
                keys = 0
                plain = True
            else:
                plain = other._ag is None and (other._base is None or other._base._ag is None)
            entry = entries.get((self._keyset | keys | _tls.include) & ~_tls.exclude)
            if entry is None:
                return op(self, other)
            if plain and self._ag is None and (self._base is None or self._base._ag is None):
                return entry[0](self, other)
            return entry[1](op, entry[2], (self, other))
        return operator
    (alpha,) = extra

    def operator(self, other):
        keys = getattr(other, "_keyset", None)
        if keys is None:   # not a tensor
            if isinstance(other, np.ndarray):
                return NotImplemented
            keys = 0
            plain = True
        else:
            plain = other._ag is None and (other._base is None or other._base._ag is None)
        entry = entries.get((self._keyset | keys | _tls.include) & ~_tls.exclude)
        if entry is None:
            return op(self, other, alpha)
        if plain and self._ag is None and (self._base is None or self._base._ag is None):
            return entry[0](self, other, alpha)
        return entry[1](op, entry[2], (self, other, alpha))
    return operator


class TensorOperators:
    """The Python operators of ``Tensor`` (a mixin: no state of its own)."""

    __slots__ = ()

    # --- Python operators -----------------------------------------------------------------------
    # Binary operators are made by ``_binary_operator`` (above the class): one frame that
    # answers NotImplemented for a NumPy array (Note [NumPy operands]) and calls the op.
    __add__ = _binary_operator("add", P.add, 1)
    __radd__ = _binary_operator("radd", P.add, 1)
    __iadd__ = _binary_operator("iadd", P.add_, 1)
    __sub__ = _binary_operator("sub", P.sub, 1)
    __rsub__ = _binary_operator("rsub", P.sub, 1, reflected=True)
    __isub__ = _binary_operator("isub", P.sub_, 1)
    __mul__ = _binary_operator("mul", P.mul)
    __rmul__ = _binary_operator("rmul", P.mul)
    __imul__ = _binary_operator("imul", P.mul_)
    __truediv__ = _binary_operator("truediv", P.div)
    __itruediv__ = _binary_operator("itruediv", P.div_)
    __floordiv__ = _binary_operator("floordiv", P.div_mode, "floor")
    __rfloordiv__ = _binary_operator("rfloordiv", P.div_mode, "floor", reflected=True)
    __ifloordiv__ = _binary_operator("ifloordiv", P.div_mode_, "floor")
    __mod__ = _binary_operator("mod", P.remainder)
    __rmod__ = _binary_operator("rmod", P.remainder, reflected=True)
    __imod__ = _binary_operator("imod", P.remainder_)
    __pow__ = _binary_operator("pow", P.pow)
    __rpow__ = _binary_operator("rpow", P.pow, reflected=True)
    __ipow__ = _binary_operator("ipow", P.pow_)
    __matmul__ = _binary_operator("matmul", aten.matmul.default)
    __rmatmul__ = _binary_operator("rmatmul", aten.matmul.default, reflected=True)
    __and__ = _binary_operator("and", P.bitwise_and)
    __rand__ = _binary_operator("rand", P.bitwise_and)
    __iand__ = _binary_operator("iand", P.bitwise_and_)
    __or__ = _binary_operator("or", P.bitwise_or)
    __ror__ = _binary_operator("ror", P.bitwise_or)
    __ior__ = _binary_operator("ior", P.bitwise_or_)
    __xor__ = _binary_operator("xor", P.bitwise_xor)
    __rxor__ = _binary_operator("rxor", P.bitwise_xor)
    __ixor__ = _binary_operator("ixor", P.bitwise_xor_)
    __lshift__ = _binary_operator("lshift", P.bitwise_left_shift)
    __rshift__ = _binary_operator("rshift", P.bitwise_right_shift)
    __lt__ = _binary_operator("lt", P.lt)
    __le__ = _binary_operator("le", P.le)
    __gt__ = _binary_operator("gt", P.gt)
    __ge__ = _binary_operator("ge", P.ge)

    def __rtruediv__(self, other):
        # PyTorch's __rtruediv__ (torch/_tensor.py's __rdiv__): reciprocal() * other, for a
        # number too: ``2 / x`` rounds twice, as PyTorch's does, and its node is MulBackward0
        return P.reciprocal(self) * other

    def __neg__(self):
        return P.neg(self)

    def __pos__(self):
        return self

    def __abs__(self):
        return P.abs(self)

    def __invert__(self):
        if self.dtype.category == D.FLOATING:
            raise TypeError("~ (operator.invert) is only implemented on integer and Boolean-type "
                            "tensors")
        if self.dtype is D.bool_:
            return P.logical_not(self)
        return P.bitwise_not(self)

    def __eq__(self, other):
        if other is None:
            return False
        return P.eq(self, other)

    def __ne__(self, other):
        if other is None:
            return True
        return P.ne(self, other)

    __array_priority__ = 1000  # NumPy defers `ndarray + tensor` to Tensor.__radd__


# ``==`` and ``!=`` with a NumPy array compare elementwise as tensors (Note [NumPy operands]).
def _numpy_operand_compared(operator):
    @functools.wraps(operator)
    def comparing(self, other):
        if isinstance(other, np.ndarray):
            from .tensor_new import tensor
            other = tensor(other)
        return operator(self, other)
    return comparing


for _dunder in ("__eq__", "__ne__"):
    setattr(TensorOperators, _dunder, _numpy_operand_compared(TensorOperators.__dict__[_dunder]))
