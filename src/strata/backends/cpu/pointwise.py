"""CPU kernels for ``ops/pointwise.py``: each op is a NumPy ufunc (or a short formula).

One kernel maker per family (unary, binary, comparison) applies the shared policy, so the tables
at the bottom say only which NumPy function computes each op:

* the result dtype comes from the op's dtype rule (the function its meta uses), cached for the
  common cases whose answer cannot change (same-dtype tensors, a tensor and a Python number);
* half types compute in float32 and round once, as PyTorch's CPU "opmath" does;
* Python numbers are cast to the compute dtype like PyTorch's wrapped numbers (uint8 - 1 wraps);
* the result gets the strides TensorIterator would give it (``meta_rules.pointwise_strides``):
  NumPy already agrees whenever every input is contiguous, so only other layouts are checked;
* in-place kernels run the in-place meta (overlap, shape, cast), then write into ``self``.
"""

import math

import numpy as np

from ..._tensor import from_array
from ...core import dtype as D
from ...core import fp_errors
from ...core.tensor_impl import TensorImpl
from ...ops import meta_rules as R
from ...ops import pointwise as P
from . import native
from .array import (
    COMPUTE,
    MEMORY_BOUND_GRAIN,
    allocation_error,
    compute_data,
    empty_apart,
    parallel_for,
    wrap,
)

set_state, reset_state, IGNORE = fp_errors.state.set, fp_errors.state.reset, fp_errors.IGNORE
_INT_RANGE = {np.dtype(t): (np.iinfo(t).min, np.iinfo(t).max)
              for t in (np.uint8, np.int8, np.int16, np.int32, np.int64)}


def scalar(x, cdt):
    """A Python number as PyTorch wraps it for an op computing in NumPy dtype ``cdt``: integers
    out of the dtype's range wrap around (``uint8 - 1`` subtracts 255)."""
    if isinstance(x, np.generic):
        x = x.item()
    if type(x) is int:
        bounds = _INT_RANGE.get(cdt)
        if bounds is not None and not bounds[0] <= x <= bounds[1]:
            return np.array(x).astype(cdt)
    return x


def operand(x, cdt):
    """One operand in NumPy compute dtype ``cdt``: a strided view of a tensor (converted only
    when its dtype differs), or a wrapped Python number."""
    if isinstance(x, TensorImpl):
        arr = x._array
        if arr is None:
            arr = x._np()
        return arr if arr.dtype is cdt else arr.astype(cdt)
    return scalar(x, cdt)


def target(self):
    """The NumPy view an in-place kernel writes through (never a converted copy)."""
    arr = self._array
    return arr if arr is not None else self._np()


def _dense(x):
    """True for Python numbers and C-contiguous tensors: inputs for which NumPy's output layout
    is TensorIterator's (row-major)."""
    if not isinstance(x, TensorImpl):
        return True
    arr = x._array
    return arr.flags.c_contiguous if arr is not None else x.is_contiguous()


def result(r, dt, operands):
    """A kernel's NumPy result as a tensor of dtype ``dt``, laid out as TensorIterator would.
    (A fresh 0-d or 1-d result is always row-major, whatever the inputs: nothing to check.)"""
    if type(r) is not np.ndarray:
        r = np.asarray(r)  # ufuncs return NumPy scalars for 0-dim inputs
    if r.dtype is not dt.np:
        r = r.astype(dt.np)  # order="K": keeps the layout
    if r.ndim > 1:
        for x in operands:
            if not _dense(x):
                return _relayout(r, dt, R.pointwise_strides(r.shape, operands))
    return from_array(r, dt)


