"""The ``Tensor`` class: thin methods that call operators through the dispatcher.

A ``Tensor`` *is* its ``TensorImpl`` (one Python object per tensor keeps the eager hot path
short). Methods either are generated from an op's ``method=`` declaration (see the bottom of this
file) or are written here when PyTorch's Python signature is irregular (``view(*shape)``,
``max(dim)`` returning a named tuple, ``to(...)`` overloads, Python operators).
"""

import functools
import warnings
from collections import namedtuple
from enum import IntEnum

import numpy as np

from .core import dtype as D
from .core import trace
from .core.device import as_device, cpu, no_cuda
from .core.shape import Size, contiguous_strides
from .core.storage import Storage
from .core.tensor_impl import INFERENCE_VERSION, AutogradMeta, TensorImpl, VersionCounter
from .dispatch import tls
from .dispatch.keys import backend_keyset, functionality_bit
from .dispatch.tls import _state as _tls
from .functions import argument_type_error
from .ops import aten
from .ops import complex as CX
from .ops import factory as F
from .ops import pointwise as P
from .ops import shape as S
from .ops.op import REGISTRY

_new = object.__new__
CPU_KEYSET = backend_keyset("CPU")
_NP_TO_DTYPE = {d.np: d for d in D.ALL_DTYPES}


# --- making tensors (used by backends) ----------------------------------------------------------

def from_array(arr: np.ndarray, dtype=None, device=cpu, keyset=CPU_KEYSET):
    """Wrap a dense array a kernel just produced; the tensor takes ownership of its memory.
    Its Storage is made on first need (Note [Lazy storage]), or now while a trace reports
    allocations."""
    t = _new(Tensor)
    t._storage_or_none = Storage(arr.nbytes, device, None, arr) if trace.active else None
    t._offset = 0
    t._shape = arr.shape
    # NumPy gives empty arrays zero strides; PyTorch (and meta) report row-major ones.
    t._strides = None if arr.size else contiguous_strides(arr.shape)
    t.dtype = dtype or _NP_TO_DTYPE[arr.dtype]
    t.device = device
    t._keyset = keyset
    t._vc = INFERENCE_VERSION if tls.inference_mode_used and _tls.inference_mode \
        else None  # Note [Inference tensors]
    t._array = arr
    t._ag = None
    t._base = None
    return t


def make_tensor(storage, offset, shape, strides, dtype, device, keyset, vc=None):
    """A tensor over an existing storage (views, device tensors, meta tensors)."""
    t = _new(Tensor)
    t._storage_or_none = storage
    t._offset = offset
    t._shape = tuple(shape)
    t._strides = tuple(strides)
    t.dtype = dtype
    t.device = device
    t._keyset = keyset
    t._vc = INFERENCE_VERSION if vc is None and tls.inference_mode_used \
        and _tls.inference_mode else vc
    t._array = None
    t._ag = None
    t._base = None
    return t


def make_view(base, spec):
    """The tensor a view op returns: same storage and version counter, new layout."""
    storage = base._storage_or_none   # the slot: a view's base usually has its storage
    if storage is None:
        storage = base._storage
    vc = base._vc   # ``base._version_counter()``, inlined: every view op runs this
    if vc is None:
        vc = base._vc = VersionCounter()
    v = _new(Tensor)   # ``make_tensor``, inlined (a view's spec holds tuples already)
    v._storage_or_none = storage
    v._offset = spec.offset
    v._shape = spec.shape
    v._strides = spec.strides
    v.dtype = spec.dtype or base.dtype
    v.device = base.device
    v._keyset = base._keyset
    v._vc = vc
    v._array = None
    v._ag = None
    v._base = base._base if base._base is not None else base
    return v


SPARSE_CPU_KEYSET = (CPU_KEYSET & ~functionality_bit("Dense")) | functionality_bit("Sparse")


def make_sparse(indices, values, shape):
    """A sparse COO tensor: ``indices`` (sparse_dim x nnz) and ``values`` (nnz,) of ``shape``.

    It has no strided storage; it dispatches on the SparseCPU key (see ops/sparse.py)."""
    t = make_tensor(None, 0, tuple(shape), (), values.dtype, values.device, SPARSE_CPU_KEYSET)
    t.__dict__["_sparse"] = (indices, values)
    return t


