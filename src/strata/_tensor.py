"""The ``Tensor`` class: its construction, state and core protocol.

A ``Tensor`` *is* its ``TensorImpl`` (one Python object per tensor keeps the eager hot path
short). Methods either are generated from an op's ``method=`` declaration (see the bottom of this
file) or are written by hand when PyTorch's Python signature is irregular. The hand-written ones
live by concern in mixins that ``Tensor`` inherits (Note [Tensor mixins]): Python operators in
``tensor_operators.py``, conversions and device/dtype movement in ``tensor_conversion.py``,
methods with irregular signatures in ``tensor_methods.py``; this file keeps construction,
autograd attributes, sparse parts, layout properties and the Python protocol.
"""

import numpy as np

from .core import dtype as D
from .core import trace
from .core.device import as_device, cpu
from .core.formats import sparse_coo, strided
from .core.shape import Size, contiguous_strides
from .core.storage import Storage
from .core.tensor_impl import (
    INFERENCE_VERSION,
    AutogradMeta,
    TensorImpl,
    VersionCounter,
    _is_tensor,
)
from .dispatch import tls
from .dispatch.keys import backend_keyset, functionality_bit
from .dispatch.tls import _state as _tls
from .functions import argument_type_error, optional_tensor_list_check
from .ops import aten
from .ops import complex as CX
from .ops import shape as S
from .ops import split_join as SJ
from .ops.op import REGISTRY
from .tensor_conversion import TensorConversion
from .tensor_methods import TensorMethods
from .tensor_operators import TensorOperators

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


class Tensor(TensorOperators, TensorConversion, TensorMethods, TensorImpl):
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
        return sparse_coo if "_sparse" in self.__dict__ else strided

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
        return iter(SJ.unbind(self, 0))

    def __repr__(self):
        from .tensor_str import tensor_repr
        return tensor_repr(self)

    def __format__(self, spec):
        # A plain 0-dim tensor formats as its number (f"{loss:.3f}"); anything else as object.
        if self.ndim == 0 and self.device.type != "meta" and type(self) is Tensor:
            return self.detach().item().__format__(spec)
        return object.__format__(self, spec)

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

    def new(self, *args, **kwargs):
        """The legacy ``x.new(2, 3)`` / ``x.new(data)``: like ``type(x)(...)`` with x's dtype."""
        if kwargs.get("device") is None:
            kwargs["device"] = self.device
        return _legacy_new(self.dtype, args, kwargs)


# Note [Tensor mixins]: ``Tensor``'s hand-written methods live by concern in mixin classes with
# no state (``__slots__ = ()``). A method found on the type costs the same through one more base
# (CPython caches type look-ups). The mixins' methods are Tensor's: the tracer names a call's
# frontend entry point by its code's qualname (``dispatcher._call_traced``), so they are renamed
# ``Tensor.<name>`` here, and ``bind_methods`` looks for hand-written methods in them too.
def _adopt_methods(mixin):
    prefix = f"{mixin.__name__}."
    for member in vars(mixin).values():
        parts = (member.fget, member.fset) if isinstance(member, property) else (member,)
        for fn in parts:
            while hasattr(fn, "__code__"):   # through functools.wraps wrappers too
                if fn.__qualname__.startswith(prefix):
                    fn.__qualname__ = "Tensor." + fn.__qualname__.removeprefix(prefix)
                code = fn.__code__
                if code.co_qualname.startswith(prefix):
                    fn.__code__ = code.replace(
                        co_qualname="Tensor." + code.co_qualname.removeprefix(prefix))
                fn = getattr(fn, "__wrapped__", None)


_MIXINS = (TensorOperators, TensorConversion, TensorMethods)
for _mixin in _MIXINS:
    _adopt_methods(_mixin)


def _hand_written(name):
    return any(name in cls.__dict__ for cls in (Tensor, *_MIXINS))


# --- generated methods: one per op declared with method= ----------------------------------------

def _make_method(op):
    check = optional_tensor_list_check(op, first_position=1)

    def method(self, *args, **kwargs):
        if check is not None:
            check((self, *args), kwargs)
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
        if _hand_written(name):
            raise RuntimeError(f"Tensor.{name} is defined twice (in a Tensor class and frontend/)")
        setattr(Tensor, name, fn)
    for op in REGISTRY.values():
        name = op.method
        if name and not _hand_written(name) and name not in TensorImpl.__dict__:
            setattr(Tensor, name, _make_method(op))
