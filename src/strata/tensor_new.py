"""Tensors from existing data: ``tensor``, ``as_tensor``, ``asarray``, ``from_numpy``, DLPack.

``tensor(data)`` follows PyTorch's ``torch/csrc/utils/tensor_new.cpp`` step by step, so shapes,
dtypes and errors agree:

1. the shape comes from the *first* element at each depth (``compute_sizes``);
2. the dtype, unless given, is the promotion of every leaf's dtype (bool, int64, the default
   float, a NumPy scalar's or a 0-dim tensor's own dtype; an empty list counts as the default
   float);
3. every leaf is converted to the target dtype the way PyTorch stores one Python scalar: integers
   are range-checked ("value cannot be converted to type int8 without overflow"), floats go
   through double.

Nested lists of plain Python numbers (the common case) take a NumPy fast path; anything else
(tensors, NumPy scalars or arrays inside lists, ragged data) walks the data in Python and raises
PyTorch's errors. ``creation.py`` re-exports these next to the factories (``zeros``, ...).
"""

import ctypes
import operator
import warnings

import numpy as np

from ._tensor import CPU_KEYSET, from_array, make_tensor
from .core import dtype as D
from .core.device import as_device, cpu
from .core.fp_errors import silent_fp
from .core.storage import Storage
from .core.tensor_impl import TensorImpl
from .dispatch.tls import state as dispatch_state
from .ops import factory as F

_MAX_DIMS = 64
_PLAIN = frozenset((bool, int, float))
_TENSOR_COPY_WARNING = (
    "To copy construct from a tensor, it is recommended to use sourceTensor.detach().clone() or "
    "sourceTensor.detach().clone().requires_grad_(True), rather than torch.tensor(sourceTensor).")


def type_label(obj) -> str:
    """A type's name as CPython prints it in argument errors (``float``, ``numpy.float64``)."""
    tp = type(obj)
    return f"numpy.{tp.__name__}" if tp.__module__ == "numpy" else tp.__name__


def finish(t, requires_grad):
    """Apply a factory's ``requires_grad=`` (integer results cannot require grad)."""
    if requires_grad:
        if not t.dtype.is_differentiable:
            raise RuntimeError("Only Tensors of floating point and complex dtype can require "
                               "gradients")
        t.requires_grad_(True)
    return t


# --- shape and dtype of nested Python data -------------------------------------------------------

def _is_sequence(obj) -> bool:
    """CPython's ``PySequence_Check``; tensors and NumPy scalars are leaves, strings are not."""
    if isinstance(obj, (list, tuple, str)):
        return True
    if isinstance(obj, (dict, TensorImpl, np.generic)):
        return False
    return hasattr(type(obj), "__getitem__")


def _compute_sizes(data) -> tuple:
    sizes = []
    obj = data
    while _is_sequence(obj):
        n = len(obj)
        sizes.append(n)
        if len(sizes) > _MAX_DIMS:
            raise ValueError(f"too many dimensions '{type_label(obj)}'")
        if n == 0:
            break
        obj = obj[0]
    return tuple(sizes)


def _infer_dtype(obj):
    """The dtype of one leaf or the promotion over a sequence (``infer_scalar_type``)."""
    if isinstance(obj, (np.ndarray, np.generic)) and not isinstance(obj, str):
        return _numpy_dtype(obj.dtype)
    if isinstance(obj, float):
        return D.get_default_dtype()
    if isinstance(obj, bool):
        return D.bool_
    if isinstance(obj, int):
        return D.int64
    if isinstance(obj, complex):
        return D.get_default_complex_dtype()
    if isinstance(obj, TensorImpl):
        return obj.dtype
    if isinstance(obj, (str, bytes)):
        raise TypeError(f"new(): invalid data type '{type_label(obj)}'")
    if _is_sequence(obj):
        result = None
        for item in obj:
            if item is obj:
                raise TypeError("new(): self-referential lists are incompatible")
            d = _infer_dtype(item)
            result = d if result is None else D.promote_types(result, d)
        return D.get_default_dtype() if result is None else result
    raise RuntimeError(f"Could not infer dtype of {type_label(obj)}")


