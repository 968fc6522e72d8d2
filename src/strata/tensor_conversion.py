"""Leaving a tensor: to Python numbers, NumPy and DLPack (sync points on devices), and
moving it to another device, dtype or pinned memory (``to``, ``cpu``, ``float``, ...), as a mixin.

Kept apart from ``_tensor.py``: these methods hold the conversion rules (``to``'s three
overloads, memory formats, scalar conversions and their errors), not the tensor's own state.
"""

import functools
import warnings
from enum import IntEnum

import numpy as np

from .core import dtype as D
from .core.device import as_device, no_cuda
from .core.tensor_impl import _is_tensor
from .dispatch.tls import _state as _tls
from .ops import factory as F


class DLDeviceType(IntEnum):
    """DLPack's device codes (``__dlpack_device__`` returns ``(DLDeviceType.kDLCPU, 0)``)."""

    kDLCPU = 1


@functools.cache
def _warn_scalar_of_requires_grad():
    """``float(t)`` of a tensor that requires grad warns once per process, as PyTorch's
    (``TORCH_WARN_ONCE``; ``item()`` and ``int()`` do not warn there)."""
    warnings.warn("Converting a tensor with requires_grad=True to a scalar may lead to unexpected "
                  "behavior.\nConsider using tensor.detach() first.", UserWarning, stacklevel=3)


_pin_memory = {}   # device type -> pin function, installed by the backends with pinned memory
_default_pin = [None]   # the device type whose pin_memory() runs when none is named


def install_pin_memory(fn, device_type="sim", default=True):
    """An accelerator backend provides ``Tensor.pin_memory()``: sim's is the default, another
    is picked by its device, ``pin_memory("opencl")``."""
    _pin_memory[device_type] = fn
    if default:
        _default_pin[0] = device_type


