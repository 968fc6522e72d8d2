"""``CachingAllocator``: device memory for tensors without a device call per tensor.

The policy is PyTorch's ``c10/cuda/CUDACachingAllocator.cpp`` (see reference/device.md section 5):

* every request is rounded up to a multiple of 512 B;
* requests up to 1 MiB come from the *small pool*, carved out of 2 MiB segments; larger ones from
  the *large pool*: 1-10 MiB requests get a 20 MiB segment, bigger ones a segment rounded up to
  2 MiB;
* a request takes the best-fitting free block of its pool *and stream* (ordered by size, then
  address); a bigger block is split when the rest is worth keeping (>= 512 B small, > 1 MiB
  large), and a freed block merges with its free neighbours in the segment;
* freeing never returns memory to the device: ``empty_cache()`` does that for whole free
  segments; out of memory frees the cache and retries once before raising.

Note [Stream-safe reuse]: a block belongs to the stream it was allocated on; work on that stream
runs in order, so the block can be reused for later work on it as soon as the host frees it. When
other streams used the block (``record_use``, which the runtime calls for every launch that reads
or writes a block on a stream it does not belong to), the free is recorded with the last
sequence number of each such stream, and the block waits in ``_pending`` until all those fences
have passed.

Note [Free stacks]: a training step asks for the same sizes step after step. A freed block
that no other stream's work still needs goes onto a stack of its (stream, size), unmerged; a
request of that exact size pops it, with no best-fit search, split or merge (the hit path). A
request that misses takes the best fit among the free lists' blocks and the stacked ones (a
stacked block is split as a free one is); only when nothing fits do the stacks merge back into
the free lists (merging neighbours) before a new segment is allocated, so the cache never
grows while merged blocks could serve a request. Merging the stacks on every miss instead
sent a tiny GPT step's 130 requests through 92 searches and 31 merges, every step: one miss
merged the blocks later requests would have found. ``empty_cache``, running out of memory and
``memory_snapshot`` merge them too, so a segment's free neighbours are always merged where
anything looks at them.

Note [Deferred frees]: a tensor's memory is freed by a weakref callback when its storage dies,
which can happen inside any allocation (the garbage collector runs there). The callback only
appends the block to a queue that the next allocator call drains, so the free lists are never
changed re-entrantly.
"""

import collections
import threading
import weakref
from bisect import bisect_left, insort

from ..core import trace
from .interface import OutOfDeviceMemory

K_MIN_BLOCK = 512               # every size is a multiple of this (kMinBlockSize)
K_SMALL_SIZE = 1 << 20          # largest "small" request (kSmallSize)
K_SMALL_BUFFER = 2 << 20        # segment size of the small pool (kSmallBuffer)
K_MIN_LARGE_ALLOC = 10 << 20    # requests below this get a kLargeBuffer segment
K_LARGE_BUFFER = 20 << 20       # (kLargeBuffer)
K_ROUND_LARGE = 2 << 20         # bigger segments are rounded to this (kRoundLarge)


class OutOfMemoryError(RuntimeError):
    """A device allocation failed even after the allocator released its cache
    (``torch.OutOfMemoryError``)."""


