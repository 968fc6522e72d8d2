"""The caching allocator (runtime/allocator.py) against a fake device: no process, no driver.

The fake device hands out segments from a counter, fails past its capacity, and lets a test set
each stream's completed sequence number, so stream-safe reuse is checked by fences, not timing.
"""

import gc

import pytest
import strata
from hypothesis import given, settings
from hypothesis import strategies as st
from strata.core.device import device
from strata.runtime import (
    CachingAllocator, DeviceMemory, DeviceStorage, OutOfDeviceMemory, OutOfMemoryError,
)
from strata.runtime.allocator import K_LARGE_BUFFER, K_SMALL_BUFFER, round_size, segment_size

MiB = 1 << 20


class FakeDevice(DeviceMemory):
    def __init__(self, capacity=256 * MiB):
        self.capacity = capacity
        self.segments = {}        # handle -> size
        self.next_addr = 0
        self.fences = {}          # stream -> completed seq
        self.syncs = 0

    def raw_alloc(self, nbytes):
        if sum(self.segments.values()) + nbytes > self.capacity:
            raise OutOfDeviceMemory
        addr = self.next_addr
        self.next_addr += nbytes
        self.segments[addr] = nbytes
        return addr, addr

    def raw_free(self, handle):
        del self.segments[handle]

    def free_bytes(self):
        return self.capacity - sum(self.segments.values())

    def completed(self, stream, seq):
        return self.fences.get(stream, 0) >= seq

    def synchronize(self):
        self.syncs += 1
        self.fences = {s: float("inf") for s in range(16)}


@pytest.fixture
def dev():
    return FakeDevice()


@pytest.fixture
def alloc(dev):
    return CachingAllocator(dev, "sim")


def test_size_classes():
    assert round_size(1) == 512 and round_size(512) == 512 and round_size(513) == 1024
    assert segment_size(1) == K_SMALL_BUFFER == 2 * MiB
    assert segment_size(MiB) == 2 * MiB              # <= 1 MiB: small pool
    assert segment_size(MiB + 512) == K_LARGE_BUFFER == 20 * MiB
    assert segment_size(10 * MiB - 512) == 20 * MiB
    assert segment_size(10 * MiB) == 10 * MiB        # >= 10 MiB: rounded to 2 MiB
    assert segment_size(11 * MiB) == 12 * MiB


def test_freed_block_is_reused_without_a_device_call(alloc, dev):
    a = alloc.malloc(1000, 0)
    assert alloc.memory_allocated() == 1024 and alloc.memory_reserved() == 2 * MiB
    alloc.free(a)
    assert alloc.memory_allocated() == 0 and alloc.memory_reserved() == 2 * MiB
    b = alloc.malloc(900, 0)
    assert b.addr == a.addr and len(dev.segments) == 1


def test_split_then_merge_free_neighbours(alloc):
    a, b, c = (alloc.malloc(512, 0) for _ in range(3))
    assert (b.addr - a.addr, c.addr - b.addr) == (512, 512)   # carved from one segment
    blocks = alloc.memory_snapshot()[0]["blocks"]
    assert [x["size"] for x in blocks] == [512, 512, 512, 2 * MiB - 1536]
    alloc.free(b)
    assert [x["state"] for x in alloc.memory_snapshot()[0]["blocks"]] == \
        ["active_allocated", "inactive", "active_allocated", "inactive"]
    alloc.free(a)
    alloc.free(c)
    (seg,) = alloc.memory_snapshot()
    assert seg["blocks"] == [{"address": a.addr, "size": 2 * MiB, "requested_size": 0,
                              "state": "inactive"}]


def test_best_fit_picks_the_smallest_block_that_fits(alloc):
    a = alloc.malloc(2048, 0)
    alloc.malloc(512, 0)            # keeps a and c from merging
    c = alloc.malloc(1024, 0)
    alloc.malloc(512, 0)
    alloc.free(a)
    alloc.free(c)
    assert alloc.malloc(1000, 0).addr == c.addr
    assert alloc.malloc(1500, 0).addr == a.addr