class TensorConversion:
    """``Tensor``'s conversions and device/dtype movement (a mixin: no state of its own)."""

    __slots__ = ()

    # --- conversion to Python / NumPy (sync points on devices) ----------------------------------
    def _host(self) -> np.ndarray:
        """The values as a NumPy array on the host (a view for CPU tensors, else a copy)."""
        if self.device.type == "cpu":
            return self._np()
        if self.device.type == "meta":
            raise NotImplementedError("Cannot copy out of meta tensor; no data!")
        return self.detach().cpu()._np()

    def numpy(self, *, force=False):
        """The NumPy array that shares this CPU tensor's memory (``force=True``: detach and copy
        to the host first, when needed)."""
        if self.requires_grad and not force:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use "
                               "tensor.detach().numpy() instead.")
        if self.device.type != "cpu":
            if force:
                return self._host()
            raise TypeError(f"can't convert {self.device.type} device type tensor to numpy. Use "
                            f"Tensor.cpu() to copy the tensor to host memory first.")
        return self._np()

    def __array__(self, dtype=None, copy=None):
        """NumPy's conversion protocol (NumPy 2: ``copy=False`` refuses to copy)."""
        arr = self.numpy()
        if dtype is not None and np.dtype(dtype) != arr.dtype:
            if copy is False:
                raise ValueError("Unable to avoid copy while creating an array as requested.")
            return arr.astype(dtype)
        return arr.copy() if copy else arr

    def __array_wrap__(self, array, context=None, return_scalar=False):
        """NumPy ufuncs on tensors return tensors (bool results as uint8, as PyTorch does)."""
        from .tensor_new import from_numpy
        if array.dtype == bool:
            array = array.astype(np.uint8)
        return from_numpy(np.ascontiguousarray(array))

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        """Export as a DLPack capsule (CPU tensors; NumPy makes the capsule over our memory)."""
        if self.requires_grad:
            raise BufferError("Can't export tensors that require gradient, use tensor.detach()")
        self.__dlpack_device__()
        if self.device.type != "cpu":
            raise BufferError(f"DLPack export of {self.device.type} tensors is not supported")
        kwargs = {k: v for k, v in (("max_version", max_version), ("dl_device", dl_device),
                                    ("copy", copy)) if v is not None}
        return self._np().__dlpack__(**kwargs)

    def __dlpack_device__(self):
        if self.device.type != "cpu":
            raise ValueError(f"Unknown device type {self.device.type} for Dlpack")
        return (DLDeviceType.kDLCPU, 0)

    def item(self):
        """The one element as a Python number (a sync point on devices)."""
        n = self.numel()
        if n != 1:
            raise RuntimeError(f"a Tensor with {n} elements cannot be converted to Scalar")
        value = self._host().reshape(()).item()
        return float(value) if self.dtype is D.bfloat16 else value

    def tolist(self):
        """Nested Python lists of Python numbers (a 0-dim tensor gives a number)."""
        arr = self._host()
        if self.dtype in (D.bfloat16, D.float16):
            arr = arr.astype(np.float32)  # exact, and tolist() then gives Python floats
        return arr.tolist()

    def _python_scalar(self):
        if self.numel() != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        value = self.item()
        if isinstance(value, complex):   # float()/int() take a complex with no imaginary part
            if value.imag:
                raise RuntimeError("value cannot be converted to type double without overflow")
            value = value.real
        return value

    def __float__(self):
        if _tls.grad_enabled and self.requires_grad:
            _warn_scalar_of_requires_grad()
        return float(self._python_scalar())

    def __int__(self):
        return int(self._python_scalar())

    def __complex__(self):
        if self.numel() != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        return complex(self.item())

    def __bool__(self):
        n = self.numel()
        if n != 1:
            raise RuntimeError("Boolean value of Tensor with no values is ambiguous" if n == 0
                               else "Boolean value of Tensor with more than one value is "
                               "ambiguous")
        return bool(self.item())

    def __index__(self):
        if self.dtype.category == D.FLOATING or self.numel() != 1:
            raise TypeError("only integer tensors of a single element can be converted to an "
                            "index")
        return int(self.item())

    # --- device and dtype movement --------------------------------------------------------------
    def to(self, *args, **kwargs):
        """``to(dtype)``, ``to(device=None, dtype=None)``, ``to(other)``, each with
        ``non_blocking`` and ``copy``; returns self when nothing changes and copy is False.

            >>> x = strata.ones(2); x.to(strata.float32) is x
            True
        """
        device, dtype, non_blocking, copy, memory_format = _to_arguments(args, kwargs)
        device = self.device if device is None else as_device(device)
        dtype = self.dtype if dtype is None else dtype
        if device == self.device and dtype is self.dtype and not copy and (
                memory_format in (None, "preserve_format")
                or memory_format == _suggest_memory_format(self)):
            return self
        return F._to_copy(self, dtype=dtype, device=device, non_blocking=non_blocking,
                          memory_format=memory_format)

    def cpu(self, memory_format=None):
        return self if self.device.type == "cpu" else self.to("cpu", memory_format=memory_format)

    def cuda(self, device=None, non_blocking=False, memory_format=None):
        no_cuda()

    def float(self, memory_format=None):
        return self.to(D.float32, memory_format=memory_format)

    def double(self, memory_format=None):
        return self.to(D.float64, memory_format=memory_format)

    def cfloat(self, memory_format=None):
        return self.to(D.complex64, memory_format=memory_format)

    def cdouble(self, memory_format=None):
        return self.to(D.complex128, memory_format=memory_format)

    def half(self, memory_format=None):
        return self.to(D.float16, memory_format=memory_format)

    def bfloat16(self, memory_format=None):
        return self.to(D.bfloat16, memory_format=memory_format)

    def long(self, memory_format=None):
        return self.to(D.int64, memory_format=memory_format)

    def int(self, memory_format=None):
        return self.to(D.int32, memory_format=memory_format)

    def short(self, memory_format=None):
        return self.to(D.int16, memory_format=memory_format)

    def char(self, memory_format=None):
        return self.to(D.int8, memory_format=memory_format)

    def byte(self, memory_format=None):
        return self.to(D.uint8, memory_format=memory_format)

    def bool(self, memory_format=None):
        return self.to(D.bool_, memory_format=memory_format)

    def type_as(self, other):
        if not _is_tensor(other):
            raise TypeError(f"type_as(): argument 'other' (position 1) must be Tensor, not "
                            f"{type(other).__name__}")
        return self.to(other.dtype)

    def pin_memory(self, device=None):
        """A copy in pinned host memory, which an accelerator reads and writes directly
        (``non_blocking`` copies from it do not block the host)."""
        kind = _default_pin[0] if device is None else str(device).split(":")[0]
        pin = _pin_memory.get(kind)
        if pin is None:
            raise RuntimeError("Cannot access accelerator device when none is available.")
        return self if self.is_pinned() else pin(self)

    def is_pinned(self, device=None):
        return getattr(self._storage, "pinned", False)

    def record_stream(self, stream):
        """Mark this tensor's memory as used by ``stream``: the allocator will not reuse it
        before the work queued on ``stream`` so far is done."""
        record = getattr(stream, "record_tensor", None)
        if record is None or self.device.type != stream.device_type:
            raise RuntimeError(f"record_stream: expected a stream of device "
                               f"'{self.device.type}', got {stream!r}")
        record(self)


