"""Streams and events of the sim device (``strata.sim.Stream``, ``strata.sim.Event``).

A stream is a hardware queue: work submitted to it runs in order. An event is a marker command
in a queue: it is "reached" when that queue's fence passes the marker's sequence number, and a
timing event also has the device clock written into its timestamp slot. Semantics as CUDA's
(reference/device.md sections 2-3): waiting on an event that was never recorded does nothing.

    s = strata.sim.Stream()
    s.wait_stream(strata.sim.current_stream())
    with strata.sim.stream(s):
        y = x * 2                      # runs on s
    strata.sim.current_stream().wait_stream(s)
"""

from ...core import trace
from ...core.device import as_device
from ...runtime import Event, Stream
from . import commands as C


def _runtime():
    from .runtime import get   # runtime.py imports this module
    return get()


class SimStream(Stream):
    """An in-order queue of work on the sim device: ``strata.sim.Stream(priority=0)``."""

    def __init__(self, device=None, priority=0):
        if device is not None and str(as_device(device)) not in ("sim", "sim:0"):
            raise ValueError(f"strata.sim.Stream: expected a sim device, got {device}")
        rt = _runtime()
        self._init(rt, rt.new_queue(), priority)

    @classmethod
    def _wrap(cls, runtime, queue, priority=0):
        self = object.__new__(cls)
        self._init(runtime, queue, priority)
        return self

    def _init(self, runtime, queue, priority):
        self.runtime = runtime
        self.queue = queue
        self.priority = priority
        self.device = runtime.device

    @property
    def device_type(self):
        return "sim"

    def query(self) -> bool:
        driver = self.runtime.driver
        return driver.fence(self.queue) >= driver.submitted(self.queue)

    def synchronize(self) -> None:
        self.runtime.wait(self.queue, self.runtime.driver.submitted(self.queue),
                          "stream synchronize")

    def wait_event(self, event) -> None:
        event.wait(self)

    def record_event(self, event=None):
        event = SimEvent() if event is None else event
        event.record(self)
        return event

    def wait_value(self, word, value: int) -> None:
        """Make later work on this stream wait until the int64 ``word`` (a one-element tensor
        in pinned host memory) holds a value >= ``value`` (CUDA's ``cuStreamWaitValue64``).
        The host releases the stream by writing ``word``; tests use it to hold the device."""
        self.runtime.driver.submit(self.queue, C.OP_WAIT_VALUE, a0=_word_addr(word), a1=value)

    def write_value(self, word, value: int) -> None:
        """Have the device store ``value`` into ``word`` when the stream reaches this point
        (``cuStreamWriteValue64``)."""
        self.runtime.driver.submit(self.queue, C.OP_WRITE_VALUE, a0=_word_addr(word), a1=value)

    def record_tensor(self, tensor) -> None:
        """``tensor.record_stream(self)``: its memory is not reused before this stream's work
        queued so far is done (launches on a stream record such uses automatically)."""
        block = getattr(tensor._storage, "block", None)
        if block is not None and block.stream != self.queue:
            self.runtime.allocator.record_use(block, self.queue,
                                              self.runtime.driver.submitted(self.queue))

    def __enter__(self):
        self._previous = getattr(self.runtime._tls, "stream", None)
        self.runtime.set_stream(self)
        return self

    def __exit__(self, *exc):
        self.runtime.set_stream(self._previous)

    def __repr__(self):
        return f"<strata.sim.Stream device=sim:0 queue={self.queue} priority={self.priority}>"


def _word_addr(word) -> int:
    if not word.is_pinned() or word.dtype.itemsize != 8 or word.numel() != 1:
        raise ValueError("expected a one-element 64-bit tensor in pinned memory "
                         "(tensor.pin_memory())")
    return word._storage.addr + word.storage_offset() * 8


class SimEvent(Event):
    """A marker in a sim stream: ``strata.sim.Event(enable_timing=False)``."""

    def __init__(self, enable_timing=False, blocking=False, interprocess=False):
        if interprocess:
            raise NotImplementedError("strata.sim.Event: interprocess events are not supported")
        self._rt = _runtime()
        self.enable_timing = enable_timing
        self.blocking = blocking
        self.queue = None
        self.seq = None
        self.slot = self._rt.event_slot() if enable_timing else None

    def record(self, stream=None) -> None:
        rt = self._rt
        stream = rt.current_stream() if stream is None else stream
        slot = C.MAX_EVENTS if self.slot is None else self.slot
        self.seq = rt.driver.submit(stream.queue, C.OP_EVENT_RECORD, a0=slot)
        self.queue = stream.queue
        if trace.active:
            trace.instant("runtime", "event record", stream=stream.queue, seq=self.seq)

    def query(self) -> bool:
        return self.seq is None or self._rt.driver.fence(self.queue) >= self.seq

    def synchronize(self) -> None:
        if self.seq is not None:
            self._rt.wait(self.queue, self.seq, "event synchronize")

    def wait(self, stream=None) -> None:
        rt = self._rt
        stream = rt.current_stream() if stream is None else stream
        if self.seq is None:
            return
        rt.driver.submit(stream.queue, C.OP_EVENT_WAIT, a0=self.queue, a1=self.seq)
        if trace.active:
            trace.instant("runtime", "event wait", stream=stream.queue, on_queue=self.queue,
                          on_seq=self.seq)

    def elapsed_time(self, end_event) -> float:
        if not (self.enable_timing and end_event.enable_timing):
            raise RuntimeError("Both events must be created with argument 'enable_timing=True'.")
        if self.seq is None or end_event.seq is None:
            raise RuntimeError("Both events must be recorded before calculating elapsed time.")
        if not (self.query() and end_event.query()):
            raise RuntimeError("Both events must be completed before calculating elapsed time.")
        driver = self._rt.driver
        return (driver.event_time(end_event.slot) - driver.event_time(self.slot)) / 1e6

    def __del__(self):
        # A slot whose record command is still queued is not reused (it would be overwritten).
        slot = getattr(self, "slot", None)
        if slot is not None and self.query():
            self._rt.release_event_slot(slot)

    def __repr__(self):
        state = "unrecorded" if self.seq is None else f"queue={self.queue} seq={self.seq}"
        return f"<strata.sim.Event {state}>"
