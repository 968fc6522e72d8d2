"""Pinned host memory for the opencl device: ``Tensor.pin_memory("opencl")`` and the staging
buffers of ``non_blocking`` copies.

OpenCL has no "pinned" flag; the vendors' recipe (NVIDIA's OpenCL best-practices guide, section
3.1.1) is a buffer created with ``CL_MEM_ALLOC_HOST_PTR``, which the driver places in
page-locked memory, mapped once for the life of the buffer: a copy whose host pointer lies in
that mapping runs as DMA, asynchronously, without the driver's own bounce buffer. Segments of
such buffers are carved by a second caching allocator (runtime/allocator.py) whose blocks
belong to no stream (``HOST_STREAM``): a block freed while a copy still reads it is reused only
once that copy's stream passes it (``record_use``), as for the sim device's host memory.
"""

import numpy as np

from ..._tensor import CPU_KEYSET, make_tensor
from ...core import dtype as D
from ...core.device import device
from ...runtime import CachingAllocator, PinnedStorage
from .memory import BufferSegments

HOST_STREAM = -1      # no OpenCL stream has this id
CPU = device("cpu")
_UINT8 = D.uint8


class PinnedHostMemory(BufferSegments):
    """Segments for the pinned allocator: one mapped ``ALLOC_HOST_PTR`` buffer each."""

    purpose = "pinned allocator"

    def make(self, nbytes):
        from .runtime import cl
        pycl = cl()
        flags = pycl.mem_flags.READ_WRITE | pycl.mem_flags.ALLOC_HOST_PTR
        buffer = pycl.Buffer(self.runtime.context, flags, nbytes)
        queue = self.runtime.default_stream().queue
        view, _ = pycl.enqueue_map_buffer(queue, buffer, pycl.map_flags.READ |
                                          pycl.map_flags.WRITE, 0, (nbytes,), np.uint8)
        return buffer, view, nbytes

    def release(self, handle):
        buffer, view, _ = handle
        view.base.release(self.runtime.default_stream().queue)     # unmap, then free
        buffer.release()

    def completed(self, stream, seq):
        return stream == HOST_STREAM or super().completed(stream, seq)


def allocator(runtime):
    return CachingAllocator(PinnedHostMemory(runtime), "opencl_host", runtime.index)


def pinned_empty(runtime, shape, strides, nbytes, dtype):
    """A CPU tensor whose bytes lie in pinned, mapped memory of ``runtime``'s context."""
    block = runtime.host_allocator.malloc(nbytes, HOST_STREAM) if nbytes else None
    view = None
    if block is not None:
        start = block.addr - block.segment.addr
        view = block.segment.handle[1][start:start + nbytes]
    storage = PinnedStorage(nbytes, CPU, view if view is not None else np.empty(0, np.uint8),
                            block)
    if block is not None:
        runtime.host_allocator.watch(storage, block)
    return make_tensor(storage, 0, shape, strides, dtype, CPU, CPU_KEYSET)


def is_pinned_by(runtime, tensor) -> bool:
    """Whether a CPU tensor's bytes are pinned memory of ``runtime``'s context."""
    block = getattr(tensor._storage, "block", None)
    return getattr(tensor._storage, "pinned", False) and block is not None and \
        len(block.segment.handle) == 3 and block.segment.handle[0].context == runtime.context


def stage(runtime, array):
    """A pinned copy of the contiguous host ``array`` (a ``uint8`` CPU tensor), for an upload
    that returns before the device reads it."""
    staged = pinned_empty(runtime, (array.nbytes,), (1,), array.nbytes, _UINT8)
    np.copyto(staged._storage.data.view(array.dtype).reshape(array.shape), array)
    return staged
