"""CPU kernels for ``ops/pointwise.py``: each op is a NumPy ufunc (or a short formula).

One wrapper per family applies the shared policy — the dtype rule of the op's meta (the same
function, so meta and CPU agree), the float32 "opmath" for half types, the in-place cast and shape
checks — and the table below says only which NumPy function computes each op.
"""

import math

import numpy as np

from ...core import dtype as D
from ...ops import meta_rules as R
from ...ops import pointwise as P
from .array import COMPUTE, compute_data, data, wrap, write


def _shape_error(*operands):
    R.broadcast_shapes(*(R.shape_of(x) for x in operands))


def unary(fn, rule):
    def kernel(self, *extra):
        dt = rule(self)
        return wrap(fn(compute_data(self, dt), *extra), dt)

    def kernel_(self, *extra):
        dt = rule(self)
        R.check_inplace_cast(dt, self.dtype)
        R.check_no_internal_overlap(self)
        return write(self, fn(compute_data(self, dt), *extra))

    return kernel, kernel_


def binary(fn, rule):
    def kernel(self, other, *extra):
        dt = rule(self, other)
        try:
            return wrap(fn(compute_data(self, dt), compute_data(other, dt), *extra), dt)
        except ValueError:
            _shape_error(self, other)
            raise

    def kernel_(self, other, *extra):
        R.inplace_meta(self, R.pointwise_meta(rule, self, other))
        R.check_no_internal_overlap(self)
        dt = rule(self, other)
        return write(self, fn(compute_data(self, dt), compute_data(other, dt), *extra))

    return kernel, kernel_


def compare(fn):
    """Comparisons: compute in the promoted dtype, return bool."""
    def kernel(self, other):
        dt = R.promote(self, other)
        try:
            return wrap(fn(compute_data(self, dt), compute_data(other, dt)), D.bool_)
        except ValueError:
            _shape_error(self, other)
            raise

    def kernel_(self, other):
        R.inplace_meta(self, R.pointwise_meta(R.promote, self, other))
        dt = R.promote(self, other)
        return write(self, fn(compute_data(self, dt), compute_data(other, dt)))

    return kernel, kernel_


# --- formulas NumPy does not have under PyTorch's name -----------------------------------------

def _add(a, b, alpha=1):
    return np.add(a, b) if alpha == 1 else np.add(a, np.multiply(b, alpha))


def _sub(a, b, alpha=1):
    return np.subtract(a, b) if alpha == 1 else np.subtract(a, np.multiply(b, alpha))


def _check_int_div(b):
    if isinstance(b, np.ndarray) and b.dtype.kind in "iub" and not np.all(b):
        raise RuntimeError("ZeroDivisionError")
    if isinstance(b, (int, np.integer)) and b == 0:
        raise RuntimeError("ZeroDivisionError")


def _div_mode(a, b, rounding_mode):
    integral = np.asarray(a).dtype.kind in "iub" and np.asarray(b).dtype.kind in "iub"
    if rounding_mode is None:
        return np.true_divide(a, b)
    if integral:
        _check_int_div(b)
        if rounding_mode == "floor":
            return np.floor_divide(a, b)
        if rounding_mode == "trunc":
            q = np.floor_divide(a, b)
            fix = (np.remainder(a, b) != 0) & ((np.asarray(a) < 0) != (np.asarray(b) < 0))
            return q + fix
    elif rounding_mode == "floor":
        return np.floor(np.true_divide(a, b))
    elif rounding_mode == "trunc":
        return np.trunc(np.true_divide(a, b))
    raise RuntimeError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but "
                       f"found '{rounding_mode}'")


def _remainder(a, b):
    if np.asarray(a).dtype.kind in "iu" and np.asarray(b).dtype.kind in "iu":
        _check_int_div(b)
    return np.remainder(a, b)


def _fmod(a, b):
    if np.asarray(a).dtype.kind in "iu" and np.asarray(b).dtype.kind in "iu":
        _check_int_div(b)
    return np.fmod(a, b)


