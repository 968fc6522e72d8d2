"""Lowering rows of the pointwise math beyond lowering.py's: libm functions (exp2, log2,
log10, the trigonometric and hyperbolic ones, erfc, lgamma, atan2, hypot, copysign, fmax, fmin,
fmod), shifts, rounding (floor, ceil, trunc, round, frac), nan_to_num, the float tests (isnan,
isinf, isfinite, signbit), logical and bitwise ops, and float ``remainder`` and ``div`` with a
rounding mode.

Each is eager's formula (backends/cpu/pointwise.py: NumPy's ufunc) in the result's dtype:
rounding, tests, logical and bitwise ops, fmod, copysign and the remainder/floor-division
steps of NumPy's ``npy_divmod`` give its bits; the transcendental functions are glibc's, which
agree with NumPy's own (SIMD) versions within a few ulps. Integer ``fmod``, ``remainder`` and
``div`` (floor, trunc) first run eager's divisor check (``RuntimeError: ZeroDivisionError``) as
a Check step, since C would trap; x / -1 wraps as NumPy's. Only C graphs: the OpenCL printer
has its own names for these.
"""

import math

from .ir import TensorValue, ops
from .lowering import (
    DTYPES,
    FLOATING,
    INTEGER_BITS,
    INTEGERS,
    NoLowering,
    aten,
    out_spec,
    pointwise,
    register,
)
from .lowering_select import LARGEST


def _c_graph(G, node, dtypes):
    if G.device_type != "cpu" or out_spec(node)[0] not in dtypes:
        raise NoLowering(f"{node.target}: a dtype or a printer without it")


def _libm(fn):
    def lower(G, node, *args):
        _c_graph(G, node, FLOATING)
        return pointwise(G, node, lambda *xs: ops.libm(fn, *xs), *args)
    return lower


def _fmax(fn, integer_fn):
    """libm's ``fmax``/``fmin`` (a NaN loses); integers have none: their max/min."""
    def lower(G, node, a, b):
        _c_graph(G, node, FLOATING + INTEGERS)
        if out_spec(node)[0] in INTEGERS:
            return pointwise(G, node, lambda x, y: getattr(ops, integer_fn)(x, y), a, b)
        return pointwise(G, node, lambda x, y: ops.libm(fn, x, y), a, b)
    return lower


for _name in ("exp2", "log2", "log10", "tan", "asin", "acos", "atan", "sinh", "cosh", "asinh",
              "acosh", "atanh", "erfc", "atan2", "hypot"):
    register(getattr(aten, _name).default)(_libm(_name))
register(aten.fmax.default)(_fmax("fmax", "maximum"))
register(aten.fmin.default)(_fmax("fmin", "minimum"))
register(aten.copysign.Tensor)(_libm("copysign"))


@register(aten.lgamma.default)
def _lgamma(G, node, a):
    """glibc's ``lgamma`` in double, rounded to the dtype: eager's (backends/cpu/special.py)
    for fewer than 512 elements, and within ulps of its vectorised fdlibm formulas (for
    negative x near a zero of lgamma, glibc's is the more accurate: there they agree
    absolutely, not relatively)."""
    _c_graph(G, node, FLOATING)
    return pointwise(G, node, lambda x: ops.libm("lgamma", x), a, compute="float64")


def _shift(G, node, a, b, left):
    """eager's ``_shift_left``/``_shift_right`` (PyTorch's): a left shift by a negative amount
    or by the bit width or more gives 0; a right shift by such an amount saturates (the sign
    fills). The amount is clamped before C shifts by it (C leaves wider shifts undefined)."""
    dtype = out_spec(node)[0]
    _c_graph(G, node, INTEGERS)
    bits = INTEGER_BITS[dtype]
    widest = bits if left or dtype == "uint8" else bits - 1

    def shift(x, y):
        outside = ops.where(ops.lt(y, ops.constant(0, dtype)), ops.constant(True, "bool"),
                            ops.ge(y, ops.constant(widest, dtype)))
        if left:
            amount = ops.where(outside, ops.constant(0, dtype), y)
            return ops.where(outside, ops.constant(0, dtype), ops.bitwise("<<", x, amount))
        amount = ops.where(outside, ops.constant(widest, dtype), y)
        return ops.bitwise(">>", x, amount)
    return pointwise(G, node, shift, a, b)


register(aten.bitwise_left_shift.Tensor)(lambda G, node, a, b: _shift(G, node, a, b, True))
register(aten.bitwise_right_shift.Tensor)(lambda G, node, a, b: _shift(G, node, a, b, False))


def _rounding(fn):
    """Whole numbers stay themselves (integers: eager's ``_keep_int``)."""
    def lower(G, node, a, decimals=0):
        _c_graph(G, node, FLOATING + INTEGERS)
        if decimals:
            raise NoLowering("round: decimals (eager scales by a power of ten)")
        if out_spec(node)[0] in INTEGERS:
            return pointwise(G, node, lambda x: x, a)
        return pointwise(G, node, lambda x: ops.libm(fn, x), a)
    return lower


