"""Storages whose bytes a runtime owns: device memory, and pinned host memory.

``DeviceStorage`` holds an address in device memory, never the bytes: the host cannot read a
device tensor except through a copy (a sync point), so ``storage.data`` is None and ``_np()``
refuses, as for meta tensors. ``PinnedStorage`` is ordinary host memory that the device can also
reach (page-locked in CUDA, a shared mapping here): CPU kernels use it like any CPU storage, and
copies to and from the device can run asynchronously. Both free their block through the caching
allocator when the last reference dies (``CachingAllocator.watch``).
"""

from ..core.storage import Storage


class DeviceStorage(Storage):
    """Bytes at ``block.addr`` in a device's memory (``block`` is None for zero bytes)."""

    __slots__ = ("block",)
    pinned = False

    def __init__(self, nbytes, device, block):
        self.nbytes = nbytes      # (Storage's fields, set here: this runs for every output)
        self.device = device
        self._data = self._owner = None
        self.block = block

    @property
    def data(self):
        return None

    @property
    def addr(self) -> int:
        return 0 if self.block is None else self.block.addr

    def data_ptr(self) -> int:
        return self.addr

    def __repr__(self):
        return f"DeviceStorage(nbytes={self.nbytes}, device={self.device}, addr={self.addr:#x})"


class PinnedStorage(Storage):
    """Host bytes the device can read and write directly (``Tensor.pin_memory()``).

    ``addr`` is the device-visible address of the bytes; ``data`` is the host's view of them."""

    __slots__ = ("block",)
    pinned = True

    def __init__(self, nbytes, device, data, block):
        Storage.__init__(self, nbytes, device, data=data)
        self.block = block

    @property
    def addr(self) -> int:
        return 0 if self.block is None else self.block.addr