def _is_tensor(x):
    return isinstance(x, TensorImpl)


def _assign(part, value):
    """``z.real = value``: write a tensor or a number into the part's view."""
    if _is_tensor(value):
        part.copy_(value)
    else:
        part.fill_(value)


# --- legacy typed constructors: strata.FloatTensor(...), isinstance(x, strata.LongTensor) ------

class _LegacyTensorType(type):
    """``strata.FloatTensor`` and friends: constructors of one dtype, and ``isinstance`` checks
    for CPU tensors of that dtype."""

    def __instancecheck__(cls, obj):
        return isinstance(obj, Tensor) and obj.dtype is cls.dtype and obj.device.type == "cpu"

    def __call__(cls, *args, **kwargs):
        return _legacy_new(cls.dtype, args, kwargs)


def _legacy_new(dtype, args, kwargs):
    """``Tensor()``, ``Tensor(2, 3)`` (uninitialised), ``Tensor(size)``, ``Tensor(sequence)``,
    ``Tensor(ndarray)``, ``Tensor(tensor)`` (an alias when the dtype matches). ``dtype`` is None
    for the plain ``Tensor`` constructor: the default dtype, and any tensor is aliased."""
    from .creation import empty
    from .tensor_new import legacy_from_data
    device = kwargs.pop("device", None)
    if kwargs:
        raise TypeError(f"new() received an invalid combination of arguments - got "
                        f"keywords {sorted(kwargs)}; only device= is accepted")
    if device is not None and as_device(device).type != "cpu":
        raise RuntimeError(f"legacy constructor expects device type: cpu but device type: "
                           f"{as_device(device).type} was passed")
    if len(args) == 1 and not isinstance(args[0], int) and not isinstance(args[0], Size):
        return legacy_from_data(args[0], dtype)
    if len(args) == 1 and isinstance(args[0], Size):
        args = tuple(args[0])
    dtype = dtype or D.get_default_dtype()
    return empty(*args, dtype=dtype) if args else empty(0, dtype=dtype)


def _legacy_type(name, dtype):
    return _LegacyTensorType(name, (), {"dtype": dtype, "is_cuda": False, "is_sparse": False})


FloatTensor = _legacy_type("FloatTensor", D.float32)
DoubleTensor = _legacy_type("DoubleTensor", D.float64)
HalfTensor = _legacy_type("HalfTensor", D.float16)
BFloat16Tensor = _legacy_type("BFloat16Tensor", D.bfloat16)
LongTensor = _legacy_type("LongTensor", D.int64)
IntTensor = _legacy_type("IntTensor", D.int32)
ShortTensor = _legacy_type("ShortTensor", D.int16)
CharTensor = _legacy_type("CharTensor", D.int8)
ByteTensor = _legacy_type("ByteTensor", D.uint8)
BoolTensor = _legacy_type("BoolTensor", D.bool_)

_TYPE_NAMES = {D.float32: "FloatTensor", D.float64: "DoubleTensor", D.float16: "HalfTensor",
               D.bfloat16: "BFloat16Tensor", D.int64: "LongTensor", D.int32: "IntTensor",
               D.int16: "ShortTensor", D.int8: "CharTensor", D.uint8: "ByteTensor",
               D.bool_: "BoolTensor", D.complex64: "ComplexFloatTensor",
               D.complex128: "ComplexDoubleTensor"}


def _bound_dims(args):
    """``f(1, 2)`` and ``f((1, 2))`` both mean dims (1, 2)."""
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        return tuple(args[0])
    return tuple(args)


MinMax = namedtuple("MinMax", ["values", "indices"])


class DLDeviceType(IntEnum):
    """DLPack's device codes (``__dlpack_device__`` returns ``(DLDeviceType.kDLCPU, 0)``)."""

    kDLCPU = 1


