"""Composite pointwise ops: ``square``, ``floor_divide``, ``true_divide``, ``rsub``, ``lerp``,
``addcmul``, ``addcdiv``, ``clamp_min``/``clamp_max``, the closeness tests (``isclose``,
``allclose``, ``equal``), ``logaddexp``/``logaddexp2`` and ``ldexp``, each a decomposition over
the primitives of ``pointwise.py`` (with PyTorch's argument checks and errors).

Separate from ``pointwise.py``, which defines the primitives (and the rules and makers every
elementwise family uses); nothing here has a kernel of its own.
"""

import math

from ..core import dtype as D
from . import meta_rules as R
from .op import defop, register_decomposition
from .pointwise import (
    FLOAT,
    _float_only,
    add,
    add_,
    clamp,
    clamp_,
    div,
    div_mode,
    div_mode_,
    eq,
    exp,
    exp2,
    isfinite,
    isinf,
    isnan,
    le,
    log1p,
    logical_and,
    logical_or,
    lt,
    maximum,
    mul,
    mul_,
    neg,
    pow_,
    sub,
    where,
)

# --- composites -----------------------------------------------------------------------------------
square = defop("square(Tensor self) -> Tensor", method=True, function=True)
square_ = defop("square_(Tensor(a!) self) -> Tensor(a!)", method=True, function=True)
floor_divide = defop("floor_divide(Tensor self, Tensor other) -> Tensor", method=True,
                     function=True)
floor_divide_ = defop("floor_divide_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)",
                      method=True)
true_divide = defop("true_divide.Tensor(Tensor self, Tensor other) -> Tensor", method=True,
                    function=True)
rsub = defop("rsub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
             function=True)
lerp = defop("lerp.Tensor(Tensor self, Tensor end, Tensor weight) -> Tensor", method=True,
             function=True)
lerp_ = defop("lerp_.Tensor(Tensor(a!) self, Tensor end, Tensor weight) -> Tensor(a!)",
              method=True)
addcmul = defop("addcmul(Tensor self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) -> "
                "Tensor", method=True, function=True)
addcmul_ = defop("addcmul_(Tensor(a!) self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) "
                 "-> Tensor(a!)", method=True)
addcdiv = defop("addcdiv(Tensor self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) -> "
                "Tensor", method=True, function=True)
addcdiv_ = defop("addcdiv_(Tensor(a!) self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) "
                 "-> Tensor(a!)", method=True)
clamp_min = defop("clamp_min.Tensor(Tensor self, Tensor min) -> Tensor", method=True,
                  function=True)
clamp_min_ = defop("clamp_min_.Tensor(Tensor(a!) self, Tensor min) -> Tensor(a!)", method=True,
                   function=True)
clamp_max = defop("clamp_max.Tensor(Tensor self, Tensor max) -> Tensor", method=True,
                  function=True)
clamp_max_ = defop("clamp_max_.Tensor(Tensor(a!) self, Tensor max) -> Tensor(a!)", method=True,
                   function=True)


@register_decomposition(square)
def _square(self):
    return pow(self, 2)


@register_decomposition(square_)
def _square_(self):
    return pow_(self, 2)


@register_decomposition(floor_divide)
def _floor_divide(self, other):
    return div_mode(self, other, "floor")


@register_decomposition(floor_divide_)
def _floor_divide_(self, other):
    return div_mode_(self, other, "floor")


@register_decomposition(true_divide)
def _true_divide(self, other):
    return div(self, other)


@register_decomposition(rsub)
def _rsub(self, other, alpha=1):
    return sub(other, self, alpha=alpha)


def _check_lerp(self, end, weight):
    for name, x in (("end", end), ("weight", weight)):
        if R.is_tensor(x) and x.dtype is not self.dtype:
            raise RuntimeError(f"expected dtype {R.c_type_name(self.dtype)} for `{name}` but got "
                               f"dtype {R.c_type_name(x.dtype)}")
    if self.dtype.category != D.FLOATING:
        kind = "tensor" if R.is_tensor(weight) else "scalar"
        raise NotImplementedError(f"\"lerp_kernel_{kind}\" not implemented for "
                                  f"'{R.type_name(self.dtype)}'")


@register_decomposition(lerp)
def _lerp(self, end, weight):
    # PyTorch's formula: from whichever end is nearer, so lerp(a, b, 1) is exactly b.
    _check_lerp(self, end, weight)
    diff = sub(end, self)
    if not R.is_tensor(weight):
        if -0.5 < weight < 0.5:
            return add(self, mul(diff, weight))
        return sub(end, mul(diff, 1 - weight))
    near_self = lt(abs(weight), 0.5)
    return where(near_self, add(self, mul(weight, diff)), sub(end, mul(diff, rsub(weight, 1))))


