"""The one tracer every layer reports to.

It lives in ``core/`` because every layer may import core, while the profiler (the last layer)
only *consumes* events. Reporting costs one attribute check when tracing is off:

    from ..core import trace
    if trace.active:
        span = trace.begin("runtime", "launch", stream=0, seq=12)
        ...
        trace.end(span, fence=12)

Layers, top to bottom: "frontend", "dispatch", "autograd", "kernel", "runtime", "driver",
"device", "sync". Timestamps are ``time.perf_counter_ns()`` of the host; the device reports its own
start/end times (same clock: both processes share the machine's monotonic clock).
"""

import threading
import time

active = False          # read by every layer before reporting
_sinks = []             # objects with .record(event)
_local = threading.local()
_now = time.perf_counter_ns


class Event:
    """One span (``end_ns`` set) or instant (``end_ns is None`` until ended) of one layer."""

    __slots__ = ("layer", "name", "start_ns", "end_ns", "depth", "fields", "thread")

    def __init__(self, layer, name, start_ns, depth, fields):
        self.layer = layer
        self.name = name
        self.start_ns = start_ns
        self.end_ns = None
        self.depth = depth
        self.fields = fields
        self.thread = threading.get_ident()

    @property
    def duration_ns(self):
        return None if self.end_ns is None else self.end_ns - self.start_ns

    def __repr__(self):
        return f"Event({self.layer}:{self.name} depth={self.depth} {self.fields})"


def _depth():
    return getattr(_local, "depth", 0)


def begin(layer, name, /, **fields) -> Event:
    """Open a span; spans opened before it is ended nest under it."""
    ev = Event(layer, name, _now(), _depth(), fields)
    _local.depth = ev.depth + 1
    for sink in _sinks:
        sink.record(ev)
    return ev


def end(ev: Event, /, **fields) -> None:
    ev.end_ns = _now()
    if fields:
        ev.fields.update(fields)
    _local.depth = ev.depth


def instant(layer, name, /, **fields) -> Event:
    ev = Event(layer, name, _now(), _depth(), fields)
    ev.end_ns = ev.start_ns
    for sink in _sinks:
        sink.record(ev)
    return ev


def record(ev: Event) -> None:
    """Report an event whose times were measured elsewhere (e.g. by the device)."""
    for sink in _sinks:
        sink.record(ev)


def add_sink(sink) -> None:
    global active
    _sinks.append(sink)
    active = True
    for hook in _on_change:
        hook(True)


def remove_sink(sink) -> None:
    global active
    _sinks.remove(sink)
    active = bool(_sinks)
    if not active:
        for hook in _on_change:
            hook(False)


_on_change = []   # layers that swap in traced fast paths (the dispatcher) register here


def on_change(hook) -> None:
    """``hook(active: bool)`` runs whenever tracing turns on or off."""
    _on_change.append(hook)