def _relayout(r, dt, strides):
    itemsize = r.itemsize
    if r.size and tuple(s // itemsize for s in r.strides) == strides:
        return from_array(r, dt)
    # A fresh buffer in the wanted dim order (the strides are a dense permutation).
    order = sorted(range(r.ndim), key=lambda d: (-strides[d], -d))
    out = np.empty([r.shape[d] for d in order], r.dtype).transpose(np.argsort(order))
    np.copyto(out, r)
    t = from_array(out, dt)
    t._strides = strides  # exact for size-0 and size-1 dims too
    return t


def _cached_dtypes(rule, compute=None):
    """``(result dtype, NumPy compute dtype)`` of a binary op's operands. ``compute`` gives the
    dtype the math runs in when it is not the result's (comparisons: the promoted dtype).

    Cached for the calls whose answer cannot depend on ndim or on the default dtype: tensors of
    one dtype, or a tensor and a Python number, when the dtypes found are the tensor's own (or
    bool). Everything else, errors included, goes through the rules each time."""
    cache = {}

    def dtypes(self, other):
        sd = getattr(self, "dtype", None)
        od = getattr(other, "dtype", None)
        if sd is od:
            key = sd
        elif od is None:
            key = (sd, type(other))
        elif sd is None:
            key = (type(self), od)
        else:
            key = None
        hit = cache.get(key)
        if hit is None:
            dt = rule(self, other)
            cd = dt if compute is None else compute(self, other)
            hit = (dt, COMPUTE[cd])
            if key is not None and (dt is sd or dt is od or dt is D.bool_) and \
                    (cd is sd or cd is od or cd is D.bool_):
                cache[key] = hit
        return hit
    return dtypes


# --- large operands: chunks over the thread pool ------------------------------------------------
# Note [Parallel pointwise]: NumPy releases the GIL inside a ufunc loop, so a big elementwise op
# runs as one contiguous chunk per thread (Note [CPU parallel_for]), each chunk a ufunc call with
# ``out=`` into its slice of the result, as ATen's TensorIterator splits a loop. Only the plain
# case is split: C-contiguous operands of one shape (and scalars), results in the compute dtype.

LARGE = 1 << 18   # elements: below this, thread hand-off costs more than the second core gives


def _flat_operands(operands, shape):
    """The operands as flat arrays (0-dim arrays and Python numbers as they are), or None when
    one of them broadcasts or is not C-contiguous."""
    flat = []
    for x in operands:
        if type(x) is np.ndarray and x.ndim:
            if x.shape != shape or not x.flags.c_contiguous:
                return None
            x = x.reshape(-1)
        flat.append(x)
    return flat


def _run_chunks(fn, flat, extra, flat_out):
    sliced = [type(x) is np.ndarray and x.ndim > 0 for x in flat]

    def chunk(lo, hi):
        fn(*[x[lo:hi] if s else x for x, s in zip(flat, sliced)], *extra, out=flat_out[lo:hi])
    parallel_for(0, flat_out.shape[0], MEMORY_BOUND_GRAIN, chunk)


def large_result(fn, dtype, operands, extra, source):
    """``fn(*operands, *extra)`` computed in parallel chunks into a fresh array placed apart from
    ``source`` (Note [4K aliasing]); None when the operands are not the plain case."""
    flat = _flat_operands(operands, source.shape)
    if flat is None:
        return None
    out = empty_apart(source.shape, dtype, source)
    _run_chunks(fn, flat, extra, out.reshape(-1))
    return out


def large_inplace(fn, out, operands, extra):
    """``fn`` in parallel chunks written into ``out`` (self's array); False if not the plain
    case."""
    if not out.flags.c_contiguous:
        return False
    flat = _flat_operands(operands, out.shape)
    if flat is None:
        return False
    _run_chunks(fn, flat, extra, out.reshape(-1))
    return True


def writes_out(fn):
    """True for a formula that, like a ufunc, can write its result into ``out=``."""
    return isinstance(fn, np.ufunc) or getattr(fn, "writes_out", False)


def _out_aware(fn):
    """Mark a formula that takes ``out=`` as a ufunc does (see ``writes_out``)."""
    fn.writes_out = True
    return fn


def unary(fn, op, op_, check=None, compute=None):
    """Kernels for ``op`` and its in-place twin ``op_``. ``compute(self)`` is the dtype the math
    runs in when it is not the result dtype (isnan & co. look at the input, not at bool)."""
    rule = op.dtype_rule
    cache = {}  # input dtype -> (result dtype, NumPy compute dtype), when the default can't matter
    # In place, a formula that can write through ``out=`` computes straight into self's memory
    # when self already has the compute dtype: no temporary, no copy.
    direct = compute is None and writes_out(fn)

    def kernel(self, *extra):
        hit = cache.get(self.dtype)
        if hit is None:
            dt = rule(self)
            hit = (dt, COMPUTE[dt if compute is None else compute(self)])
            if dt is self.dtype or dt is D.bool_:
                cache[self.dtype] = hit
        dt, cdt = hit
        if check is not None:
            check(dt, *extra)
        a = operand(self, cdt)
        if a.size >= LARGE and direct and cdt is dt.np:
            r = large_result(fn, cdt, (a,), extra, a)
            if r is not None:
                return from_array(r, dt)
        r = fn(a, *extra)
        if type(r) is np.ndarray and r.ndim < 2 and r.dtype is dt.np:
            return from_array(r, dt)  # the common case of ``result``, inlined
        return result(r, dt, (self,))

    def kernel_(self, *extra):
        op_.meta(self, *extra)
        cdt = COMPUTE[rule(self) if compute is None else compute(self)]
        out = target(self)
        if direct and out.dtype is cdt:
            if out.size < LARGE or not large_inplace(fn, out, (out,), extra):
                fn(out, *extra, out=out)
        else:
            np.copyto(out, fn(operand(self, cdt), *extra), casting="unsafe")
        return self
    return kernel, kernel_


def binary(fn, op, op_, check=None, compute=None, validate=None):
    """Kernels for a binary ``op`` and its in-place twin ``op_`` (see ``unary``); ``validate(self,
    other)`` checks what the dtype rule cannot see (values of Python numbers)."""
    dtypes = _cached_dtypes(op.dtype_rule, compute)
    direct = compute is None and writes_out(fn)
    # Note [Binary fast lane]: the (dtype, extra arguments) already seen to need nothing but
    # ``fn``: two tensors of that dtype give it, computing natively in it, with the checks
    # passed. Only no extra argument or an int ``alpha`` opens a lane; a float or bool alpha
    # equal to an int one finds its key but is turned away by its type, and other arguments (a
    # rounding mode) have none, so a check that depends on them always runs. Each key maps to
    # the call that computes it: ``fn`` with its extra arguments, or for ``add``/``sub`` with alpha 1
    # the ufunc itself (``_scaled``'s ``plain``), one Python frame less.
    same_dtype_lane = {}

    def lane_key(dt, extra):
        if not extra or len(extra) == 1 and type(extra[0]) is int:
            return dt, extra
        return None

    def lane_call(extra):
        plain = getattr(fn, "plain", None)
        return (plain, ()) if plain is not None and extra == (1,) else (fn, extra)

    def remember_lane(dt, cdt, self, other, extra):
        """Open the lane for this call's key once the full path has checked it."""
        if validate is None and cdt is dt.np and \
                dt is getattr(self, "dtype", None) is getattr(other, "dtype", None):
            key = lane_key(dt, extra)
            if key is not None:
                same_dtype_lane[key] = lane_call(extra)

    def kernel(self, other, *extra):
        token = set_state(IGNORE)   # as cpu_kernel does (Note [One-frame CPU kernels])
        try:
            a = getattr(self, "_array", None)   # None for Python numbers, lazily viewed tensors
            if a is not None:
                b = getattr(other, "_array", None)
                dt = self.dtype
                lane = None
                if b is not None and dt is other.dtype and a.size < LARGE and b.size < LARGE:
                    lane = same_dtype_lane.get((dt, extra))
                    if lane is not None and extra and type(extra[0]) is not int:
                        lane = None   # 1.0 or True, equal to the int alpha 1 (lane_key)
                if lane is not None:
                    callee, args = lane
                    try:   # (a call with ``*()`` costs as much again as one without)
                        r = callee(a, b, *args) if args else callee(a, b)
                    except ValueError:  # NumPy's broadcast error: raise PyTorch's
                        R.broadcast_shapes(self._shape, other._shape)
                        raise
                    if type(r) is np.ndarray and r.dtype is a.dtype and (
                            r.ndim < 2 or a.flags.c_contiguous and b.flags.c_contiguous):
                        return from_array(r, dt)
                    return result(r, dt, (self, other))
            return full_path(self, other, extra)
        except (MemoryError, ValueError) as exc:
            error = allocation_error(exc)
            if error is None:
                raise
            raise error from None
        finally:
            reset_state(token)
    kernel.manages_cpu_state = True
    kernel.calls_no_ops = True   # Note [Kernels that call no ops] (dispatch/dispatcher.py)

    def full_path(self, other, extra):
        """The dtype rule, checks and operand conversions: what the lane skips."""
        if validate is not None:
            validate(self, other)
        dt, cdt = dtypes(self, other)
        if check is not None:
            check(dt, *extra)
        remember_lane(dt, cdt, self, other, extra)
        a, b = operand(self, cdt), operand(other, cdt)
        if direct and cdt is dt.np:
            big = a if type(a) is np.ndarray and a.size >= LARGE else \
                b if type(b) is np.ndarray and b.size >= LARGE else None
            if big is not None:
                r = large_result(fn, cdt, (a, b), extra, big)
                if r is not None:
                    return from_array(r, dt)
        try:
            r = fn(a, b, *extra)
        except ValueError:  # NumPy's broadcast error: raise PyTorch's
            R.broadcast_shapes(R.shape_of(self), R.shape_of(other))
            raise
        if type(r) is np.ndarray and r.ndim < 2 and r.dtype is dt.np:
            return from_array(r, dt)  # the common case of ``result``, inlined
        return result(r, dt, (self, other))

    def kernel_(self, other, *extra):
        # Note [In-place fast lane]: the lane of Note [Binary fast lane], written into ``self``
        # (gradient accumulation, optimizer updates). The lane's key already passed the dtype
        # rule and checks; what ``op_.meta`` adds for an in-place write holds by construction
        # here: one shape (no broadcast to refuse), one dtype (nothing to cast), and what
        # ``_lane_arrays`` checks (no element written twice, no partial overlap).
        if direct and isinstance(other, TensorImpl) and self.dtype is other.dtype and \
                self._shape == other._shape:
            lane = same_dtype_lane.get((self.dtype, extra))
            if lane is not None and extra and type(extra[0]) is not int:
                lane = None   # 1.0 or True, equal to the int alpha 1 (lane_key)
            arrays = _lane_arrays(self, other) if lane is not None else None
            if arrays is not None:
                callee, args = lane
                out, b = arrays
                callee(out, b, *args, out=out)
                return self
        op_.meta(self, other, *extra)   # validates: the dtypes below cannot raise
        dt, cdt = dtypes(self, other)
        remember_lane(dt, cdt, self, other, extra)
        out = target(self)
        if direct and out.dtype is cdt:
            b = operand(other, cdt)
            if out.size < LARGE or not large_inplace(fn, out, (out, b), extra):
                fn(out, b, *extra, out=out)
        else:
            np.copyto(out, fn(operand(self, cdt), operand(other, cdt), *extra), casting="unsafe")
        return self
    return kernel, kernel_


def _lane_arrays(self, other):
    """``(self's array, other's array)`` for Note [In-place fast lane], or None when the meta
    must decide: ``self`` not dense in row- or column-major order (a weight's gradient is a
    transposed view), or sharing its storage with ``other`` (not ``self`` itself), which may
    overlap it partially; a storage never made is shared by no one (Note [Lazy storage])."""
    storage = self._storage_or_none
    if storage is not None and other is not self and other._storage_or_none is storage:
        return None
    out = self._array
    if out is None:
        if storage is None:
            return None   # no data (the meta's checks raise what PyTorch raises)
        out = self._np()
    if out.size >= LARGE or not (out.flags.c_contiguous or out.flags.f_contiguous):
        return None
    b = other._array
    if b is None:
        if other._storage_or_none is None:
            return None
        b = other._np()
    return out, b


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
    if _integral(a, b):
        _check_int_divisor(b)
    return np.remainder(a, b)


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
    return np.nan_to_num(arr, nan=0.0 if nan is None else nan,
                         posinf=info.max if posinf is None else posinf,
                         neginf=info.min if neginf is None else neginf)


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


UNARY = [
    ("exp", np.exp), ("exp2", np.exp2), ("expm1", np.expm1), ("log", np.log),
    ("log2", np.log2), ("log10", np.log10), ("log1p", np.log1p), ("sqrt", np.sqrt),
    ("rsqrt", _rsqrt), ("sin", np.sin), ("cos", np.cos), ("tan", np.tan),
    ("asin", np.arcsin), ("acos", np.arccos), ("atan", np.arctan), ("sinh", np.sinh),
    ("cosh", np.cosh), ("tanh", native.generated_or("tanh", np.tanh)), ("asinh", np.arcsinh),
    ("acosh", np.arccosh), ("atanh", np.arctanh),
    ("sigmoid", native.generated_or("sigmoid", _sigmoid)), ("reciprocal", _reciprocal),
    ("silu", native.generated_or("silu", _silu)),
    ("neg", np.negative), ("sign", _sign), ("floor", _keep_int(np.floor)),
    ("ceil", _keep_int(np.ceil)), ("trunc", _keep_int(np.trunc)), ("frac", _frac),
    ("relu", native.generated_or("relu", _relu)), ("bitwise_not", np.invert),
]
UNARY_CHECKED = [("round", _round, P.check_round), ("gelu", _gelu, P.check_gelu)]
UNARY_OF_INPUT = [  # computed on the input's own values: bool tests, abs (complex -> real)
    ("abs", np.abs), ("logical_not", np.logical_not), ("isnan", np.isnan), ("isinf", np.isinf),
    ("isfinite", np.isfinite), ("signbit", _signbit),
]
BINARY = [
    ("mul", np.multiply), ("div", np.true_divide), ("remainder", _remainder),
    ("fmod", _fmod), ("atan2", np.arctan2), ("maximum", np.maximum),
    ("minimum", np.minimum), ("fmax", np.fmax), ("fmin", np.fmin), ("hypot", np.hypot),
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


def add_kernels(table, family, name, maker, fn, **kw):
    """Put the kernels ``maker`` (``unary`` or ``binary``) makes from ``fn`` into ``table``, for
    the op ``name`` of the ops/ module ``family`` and for its in-place twin ``name_`` if any."""
    op, op_ = getattr(family, name), getattr(family, name + "_", None)
    k, k_ = maker(fn, op, op_, **kw)
    k.__qualname__ = f"{maker.__name__}[{name}]"
    k_.__qualname__ = f"{maker.__name__}[{name}_]"
    table[op] = k
    if op_ is not None:
        table[op_] = k_


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
