"""Factories, copies and random ops: ops that make tensors or overwrite their contents.

Factory ops have no tensor arguments; the dispatcher takes their backend from the ``device``
argument (PyTorch's BackendSelect). Dtype defaults follow PyTorch: float factories use the default
dtype; ``full`` and ``arange`` infer from their Python numbers.
"""

import math

from ..core import dtype as D
from ..core.shape import check_storage_size, contiguous_strides, normalize_size
from . import meta_rules as R
from .op import TensorSpec, ViewSpec, defop, register_decomposition

_FACTORY_KW = "ScalarType? dtype=None, Layout? layout=None, Device? device=None, " \
              "bool? pin_memory=None"


def _check_size(size):
    """Sizes as a tuple of non-negative ints (their product is checked with the dtype, by
    ``check_storage_size``)."""
    if type(size) is tuple:   # already one (every size a backward formula passes)
        for s in size:
            if type(s) is not int or s < 0:
                break
        else:
            return size
    return normalize_size((size,)) if not isinstance(size, int) else normalize_size(((size,),))


def _spec(size, dtype):
    size = _check_size(size)
    dtype = dtype or D.get_default_dtype()
    check_storage_size(size, dtype.itemsize)
    return TensorSpec(size, dtype, contiguous_strides(size))


def _empty_meta(size, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    spec = _spec(size, dtype)
    if memory_format == "channels_last":
        return TensorSpec(spec.shape, spec.dtype, R.channels_last_strides(spec.shape))
    if memory_format == "preserve_format":
        raise RuntimeError("preserve memory format is unsupported by the contiguous operator")
    return spec


def _empty_strided_meta(size, stride, dtype=None, layout=None, device=None, pin_memory=None):
    size, stride = _check_size(size), tuple(stride)
    if len(size) != len(stride):
        raise RuntimeError(f"dimensionality of sizes ({len(size)}) must match dimensionality of "
                           f"strides ({len(stride)})")
    if any(s < 0 for s in stride):
        raise RuntimeError(f"Storage size calculation overflowed with sizes=[{_join(size)}] and "
                           f"strides=[{_join(stride)}]")
    dtype = dtype or D.get_default_dtype()
    check_storage_size(size, dtype.itemsize, stride)
    return TensorSpec(size, dtype, stride)


def _join(values):
    return ", ".join(map(str, values))


def check_fill_value(value, dtype, numel):
    """A fill value must fit ``dtype`` (``R.check_scalar_fits``), except into a one-element half
    tensor, which PyTorch fills unchecked (its ``fill_fast`` path)."""
    if type(value) is int and 0 <= value <= 127:   # fits every dtype (int8's max is 127)
        return
    if isinstance(value, int) and not isinstance(value, bool) and not -2 ** 63 <= value < 2 ** 64:
        raise OverflowError("int too big to convert")
    if R.is_tensor(value) or (numel == 1 and dtype in (D.float16, D.bfloat16)):
        return
    R.check_scalar_fits(value, dtype)


def _full_meta(size, fill_value, dtype=None, layout=None, device=None, pin_memory=None):
    spec = _spec(size, dtype or D.scalar_dtype(fill_value))
    check_fill_value(fill_value, spec.dtype, math.prod(spec.shape))
    return spec


def arange_params(start, end, step, dtype):
    """``(length, first, step)`` of ``arange`` in ``dtype``, as ``RangeFactories.cpp`` computes
    them: integer dtypes truncate start/end/step first (int64 also counts in integers; narrower
    integers count with the original floats), floating dtypes count in double."""
    for v in (start, end):
        if not math.isfinite(float(v)):
            raise RuntimeError(f"unsupported range: {start} -> {end}")
    if dtype.category == D.FLOATING:
        first, delta = float(start), float(step)
        if delta == 0:
            raise RuntimeError("step must be nonzero")
        last = float(end)
    else:
        first, delta, last = int(start), int(step), int(end)
        if delta == 0 and (dtype is D.int64 or step == 0):
            raise (ValueError if dtype is D.int64 and step != 0 else RuntimeError)(
                "step must be nonzero")
    if (delta > 0 and first > last) or (delta < 0 and first < last):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    if dtype is D.int64:
        sign = (delta > 0) - (delta < 0)
        length = math.ceil(int((last - first + delta - sign) / delta))
    else:
        length = math.ceil((float(end) - float(start)) / float(step))
    return max(length, 0), first, delta


def arange_dtype(start, end, step):
    """All-integer arguments give int64; any float (or float tensor) gives the default dtype."""
    is_float = any(isinstance(v, float) or getattr(getattr(v, "dtype", None),
                                                   "is_floating_point", False)
                   for v in (start, end, step))
    return D.get_default_dtype() if is_float else D.int64


def _arange_meta(start, end, step=1, dtype=None, layout=None, device=None, pin_memory=None):
    dtype = dtype or arange_dtype(start, end, step)
    if dtype is D.bool_ or dtype.is_complex:
        raise NotImplementedError(f"\"arange_cpu\" not implemented for '{R.type_name(dtype)}'")
    return _spec((arange_params(start, end, step, dtype)[0],), dtype)


def _linspace_meta(start, end, steps, dtype=None, layout=None, device=None, pin_memory=None):
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    dtype = dtype or D.get_default_dtype()
    if dtype is D.bool_:
        raise NotImplementedError("\"linspace_cpu\" not implemented for 'Bool'")
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
    # preserve_format keeps a dense layout as it is and densifies any other in its dim order
    shape, dtype = tuple(self.shape), dtype or self.dtype
    strides = R.like_strides(self, memory_format)
    check_storage_size(shape, dtype.itemsize, strides)
    return TensorSpec(shape, dtype, strides)


def _clone_meta(self, memory_format=None):
    return _to_copy_meta(self, memory_format=memory_format)


def _copy_meta(self, src, non_blocking=False):
    shape = R.broadcast_shapes(tuple(self.shape), tuple(src.shape))
    if shape != tuple(self.shape):
        raise RuntimeError(f"output with shape [{_join(self.shape)}] doesn't match the broadcast "
                           f"shape [{_join(shape)}]")
    R.check_inplace_overlap(self, src)
    return self


def _fill_meta(self, value):
    # (no overlap check: filling an expanded tensor writes one value, PyTorch allows it)
    if R.is_tensor(value):
        if value.ndim != 0:
            raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor "
                               f"with {value.ndim} dimensions.")
    else:
        check_fill_value(value, self.dtype, self.numel())
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
# a 0-dim tensor value that requires grad (Tensor.fill_ takes .item() of any other)
fill_tensor_ = defop("fill_.Tensor(Tensor(a!) self, Tensor value) -> Tensor(a!)")