for _name, _fn in (("floor", "floor"), ("ceil", "ceil"), ("trunc", "trunc"),
                   ("round", "nearbyint")):     # NumPy's rint: half to even
    register(getattr(aten, _name).default)(_rounding(_fn))


@register(aten.frac.default)
def _frac(G, node, a):
    """eager's ``x - trunc(x)``."""
    _c_graph(G, node, FLOATING)
    return pointwise(G, node, lambda x: ops.sub(x, ops.libm("trunc", x)), a)


@register(aten.nan_to_num.default)
def _nan_to_num(G, node, a, nan=None, posinf=None, neginf=None):
    """``np.nan_to_num`` as eager calls it: NaN -> ``nan`` (0), +-inf -> ``posinf``/``neginf``
    (the dtype's largest finite numbers); integers are copied."""
    _c_graph(G, node, DTYPES)
    dtype = out_spec(node)[0]
    if dtype not in FLOATING:
        return pointwise(G, node, lambda x: x, a)
    largest = LARGEST.get(dtype, 1.7976931348623157e308)
    if dtype in LARGEST and any(v is not None and math.isfinite(v) and abs(v) > largest
                                for v in (nan, posinf, neginf)):
        raise NoLowering("nan_to_num: a replacement beyond the dtype (NumPy warns as it casts)")
    replace = (0.0 if nan is None else nan, largest if posinf is None else posinf,
               -largest if neginf is None else neginf)

    def fixed(x):
        value = ops.where(ops.eq(x, ops.constant(-math.inf, dtype)),
                          ops.constant(replace[2], dtype), x)
        value = ops.where(ops.eq(x, ops.constant(math.inf, dtype)),
                          ops.constant(replace[1], dtype), value)
        return ops.where(ops.ne(x, x), ops.constant(replace[0], dtype), value)
    return pointwise(G, node, fixed, a)


def _classify(macro, integer_answer):
    """A test of the input's own values; an integer is never NaN or infinite."""
    def lower(G, node, a):
        _c_graph(G, node, ("bool",))
        if a.dtype in FLOATING:
            return pointwise(G, node, lambda x: ops.classify(macro, x), a, compute=a.dtype)
        if a.dtype not in INTEGERS + ("bool",):
            raise NoLowering(f"{macro} of {a.dtype}")
        return pointwise(G, node, lambda x: integer_answer(x, a.dtype), a, compute=a.dtype)
    return lower


register(aten.isnan.default)(_classify("isnan", lambda x, t: ops.constant(False, "bool")))
register(aten.isinf.default)(_classify("isinf", lambda x, t: ops.constant(False, "bool")))
register(aten.isfinite.default)(_classify("isfinite", lambda x, t: ops.constant(True, "bool")))
register(aten.signbit.default)(_classify("signbit", lambda x, t: ops.lt(
    x, ops.constant(0, t)) if t != "bool" else ops.constant(False, "bool")))


def _truth(value, size):
    """``index -> value != 0`` (NaN is true), in the value's own dtype."""
    if not isinstance(value, TensorValue):
        if isinstance(value, complex):
            raise NoLowering("a complex number")
        return lambda index: ops.constant(bool(value), "bool")
    lead = len(size) - len(value.size)

    def load(index):
        idx = tuple(0 if s == 1 and size[lead + d] != 1 else index[lead + d]
                    for d, s in enumerate(value.size))
        x = value.load(idx)
        return x if value.dtype == "bool" else ops.ne(x, ops.constant(0, value.dtype))
    return load


_LOGICAL = {
    aten.logical_and.default: lambda a, b: ops.where(a, b, ops.constant(False, "bool")),
    aten.logical_or.default: lambda a, b: ops.where(a, ops.constant(True, "bool"), b),
    aten.logical_xor.default: lambda a, b: ops.ne(a, b),
}


@register(*_LOGICAL)
def _logical(G, node, a, b):
    _c_graph(G, node, ("bool",))
    size = out_spec(node)[1]
    left, right = _truth(a, size), _truth(b, size)
    return TensorValue("bool", size, lambda i: _LOGICAL[node.target](left(i), right(i)))


@register(aten.logical_not.default)
def _logical_not(G, node, a):
    _c_graph(G, node, ("bool",))
    if a.dtype not in DTYPES:
        raise NoLowering("logical_not of a half or complex")
    truth = _truth(a, a.size)
    return TensorValue("bool", tuple(a.size), lambda i: ops.eq(
        truth(i), ops.constant(False, "bool")))


def _bitwise(operator):
    def lower(G, node, a, b):
        _c_graph(G, node, INTEGERS + ("bool",))
        return pointwise(G, node, lambda x, y: ops.bitwise(operator, x, y), a, b)
    return lower


register(aten.bitwise_and.Tensor)(_bitwise("&"))
register(aten.bitwise_or.Tensor)(_bitwise("|"))
register(aten.bitwise_xor.Tensor)(_bitwise("^"))


@register(aten.bitwise_not.default)
def _bitwise_not(G, node, a):
    _c_graph(G, node, INTEGERS + ("bool",))
    return pointwise(G, node, lambda x: ops.bitwise("~", x), a)


