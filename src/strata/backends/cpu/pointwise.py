"""CPU kernels for ``ops/pointwise.py``: each op is a NumPy ufunc (or a short formula).

The kernel makers of ``elementwise.py`` (unary, binary, comparison) apply the shared policy
(dtype rules, opmath, wrapped numbers, TensorIterator's strides, in place, big operands), so
the tables at the bottom say only which NumPy function computes each op.
"""

import math

import numpy as np

from ...core import dtype as D
from ...ops import meta_rules as R
from ...ops import pointwise as P
from . import native
from .array import COMPUTE, compute_data, wrap
from .elementwise import _out_aware, add_kernels, binary, operand, result, scalar, target, unary

# --- formulas NumPy does not have under PyTorch's name -----------------------------------------

def _scaled(ufunc):
    """``a (op) alpha * b`` for add and sub, with one temporary at most: ``alpha * b`` is
    computed into a fresh array that then takes the result when it has the result's shape."""
    @_out_aware
    def run(a, b, alpha=1, out=None):
        if alpha == 1:
            return ufunc(a, b, out=out)
        if type(b) is not np.ndarray:
            return ufunc(a, b * alpha, out=out)   # a Python number stays a weak scalar
        scaled = np.multiply(b, scalar(alpha, b.dtype))   # uint8's alpha -1 wraps to 255
        if out is None and type(scaled) is np.ndarray and \
                (type(a) is not np.ndarray or a.shape == scaled.shape):
            out = scaled
        return ufunc(a, scaled, out=out)
    run.plain = ufunc   # what ``run`` is with alpha 1 (Note [Binary fast lane])
    return run


_add = _scaled(np.add)
_sub = _scaled(np.subtract)


def _integral(a, b):
    """Both operands integers (NumPy's view of their common dtype, Python ints included)."""
    return np.result_type(a, b).kind in "iu"


def _check_int_divisor(b):
    """Integer division by zero is an error in PyTorch (CPU), not a garbage value."""
    if not np.all(b):
        raise RuntimeError("ZeroDivisionError")


def _div_mode(a, b, rounding_mode):
    if rounding_mode is None:
        return np.true_divide(a, b)
    if _integral(a, b):
        _check_int_divisor(b)
        q = np.floor_divide(a, b)
        if rounding_mode == "trunc":  # round toward zero: undo floor's step on inexact negatives
            q += (np.remainder(a, b) != 0) & ((np.asarray(a) < 0) != (np.asarray(b) < 0))
        return q
    if rounding_mode == "floor":
        return np.floor_divide(a, b)  # Python's floor division: PyTorch's div_floor_floating
    return np.trunc(np.true_divide(a, b))


def _remainder(a, b):
    """ATen's ``remainder_kernel``: ``fmod`` moved into b's sign where it is not 0. A zero
    remainder keeps fmod's sign, the dividend's (``-3.0 % 1.0`` is -0.0), where NumPy's
    ``remainder`` gives it b's."""
    if _integral(a, b):
        _check_int_divisor(b)
        return np.remainder(a, b)
    mod = np.fmod(a, b)
    moved = (mod != 0) & ((np.asarray(b) < 0) != (mod < 0))
    return np.where(moved, mod + b, mod) if np.any(moved) else mod


def _heaviside(a, b):
    """ATen's ``heaviside_kernel``: ``a == 0 ? b : a > 0`` (so NaN gives 0)."""
    return np.where(a == 0, b, (np.asarray(a) > 0).astype(np.result_type(a, b)))


def _fmod(a, b):
    if _integral(a, b):
        _check_int_divisor(b)
    return np.fmod(a, b)


