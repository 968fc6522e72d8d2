"""strata.profiler against torch.profiler: the per-op table (names, call counts, columns, input
shapes, memory), record_function, schedules, the Chrome-trace file, DOT graphs, and that the
tracer leaves no trace of itself when it is off."""

import gzip
import json
import re
import warnings

import numpy as np
import pytest
import strata
import torch
from strata.core import trace
from strata.core.storage import Storage
from strata.dispatch import dispatcher
from strata.ops.op import OpOverload
from strata.profiler import ProfilerActivity, profile, record_function, schedule
from strata.profiler.graph import to_dot

A = np.arange(12, dtype=np.float32).reshape(3, 4) / 7
B = np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)


def _program(m, x, y):
    for _ in range(3):
        z = x + y
        z = z * y
        z.sum()


def _profile(m, fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with m.profiler.profile(activities=[m.profiler.ProfilerActivity.CPU], **kwargs) as prof:
            fn(m, *args)
    return prof


def _rows(table):
    """{name: row cells} of a printed table (cells split on runs of 2+ spaces)."""
    lines = table.splitlines()
    header = re.split(r"\s{2,}", lines[1].strip())
    rows = {}
    for line in lines[3:]:
        if line.startswith("-"):
            break
        cells = re.split(r"\s{2,}", line.strip())
        rows[cells[0]] = dict(zip(header, cells))
    return header, rows


def _counts(prof, names):
    return {e.key: e.count for e in prof.key_averages() if e.key in names}


def test_table_lists_the_ops_with_torchs_call_counts_and_columns():
    s = _profile(strata, _program, strata.tensor(A), strata.tensor(B))
    t = _profile(torch, _program, torch.tensor(A), torch.tensor(B))
    names = {"aten::add", "aten::mul", "aten::sum"}
    assert _counts(s, names) == _counts(t, names) == dict.fromkeys(names, 3)
    s_header, s_rows = _rows(s.key_averages().table(sort_by="self_cpu_time_total"))
    t_header, _ = _rows(t.key_averages().table(sort_by="self_cpu_time_total"))
    assert s_header == t_header
    assert {n: s_rows[n]["# of Calls"] for n in names} == dict.fromkeys(names, "3")


def test_table_sorts_limits_rows_and_totals_self_time():
    prof = _profile(strata, _program, strata.tensor(A), strata.tensor(B))
    averages = prof.key_averages()
    text = averages.table(sort_by="self_cpu_time_total", row_limit=2)
    _, rows = _rows(text)
    assert len(rows) == 2
    by_self = sorted(averages, key=lambda e: e.self_cpu_time_total, reverse=True)
    assert list(rows) == [e.key for e in by_self[:2]]
    total = sum(e.self_cpu_time_total for e in averages)
    total_text = strata.profiler.table.format_time(total)
    assert text.rstrip().endswith(f"Self CPU time total: {total_text}")
    for e in averages:
        assert 0 <= e.self_cpu_time_total <= e.cpu_time_total + 1e-9
        assert e.cpu_time == pytest.approx(e.cpu_time_total / e.count)


def test_self_time_is_total_minus_nested_rows():
    x = strata.tensor(A, requires_grad=True)
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        with record_function("model"):
            loss = (x * 2).sum()
        loss.backward()
    events = prof.events()
    model = next(e for e in events if e.key == "model")
    assert model.is_user_annotation
    assert {c.key for c in model.cpu_children} >= {"aten::mul", "aten::sum"}
    for e in events:
        nested = sum(c.cpu_time_total for c in e.cpu_children)
        assert e.self_cpu_time_total == pytest.approx(e.cpu_time_total - nested)
        for c in e.cpu_children:
            assert c.cpu_parent is e
            assert e.start_ns <= c.start_ns and c.end_ns <= e.end_ns
    backward = {e.key for e in events if e.layer == "autograd"}
    assert {"SumBackward0", "MulBackward0"} <= backward


def test_input_shapes_match_torch_when_grouped_by_shape():
    s = _profile(strata, _program, strata.tensor(A), strata.tensor(B), record_shapes=True)
    t = _profile(torch, _program, torch.tensor(A), torch.tensor(B), record_shapes=True)

    def shapes(prof):
        return {e.key: str(e.input_shapes)
                for e in prof.key_averages(group_by_input_shape=True)
                if e.key in ("aten::add", "aten::mul")}

    assert shapes(s) == shapes(t)
    assert shapes(s)["aten::add"] == "[[3, 4], [3, 4], []]"
    header, rows = _rows(s.key_averages(group_by_input_shape=True).table())
    assert header[-1] == "Input Shapes"
    assert rows["aten::add"]["Input Shapes"] == "[[3, 4], [3, 4], []]"
    assert "Input Shapes" not in s.key_averages().table()   # as PyTorch: only when grouped


def test_profile_memory_counts_bytes_like_torch():
    def program(m, x, y):
        _program.keep = x + y   # keep the result alive: its bytes stay allocated

    s = _profile(strata, program, strata.tensor(A), strata.tensor(B), profile_memory=True)
    t = _profile(torch, program, torch.tensor(A), torch.tensor(B), profile_memory=True)

    def memory(prof):
        row = next(e for e in prof.key_averages() if e.key == "aten::add")
        return row.cpu_memory_usage, row.self_cpu_memory_usage

    assert memory(s) == memory(t) == (48, 48)
    header, rows = _rows(s.key_averages().table())
    assert "CPU Mem" in header and rows["aten::add"]["Self CPU Mem"] == "48 B"


def test_with_stack_points_at_the_users_line():
    x, y = strata.tensor(A), strata.tensor(B)
    with profile(with_stack=True) as prof:
        z = x + y   # the line the stack must name
    del z
    row = next(e for e in prof.key_averages(group_by_stack_n=1) if e.key == "aten::add")
    assert re.fullmatch(r".*test_profiler\.py\(\d+\): test_with_stack_points_at_the_users_line",
                        row.stack[0])
    assert "Source Location" in prof.key_averages(group_by_stack_n=1).table()


def test_record_function_as_decorator_and_outside_a_profile():
    @record_function("helper")
    def helper(x):
        return x + 1

    helper(strata.ones(2))    # not profiling: nothing recorded, nothing raised
    with profile() as prof:
        helper(strata.ones(2))
        helper(strata.ones(2))
    helper_row = next(e for e in prof.key_averages() if e.key == "helper")
    assert helper_row.count == 2 and helper_row.is_user_annotation


def test_schedule_matches_torch_and_calls_on_trace_ready_per_cycle():
    args = dict(wait=1, warmup=1, active=2, repeat=2, skip_first=1)
    s, t = schedule(**args), torch.profiler.schedule(**args)
    assert [s(i).name for i in range(14)] == [t(i).name for i in range(14)]

    def run(m):
        ready = []
        x, y = m.ones(2), m.ones(2)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with m.profiler.profile(activities=[m.profiler.ProfilerActivity.CPU],
                                    schedule=m.profiler.schedule(wait=1, warmup=1, active=2),
                                    on_trace_ready=lambda p: ready.append(
                                        sorted((e.key, e.count) for e in p.key_averages()))
                                    ) as prof:
                for _ in range(9):
                    x + y
                    prof.step()
        return ready

    assert run(strata) == run(torch) == [[("ProfilerStep*", 2), ("aten::add", 2)]] * 2


def test_schedule_rejects_bad_arguments_like_torch():
    for bad in (dict(wait=-1, warmup=1, active=1), dict(wait=0, warmup=1, active=0)):
        with pytest.raises(AssertionError) as s_err:
            schedule(**bad)
        with pytest.raises(AssertionError) as t_err:
            torch.profiler.schedule(**bad)
        assert str(s_err.value) == str(t_err.value)
    with pytest.warns(UserWarning, match="won't be using warmup"):
        schedule(wait=0, warmup=0, active=1)


def test_activities_are_checked():
    with pytest.raises(AssertionError, match="No valid profiler activities found"):
        profile(activities=[])
    with pytest.raises(ValueError, match="specified more than once"):
        profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CPU])
    assert ProfilerActivity.CPU in strata.profiler.supported_activities()


