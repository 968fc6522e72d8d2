"""The CPU kernel makers of elementwise ops: ``unary`` and ``binary`` turn a NumPy ufunc (or a
short formula) into an op's kernel and its in-place twin, applying the shared policy once:

* the result dtype comes from the op's dtype rule (the function its meta uses), cached for the
  common cases whose answer cannot change (same-dtype tensors, a tensor and a Python number);
* half types compute in float32 and round once, as PyTorch's CPU "opmath" does;
* Python numbers are cast to the compute dtype like PyTorch's wrapped numbers (uint8 - 1 wraps);
* the result gets the strides TensorIterator would give it (``meta_rules.pointwise_strides``):
  NumPy already agrees whenever every input is contiguous, so only other layouts are checked;
* in-place kernels run the in-place meta (overlap, shape, cast), then write into ``self``;
* big operands run in chunks over the thread pool (Note [Parallel pointwise]).

Separate from ``pointwise.py`` (which says only which NumPy function computes each op) because
the pointwise, special, complex and activation families all build their kernels with it.
"""

import numpy as np

from ..._tensor import from_array
from ...core import dtype as D
from ...core import fp_errors
from ...core.tensor_impl import TensorImpl
from ...ops import meta_rules as R
from . import native
from .array import (
    COMPUTE,
    MEMORY_BOUND_GRAIN,
    allocation_error,
    empty_apart,
    parallel_for,
)

set_state, reset_state, IGNORE = fp_errors.state.set, fp_errors.state.reset, fp_errors.IGNORE
_INT_RANGE = {np.dtype(t): (np.iinfo(t).min, np.iinfo(t).max)
              for t in (np.uint8, np.int8, np.int16, np.int32, np.int64)}


_CAST_MIN = native.GENERATED_MIN_SIZE   # below it a generated cast costs more than astype


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
        if arr.dtype is cdt:
            return arr
        return arr.astype(cdt) if arr.size < _CAST_MIN else native.converted(arr, cdt)
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
        # astype's order="K" keeps the layout; the generated casts take contiguous arrays
        r = r.astype(dt.np) if r.size < _CAST_MIN else native.converted(r, dt.np)
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


# Note [Native arithmetic]: NumPy's add/sub/mul/div run on one thread, and the Python pool
# splits a memory-bound loop only from 1M elements (its threads wake in 20-50 us), so x * y
# over 0.5M float32 took 190-260 us on the AVX-512 VM of docs/inductor.md, where PyTorch's two
# OpenMP threads take ~70. Two same-shape contiguous float32/float64 operands of
# native.ARITHMETIC_MIN_SIZE elements or more run a generated kernel on the native pool instead
# (compile/inductor/eager.py BINARY_FORMULAS, 64K-element chunks): 120-150 us. So does a
# contiguous row vector on the right (``x + bias``, ``x * weight``: eager.py's row operator
# kernels; 1024x512 + 512 took 280 us in NumPy). One IEEE operation per element (built
# without contraction), so NumPy's bits. From MEMORY_BOUND_GRAIN (1M) elements the Python pool
# splits NumPy's loop as before: the native pool's workers spin after their loop, and an
# op the Python pool runs next waited for the core they held (4M float32, y = x * x then
# y - 0.5: 2.0 ms either way, though the product alone took 0.75 ms against 1.0).
_NATIVE_MIN = native.ARITHMETIC_MIN_SIZE   # a global, read by the binary lane at every call
NATIVE_ARITHMETIC = {np.add: "add", np.subtract: "sub", np.multiply: "mul",
                     np.true_divide: "div"}


def native_arithmetic(fn, a, b, extra):
    """``fn(a, b, *extra)`` by a generated kernel (Note [Native arithmetic]) as a fresh array,
    or None (another function, alpha, dtype or layout, broadcasting, or no C compiler)."""
    if extra:
        if extra != (1,) or type(extra[0]) is not int:
            return None
        fn = getattr(fn, "plain", None)
    formula = NATIVE_ARITHMETIC.get(fn)
    if formula is None:
        return None
    if type(b) is not np.ndarray:
        if type(a) is np.ndarray and type(b) in (int, float):   # ``x * 0.125``
            return native.run_unary(f"{formula}_scalar", a, b)
        return None
    if type(a) is not np.ndarray:                               # ``1 - x``
        if type(a) not in (int, float) or formula == "div":   # (``2 / x``: reciprocal() * 2)
            return None
        return native.run_unary("rsub_scalar" if formula == "sub" else f"{formula}_scalar",
                                b, a)
    if b.shape == a.shape:
        return native.run_binary(formula, a, b)
    return native.run_rows(formula, a, b)     # None unless b is a row of a (a bias)


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
    # the call that computes it: ``fn`` with its extra arguments, or for ``add``/``sub`` with
    # alpha 1 the ufunc itself (``_scaled``'s ``plain``), one Python frame less.
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
                if b is not None and dt is other.dtype and a.size < _NATIVE_MIN \
                        and b.size < _NATIVE_MIN:
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
            tensor = a if type(a) is np.ndarray else b     # (the other may be a number)
            if type(tensor) is np.ndarray and _NATIVE_MIN <= tensor.size < MEMORY_BOUND_GRAIN:
                r = native_arithmetic(fn, a, b, extra)
                if r is not None:
                    return from_array(r, dt)
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