def _pow(a, b):
    if type(b) in (bool, int) and b in (0, 1):  # PyTorch fills ones or copies (bool included)
        return np.ones_like(a) if b == 0 else np.array(a, copy=True)
    if not _integral(a, b):
        return np.power(a, b)
    # Integer powers with negative exponents (PyTorch's powi): 1 and -1 keep a magnitude of 1,
    # anything else truncates to 0. NumPy refuses them, so raise to |b| where b < 0 and fix up.
    b = np.asarray(b)
    negative = b < 0
    if not negative.any():
        return np.power(a, b)
    out = np.power(a, np.where(negative, 0, b))
    a = np.asarray(a)
    odd = (b % 2) != 0
    fix = np.where(a == 1, 1, np.where(a == -1, np.where(odd, -1, 1), 0))
    return np.where(negative, fix, out).astype(out.dtype)


def _shift_left(a, b):
    # Shifting by the bit width or more (or by a negative amount) gives 0, as in PyTorch.
    dt = np.result_type(a, b)
    b = np.asarray(b, dt)
    out_of_range = (b < 0) | (b >= dt.itemsize * 8)
    return np.where(out_of_range, dt.type(0), np.left_shift(a, np.where(out_of_range, 0, b)))


def _shift_right(a, b):
    # Shifts past the width saturate: the sign bit fills signed types, zeros unsigned ones.
    dt = np.result_type(a, b)
    max_shift = dt.itemsize * 8 - (1 if dt.kind == "i" else 0)
    b = np.asarray(b, dt)
    return np.right_shift(np.asarray(a, dt), np.where((b < 0) | (b >= max_shift), max_shift,
                                                      b).astype(dt))


# Multi-step formulas run in one buffer (a 0-dim one too: ufuncs return scalars for 0-dim
# inputs unless given ``out``).

@_out_aware
def _sigmoid(a, out=None):
    r = np.negative(a, out=np.empty_like(a) if out is None else out)   # 1 / (1 + exp(-a))
    np.exp(r, out=r)
    np.add(r, 1.0, out=r)
    return np.divide(1.0, r, out=r)


def _silu(a):
    r = np.exp(np.negative(a))   # x / (1 + exp(-x)), ATen's silu_kernel
    np.add(r, 1.0, out=r)
    return np.divide(a, r, out=r)


@_out_aware
def _rsqrt(a, out=None):
    r = np.sqrt(a, out=np.empty_like(a) if out is None else out)
    return np.divide(1.0, r, out=r)


@_out_aware
def _reciprocal(a, out=None):
    return np.divide(1.0, a, out=out)


@_out_aware
def _relu(a, out=None):
    """ATen's clamp_min(x, 0), ``x < 0 ? 0 : x``: -0.0 and NaN pass through (``np.maximum``
    gives +0.0 for -0.0). Large float arrays run the generated kernel of that formula."""
    if np.asarray(a).dtype.kind != "f":
        return np.maximum(a, 0, out=out)
    result = np.where(a < 0, 0, a)
    if out is None:
        return result
    np.copyto(out, result)
    return out


def _round(a, decimals=0):
    if np.asarray(a).dtype.kind in "iub":
        return np.array(a, copy=True)  # integers are already round (decimals != 0 is refused)
    return np.round(a) if decimals == 0 else np.round(a, decimals)


def _sign(a):
    if np.asarray(a).dtype.kind == "b":
        return np.array(a, copy=True)
    out = np.asarray(np.sign(a))
    if out.dtype.kind == "f":  # PyTorch: sign(nan) = 0
        np.copyto(out, 0, where=np.isnan(out))
    return out


def _keep_int(fn):
    """floor/ceil/trunc are the identity on integers (NumPy would make floats)."""
    def run(a):
        return np.array(a, copy=True) if np.asarray(a).dtype.kind in "iub" else fn(a)
    return run


def _signbit(a):
    kind = np.asarray(a).dtype.kind
    return np.signbit(a) if kind == "f" else np.less(a, 0) if kind == "i" else \
        np.zeros(np.shape(a), bool)