# --- the Chrome trace ----------------------------------------------------------------------------

def _check_chrome(data):
    """The structure chrome://tracing and Perfetto need; returns the X events by track."""
    assert data["displayTimeUnit"] == "ms"
    events = data["traceEvents"]
    named_processes, named_threads, tracks = set(), set(), {}
    for ev in events:
        assert isinstance(ev["ph"], str) and isinstance(ev["name"], str)
        assert isinstance(ev["pid"], int) and isinstance(ev["tid"], int)
        if ev["ph"] == "M":
            if ev["name"] == "process_name":
                named_processes.add(ev["pid"])
            elif ev["name"] == "thread_name":
                named_threads.add((ev["pid"], ev["tid"]))
            assert isinstance(ev["args"], dict)
            continue
        assert isinstance(ev["ts"], (int, float))
        if ev["ph"] == "X":
            assert isinstance(ev["dur"], (int, float)) and ev["dur"] >= 0
            assert isinstance(ev["cat"], str) and isinstance(ev["args"], dict)
            tracks.setdefault((ev["pid"], ev["tid"]), []).append(ev)
        elif ev["ph"] == "i":
            assert ev["s"] == "t"
        else:
            assert ev["ph"] in ("s", "f")
    for pid, tid in tracks:
        assert pid in named_processes and (pid, tid) in named_threads
    return tracks