# Note [NumPy operands]: PyTorch's binary operators answer NotImplemented for a NumPy array
# operand, so Python asks the array's reflected operator: NumPy computes the op (with NumPy's
# promotion) and ``Tensor.__array_wrap__`` turns the result into a tensor. ``ndarray + tensor``
# then raises TypeError, as in PyTorch: the array defers (``__array_priority__``) and so do we.
# ``==`` and ``!=`` instead compare elementwise as tensors (PyTorch does for ``==``), and
# ``array / tensor`` is ``tensor.reciprocal() * array``, as PyTorch's ``__rtruediv__`` is.
def _binary_operator(name, op, *extra, reflected=False):
    """``Tensor.__<name>__``: ``op(self, other, *extra)`` (``op(other, self, *extra)`` when
    ``reflected``), NotImplemented for a NumPy array operand; one frame per Python operator.
    It calls the kernel ``call`` would pick, past ``call`` (Note [Operator fast path])."""
    entries = op._operator_entries
    fast = not reflected and op.tensor_positions == (0, 1) and op.nargs == 2 + len(extra) \
        and not op.tensorlist_positions and op.device_position is None
    if fast and len(extra) < 2:
        operator = _fast_operator(op, entries, *extra)
    elif reflected:
        def operator(self, other):
            if isinstance(other, np.ndarray):
                return NotImplemented
            return op(other, self, *extra)
    else:
        def operator(self, other):
            if isinstance(other, np.ndarray):
                return NotImplemented
            return op(self, other, *extra)
    operator.__name__ = f"__{name}__"
    operator.__qualname__ = f"Tensor.__{name}__"
    # the tracer names the frontend entry point by its code's qualname (dispatcher._call_traced)
    operator.__code__ = operator.__code__.replace(co_qualname=operator.__qualname__)
    return operator


def _fast_operator(op, entries, *extra):
    """The operator of Note [Operator fast path], one copy per number of extra arguments (none,
    or an add's or sub's alpha): a call with ``*extra`` costs as much again as one without."""
    if not extra:
        def operator(self, other):
            keys = getattr(other, "_keyset", None)
            if keys is None:   # not a tensor
                if isinstance(other, np.ndarray):
                    return NotImplemented
                keys = 0
                plain = True
            else:
                plain = other._ag is None and (other._base is None or other._base._ag is None)
            entry = entries.get((self._keyset | keys | _tls.include) & ~_tls.exclude)
            if entry is None:
                return op(self, other)
            if plain and self._ag is None and (self._base is None or self._base._ag is None):
                return entry[0](self, other)
            return entry[1](op, entry[2], (self, other))
        return operator
    (alpha,) = extra

    def operator(self, other):
        keys = getattr(other, "_keyset", None)
        if keys is None:   # not a tensor
            if isinstance(other, np.ndarray):
                return NotImplemented
            keys = 0
            plain = True
        else:
            plain = other._ag is None and (other._base is None or other._base._ag is None)
        entry = entries.get((self._keyset | keys | _tls.include) & ~_tls.exclude)
        if entry is None:
            return op(self, other, alpha)
        if plain and self._ag is None and (self._base is None or self._base._ag is None):
            return entry[0](self, other, alpha)
        return entry[1](op, entry[2], (self, other, alpha))
    return operator


@functools.cache
def _warn_scalar_of_requires_grad():
    """``float(t)`` of a tensor that requires grad warns once per process, as PyTorch's
    (``TORCH_WARN_ONCE``; ``item()`` and ``int()`` do not warn there)."""
    warnings.warn("Converting a tensor with requires_grad=True to a scalar may lead to unexpected "
                  "behavior.\nConsider using tensor.detach() first.", UserWarning, stacklevel=3)