def _gelu(a, approximate="none"):
    generated = native.run_unary("gelu_tanh" if approximate == "tanh" else "gelu", a)
    if generated is not None:
        return generated
    if approximate == "tanh":  # in the input's precision (Python constants stay weak)
        inner = math.sqrt(2.0 / math.pi) * (a + 0.044715 * a * a * a)
        return 0.5 * a * (1.0 + np.tanh(inner))
    from .special import erf  # here: special.py builds its table with this file's makers
    x = np.asarray(a)  # float32 or float64, as PyTorch computes
    return x * 0.5 * (1.0 + erf(x * math.sqrt(0.5)))


def _frac(a):
    return a - np.trunc(a)


# --- ternary ------------------------------------------------------------------------------------

# np.where branches on every element, so a mask with no pattern (ReLU's backward, dropout) costs
# a misprediction per element: 3-9x slower than selecting by bits. Big selections pick the bits:
# the condition becomes an all-ones / all-zeros integer mask, each side is ANDed with it (or its
# complement) through an integer view, and the halves are ORed. Exact for every dtype: bits are
# copied, never computed (NaN payloads and -0.0 included); a side of zero bits needs no AND.
BITWISE_WHERE_MIN = 4096   # elements: below this, np.where's single call is cheaper
_UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
_INT = {1: np.int8, 2: np.int16, 4: np.int32, 8: np.int64}


def _zero_bits(v):
    """A Python number (or 0-dim array) whose bits are all zero: 0, False, +0.0."""
    return type(v) is not np.ndarray and v == 0 and math.copysign(1.0, v) > 0


def _bitwise_where(cond, x, y, cdt, shape):
    signed = _INT[cdt.itemsize]   # out=: an array even for a 0-dim condition
    mask = np.negative(cond, dtype=signed, out=np.empty(np.shape(cond), signed))
    mask = mask.view(_UINT[cdt.itemsize])
    parts = []
    if not _zero_bits(x):
        parts.append(np.bitwise_and(np.asarray(x, cdt).view(mask.dtype), mask))
    if not _zero_bits(y):
        parts.append(np.bitwise_and(np.asarray(y, cdt).view(mask.dtype),
                                    np.invert(mask, out=mask)))
    if not parts:
        return np.zeros(shape, cdt)
    bits = parts[0] if len(parts) == 1 else np.bitwise_or(*parts)
    if bits.shape != shape:   # a side broadcast wider than the other and the mask
        bits = np.broadcast_to(bits, shape).copy()
    return bits.view(cdt)


def where_kernel(condition, self, other):
    spec = P.where.meta(condition, self, other)
    cdt = COMPUTE[spec.dtype]
    cond = operand(condition, np.dtype(bool))
    x, y = operand(self, cdt), operand(other, cdt)
    size = 1
    for n in spec.shape:
        size *= n
    if size >= BITWISE_WHERE_MIN:
        r = _bitwise_where(cond, x, y, cdt, tuple(spec.shape))
    else:
        r = np.where(cond, x, y)
    return result(r, spec.dtype, (condition, self, other))


def _clamp(a, lo, hi):
    """ATen's vectorised clamp: a bound replaces x only where it is strictly past it (so on a
    tie of 0.0 and -0.0 x keeps its sign), a NaN x stays NaN, a NaN bound makes every
    element NaN; tensor bounds take NumPy's maximum/minimum."""
    if (lo is None or np.ndim(lo) == 0) and (hi is None or np.ndim(hi) == 0) and \
            not (lo is not None and np.isnan(lo)) and not (hi is not None and np.isnan(hi)):
        generated = native.run_unary("clamp", a, -math.inf if lo is None else lo,
                                     math.inf if hi is None else hi)
        if generated is not None:    # one pass, not NumPy's two
            return generated
        out = a if lo is None else np.where(a < lo, lo, a)
        return out if hi is None else np.where(hi < out, hi, out)
    out = a if lo is None else np.maximum(a, lo)
    return out if hi is None else np.minimum(out, hi)


