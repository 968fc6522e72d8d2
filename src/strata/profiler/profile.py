"""``strata.profiler.profile``: ``torch.profiler.profile`` over the one tracer (``core.trace``).

    with strata.profiler.profile(record_shapes=True) as prof:
        with strata.profiler.record_function("model"):
            loss = model(x).sum()
        loss.backward()
    print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=10))
    prof.export_chrome_trace("trace.json")          # open in https://ui.perfetto.dev

While it records, the profiler is one more trace sink: the dispatcher swaps in its traced call
path and every layer reports. Leaving the ``with`` block removes the sink, and with it every cost.
A schedule (``schedule(wait=1, warmup=1, active=2)``) with ``prof.step()`` records some steps of
a loop and hands each finished cycle to ``on_trace_ready``, as PyTorch does.
"""

import contextlib
import enum
import os
import sys
import time
import warnings

from ..core import trace
from .. import runtime
from .chrome import write_chrome_trace
from .events import function_events


class ProfilerActivity(enum.Enum):
    """What to record: host (CPU) activity, and the accelerator's (``SIM``) device activity.
    ``CUDA``/``XPU``/``MTIA``/``HPU``/``PrivateUse1`` are accepted like in PyTorch and record
    nothing, since no such device exists here."""

    CPU = "CPU"
    SIM = "SIM"
    CUDA = "CUDA"
    XPU = "XPU"
    MTIA = "MTIA"
    HPU = "HPU"
    PrivateUse1 = "PrivateUse1"


def supported_activities() -> set:
    return {ProfilerActivity.CPU, ProfilerActivity.SIM}


class ProfilerAction(enum.Enum):
    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3


def schedule(*, wait: int, warmup: int, active: int, repeat: int = 0, skip_first: int = 0,
             skip_first_wait: int = 0):
    """PyTorch's step schedule: skip ``skip_first`` steps, then cycles of ``wait`` idle steps,
    ``warmup`` steps (traced, discarded) and ``active`` recorded steps; ``repeat`` cycles (0:
    until the end). The last active step of a cycle is ``RECORD_AND_SAVE``."""
    if wait < 0 or warmup < 0 or active <= 0 or repeat < 0 or skip_first < 0:
        raise AssertionError(
            f"Invalid profiler schedule arguments. Got wait={wait} (need >= 0), warmup={warmup} "
            f"(need >= 0), active={active} (need > 0), repeat={repeat} (need >= 0), "
            f"skip_first={skip_first} (need >= 0).")
    if warmup == 0:
        warnings.warn("Profiler won't be using warmup, this can skew profiler results",
                      stacklevel=2)

    def schedule_fn(step: int) -> ProfilerAction:
        if step < 0:
            raise AssertionError(f"Step must be non-negative. Got {step}.")
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        if skip_first_wait != 0:
            step += wait
        num_steps = wait + warmup + active
        if repeat > 0 and step / num_steps >= repeat:
            return ProfilerAction.NONE
        mod_step = step % num_steps
        if mod_step < wait:
            return ProfilerAction.NONE
        if mod_step < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if mod_step < num_steps - 1 \
            else ProfilerAction.RECORD_AND_SAVE

    return schedule_fn


def _default_schedule(_step):
    return ProfilerAction.RECORD


def tensorboard_trace_handler(dir_name, worker_name=None, use_gzip=False):
    """An ``on_trace_ready`` that writes each cycle's Chrome trace into ``dir_name``."""
    def handler(prof):
        import socket   # only here: a slow import, for the default worker name
        nonlocal worker_name
        os.makedirs(dir_name, exist_ok=True)
        if not worker_name:
            worker_name = f"{socket.gethostname()}_{os.getpid()}"
        name = f"{worker_name}.{time.time_ns()}.pt.trace.json" + (".gz" if use_gzip else "")
        prof.export_chrome_trace(os.path.join(dir_name, name))
    return handler


_STRATA_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def _user_stack():
    """The Python stack outside strata, innermost first (``"train.py(12): step"``)."""
    frames = []
    f = sys._getframe(2)
    while f is not None:
        filename = f.f_code.co_filename
        if not filename.startswith(_STRATA_DIR) and not filename.startswith("<frozen"):
            frames.append(f"{filename}({f.f_lineno}): {f.f_code.co_name}")
        f = f.f_back
    return frames


class _Collector:
    """The profiler's trace sink: it keeps every event (and, if asked, the user's stack)."""

    def __init__(self, with_stack):
        self.events = []
        self.record = self._record_with_stack if with_stack else self.events.append

    def _record_with_stack(self, ev):
        if ev.layer in ("dispatch", "autograd", "frontend") and ev.end_ns is None:
            ev.fields["stack"] = _user_stack()
        self.events.append(ev)