@register_decomposition(lerp_)
def _lerp_(self, end, weight):
    from .factory import copy_
    return copy_(self, _lerp(self, end, weight))


def _addc_value(name, dt, value):
    if dt is D.bool_:
        raise NotImplementedError(f"\"{name}_cpu_out\" not implemented for 'Bool'")
    # The value is cast to the result dtype (``value.to<scalar_t>()``): 0.5 -> 0 for integers.
    return int(value) if dt.category != D.FLOATING or isinstance(value, bool) else value


def _check_addcdiv(tensor1, tensor2):
    if all(R.is_tensor(x) and x.dtype.category != D.FLOATING for x in (tensor1, tensor2)):
        raise RuntimeError(
            "Integer division with addcdiv is no longer supported, and in a future  release "
            "addcdiv will perform a true division of tensor1 and tensor2. The historic addcdiv "
            "behavior can be implemented as (input + value * torch.trunc(tensor1 / tensor2)).to("
            "input.dtype) for integer inputs and as (input + value * tensor1 / tensor2) for float "
            "inputs. The future addcdiv behavior is just the latter implementation: (input + "
            "value * tensor1 / tensor2), for all dtypes.")


def _addc_operands(name, self, tensor1, tensor2, value):
    """tensor1 and tensor2 in the op's result dtype (promoted over all three inputs at once, as
    TensorIterator does), and ``value`` cast to it."""
    dt = R.promote(self, tensor1, tensor2)
    like = self if R.is_tensor(self) else tensor1
    return (_as_dtype(tensor1, dt, like), _as_dtype(tensor2, dt, like),
            _addc_value(name, dt, value))


@register_decomposition(addcmul)
def _addcmul(self, tensor1, tensor2, value=1):
    t1, t2, value = _addc_operands("addcmul", self, tensor1, tensor2, value)
    return add(self, mul(t1, t2), alpha=value)


@register_decomposition(addcmul_)
def _addcmul_(self, tensor1, tensor2, value=1):
    t1, t2, value = _addc_operands("addcmul", self, tensor1, tensor2, value)
    return add_(self, mul(t1, t2), alpha=value)


@register_decomposition(addcdiv)
def _addcdiv(self, tensor1, tensor2, value=1):
    _check_addcdiv(tensor1, tensor2)
    t1, t2, value = _addc_operands("addcdiv", self, tensor1, tensor2, value)
    return add(self, div(t1, t2), alpha=value)


@register_decomposition(addcdiv_)
def _addcdiv_(self, tensor1, tensor2, value=1):
    _check_addcdiv(tensor1, tensor2)
    t1, t2, value = _addc_operands("addcdiv", self, tensor1, tensor2, value)
    return add_(self, div(t1, t2), alpha=value)


def _as_dtype(x, dt, like):
    """``x`` as a tensor of dtype ``dt`` (a Python scalar becomes a 0-dim tensor on like's
    device), so a composite computes in its result dtype, not in a promotion of its parts."""
    from .factory import _to_copy, scalar_tensor
    if not R.is_tensor(x):
        return scalar_tensor(x, dtype=dt, device=like.device)
    return x if x.dtype is dt else _to_copy(x, dtype=dt)


@register_decomposition(clamp_min)
def _clamp_min(self, min):
    return clamp(self, min, None)


@register_decomposition(clamp_min_)
def _clamp_min_(self, min):
    return clamp_(self, min, None)


@register_decomposition(clamp_max)
def _clamp_max(self, max):
    return clamp(self, None, max)


@register_decomposition(clamp_max_)
def _clamp_max_(self, max):
    return clamp_(self, None, max)


# --- closeness: composites over the comparisons ---------------------------------------------------
isclose = defop("isclose(Tensor self, Tensor other, float rtol=1e-05, float atol=1e-08, "
                "bool equal_nan=False) -> Tensor", method=True, function=True)
allclose = defop("allclose(Tensor self, Tensor other, float rtol=1e-05, float atol=1e-08, "
                 "bool equal_nan=False) -> bool", method=True, function=True)
equal = defop("equal(Tensor self, Tensor other) -> bool", method=True, function=True)


@register_decomposition(isclose)
def _isclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    if self.dtype is not other.dtype:
        raise RuntimeError(f"{self.dtype} did not match {other.dtype}")
    if rtol < 0:
        raise RuntimeError(f"rtol must be greater than or equal to zero, but got {rtol}")
    if atol < 0:
        raise RuntimeError(f"atol must be greater than or equal to zero, but got {atol}")
    close = eq(self, other)
    if equal_nan and self.is_floating_point():
        close = logical_or(close, logical_and(isnan(self), isnan(other)))
    if self.dtype is D.bool_ or not self.is_floating_point() and rtol == 0 and atol == 0:
        return close
    # |self - other| <= atol + rtol * |other|, computed in the (promoted) float dtype
    diff = abs(sub(self, other))
    bound = add(mul(abs(other), rtol), atol)
    finite = logical_and(isfinite(self), isfinite(other))
    return logical_or(close, logical_and(finite, le(diff, bound)))