class Tensor(TensorImpl):
    """A multi-dimensional array on a device, with autograd. See ``strata.tensor``."""

    __slots__ = ("__weakref__", "__dict__")

    def __new__(cls, *args, **kwargs):
        return _legacy_new(None, args, kwargs)

    # --- attributes -----------------------------------------------------------------------------
    @property
    def is_leaf(self) -> bool:
        return self.grad_fn is None

    @property
    def requires_grad(self) -> bool:
        ag = self._ag
        if ag is not None and ag.requires_grad:
            return True
        return self._base is not None and _autograd.requires_grad(self)

    @requires_grad.setter
    def requires_grad(self, value):
        _autograd.set_requires_grad(self, value)

    def requires_grad_(self, requires_grad=True):
        return _autograd.set_requires_grad(self, requires_grad)

    @property
    def grad(self):
        ag = self._ag
        if ag is None:
            return None
        if ag.grad_fn is not None and not ag.retains_grad:
            import warnings
            warnings.warn(
                "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its "
                ".grad attribute won't be populated during autograd.backward(). If you indeed "
                "want the .grad field to be populated for a non-leaf Tensor, use .retain_grad() "
                "on the non-leaf Tensor. If you access the non-leaf Tensor by mistake, make sure "
                "you access the leaf Tensor instead. See github.com/pytorch/pytorch/pull/30531 "
                "for more information.", UserWarning, stacklevel=2)
        return ag.grad

    @grad.setter
    def grad(self, value):
        if value is not None:
            if not _is_tensor(value):
                raise TypeError(f"assigned grad expected to be a Tensor or None but got grad of "
                                f"type {type(value).__name__}")
            if tuple(value.shape) != self._shape:
                raise RuntimeError("assigned grad has data of a different size")
            if value.dtype is not self.dtype:
                raise RuntimeError("assigned grad has data of a different type")
        if self._ag is None:
            self._ag = AutogradMeta()
        self._ag.grad = value

    @grad.deleter
    def grad(self):
        self.grad = None

    @property
    def grad_fn(self):
        if self._base is not None:
            return _autograd.grad_fn(self)
        ag = self._ag
        return None if ag is None else ag.grad_fn

    @property
    def retains_grad(self) -> bool:
        ag = self._ag
        return ag is not None and ag.retains_grad

    @property
    def output_nr(self) -> int:
        ag = self._ag
        return 0 if ag is None else ag.output_nr

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        """Accumulate the gradient of this tensor into the ``.grad`` of the leaves."""
        _autograd.backward(self, gradient, retain_graph, create_graph, inputs)

    def register_hook(self, hook):
        return _autograd.register_hook(self, hook)

    def register_post_accumulate_grad_hook(self, hook):
        return _autograd.register_post_accumulate_grad_hook(self, hook)

    def retain_grad(self):
        _autograd.retain_grad(self)

    def detach_(self):
        return _autograd.detach_(self)

    def is_inference(self) -> bool:
        return self._vc is INFERENCE_VERSION

    @property
    def data(self):
        """This tensor's data without history, and with its own version counter: changes made
        through ``.data`` are invisible to autograd's saved-tensor checks (PyTorch's
        ``variable_data``)."""
        out = S.detach(self)
        out._vc = VersionCounter() if self._vc is not INFERENCE_VERSION else INFERENCE_VERSION
        return out

    @data.setter
    def data(self, value):
        if not _is_tensor(value):
            raise TypeError(f"data must be a Tensor, got {type(value).__name__}")
        for slot in ("_storage", "_offset", "_shape", "_strides", "dtype", "device", "_keyset",
                     "_array"):
            setattr(self, slot, getattr(value, slot))

    @property
    def layout(self):
        return "sparse_coo" if "_sparse" in self.__dict__ else "strided"

    @property
    def is_cuda(self):
        return False

    @property
    def is_meta(self):
        return self.device.type == "meta"

    @property
    def is_cpu(self):
        return self.device.type == "cpu"

    @property
    def is_sparse(self):
        return "_sparse" in self.__dict__

    # --- sparse COO parts (see ops/sparse.py) -----------------------------------------------------
    def _sparse_parts(self):
        if "_sparse" not in self.__dict__:
            raise RuntimeError("indices/values are only defined for sparse COO tensors; this "
                               "tensor has layout strided")
        return self.__dict__["_sparse"]

    def _indices(self):
        return self._sparse_parts()[0]

    def _values(self):
        return self._sparse_parts()[1]

    def indices(self):
        if not self.is_coalesced():
            raise RuntimeError("Cannot get indices on an uncoalesced tensor, please call "
                               ".coalesce() first")
        return self._indices()

    def values(self):
        if not self.is_coalesced():
            raise RuntimeError("Cannot get values on an uncoalesced tensor, please call "
                               ".coalesce() first")
        return self._values()

    def is_coalesced(self):
        self._sparse_parts()
        return self.__dict__.get("_coalesced", False)

    def _nnz(self):
        return self._sparse_parts()[1].shape[0]

    def sparse_dim(self):
        return self._sparse_parts()[0].shape[0] if self.is_sparse else 0

    def dense_dim(self):
        return self.ndim - self.sparse_dim()

    def to_sparse(self, sparse_dim=None):
        if self.is_sparse:
            return self
        return aten.to_sparse.sparse_dim(self, self.ndim if sparse_dim is None else sparse_dim)

    def to_dense(self, dtype=None, *, masked_grad=None):
        if not self.is_sparse:
            return self if dtype is None else self.to(dtype)
        return aten.to_dense.default(self, dtype)

    def coalesce(self):
        if not self.is_sparse:
            raise RuntimeError("coalesce is only defined for sparse COO tensors")
        return aten.coalesce.default(self)

    @property
    def is_quantized(self):
        return False

    @property
    def itemsize(self):
        return self.dtype.itemsize

    @property
    def nbytes(self):
        return self.numel() * self.dtype.itemsize

    @property
    def T(self):
        return S.permute(self, tuple(range(self.ndim - 1, -1, -1)))

    @property
    def mT(self):
        if self.ndim < 2:
            raise RuntimeError(f"tensor.mT is only supported on matrices or batches of matrices. "
                               f"Got {self.ndim}-D tensor.")
        return S.transpose(self, -2, -1)

    @property
    def H(self):
        return self.T

    @property
    def mH(self):
        return self.mT

    def _is_view(self):
        return self._base is not None

    def is_floating_point(self):
        return self.dtype.category == D.FLOATING

    def is_complex(self):
        return self.dtype.category == D.COMPLEX

    def is_signed(self):
        return self.dtype.is_signed

    def get_device(self):
        return -1 if self.device.type == "cpu" else (self.device.index or 0)

    def type(self, dtype=None, non_blocking=False, **kwargs):
        """``t.type()`` is ``'torch.FloatTensor'`` (the name PyTorch programs compare against);
        ``t.type(strata.float64)``, ``t.type('torch.DoubleTensor')`` convert."""
        if dtype is None:
            where = "" if self.device.type == "cpu" else f"{self.device.type}."
            return f"torch.{where}{_TYPE_NAMES[self.dtype]}"
        if isinstance(dtype, str):
            name = dtype.rsplit(".", 1)[-1]
            prefix = dtype[:-len(name)]
            target = next((d for d, n in _TYPE_NAMES.items() if n == name), None)
            if target is None or prefix not in ("", "torch.", "strata."):
                raise ValueError(f"invalid type: '{dtype}'")
            dtype = target
        elif isinstance(dtype, _LegacyTensorType):
            dtype = dtype.dtype
        return self.to(D.to_dtype(dtype, "type"), non_blocking=non_blocking)

    def __hash__(self):
        return id(self)

    def __len__(self):
        if not self._shape:
            raise TypeError("len() of a 0-d tensor")
        return self._shape[0]

    def __iter__(self):
        if not self._shape:
            raise TypeError("iteration over a 0-d tensor")
        return iter(S.unbind(self, 0))

    def __repr__(self):
        from .tensor_str import tensor_repr
        return tensor_repr(self)

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

    def __format__(self, spec):
        # A plain 0-dim tensor formats as its number (f"{loss:.3f}"); anything else as object.
        if self.ndim == 0 and self.device.type != "meta" and type(self) is Tensor:
            return self.detach().item().__format__(spec)
        return object.__format__(self, spec)

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

    # --- properties of layouts strata does not have (conj bit, nested, mkldnn, shared memory) ---
    def ndimension(self):
        return len(self._shape)

    @property
    def is_nested(self):
        return False

    @property
    def is_mkldnn(self):
        return False

    @property
    def real(self):
        return CX.real(self)

    @real.setter
    def real(self, value):
        _assign(CX.real(self), value)

    @property
    def imag(self):
        return CX.imag(self)

    @imag.setter
    def imag(self, value):
        _assign(CX.imag(self), value)

    def resolve_conj(self):
        return self

    def resolve_neg(self):
        return self

    def is_conj(self):
        return False

    def is_neg(self):
        return False

    # --- Python operators -----------------------------------------------------------------------
    # Binary operators are made by ``_binary_operator`` (above the class): one frame that
    # answers NotImplemented for a NumPy array (Note [NumPy operands]) and calls the op.
    __add__ = _binary_operator("add", P.add, 1)
    __radd__ = _binary_operator("radd", P.add, 1)
    __iadd__ = _binary_operator("iadd", P.add_, 1)
    __sub__ = _binary_operator("sub", P.sub, 1)
    __rsub__ = _binary_operator("rsub", P.sub, 1, reflected=True)
    __isub__ = _binary_operator("isub", P.sub_, 1)
    __mul__ = _binary_operator("mul", P.mul)
    __rmul__ = _binary_operator("rmul", P.mul)
    __imul__ = _binary_operator("imul", P.mul_)
    __truediv__ = _binary_operator("truediv", P.div)
    __itruediv__ = _binary_operator("itruediv", P.div_)
    __floordiv__ = _binary_operator("floordiv", P.div_mode, "floor")
    __rfloordiv__ = _binary_operator("rfloordiv", P.div_mode, "floor", reflected=True)
    __ifloordiv__ = _binary_operator("ifloordiv", P.div_mode_, "floor")
    __mod__ = _binary_operator("mod", P.remainder)
    __rmod__ = _binary_operator("rmod", P.remainder, reflected=True)
    __imod__ = _binary_operator("imod", P.remainder_)
    __pow__ = _binary_operator("pow", P.pow)
    __rpow__ = _binary_operator("rpow", P.pow, reflected=True)
    __ipow__ = _binary_operator("ipow", P.pow_)
    __matmul__ = _binary_operator("matmul", aten.matmul.default)
    __rmatmul__ = _binary_operator("rmatmul", aten.matmul.default, reflected=True)
    __and__ = _binary_operator("and", P.bitwise_and)
    __rand__ = _binary_operator("rand", P.bitwise_and)
    __iand__ = _binary_operator("iand", P.bitwise_and_)
    __or__ = _binary_operator("or", P.bitwise_or)
    __ror__ = _binary_operator("ror", P.bitwise_or)
    __ior__ = _binary_operator("ior", P.bitwise_or_)
    __xor__ = _binary_operator("xor", P.bitwise_xor)
    __rxor__ = _binary_operator("rxor", P.bitwise_xor)
    __ixor__ = _binary_operator("ixor", P.bitwise_xor_)
    __lshift__ = _binary_operator("lshift", P.bitwise_left_shift)
    __rshift__ = _binary_operator("rshift", P.bitwise_right_shift)
    __lt__ = _binary_operator("lt", P.lt)
    __le__ = _binary_operator("le", P.le)
    __gt__ = _binary_operator("gt", P.gt)
    __ge__ = _binary_operator("ge", P.ge)

    def __rtruediv__(self, other):
        if isinstance(other, np.ndarray):   # PyTorch's __rtruediv__: reciprocal() * other
            return P.reciprocal(self) * other
        return P.div(other, self)

    def __neg__(self):
        return P.neg(self)

    def __pos__(self):
        return self

    def __abs__(self):
        return P.abs(self)

    def __invert__(self):
        if self.dtype.category == D.FLOATING:
            raise TypeError("~ (operator.invert) is only implemented on integer and Boolean-type "
                            "tensors")
        if self.dtype is D.bool_:
            return P.logical_not(self)
        return P.bitwise_not(self)

    def __eq__(self, other):
        if other is None:
            return False
        return P.eq(self, other)

    def __ne__(self, other):
        if other is None:
            return True
        return P.ne(self, other)

    # --- methods whose Python signature differs from the schema --------------------------------
    def view(self, *shape):
        if len(shape) == 1 and isinstance(shape[0], D.dtype):
            return F.view_dtype(self, shape[0])
        return S.view(self, _bound_dims(shape))

    def view_as(self, other):
        return S.view(self, other.shape)

    def reshape(self, *shape):
        return S.reshape(self, _bound_dims(shape))

    def reshape_as(self, other):
        return S.reshape(self, other.shape)

    def permute(self, *dims):
        return S.permute(self, _bound_dims(dims))

    def expand(self, *sizes):
        return S.expand(self, _bound_dims(sizes))

    def expand_as(self, other):
        return S.expand(self, other.shape)

    def repeat(self, *sizes):
        return S.repeat(self, _bound_dims(sizes))

    def flip(self, *dims):
        return S.flip(self, _bound_dims(dims))

    def tile(self, *dims):
        return S.tile(self, _bound_dims(dims))

    def split(self, split_size, dim=0):
        if isinstance(split_size, int):
            return S.split(self, split_size, dim)
        return S.split_with_sizes(self, list(split_size), dim)

    def movedim(self, source, destination):
        return S.movedim(self, source, destination)

    moveaxis = movedim

    def swapaxes(self, axis0, axis1):
        return S.transpose(self, axis0, axis1)

    swapdims = swapaxes

    def repeat_interleave(self, repeats, dim=None, *, output_size=None):
        if _is_tensor(repeats):
            return S.repeat_interleave_tensor(self, repeats, dim, output_size=output_size)
        return S.repeat_interleave(self, repeats, dim, output_size=output_size)

    # --- new tensors with self's dtype and device (the frontend lives in creation.py) -----------
    def new_empty(self, *size, dtype=None, device=None, requires_grad=False, layout=None,
                  pin_memory=False, **kwargs):
        from .creation import new_factory
        return new_factory(self, "new_empty", size, kwargs, None, dtype, device, requires_grad)

    def new_zeros(self, *size, dtype=None, device=None, requires_grad=False, layout=None,
                  pin_memory=False, **kwargs):
        from .creation import new_factory
        return new_factory(self, "new_zeros", size, kwargs, 0, dtype, device, requires_grad)

    def new_ones(self, *size, dtype=None, device=None, requires_grad=False, layout=None,
                 pin_memory=False, **kwargs):
        from .creation import new_factory
        return new_factory(self, "new_ones", size, kwargs, 1, dtype, device, requires_grad)

    def new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad=False,
                 layout=None, pin_memory=False):
        from .creation import new_full
        return new_full(self, size, fill_value, dtype, device, requires_grad)

    def new_empty_strided(self, size, stride, *, dtype=None, device=None, requires_grad=False,
                          layout=None, pin_memory=False):
        from .creation import new_empty_strided
        return new_empty_strided(self, size, stride, dtype, device, requires_grad)

    def new_tensor(self, data, *, dtype=None, device=None, requires_grad=False, layout=None,
                   pin_memory=False):
        from .creation import new_tensor
        return new_tensor(self, data, dtype, device, requires_grad)

    def new(self, *args, **kwargs):
        """The legacy ``x.new(2, 3)`` / ``x.new(data)``: like ``type(x)(...)`` with x's dtype."""
        if kwargs.get("device") is None:
            kwargs["device"] = self.device
        return _legacy_new(self.dtype, args, kwargs)

    def fill_(self, value):
        if _is_tensor(value):
            if value.ndim != 0:
                raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor "
                                   f"with {value.ndim} dimensions.")
            if value.requires_grad:   # fill_.Tensor: the gradient reaches the value (summed)
                return F.fill_tensor_(self, value)
            value = value.item()
        return F.fill_(self, value)

    def uniform_(self, a=0.0, b=1.0, *, generator=None):
        return F.uniform_(self, a, b, generator=generator)

    def size(self, dim=None):
        return TensorImpl.size(self, dim)

    def dim_order(self):
        strides = self.stride()
        return tuple(sorted(range(self.ndim), key=lambda d: -strides[d]))

    def clamp(self, min=None, max=None):
        return P.clamp(self, min, max)

    clip = clamp

    def clamp_(self, min=None, max=None):
        return P.clamp_(self, min, max)

    clip_ = clamp_

    def div(self, other, *, rounding_mode=None):
        if rounding_mode is None:
            return P.div(self, other)
        return P.div_mode(self, other, rounding_mode)

    divide = div

    def div_(self, other, *, rounding_mode=None):
        if rounding_mode is None:
            return P.div_(self, other)
        return P.div_mode_(self, other, rounding_mode)

    def pow(self, exponent):
        return P.pow(self, exponent)

    def where(self, condition, other):
        return P.where(condition, self, other)

    __array_priority__ = 1000  # NumPy defers `ndarray + tensor` to Tensor.__radd__