class profile:
    """Record what every layer did inside the ``with`` block (see the module docstring).

    ``activities``: ``ProfilerActivity.CPU`` (host events) and/or ``ProfilerActivity.SIM``
    (device executions; the profiler synchronises started devices before it stops, to collect
    them). ``record_shapes`` keeps input shapes (``key_averages(group_by_input_shape=True)``),
    ``profile_memory`` the bytes each op allocated, ``with_stack`` the user's Python stack
    (``key_averages(group_by_stack_n=5)``).
    """

    def __init__(self, *, activities=None, schedule=None, on_trace_ready=None,
                 record_shapes=False, profile_memory=False, with_stack=False):
        if activities is None:
            acts = supported_activities()
        else:
            acts = set()
            for a in activities:
                if not isinstance(a, ProfilerActivity):
                    raise TypeError(f"Expected ProfilerActivity, got {type(a)}")
                if a in acts:
                    raise ValueError(f"Activity {a} specified more than once")
                acts.add(a)
        if not acts:
            raise AssertionError("No valid profiler activities found")
        self.activities = acts
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.schedule = schedule or _default_schedule
        self.record_steps = schedule is not None
        self.on_trace_ready = on_trace_ready
        self.step_num = 0
        self.current_action = self.schedule(0)
        self._collector = None
        self._step_span = None
        self._events = []           # the tracer events of the last finished recording
        self._start_ns = self._stop_ns = None
        self._function_events = None

    # --- lifecycle ------------------------------------------------------------------------------
    def __enter__(self):
        self.start()
        return self

    def __exit__(self, exc_type, exc, tb):
        self.stop()

    def start(self):
        self._transit(ProfilerAction.NONE, self.current_action)
        self._open_step()

    def stop(self):
        self._close_step()
        self._transit(self.current_action, None)

    def step(self):
        """Mark the start of the next step of the user's loop (advances the schedule)."""
        self._close_step()
        prev = self.current_action
        self.step_num += 1
        self.current_action = self.schedule(self.step_num)
        self._transit(prev, self.current_action)
        self._open_step()

    def _open_step(self):
        if self.record_steps and self._collector is not None:
            self._step_span = trace.begin("frontend", f"ProfilerStep#{self.step_num}",
                                          kind="user_annotation")

    def _close_step(self):
        if self._step_span is not None:
            trace.end(self._step_span)
            self._step_span = None

    def _transit(self, prev, current):
        A = ProfilerAction
        recording = (A.RECORD, A.RECORD_AND_SAVE)
        if prev == A.RECORD and current in (A.NONE, A.WARMUP):
            warnings.warn(f"Incorrect schedule: RECORD followed by {current.name}", stacklevel=3)
        if prev == A.WARMUP and current == A.NONE:
            warnings.warn("Incorrect schedule: WARMUP followed by NONE", stacklevel=3)
        if prev == A.RECORD_AND_SAVE or (prev == A.RECORD and current is None):
            self._finish(save=True)
        elif prev == A.RECORD and current not in recording:
            self._finish(save=True, ready=False)   # PyTorch: stopped, but no on_trace_ready
        elif prev == A.WARMUP and current not in (A.WARMUP,) + recording:
            self._finish(save=False)
        if current in recording:
            if prev == A.WARMUP:
                self._collector.events.clear()   # warmup steps were traced, not kept
                self._start_ns = trace._now()
            elif self._collector is None:
                self._begin()
        elif current == A.WARMUP and self._collector is None:
            self._begin()

    def _begin(self):
        self._collector = _Collector(self.with_stack)
        self._start_ns = trace._now()
        trace.add_sink(self._collector)

    def _finish(self, save, ready=True):
        collector = self._collector
        if collector is None:
            return
        try:
            if save and ProfilerActivity.SIM in self.activities:
                # Device executions are reported when the host synchronises: collect them now.
                runtime.synchronize_all("profiler: collect device events")
        finally:   # a device error raised by that sync must not leave tracing on
            self._stop_ns = trace._now()
            trace.remove_sink(collector)
            self._collector = None
        if not save:
            return
        self._events = self._filter(collector.events)
        self._function_events = None
        if ready and self.on_trace_ready is not None:
            self.on_trace_ready(self)

    def _filter(self, events):
        host = ProfilerActivity.CPU in self.activities
        device = ProfilerActivity.SIM in self.activities
        return [e for e in events if (device if e.layer == "device" else host)]

    # --- results --------------------------------------------------------------------------------
    def trace_events(self):
        """The raw ``core.trace`` events of the last recording, every layer, in report order."""
        return list(self._events)

    def events(self):
        """One ``FunctionEvent`` per op call, backward node and ``record_function`` span."""
        if self._function_events is None:
            self._function_events = function_events(
                self._events, self._stop_ns, record_shapes=self.record_shapes,
                with_stack=self.with_stack, profile_memory=self.profile_memory,
                use_device=self._device_type())
        return self._function_events

    def _device_type(self):
        """The device the table's device columns name (``Self OPENCL``, as ``Self CUDA``):
        the one whose executions were recorded, ``sim`` when none were."""
        if ProfilerActivity.SIM not in self.activities:
            return None
        devices = (e.fields.get("device", "sim") for e in self._events if e.layer == "device")
        return str(next(devices, "sim")).split(":")[0]

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0,
                     group_by_overload_name=False):
        return self.events().key_averages(group_by_input_shape, group_by_stack_n,
                                          group_by_overload_name)

    def export_chrome_trace(self, path):
        """Write the recording as Chrome-trace JSON (``.gz``: compressed) for Perfetto."""
        write_chrome_trace(path, self._events, self._start_ns, self._stop_ns)

    def __repr__(self):
        return (f"<strata.profiler.profile step={self.step_num} "
                f"action={self.current_action.name} events={len(self._events)}>")


class record_function(contextlib.ContextDecorator):
    """A named span in the profile (a "user annotation"), as a ``with`` block or a decorator:

        with record_function("attention"):
            ...
    """

    def __init__(self, name: str, args=None):
        self.name = name
        self.args = args
        self._spans = []

    def __enter__(self):
        if trace.active:
            fields = {"kind": "user_annotation"}
            if self.args is not None:
                fields["args"] = self.args
            self._spans.append(trace.begin("frontend", self.name, **fields))
        else:
            self._spans.append(None)
        return self

    def __exit__(self, exc_type, exc, tb):
        span = self._spans.pop()
        if span is not None:
            trace.end(span)
        return False