@register_decomposition(allclose)
def _allclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    return bool(_isclose(self, other, rtol, atol, equal_nan).all().item())


@register_decomposition(equal)
def _equal(self, other):
    if tuple(self.shape) != tuple(other.shape):
        return False
    return bool(eq(self, other).all().item())


# --- pairs of logs and base-2 exponents -----------------------------------------------------------
logaddexp = defop("logaddexp(Tensor self, Tensor other) -> Tensor", method=True, function=True)
logaddexp2 = defop("logaddexp2(Tensor self, Tensor other) -> Tensor", method=True, function=True)
ldexp = defop("ldexp.Tensor(Tensor self, Tensor other) -> Tensor", method=True, function=True)
ldexp_ = defop("ldexp_(Tensor(a!) self, Tensor other) -> Tensor(a!)", method=True, function=True)


def require_tensors(name, **args):
    """PyTorch's binding refuses Python numbers where these ops' schemas say ``Tensor``."""
    for position, (arg, x) in enumerate(args.items(), 1):
        if not R.is_tensor(x):
            raise TypeError(f"{name}(): argument '{arg}' (position {position}) must be Tensor, "
                            f"not {type(x).__name__}")


def _logaddexp_of(name, self, other, exp_fn, log1p_scale):
    """max + log1p(exp(-|self - other|)): no overflow; equal infinities give themselves."""
    require_tensors(name, input=self, other=other)
    _float_only(f"{name}_cpu")(self, other)
    diff = abs(sub(self, other))
    result = add(maximum(self, other), mul(log1p(exp_fn(neg(diff))), log1p_scale))
    return where(logical_and(isinf(self), eq(self, other)), self, result)


@register_decomposition(logaddexp)
def _logaddexp(self, other):
    return _logaddexp_of("logaddexp", self, other, exp, 1.0)


@register_decomposition(logaddexp2)
def _logaddexp2(self, other):
    return _logaddexp_of("logaddexp2", self, other, exp2, 1.0 / math.log(2.0))


def _ldexp_operands(self, other):
    """self and 2 ** other in the result dtype (integers become the default float dtype)."""
    require_tensors("ldexp", input=self, other=other)
    dt = FLOAT(self, other)
    if self.dtype.category == D.FLOATING and other.dtype is D.bool_:
        raise NotImplementedError("\"ldexp_cpu_exp\" not implemented for 'Bool'")
    return _as_dtype(self, dt, self), pow(2.0, _as_dtype(other, dt, self))


@register_decomposition(ldexp)
def _ldexp(self, other):
    x, scale = _ldexp_operands(self, other)
    return mul(x, scale)


@register_decomposition(ldexp_)
def _ldexp_(self, other):
    _, scale = _ldexp_operands(self, other)
    if not D.can_cast(scale.dtype, self.dtype):
        raise RuntimeError(f"ldexp can't be cast to the desired output type "
                           f"{R.type_name(self.dtype)}")
    return mul_(self, scale)


# --- angle conversions ----------------------------------------------------------------------------
deg2rad = defop("deg2rad(Tensor self) -> Tensor", method=True, function=True)
deg2rad_ = defop("deg2rad_(Tensor(a!) self) -> Tensor(a!)", method=True, function=True)
rad2deg = defop("rad2deg(Tensor self) -> Tensor", method=True, function=True)
rad2deg_ = defop("rad2deg_(Tensor(a!) self) -> Tensor(a!)", method=True, function=True)
_RADIANS_PER_DEGREE = math.pi / 180.0


def _angle_operand(name, self):
    """ATen's ``deg2rad``/``rad2deg``: no complex; integers and bool become the default float."""
    if self.dtype.category == D.COMPLEX:
        raise RuntimeError(f"{name} is not supported for complex tensors.")
    return _as_dtype(self, FLOAT(self), self)


@register_decomposition(deg2rad)
def _deg2rad(self):
    return mul(_angle_operand("deg2rad", self), _RADIANS_PER_DEGREE)


@register_decomposition(rad2deg)
def _rad2deg(self):
    return mul(_angle_operand("rad2deg", self), 1.0 / _RADIANS_PER_DEGREE)


@register_decomposition(deg2rad_)
def _deg2rad_(self):
    _angle_operand("deg2rad", self)
    return mul_(self, _RADIANS_PER_DEGREE)


@register_decomposition(rad2deg_)
def _rad2deg_(self):
    _angle_operand("rad2deg", self)
    return mul_(self, 1.0 / _RADIANS_PER_DEGREE)
