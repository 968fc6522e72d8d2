"""Pointwise ops: unary math, binary arithmetic, comparisons, logic, and their in-place forms.
(The special functions, erf to zeta, are the ``special`` family, built with this file's makers;
composites such as ``lerp``, ``addcmul``, ``isclose`` and ``logaddexp`` are in
``pointwise_composites.py``.)

Tensor arguments also accept Python scalars (as PyTorch's Python bindings do, by wrapping them),
so ``add.Tensor(x, 2)`` is fine; promotion treats such scalars as "wrapped numbers".
Each out-of-place op ``f`` has an in-place twin ``f_`` whose meta checks, in TensorIterator's
order, that ``self`` has no internal overlap and no partial overlap with an input, that the
broadcast keeps ``self``'s shape, and that the result dtype can be cast into ``self``
(``inplace_result``).

Every op carries a *dtype rule* (``op.dtype_rule``): the result dtype of its operands, raising
PyTorch's error for dtypes it has no kernel for. The CPU kernels call the same rule.
"""

import os
import sys
import warnings
from functools import partial

from ..core import dtype as D
from ..core.shape import broadcast_shapes
from . import meta_rules as R
from .op import TensorSpec, defop

PROMOTE = R.promote
FLOAT = R.float_result


def _bool_result(*operands):
    R.promote(*operands)  # still validates the operands
    return D.bool_


def _float_only(kernel):
    def rule(*operands):
        dt = R.promote(*operands)
        if dt.category != D.FLOATING:
            raise NotImplementedError(f"\"{kernel}\" not implemented for '{R.type_name(dt)}'")
        return dt
    return rule


def _integers_only(kernel):
    """Shifts: integers, not bool."""
    def rule(*operands):
        dt = R.promote(*operands)
        if dt.category != D.INTEGRAL:
            raise NotImplementedError(f"\"{kernel}\" not implemented for '{R.type_name(dt)}'")
        return dt
    return rule


_neg_rule = partial(R.no_bool, "neg")
_sub_rule = partial(R.no_bool, "sub")


def _relu_rule(self):
    dt = R.promote(self)
    if dt is D.bool_:
        raise RuntimeError("Boolean inputs not supported for relu")
    if dt.is_complex:
        raise NotImplementedError("clamp is not supported for complex types")
    return dt


def _real_only(rule, error, message):
    """``rule`` for ops PyTorch has no complex kernel for: ``message`` names the op and may hold
    ``{type}`` (``"lt_cpu" not implemented for 'ComplexFloat'``)."""
    def checked(*operands):
        dt = R.promote(*operands)
        if dt.is_complex:
            raise error(message.format(type=R.type_name(dt)))
        return rule(*operands)
    return checked


def _not_implemented(kernel):
    return (NotImplementedError, f"\"{kernel}\" not implemented for '{{type}}'")


def _abs_rule(self):
    """``abs`` of a complex tensor is its real magnitude."""
    return R.no_bool("abs_cpu", self).to_real()


def _abs_inplace_rule(self):
    if self.dtype.is_complex:
        raise RuntimeError("In-place abs is not supported for complex tensors.")
    return R.no_bool("abs_cpu", self)


# --- checks of non-tensor arguments, shared by metas and CPU kernels ------------------------------

def check_alpha(dt, alpha=1):
    """``alpha_check`` of ``BinaryOps.h``."""
    if type(alpha) is int:
        return
    if isinstance(alpha, bool):
        if dt is not D.bool_:
            raise RuntimeError("Boolean alpha only supported for Boolean results.")
    elif isinstance(alpha, float) and dt.category != D.FLOATING:
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating "
                           "point number.")


def check_round(dt, decimals=0):
    if decimals != 0:
        if dt.category != D.FLOATING:
            raise NotImplementedError(f"\"round_cpu\" not implemented for '{R.type_name(dt)}'")
    elif dt is D.bool_:
        raise NotImplementedError("\"round_vml_cpu\" not implemented for 'Bool'")


def check_gelu(dt, approximate="none"):
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")


def check_rounding_mode(rounding_mode):
    if rounding_mode not in (None, "trunc", "floor"):
        raise RuntimeError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' "
                           f"but found '{rounding_mode}'")


def check_pow(self, exponent):
    """``pow(int_tensor, -2)``: a negative Python int exponent of an integer base."""
    if isinstance(exponent, int) and not isinstance(exponent, bool) and exponent < 0 and \
            R.is_tensor(self) and self.dtype.category != D.FLOATING:
        raise RuntimeError("Integers to negative integer powers are not allowed.")