_TO_OVERLOADS = ("to() received an invalid combination of arguments - got ({got}), but expected "
                 "one of: (device device=None, dtype dtype=None, bool non_blocking=False, bool "
                 "copy=False, *, memory_format memory_format=None); (dtype dtype, bool "
                 "non_blocking=False, bool copy=False, *, memory_format memory_format=None); "
                 "(Tensor tensor, bool non_blocking=False, bool copy=False, *, memory_format "
                 "memory_format=None)")


def _suggest_memory_format(t):
    """The memory format a tensor's strides suggest (PyTorch's ``suggest_memory_format``):
    channels-last for 4-D/5-D tensors laid out that way, else contiguous."""
    order = {4: (1, 3, 2, 0), 5: (1, 4, 3, 2, 0)}.get(t.ndim)
    if order is None:
        return "contiguous_format"
    shape, strides = t._shape, t.stride()
    if strides[1] == 0:
        return "contiguous_format"
    smallest = 0
    for d in order:
        # ambiguous layouts (a size-0 dim, equal strides at N) count as contiguous
        if shape[d] == 0 or strides[d] < smallest or (d == 0 and smallest == strides[1]):
            return "contiguous_format"
        smallest = strides[d] * (shape[d] if shape[d] > 1 else 1)
    return "channels_last" if t.ndim == 4 else "channels_last_3d"


def _is_dtype_arg(x):
    return isinstance(x, D.dtype) or isinstance(x, type) and x in (float, int, bool)


def _to_arguments(args, kwargs):
    """Bind ``Tensor.to``'s three overloads, as PyTorch's argument parser does:
    ``(device, dtype, non_blocking, copy)``, ``(dtype, non_blocking, copy)``,
    ``(tensor, non_blocking, copy)``; ``memory_format`` is keyword-only in all of them."""
    kw = dict(kwargs)
    memory_format = kw.pop("memory_format", None)
    first = args[0] if args else None
    if args and _is_dtype_arg(first):
        names, bound = ("non_blocking", "copy"), {"dtype": first}
    elif args and _is_tensor(first):
        names, bound = ("non_blocking", "copy"), {"device": first.device, "dtype": first.dtype}
    else:
        names, bound = ("device", "dtype", "non_blocking", "copy"), {}
    rest = args[1:] if bound else args
    ok = len(rest) <= len(names) and not (kw.keys() - set(names))
    ok = ok and not any(n in kw for n in names[:len(rest)]) and not (bound and "dtype" in kw)
    if ok:
        bound.update(zip(names, rest))
        bound.update(kw)
        device, dtype = bound.get("device"), bound.get("dtype")
        non_blocking, copy = bound.get("non_blocking", False), bound.get("copy", False)
        ok = (isinstance(non_blocking, bool) and isinstance(copy, bool)
              and (dtype is None or _is_dtype_arg(dtype))
              and (device is None or isinstance(device, (str, int)) or hasattr(device, "index")))
    if not ok:
        got = ", ".join([type(a).__name__ for a in args] + [f"{k}={type(v).__name__}"
                                                           for k, v in kwargs.items()])
        raise TypeError(_TO_OVERLOADS.format(got=got))
    dtype = None if dtype is None else D.to_dtype(dtype, "to")
    return device, dtype, non_blocking, copy, memory_format


def _parse_to(args, kwargs):
    """``(device, dtype, non_blocking, memory_format)`` of a ``to(...)`` call, as PyTorch's
    ``torch._C._nn._parse_to`` (what ``nn.Module.to`` reads)."""
    device, dtype, non_blocking, _, memory_format = _to_arguments(args, kwargs)
    return device, dtype, non_blocking, memory_format