def _assert_nested(spans):
    """Spans on one track nest or are disjoint (what a flame chart can draw)."""
    spans = sorted(spans, key=lambda e: (e["ts"], -e["dur"]))
    open_ends = []
    tol = 2e-3   # ts/dur are rounded to the nanosecond, in microseconds
    for ev in spans:
        while open_ends and open_ends[-1] <= ev["ts"] + tol:
            open_ends.pop()
        if open_ends:
            assert ev["ts"] + ev["dur"] <= open_ends[-1] + tol, ev
        open_ends.append(ev["ts"] + ev["dur"])


def test_chrome_trace_is_valid_json_with_nested_host_spans(tmp_path):
    x, y = strata.tensor(A, requires_grad=True), strata.tensor(B)
    with profile(record_shapes=True) as prof:
        with record_function("model"):
            loss = (x + y).sum()
        loss.backward()
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    tracks = _check_chrome(json.loads(path.read_text()))
    assert len(tracks) == 1   # one host thread, no device
    (spans,) = tracks.values()
    _assert_nested(spans)
    model = next(e for e in spans if e["name"] == "model")
    add = next(e for e in spans if e["name"] == "aten::add.Tensor"
               and e["args"]["kind"] == "call")
    assert model["ts"] <= add["ts"] and add["ts"] + add["dur"] <= model["ts"] + model["dur"]
    assert add["cat"] == "dispatch"
    assert add["args"]["key"] == "AutogradCPU" and "AutogradCPU" in add["args"]["keyset"]
    assert "autograd_kernel" in add["args"]["kernel"]
    assert add["args"]["shapes"] == [[3, 4], [3, 4], []]
    kernels = [e for e in spans if e["cat"] == "kernel"]
    assert any(e["args"]["outputs"] == ["float32[3, 4]"] for e in kernels)
    assert {"dispatch", "kernel", "autograd", "frontend"} <= {e["cat"] for e in spans}


def test_chrome_trace_gzip(tmp_path):
    with profile() as prof:
        strata.ones(2) + 1
    path = tmp_path / "trace.json.gz"
    prof.export_chrome_trace(str(path))
    with gzip.open(path, "rt") as f:
        _check_chrome(json.load(f))


def test_tensorboard_trace_handler_writes_one_file_per_cycle(tmp_path):
    handler = strata.profiler.tensorboard_trace_handler(str(tmp_path), worker_name="w")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with profile(schedule=schedule(wait=0, warmup=0, active=1), on_trace_ready=handler) as p:
            for _ in range(3):
                strata.ones(2) + 1
                p.step()
    files = sorted(tmp_path.iterdir())
    # Each step is a cycle; leaving the block saves the one in progress too (as PyTorch does).
    assert len(files) == 4 and all(f.name.startswith("w.") for f in files)
    _check_chrome(json.loads(files[0].read_text()))


# --- tracing off costs nothing -------------------------------------------------------------------

