"""The ``Tensor`` class: thin methods that call operators through the dispatcher.

A ``Tensor`` *is* its ``TensorImpl`` (one Python object per tensor keeps the eager hot path
short). Methods either are generated from an op's ``method=`` declaration (see the bottom of this
file) or are written here when PyTorch's Python signature is irregular (``view(*shape)``,
``max(dim)`` returning a named tuple, ``to(...)`` overloads, Python operators).
"""

from collections import namedtuple

import numpy as np

from .core import dtype as D
from .core.device import as_device, cpu
from .core.shape import Size, normalize_size
from .core.storage import Storage
from .core.tensor_impl import INFERENCE_VERSION, AutogradMeta, TensorImpl, VersionCounter
from .dispatch.keys import backend_keyset, functionality_bit
from .dispatch.tls import _state as _tls
from .ops import aten
from .ops import factory as F
from .ops import pointwise as P
from .ops import shape as S
from .ops.op import REGISTRY

_new = object.__new__
CPU_KEYSET = backend_keyset("CPU")
_NP_TO_DTYPE = {d.np: d for d in D.ALL_DTYPES}


# --- making tensors (used by backends) ----------------------------------------------------------

def from_array(arr: np.ndarray, dtype=None, device=cpu, keyset=CPU_KEYSET):
    """Wrap a dense array a kernel just produced; the tensor takes ownership of its memory."""
    t = _new(Tensor)
    t._storage = Storage(arr.nbytes, device, None, arr)
    t._offset = 0
    t._shape = arr.shape
    t._strides = None
    t.dtype = dtype or _NP_TO_DTYPE[arr.dtype]
    t.device = device
    t._keyset = keyset
    t._vc = INFERENCE_VERSION if _tls.inference_mode else None  # Note [Inference tensors]
    t._array = arr
    t._ag = None
    t._base = None
    return t


def make_tensor(storage, offset, shape, strides, dtype, device, keyset, vc=None):
    """A tensor over an existing storage (views, device tensors, meta tensors)."""
    t = _new(Tensor)
    t._storage = storage
    t._offset = offset
    t._shape = tuple(shape)
    t._strides = tuple(strides)
    t.dtype = dtype
    t.device = device
    t._keyset = keyset
    t._vc = INFERENCE_VERSION if vc is None and _tls.inference_mode else vc
    t._array = None
    t._ag = None
    t._base = None
    return t


def make_view(base, spec):
    """The tensor a view op returns: same storage and version counter, new layout."""
    v = make_tensor(base._storage, spec.offset, spec.shape, spec.strides,
                    spec.dtype or base.dtype, base.device, base._keyset,
                    base._version_counter())
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


# --- legacy typed constructors: strata.FloatTensor(...), isinstance(x, strata.LongTensor) ------

class _LegacyTensorType(type):
    def __instancecheck__(cls, obj):
        return isinstance(obj, Tensor) and obj.dtype is cls._dtype and obj.device.type == "cpu"

    def __call__(cls, *args):
        return _legacy_new(cls._dtype, args)


def _legacy_new(dtype, args):
    """``Tensor()``, ``Tensor(2, 3)`` (uninitialised), ``Tensor(size)``, ``Tensor(data)``."""
    from .creation import tensor as from_data
    if not args:
        return F.empty((0,), dtype=dtype)
    if len(args) == 1 and not isinstance(args[0], int):
        data = args[0]
        if isinstance(data, Size):
            return F.empty(tuple(data), dtype=dtype)
        if _is_tensor(data):
            return data.to(dtype)
        return from_data(data, dtype=dtype)
    return F.empty(normalize_size(args), dtype=dtype)


def _legacy_type(name, dtype):
    return _LegacyTensorType(name, (), {"_dtype": dtype})


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
               D.bool_: "BoolTensor"}


def _bound_dims(args):
    """``f(1, 2)`` and ``f((1, 2))`` both mean dims (1, 2)."""
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        return tuple(args[0])
    return tuple(args)


MinMax = namedtuple("MinMax", ["values", "indices"])


