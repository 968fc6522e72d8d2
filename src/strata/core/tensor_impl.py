"""``TensorImpl``: the metadata that makes bytes a tensor.

Fields as PyTorch's ``c10/core/TensorImpl.h``: a storage, an element offset into it, sizes and
strides in elements, a dtype, a device, the dispatch key set, and a version counter shared with
every view of the same data (bumped by each in-place op, checked by autograd).
The Python ``Tensor`` class (``strata/_tensor.py``) subclasses this and adds the methods.
"""

import numpy as np

from .shape import Size, contiguous_strides
from .storage import Storage


class VersionCounter:
    """How many in-place writes the data has seen; views share one counter with their base."""

    __slots__ = ("value",)

    def __init__(self):
        self.value = 0


class InferenceVersionCounter(VersionCounter):
    """The counter of every inference tensor: inference tensors track no version, so reading one
    raises (``c10::VariableVersion`` disabled). One shared instance marks them."""

    __slots__ = ()

    def __init__(self):
        pass

    @property
    def value(self):
        raise RuntimeError("Inference tensors do not track version counter.")


INFERENCE_VERSION = InferenceVersionCounter()


class TensorImpl:
    __slots__ = (
        "_storage_or_none", "_offset", "_shape", "_strides", "dtype", "device", "_keyset",
        "_vc", "_array", "_ag", "_base",
    )

    # Note [Lazy storage]: a kernel's result owns a fresh array and is usually consumed by the
    # next op and dropped without anyone asking for its Storage (a view, ``untyped_storage()``,
    # ``data_ptr()``, an overlap check do). ``from_array`` leaves the slot empty and the first
    # read makes the Storage over that array: one object less per result, for the allocator and
    # for the garbage collector. An empty slot with no array is a tensor without storage (sparse).
    @property
    def _storage(self):
        storage = self._storage_or_none
        if storage is None:
            arr = self._array
            if arr is not None:
                storage = self._storage_or_none = Storage(arr.nbytes, self.device, None, arr)
        return storage

    @_storage.setter
    def _storage(self, storage):
        self._storage_or_none = storage

    # --- layout ---------------------------------------------------------------------------------
    @property
    def shape(self) -> Size:
        return Size(self._shape)

    @property
    def ndim(self) -> int:
        return len(self._shape)

    def dim(self) -> int:
        return len(self._shape)

    def size(self, dim=None):
        if dim is None:
            return Size(self._shape)
        from .shape import wrap_dim
        return self._shape[wrap_dim(dim, len(self._shape))]

    def stride(self, dim=None):
        strides = self._get_strides()
        if dim is None:
            return strides
        from .shape import wrap_dim
        return strides[wrap_dim(dim, len(self._shape))]

    def _get_strides(self) -> tuple:
        strides = self._strides
        if strides == () and self._storage is None and self._shape:
            raise RuntimeError("Tensors of type SparseTensorImpl do not have strides")
        if strides is None:  # a CPU result: read the strides off the NumPy array once
            per_element = self.dtype.itemsize.__rfloordiv__   # byte stride // itemsize
            strides = self._strides = tuple(map(per_element, self._array.strides))
        return strides

    def storage_offset(self) -> int:
        return self._offset

    def numel(self) -> int:
        n = 1
        for s in self._shape:
            n *= s
        return n

    nelement = numel

    def element_size(self) -> int:
        return self.dtype.itemsize

    def is_contiguous(self, memory_format=None) -> bool:
        """Row-major (or, with ``memory_format=channels_last``, NHWC) strides, ignoring size-1
        dims; an empty tensor is contiguous (``c10/core/Contiguity.h``)."""
        shape, strides = self._shape, self._get_strides()
        if memory_format in ("channels_last", "channels_last_3d"):
            order = {4: (1, 3, 2, 0), 5: (1, 4, 3, 2, 0)}.get(len(shape))
            if order is None or (len(shape) == 5) != (memory_format == "channels_last_3d"):
                return False
            dims = order
        else:
            if 0 in shape:
                return True
            dims = range(len(shape) - 1, -1, -1)
        expected = 1
        for d in dims:
            if shape[d] != 1:
                if strides[d] != expected:
                    return False
                expected *= shape[d]
        return True

    def untyped_storage(self):
        return self._storage

    def data_ptr(self) -> int:
        return self._storage.data_ptr() + self._offset * self.dtype.itemsize

    @property
    def _version(self) -> int:
        vc = self._vc
        return 0 if vc is None else vc.value

    def _version_counter(self) -> VersionCounter:
        """The shared counter, created on first need (most tensors are never written in place)."""
        vc = self._vc
        if vc is None:
            vc = self._vc = VersionCounter()
        return vc

    # --- data (CPU) ------------------------------------------------------------------------------
    def _np(self) -> np.ndarray:
        """A NumPy view of this tensor's elements (CPU only), built once per TensorImpl."""
        arr = self._array
        if arr is None:
            data = self._storage_or_none.data   # a tensor without an array has its storage
            if data is None:
                raise RuntimeError(
                    f"Cannot access data of a tensor on device '{self.device}'"
                    + (": meta tensors have no data" if self.device.type == "meta" else ""))
            itemsize = self.dtype.itemsize
            if 0 in self._shape:   # no elements: its offset may point past the storage's end
                arr = np.empty(self._shape, self.dtype.np)
            else:
                arr = np.ndarray(self._shape, self.dtype.np, buffer=data,
                                 offset=self._offset * itemsize,
                                 strides=tuple(map(itemsize.__mul__, self._get_strides())))
            self._array = arr
        return arr


def init_impl(t: TensorImpl, storage, offset, shape, strides, dtype, device, keyset, vc,
              array=None):
    """Fill a freshly allocated TensorImpl (kept outside ``__init__`` so Tensor can use __new__)."""
    t._storage_or_none = storage
    t._offset = offset
    t._shape = shape
    t._strides = strides if strides is not None or array is not None else \
        contiguous_strides(shape)
    t.dtype = dtype
    t.device = device
    t._keyset = keyset
    t._vc = vc
    t._array = array
    t._ag = None
    t._base = None


def _is_tensor(x):
    return isinstance(x, TensorImpl)


class AutogradMeta:
    """The autograd fields of a tensor, created only for tensors autograd touches
    (``torch/csrc/autograd/variable.h``). The autograd layer reads and writes them."""

    __slots__ = ("requires_grad", "grad", "grad_fn", "output_nr", "retains_grad", "hooks",
                 "post_accumulate_hooks", "grad_accumulator", "creation_meta", "attr_version",
                 "name")

    def __init__(self, requires_grad=False, grad_fn=None, output_nr=0):
        self.requires_grad = requires_grad
        self.grad = None
        self.grad_fn = grad_fn
        self.output_nr = output_nr
        self.retains_grad = False
        self.hooks = None
        self.post_accumulate_hooks = None
        self.grad_accumulator = None
        self.creation_meta = None     # a view: how it was made ("no_grad", ...), else None
        self.attr_version = -1        # a view: the version its grad_fn was made at
        self.name = None
