"""``Storage``: the flat, untyped buffer that tensors view.

A storage is bytes on a device; a tensor's dtype, sizes, strides and offset say how to read them.
On the CPU the bytes are a 1-D ``uint8`` NumPy array. A storage built from a kernel's result array
keeps that array as its *owner* and makes the flat byte view only when someone asks for it, so the
hot path (kernel -> result tensor) allocates nothing extra. Meta storages have a size and no bytes.
"""

import weakref

import numpy as np

from . import trace


class Storage:
    """Bytes on a device. ``nbytes`` is fixed unless ``resize_`` grows it."""

    __slots__ = ("_data", "_owner", "nbytes", "device", "__weakref__")

    def __init__(self, nbytes: int, device, data=None, owner=None):
        self.nbytes = nbytes
        self.device = device
        self._data = data
        self._owner = owner

    @classmethod
    def from_array(cls, arr: np.ndarray, device):
        """A storage over a dense array a kernel just produced (it must own its memory).

        ``owner`` also keeps foreign memory alive (``from_numpy``)."""
        return cls(arr.nbytes, device, owner=arr)

    @property
    def data(self) -> np.ndarray:
        """The bytes as a flat ``uint8`` array (None on the meta device)."""
        data = self._data
        if data is None and self._owner is not None:
            data = self._data = flat_bytes(self._owner)
        return data

    def data_ptr(self) -> int:
        data = self.data
        return 0 if data is None else data.ctypes.data

    def size(self) -> int:
        return self.nbytes

    def __repr__(self):
        return f"Storage(nbytes={self.nbytes}, device={self.device})"


def flat_bytes(arr: np.ndarray) -> np.ndarray:
    """The memory of a dense array (C-contiguous, or dense under a permutation) as uint8."""
    if not arr.flags.c_contiguous:
        order = sorted(range(arr.ndim), key=lambda d: -arr.strides[d])
        arr = arr.transpose(order)
        if not arr.flags.c_contiguous:
            raise AssertionError("storage owner must be a dense array")
    return arr.reshape(-1).view(np.uint8)


# --- tracing: CPU allocations and frees, reported while a trace sink is installed ----------------
# The profiler's memory columns (``profile_memory=True``) and explain() show them. Like the
# dispatcher, the traced ``__init__`` is swapped in only while tracing, so the untraced path has no
# check at all. Device storages (subclasses) are reported by their device's caching allocator.

class _FreeReport(weakref.ref):
    __slots__ = ("nbytes",)


_pending_frees = set()   # keeps each _FreeReport alive until its storage dies


def _report_free(ref):
    _pending_frees.discard(ref)
    if trace.active:
        trace.instant("runtime", "free", device="cpu", nbytes=ref.nbytes)


_untraced_init = Storage.__init__


def _traced_init(self, nbytes, device, data=None, owner=None):
    _untraced_init(self, nbytes, device, data, owner)
    if type(self) is Storage and nbytes and getattr(device, "type", device) == "cpu":
        trace.instant("runtime", "alloc", device="cpu", nbytes=nbytes)
        ref = _FreeReport(self, _report_free)
        ref.nbytes = nbytes
        _pending_frees.add(ref)


def _on_trace_change(enabled: bool):
    Storage.__init__ = _traced_init if enabled else _untraced_init


trace.on_change(_on_trace_change)