def resize_layout(self, size, memory_format=None):
    """``(shape, strides, storage bytes needed)`` of ``self`` after ``resize_``: the new sizes,
    row-major (or channels_last) from the same storage offset."""
    shape = _check_size(size)
    if memory_format == "channels_last":
        strides = R.channels_last_strides(shape)
    elif memory_format in (None, "contiguous_format", "preserve_format"):
        strides = contiguous_strides(shape)
    else:
        raise RuntimeError(f"Unsupported memory format {memory_format}")
    check_storage_size(shape, self.dtype.itemsize, strides)
    extent = 0 if 0 in shape else 1 + sum((n - 1) * s for n, s in zip(shape, strides))
    return shape, strides, (self.storage_offset() + extent) * self.dtype.itemsize


def _resize_meta(self, size, memory_format=None):
    """Changes ``self``'s layout in place (a meta tensor's storage only records its size)."""
    from ..core.storage import Storage
    shape, strides, nbytes = resize_layout(self, size, memory_format)
    if nbytes > self._storage.nbytes:
        self._storage = Storage(nbytes, self.device)
    self._shape, self._strides = shape, strides
    return self


# ``out=`` resizes its output through this (PyTorch's resize_output). Growing the storage gives
# ``self`` a bigger one; tensors that viewed the old storage keep viewing it (in PyTorch they
# would see the reallocation).
resize_ = defop("resize_(Tensor(a!) self, SymInt[] size, *, MemoryFormat? memory_format=None) "
                "-> Tensor(a!)", _resize_meta)