class Tensor(TensorImpl):
    """A multi-dimensional array on a device, with autograd. See ``strata.tensor``."""

    __slots__ = ("__weakref__", "__dict__")

    def __new__(cls, *args, **kwargs):
        if kwargs.get("device") not in (None, "cpu"):
            raise RuntimeError("legacy constructor expects device type: cpu")
        return _legacy_new(D.get_default_dtype(), args)

    # --- attributes -----------------------------------------------------------------------------
    @property
    def is_leaf(self) -> bool:
        ag = self._ag
        return ag is None or ag.grad_fn is None

    @property
    def requires_grad(self) -> bool:
        ag = self._ag
        return ag is not None and ag.requires_grad

    @requires_grad.setter
    def requires_grad(self, value):
        self.requires_grad_(value)

    def requires_grad_(self, requires_grad=True):
        if not self.is_leaf:
            if not requires_grad:
                raise RuntimeError("you can only change requires_grad flags of leaf variables. If "
                                   "you want to use a computed variable in a subgraph that doesn't "
                                   "require differentiation use var_no_grad = var.detach().")
            return self
        if requires_grad and self.dtype.category != D.FLOATING:
            raise RuntimeError("only Tensors of floating point and complex dtype can require "
                               "gradients")
        if self._ag is None:
            if not requires_grad:
                return self
            self._ag = AutogradMeta()
        self._ag.requires_grad = bool(requires_grad)
        return self

    @property
    def grad(self):
        ag = self._ag
        return None if ag is None else ag.grad

    @grad.setter
    def grad(self, value):
        if value is not None:
            if not _is_tensor(value):
                raise TypeError(f"assigned grad expected to be a Tensor or None but got grad of "
                                f"type {type(value).__name__}")
            if tuple(value.shape) != self._shape:
                raise RuntimeError(f"assigned grad has data of a different size")
            if value.dtype is not self.dtype:
                raise RuntimeError("assigned grad has data of a different type")
        if self._ag is None:
            self._ag = AutogradMeta()
        self._ag.grad = value

    @property
    def grad_fn(self):
        ag = self._ag
        return None if ag is None else ag.grad_fn

    @property
    def data(self):
        return S.detach(self)

    @data.setter
    def data(self, value):
        if not _is_tensor(value):
            raise TypeError(f"data must be a Tensor, got {type(value).__name__}")
        for slot in ("_storage", "_offset", "_shape", "_strides", "dtype", "device", "_keyset",
                     "_array"):
            setattr(self, slot, getattr(value, slot))
        self._vc = value._version_counter()

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
        return False

    def is_signed(self):
        return self.dtype.is_signed

    def get_device(self):
        return -1 if self.device.type == "cpu" else (self.device.index or 0)

    def type(self, dtype=None, non_blocking=False):
        if dtype is None:
            return f"torch.{_TYPE_NAMES[self.dtype]}"
        if isinstance(dtype, str):
            name = dtype.rsplit(".", 1)[-1]
            dtype = next(d for d, n in _TYPE_NAMES.items() if n == name)
        elif isinstance(dtype, _LegacyTensorType):
            dtype = dtype._dtype
        return self.to(dtype)

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
    def numpy(self, *, force=False):
        if self.requires_grad and not force:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use "
                               "tensor.detach().numpy() instead.")
        if self.device.type != "cpu":
            if force:
                return self.cpu()._np()
            raise TypeError(f"can't convert {self.device.type} device type tensor to numpy. Use "
                            f"Tensor.cpu() to copy the tensor to host memory first.")
        return self._np()

    def __array__(self, dtype=None, copy=None):
        arr = self.detach().cpu()._np()
        if dtype is not None and np.dtype(dtype) != arr.dtype:
            return arr.astype(dtype)
        return arr.copy() if copy else arr

    def __dlpack__(self, stream=None, **kwargs):
        return self.detach().numpy().__dlpack__(**kwargs)

    def __dlpack_device__(self):
        if self.device.type != "cpu":
            raise BufferError(f"DLPack export is supported for cpu tensors only, got {self.device}")
        return (1, 0)

    def item(self):
        n = self.numel()
        if n != 1:
            raise RuntimeError(f"a Tensor with {n} elements cannot be converted to Scalar")
        return self.detach().cpu()._np().reshape(()).item() if self.dtype is not D.bfloat16 \
            else float(self.detach().cpu()._np().reshape(()))

    def tolist(self):
        arr = self.detach().cpu()._np()
        if self.dtype in (D.bfloat16, D.float16):
            arr = arr.astype(np.float32)
        return arr.tolist()

    def __float__(self):
        return float(self.item())

    def __int__(self):
        return int(self.item())

    def __bool__(self):
        if self.numel() != 1:
            raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
        return bool(self.item())

    def __index__(self):
        if self.dtype.category != D.INTEGRAL and self.dtype is not D.bool_ or self.numel() != 1:
            raise TypeError("only integer tensors of a single element can be converted to an "
                            "index")
        return int(self.item())

    def __complex__(self):
        return complex(self.item())

    def __format__(self, spec):
        if self.ndim == 0:
            return self.item().__format__(spec)
        return object.__format__(self, spec) if not spec else format(repr(self), spec)

    # --- device and dtype movement --------------------------------------------------------------
    def to(self, *args, **kwargs):
        """``to(dtype)``, ``to(device, dtype=None)``, ``to(other)``; returns self if unchanged."""
        device, dtype, non_blocking, copy = _parse_to(args, kwargs)
        device = self.device if device is None else as_device(device)
        dtype = self.dtype if dtype is None else dtype
        if device == self.device and dtype is self.dtype and not copy:
            return self
        return F._to_copy(self, dtype=dtype, device=device, non_blocking=non_blocking)

    def cpu(self, memory_format=None):
        return self if self.device.type == "cpu" else self.to("cpu")

    def cuda(self, device=None, non_blocking=False):
        raise RuntimeError("Torch not compiled with CUDA enabled (strata has no CUDA device; use "
                           "'cpu', 'meta' or an accelerator strata provides)")

    def float(self):
        return self.to(D.float32)

    def double(self):
        return self.to(D.float64)

    def half(self):
        return self.to(D.float16)

    def bfloat16(self):
        return self.to(D.bfloat16)

    def long(self):
        return self.to(D.int64)

    def int(self):
        return self.to(D.int32)

    def short(self):
        return self.to(D.int16)

    def char(self):
        return self.to(D.int8)

    def byte(self):
        return self.to(D.uint8)

    def bool(self):
        return self.to(D.bool_)

    def type_as(self, other):
        return self.to(other.dtype)

    def pin_memory(self):
        return self

    def is_pinned(self):
        return False

    # --- Python operators -----------------------------------------------------------------------
    def __add__(self, other):
        return P.add(self, other, 1)

    def __radd__(self, other):
        return P.add(self, other, 1)

    def __iadd__(self, other):
        return P.add_(self, other, 1)

    def __sub__(self, other):
        return P.sub(self, other, 1)

    def __rsub__(self, other):
        return P.sub(other, self, 1)

    def __isub__(self, other):
        return P.sub_(self, other, 1)

    def __mul__(self, other):
        return P.mul(self, other)

    def __rmul__(self, other):
        return P.mul(self, other)

    def __imul__(self, other):
        return P.mul_(self, other)

    def __truediv__(self, other):
        return P.div(self, other)

    def __rtruediv__(self, other):
        return P.div(other, self)

    def __itruediv__(self, other):
        return P.div_(self, other)

    def __floordiv__(self, other):
        return P.div_mode(self, other, "floor")

    def __rfloordiv__(self, other):
        return P.div_mode(other, self, "floor")

    def __ifloordiv__(self, other):
        return P.div_mode_(self, other, "floor")

    def __mod__(self, other):
        return P.remainder(self, other)

    def __rmod__(self, other):
        return P.remainder(other, self)

    def __imod__(self, other):
        return P.remainder_(self, other)

    def __pow__(self, other):
        return P.pow(self, other)

    def __rpow__(self, other):
        return P.pow(other, self)

    def __ipow__(self, other):
        return P.pow_(self, other)

    def __matmul__(self, other):
        return aten.matmul.default(self, other)

    def __rmatmul__(self, other):
        return aten.matmul.default(other, self)

    def __neg__(self):
        return P.neg(self)

    def __pos__(self):
        return self

    def __abs__(self):
        return P.abs(self)

    def __invert__(self):
        if self.dtype is D.bool_:
            return P.logical_not(self)
        return P.bitwise_not(self)

    def __and__(self, other):
        return P.bitwise_and(self, other)

    __rand__ = __and__

    def __iand__(self, other):
        return P.bitwise_and_(self, other)

    def __or__(self, other):
        return P.bitwise_or(self, other)

    __ror__ = __or__

    def __ior__(self, other):
        return P.bitwise_or_(self, other)

    def __xor__(self, other):
        return P.bitwise_xor(self, other)

    __rxor__ = __xor__

    def __ixor__(self, other):
        return P.bitwise_xor_(self, other)

    def __lshift__(self, other):
        return P.bitwise_left_shift(self, other)

    def __rshift__(self, other):
        return P.bitwise_right_shift(self, other)

    def __eq__(self, other):
        if other is None:
            return False
        return P.eq(self, other)

    def __ne__(self, other):
        if other is None:
            return True
        return P.ne(self, other)

    def __lt__(self, other):
        return P.lt(self, other)

    def __le__(self, other):
        return P.le(self, other)

    def __gt__(self, other):
        return P.gt(self, other)

    def __ge__(self, other):
        return P.ge(self, other)

    def __getitem__(self, index):
        return _getitem(self, index)

    def __setitem__(self, index, value):
        _setitem(self, index, value)

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
        return S.repeat_interleave(self, repeats, dim)

    def new_empty(self, *size, dtype=None, device=None, requires_grad=False):
        return self._new(F.empty, size, dtype, device, requires_grad)

    def new_zeros(self, *size, dtype=None, device=None, requires_grad=False):
        return self._new(lambda s, **kw: F.full(s, 0, **kw), size, dtype, device, requires_grad)

    def new_ones(self, *size, dtype=None, device=None, requires_grad=False):
        return self._new(lambda s, **kw: F.full(s, 1, **kw), size, dtype, device, requires_grad)

    def new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad=False):
        return self._new(lambda s, **kw: F.full(s, fill_value, **kw), (size,), dtype, device,
                         requires_grad)

    def new_tensor(self, data, *, dtype=None, device=None, requires_grad=False):
        from .creation import tensor
        return tensor(data, dtype=dtype or self.dtype, device=device or self.device,
                      requires_grad=requires_grad)

    def _new(self, factory, size, dtype, device, requires_grad):
        out = factory(normalize_size(size), dtype=dtype or self.dtype,
                      device=device or self.device)
        return out.requires_grad_() if requires_grad else out

    def fill_(self, value):
        if _is_tensor(value):
            if value.ndim != 0:
                raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor "
                                   f"with {value.ndim} dimensions.")
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