# ``==`` and ``!=`` with a NumPy array compare elementwise as tensors (Note [NumPy operands]).
def _numpy_operand_compared(operator):
    @functools.wraps(operator)
    def comparing(self, other):
        if isinstance(other, np.ndarray):
            from .tensor_new import tensor
            other = tensor(other)
        return operator(self, other)
    return comparing


for _dunder in ("__eq__", "__ne__"):
    setattr(Tensor, _dunder, _numpy_operand_compared(Tensor.__dict__[_dunder]))


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
    """``(device, dtype, non_blocking, copy)`` of a ``to(...)`` call (``nn.Module.to`` too)."""
    return _to_arguments(args, kwargs)[:4]


# --- generated methods: one per op declared with method= ----------------------------------------

def _make_method(op):
    def method(self, *args, **kwargs):
        try:
            return op(self, *args, **kwargs)
        except (TypeError, AttributeError):   # an array where a Tensor goes: PyTorch's words
            error = argument_type_error(op, (self, *args), kwargs, first_position=0)
            if error is None:
                raise
            raise error from None
    method.__name__ = op.method
    method.__qualname__ = f"Tensor.{op.method}"
    # The tracer names the frontend entry point by its code's qualname (dispatcher._call_traced).
    method.__code__ = method.__code__.replace(co_qualname=method.__qualname__)
    method.__doc__ = f"Calls ``{op.qualname}``: ``{op.schema}``"
    return method


