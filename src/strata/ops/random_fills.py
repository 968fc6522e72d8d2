"""In-place random fills: ``random_``, ``bernoulli_``, ``exponential_``, ``geometric_``,
``cauchy_`` and ``log_normal_`` (``Tensor`` methods; ``rand``, ``normal_`` and ``uniform_`` are
in factory.py).

Each overwrites ``self`` with draws from the given (or default) generator. The checks are
``DistributionTemplates.h``'s, in its order: the arguments first, then (for most) nothing more
for an empty tensor, then the overlap check of the ``TensorIterator`` that writes ``self``, then
the dtypes the kernel is dispatched for. ``random_`` draws integers in ``[from, to)``; its bounds
(``random_bounds``) are computed here once, for the meta and for every backend's kernel.
"""

import warnings

import numpy as np

from ..core import dtype as D
from . import meta_rules as R
from .factory import DIGITS
from .op import defop
from .pointwise import _user_stacklevel
from .shape import expand

_INT64_MIN, _INT64_MAX = -2 ** 63, 2 ** 63 - 1
_RANDOM_INTEGRAL = (D.bool_, D.uint8, D.int8, D.int16, D.int32, D.int64)


def _not_implemented(kernel, dtype):
    return NotImplementedError(f"\"{kernel}\" not implemented for '{R.type_name(dtype)}'")


def _check_dtype(kernel, self, allowed):
    """The kernel's dtype dispatch (after the empty-tensor return and the overlap check)."""
    if self.dtype not in allowed and self.dtype.category != D.FLOATING:
        raise _not_implemented(kernel, self.dtype)


def _floating_kernel(self, name):
    if self.dtype.category != D.FLOATING:
        raise RuntimeError(f"{name} distribution is a continuous probability distribution. dtype "
                           f"must be a floating point but you specified {R.type_name(self.dtype)}")


# --- random_: integers in [from, to) -------------------------------------------------------------

def _through(value, dtype):
    """``static_cast<int64_t>(static_cast<scalar_t>(value))``: ``value`` rounded to a floating
    ``dtype`` (the half types by way of float, as ``c10::Half(float)``) and back."""
    if abs(value) <= 1 << DIGITS[dtype.name]:
        return value   # exact: every integer up to 2**digits is representable
    with np.errstate(invalid="ignore", over="ignore"):
        x = np.array(value, np.int64).astype(np.float32 if dtype.itemsize == 2 else dtype.np)
        return int(x.astype(dtype.np).astype(np.int64))


def _update_from(value, dtype):
    """The smallest int64 at or above ``value`` that stays at or above it once cast to a
    floating ``dtype`` (``update_from``: a cast may round a draw below ``from``). Past int64's
    largest there is none: ``from`` stays, to be refused (PyTorch's loop never ends there)."""
    if value == _INT64_MAX:
        return value
    rounded = _through(value + 1, dtype)
    if rounded < value:
        n = abs(value + 1).bit_length() - 1
        value = rounded + (1 << (n - DIGITS[dtype.name] + 1))
    return value


def _update_to(value, dtype):
    """``update_to``: the largest ``to`` whose ``to - 1`` stays below it once cast."""
    rounded = _through(value - 1, dtype)
    if rounded >= value:
        n = abs(value - 1).bit_length() - 1
        value = rounded - (1 << (n - DIGITS[dtype.name] + 1))
    return value


# each dtype's lowest and largest value (a float's as a double)
_LIMITS = {D.bool_: (0, 1),
           **{dt: (D.iinfo(dt).min, D.iinfo(dt).max) for dt in _RANDOM_INTEGRAL[1:]},
           **{dt: (float(D.finfo(dt).min), float(D.finfo(dt).max))
              for dt in (D.float16, D.bfloat16, D.float32, D.float64)}}