def _plain_leaf_types(data, sizes):
    """The set of leaf types when ``data`` is a regular nesting of lists/tuples of plain Python
    numbers with exactly ``sizes``; None sends the data down the exact (slow) path."""
    if not sizes:
        return {type(data)} if type(data) in _PLAIN else None
    types = set()
    rows = [data]
    last = len(sizes) - 1
    for depth, n in enumerate(sizes):
        below = []
        for row in rows:
            if type(row) not in (list, tuple) or len(row) != n:
                return None
            if depth == last:
                types.update(map(type, row))
            else:
                below.extend(row)
        rows = below
    return types if types <= _PLAIN else None


# --- storing one Python scalar, as PyTorch's store_scalar ----------------------------------------

def _unpack_double(obj) -> float:
    if isinstance(obj, float):
        return float(obj)
    tp = type(obj)
    if hasattr(tp, "__float__") and not isinstance(obj, (str, bytes)):
        return float(obj)
    if hasattr(tp, "__index__"):
        return float(operator.index(obj))
    raise TypeError(f"must be real number, not {type_label(obj)}")


def _unpack_long(obj) -> int:
    value = operator.index(obj)
    if not -2 ** 63 <= value < 2 ** 63:
        raise ValueError("Overflow when unpacking long long")
    return value


def _int_range(dtype):
    info = np.iinfo(dtype.np)
    return int(info.min), int(info.max)


def _check_int_range(values_min, values_max, dtype, from_float):
    """PyTorch's ``checked_convert``: floats must fit the range; ints into an unsigned type may be
    negative down to -max (they wrap, two's complement)."""
    lo, hi = _int_range(dtype)
    if not dtype.is_signed and not from_float:
        lo = -hi
    if values_min < lo or values_max > hi:
        raise RuntimeError(f"value cannot be converted to type {dtype.name} without overflow")


def _unpack_complex(obj) -> complex:
    if isinstance(obj, (str, bytes)):
        raise TypeError(f"must be real number, not {type_label(obj)}")
    return complex(obj)


def _store_one(dtype):
    """The converter from one Python leaf to a value NumPy can put in an array of ``dtype``."""
    if dtype.is_complex:
        return _unpack_complex
    if dtype.category == D.FLOATING:
        return _unpack_double
    if dtype is D.bool_:
        return lambda obj: bool(obj) if isinstance(obj, (float, np.bool_)) else \
            bool(operator.index(obj))

    def to_int(obj):
        if isinstance(obj, float):
            value = float(obj)
            if value != value:
                raise RuntimeError(f"value cannot be converted to type {dtype.name} without "
                                   f"overflow")
            _check_int_range(value, value, dtype, True)
            return int(value)
        value = _unpack_long(obj)
        _check_int_range(value, value, dtype, False)
        return value
    return to_int


def _store(obj, sizes, dim, convert, out):
    if dim == len(sizes):
        out.append(convert(obj))
        return
    n = sizes[dim]
    if isinstance(obj, (list, tuple)):
        seq = obj
    else:
        try:
            seq = list(obj)
        except TypeError:
            raise TypeError("not a sequence") from None
    if len(seq) != n:
        raise ValueError(f"expected sequence of length {n} at dim {dim} (got {len(seq)})")
    for item in seq:
        _store(item, sizes, dim + 1, convert, out)


def _finish_array(values, dtype):
    """Values held as float64/int64/bool -> an array of ``dtype``. Half floats round through
    float32, as PyTorch's ``Half(float)`` constructor does."""
    if dtype in (D.float16, D.bfloat16):
        values = values.astype(np.float32)
    return values.astype(dtype.np, copy=False)


def _array_from_data(data, sizes, dtype, types) -> np.ndarray:
    """The values of nested data in ``dtype``; ``types`` are its plain leaf types (or None)."""
    if types is not None and not (float in types and dtype.category == D.INTEGRAL):
        if dtype.category == D.INTEGRAL:
            try:
                values = np.array(data, dtype=np.int64)
            except OverflowError:
                raise ValueError("Overflow when unpacking long long") from None
            if dtype is not D.int64 and values.size:
                _check_int_range(int(values.min()), int(values.max()), dtype, False)
            return values.astype(dtype.np)
        if dtype is D.float64 or dtype is D.float32 and int not in types:
            return np.array(data, dtype=dtype.np)  # one rounding, from double, as PyTorch
        values = np.array(data, dtype=np.float64)
        return values.astype(bool) if dtype is D.bool_ else _finish_array(values, dtype)
    flat = []
    _store(data, sizes, 0, _store_one(dtype), flat)
    holder = {D.FLOATING: np.float64, D.COMPLEX: np.complex128}.get(
        dtype.category, np.bool_ if dtype is D.bool_ else np.int64)
    return _finish_array(np.array(flat, dtype=holder).reshape(sizes), dtype)