def test_a_miss_leaves_the_other_stacks_alone(alloc):
    """Note [Free stacks]: a request no stack serves takes the best free or stacked block;
    the stacked blocks of other sizes stay stacked for their own sizes' next requests."""
    a, b = alloc.malloc(512, 0), alloc.malloc(1024, 0)
    alloc.free(a)
    alloc.free(b)
    alloc.malloc(4096, 0)                        # a miss: from the segment's free rest
    assert a.stacked and b.stacked
    assert alloc.malloc(512, 0) is a and alloc.malloc(1024, 0) is b


def test_a_stacked_block_is_split_when_it_fits_best(alloc, dev):
    a = alloc.malloc(2048, 0)
    alloc.malloc(MiB, 0)
    alloc.malloc(MiB - 2048, 0)                  # the segment is full
    alloc.free(a)                                # stacked, 2048
    part = alloc.malloc(512, 0)
    assert part is a and part.size == 512 and len(dev.segments) == 1
    rest = alloc.malloc(1536, 0)                 # the split-off rest, from the free list
    assert rest.addr == a.addr + 512 and len(dev.segments) == 1


def test_stacks_merge_before_a_new_segment(alloc, dev):
    """Two stacked neighbours that only fit merged: merged, not a new segment."""
    a, b = alloc.malloc(1024, 0), alloc.malloc(1024, 0)
    alloc.malloc(MiB, 0)
    alloc.malloc(MiB - 2048, 0)                  # the segment is full
    alloc.free(a)
    alloc.free(b)
    both = alloc.malloc(2048, 0)
    assert both.addr == a.addr and len(dev.segments) == 1


def test_large_pool_segments_and_split_rule(alloc, dev):
    a = alloc.malloc(5 * MiB, 0)
    assert alloc.memory_reserved() == 20 * MiB
    b = alloc.malloc(5 * MiB, 0)     # the 15 MiB rest was split off (rest > 1 MiB)
    assert b.addr == a.addr + 5 * MiB and len(dev.segments) == 1
    big = alloc.malloc(11 * MiB, 0)       # its own 12 MiB segment; a 1 MiB rest stays whole
    assert dev.segments[big.addr] == 12 * MiB and big.size == 12 * MiB
    alloc.free(big)
    again = alloc.malloc(10 * MiB + 512, 0)   # best fit: the 12 MiB block, split (rest > 1 MiB)
    assert again.addr == big.addr and again.size == 10 * MiB + 512


def test_blocks_belong_to_their_stream(alloc):
    a = alloc.malloc(512, 1)
    alloc.free(a)
    b = alloc.malloc(512, 2)
    assert b.segment is not a.segment
    assert alloc.malloc(512, 1).addr == a.addr


def test_block_used_by_another_stream_waits_for_its_fence(alloc, dev):
    a = alloc.malloc(4096, 1)
    alloc.record_use(a, 2, 7)         # stream 2's work number 7 reads it
    alloc.free(a)
    assert alloc.memory_snapshot()[0]["blocks"][0]["state"] == "active_pending_free"
    b = alloc.malloc(4096, 1)
    assert b.addr != a.addr           # not reused: stream 2 may still be reading it
    dev.fences[2] = 7
    c = alloc.malloc(4096, 1)
    assert c.addr == a.addr           # the fence passed: reusable


def test_out_of_memory_frees_the_cache_then_raises_with_statistics():
    dev = FakeDevice(capacity=24 * MiB)
    alloc = CachingAllocator(dev, "sim")
    small = alloc.malloc(512, 0)
    alloc.free(small)                 # a cached, unused 2 MiB segment
    keep = alloc.malloc(5 * MiB, 0)   # a 20 MiB segment: 22 MiB of 24 reserved
    with pytest.raises(OutOfMemoryError) as info:
        alloc.malloc(30 * MiB, 0)
    msg = str(info.value)
    assert isinstance(info.value, RuntimeError) and info.value.__class__ is strata.OutOfMemoryError
    assert "SIM out of memory. Tried to allocate 30.00 MiB" in msg
    assert "total capacity of 24.00 MiB" in msg
    assert "5.00 MiB is allocated by strata" in msg
    assert "15.00 MiB is reserved by strata but unallocated" in msg
    assert dev.syncs == 1 and len(dev.segments) == 1   # the cached small segment was released
    stats = alloc.memory_stats()
    assert stats["num_ooms"] == 1 and stats["num_alloc_retries"] == 1
    assert keep.allocated