def round_size(nbytes: int) -> int:
    return K_MIN_BLOCK if nbytes < K_MIN_BLOCK else -(-nbytes // K_MIN_BLOCK) * K_MIN_BLOCK


def segment_size(size: int) -> int:
    if size <= K_SMALL_SIZE:
        return K_SMALL_BUFFER
    if size < K_MIN_LARGE_ALLOC:
        return K_LARGE_BUFFER
    return -(-size // K_ROUND_LARGE) * K_ROUND_LARGE


def format_size(nbytes: int) -> str:
    """PyTorch's ``format_size``: bytes, KiB, MiB or GiB with two decimals."""
    if nbytes <= 1024:
        return f"{nbytes} bytes"
    if nbytes <= 1 << 20:
        return f"{nbytes / 1024:.2f} KiB"
    if nbytes <= 1 << 30:
        return f"{nbytes / (1 << 20):.2f} MiB"
    return f"{nbytes / (1 << 30):.2f} GiB"


class Segment:
    """One raw device allocation; its blocks tile it, linked by ``prev``/``next``."""

    __slots__ = ("handle", "addr", "size", "stream", "small", "first")

    def __init__(self, handle, addr, size, stream, small):
        self.handle = handle
        self.addr = addr
        self.size = size
        self.stream = stream
        self.small = small
        self.first = None   # the block at ``addr``


class Block:
    """A piece of a segment: allocated to a tensor, pending (freed, fences not passed) or free
    (in a free list, or stacked)."""

    __slots__ = ("segment", "addr", "size", "requested", "allocated", "pending", "stacked",
                 "prev", "next", "stream", "uses", "ref")

    def __init__(self, segment, addr, size, stream):
        self.segment = segment
        self.addr = addr
        self.size = size
        self.requested = 0
        self.allocated = False
        self.pending = False
        self.stacked = False      # on a free stack (Note [Free stacks])
        self.prev = None
        self.next = None
        self.stream = stream
        self.uses = None      # {stream: last seq} of uses on other streams (Note [Stream-safe...])
        self.ref = None       # the weakref to the storage that owns this block, while allocated

    def __repr__(self):
        state = "allocated" if self.allocated else "pending" if self.pending else "free"
        return f"Block(addr={self.addr:#x}, size={self.size}, stream={self.stream}, {state})"


class _FreeList:
    """The free blocks of one (stream, pool), ordered by (size, address) for best fit."""

    __slots__ = ("keys", "blocks")

    def __init__(self):
        self.keys = []
        self.blocks = {}

    def add(self, block):
        insort(self.keys, (block.size, block.addr))
        self.blocks[block.addr] = block

    def remove(self, block):
        del self.keys[bisect_left(self.keys, (block.size, block.addr))]
        del self.blocks[block.addr]

    def best_fit(self, size):
        keys = self.keys
        i = bisect_left(keys, (size, -1))
        return self.blocks[keys[i][1]] if i < len(keys) else None


class _Stat:
    """One statistic: its current value, its peak, and the total freed; the total allocated is
    what is held now plus what was freed (nothing resets the totals), so a malloc does not
    count it."""

    __slots__ = ("current", "peak", "freed")

    def __init__(self):
        self.current = self.peak = self.freed = 0

    @property
    def allocated(self):
        return self.current + self.freed

    def add(self, n):
        self.current += n
        if self.current > self.peak:
            self.peak = self.current

    def sub(self, n):
        self.current -= n
        self.freed += n


class _BlockStats:
    """The three statistics every malloc and free changes (allocated_bytes, allocation,
    requested_bytes) of all pools and of one: updated in one call, not twelve."""

    __slots__ = ("size", "count", "requested", "all_size", "all_count", "all_requested")

    def __init__(self, pool, every):
        self.size, self.count, self.requested = pool
        self.all_size, self.all_count, self.all_requested = every

    def alloc(self, size, requested):   # unrolled: this runs for every tensor a kernel makes
        stat = self.size
        stat.current += size
        if stat.current > stat.peak:
            stat.peak = stat.current
        stat = self.count
        stat.current += 1
        if stat.current > stat.peak:
            stat.peak = stat.current
        stat = self.requested
        stat.current += requested
        if stat.current > stat.peak:
            stat.peak = stat.current
        stat = self.all_size
        stat.current += size
        if stat.current > stat.peak:
            stat.peak = stat.current
        stat = self.all_count
        stat.current += 1
        if stat.current > stat.peak:
            stat.peak = stat.current
        stat = self.all_requested
        stat.current += requested
        if stat.current > stat.peak:
            stat.peak = stat.current

    def free(self, size, requested):
        stat = self.size
        stat.current -= size
        stat.freed += size
        stat = self.count
        stat.current -= 1
        stat.freed += 1
        stat = self.requested
        stat.current -= requested
        stat.freed += requested
        stat = self.all_size
        stat.current -= size
        stat.freed += size
        stat = self.all_count
        stat.current -= 1
        stat.freed += 1
        stat = self.all_requested
        stat.current -= requested
        stat.freed += requested


_STATS = ("allocated_bytes", "requested_bytes", "reserved_bytes", "allocation", "segment")
_POOLS = ("all", "large_pool", "small_pool")


class _StorageRef(weakref.ref):
    """The finalizer of a device storage: when the storage dies, its block is freed."""

    __slots__ = ("block",)


class CachingAllocator:
    """Caches device memory in segments and hands out blocks (see the module docstring).

    ``memory`` is the device's ``runtime.interface.DeviceMemory``; ``name`` names the device in
    messages ("sim")."""

    def __init__(self, memory, name="device", index=0):
        self.memory = memory
        self.name = name
        self.index = index
        self._free = {}                     # (stream, small) -> _FreeList
        self._segments = {}                 # addr -> Segment
        self._pending = []                  # freed blocks whose other-stream uses may not be done
        self._dead = collections.deque()    # Note [Deferred frees]
        self._lock = threading.Lock()
        self._stats = {(s, p): _Stat() for s in _STATS for p in _POOLS}
        # what a malloc or free of a small (True) or large (False) block updates: its pool, all
        self._block_stats = {
            small: _BlockStats(*(tuple(self._stats[name, pool] for name in (
                "allocated_bytes", "allocation", "requested_bytes"))
                for pool in ("small_pool" if small else "large_pool", "all")))
            for small in (True, False)}
        self._stacks = {}                   # (stream, size) -> [free block] (Note [Free stacks])
        self._stacked = 0                   # blocks on the stacks
        self.num_ooms = 0
        self.num_alloc_retries = 0
        self._storage_died = self.storage_died   # one bound method for every finalizer

    # --- allocation -----------------------------------------------------------------------------
    def malloc(self, nbytes: int, stream: int) -> Block:
        """A block of at least ``nbytes`` for work on ``stream``."""
        with self._lock:
            if self._dead:
                self._drain()
            if self._pending:       # PyTorch's process_events(): fences that have passed
                self._process_pending()
            size = round_size(nbytes)
            small = size <= K_SMALL_SIZE
            stack = self._stacks.get((stream, size))
            if stack:
                block = stack.pop()
                block.stacked = False
                self._stacked -= 1
                hit = True
            else:
                block, hit = self._best_fit(size, stream, small)
            block.allocated = True
            block.requested = nbytes
            self._block_stats[small].alloc(block.size, nbytes)
        if trace.active:
            trace.instant("runtime", "alloc", device=self.name, stream=stream, nbytes=nbytes,
                          block=block.size, addr=block.addr, cached=hit)
        return block

    def _best_fit(self, size, stream, small):
        """(the best-fitting block for a request its stack could not serve, split to ``size``;
        whether it was cached): the smallest free or stacked block of the pool and stream that
        fits (Note [Free stacks]); when none does, the stacks merge back into the free lists
        and the search runs again before a new segment is allocated."""
        free = self._free.get((stream, small))
        if free is None:
            free = self._free[stream, small] = _FreeList()
        block = free.best_fit(size)
        stack = self._best_stack(size, stream, small, block) if self._stacked else None
        if stack is not None:
            block = stack.pop()
            block.stacked = False
            self._stacked -= 1
        elif block is None and self._stacked:
            self._unstack()
            block = free.best_fit(size)
        hit = block is not None
        if stack is None:
            if hit:
                free.remove(block)
            else:
                block = self._new_segment(size, stream, small)
        block.allocated = True            # before a split: the rest must not merge into it
        rest = block.size - size
        if rest >= K_MIN_BLOCK if small else rest > K_SMALL_SIZE:
            self._split(block, size)
        return block, hit

    def _best_stack(self, size, stream, small, free_block):
        """The stack of the smallest stacked blocks of the pool and stream that fit ``size``
        and are smaller than ``free_block`` (the free lists' best fit, or None), or None."""
        best, best_size = None, free_block.size if free_block is not None else None
        for (owner, held), stack in self._stacks.items():
            if owner == stream and size <= held and (best_size is None or held < best_size) \
                    and stack and stack[-1].segment.small == small:
                best, best_size = stack, held
        return best

    def _unstack(self):
        """Put every stacked block into the free lists (Note [Free stacks])."""
        stacks, self._stacks, self._stacked = self._stacks, {}, 0
        for stack in stacks.values():
            for block in stack:
                block.stacked = False
                self._insert_free(block)

    def _split(self, block, size):
        """Cut ``block`` to ``size``; the rest is a free block (merged with a free next
        neighbour: a stacked block's may be one)."""
        rest = Block(block.segment, block.addr + size, block.size - size, block.stream)
        rest.prev = block
        rest.next = block.next
        if block.next is not None:
            block.next.prev = rest
        block.next = rest
        block.size = size
        self._insert_free(rest)

    def _new_segment(self, size, stream, small):
        nbytes = segment_size(size)
        try:
            handle, addr = self.memory.raw_alloc(nbytes)
        except OutOfDeviceMemory:
            # PyTorch frees every unused cached segment (which synchronizes) and retries once.
            self.num_alloc_retries += 1
            self._release_cached()
            try:
                handle, addr = self.memory.raw_alloc(nbytes)
            except OutOfDeviceMemory:
                self.num_ooms += 1
                raise OutOfMemoryError(self._oom_message(size)) from None
        seg = Segment(handle, addr, nbytes, stream, small)
        self._segments[addr] = seg
        self._update_segments(seg, 1)
        seg.first = Block(seg, addr, nbytes, stream)
        return seg.first

    def _oom_message(self, size):
        reserved = self._stat("reserved_bytes").current
        allocated = self._stat("allocated_bytes").current
        return (f"{self.name.upper()} out of memory. Tried to allocate {format_size(size)}. "
                f"{self.name} device {self.index} has a total capacity of "
                f"{format_size(self.memory.capacity)} of which "
                f"{format_size(self.memory.free_bytes())} is free. Of the allocated memory "
                f"{format_size(allocated)} is allocated by strata, and "
                f"{format_size(reserved - allocated)} is reserved by strata but unallocated. If "
                f"reserved but unallocated memory is large, free tensors or call "
                f"strata.{self.name}.empty_cache() to return unused segments to the device.")

    # --- freeing ----------------------------------------------------------------------------------
    def storage_died(self, ref):
        """The weakref callback of a storage (Note [Deferred frees]); any thread."""
        self._dead.append(ref.block)

    def watch(self, storage, block) -> None:
        """Free ``block`` when ``storage`` dies."""
        ref = block.ref = _StorageRef(storage, self._storage_died)
        ref.block = block

    def free(self, block: Block) -> None:
        with self._lock:
            self._free_block(block)

    def _drain(self):
        dead = self._dead
        while dead:
            self._free_block(dead.popleft())

    def _free_block(self, block):
        block.allocated = False
        block.ref = None
        self._block_stats[block.segment.small].free(block.size, block.requested)
        if trace.active:
            trace.instant("runtime", "free", device=self.name, stream=block.stream,
                          block=block.size, addr=block.addr)
        if block.uses:
            if not self._uses_done(block):
                block.pending = True
                self._pending.append(block)
                return
            block.uses = None
        stack = self._stacks.get((block.stream, block.size))
        if stack is None:
            stack = self._stacks[block.stream, block.size] = []
        stack.append(block)
        block.stacked = True
        self._stacked += 1

    def _uses_done(self, block):
        completed = self.memory.completed
        return all(completed(stream, seq) for stream, seq in block.uses.items())

    def _process_pending(self):
        still = []
        for block in self._pending:
            if self._uses_done(block):
                block.pending = False
                self._insert_free(block)
            else:
                still.append(block)
        self._pending = still

    def _insert_free(self, block):
        block.uses = None
        free = self._free[block.stream, block.segment.small]
        for nb in (block.prev, block.next):
            if nb is not None and not (nb.allocated or nb.pending or nb.stacked):
                free.remove(nb)
                if nb is block.prev:
                    block.addr = nb.addr
                    block.prev = nb.prev
                    if nb.prev is not None:
                        nb.prev.next = block
                    else:
                        block.segment.first = block
                else:
                    block.next = nb.next
                    if nb.next is not None:
                        nb.next.prev = block
                block.size += nb.size
        free.add(block)

    def record_use(self, block: Block, stream: int, seq: int) -> None:
        """``block`` is used by work number ``seq`` on ``stream`` (Note [Stream-safe reuse])."""
        if block.uses is None:
            block.uses = {stream: seq}
        else:
            block.uses[stream] = seq

    # --- returning memory to the device -----------------------------------------------------------
    def empty_cache(self) -> None:
        """Return every segment with no allocated block to the device (synchronizes)."""
        with self._lock:
            self._release_cached()

    def _release_cached(self):
        self.memory.synchronize()
        self._drain()
        self._process_pending()
        self._unstack()
        for free in self._free.values():
            for block in list(free.blocks.values()):
                if block.prev is None and block.next is None:
                    free.remove(block)
                    seg = self._segments.pop(block.addr)
                    self.memory.raw_free(seg.handle)
                    self._update_segments(seg, -1)

    # --- statistics -------------------------------------------------------------------------------
    def _update_segments(self, seg, sign):
        pool = "small_pool" if seg.small else "large_pool"
        for name, n in (("reserved_bytes", seg.size), ("segment", 1)):
            for key in ((name, "all"), (name, pool)):
                if sign > 0:
                    self._stats[key].add(n)
                else:
                    self._stats[key].sub(n)

    def _stat(self, name, pool="all") -> _Stat:
        return self._stats[name, pool]

    def sync_stats(self):
        """Apply frees of storages that died since the last allocator call."""
        if self._dead:
            with self._lock:
                self._drain()

    def memory_allocated(self) -> int:
        self.sync_stats()
        return self._stat("allocated_bytes").current

    def max_memory_allocated(self) -> int:
        self.sync_stats()
        return self._stat("allocated_bytes").peak

    def memory_reserved(self) -> int:
        self.sync_stats()
        return self._stat("reserved_bytes").current

    def max_memory_reserved(self) -> int:
        self.sync_stats()
        return self._stat("reserved_bytes").peak

    def reset_peak_memory_stats(self) -> None:
        self.sync_stats()
        for stat in self._stats.values():
            stat.peak = stat.current

    def memory_stats(self) -> dict:
        """PyTorch's flat ``memory_stats()`` dict: ``"allocated_bytes.all.current"``, ..."""
        self.sync_stats()
        out = {"num_alloc_retries": self.num_alloc_retries, "num_ooms": self.num_ooms}
        for (name, pool), stat in sorted(self._stats.items()):
            for field in ("current", "peak", "allocated", "freed"):
                out[f"{name}.{pool}.{field}"] = getattr(stat, field)
        return dict(sorted(out.items()))

    def memory_summary(self) -> str:
        """A table of the statistics, laid out like ``torch.cuda.memory_summary()``."""
        self.sync_stats()
        width = 75
        rule, heavy = "|" + "-" * width + "|", "|" + "=" * width + "|"
        lines = [heavy, "|" + f" strata {self.name.upper()} memory summary, device ID "
                 f"{self.index} ".center(width) + "|", rule,
                 "|" + f" {self.name.upper()} OOMs: {self.num_ooms}".ljust(37) + "|"
                 + f" segment allocation retries: {self.num_alloc_retries}".ljust(37) + "|",
                 heavy,
                 "|        Metric         | Cur Usage  | Peak Usage | Tot Alloc  | Tot Freed  |",
                 rule]
        rows = (("Allocated memory", "allocated_bytes", True),
                ("Requested memory", "requested_bytes", True),
                ("Reserved memory", "reserved_bytes", True),
                ("Allocations", "allocation", False),
                ("Reserved segments", "segment", False))
        for title, name, is_bytes in rows:
            for pool, label in (("all", title), ("large_pool", "      from large pool"),
                                ("small_pool", "      from small pool")):
                s = self._stats[name, pool]
                cells = [_cell(v, is_bytes) for v in (s.current, s.peak, s.allocated, s.freed)]
                lines.append(f"| {label:<21} |" + "|".join(f" {c:>10} " for c in cells) + "|")
            lines.append(rule)
        lines[-1] = heavy
        return "\n".join(lines) + "\n"

    def memory_snapshot(self) -> list:
        """One dict per segment, its blocks in address order (``torch.cuda.memory_snapshot``)."""
        self.sync_stats()
        out = []
        with self._lock:
            self._unstack()
            for seg in sorted(self._segments.values(), key=lambda s: s.addr):
                blocks, b = [], seg.first
                while b is not None:
                    state = "active_allocated" if b.allocated else \
                        "active_pending_free" if b.pending else "inactive"
                    blocks.append({"address": b.addr, "size": b.size, "requested_size":
                                   b.requested if b.allocated else 0, "state": state})
                    b = b.next
                out.append({"address": seg.addr, "total_size": seg.size, "stream": seg.stream,
                            "segment_type": "small" if seg.small else "large",
                            "allocated_size": sum(x["size"] for x in blocks
                                                  if x["state"] == "active_allocated"),
                            "blocks": blocks})
        return out


def _cell(value, is_bytes):
    """PyTorch's ``_format_size`` / ``_format_count`` cells: scaled while >= 768 units."""
    if not is_bytes:
        return str(value)
    unit = "B"
    for bigger in ("KiB", "MiB", "GiB", "TiB"):
        if value < 768 * 1024:
            break
        value //= 1024
        unit = bigger
    return f"{value} {unit}"