contiguous = defop("contiguous(Tensor(a) self, *, MemoryFormat memory_format=contiguous_format) "
                   "-> Tensor(a)", method=True)


@register_decomposition(zero_)
def _zero_(self):
    return fill_(self, 0)


@register_decomposition(fill_tensor_)
def _fill_tensor_(self, value):
    _fill_meta(self, value)
    return copy_(self, value)


def is_contiguous_as(self, memory_format):
    """``is_contiguous(memory_format)``: the strides are the format's, ignoring size-1 dims."""
    if memory_format == "channels_last":
        if self.ndim != 4:
            return False
        expected = R.channels_last_strides(tuple(self.shape))
        return all(n < 2 or s == e for n, s, e in zip(self.shape, self.stride(), expected))
    return self.is_contiguous()


@register_decomposition(contiguous)
def _contiguous(self, memory_format="contiguous_format"):
    if memory_format == "preserve_format":
        memory_format = "contiguous_format"
    if memory_format == "channels_last":
        R.channels_last_strides(tuple(self.shape))  # the rank check
    if is_contiguous_as(self, memory_format):
        return self
    return clone(self, memory_format=memory_format)


# --- random ----------------------------------------------------------------------------------
# Every random op takes an optional Generator; None means the device's default generator.

def _floating(kernel, dt, complex_ok=False):
    if dt.category != D.FLOATING and not (complex_ok and dt.is_complex):
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{R.type_name(dt)}'")
    return dt


def _rand_meta(size, generator=None, dtype=None, layout=None, device=None, pin_memory=None):
    return _spec(size, _floating("check_uniform_bounds", dtype or D.get_default_dtype(), True))


def _randn_meta(size, generator=None, dtype=None, layout=None, device=None, pin_memory=None):
    return _spec(size, _floating("normal_kernel_cpu", dtype or D.get_default_dtype(), True))


_C_NAME = {"int8": "signed char", "uint8": "unsigned char", "int16": "short", "int32": "int",
           "int64": "long", "bool": "bool"}


def _randint_meta(low, high, size, generator=None, dtype=None, layout=None, device=None,
                  pin_memory=None):
    dtype = dtype or D.int64
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} "
                           f">= to={high}")
    if dtype.category != D.FLOATING:
        info = D.iinfo(dtype)
        if not info.min <= low <= info.max:
            raise RuntimeError(f"from is out of bounds for {_C_NAME[dtype.name]}")
        if not info.min <= high - 1 <= info.max:
            raise RuntimeError(f"to - 1 is out of bounds for {_C_NAME[dtype.name]}")
    return _spec(size, dtype)


DIGITS = {"float16": 11, "bfloat16": 8, "float32": 24, "float64": 53}  # exact integers: 2**d


def _randperm_meta(n, generator=None, dtype=None, layout=None, device=None, pin_memory=None):
    dtype = dtype or D.int64
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")
    if dtype is D.bool_:
        raise NotImplementedError("\"randperm\" not implemented for 'Bool'")
    if n and dtype.category == D.INTEGRAL:
        R.check_scalar_fits(n - 1, dtype)  # the largest value it will hold
    elif dtype.category == D.FLOATING and n > 2 ** DIGITS[dtype.name] + 1:
        raise RuntimeError(f"n cannot be greater than {2 ** DIGITS[dtype.name] + 1} for "
                           f"{R.type_name(dtype)} type.")
    return _spec((n,), dtype)


def _normal_meta_(self, mean=0.0, std=1.0, generator=None):
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")
    _floating("normal_kernel_cpu", self.dtype, True)
    R.check_no_internal_overlap(self)
    return self


def _uniform_meta_(self, from_=0.0, to=1.0, generator=None):
    _floating("check_uniform_bounds", self.dtype)
    if from_ > to:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found "
                           f"from={from_} > to={to}")
    R.check_no_internal_overlap(self)
    return self


def _bernoulli_meta(self, p=None, generator=None):
    if p is not None and not 0 <= p <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={p:g}")
    if self.dtype.is_complex:
        kernel = "bernoulli_tensor_cpu_self_" if p is None else "bernoulli_scalar_cpu_"
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{R.type_name(self.dtype)}'")
    if p is None:  # the probabilities are self's values: a float tensor
        _floating("bernoulli_tensor_cpu_p_", self.dtype)
    return TensorSpec(tuple(self.shape), self.dtype, R.like_strides(self))