def _check_in_range(low, high, dtype):
    """``check_from_to_in_range``: both ends representable (a float dtype warns past the range
    where it holds every integer)."""
    try:
        lowest, highest = _LIMITS[dtype]
    except KeyError:
        raise RuntimeError("check_random_bounds handles only integral, floating-point and boolean "
                           "types") from None
    for value, name in ((low, "from"), (high, "to - 1")):
        if not lowest <= value <= highest:
            raise RuntimeError(f"{name} is out of bounds for {R.c_type_name(dtype)}")
    if dtype.category == D.FLOATING:
        digits = DIGITS[dtype.name]
        for value, name in ((low, "from"), (high, "to - 1")):
            if not -(1 << digits) <= value <= 1 << digits:
                warnings.warn(f"{name} is out of bounds [-(2^{digits}), 2^{digits}]. Due to "
                              f"precision limitations {R.c_type_name(dtype)} can support discrete "
                              f"uniform distribution only within this range. This warning will "
                              f"become an error in version 1.7 release, please fix the code in "
                              f"advance", UserWarning, stacklevel=_user_stacklevel())


def random_bounds(self, low, high):
    """``random_from_to_impl``'s checks; the integers it draws: ``(low, high)`` inclusive, or
    None for the whole int64 range (``from`` = int64's min, no ``to``)."""
    for value in (low, high):
        if value is not None and not _INT64_MIN <= value <= _INT64_MAX:
            raise ValueError("Overflow when unpacking long long")
    R.check_no_internal_overlap(self)
    dtype = self.dtype
    floating = dtype.category == D.FLOATING
    if high is not None:
        if low >= high:
            raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} "
                               f">= to={high}")
        if floating:
            low, high = _update_from(low, dtype), _update_to(high, dtype)
            if low >= high:
                raise RuntimeError(f"random_ expects 'from' casted to dtype to be less than 'to' "
                                   f"casted to dtype, but got from={low} >= to={high}")
        _check_in_range(low, high - 1, dtype)
        return low, high - 1
    if low != _INT64_MIN:
        if floating:
            high = 1 << DIGITS[dtype.name]
            low = _update_from(low, dtype)
            if low >= high:
                raise RuntimeError(f"random_ expects 'from' casted to dtype to be less than or "
                                   f"equal to 'to_inc' casted to dtype, but got from={low} > "
                                   f"to_inc={high}")
        elif dtype in _RANDOM_INTEGRAL:
            high = _LIMITS[dtype][1]
        else:
            raise RuntimeError("random_from_to_impl handles only integral, floating-point and "
                               "boolean types")
        _check_in_range(low, high, dtype)
        return low, high
    if self.numel() and dtype not in (D.int64, D.float32, D.float64, D.bfloat16):
        if dtype in _RANDOM_INTEGRAL[1:]:
            raise RuntimeError("random_full_64_bits_range_kernel_cpu handles only int64, double, "
                               "float and bfloat16")
        raise _not_implemented("random_full_64_bits_range_kernel_cpu", dtype)
    return None


def default_random_bounds(self):
    """``random_()``: 0 up to the dtype's largest integer (2**mantissa digits for a float, whose
    integers are all exact up to there; 1 for bool), both included."""
    if not self.numel():
        return 0, 0   # nothing is drawn (any dtype: the kernel's dispatch is not reached)
    R.check_no_internal_overlap(self)
    _check_dtype("random_kernel_cpu", self, _RANDOM_INTEGRAL)
    if self.dtype.category == D.FLOATING:
        return 0, 1 << DIGITS[self.dtype.name]
    return 0, _LIMITS[self.dtype][1]


def _random_from_meta(self, low, high=None, generator=None):
    random_bounds(self, low, high)
    return self


def _random_to_meta(self, high, generator=None):
    random_bounds(self, 0, high)
    return self


def _random_meta(self, generator=None):
    default_random_bounds(self)
    return self


# --- the continuous (and geometric) distributions --------------------------------------------

def _bernoulli_float_meta(self, p=0.5, generator=None):
    if not 0 <= p <= 1:   # nan fails too
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={p:g}")
    if self.numel():
        R.check_no_internal_overlap(self)
        if self.dtype.is_complex:
            raise _not_implemented("bernoulli_scalar_cpu_", self.dtype)
    return self


