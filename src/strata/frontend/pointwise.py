"""Frontends of the pointwise family whose Python signature differs from their schema.

``div(x, y, rounding_mode=...)`` is two ops in PyTorch (``div.Tensor`` and ``div.Tensor_mode``)
behind one Python name; the other entries are PyTorch's NumPy-style aliases of pointwise ops.
"""

import numpy as np

from ..functions import write_out
from ..ops import pointwise as P
from ..ops import shape as S
from ..ops import special as SP
from .. import return_types


def div(input, other, *, rounding_mode=None, out=None):
    """True division, or integer-style division with ``rounding_mode`` 'trunc' or 'floor'."""
    if rounding_mode is None:
        result = P.div(input, other)
    else:
        result = P.div_mode(input, other, rounding_mode)
    return result if out is None else write_out(out, result)


def _alias(op, name):
    def function(*args, out=None, **kwargs):
        result = op(*args, **kwargs)
        return result if out is None else write_out(out, result)
    function.__name__ = function.__qualname__ = name
    function.__doc__ = f"Alias of ``{op.qualname}``."
    return function


def _method_alias(op, name):
    def method(self, *args, **kwargs):
        return op(self, *args, **kwargs)
    method.__name__ = name
    method.__qualname__ = f"Tensor.{name}"
    method.__doc__ = f"Alias of ``{op.qualname}``."
    return method


# PyTorch's aliases (``torch/_refs/__init__.py`` lists the same pairs).
_ALIASES = {
    "absolute": P.abs, "absolute_": P.abs_, "negative": P.neg, "negative_": P.neg_,
    "arcsin": P.asin, "arcsin_": P.asin_, "arccos": P.acos, "arccos_": P.acos_,
    "arctan": P.atan, "arctan_": P.atan_, "arcsinh": P.asinh, "arcsinh_": P.asinh_,
    "arccosh": P.acosh, "arccosh_": P.acosh_, "arctanh": P.atanh, "arctanh_": P.atanh_,
    "arctan2": P.atan2, "arctan2_": P.atan2_, "fix": P.trunc, "fix_": P.trunc_,
    "multiply": P.mul, "multiply_": P.mul_, "subtract": P.sub, "subtract_": P.sub_,
    "clip": P.clamp, "clip_": P.clamp_, "greater": P.gt, "greater_equal": P.ge,
    "less": P.lt, "less_equal": P.le, "not_equal": P.ne, "greater_": P.gt_,
    "greater_equal_": P.ge_, "less_": P.lt_, "less_equal_": P.le_, "not_equal_": P.ne_,
}
_METHOD_ONLY = {"absolute_", "arctan2_", "multiply_", "subtract_", "greater_", "greater_equal_",
                "less_", "less_equal_", "not_equal_"}


def divide_(self, other, *, rounding_mode=None):
    if rounding_mode is None:
        return P.div_(self, other)
    return P.div_mode_(self, other, rounding_mode)


def polygamma(self, n):
    """``Tensor.polygamma(n)``: the op's schema takes ``n`` first (``polygamma(n, input)``)."""
    return SP.polygamma(n, self)


def frexp(input, *, out=None):
    """Mantissa in [0.5, 1) and int32 exponent with ``input == mantissa * 2 ** exponent``."""
    result = return_types.frexp(*P.frexp(input))
    if out is None:
        return result
    return return_types.frexp(*(write_out(o, r) for o, r in zip(out, result)))


def apply_(self, callable):
    """``x.apply_(f)``: ``f`` on every element, as Python numbers, written back in place (CPU;
    slow, as PyTorch's; no autograd, no version bump)."""
    if self.requires_grad:
        raise RuntimeError("Can't call apply_() on Variable that requires grad. Use "
                           "var.detach().apply_() instead.")
    if self.device.type == "meta":
        return self
    if self.device.type != "cpu":
        raise TypeError("apply_ is only implemented on CPU tensors")
    values = self.numpy()   # shares the tensor's memory, strides included
    for index in np.ndindex(values.shape):
        values[index] = callable(values[index].item())
    return self


def map_(self, tensor, callable):
    """``x.map_(y, f)``: ``f(x_i, y_i)`` on every element pair (``y`` broadcast to x's shape,
    of x's dtype), as Python numbers, written back into x in place; CPU only, as ``apply_``."""
    if self.requires_grad:
        raise RuntimeError("Can't call map_() on Variable that requires grad. Use "
                           "var.detach().map_() instead.")
    if tensor.dtype is not self.dtype:
        raise TypeError(f"map_: expected {self.type()} for 'other' (got {tensor.type()})")
    other = S.expand(tensor, tuple(self.shape))
    if self.device.type == "meta":
        return self
    if self.device.type != "cpu" or other.device.type != "cpu":
        raise TypeError("map_ is only implemented on CPU tensors")
    values, others = self.numpy(), other.numpy()
    for index in np.ndindex(values.shape):
        values[index] = callable(values[index].item(), others[index].item())
    return self


FUNCTIONS = {"div": div, "divide": div, "frexp": frexp} | {
    name: _alias(op, name) for name, op in _ALIASES.items() if name not in _METHOD_ONLY}
# Tensor.clip/clip_/div/div_ are written in tensor_methods.py.
METHODS = {"divide_": divide_, "true_divide_": _method_alias(P.div_, "true_divide_"),
           "polygamma": polygamma, "frexp": frexp, "apply_": apply_, "map_": map_} | {
    name: _method_alias(op, name) for name, op in _ALIASES.items()
    if name not in ("clip", "clip_")}
