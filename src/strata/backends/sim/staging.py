"""Copies between pageable host memory and the sim device, staged through pinned memory in
pieces.

The device reads and writes only its own memory and pinned (host-visible) memory, so a copy from
or to an ordinary CPU tensor goes through a pinned staging buffer. One buffer the size of the
copy would make every copy bigger than pinned memory (``STRATA_SIM_HOST_MEMORY``) fail with
OutOfMemoryError however much room the device has; so a big copy moves in pieces of at most
``chunk_bytes`` through two staging buffers that take turns: while the device copies one piece,
the host fills (or empties) the other, as CUDA's pageable-memory copies do.

A piece is a block of the destination's index space: whole runs of dimension ``dim`` with every
index before it fixed, so its layout in any tensor is a plain (offset, shape, strides) slice.
"""

import math
import pickle

import numpy as np

from ..._tensor import CPU_KEYSET, make_tensor
from ...core import dtype as D
from ...core.shape import contiguous_strides
from ..cpu.array import data
from . import commands as C

_DOUBLE_BUFFERED = 2


def chunk_bytes_for(host_bytes: int) -> int:
    """The piece size: big pieces amortize each command, and both staging buffers (rounded up
    by the caching allocator) must leave most of pinned memory to the program."""
    for size in (64 << 20, 16 << 20):
        if _DOUBLE_BUFFERED * size <= host_bytes // 4:
            return size
    return 1 << 20   # a small-pool block: both share one 2 MiB segment


def pieces(shape, max_elements):
    """``(index, dim, start, stop)`` blocks covering ``shape``, each of at most
    ``max_elements``: ``index`` fixes the dims before ``dim``, which runs from start to stop."""
    def walk(index, dim):
        inner = math.prod(shape[dim + 1:])
        if inner > max_elements and dim + 1 < len(shape):
            for i in range(shape[dim]):
                yield from walk(index + (i,), dim + 1)
            return
        step = max(1, max_elements // max(inner, 1))
        for start in range(0, shape[dim], step):
            yield index, dim, start, min(start + step, shape[dim])
    return walk((), 0)


def _piece_layout(offset, strides, piece, shape):
    """(offset, shape, strides) of one piece of a tensor laid out with ``offset``/``strides``."""
    index, dim, start, stop = piece
    offset += sum(i * s for i, s in zip(index, strides)) + start * strides[dim]
    return offset, (stop - start,) + tuple(shape[dim + 1:]), tuple(strides[dim:])


def broadcast_strides(shape, strides, target):
    """Strides of a ``shape``/``strides`` layout expanded to ``target`` (0 where it repeats)."""
    lead = len(target) - len(shape)
    return (0,) * lead + tuple(0 if n == 1 and t != 1 else s
                               for n, s, t in zip(shape, strides, target[lead:]))


class _StagingBuffers:
    """Two pinned buffers used in turn; a buffer is refilled only after the command that last
    read or wrote it has completed."""

    def __init__(self, runtime, queue, nbytes):
        self.runtime = runtime
        self.queue = queue
        self.buffers = [runtime.pinned_empty((nbytes,), (1,), D.uint8)
                        for _ in range(_DOUBLE_BUFFERED)]
        self.last_use = [0] * _DOUBLE_BUFFERED

    def take(self, k, shape, dtype, reason):
        """Buffer ``k % 2`` as a contiguous CPU tensor of ``shape``/``dtype``, once free."""
        slot = k % _DOUBLE_BUFFERED
        if self.last_use[slot]:
            self.runtime.wait(self.queue, self.last_use[slot], reason)
        storage = self.buffers[slot]._storage
        return make_tensor(storage, 0, shape, contiguous_strides(shape), dtype,
                           self.buffers[slot].device, CPU_KEYSET)

    def used(self, k, seq):
        self.last_use[k % _DOUBLE_BUFFERED] = seq

    def release(self):
        """The buffers go back to the pinned allocator, reusable once their last copy is done
        (even if the host stopped waiting: an error, the watchdog)."""
        allocator = self.runtime.host_allocator
        for buffer, seq in zip(self.buffers, self.last_use):
            if seq and buffer._storage.block is not None:
                allocator.record_use(buffer._storage.block, self.queue, seq)


def copy_to_device(runtime, stream, site, dst_desc, src, chunk_bytes, cross):
    """``dst.copy_(src)`` for a pageable CPU ``src`` of any size, in pieces; returns the last
    command's sequence number (the copy is done when it completes)."""
    addr, nbytes, offset, shape, strides, dt, alloc_id = dst_desc
    source = np.broadcast_to(data(src), shape)
    buffers = _StagingBuffers(runtime, stream.queue, chunk_bytes)
    seq = 0
    try:
        for k, piece in enumerate(pieces(shape, chunk_bytes // src.dtype.itemsize)):
            at, piece_shape, piece_strides = _piece_layout(offset, strides, piece, shape)
            staged = buffers.take(k, piece_shape, src.dtype, "copy to sim: staging buffer reuse")
            index, _, start, stop = piece
            np.copyto(staged._np(), source[index + (slice(start, stop),)])
            target = (addr, nbytes, at, piece_shape, piece_strides, dt, alloc_id)
            payload = (site, target, runtime._desc(staged))
            seq = runtime._submit(stream, C.OP_COPY, pickle.dumps(payload, 5), "copy H2D",
                                  cross)
            buffers.used(k, seq)
    finally:
        buffers.release()
    return seq


def copy_to_host(runtime, stream, site, dst, src_desc, chunk_bytes, cross, cpu_copy):
    """``dst.copy_(src)`` for a device ``src`` into a pageable CPU ``dst`` of any size, in
    pieces: the device fills one staging buffer while the host converts the other into dst."""
    addr, nbytes, offset, shape, strides, dt, alloc_id = src_desc
    src_dtype = D.ALL_DTYPES[dt]
    target = tuple(dst._shape)
    strides = broadcast_strides(shape, strides, target)
    dst_strides = dst._get_strides()
    work = list(pieces(target, chunk_bytes // src_dtype.itemsize))
    buffers = _StagingBuffers(runtime, stream.queue, chunk_bytes)
    seqs = []

    def submit(k):
        at, piece_shape, piece_strides = _piece_layout(offset, strides, work[k], target)
        staged = buffers.take(k, piece_shape, src_dtype, "copy to cpu: staging buffer reuse")
        payload = (site, runtime._desc(staged),
                   (addr, nbytes, at, piece_shape, piece_strides, dt, alloc_id))
        seqs.append(runtime._submit(stream, C.OP_COPY, pickle.dumps(payload, 5), "copy D2H",
                                    cross))
        buffers.used(k, seqs[-1])
        return staged

    try:
        staged = submit(0)
        for k in range(len(work)):
            following = submit(k + 1) if k + 1 < len(work) else None
            runtime.wait(stream.queue, seqs[k], "copy to cpu")
            at, piece_shape, piece_strides = _piece_layout(dst._offset, dst_strides, work[k],
                                                           target)
            cpu_copy(make_tensor(dst._storage, at, piece_shape, piece_strides, dst.dtype,
                                 dst.device, CPU_KEYSET), staged)
            staged = following
    finally:
        buffers.release()
    return seqs[-1]