def clamp_kernel(self, min=None, max=None):
    spec = P.clamp.meta(self, min, max)
    cdt = COMPUTE[spec.dtype]
    r = _clamp(operand(self, cdt), operand(min, cdt), operand(max, cdt))
    return result(r, spec.dtype, P.clamp_operands(self, min, max))


def clamp_kernel_(self, min=None, max=None):
    P.clamp_.meta(self, min, max)
    cdt = COMPUTE[P.clamp.dtype_rule(*P.clamp_operands(self, min, max))]
    r = _clamp(operand(self, cdt), operand(min, cdt), operand(max, cdt))
    np.copyto(target(self), r, casting="unsafe")
    return self


def _nan_to_num(self, nan, posinf, neginf):
    dt = self.dtype
    arr = operand(self, COMPUTE[dt])
    if dt.category != D.FLOATING:
        return np.array(arr, copy=True)
    info = D.finfo(dt)
    nan = 0.0 if nan is None else nan
    posinf = info.max if posinf is None else posinf
    neginf = info.min if neginf is None else neginf
    generated = native.run_unary("nan_to_num", arr, nan, posinf, neginf)
    if generated is not None:
        return generated
    return np.nan_to_num(arr, nan=nan, posinf=posinf, neginf=neginf)


def nan_to_num_kernel(self, nan=None, posinf=None, neginf=None):
    return result(_nan_to_num(self, nan, posinf, neginf), self.dtype, (self,))


def nan_to_num_kernel_(self, nan=None, posinf=None, neginf=None):
    P.nan_to_num_.meta(self, nan, posinf, neginf)
    np.copyto(target(self), _nan_to_num(self, nan, posinf, neginf), casting="unsafe")
    return self


def _div_mode_kernel(self, other, rounding_mode):
    dt = P.div_mode_rule(self, other, rounding_mode)
    cdt = COMPUTE[dt]
    try:
        r = _div_mode(operand(self, cdt), operand(other, cdt), rounding_mode)
    except ValueError:
        R.broadcast_shapes(R.shape_of(self), R.shape_of(other))
        raise
    return result(r, dt, (self, other))


def _div_mode_kernel_(self, other, rounding_mode):
    P.div_mode_.meta(self, other, rounding_mode)
    cdt = COMPUTE[P.div_mode_rule(self, other, rounding_mode)]
    r = _div_mode(operand(self, cdt), operand(other, cdt), rounding_mode)
    np.copyto(target(self), r, casting="unsafe")
    return self


# --- frexp ----------------------------------------------------------------------------------------
def frexp_kernel(self):
    mantissa, exponent = P.frexp.meta(self)
    m, e = np.frexp(compute_data(self, self.dtype))
    return wrap(m, mantissa.dtype), wrap(e, exponent.dtype)


# --- the tables ---------------------------------------------------------------------------------

def _compute_self(self):
    return self.dtype


# Note [Generated unary]: NumPy's exp, log, sqrt, neg and abs loops are vectorised but run on
# one thread; from these sizes (float32/float64, contiguous) a generated kernel on the native
# pool runs instead (compile/inductor/eager.py). Float32, us, NumPy -> generated (torch 2.13):
# 0.5M: exp 251 -> 109 (63), log 400 -> 90, sqrt 319 -> 84, neg 162 -> 68 (68), abs 152 -> 65
# (61); 64K: exp 33 -> 24; below, NumPy's one call costs less than the kernel's ~5 us of
# Python around a ctypes call.
NUMPY_FAST = 1 << 16        # exp, log
NUMPY_FASTEST = 1 << 17     # sqrt, neg, abs: one instruction an element