# --- NumPy ---------------------------------------------------------------------------------------

def _numpy_dtype(np_dtype):
    try:
        return D.from_numpy_dtype(np_dtype)
    except TypeError:
        scalar = np.dtype(np_dtype).type
        raise TypeError(
            f"can't convert np.ndarray of type numpy.{scalar.__name__}. The only supported "
            "types are: float64, float32, float16, bfloat16, complex64, complex128, int64, int32, "
            "int16, int8, uint8, and bool.") from None


def _check_numpy(arr: np.ndarray):
    """PyTorch's ``tensor_from_numpy`` checks: byte order, dtype, negative or misaligned
    strides. Returns the strata dtype."""
    try:
        dtype = D.from_numpy_dtype(arr.dtype)
    except TypeError:
        if not arr.dtype.isnative:
            raise ValueError("given numpy array has byte order different from the native byte "
                             "order. Conversion between byte orders is currently not "
                             "supported.") from None
        _numpy_dtype(arr.dtype)  # raises PyTorch's "can't convert np.ndarray of type ..."
    if not arr.flags.c_contiguous:
        if any(s < 0 for s in arr.strides):
            raise ValueError("At least one stride in the given numpy array is negative, and "
                             "tensors with negative strides are not currently supported. (You "
                             "can probably work around this by making a copy of your array  "
                             "with array.copy().) ")
        if any(s % arr.itemsize for s in arr.strides):
            raise ValueError("given numpy array strides not a multiple of the element byte "
                             "size. Copy the numpy array to reallocate the memory.")
    return dtype


def from_numpy(ndarray):
    """A CPU tensor that shares memory with ``ndarray`` (writes show through both ways).

        >>> a = np.zeros(3); t = strata.from_numpy(a); t[0] = 5; a[0]
        5.0
    """
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type_label(ndarray)})")
    dtype = _check_numpy(ndarray)
    if not ndarray.flags.writeable:
        warnings.warn("The given NumPy array is not writable, and PyTorch does not support "
                      "non-writable tensors. This means writing to this tensor will result in "
                      "undefined behavior. You may want to copy the array to protect its data or "
                      "make it writable before converting it to a tensor. This type of warning "
                      "will be suppressed for the rest of this program.", UserWarning,
                      stacklevel=2)
    return _share_numpy(ndarray, dtype)


_warned_read_only_buffer = False


def frombuffer(buffer, *, dtype, count=-1, offset=0, requires_grad=False):
    """A 1-D CPU tensor over the bytes of ``buffer`` (any object with the buffer protocol),
    sharing them: ``count`` elements of ``dtype`` from byte ``offset`` (-1: all that fit), with
    PyTorch's checks and messages."""
    try:
        view = memoryview(buffer)
    except TypeError:
        raise ValueError("object does not implement Python buffer protocol.") from None
    length, itemsize = view.nbytes, dtype.itemsize
    if length <= 0 or count == 0:
        raise ValueError(f"both buffer length ({length}) and count ({count}) must not be 0")
    if not 0 <= offset < length:
        raise ValueError(f"offset ({offset} bytes) must be non-negative and no greater than "
                         f"buffer length ({length} bytes) minus 1")
    if count < 0:
        if (length - offset) % itemsize:
            raise ValueError(f"buffer length ({length - offset} bytes) after offset ({offset} "
                             f"bytes) must be a multiple of element size ({itemsize})")
        count = (length - offset) // itemsize
    elif offset + count * itemsize > length:
        raise ValueError(f"requested buffer length ({count} * {itemsize} bytes) after offset "
                         f"({offset} bytes) must not be greater than actual buffer length "
                         f"({length} bytes)")
    array = np.frombuffer(view.cast("B"), np.uint8, count * itemsize, offset)
    if view.readonly:
        global _warned_read_only_buffer
        if not _warned_read_only_buffer:
            _warned_read_only_buffer = True
            warnings.warn("The given buffer is not writable, and PyTorch does not support "
                          "non-writable tensors. This means you can write to the underlying "
                          "(supposedly non-writable) buffer using the tensor. You may want to "
                          "copy the buffer to protect its data or make it writable before "
                          "converting it to a tensor. This type of warning will be suppressed "
                          "for the rest of this program.", UserWarning, stacklevel=2)
    return finish(_share_bytes(array, dtype, count), requires_grad)


