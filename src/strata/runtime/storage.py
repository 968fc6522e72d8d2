"""Storages whose bytes a runtime owns: device memory, and pinned host memory.

``DeviceStorage`` holds an address in device memory, never the bytes: the host cannot read a
device tensor except through a copy (a sync point), so ``storage.data`` is None and ``_np()``
refuses, as for meta tensors. ``PinnedStorage`` is ordinary host memory that the device can also
reach (page-locked in CUDA, a shared mapping here): CPU kernels use it like any CPU storage, and
copies to and from the device can run asynchronously. Both free their block through the caching
allocator when the last reference dies (``CachingAllocator.watch``).
"""

import itertools

from ..core.storage import Storage

_allocation_ids = itertools.count(1)


class DeviceStorage(Storage):
    """Bytes at ``block.addr`` in a device's memory (``block`` is None for zero bytes).

    ``id`` names this allocation for as long as the process lives, unlike its address, which
    the caching allocator hands out again once the storage dies: a device that must remember
    something about an allocation (Note [Poisoned allocations] in backends/sim/device.py) keys
    it by ``id``."""

    __slots__ = ("block", "id")
    pinned = False

    def __init__(self, nbytes, device, block):
        self.nbytes = nbytes      # (Storage's fields, set here: this runs for every output)
        self.device = device
        self._data = self._owner = None
        self.block = block
        self.id = next(_allocation_ids)

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