UNARY = [
    ("exp", native.generated_or("exp", np.exp, NUMPY_FAST)), ("exp2", np.exp2),
    ("expm1", np.expm1), ("log", native.generated_or("log", np.log, NUMPY_FAST)),
    ("log2", np.log2), ("log10", np.log10), ("log1p", np.log1p),
    ("sqrt", native.generated_or("sqrt", np.sqrt, NUMPY_FASTEST)),
    ("rsqrt", _rsqrt), ("sin", np.sin), ("cos", np.cos), ("tan", np.tan),
    ("asin", np.arcsin), ("acos", np.arccos), ("atan", np.arctan), ("sinh", np.sinh),
    ("cosh", np.cosh), ("tanh", native.generated_or("tanh", np.tanh)), ("asinh", np.arcsinh),
    ("acosh", np.arccosh), ("atanh", np.arctanh),
    ("sigmoid", native.generated_or("sigmoid", _sigmoid)), ("reciprocal", _reciprocal),
    ("silu", native.generated_or("silu", _silu)),
    ("neg", native.generated_or("neg", np.negative, NUMPY_FASTEST)), ("sign", _sign), ("floor", _keep_int(np.floor)),
    ("ceil", _keep_int(np.ceil)), ("trunc", _keep_int(np.trunc)), ("frac", _frac),
    ("relu", native.generated_or("relu", _relu)), ("bitwise_not", np.invert),
]
UNARY_CHECKED = [("round", _round, P.check_round), ("gelu", _gelu, P.check_gelu)]
UNARY_OF_INPUT = [  # computed on the input's own values: bool tests, abs (complex -> real)
    ("abs", native.generated_or("abs", np.abs, NUMPY_FASTEST)),
    ("logical_not", np.logical_not), ("isnan", np.isnan), ("isinf", np.isinf),
    ("isfinite", np.isfinite), ("signbit", _signbit),
]
BINARY = [
    ("mul", np.multiply), ("div", np.true_divide), ("remainder", _remainder),
    ("fmod", _fmod), ("atan2", np.arctan2), ("maximum", np.maximum),
    ("minimum", np.minimum), ("fmax", np.fmax), ("fmin", np.fmin), ("hypot", np.hypot), ("heaviside", _heaviside),
    ("copysign", np.copysign), ("bitwise_and", np.bitwise_and), ("bitwise_or", np.bitwise_or),
    ("bitwise_xor", np.bitwise_xor), ("bitwise_left_shift", _shift_left),
    ("bitwise_right_shift", _shift_right),
]
BINARY_CHECKED = [("add", _add, P.check_alpha), ("sub", _sub, P.check_alpha)]
COMPARE = [  # bool results computed in the operands' promoted dtype
    ("eq", np.equal), ("ne", np.not_equal), ("lt", np.less), ("le", np.less_equal),
    ("gt", np.greater), ("ge", np.greater_equal), ("logical_and", np.logical_and),
    ("logical_or", np.logical_or), ("logical_xor", np.logical_xor),
]


def _table():
    t = {}

    def add(name, maker, fn, **kw):
        add_kernels(t, P, name, maker, fn, **kw)

    for name, fn in UNARY:
        add(name, unary, fn)
    for name, fn, check in UNARY_CHECKED:
        add(name, unary, fn, check=check)
    for name, fn in UNARY_OF_INPUT:
        add(name, unary, fn, compute=_compute_self)
    for name, fn in BINARY:
        add(name, binary, fn)
    for name, fn, check in BINARY_CHECKED:
        add(name, binary, fn, check=check)
    add("pow", binary, _pow, validate=P.check_pow)
    for name, fn in COMPARE:
        add(name, binary, fn, compute=R.promote)
    t[P.where] = where_kernel
    t[P.clamp] = clamp_kernel
    t[P.clamp_] = clamp_kernel_
    t[P.nan_to_num] = nan_to_num_kernel
    t[P.nan_to_num_] = nan_to_num_kernel_
    t[P.div_mode] = _div_mode_kernel
    t[P.div_mode_] = _div_mode_kernel_
    t[P.frexp] = frexp_kernel
    return t


KERNELS = _table()