# --- NumPy's npy_divmod: Python's remainder and floor division of floats ---------------------

def _remainder_of(a, b, dtype):
    """ATen's ``remainder_kernel``: ``fmod`` moved into b's sign where it is not 0 (a zero
    remainder keeps fmod's sign, the dividend's); b == 0 gives fmod's NaN."""
    zero = ops.constant(0, dtype)
    mod = ops.libm("fmod", a, b)
    moved = ops.where(ops.ne(mod, zero), ops.ne(ops.lt(b, zero), ops.lt(mod, zero)),
                      ops.constant(False, "bool"))
    return ops.where(moved, ops.add(mod, b), mod)


def _floor_divide_of(a, b, dtype):
    """``(a - fmod(a, b)) / b``, one less where the remainder moved, snapped to the nearest
    whole number (a zero quotient takes the sign of a / b); b == 0 gives a / b."""
    zero, one = ops.constant(0, dtype), ops.constant(1, dtype)
    mod = ops.libm("fmod", a, b)
    quotient = ops.truediv(ops.sub(a, mod), b)
    moved = ops.where(ops.ne(mod, zero), ops.ne(ops.lt(b, zero), ops.lt(mod, zero)),
                      ops.constant(False, "bool"))
    quotient = ops.where(moved, ops.sub(quotient, one), quotient)
    whole = ops.libm("floor", quotient)
    whole = ops.where(ops.gt(ops.sub(quotient, whole), ops.constant(0.5, dtype)),
                      ops.add(whole, one), whole)
    snapped = ops.where(ops.ne(quotient, zero), whole,
                        ops.libm("copysign", zero, ops.truediv(a, b)))
    return ops.where(ops.eq(b, zero), ops.truediv(a, b), snapped)


def _divisor_check(G, node, b):
    """Integer division by zero raises eager's ``RuntimeError: ZeroDivisionError`` in a Check
    step of the wrapper, before any kernel (a generated kernel cannot raise)."""
    if not isinstance(b, TensorValue):
        if b == 0:
            raise NoLowering("an integer division by the number 0: eager raises")
        return
    if 0 in out_spec(node)[1]:
        raise NoLowering("an empty integer division: eager checks the divisor anyway")
    G.check(node.target, G.realize(b))


def _integer_remainder_of(a, b, dtype):
    """C's truncated ``%`` moved into b's sign where it is not 0 (NumPy's remainder)."""
    zero = ops.constant(0, dtype)
    mod = ops.int_fmod(a, b)
    moved = ops.where(ops.ne(mod, zero), ops.ne(ops.lt(b, zero), ops.lt(mod, zero)),
                      ops.constant(False, "bool"))
    return ops.where(moved, ops.add(mod, b), mod)


def _integer_floor_divide_of(a, b, dtype):
    """C's truncated ``/``, one less where the remainder is not 0 and the signs differ."""
    zero = ops.constant(0, dtype)
    mod = ops.int_fmod(a, b)
    moved = ops.where(ops.ne(mod, zero), ops.ne(ops.lt(b, zero), ops.lt(mod, zero)),
                      ops.constant(False, "bool"))
    quotient = ops.int_trunc_divide(a, b)
    return ops.where(moved, ops.sub(quotient, ops.constant(1, dtype)), quotient)


@register(aten.fmod.Tensor)
def _fmod(G, node, a, b):
    _c_graph(G, node, FLOATING + INTEGERS)
    if out_spec(node)[0] in FLOATING:
        return pointwise(G, node, lambda x, y: ops.libm("fmod", x, y), a, b)
    _divisor_check(G, node, b)
    return pointwise(G, node, lambda x, y: ops.int_fmod(x, y), a, b)


@register(aten.remainder.Tensor)
def _remainder(G, node, a, b):
    _c_graph(G, node, FLOATING + INTEGERS)
    dtype = out_spec(node)[0]
    if dtype in FLOATING:
        return pointwise(G, node, lambda x, y: _remainder_of(x, y, dtype), a, b)
    _divisor_check(G, node, b)
    return pointwise(G, node, lambda x, y: _integer_remainder_of(x, y, dtype), a, b)


@register(aten.div.Tensor_mode)
def _div_mode(G, node, a, b, rounding_mode=None):
    _c_graph(G, node, FLOATING + INTEGERS)
    dtype = out_spec(node)[0]
    if dtype in INTEGERS:
        if rounding_mode not in ("floor", "trunc"):
            raise NoLowering("integer true division")
        _divisor_check(G, node, b)
        if rounding_mode == "floor":
            return pointwise(G, node, lambda x, y: _integer_floor_divide_of(x, y, dtype), a, b)
        return pointwise(G, node, lambda x, y: ops.int_trunc_divide(x, y), a, b)
    if rounding_mode == "floor":
        return pointwise(G, node, lambda x, y: _floor_divide_of(x, y, dtype), a, b)
    if rounding_mode == "trunc":
        return pointwise(G, node, lambda x, y: ops.libm("trunc", ops.truediv(x, y)), a, b)
    return pointwise(G, node, lambda x, y: ops.truediv(x, y), a, b)