def _bernoulli_tensor_meta(self, p, generator=None):
    """The probabilities' values are checked by the kernel (they are data)."""
    if self.numel():
        R.check_no_internal_overlap(self)
        if self.dtype.is_complex:
            raise _not_implemented("bernoulli_tensor_cpu_self_", self.dtype)
        if p.dtype.category != D.FLOATING:
            raise _not_implemented("bernoulli_tensor_cpu_p_", p.dtype)
        expand.meta(p, tuple(self.shape))
    return self


def _exponential_meta(self, lambd=1.0, generator=None):
    if not lambd > 0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={lambd:g}")
    if self.numel():
        R.check_no_internal_overlap(self)
        _floating_kernel(self, "Exponential")
    return self


def _geometric_meta(self, p, generator=None):
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={p:g}")
    if self.numel():
        R.check_no_internal_overlap(self)
        _check_dtype("geometric_cpu", self, _RANDOM_INTEGRAL[1:])
    return self


def _cauchy_meta(self, median=0.0, sigma=1.0, generator=None):
    if not sigma > 0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={sigma:g}")
    if self.dtype.category != D.FLOATING:
        raise RuntimeError(f"Cauchy distribution is a continuous probability distribution. dtype "
                           f"must be a floating point but you specified "
                           f"{R.c_type_name(self.dtype)}")
    if self.numel():
        R.check_no_internal_overlap(self)
    return self


def _log_normal_meta(self, mean=1.0, std=2.0, generator=None):
    if not std > 0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={std:g}")
    if self.numel():
        R.check_no_internal_overlap(self)
        _check_dtype("log_normal_cpu", self, ())
    return self


_GEN = "*, Generator? generator=None) -> Tensor(a!)"
random_from = defop(f"random_.from(Tensor(a!) self, int from, int? to, {_GEN}",
                    _random_from_meta, tags=("random",))
random_to = defop(f"random_.to(Tensor(a!) self, int to, {_GEN}", _random_to_meta,
                  tags=("random",))
random_ = defop(f"random_(Tensor(a!) self, {_GEN}", _random_meta, tags=("random",))
bernoulli_float = defop(f"bernoulli_.float(Tensor(a!) self, float p=0.5, {_GEN}",
                        _bernoulli_float_meta, tags=("random",))
bernoulli_tensor_ = defop(f"bernoulli_.Tensor(Tensor(a!) self, Tensor p, {_GEN}",
                          _bernoulli_tensor_meta, tags=("random",))
exponential_ = defop(f"exponential_(Tensor(a!) self, float lambd=1, {_GEN}", _exponential_meta,
                     method=True, tags=("random",))
geometric_ = defop(f"geometric_(Tensor(a!) self, float p, {_GEN}", _geometric_meta, method=True,
                   tags=("random",))
cauchy_ = defop(f"cauchy_(Tensor(a!) self, float median=0, float sigma=1, {_GEN}", _cauchy_meta,
                method=True, tags=("random",))
log_normal_ = defop(f"log_normal_(Tensor(a!) self, float mean=1, float std=2, {_GEN}",
                    _log_normal_meta, method=True, tags=("random",))


def random_kernels(fill_integers) -> dict:
    """The kernels of ``random_.from``, ``random_.to`` and ``random_`` for a backend whose
    ``fill_integers(self, (low, high), generator)`` fills ``self`` with integers drawn from
    ``[low, high]``: the overloads differ only in their bounds, which are decided here."""
    def from_kernel(self, low, high=None, generator=None):
        return fill_integers(self, random_bounds(self, low, high), generator)

    def to_kernel(self, high, generator=None):
        return fill_integers(self, random_bounds(self, 0, high), generator)

    def default_kernel(self, generator=None):
        return fill_integers(self, default_random_bounds(self), generator)
    return {random_from: from_kernel, random_to: to_kernel, random_: default_kernel}