def _multinomial_meta(self, num_samples, replacement=False, generator=None):
    if self.dtype.category != D.FLOATING:
        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: "
                           f"{R.type_name(self.dtype)}")
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
              _randn_meta, tags=("factory", "random"))
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


# --- views that reinterpret (used by the frontend's Tensor.view(dtype)) ---------------------------
def _view_dtype_meta(self, dtype):
    """The same bytes as ``dtype``; a different element size rescales the last dim
    (``view_dtype`` in ``TensorConversions.cpp``)."""
    old, new = self.dtype.itemsize, dtype.itemsize
    shape, strides, offset = list(self.shape), list(self.stride()), self.storage_offset()
    if old == new:
        return ViewSpec(tuple(shape), tuple(strides), offset, dtype)
    names = f"{R.type_name(self.dtype)} as {R.type_name(dtype)} (different element sizes)"
    if self.ndim == 0:
        raise RuntimeError(f"self.dim() cannot be 0 to view {names}")
    ratio = max(old, new) // min(old, new)
    if old < new:
        if shape[-1] % ratio:
            raise RuntimeError(f"self.size(-1) must be divisible by {ratio} to view {names}, "
                               f"but got {shape[-1]}")
        if offset % ratio:
            raise RuntimeError(f"self.storage_offset() must be divisible by {ratio} to view "
                               f"{names}, but got {offset}")
    if strides[-1] != 1:
        raise RuntimeError(f"self.stride(-1) must be 1 to view {names}, but got {strides[-1]}")
    if old > new:
        shape[-1] *= ratio
        return ViewSpec(tuple(shape), tuple(s * ratio for s in strides[:-1]) + (1,),
                        offset * ratio, dtype)
    for i, s in enumerate(strides[:-1]):
        if s % ratio:
            raise RuntimeError(f"self.stride({i}) must be divisible by {ratio} to view {names}, "
                               f"but got {s}")
    shape[-1] //= ratio
    return ViewSpec(tuple(shape), tuple(s // ratio for s in strides[:-1]) + (1,),
                    offset // ratio, dtype)


view_dtype = defop("view.dtype(Tensor(a) self, ScalarType dtype) -> Tensor(a)", _view_dtype_meta)


# --- triangle indices ---------------------------------------------------------------------------
def tril_count(row, col, offset):
    """Elements of a row x col matrix on or below diagonal ``offset``: row r holds
    ``clamp(r + offset + 1, 0, col)`` of them, summed in closed form (sizes can be huge)."""
    first = min(max(-offset, 0), row)                  # rows before this hold none
    full = min(max(col - offset - 1, first), row)      # rows from this one on are full
    partial = (full - first) * (first + full + 2 * offset + 1) // 2
    return partial + (row - full) * col


def triangle_indices_meta(name, count):
    def meta(row, col, offset=0, dtype=None, layout=None, device=None, pin_memory=None):
        dtype = dtype or D.int64
        if dtype not in (D.int32, D.int64):
            raise NotImplementedError(f"\"{name}\" not implemented for '{R.type_name(dtype)}'")
        for arg, value in (("row", row), ("col", col)):
            if value < 0:
                raise RuntimeError(f"{arg} must be non-negative, got{value}")
        return _spec((2, count(row, col, offset)), dtype)
    return meta


tril_indices = defop(f"tril_indices(int row, int col, int offset=0, *, {_FACTORY_KW}) -> Tensor",
                     triangle_indices_meta("tril_indices", tril_count), function=True,
                     tags=("factory",))
triu_indices = defop(f"triu_indices(int row, int col, int offset=0, *, {_FACTORY_KW}) -> Tensor",
                     triangle_indices_meta("triu_indices",
                                           lambda r, c, k: r * c - tril_count(r, c, k - 1)),
                     function=True, tags=("factory",))


# --- window functions: composites over arange and cos (``TensorFactories.cpp``) ----------------
_WINDOW_KW = f"*, {_FACTORY_KW}) -> Tensor"
hann_window = defop(f"hann_window.periodic(int window_length, bool periodic=True, {_WINDOW_KW}",
                    function=True)
hamming_window = defop("hamming_window.periodic_alpha_beta(int window_length, bool periodic=True, "
                       f"float alpha=0.54, float beta=0.46, {_WINDOW_KW}", function=True)
blackman_window = defop("blackman_window.periodic(int window_length, bool periodic=True, "
                        f"{_WINDOW_KW}", function=True)
bartlett_window = defop("bartlett_window.periodic(int window_length, bool periodic=True, "
                        f"{_WINDOW_KW}", function=True)
kaiser_window = defop("kaiser_window.beta(int window_length, bool periodic=True, float beta=12.0, "
                      f"{_WINDOW_KW}", function=True)

def _window(name, window_length, dtype, device, periodic):
    """``window_function_checks``, then the positions 0..N-1 of the symmetric window of length
    N (one longer when periodic), or a finished window for lengths 0 and 1."""
    dtype = dtype or D.get_default_dtype()
    if dtype.category != D.FLOATING:
        raise RuntimeError(f"{name} expects floating point dtypes, got: TensorOptions(dtype="
                           f"{R.c_type_name(dtype)}, device={device or 'cpu'}, layout=Strided "
                           f"(default), requires_grad=false (default), pinned_memory=false, "
                           f"memory_format=(nullopt))")
    if window_length < 0:
        raise RuntimeError(f"{name} requires non-negative window_length, got "
                           f"window_length={window_length}")
    if window_length <= 1:
        return full((window_length,), 1.0, dtype=dtype, device=device), None
    n = window_length + 1 if periodic else window_length
    return arange(0, n, 1, dtype=dtype, device=device), n


def _finish(window, periodic):
    return window[:-1] if periodic else window


@register_decomposition(hamming_window)
def _hamming_window(window_length, periodic=True, alpha=0.54, beta=0.46, dtype=None, layout=None,
                    device=None, pin_memory=None, name="hamming_window"):
    x, n = _window(name, window_length, dtype, device, periodic)
    if n is None:
        return x
    return _finish(x.mul(2.0 * math.pi / (n - 1)).cos().mul(-beta).add(alpha), periodic)


@register_decomposition(hann_window)
def _hann_window(window_length, periodic=True, dtype=None, layout=None, device=None,
                 pin_memory=None):
    return _hamming_window(window_length, periodic, 0.5, 0.5, dtype, layout, device,
                           name="hann_window")


@register_decomposition(blackman_window)
def _blackman_window(window_length, periodic=True, dtype=None, layout=None, device=None,
                     pin_memory=None):
    x, n = _window("blackman_window", window_length, dtype, device, periodic)
    if n is None:
        return x
    x = x.mul(math.pi / (n - 1))
    return _finish(x.mul(4).cos().mul(0.08).sub(x.mul(2).cos().mul(0.5)).add(0.42), periodic)


@register_decomposition(bartlett_window)
def _bartlett_window(window_length, periodic=True, dtype=None, layout=None, device=None,
                     pin_memory=None):
    x, n = _window("bartlett_window", window_length, dtype, device, periodic)
    if n is None:
        return x
    x = x.mul(2.0 / (n - 1))
    from .shape import cat
    half = ((n - 1) >> 1) + 1
    return _finish(cat([x[:half], x[half:].neg().add(2)]), periodic)


@register_decomposition(kaiser_window)
def _kaiser_window(window_length, periodic=True, beta=12.0, dtype=None, layout=None, device=None,
                   pin_memory=None):
    from .special import i0
    x, n = _window("kaiser_window", window_length, dtype, device, periodic)
    if n is None:
        return x
    # PyTorch's kernel computes half types in float and rounds once
    x = x.float() if x.dtype in (D.float16, D.bfloat16) else x
    alpha = (n - 1) / 2.0
    ratio = x.sub(alpha).div(alpha)
    window = i0(ratio.mul(ratio).neg().add(1).sqrt().mul(beta))
    window = window.div(i0(full((), beta, dtype=x.dtype, device=x.device)))
    return _finish(window.to(dtype or D.get_default_dtype()), periodic)
