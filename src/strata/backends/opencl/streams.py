"""Streams and events of the OpenCL device (``strata.opencl.Stream``, ``strata.opencl.Event``).

A stream is one in-order ``cl.CommandQueue`` with profiling enabled; every enqueue gets the next
sequence number of its stream. Kernels are enqueued without an event (driver.py's Note
[Launches without events]): the stream keeps only the ``cl.Event``s it has (copies, markers,
barriers) of work not yet known to be complete, and where it must learn whether a sequence
number has passed (the caching allocator asks ``completed(seq)`` before reusing a block another
stream used) it enqueues a marker after the commands so far: in an in-order queue, that marker
completes after all of them. An event is a ``clEnqueueMarker`` on a queue; its profiling end
time is the moment the queue reached it, so ``elapsed_time`` is the difference of two markers'
end times.
Semantics as CUDA's (reference/device.md sections 2-3).

Note [Flushing]: an OpenCL driver may hold enqueued commands on the host until the queue is
flushed (``clFlush``; NVIDIA's does), where a CUDA launch reaches the GPU at once. So a stream
flushes its queue once ``FLUSH_EVERY`` commands are waiting, and at every sync point (``finish``
flushes). On PoCL a flush costs about 0.2 us of host time and an ``x + y`` the same with or
without one.
"""

import collections

from ...core.device import as_device
from ...runtime import Event, Stream

_COMPLETE = 0     # CL_COMPLETE
FLUSH_EVERY = 8   # commands a queue may hold unflushed (Note [Flushing])


def _runtime(device):
    from .runtime import device_index, get  # runtime.py imports this module
    return get(device_index(None if device is None else as_device(device)))


class OpenCLStream(Stream):
    """``strata.opencl.Stream(device=None, priority=0)``: a new command queue."""

    def __init__(self, device=None, priority=0, _owner=None):
        if device is not None and as_device(device).type != "opencl":
            raise ValueError(f"strata.opencl.Stream: expected an opencl device, got {device}")
        self.runtime = _owner or _runtime(device)
        self.priority = priority
        self.device = self.runtime.device
        self.seq = 0                              # sequence number of the last enqueue
        self._done = 0                            # every seq <= this has completed
        self._pending = collections.deque()       # (seq, cl.Event, host array kept alive)
        self.unflushed = 0                        # commands since the last flush
        self.id = self.runtime.new_queue(self)

    def launched(self):
        """Account for one enqueued command without an event (a kernel)."""
        self.seq += 1
        self.unflushed += 1
        if self.unflushed >= FLUSH_EVERY:
            self.flush()

    def enqueued(self, event, keep=None):
        """Account for one enqueued command that has an event; ``keep`` stays alive until it
        completes (the host array of a non-blocking copy)."""
        self.launched()
        self._pending.append((self.seq, event, keep))
        if len(self._pending) > 256:
            self._retire()

    def flush(self):
        """Submit the queue's commands to the device (Note [Flushing])."""
        self.runtime.driver.check(self.runtime.driver.flush(self.handle), "clFlush")
        self.unflushed = 0

    def _retire(self):
        pending = self._pending
        while pending and pending[0][1].command_execution_status == _COMPLETE:
            self._done = pending.popleft()[0]

    def completed(self, seq) -> bool:
        if seq <= self._done:
            return True
        pending = self._pending
        if self.seq > self._done and (not pending or pending[-1][0] < self.seq):
            from .runtime import cl
            # the commands since the last event have none: a marker covers them
            pending.append((self.seq, cl().enqueue_marker(self.queue), None))
        self.flush()
        self._retire()
        return seq <= self._done

    def query(self) -> bool:
        return self.completed(self.seq)

    def synchronize(self) -> None:
        self.queue.finish()
        self.unflushed = 0
        self._pending.clear()
        self._done = self.seq
        self.runtime.asserts.check(self)      # asserts.py's Note [Device-side asserts]

    def wait_event(self, event) -> None:
        event.wait(self)

    def record_event(self, event=None):
        event = event or OpenCLEvent()
        event.record(self)
        return event

    def __enter__(self):
        self._saved = self.runtime.current_stream()
        self.runtime.set_stream(self)
        return self

    def __exit__(self, *exc):
        self.runtime.set_stream(self._saved)

    def __eq__(self, other):
        return isinstance(other, OpenCLStream) and other.queue is self.queue

    def __hash__(self):
        return id(self.queue)

    def __repr__(self):
        return f"<strata.opencl.Stream device={self.device} id={self.id}>"


class OpenCLEvent(Event):
    """``strata.opencl.Event(enable_timing=False, blocking=False, interprocess=False)``."""

    def __init__(self, enable_timing=False, blocking=False, interprocess=False):
        self.enable_timing = enable_timing
        self._marker = None       # the cl.Event of the last record()
        self._stream = None

    def record(self, stream=None) -> None:
        from .runtime import cl
        stream = stream or _runtime(None).current_stream()
        self._marker = cl().enqueue_marker(stream.queue)
        self._stream = stream
        stream.enqueued(self._marker)

    def query(self) -> bool:
        if self._marker is None:
            return True
        self._stream.flush()
        return self._marker.command_execution_status == _COMPLETE

    def synchronize(self) -> None:
        if self._marker is not None:
            self._marker.wait()

    def wait(self, stream=None) -> None:
        """Later work on ``stream`` waits for this marker; the host does not block."""
        if self._marker is None:
            return
        from .runtime import cl
        stream = stream or _runtime(None).current_stream()
        self._stream.flush()     # another queue's marker must be submitted to be reached
        stream.enqueued(cl().enqueue_barrier(stream.queue, wait_for=[self._marker]))

    def elapsed_time(self, end_event) -> float:
        """Milliseconds from this event to ``end_event`` (device time, from profiling)."""
        if not (self.enable_timing and end_event.enable_timing):
            raise RuntimeError("Both events must be created with argument 'enable_timing=True'.")
        if self._marker is None or end_event._marker is None:
            raise RuntimeError("Both events must be recorded before calculating elapsed time.")
        if not (self.query() and end_event.query()):
            raise RuntimeError("Both events must be completed before calculating elapsed time.")
        return (end_event._marker.profile.end - self._marker.profile.end) / 1e6

    def __repr__(self):
        return f"<strata.opencl.Event recorded={self._marker is not None}>"