def _share_bytes(array, dtype, count):
    """A 1-D tensor of ``count`` ``dtype`` elements over the bytes ``array`` (uint8)."""
    data = np.frombuffer((ctypes.c_uint8 * array.size).from_address(
        array.__array_interface__["data"][0]), np.uint8) if array.size else array
    return make_tensor(Storage(array.size, cpu, data=data, owner=array), 0, (count,), (1,),
                       dtype, cpu, CPU_KEYSET)


def _share_numpy(ndarray, dtype):
    if ndarray.flags.c_contiguous and ndarray.flags.writeable:
        return from_array(ndarray, dtype)  # the common case: the array is the storage's owner
    # Otherwise the storage is exactly the memory the array spans; it keeps the array alive.
    span = 0 if ndarray.size == 0 else ndarray.itemsize + sum(
        (n - 1) * s for n, s in zip(ndarray.shape, ndarray.strides))
    ptr = ndarray.__array_interface__["data"][0]
    data = np.frombuffer((ctypes.c_uint8 * span).from_address(ptr), np.uint8) if span else \
        np.empty(0, np.uint8)
    t = make_tensor(Storage(span, cpu, data=data, owner=ndarray), 0, ndarray.shape,
                    tuple(s // ndarray.itemsize for s in ndarray.strides), dtype, cpu, CPU_KEYSET)
    if ndarray.flags.writeable:  # else the tensor reads through its (writable) storage bytes
        t._array = ndarray
    return t


class _Capsule:
    """Adapts a bare DLPack capsule (the legacy protocol) to ``np.from_dlpack``."""

    def __init__(self, capsule):
        self._capsule = capsule

    def __dlpack__(self, **kwargs):
        return self._capsule

    def __dlpack_device__(self):
        return (1, 0)


def from_dlpack(ext_tensor):
    """A tensor sharing memory with any CPU DLPack producer (NumPy, PyTorch, another strata)."""
    if not hasattr(ext_tensor, "__dlpack__"):
        if type(ext_tensor).__name__ != "PyCapsule":
            raise RuntimeError(f"from_dlpack: expected an object with __dlpack__ or a DLPack "
                               f"capsule, got {type_label(ext_tensor)}")
        ext_tensor = _Capsule(ext_tensor)
    # NumPy marks an array it imports read-only; the memory is the producer's to share, as
    # PyTorch shares it: no warning, and the tensor writes through
    array = np.from_dlpack(ext_tensor)
    return _share_numpy(array, _check_numpy(array))


# --- the constructors ----------------------------------------------------------------------------

@silent_fp   # out-of-range floats become inf silently, as in PyTorch
def _from_python(data, dtype, device):
    """A new tensor from nested Python data (lists, tuples, scalars, NumPy scalars, tensors)."""
    if isinstance(data, (str, bytes)):
        raise TypeError(f"new(): invalid data type '{type_label(data)}'")
    sizes = _compute_sizes(data)
    types = _plain_leaf_types(data, sizes)
    if dtype is None:
        if types is None:
            dtype = _infer_dtype(data)
        elif float in types or not types:
            dtype = D.get_default_dtype()
        else:
            dtype = D.int64 if int in types else D.bool_
    device = as_device(device)
    if device.type == "meta" and not dispatch_state().mode_stack:
        return F.empty(sizes, dtype=dtype, device=device)     # as torch: the values unread
    numel = 1
    for s in sizes:
        numel *= s
    arr = _array_from_data(data, sizes, dtype, types) if numel else np.empty(sizes, dtype.np)
    out = from_array(arr, dtype)
    # meta under a mode goes through ``to``: while AOT autograd traces on meta stand-ins
    # (``new_tensor`` in a compiled program), the CPU tensor becomes a graph constant and keeps
    # its values
    return out if device == cpu else out.to(device)


@silent_fp
def _from_numpy_copy(arr, dtype, device):
    src_dtype = _check_numpy(arr)
    dtype = dtype or src_dtype
    if dtype in (D.float16, D.bfloat16) and src_dtype not in (D.float32, D.float16, D.bfloat16):
        arr = arr.astype(np.float32)  # PyTorch converts to half types through float
    # order="K" keeps a transposed array's layout, as PyTorch's .to(copy=True) preserves strides
    out = from_array(np.array(arr, dtype=dtype.np, order="K", copy=True), dtype)
    device = as_device(device)
    return out if device == cpu else out.to(device)


def tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """A new tensor that copies ``data`` (nested lists/tuples of numbers, an ndarray, a scalar).

        >>> strata.tensor([[1, 2], [3, 4.5]])
        tensor([[1.0000, 2.0000],
                [3.0000, 4.5000]])
    """
    dtype = None if dtype is None else D.to_dtype(dtype, "tensor")
    if isinstance(data, TensorImpl):
        warnings.warn(_TENSOR_COPY_WARNING, UserWarning, stacklevel=2)
        src = data.detach()
        out = src.to(device=src.device if device is None else device,
                      dtype=dtype or src.dtype, copy=True)
    elif isinstance(data, np.ndarray):
        out = _from_numpy_copy(data, dtype, device)
    else:
        out = _from_python(data, dtype, device)
    return finish(out, requires_grad)


def as_tensor(data, dtype=None, device=None):
    """Like ``tensor`` but shares memory with a tensor or an ndarray when dtype and device allow.

        >>> a = np.arange(3); strata.as_tensor(a).data_ptr() == a.ctypes.data
        True
    """
    dtype = None if dtype is None else D.to_dtype(dtype, "as_tensor")
    if isinstance(data, TensorImpl):
        return data.to(device=data.device if device is None else device, dtype=dtype)
    if isinstance(data, np.ndarray):
        shared = from_numpy(data)
        if (dtype is None or dtype is shared.dtype) and as_device(device) == cpu:
            return shared
        return shared.to(device=as_device(device), dtype=dtype)
    return _from_python(data, dtype, device)


def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=False):
    """``obj`` as a tensor, sharing memory with tensors, ndarrays and DLPack producers.

    ``copy=None`` copies only when dtype/device require it, ``True`` always copies, ``False``
    never does (ValueError when it would have to).
    """
    dtype = None if dtype is None else D.to_dtype(dtype, "asarray")
    source = None
    if isinstance(obj, TensorImpl):
        source = obj
    elif isinstance(obj, np.ndarray):
        _check_numpy(obj)
        source = _share_numpy(obj, _numpy_dtype(obj.dtype))
    elif hasattr(obj, "__dlpack__"):
        source = from_dlpack(obj)
    if source is None:
        if copy is False:
            raise ValueError("can't alias arbitrary sequence into a tensor.")
        out = _from_python(obj, dtype, device)
    else:
        target_device = source.device if device is None else as_device(device)
        wrong_device = target_device != source.device
        wrong_dtype = dtype is not None and dtype is not source.dtype
        if copy is False and wrong_device:
            raise ValueError(f"can't alias tensor from device '{source.device}' to "
                             f"'{target_device}'.")
        if copy is False and wrong_dtype:
            from .ops.meta_rules import type_name
            raise ValueError(f"can't alias tensor with dtype '{type_name(source.dtype)}' into "
                             f"dtype '{type_name(dtype)}'.")
        if copy or wrong_device or wrong_dtype:
            out = source.to(device=target_device, dtype=dtype or source.dtype, copy=bool(copy))
        else:
            out = source
    return out.requires_grad_(True) if requires_grad else out


def legacy_from_data(data, dtype):
    """The data forms of the legacy constructors: ``FloatTensor([1, 2])``, ``Tensor(ndarray)``,
    ``Tensor(tensor)``. ``dtype`` None (plain ``Tensor``) means the default dtype, and a tensor
    of any dtype is aliased; a typed constructor only aliases a tensor of its own dtype."""
    if isinstance(data, TensorImpl):
        if dtype is not None and data.dtype is not dtype:
            raise TypeError(f"expected a tensor of dtype {dtype} (got {data.dtype})")
        return data.view(tuple(data.shape))
    if not _is_sequence(data) or isinstance(data, str):
        raise TypeError(f"new(): data must be a sequence (got {type_label(data)})")
    dtype = dtype or D.get_default_dtype()
    if isinstance(data, np.ndarray):
        return _from_numpy_copy(data, dtype, cpu)
    return _from_python(data, dtype, cpu)


__all__ = ["tensor", "as_tensor", "asarray", "from_numpy", "from_dlpack"]