def inplace_result(self, operands, common, rule):
    """In-place checks in TensorIterator's order: overlap, shape, cast, then the kernel's dtype."""
    R.check_inplace_overlap(self, *operands)
    shape = broadcast_shapes(*(R.shape_of(x) for x in operands))
    R.inplace_meta(self, TensorSpec(shape, common(*operands)))
    return rule(*operands)


# --- family makers --------------------------------------------------------------------------------

def _unary(name, rule, *, common=None, check=None, inplace=True, method=True, function=True,
           extra=""):
    """Define ``name(Tensor self{extra}) -> Tensor`` and, if asked, ``name_``."""
    def meta(self, *args):
        spec = R.pointwise_meta(rule, self)
        if check is not None:
            check(spec.dtype, *args)
        return spec

    out = defop(f"{name}(Tensor self{extra}) -> Tensor", meta, method=method, function=function,
                tags=("pointwise",))
    out.dtype_rule = rule
    if not inplace:
        return out, None
    common = common or rule

    def meta_(self, *args):
        dt = inplace_result(self, (self,), common, rule)
        if check is not None:
            check(dt, *args)
        return self

    out_ = defop(f"{name}_(Tensor(a!) self{extra}) -> Tensor(a!)", meta_,
                 method=f"{name}_" if method else None, function=f"{name}_" if function else None,
                 tags=("pointwise", "inplace_of:" + name))
    out_.dtype_rule = rule
    return out, out_


def _binary(name, rule, *, common=None, check=None, overload="Tensor", extra="", inplace=True,
            method=True, function=True, operand="other"):
    """Define ``name.Tensor(Tensor self, Tensor {operand}{extra}) -> Tensor`` and ``name_``."""
    def meta(self, other, *args):
        spec = R.pointwise_meta(rule, self, other)
        if check is not None:
            check(spec.dtype, *args)
        return spec

    ovl = f".{overload}" if overload else ""
    out = defop(f"{name}{ovl}(Tensor self, Tensor {operand}{extra}) -> Tensor", meta, method=method,
                function=function, tags=("pointwise",))
    out.dtype_rule = rule
    if not inplace:
        return out, None
    common = common or rule

    def meta_(self, other, *args):
        dt = inplace_result(self, (self, other), common, rule)
        if check is not None:
            check(dt, *args)
        return self

    out_ = defop(f"{name}_{ovl}(Tensor(a!) self, Tensor {operand}{extra}) -> Tensor(a!)", meta_,
                 method=f"{name}_" if method else None, tags=("pointwise", "inplace_of:" + name))
    out_.dtype_rule = rule
    return out, out_


# --- unary, float result (integers compute in the default float dtype) ----------------------------
exp, exp_ = _unary("exp", FLOAT)
exp2, exp2_ = _unary("exp2", FLOAT)
expm1, expm1_ = _unary("expm1", FLOAT)
log, log_ = _unary("log", FLOAT)
log2, log2_ = _unary("log2", FLOAT)
log10, log10_ = _unary("log10", FLOAT)
log1p, log1p_ = _unary("log1p", FLOAT)
sqrt, sqrt_ = _unary("sqrt", FLOAT)
rsqrt, rsqrt_ = _unary("rsqrt", FLOAT)
sin, sin_ = _unary("sin", FLOAT)
cos, cos_ = _unary("cos", FLOAT)
tan, tan_ = _unary("tan", FLOAT)
asin, asin_ = _unary("asin", FLOAT)
acos, acos_ = _unary("acos", FLOAT)
atan, atan_ = _unary("atan", FLOAT)
sinh, sinh_ = _unary("sinh", FLOAT)
cosh, cosh_ = _unary("cosh", FLOAT)
tanh, tanh_ = _unary("tanh", FLOAT)
asinh, asinh_ = _unary("asinh", FLOAT)
acosh, acosh_ = _unary("acosh", FLOAT)
atanh, atanh_ = _unary("atanh", FLOAT)
sigmoid, sigmoid_ = _unary("sigmoid", FLOAT)
reciprocal, reciprocal_ = _unary("reciprocal", FLOAT)

# --- unary, dtype kept ----------------------------------------------------------------------------
abs, abs_ = _unary("abs", _abs_rule, common=_abs_inplace_rule)
neg, neg_ = _unary("neg", _neg_rule)
sign, sign_ = _unary("sign", _real_only(
    PROMOTE, NotImplementedError, "Unlike NumPy, torch.sign is not intended to support complex "
    "numbers. Please use torch.sgn instead."))
