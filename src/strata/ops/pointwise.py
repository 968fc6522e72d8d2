"""Pointwise ops: unary math, binary arithmetic, comparisons, logic, and their in-place forms.

Tensor arguments also accept Python scalars (as PyTorch's Python bindings do, by wrapping them),
so ``add.Tensor(x, 2)`` is fine; promotion treats such scalars as "wrapped numbers".
Each out-of-place op ``f`` has an in-place twin ``f_`` whose meta checks that the broadcast keeps
``self``'s shape and that the result dtype can be cast into ``self``.
"""

from functools import partial

from ..core import dtype as D
from . import meta_rules as R
from .op import defop, register_decomposition

# dtype rules, by name, for the family tables below
PROMOTE = R.promote
FLOAT = R.float_result


def _bool_result(*operands):
    R.promote(*operands)  # still validates the operands
    return D.bool_


def _same_as_self(self, *_):
    return self.dtype


def _float_only(name):
    def rule(*operands):
        dt = R.promote(*operands)
        if dt.category != D.FLOATING:
            raise RuntimeError(f"\"{name}_cpu\" not implemented for '{R.type_name(dt)}'")
        return dt
    return rule


def _unary(name, rule, *, inplace=True, method=True, function=True, extra="", tags=()):
    """Define ``name(Tensor self{extra}) -> Tensor`` and, if asked, ``name_``."""
    def meta(self, *args):
        return R.pointwise_meta(rule, self)

    out = defop(f"{name}(Tensor self{extra}) -> Tensor", meta, method=method, function=function,
                tags=("pointwise",) + tags)
    out.dtype_rule = rule
    if not inplace:
        return out, None

    def meta_(self, *args):
        R.check_no_internal_overlap(self)
        return R.inplace_meta(self, R.pointwise_meta(rule, self))

    out_ = defop(f"{name}_(Tensor(a!) self{extra}) -> Tensor(a!)", meta_,
                 method=f"{name}_" if method else None, function=f"{name}_" if function else None,
                 tags=("pointwise", "inplace_of:" + name) + tags)
    out_.dtype_rule = rule
    return out, out_


def _binary(name, rule, *, overload="Tensor", extra="", inplace=True, method=True,
            function=True):
    """Define ``name.Tensor(Tensor self, Tensor other{extra}) -> Tensor`` and ``name_``."""
    def meta(self, other, *args):
        return R.pointwise_meta(rule, self, other)

    ovl = f".{overload}" if overload else ""
    out = defop(f"{name}{ovl}(Tensor self, Tensor other{extra}) -> Tensor", meta, method=method,
                function=function, tags=("pointwise",))
    out.dtype_rule = rule
    if not inplace:
        return out, None

    def meta_(self, other, *args):
        R.check_no_internal_overlap(self)
        return R.inplace_meta(self, R.pointwise_meta(rule, self, other))

    out_ = defop(f"{name}_{ovl}(Tensor(a!) self, Tensor other{extra}) -> Tensor(a!)", meta_,
                 method=f"{name}_" if method else None, tags=("pointwise", "inplace_of:" + name))
    out_.dtype_rule = rule
    return out, out_


# --- unary, float result (integers compute in the default float dtype) -------------------------
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
erf, erf_ = _unary("erf", FLOAT)
erfc, erfc_ = _unary("erfc", FLOAT)
erfinv, erfinv_ = _unary("erfinv", FLOAT)
reciprocal, reciprocal_ = _unary("reciprocal", FLOAT)
lgamma, lgamma_ = _unary("lgamma", FLOAT)

# --- unary, dtype kept ------------------------------------------------------------------------
abs, abs_ = _unary("abs", PROMOTE)
neg, neg_ = _unary("neg", partial(R.no_bool, "neg"))
sign, sign_ = _unary("sign", PROMOTE)
floor, floor_ = _unary("floor", PROMOTE)
ceil, ceil_ = _unary("ceil", PROMOTE)
trunc, trunc_ = _unary("trunc", PROMOTE)
frac, frac_ = _unary("frac", _float_only("frac"))
round, round_ = _unary("round", PROMOTE, extra=", *, int decimals=0")
relu, relu_ = _unary("relu", PROMOTE)
bitwise_not, bitwise_not_ = _unary("bitwise_not", partial(R.integral_only, "bitwise_not"))
logical_not, logical_not_ = _unary("logical_not", _bool_result, inplace=False)
gelu, gelu_ = _unary("gelu", _float_only("GeluKernelImpl"), extra=", *, str approximate='none'",
                     method=False, function=False)

# --- unary, bool result -------------------------------------------------------------------------
isnan, _ = _unary("isnan", _bool_result, inplace=False)
isinf, _ = _unary("isinf", _bool_result, inplace=False)
isfinite, _ = _unary("isfinite", _bool_result, inplace=False)
signbit, _ = _unary("signbit", _bool_result, inplace=False)

# --- binary arithmetic --------------------------------------------------------------------------
add, add_ = _binary("add", PROMOTE, extra=", *, Scalar alpha=1")
sub, sub_ = _binary("sub", partial(R.no_bool, "sub"), extra=", *, Scalar alpha=1")
mul, mul_ = _binary("mul", PROMOTE)
div, div_ = _binary("div", FLOAT)
div_mode, div_mode_ = _binary("div", PROMOTE, overload="Tensor_mode",
                              extra=", *, str? rounding_mode", method=False, function=False)
