"""Factories, copies and random ops: ops that make tensors or overwrite their contents.

Factory ops have no tensor arguments; the dispatcher takes their backend from the ``device``
argument (PyTorch's BackendSelect). Dtype defaults follow PyTorch: float factories use the default
dtype; ``full`` and ``arange`` infer from their Python numbers.
"""

import math

from ..core import dtype as D
from ..core.shape import contiguous_strides, normalize_size
from . import meta_rules as R
from .op import TensorSpec, ViewSpec, defop, register_decomposition

_FACTORY_KW = "ScalarType? dtype=None, Layout? layout=None, Device? device=None, " \
              "bool? pin_memory=None"


def _check_size(size):
    size = normalize_size((size,)) if not isinstance(size, int) else normalize_size(((size,),))
    numel = 1
    for s in size:
        numel *= s
    if numel >= 2 ** 63:
        raise RuntimeError(f"Trying to create tensor with {numel} elements, which overflows "
                           f"int64 (sizes: [{', '.join(map(str, size))}])")
    return size


def _spec(size, dtype):
    size = _check_size(size)
    return TensorSpec(size, dtype or D.get_default_dtype(), contiguous_strides(size))


def _empty_meta(size, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    return _spec(size, dtype)


def _empty_strided_meta(size, stride, dtype=None, layout=None, device=None, pin_memory=None):
    size = _check_size(size)
    return TensorSpec(size, dtype or D.get_default_dtype(), tuple(stride))


def _full_meta(size, fill_value, dtype=None, layout=None, device=None, pin_memory=None):
    return _spec(size, dtype or D.scalar_dtype(fill_value))


def arange_length(start, end, step):
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if not all(math.isfinite(float(v)) for v in (start, end)):
        raise RuntimeError(f"unsupported range: {start} -> {end}")
    if (step > 0 and start > end) or (step < 0 and start < end):
        raise RuntimeError("upper bound and larger bound inconsistent with step sign")
    return max(0, math.ceil((end - start) / step))


def _arange_meta(start, end, step=1, dtype=None, layout=None, device=None, pin_memory=None):
    if dtype is None:
        is_float = any(isinstance(v, float) or getattr(getattr(v, "dtype", None),
                                                       "is_floating_point", False)
                       for v in (start, end, step))
        dtype = D.get_default_dtype() if is_float else D.int64
    return _spec((arange_length(start, end, step),), dtype)


def _linspace_meta(start, end, steps, dtype=None, layout=None, device=None, pin_memory=None):
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    return _spec((steps,), dtype)


def _eye_meta(n, m=None, dtype=None, layout=None, device=None, pin_memory=None):
    if n < 0:
        raise RuntimeError(f"n must be greater or equal to 0, got {n}")
    if m is not None and m < 0:
        raise RuntimeError(f"m must be greater or equal to 0, got {m}")
    return _spec((n, n if m is None else m), dtype)


def _scalar_tensor_meta(s, dtype=None, layout=None, device=None, pin_memory=None):
    return TensorSpec((), dtype or D.scalar_dtype(s), ())


empty = defop(f"empty.memory_format(SymInt[] size, *, {_FACTORY_KW}, "
              "MemoryFormat? memory_format=None) -> Tensor", _empty_meta, tags=("factory",))
empty_strided = defop(f"empty_strided(SymInt[] size, SymInt[] stride, *, {_FACTORY_KW}) -> Tensor",
                      _empty_strided_meta, tags=("factory",))
full = defop(f"full(SymInt[] size, Scalar fill_value, *, {_FACTORY_KW}) -> Tensor", _full_meta,
             tags=("factory",))
arange = defop(f"arange.start_step(Scalar start, Scalar end, Scalar step=1, *, {_FACTORY_KW}) "
               "-> Tensor", _arange_meta, tags=("factory",))
linspace = defop(f"linspace(Scalar start, Scalar end, int steps, *, {_FACTORY_KW}) -> Tensor",
                 _linspace_meta, tags=("factory",))
eye = defop(f"eye.m(int n, int? m=None, *, {_FACTORY_KW}) -> Tensor", _eye_meta,
            tags=("factory",))
scalar_tensor = defop(f"scalar_tensor(Scalar s, *, {_FACTORY_KW}) -> Tensor", _scalar_tensor_meta,
                      tags=("factory",))


# --- copies and conversions ----------------------------------------------------------------------

def _to_copy_meta(self, dtype=None, layout=None, device=None, pin_memory=None,
                  non_blocking=False, memory_format=None):
    shape = tuple(self.shape)
    if memory_format is None or memory_format == "preserve_format":
        strides = R.pointwise_strides(shape, [self])
    else:
        strides = contiguous_strides(shape)
    return TensorSpec(shape, dtype or self.dtype, strides)


def _clone_meta(self, memory_format=None):
    return _to_copy_meta(self, memory_format=memory_format)


def _copy_meta(self, src, non_blocking=False):
    R.broadcast_shapes(tuple(src.shape), tuple(self.shape))
    if tuple(R.broadcast_shapes(tuple(src.shape), tuple(self.shape))) != tuple(self.shape):
        raise RuntimeError(f"output with shape [{', '.join(map(str, self.shape))}] doesn't match "
                           f"the broadcast shape [{', '.join(map(str, src.shape))}]")
    R.check_no_internal_overlap(self)
    return self


def _fill_meta(self, value):
    if R.is_tensor(value) and value.ndim != 0:
        raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with "
                           f"{value.ndim} dimensions.")
    R.check_no_internal_overlap(self)
    return self