def _parse_to(args, kwargs):
    device = kwargs.pop("device", None)
    dtype = kwargs.pop("dtype", None)
    non_blocking = kwargs.pop("non_blocking", False)
    copy = kwargs.pop("copy", False)
    kwargs.pop("memory_format", None)
    if kwargs:
        raise TypeError(f"to() got an unexpected keyword argument '{next(iter(kwargs))}'")
    for a in args:
        if isinstance(a, D.dtype):
            dtype = a
        elif _is_tensor(a):
            device, dtype = a.device, a.dtype
        elif isinstance(a, bool):
            non_blocking = a
        elif a is not None:
            device = a
    return device, dtype, non_blocking, copy


# --- generated methods: one per op declared with method= ----------------------------------------

def _make_method(op):
    def method(self, *args, **kwargs):
        return op(self, *args, **kwargs)
    method.__name__ = op.method
    method.__qualname__ = f"Tensor.{op.method}"
    method.__doc__ = f"Calls ``{op.qualname}``: ``{op.schema}``"
    return method


def _getitem(self, index):  # replaced by frontend/indexing.py's translation at import
    raise RuntimeError("strata.frontend.indexing is not loaded")


_setitem = _getitem


def install_indexing(getitem, setitem):
    """``x[i]`` and ``x[i] = v`` live in ``frontend/indexing.py`` (the translation of Python
    index expressions into select/slice/index ops); it installs itself here."""
    global _getitem, _setitem
    _getitem, _setitem = getitem, setitem


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