def test_release_cache_and_retry_succeeds():
    dev = FakeDevice(capacity=22 * MiB)
    alloc = CachingAllocator(dev, "sim")
    alloc.free(alloc.malloc(5 * MiB, 0))     # 20 MiB cached
    b = alloc.malloc(3 * MiB, 1)             # another stream: needs its own 20 MiB segment
    assert b.size == 3 * MiB and len(dev.segments) == 1
    assert alloc.memory_stats()["num_alloc_retries"] == 1


def test_empty_cache_returns_unused_segments_only(alloc, dev):
    live = alloc.malloc(1000, 0)
    alloc.free(alloc.malloc(5 * MiB, 0))
    assert alloc.memory_reserved() == 22 * MiB
    alloc.empty_cache()
    assert alloc.memory_reserved() == 2 * MiB and list(dev.segments) == [live.segment.addr]
    assert alloc.memory_allocated() == 1024


def test_storage_death_frees_its_block(alloc):
    block = alloc.malloc(4000, 0)
    storage = DeviceStorage(4000, device("sim", 0), block)
    alloc.watch(storage, block)
    assert alloc.memory_allocated() == 4096
    del storage
    gc.collect()
    assert alloc.memory_allocated() == 0


def test_peak_statistics_and_reset(alloc):
    a = alloc.malloc(1 << 16, 0)
    b = alloc.malloc(1 << 16, 0)
    alloc.free(a)
    alloc.free(b)
    assert alloc.max_memory_allocated() == 1 << 17
    alloc.reset_peak_memory_stats()
    assert alloc.max_memory_allocated() == 0
    stats = alloc.memory_stats()
    assert stats["allocation.all.allocated"] == 2 and stats["allocation.all.freed"] == 2
    assert stats["reserved_bytes.small_pool.current"] == 2 * MiB


def test_memory_summary_table(alloc):
    alloc.malloc(1 << 20, 0)
    text = alloc.memory_summary()
    assert "strata SIM memory summary, device ID 0" in text
    for row in ("Allocated memory", "Requested memory", "Reserved memory", "Allocations",
                "Reserved segments", "from large pool", "from small pool"):
        assert row in text
    assert "1024 KiB" in text


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.integers(1, 12 << 20), st.integers(0, 2)),
                min_size=1, max_size=40))
def test_random_allocation_sequences_keep_the_invariants(ops):
    """Blocks never overlap, statistics add up, and freeing everything merges each segment back
    into one free block that empty_cache returns."""
    dev = FakeDevice(capacity=1 << 30)
    alloc = CachingAllocator(dev, "sim")
    live = []
    for free_one, nbytes, stream in ops:
        if free_one and live:
            alloc.free(live.pop(nbytes % len(live)))
        else:
            live.append(alloc.malloc(nbytes, stream))
        spans = sorted((b.addr, b.addr + b.size) for b in live)
        assert all(end <= start for (_, end), (start, _) in zip(spans, spans[1:]))
        assert alloc.memory_allocated() == sum(b.size for b in live)
        assert alloc.memory_reserved() == sum(dev.segments.values())
        assert all(b.size >= round_size(b.requested) for b in live)
    for block in live:
        alloc.free(block)
    assert alloc.memory_allocated() == 0
    for seg in alloc.memory_snapshot():
        assert [b["state"] for b in seg["blocks"]] == ["inactive"]
        assert seg["blocks"][0]["size"] == seg["total_size"]
    alloc.empty_cache()
    assert alloc.memory_reserved() == 0 and not dev.segments