_to_copy = defop("_to_copy(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, "
                 "Device? device=None, bool? pin_memory=None, bool non_blocking=False, "
                 "MemoryFormat? memory_format=None) -> Tensor", _to_copy_meta,
                 tags=("cross_device",))
clone = defop("clone(Tensor self, *, MemoryFormat? memory_format=None) -> Tensor", _clone_meta,
              method=True, function=True)
copy_ = defop("copy_(Tensor(a!) self, Tensor src, bool non_blocking=False) -> Tensor(a!)",
              _copy_meta, method=True, tags=("cross_device",))
fill_ = defop("fill_.Scalar(Tensor(a!) self, Scalar value) -> Tensor(a!)", _fill_meta,
              method=True, function=True)
zero_ = defop("zero_(Tensor(a!) self) -> Tensor(a!)", method=True, function=True)
contiguous = defop("contiguous(Tensor(a) self, *, MemoryFormat memory_format=contiguous_format) "
                   "-> Tensor(a)", method=True)


@register_decomposition(zero_)
def _zero_(self):
    return fill_(self, 0)


@register_decomposition(contiguous)
def _contiguous(self, memory_format="contiguous_format"):
    if self.is_contiguous():
        return self
    return clone(self, memory_format="contiguous_format")


# --- random ----------------------------------------------------------------------------------
# Every random op takes an optional Generator; None means the device's default generator.

def _rand_meta(size, generator=None, dtype=None, layout=None, device=None, pin_memory=None):
    dt = dtype or D.get_default_dtype()
    if dt.category != D.FLOATING:
        raise RuntimeError(f"\"check_uniform_bounds\" not implemented for '{R.type_name(dt)}'")
    return _spec(size, dt)


def _randint_meta(low, high, size, generator=None, dtype=None, layout=None, device=None,
                  pin_memory=None):
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} "
                           f">= to={high}")
    return _spec(size, dtype or D.int64)


def _randperm_meta(n, generator=None, dtype=None, layout=None, device=None, pin_memory=None):
    if n < 0:
        raise RuntimeError(f"n must be non-negative, got{n}")
    return _spec((n,), dtype or D.int64)


def _random_inplace_meta(self, *args, generator=None):
    if self.dtype.category != D.FLOATING:
        raise RuntimeError(f"expected a floating-point tensor for a float distribution, got "
                           f"{R.type_name(self.dtype)}")
    R.check_no_internal_overlap(self)
    return self


def _normal_meta_(self, mean=0.0, std=1.0, generator=None):
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")
    return _random_inplace_meta(self)


def _uniform_meta_(self, from_=0.0, to=1.0, generator=None):
    if from_ > to:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found "
                           f"from={from_} > to={to}")
    return _random_inplace_meta(self)


def _bernoulli_meta(self, p=None, generator=None):
    return TensorSpec(tuple(self.shape), self.dtype, contiguous_strides(tuple(self.shape)))


def _multinomial_meta(self, num_samples, replacement=False, generator=None):
    if self.ndim not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    if not replacement and num_samples > self.shape[-1]:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without "
                           "replacement")
    shape = (num_samples,) if self.ndim == 1 else (self.shape[0], num_samples)
    return TensorSpec(shape, D.int64, contiguous_strides(shape))


rand = defop(f"rand(SymInt[] size, *, Generator? generator=None, {_FACTORY_KW}) -> Tensor",
             _rand_meta, tags=("factory", "random"))
randn = defop(f"randn(SymInt[] size, *, Generator? generator=None, {_FACTORY_KW}) -> Tensor",
              _rand_meta, tags=("factory", "random"))
randint = defop(f"randint.low(SymInt low, SymInt high, SymInt[] size, *, "
                f"Generator? generator=None, {_FACTORY_KW}) -> Tensor", _randint_meta,
                tags=("factory", "random"))
randperm = defop(f"randperm(SymInt n, *, Generator? generator=None, {_FACTORY_KW}) -> Tensor",
                 _randperm_meta, tags=("factory", "random"))
normal_ = defop("normal_(Tensor(a!) self, float mean=0, float std=1, *, "
                "Generator? generator=None) -> Tensor(a!)", _normal_meta_, method=True,
                tags=("random",))
uniform_ = defop("uniform_(Tensor(a!) self, float from=0, float to=1, *, "
                 "Generator? generator=None) -> Tensor(a!)",
                 lambda self, lo=0.0, hi=1.0, generator=None: _uniform_meta_(self, lo, hi),
                 method=True, tags=("random",))
bernoulli = defop("bernoulli.p(Tensor self, float p=0.5, *, Generator? generator=None) -> Tensor",
                  _bernoulli_meta, tags=("random",))
bernoulli_tensor = defop("bernoulli(Tensor self, *, Generator? generator=None) -> Tensor",
                         lambda self, generator=None: _bernoulli_meta(self), tags=("random",))
multinomial = defop("multinomial(Tensor self, int num_samples, bool replacement=False, *, "
                    "Generator? generator=None) -> Tensor", _multinomial_meta, method=True,
                    function=True, tags=("random",))


# --- views that reinterpret (used by the frontend's Tensor.view(dtype)) ----------------------------
def _view_dtype_meta(self, dtype):
    if dtype.itemsize != self.dtype.itemsize:
        raise RuntimeError(f"view(dtype) with a different element size is not supported "
                           f"({self.dtype} -> {dtype})")
    return ViewSpec(tuple(self.shape), tuple(self.stride()), self.storage_offset(), dtype)


view_dtype = defop("view.dtype(Tensor(a) self, ScalarType dtype) -> Tensor(a)", _view_dtype_meta)