def _pow(a, b):
    arr_a, arr_b = np.asarray(a), np.asarray(b)
    if arr_a.dtype.kind in "iu" and arr_b.dtype.kind in "iu" and np.any(arr_b < 0):
        raise RuntimeError("Integers to negative integer powers are not allowed.")
    return np.power(a, b)


def _sigmoid(a):
    return 1.0 / (1.0 + np.exp(-a))


def _round(a, decimals=0):
    if decimals == 0:
        return np.round(a)
    return np.round(a, decimals)


_erf = np.vectorize(math.erf, otypes=[np.float64])
_lgamma = np.vectorize(math.lgamma, otypes=[np.float64])


def _erfinv(a):
    # Newton's method on erf(x) = a, started from Giles' approximation; float64 throughout.
    y = np.asarray(a, dtype=np.float64)
    w = -np.log((1.0 - y) * (1.0 + y))
    x = np.where(w < 5.0,
                 _poly(w - 2.5, [2.81022636e-08, 3.43273939e-07, -3.5233877e-06,
                                 -4.39150654e-06, 0.00021858087, -0.00125372503,
                                 -0.00417768164, 0.246640727, 1.50140941]),
                 _poly(np.sqrt(np.abs(w)) - 3.0, [-0.000200214257, 0.000100950558,
                                                  0.00134934322, -0.00367342844, 0.00573950773,
                                                  -0.0076224613, 0.00943887047, 1.00167406,
                                                  2.83297682])) * y
    for _ in range(2):
        err = _erf(x) - y
        x = x - err / (2.0 / math.sqrt(math.pi) * np.exp(-x * x))
    x = np.where(y == 1, np.inf, np.where(y == -1, -np.inf, x))
    return np.where(np.abs(y) > 1, np.nan, x)


def _poly(w, coeffs):
    p = np.zeros_like(w)
    for c in coeffs:
        p = p * w + c
    return p


def _gelu(a, approximate="none"):
    if approximate == "tanh":
        return 0.5 * a * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (a + 0.044715 * a ** 3)))
    if approximate != "none":
        raise RuntimeError(f"approximate argument must be either none or tanh.")
    return (0.5 * a * (1.0 + _erf(a * (1.0 / math.sqrt(2.0))))).astype(np.asarray(a).dtype)


def _relu(a):
    return np.maximum(a, 0) if np.asarray(a).dtype.kind != "b" else np.asarray(a).copy()


def _frac(a):
    return a - np.trunc(a)


def _sign(a):
    arr = np.asarray(a)
    return np.sign(arr) if arr.dtype.kind != "b" else arr.copy()


def _abs(a):
    arr = np.asarray(a)
    return np.abs(arr) if arr.dtype.kind != "b" else arr.copy()


def _keep_int(fn):
    """floor/ceil/round/trunc are the identity on integers (NumPy would make floats)."""
    def run(a, *extra):
        arr = np.asarray(a)
        return arr.copy() if arr.dtype.kind in "iub" else fn(arr, *extra)
    return run


def where_kernel(condition, self, other):
    dt = R.promote(self, other)
    cond = data(condition)
    try:
        return wrap(np.where(cond, compute_data(self, dt), compute_data(other, dt)), dt)
    except ValueError:
        _shape_error(condition, self, other)
        raise


def _clamp(a, lo, hi):
    out = a
    if lo is not None:
        out = np.maximum(out, lo)
    if hi is not None:
        out = np.minimum(out, hi)
    if out is a:
        out = np.array(a, copy=True)
    return out


def clamp_kernel(self, min=None, max=None):
    meta = P.clamp.meta(self, min, max)
    dt = meta.dtype
    return wrap(np.broadcast_to(_clamp(compute_data(self, dt), compute_data(min, dt),
                                       compute_data(max, dt)), meta.shape).copy()
                if meta.shape != tuple(self.shape) else
                _clamp(compute_data(self, dt), compute_data(min, dt), compute_data(max, dt)), dt)


def clamp_kernel_(self, min=None, max=None):
    P.clamp_.meta(self, min, max)
    dt = R.promote(self, *(x for x in (min, max) if x is not None))
    return write(self, _clamp(compute_data(self, dt), compute_data(min, dt),
                              compute_data(max, dt)))