def test_tracing_off_restores_the_fast_paths_even_after_an_error():
    fast_redispatch = dispatcher._fast["redispatch"]
    untraced_init = Storage.__init__
    assert OpOverload.__call__ is dispatcher.call
    with pytest.raises(ZeroDivisionError):
        with profile():
            assert OpOverload.__call__ is not dispatcher.call and trace.active
            strata.ones(2) + 1
            1 / 0
    assert trace.active is False
    assert OpOverload.__call__ is dispatcher.call
    assert dispatcher.redispatch is fast_redispatch
    assert Storage.__init__ is untraced_init


def test_nested_sinks_keep_tracing_until_the_last_leaves():
    with profile() as outer:
        with profile() as inner:
            strata.ones(2) + 1
        assert trace.active and OpOverload.__call__ is not dispatcher.call
        strata.ones(2) * 2
    assert not trace.active and OpOverload.__call__ is dispatcher.call
    assert {e.key for e in inner.events()} >= {"aten::add"}
    assert {e.key for e in outer.events()} >= {"aten::add", "aten::mul"}
    assert "aten::mul" not in {e.key for e in inner.events()}


# --- the sim device: device tracks and launch -> execution flows ---------------------------------

def _sim():
    sim = pytest.importorskip("strata.sim")
    if not sim.is_available():
        pytest.skip("the sim device cannot run here")
    return sim


def test_sim_device_time_in_table_and_device_track_in_chrome_trace(tmp_path):
    _sim()
    x = strata.tensor(A, device="sim")
    y = strata.tensor(B, device="sim")
    with profile() as prof:
        z = (x + y) * y
    assert z.cpu().shape == (3, 4)
    add = next(e for e in prof.key_averages() if e.key == "aten::add")
    assert add.self_device_time_total > 0
    assert "Self SIM" in prof.key_averages().table()
    path = tmp_path / "sim.json"
    prof.export_chrome_trace(str(path))
    data = json.loads(path.read_text())
    tracks = _check_chrome(data)
    device_tracks = [k for k, spans in tracks.items() if spans[0]["cat"] == "device"]
    assert device_tracks, "no device track"
    device_spans = [e for k in device_tracks for e in tracks[k]]
    assert {"aten::add.Tensor", "aten::mul.Tensor"} <= {e["name"] for e in device_spans}
    starts = {e["id"]: e for e in data["traceEvents"] if e["ph"] == "s"}
    finishes = {e["id"]: e for e in data["traceEvents"] if e["ph"] == "f"}
    assert starts and starts.keys() == finishes.keys()
    for flow_id, start in starts.items():
        assert finishes[flow_id]["ts"] >= start["ts"]   # executed after it was launched


# --- graph rendering -----------------------------------------------------------------------------

def test_to_dot_draws_the_autograd_graph_like_make_dot():
    w = strata.ones(3, requires_grad=True)
    x = strata.ones(3, requires_grad=True)
    y = (w * x).sum()
    dot = to_dot(y, params={"w": w})
    assert dot.startswith("digraph {") and dot.rstrip().endswith("}")
    labels = dict(re.findall(r'\t(\d+) \[label="([^"]*)"', dot))
    edges = re.findall(r"\t(\d+) -> (\d+)", dot)
    by_label = {v: k for k, v in labels.items()}
    assert {"SumBackward0", "MulBackward0", "w\\n(3)", "(3)", "output\\n()"} == set(labels.values())
    assert sorted(edges) == sorted([
        (by_label["w\\n(3)"], by_label["MulBackward0"]),
        (by_label["(3)"], by_label["MulBackward0"]),
        (by_label["MulBackward0"], by_label["SumBackward0"]),
        (by_label["SumBackward0"], by_label["output\\n()"]),
    ])
    assert dot.count("fillcolor=lightblue") == 2


def test_memory_units_print_as_torch():
    from strata.profiler.table import format_memory
    from torch.autograd.profiler_util import _format_memory
    for nbytes in (0, 48, -512, 1023, 1024, 5000, -3 * 1024 ** 2, 7 * 1024 ** 3 + 5):
        assert format_memory(nbytes) == _format_memory(nbytes)
