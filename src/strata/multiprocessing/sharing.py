"""CPU tensor storages in POSIX shared memory (Note [Shared tensors] in ``__init__.py``).

``multiprocessing.shared_memory`` is imported on first use: most programs never share a tensor,
and ``import strata`` stays quick."""

import sys
import weakref

import numpy as np

from .. import _tensor
from ..core import dtype as D
from ..core.device import cpu


def _segment(storage):
    """The storage's shared-memory segment, or None (none exists before the module loads)."""
    module = sys.modules.get("multiprocessing.shared_memory")
    owner = storage._owner
    return owner if module is not None and isinstance(owner, module.SharedMemory) else None


def is_shared(self):
    """Whether the tensor's storage lives in shared memory."""
    return self.device.type == "cpu" and _segment(self._storage) is not None


def _unlink_later(storage, segment):
    """The creator unlinks the segment when the storage dies (a child that still maps it keeps
    its pages; the name just disappears); the resource tracker unlinks what a killed creator
    leaves."""
    def release(segment=segment):
        try:
            segment.unlink()
        except FileNotFoundError:
            pass
    weakref.finalize(storage, release)


def share_memory_(self):
    """Move this CPU tensor's storage into shared memory, in place (a no-op if already there
    or for non-CPU devices, as PyTorch's for CUDA)."""
    if self.device.type != "cpu" or is_shared(self):
        return self
    from multiprocessing import shared_memory
    storage = self._storage
    nbytes = max(storage.nbytes, 1)
    segment = shared_memory.SharedMemory(create=True, size=nbytes)
    data = np.ndarray((storage.nbytes,), np.uint8, buffer=segment.buf)
    old = storage.data
    if old is not None and storage.nbytes:
        data[:] = old
    storage._data, storage._owner = data, segment
    self._strides = self._get_strides()   # a kernel result reads them off its old array
    self._array = None
    _unlink_later(storage, segment)
    return self


def shared_handle(t):
    """What a child needs to map a shared tensor: the segment and the tensor's geometry."""
    return (_segment(t._storage).name, t._storage.nbytes, t._offset, t._shape, t.stride(),
            t.dtype.name, t.requires_grad)


_attached = {}   # segment name -> Storage, so one process maps a segment once


def rebuild_shared_tensor(name, nbytes, offset, shape, strides, dtype_name, requires_grad):
    storage = _attached.get(name)
    storage = storage() if storage is not None else None
    if storage is None:
        from multiprocessing import shared_memory
        # Its registration with the resource tracker (the parent's, which every child shares)
        # repeats the creator's; the creator's unlink removes it.
        segment = shared_memory.SharedMemory(name=name)
        storage = _tensor.Storage(nbytes, cpu,
                                  data=np.ndarray((nbytes,), np.uint8, buffer=segment.buf),
                                  owner=segment)
        _attached[name] = weakref.ref(storage)
    t = _tensor.make_tensor(storage, offset, shape, strides, D._by_name(dtype_name), cpu,
                            _tensor.CPU_KEYSET)
    return t.requires_grad_() if requires_grad else t
