"""The driver layer against the real device process: buffer objects, mapping, queues, the
command ring and the argument arena (wrap-around and back-pressure), fences and values.
"""

import threading

import pytest
import strata
from strata.backends.sim import commands as C
from strata.backends.sim import runtime as R
from strata.core import trace

pytestmark = pytest.mark.skipif(not strata.sim.is_available(), reason="needs memfd/eventfd")


@pytest.fixture(scope="module")
def drv():
    return R.get().driver


@pytest.fixture(scope="module")
def queue(drv):
    return drv.create_queue()


def test_buffer_objects_map_and_device_writes(drv, queue):
    bo = drv.alloc_bo(4096, host=True)
    assert bo.addr & C.HOST_BIT and bo.size == 4096
    word = drv.host_word(bo)
    word[0] = 0
    seq = drv.submit(queue, C.OP_WRITE_VALUE, a0=bo.addr, a1=42)
    drv.wait_fence(queue, seq)
    assert word[0] == 42 and drv.fence(queue) >= seq
    vram = drv.alloc_bo(3 << 20)
    assert not vram.addr & C.HOST_BIT and vram.size == 3 << 20
    before = drv.memory_used()
    drv.free_bo(vram)
    assert drv.memory_used() == before - (3 << 20)
    del word
    drv.free_bo(bo)


def test_wait_value_holds_a_queue_until_the_host_writes(drv, queue):
    bo = drv.alloc_bo(4096, host=True)
    word = drv.host_word(bo)
    word[0] = 0
    drv.submit(queue, C.OP_WAIT_VALUE, a0=bo.addr, a1=1)
    done = drv.submit(queue, C.OP_NOP)
    assert drv.fence(queue) < done                 # the NOP is queued behind the wait
    word[0] = 1
    drv.wait_fence(queue, done)
    assert drv.fence(queue) == done == drv.submitted(queue)
    del word
    drv.free_bo(bo)


def test_ring_wraps_around(drv, queue):
    first = drv.submitted(queue) + 1
    for _ in range(C.RING_SLOTS + 100):
        last = drv.submit(queue, C.OP_NOP)
    assert last == first + C.RING_SLOTS + 99
    drv.wait_fence(queue, last)
    assert drv.fence(queue) == last


def test_argument_arena_wraps_and_applies_back_pressure(drv, queue):
    """Payloads worth more than the arena, queued behind a held queue: the driver waits for the
    device to free arena space (a sync it reports) instead of overwriting live payloads."""
    bo = drv.alloc_bo(4096, host=True)
    word = drv.host_word(bo)
    word[0] = 0
    drv.submit(queue, C.OP_WAIT_VALUE, a0=bo.addr, a1=1)
    payload = bytes(range(256)) * 400                  # 100 KiB
    timer = threading.Timer(0.3, lambda: word.__setitem__(0, 1))
    events = []

    class Sink:
        record = events.append

    trace.add_sink(Sink)
    try:
        timer.start()
        n = C.ARENA_BYTES // len(payload) * 2
        for _ in range(n):
            last = drv.submit(queue, C.OP_NOP, payload)
    finally:
        trace.remove_sink(Sink)
        timer.join()
    drv.wait_fence(queue, last)
    reasons = {e.fields.get("reason") for e in events if e.fields.get("name") == "wait_fence"}
    assert "argument arena full" in reasons
    del word
    drv.free_bo(bo)


def test_submit_reports_ring_slot_and_doorbell(drv, queue):
    events = []

    class Sink:
        record = events.append

    trace.add_sink(Sink)
    try:
        seq = drv.submit(queue, C.OP_NOP)
    finally:
        trace.remove_sink(Sink)
    submit = next(e for e in events if e.fields.get("name") == "submit")
    assert submit.layer == "driver" and submit.fields["seq"] == seq
    assert submit.fields["slot"] == (seq - 1) % C.RING_SLOTS
    doorbell = next(e for e in events if e.name == "doorbell")
    assert doorbell.fields["queue"] == queue and isinstance(doorbell.fields["rung"], bool)