def nan_to_num_kernel(self, nan=None, posinf=None, neginf=None):
    dt = self.dtype
    arr = data(self)
    if arr.dtype.kind not in "f" and dt is not D.bfloat16:
        return wrap(arr.copy(), dt)
    info = D.finfo(dt)
    c = compute_data(self, dt)
    out = np.nan_to_num(c, nan=0.0 if nan is None else nan,
                        posinf=info.max if posinf is None else posinf,
                        neginf=info.min if neginf is None else neginf)
    return wrap(out, dt)


def _table():
    t = {}

    def add(name, fn, maker):
        op = getattr(P, name)
        k, k_ = maker(fn) if maker is compare else maker(fn, op.dtype_rule)
        k.__qualname__, k_.__qualname__ = f"{maker.__name__}[{name}]", f"{maker.__name__}[{name}_]"
        t[op] = k
        inplace = getattr(P, name + "_", None)
        if inplace is not None:
            t[inplace] = k_

    for name, fn in [("exp", np.exp), ("exp2", np.exp2), ("expm1", np.expm1), ("log", np.log),
                     ("log2", np.log2), ("log10", np.log10), ("log1p", np.log1p),
                     ("sqrt", np.sqrt), ("rsqrt", lambda a: 1.0 / np.sqrt(a)), ("sin", np.sin),
                     ("cos", np.cos), ("tan", np.tan), ("asin", np.arcsin), ("acos", np.arccos),
                     ("atan", np.arctan), ("sinh", np.sinh), ("cosh", np.cosh),
                     ("tanh", np.tanh), ("asinh", np.arcsinh), ("acosh", np.arccosh),
                     ("atanh", np.arctanh), ("sigmoid", _sigmoid),
                     ("erf", lambda a: _erf(a).astype(np.asarray(a).dtype)),
                     ("erfc", lambda a: (1.0 - _erf(a)).astype(np.asarray(a).dtype)),
                     ("erfinv", lambda a: _erfinv(a).astype(np.asarray(a).dtype)),
                     ("reciprocal", lambda a: 1.0 / a),
                     ("lgamma", lambda a: _lgamma(a).astype(np.asarray(a).dtype)),
                     ("abs", _abs), ("sign", _sign), ("floor", _keep_int(np.floor)),
                     ("ceil", _keep_int(np.ceil)), ("trunc", _keep_int(np.trunc)),
                     ("round", _keep_int(_round)), ("relu", _relu), ("neg", np.negative),
                     ("frac", _frac), ("bitwise_not", np.invert),
                     ("logical_not", np.logical_not), ("gelu", _gelu), ("isnan", np.isnan),
                     ("isinf", np.isinf), ("isfinite", np.isfinite), ("signbit", np.signbit)]:
        add(name, fn, unary)
    for name, fn in [("add", _add), ("sub", _sub), ("mul", np.multiply),
                     ("div", np.true_divide), ("div_mode", _div_mode),
                     ("remainder", _remainder), ("fmod", _fmod), ("pow", _pow),
                     ("atan2", np.arctan2), ("maximum", np.maximum), ("minimum", np.minimum),
                     ("fmax", np.fmax), ("fmin", np.fmin), ("hypot", np.hypot),
                     ("copysign", np.copysign), ("bitwise_and", np.bitwise_and),
                     ("bitwise_or", np.bitwise_or), ("bitwise_xor", np.bitwise_xor),
                     ("bitwise_left_shift", np.left_shift),
                     ("bitwise_right_shift", np.right_shift)]:
        add(name, fn, binary)
    for name, fn in [("eq", np.equal), ("ne", np.not_equal), ("lt", np.less),
                     ("le", np.less_equal), ("gt", np.greater), ("ge", np.greater_equal),
                     ("logical_and", np.logical_and), ("logical_or", np.logical_or),
                     ("logical_xor", np.logical_xor)]:
        add(name, fn, compare)
    t[P.where] = where_kernel
    t[P.clamp] = clamp_kernel
    t[P.clamp_] = clamp_kernel_
    t[P.nan_to_num] = nan_to_num_kernel
    return t


KERNELS = _table()