floor, floor_ = _unary("floor", _real_only(partial(R.no_bool, "floor_vml_cpu"),
                                           NotImplementedError,
                                           "floor is not supported for complex inputs"))
ceil, ceil_ = _unary("ceil", _real_only(partial(R.no_bool, "ceil_vml_cpu"), NotImplementedError,
                                        "ceil is not supported for complex inputs"))
trunc, trunc_ = _unary("trunc", _real_only(partial(R.no_bool, "trunc_vml_cpu"),
                                           NotImplementedError,
                                           "trunc is not supported for complex inputs"))
frac, frac_ = _unary("frac", _float_only("frac_cpu"))
round, round_ = _unary("round", _real_only(PROMOTE, *_not_implemented("round_vml_cpu")),
                       check=check_round, extra=", *, int decimals=0")
relu, relu_ = _unary("relu", _relu_rule)
bitwise_not, bitwise_not_ = _unary("bitwise_not", partial(R.integral_only, "bitwise_not"))
logical_not, logical_not_ = _unary("logical_not", _bool_result, common=PROMOTE)
# silu is x / (1 + exp(-x)) in one kernel (ATen's silu_kernel), not x * sigmoid(x)
silu, silu_ = _unary("silu", _float_only("silu_cpu"), method=False, function=False)
gelu, gelu_ = _unary("gelu", _float_only("GeluKernelImpl"), check=check_gelu,
                     extra=", *, str approximate='none'", method=False, function=False)

# --- unary, bool result ---------------------------------------------------------------------------
isnan, _ = _unary("isnan", _bool_result, inplace=False)
isinf, _ = _unary("isinf", _bool_result, inplace=False)
isfinite, _ = _unary("isfinite", _bool_result, inplace=False)
signbit, _ = _unary("signbit", _bool_result, inplace=False)

# --- binary arithmetic ----------------------------------------------------------------------------
add, add_ = _binary("add", PROMOTE, check=check_alpha, extra=", *, Scalar alpha=1")
sub, sub_ = _binary("sub", _sub_rule, common=PROMOTE, check=check_alpha,
                    extra=", *, Scalar alpha=1")
mul, mul_ = _binary("mul", PROMOTE)
div, div_ = _binary("div", FLOAT)
remainder, remainder_ = _binary(
    "remainder", _real_only(partial(R.no_bool, "remainder_cpu"),
                            *_not_implemented("remainder_cpu")), common=PROMOTE)
fmod, fmod_ = _binary("fmod", _real_only(partial(R.no_bool, "fmod_cpu"),
                                         *_not_implemented("fmod_cpu")), common=PROMOTE)
atan2, atan2_ = _binary("atan2", _real_only(FLOAT, *_not_implemented("atan2_cpu")), overload="")
maximum, _ = _binary("maximum", _real_only(PROMOTE, RuntimeError,
                                           "maximum not implemented for complex tensors."),
                     overload="", inplace=False)
minimum, _ = _binary("minimum", _real_only(PROMOTE, RuntimeError,
                                           "minimum not implemented for complex tensors."),
                     overload="", inplace=False)
fmax, _ = _binary("fmax", _real_only(PROMOTE, RuntimeError,
                                     "fmax not implemented for complex tensors."),
                  overload="", inplace=False)
fmin, _ = _binary("fmin", _real_only(PROMOTE, RuntimeError,
                                     "fmin not implemented for complex tensors."),
                  overload="", inplace=False)
hypot, hypot_ = _binary("hypot", _float_only("hypot_cpu"), common=PROMOTE, overload="")


def _heaviside_rule(self, values):
    """ATen's ``heaviside_out`` checks: one dtype, not complex; ``values`` a tensor (there is no
    Scalar overload)."""
    if not R.is_tensor(values):
        raise TypeError(f"heaviside(): argument 'values' (position 2) must be Tensor, not "
                        f"{type(values).__name__}")
    if self.dtype.is_complex or values.dtype.is_complex:
        raise RuntimeError("heaviside is not yet implemented for complex tensors.")
    if self.dtype != values.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes.")
    return self.dtype