remainder, remainder_ = _binary("remainder", PROMOTE)
fmod, fmod_ = _binary("fmod", PROMOTE)
pow, pow_ = _binary("pow", PROMOTE, overload="Tensor_Tensor")
atan2, atan2_ = _binary("atan2", FLOAT, overload="")
maximum, _ = _binary("maximum", PROMOTE, overload="", inplace=False)
minimum, _ = _binary("minimum", PROMOTE, overload="", inplace=False)
fmax, _ = _binary("fmax", PROMOTE, overload="", inplace=False)
fmin, _ = _binary("fmin", PROMOTE, overload="", inplace=False)
hypot, hypot_ = _binary("hypot", FLOAT, overload="")
copysign, copysign_ = _binary("copysign", FLOAT)
bitwise_and, bitwise_and_ = _binary("bitwise_and", partial(R.integral_only, "bitwise_and"))
bitwise_or, bitwise_or_ = _binary("bitwise_or", partial(R.integral_only, "bitwise_or"))
bitwise_xor, bitwise_xor_ = _binary("bitwise_xor", partial(R.integral_only, "bitwise_xor"))
bitwise_left_shift, _ = _binary("bitwise_left_shift",
                                partial(R.integral_only, "lshift"), overload="Tensor",
                                inplace=False)
bitwise_right_shift, _ = _binary("bitwise_right_shift",
                                 partial(R.integral_only, "rshift"), overload="Tensor",
                                 inplace=False)

# --- comparisons and logic (bool result) ---------------------------------------------------------
eq, eq_ = _binary("eq", _bool_result)
ne, ne_ = _binary("ne", _bool_result)
lt, lt_ = _binary("lt", _bool_result)
le, le_ = _binary("le", _bool_result)
gt, gt_ = _binary("gt", _bool_result)
ge, ge_ = _binary("ge", _bool_result)
logical_and, _ = _binary("logical_and", _bool_result, overload="", inplace=False)
logical_or, _ = _binary("logical_or", _bool_result, overload="", inplace=False)
logical_xor, _ = _binary("logical_xor", _bool_result, overload="", inplace=False)


# --- ternary --------------------------------------------------------------------------------------
def _where_meta(condition, self, other):
    cond_dtype = getattr(condition, "dtype", D.bool_)
    if cond_dtype is not D.bool_:
        raise RuntimeError(f"where expected condition to be a boolean tensor, but got a "
                           f"tensor with dtype {R.type_name(cond_dtype)}")
    shape = R.broadcast_shapes(R.shape_of(condition), R.shape_of(self), R.shape_of(other))
    return R.TensorSpec(shape, R.promote(self, other), R.contiguous_strides(shape))


where = defop("where.self(Tensor condition, Tensor self, Tensor other) -> Tensor", _where_meta,
              tags=("pointwise",))


def _clamp_meta(self, min=None, max=None):
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    ops = [self] + [x for x in (min, max) if x is not None]
    shape = R.broadcast_shapes(*(R.shape_of(x) for x in ops))
    return R.TensorSpec(shape, R.promote(*ops), R.pointwise_strides(shape, ops))


def _clamp_meta_(self, min=None, max=None):
    R.check_no_internal_overlap(self)
    return R.inplace_meta(self, _clamp_meta(self, min, max))


clamp = defop("clamp.Tensor(Tensor self, Tensor? min=None, Tensor? max=None) -> Tensor",
              _clamp_meta, method=True, function=True, tags=("pointwise",))
clamp_ = defop("clamp_.Tensor(Tensor(a!) self, Tensor? min=None, Tensor? max=None) -> Tensor(a!)",
               _clamp_meta_, method=True, function=True, tags=("pointwise", "inplace_of:clamp"))


def _nan_to_num_meta(self, nan=None, posinf=None, neginf=None):
    return R.pointwise_meta(PROMOTE, self)


nan_to_num = defop("nan_to_num(Tensor self, float? nan=None, float? posinf=None, "
                   "float? neginf=None) -> Tensor", _nan_to_num_meta, method=True, function=True,
                   tags=("pointwise",))

# --- composites ----------------------------------------------------------------------------------
square = defop("square(Tensor self) -> Tensor", method=True, function=True)
silu = defop("silu(Tensor self) -> Tensor")
floor_divide = defop("floor_divide(Tensor self, Tensor other) -> Tensor", method=True,
                     function=True)
true_divide = defop("true_divide.Tensor(Tensor self, Tensor other) -> Tensor", method=True,
                    function=True)
rsub = defop("rsub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
             function=True)
lerp = defop("lerp.Tensor(Tensor self, Tensor end, Tensor weight) -> Tensor", method=True,
             function=True)
addcmul = defop("addcmul(Tensor self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) -> "
                "Tensor", method=True, function=True)
addcdiv = defop("addcdiv(Tensor self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) -> "
                "Tensor", method=True, function=True)
xlogy = defop("xlogy.Tensor(Tensor self, Tensor other) -> Tensor", method=True, function=True)


@register_decomposition(square)
def _square(self):
    return pow(self, 2)


@register_decomposition(silu)
def _silu(self):
    return mul(self, sigmoid(self))


@register_decomposition(floor_divide)
def _floor_divide(self, other):
    return div_mode(self, other, "floor")


@register_decomposition(true_divide)
def _true_divide(self, other):
    return div(self, other)


@register_decomposition(rsub)
def _rsub(self, other, alpha=1):
    return sub(other, self, alpha=alpha)


@register_decomposition(lerp)
def _lerp(self, end, weight):
    return add(self, mul(weight, sub(end, self)))


@register_decomposition(addcmul)
def _addcmul(self, tensor1, tensor2, value=1):
    return add(self, mul(tensor1, tensor2), alpha=value)


@register_decomposition(addcdiv)
def _addcdiv(self, tensor1, tensor2, value=1):
    return add(self, div(tensor1, tensor2), alpha=value)


@register_decomposition(xlogy)
def _xlogy(self, other):
    return where(eq(self, 0), 0.0, mul(self, log(other)))
