"""Segments of ``cl.Buffer`` memory for a caching allocator (runtime/allocator.py): the device
memory of runtime.py and the pinned host memory of pinned.py differ only in how a segment is
made and released.

Segment addresses are virtual: segment ``k`` starts at ``k << SEGMENT_SHIFT``, so
``addr - segment.addr`` is a block's byte offset in its buffer (runtime.py's Note [Buffers and
offsets]).
"""

from ...runtime import DeviceMemory, OutOfDeviceMemory

SEGMENT_SHIFT = 40


class BufferSegments(DeviceMemory):
    """A caching allocator's segments, one OpenCL buffer each, up to the device's global
    memory. A handle is a tuple whose last item is its size: ``make(nbytes)`` creates one
    (raising ``cl.Error`` when the driver refuses), ``release(handle)`` frees it."""

    purpose = "allocator"       # how synchronize() names the wait

    def __init__(self, runtime):
        self.runtime = runtime
        self.capacity = runtime.cl_device.global_mem_size
        self._reserved = 0
        self._next_segment = 1

    def make(self, nbytes) -> tuple:
        raise NotImplementedError

    def release(self, handle) -> None:
        raise NotImplementedError

    def raw_alloc(self, nbytes):
        from .runtime import cl
        if self._reserved + nbytes > self.capacity:
            raise OutOfDeviceMemory()
        try:
            handle = self.make(nbytes)
        except cl().Error as exc:
            raise OutOfDeviceMemory() from exc
        addr = self._next_segment << SEGMENT_SHIFT
        self._next_segment += 1
        self._reserved += nbytes
        return handle, addr

    def raw_free(self, handle):
        self.release(handle)
        self._reserved -= handle[-1]

    def free_bytes(self):
        return self.capacity - self._reserved

    def completed(self, stream, seq):
        return self.runtime.streams[stream].completed(seq)

    def synchronize(self):
        self.runtime.synchronize(f"{self.purpose}: release cached memory")