heaviside, heaviside_ = _binary("heaviside", _heaviside_rule, overload="", operand="values")
copysign, copysign_ = _binary("copysign", _real_only(FLOAT, *_not_implemented("copysign_cpu")))
bitwise_and, bitwise_and_ = _binary("bitwise_and", partial(R.integral_only, "bitwise_and"),
                                    common=PROMOTE)
bitwise_or, bitwise_or_ = _binary("bitwise_or", partial(R.integral_only, "bitwise_or"),
                                  common=PROMOTE)
bitwise_xor, bitwise_xor_ = _binary("bitwise_xor", partial(R.integral_only, "bitwise_xor"),
                                    common=PROMOTE)
bitwise_left_shift, bitwise_left_shift_ = _binary(
    "bitwise_left_shift", _integers_only("lshift_cpu"), common=PROMOTE)
bitwise_right_shift, bitwise_right_shift_ = _binary(
    "bitwise_right_shift", _integers_only("rshift_cpu"), common=PROMOTE)


def _pow_meta(self, exponent):
    check_pow(self, exponent)
    return R.pointwise_meta(pow.dtype_rule, self, exponent)


def _pow_meta_(self, exponent):
    check_pow(self, exponent)
    inplace_result(self, (self, exponent), PROMOTE, pow.dtype_rule)
    return self


def _pow_rule(self, exponent):
    # A Python exponent of 0 or 1 is a fill or a copy in PyTorch, so it works for bool too.
    dt = R.promote(self, exponent)
    if dt is D.bool_ and (R.is_tensor(exponent) or exponent not in (0, 1)):
        raise NotImplementedError("\"pow\" not implemented for 'Bool'")
    return dt


pow = defop("pow.Tensor_Tensor(Tensor self, Tensor exponent) -> Tensor", _pow_meta,
            method=True, function=True, tags=("pointwise",))
pow.dtype_rule = _pow_rule
pow_ = defop("pow_.Tensor(Tensor(a!) self, Tensor exponent) -> Tensor(a!)", _pow_meta_,
             method=True, tags=("pointwise", "inplace_of:pow"))
pow_.dtype_rule = pow.dtype_rule


def div_mode_rule(self, other, rounding_mode):
    """``div(..., rounding_mode=)``: true division for None, else integers stay integers."""
    check_rounding_mode(rounding_mode)
    if rounding_mode is None:
        return FLOAT(self, other)
    dt = R.promote(self, other)
    if dt is D.bool_ or dt.is_complex:
        raise NotImplementedError(f"\"div_{rounding_mode}_cpu\" not implemented for "
                                  f"'{R.type_name(dt)}'")
    return dt


def _div_mode_meta(self, other, rounding_mode):
    shape = broadcast_shapes(R.shape_of(self), R.shape_of(other))
    return TensorSpec(shape, div_mode_rule(self, other, rounding_mode),
                      R.pointwise_strides(shape, (self, other)))


def _div_mode_meta_(self, other, rounding_mode):
    check_rounding_mode(rounding_mode)
    inplace_result(self, (self, other), FLOAT if rounding_mode is None else PROMOTE,
                   lambda a, b: div_mode_rule(a, b, rounding_mode))
    return self


div_mode = defop("div.Tensor_mode(Tensor self, Tensor other, *, str? rounding_mode) -> Tensor",
                 _div_mode_meta, tags=("pointwise",))
div_mode_ = defop("div_.Tensor_mode(Tensor(a!) self, Tensor other, *, str? rounding_mode) -> "
                  "Tensor(a!)", _div_mode_meta_, tags=("pointwise", "inplace_of:div"))

# --- comparisons and logic (bool result) ----------------------------------------------------------
eq, eq_ = _binary("eq", _bool_result, common=_bool_result)
ne, ne_ = _binary("ne", _bool_result, common=_bool_result)
lt, lt_ = _binary("lt", _real_only(_bool_result, *_not_implemented("lt_cpu")),
                  common=_bool_result)
le, le_ = _binary("le", _real_only(_bool_result, *_not_implemented("le_cpu")),
                  common=_bool_result)
gt, gt_ = _binary("gt", _real_only(_bool_result, *_not_implemented("gt_cpu")),
                  common=_bool_result)
ge, ge_ = _binary("ge", _real_only(_bool_result, *_not_implemented("ge_cpu")),
                  common=_bool_result)
logical_and, logical_and_ = _binary("logical_and", _bool_result, overload="")
logical_or, logical_or_ = _binary("logical_or", _bool_result, overload="")
logical_xor, logical_xor_ = _binary("logical_xor", _bool_result, overload="")