_autograd = None   # strata.autograd.tensor_methods, installed by install_autograd


def install_autograd(impl):
    """The autograd layer sits below this one and installs what the autograd methods above
    (``backward``, ``register_hook``, ``requires_grad_``, ...) call."""
    global _autograd
    _autograd = impl


_pin_memory = {}   # device type -> pin function, installed by the backends with pinned memory
_default_pin = [None]   # the device type whose pin_memory() runs when none is named


def install_pin_memory(fn, device_type="sim", default=True):
    """An accelerator backend provides ``Tensor.pin_memory()``: sim's is the default, another
    is picked by its device, ``pin_memory("opencl")``."""
    _pin_memory[device_type] = fn
    if default:
        _default_pin[0] = device_type


def install_indexing(getitem, setitem):
    """``x[i]`` and ``x[i] = v`` live in ``frontend/indexing.py`` (the translation of Python
    index expressions into select/slice/index ops); it installs them as ``Tensor.__getitem__``
    and ``Tensor.__setitem__`` themselves, so indexing costs no forwarding frame."""
    Tensor.__getitem__ = getitem
    Tensor.__setitem__ = setitem


def bind_methods():
    """Attach the family frontends' methods, then a method for every op that declared
    ``method=`` and has no hand-written one."""
    from .frontend import methods
    for name, fn in methods().items():
        if name in Tensor.__dict__:
            raise RuntimeError(f"Tensor.{name} is defined twice (in _tensor.py and frontend/)")
        setattr(Tensor, name, fn)
    for op in REGISTRY.values():
        name = op.method
        if name and name not in Tensor.__dict__ and name not in TensorImpl.__dict__:
            setattr(Tensor, name, _make_method(op))
