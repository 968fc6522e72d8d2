"""Chrome-trace JSON (the Trace Event Format that chrome://tracing and Perfetto open).

One process track for the host with a thread track per Python thread, and, when a device ran
commands, one process track for the device with a thread track per queue. Spans are complete
("X") events, instants are "i" events; ``ts``/``dur`` are microseconds. A flow arrow ("s" -> "f")
links each host launch to the command's execution on the device, so the asynchrony is visible:
the host returns from ``launch`` long before the device starts the kernel. Collectives run on
the process group's worker thread, whose track (``strata-comm <group>``) is the comm track; an
arrow links each collective's post to its run.

    {"traceEvents": [{"ph": "X", "cat": "dispatch", "name": "aten::add.Tensor",
                      "pid": 4242, "tid": 1, "ts": 12.5, "dur": 30.1, "args": {...}}, ...],
     "displayTimeUnit": "ms"}
"""

import json
import os
import threading

from .tree import build


def _jsonable(value):
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    return str(value)


def _thread_names():
    """ident -> (native id, name) of the threads still alive."""
    return {t.ident: (t.native_id, t.name) for t in threading.enumerate()}


def chrome_trace(events, base_ns=None, stop_ns=None) -> dict:
    """The trace of ``events`` (core.trace Events) as a Chrome-trace dict."""
    host_pid = os.getpid()
    base_ns = min((e.start_ns for e in events), default=0) if base_ns is None else base_ns
    names = _thread_names()
    tids = {}                 # host thread ident -> tid
    device_tracks = {}        # (pid, queue) -> track name
    device_names = {}         # pid -> device name
    synthetic_pids = {}
    out = []
    flows = 0

    def us(ns):
        return round((ns - base_ns) / 1000, 3)

    def host_tid(ident):
        if ident not in tids:
            tids[ident] = names.get(ident, (ident, None))[0]
        return tids[ident]

    def emit(node, pid, tid):
        ev = node.event
        item = {"ph": "X", "cat": ev.layer, "name": ev.name, "pid": pid, "tid": tid,
                "ts": us(ev.start_ns), "args": _jsonable(ev.fields)}
        if ev.end_ns is not None and ev.end_ns == ev.start_ns and ev.layer != "device":
            item["ph"] = "i"
            item["s"] = "t"
        else:
            item["dur"] = round(node.duration_ns / 1000, 3)
        out.append(item)

    def visit(node):
        nonlocal flows
        ev = node.event
        if ev.layer == "device":
            f = ev.fields
            device = f.get("device", "device")
            pid = f.get("pid")
            if not isinstance(pid, int):   # Perfetto wants numbers: one made-up pid per device
                pid = synthetic_pids.setdefault(device, host_pid + 1 + len(synthetic_pids))
            queue = f.get("queue", 0)
            device_names[pid] = device
            device_tracks[(pid, queue)] = f.get("track", f"queue {queue}")
            emit(node, pid, queue)
            launch = node.parent
            if launch is not None:
                flows += 1
                common = {"id": flows, "cat": "launch", "name": "launch"}
                out.append({"ph": "s", "pid": host_pid, "tid": host_tid(launch.event.thread),
                            "ts": us(launch.event.start_ns), **common})
                out.append({"ph": "f", "bp": "e", "pid": pid, "tid": queue,
                            "ts": us(ev.start_ns), **common})
            return
        emit(node, host_pid, host_tid(ev.thread))
        if ev.layer == "comm" and ev.fields.get("kind") == "run" and node.parent is not None:
            flows += 1   # an arrow from the caller's post to the comm worker's run
            common = {"id": flows, "cat": "comm", "name": "post"}
            out.append({"ph": "s", "pid": host_pid, "tid": host_tid(node.parent.event.thread),
                        "ts": us(node.parent.event.start_ns), **common})
            out.append({"ph": "f", "bp": "e", "pid": host_pid, "tid": host_tid(ev.thread),
                        "ts": us(ev.start_ns), **common})
        for child in node.children:
            visit(child)

    for root in build(events, stop_ns):
        visit(root)

    meta = [{"ph": "M", "name": "process_name", "pid": host_pid, "tid": 0,
             "args": {"name": "strata host (python)"}},
            {"ph": "M", "name": "process_sort_index", "pid": host_pid, "tid": 0,
             "args": {"sort_index": 0}}]
    for ident, tid in tids.items():
        name = names.get(ident, (None, None))[1] or f"thread {ident}"
        meta.append({"ph": "M", "name": "thread_name", "pid": host_pid, "tid": tid,
                     "args": {"name": f"{name} (tid {tid})"}})
    for i, (pid, device) in enumerate(device_names.items(), start=1):
        meta.append({"ph": "M", "name": "process_name", "pid": pid, "tid": 0,
                     "args": {"name": device if pid in synthetic_pids.values()
                              else f"{device} (device process {pid})"}})
        meta.append({"ph": "M", "name": "process_sort_index", "pid": pid, "tid": 0,
                     "args": {"sort_index": i}})
    for (pid, queue), track in device_tracks.items():
        meta.append({"ph": "M", "name": "thread_name", "pid": pid, "tid": queue,
                     "args": {"name": track}})
    return {"traceEvents": meta + out, "displayTimeUnit": "ms",
            "otherData": {"producer": "strata.profiler", "base_time_ns": base_ns}}


def write_chrome_trace(path, events, base_ns=None, stop_ns=None) -> None:
    """Write the trace to ``path`` (gzip-compressed when it ends in ``.gz``)."""
    data = json.dumps(chrome_trace(events, base_ns, stop_ns))
    path = os.fspath(path)
    if path.endswith(".gz"):
        import gzip   # only here: importing it costs more than the rest of the profiler
        with gzip.open(path, "wt", encoding="utf-8") as f:
            f.write(data)
    else:
        with open(path, "w", encoding="utf-8") as f:
            f.write(data)