# --- ternary --------------------------------------------------------------------------------------
_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _user_stacklevel():
    """The ``stacklevel`` that points a warning at the first frame outside strata."""
    frame, level = sys._getframe(1), 1
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        frame, level = frame.f_back, level + 1
    return level


def check_condition(condition):
    cond_dtype = getattr(condition, "dtype", D.bool_)
    if cond_dtype is D.uint8:
        warnings.warn("where received a uint8 condition tensor. This behavior is deprecated and "
                      "will be removed in a future version of PyTorch. Use a boolean condition "
                      "instead.", UserWarning, stacklevel=_user_stacklevel())
    elif cond_dtype is not D.bool_:
        raise RuntimeError(f"where expected condition to be a boolean tensor, but got a "
                           f"tensor with dtype {R.type_name(cond_dtype)}")


def _where_meta(condition, self, other):
    check_condition(condition)
    operands = (condition, self, other)
    shape = broadcast_shapes(*(R.shape_of(x) for x in operands))
    return TensorSpec(shape, R.promote(self, other), R.pointwise_strides(shape, operands))


where = defop("where.self(Tensor condition, Tensor self, Tensor other) -> Tensor", _where_meta,
              function=True, tags=("pointwise",))


def clamp_operands(self, min, max):
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    return (self,) + tuple(x for x in (min, max) if x is not None)


def clamp_rule(*operands):
    dt = R.promote(*operands)
    if dt is D.bool_:
        kernel = "clamp_cpu" if any(R.is_tensor(x) for x in operands[1:]) else "clamp_scalar_cpu"
        raise NotImplementedError(f"\"{kernel}\" not implemented for 'Bool'")
    if dt.is_complex:
        raise NotImplementedError("clamp is not supported for complex types")
    return dt


def _clamp_meta(self, min=None, max=None):
    operands = clamp_operands(self, min, max)
    return R.pointwise_meta(clamp_rule, *operands)


def _clamp_meta_(self, min=None, max=None):
    operands = clamp_operands(self, min, max)
    if not any(R.is_tensor(x) for x in operands[1:]):
        # clamp_ with Python bounds names the output type the C++ way ("long int")
        dt = R.promote(*operands)
        if not D.can_cast(dt, self.dtype):
            raise RuntimeError(f"result type {R.type_name(dt)} can't be cast to the desired "
                               f"output type {R.c_type_name(self.dtype)}")
    inplace_result(self, operands, PROMOTE, clamp_rule)
    return self


clamp = defop("clamp.Tensor(Tensor self, Tensor? min=None, Tensor? max=None) -> Tensor",
              _clamp_meta, method=True, function=True, tags=("pointwise",))
clamp.dtype_rule = clamp_rule
clamp_ = defop("clamp_.Tensor(Tensor(a!) self, Tensor? min=None, Tensor? max=None) -> Tensor(a!)",
               _clamp_meta_, method=True, function=True, tags=("pointwise", "inplace_of:clamp"))
clamp_.dtype_rule = clamp.dtype_rule


def _nan_to_num_meta(self, nan=None, posinf=None, neginf=None):
    return R.pointwise_meta(PROMOTE, self)


def _nan_to_num_meta_(self, nan=None, posinf=None, neginf=None):
    inplace_result(self, (self,), PROMOTE, PROMOTE)
    return self


nan_to_num = defop("nan_to_num(Tensor self, float? nan=None, float? posinf=None, "
                   "float? neginf=None) -> Tensor", _nan_to_num_meta, method=True, function=True,
                   tags=("pointwise",))
nan_to_num_ = defop("nan_to_num_(Tensor(a!) self, float? nan=None, float? posinf=None, "
                    "float? neginf=None) -> Tensor(a!)", _nan_to_num_meta_, method=True,
                    function=True, tags=("pointwise", "inplace_of:nan_to_num"))


# --- mantissa and exponent ------------------------------------------------------------------------
def _frexp_meta(self):
    if self.dtype.category != D.FLOATING:
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    return (R.pointwise_meta(PROMOTE, self),
            TensorSpec(tuple(self.shape), D.int32, R.pointwise_strides(tuple(self.shape),
                                                                       (self,))))


# The mantissa in [0.5, 1) and the int32 exponent of each element: exact, so a primitive.
frexp = defop("frexp.Tensor(Tensor self) -> (Tensor mantissa, Tensor exponent)", _frexp_meta,
              tags=("pointwise",))
