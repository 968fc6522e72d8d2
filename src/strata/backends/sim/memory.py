"""The driver's view of the device's memory: which ranges buffer objects hold.

This is the kernel-driver half of memory management (a GPU's VRAM manager): few, big, slow
allocations, first fit, neighbours merged on free. The caching allocator above
(``runtime/allocator.py``) carves tensors out of the buffer objects handed out here.
"""

from bisect import bisect_left, insort

PAGE = 4096


class RangeAllocator:
    """First-fit allocation of page-aligned ranges in ``[0, size)``."""

    def __init__(self, size: int):
        self.size = size
        self.used = 0
        self._free = [(0, size)]     # (offset, length), sorted by offset, never adjacent
        self._held = {}              # offset -> length

    def alloc(self, nbytes: int):
        """The offset of a new range of ``nbytes`` (rounded up to a page), or None if full."""
        nbytes = -(-nbytes // PAGE) * PAGE
        for i, (off, length) in enumerate(self._free):
            if length >= nbytes:
                if length == nbytes:
                    del self._free[i]
                else:
                    self._free[i] = (off + nbytes, length - nbytes)
                self._held[off] = nbytes
                self.used += nbytes
                return off
        return None

    def free(self, offset: int) -> int:
        """Release the range at ``offset``; returns its length."""
        nbytes = length = self._held.pop(offset)
        self.used -= nbytes
        free = self._free
        insort(free, (offset, nbytes))
        i = bisect_left(free, (offset, nbytes))
        if i + 1 < len(free) and offset + nbytes == free[i + 1][0]:
            nbytes += free[i + 1][1]
            free[i] = (offset, nbytes)
            del free[i + 1]
        if i > 0 and free[i - 1][0] + free[i - 1][1] == offset:
            free[i - 1] = (free[i - 1][0], free[i - 1][1] + nbytes)
            del free[i]
        return length
