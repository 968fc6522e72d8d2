"""The sim device end to end: asynchrony, streams, events, copies, memory, errors, traces.

Asynchrony is shown by ordering, never by timing: a stream told to wait on a word of pinned
memory (``Stream.wait_value``, CUDA's cuStreamWaitValue64) cannot run the work queued behind
it until the test writes the word, so "the launch returned before the device ran it" is a fact
the test controls. One device process serves the whole module (it starts on first use).
"""

import gc
import os
import pathlib
import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest
import strata
from strata.core import trace

pytestmark = pytest.mark.skipif(not strata.sim.is_available(), reason="needs memfd/eventfd")
SRC = str(pathlib.Path(__file__).resolve().parents[1] / "src")


@pytest.fixture
def gate():
    """A stream gate: ``hold()`` makes the current stream wait; ``release()`` lets it go."""
    word = strata.zeros(1, dtype=strata.int64).pin_memory()

    class Gate:
        def hold(self, stream=None):
            word[0] = 0
            (stream or strata.sim.current_stream()).wait_value(word, 1)

        def release(self):
            word[0] = 1

    g = Gate()
    yield g
    g.release()
    strata.sim.synchronize()


class Collect:
    def __init__(self):
        self.events = []

    def record(self, ev):
        self.events.append(ev)

    def __enter__(self):
        trace.add_sink(self)
        return self

    def __exit__(self, *exc):
        trace.remove_sink(self)


# --- asynchrony, streams, events ------------------------------------------------------------------

def test_launch_returns_before_the_device_runs_it(gate):
    x = strata.ones(8, device="sim")
    stream = strata.sim.current_stream()
    gate.hold()
    z = x + x                                   # returns at once: the device is held
    done = strata.sim.Event()
    done.record()
    assert not done.query() and not stream.query()
    assert z.shape == (8,) and z.device == strata.device("sim:0")
    gate.release()
    done.synchronize()
    assert done.query() and stream.query()
    assert z.tolist() == [2.0] * 8


def test_results_are_correct_without_explicit_sync():
    x = strata.arange(12.0).reshape(3, 4).to("sim")
    y = (x * 2 + 1).sum(1)
    w = y.softmax(0)
    assert y.tolist() == [16.0, 48.0, 80.0]
    assert abs(w.sum().item() - 1.0) < 1e-6


def test_cross_stream_event_wait(gate):
    x = strata.ones(4, device="sim")
    main = strata.sim.current_stream()
    side = strata.sim.Stream()
    gate.hold(main)
    a = x * 3                                  # queued on main, behind the gate
    ready = main.record_event()
    with strata.sim.stream(side):
        assert strata.sim.current_stream() is side
        side.wait_event(ready)                 # the device makes `side` wait, not the host
        b = a + 1
    assert strata.sim.current_stream() is main
    side_done = side.record_event()
    assert not side_done.query() and not side.query()
    gate.release()
    main.wait_stream(side)                     # reading b on main needs side's work first
    assert b.tolist() == [4.0] * 4
    assert side.query()


def test_event_elapsed_time_and_errors():
    start, end = strata.sim.Event(enable_timing=True), strata.sim.Event(enable_timing=True)
    x = strata.ones(64, 64, device="sim")
    start.record()
    x @ x
    end.record()
    end.synchronize()
    ms = start.elapsed_time(end)
    assert isinstance(ms, float) and ms >= 0
    plain = strata.sim.Event()
    assert plain.query()                       # never recorded: nothing to wait for
    plain.wait()                               # a no-op, as in CUDA
    with pytest.raises(RuntimeError, match="enable_timing=True"):
        start.elapsed_time(plain)
    with pytest.raises(RuntimeError, match="recorded"):
        start.elapsed_time(strata.sim.Event(enable_timing=True))


def test_synchronize_waits_for_every_stream(gate):
    side = strata.sim.Stream()
    x = strata.ones(4, device="sim")
    side.wait_stream(strata.sim.current_stream())   # x is written on the current stream
    gate.hold(side)
    with strata.sim.stream(side):
        x.mul_(5)
    gate.release()
    strata.sim.synchronize()
    assert side.query()
    assert x.tolist() == [5.0] * 4


# --- copies, pinned memory, mixed devices ---------------------------------------------------------

def test_non_blocking_copies_with_pinned_memory(gate):
    host = strata.arange(6.0).pin_memory()
    assert host.is_pinned() and not strata.arange(3.0).is_pinned()
    out = strata.full((6,), -1.0).pin_memory()
    gate.hold()
    dev = host.to("sim", non_blocking=True)        # a device command; the host goes on
    out.copy_(dev * 10, non_blocking=True)         # lands in pinned memory, later
    back = dev.to("cpu", non_blocking=True)
    assert back.is_pinned() and back.device == strata.device("cpu")
    assert out.tolist() == [-1.0] * 6              # not arrived yet: the device is held
    gate.release()
    strata.sim.synchronize()
    assert out.tolist() == [0.0, 10.0, 20.0, 30.0, 40.0, 50.0]
    assert back.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]


def test_blocking_copies_round_trip_every_dtype():
    for dt in (strata.float32, strata.float64, strata.float16, strata.bfloat16, strata.int64,
               strata.int32, strata.int16, strata.int8, strata.uint8, strata.bool):
        x = strata.arange(-3, 5).to(dt)
        s = x.to("sim")
        assert s.dtype is dt and s.device.type == "sim"
        assert s.cpu().tolist() == x.tolist()
        assert s.to(strata.float64).cpu().tolist() == x.to(strata.float64).tolist()


def test_copy_between_devices_with_strides_and_broadcast():
    x = strata.arange(12.0).reshape(3, 4)
    s = strata.zeros(4, 3, device="sim")
    s.copy_(x.t())                                 # strided host source
    assert s.cpu().tolist() == x.t().tolist()
    s.t()[1:].copy_(strata.tensor([7.0, 8.0]).to("sim").unsqueeze(1))   # broadcast (2, 1)
    expected = x.t().clone()
    expected.t()[1:] = strata.tensor([7.0, 8.0]).unsqueeze(1)
    assert s.cpu().tolist() == expected.tolist()
    out = strata.empty(4, 3)
    out.copy_(s)                                   # device -> existing host tensor
    assert out.tolist() == expected.tolist()


def test_mixing_devices_raises_and_cpu_scalars_are_allowed():
    s = strata.ones(3, device="sim")
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        s + strata.ones(3)
    assert (s * strata.tensor(2.5)).tolist() == [2.5] * 3
    with pytest.raises(TypeError, match="can't convert sim device type tensor to numpy"):
        s.numpy()


def test_sync_points_report_their_reason(gate):
    s = strata.ones(2, device="sim")
    with Collect() as c:
        s.sum().item()
        repr(s)
        bool(s[0] > 0)
        s.tolist()
        gate.hold()
        s.mul_(1)
        threading.Timer(0.2, gate.release).start()    # the host is waiting by then
        strata.sim.synchronize()
    reasons = [e.name for e in c.events if e.layer == "sync"]
    assert reasons.count("copy to cpu") >= 4 and "strata.sim.synchronize()" in reasons
    sync = next(e for e in c.events if e.layer == "sync")
    assert sync.fields["mode"] in ("poll", "interrupt") and "waited_ns" in sync.fields


@pytest.mark.parametrize("mode", ["poll", "interrupt"])
def test_both_sync_modes(mode, gate):
    before = strata.sim.get_sync_mode()
    strata.sim.set_sync_mode(mode)
    try:
        x = strata.ones(3, device="sim")
        with Collect() as c:
            assert (x + 1).tolist() == [2.0] * 3
        assert {e.fields["mode"] for e in c.events if e.layer == "sync"} == {mode}
    finally:
        strata.sim.set_sync_mode(before)


# --- data-dependent shapes, random numbers, errors ------------------------------------------------

def test_data_dependent_ops_sync_and_allocate_afterwards():
    x = strata.tensor([0.0, 3.0, -1.0, 0.0, 5.0]).to("sim")
    assert x.nonzero().cpu().tolist() == [[1], [2], [4]]
    assert x[x > 0].cpu().tolist() == [3.0, 5.0]
    values, counts = strata.unique(strata.tensor([3, 1, 3, 2]).to("sim"), return_counts=True)
    assert (values.device.type, values.tolist(), counts.tolist()) == ("sim", [1, 2, 3], [1, 1, 2])


def test_bad_input_raises_the_cpu_error_at_the_call():
    s = strata.ones(2, 3, device="sim")
    with pytest.raises(RuntimeError, match="size mismatch|shapes cannot be multiplied"):
        s @ s
    with pytest.raises(IndexError):
        s.sum(5)


def test_kernel_error_is_reported_at_the_next_sync_with_op_and_launch_site():
    x = strata.ones(4, 3, device="sim")
    idx = strata.tensor([0, 9]).to("sim")
    y = x.index_select(0, idx); line = sys._getframe().f_lineno  # noqa: E702
    z = y * 2                                   # launches still return
    with pytest.raises(RuntimeError) as info:
        z.cpu()
    msg = str(info.value)
    assert "aten::index_select" in msg and f"{__file__}:{line}" in msg
    assert "STRATA_LAUNCH_BLOCKING=1" in msg
    assert x.sum().item() == 12.0               # the device carries on


def test_random_ops_are_reproducible_with_manual_seed():
    strata.manual_seed(3)
    a = strata.rand(5, device="sim").tolist()
    strata.manual_seed(3)
    b = strata.rand(5, device="sim").tolist()
    strata.sim.manual_seed(4)
    c = strata.randn(5, device="sim").tolist()
    strata.sim.manual_seed(4)
    d = strata.randn(5, device="sim").tolist()
    assert a == b and c == d and a != c
    assert all(0 <= v < 1 for v in a)


# --- memory ---------------------------------------------------------------------------------------

def test_memory_returns_to_baseline_and_empty_cache_releases_segments():
    strata.sim.synchronize()
    gc.collect()
    base = strata.sim.memory_allocated()
    xs = [strata.empty(1024, 1024, device="sim") for _ in range(3)]   # 4 MiB each: large pool
    assert strata.sim.memory_allocated() == base + 3 * 4 * (1 << 20)
    assert strata.sim.max_memory_allocated() >= strata.sim.memory_allocated()
    reserved = strata.sim.memory_reserved()
    del xs
    gc.collect()
    assert strata.sim.memory_allocated() == base
    assert strata.sim.memory_reserved() == reserved       # cached, not returned
    strata.sim.empty_cache()
    assert strata.sim.memory_reserved() < reserved
    assert "Allocated memory" in strata.sim.memory_summary()


def test_out_of_device_memory():
    with pytest.raises(strata.OutOfMemoryError, match="SIM out of memory. Tried to allocate"):
        strata.empty(1 << 40, dtype=strata.uint8, device="sim")
    assert strata.ones(2, device="sim").sum().item() == 2.0


def test_freed_memory_is_reused_in_stream_order():
    x = strata.ones(1000, device="sim")
    addr = (x + 1).data_ptr()                   # the temporary dies at once
    assert (x + 2).data_ptr() == addr           # same stream: reused immediately
    assert (x + 2).sum().item() == 3000.0


# --- the trace of one line ------------------------------------------------------------------------

def test_trace_of_z_equals_x_plus_y_has_every_layer():
    x, y = strata.ones(3, device="sim"), strata.ones(3, device="sim")
    strata.sim.synchronize()
    with Collect() as c:
        z = x + y
        strata.sim.synchronize()
    layers = {e.layer for e in c.events}
    assert {"dispatch", "runtime", "driver", "device", "sync"} <= layers
    names = [(e.layer, e.name) for e in c.events]
    assert ("runtime", "launch") in names and ("runtime", "alloc") in names
    submit = next(e for e in c.events if e.layer == "driver" and e.fields.get("name") == "submit")
    assert {"queue", "slot", "seq"} <= submit.fields.keys()
    assert any(e.layer == "driver" and e.name == "doorbell" for e in c.events)
    dev = next(e for e in c.events if e.layer == "device")
    assert dev.name == "aten::add.Tensor" and dev.end_ns >= dev.start_ns
    assert dev.fields["fence"] == submit.fields["seq"]
    assert z.tolist() == [2.0] * 3


# --- autograd on sim ------------------------------------------------------------------------------

def test_autograd_and_version_counter_on_sim():
    x = strata.tensor([1.0, -2.0, 3.0]).to("sim").requires_grad_()
    y = (x * x).sum()
    assert y.grad_fn.name() == "SumBackward0"
    y.backward()
    assert x.grad.device.type == "sim" and x.grad.tolist() == [2.0, -4.0, 6.0]
    w = strata.zeros(3, device="sim")
    before = w._version
    w.add_(1)
    assert w._version == before + 1


# --- nn and data on sim ---------------------------------------------------------------------------

def test_module_to_sim_and_dataloader_with_pinned_non_blocking_batches():
    from strata.utils.data import DataLoader, TensorDataset
    model = strata.nn.Linear(4, 2).to("sim")
    assert all(p.device.type == "sim" for p in model.parameters())
    data = TensorDataset(strata.arange(32.0).reshape(8, 4), strata.arange(8))
    outs = []
    for xb, yb in DataLoader(data, batch_size=4):
        xb = xb.pin_memory().to("sim", non_blocking=True)
        outs.append(model(xb).sum(1))
    cpu_model = strata.nn.Linear(4, 2)
    cpu_model.load_state_dict({k: v.cpu() for k, v in model.state_dict().items()})
    expected = cpu_model(strata.arange(32.0).reshape(8, 4)).sum(1)
    assert np.allclose(strata.cat(outs).cpu().detach().numpy(), expected.detach().numpy())


# --- the device process ---------------------------------------------------------------------------

def _run(code, env=None, timeout=60):
    env = dict(os.environ, PYTHONPATH=SRC, **(env or {}))
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, timeout=timeout, env=env)


def test_device_process_crash_gives_a_clear_error_and_cpu_keeps_working():
    r = _run("""
        import os, signal, time, strata
        from strata.backends.sim import runtime as R
        x = strata.ones(3, device="sim")
        assert x.sum().item() == 3.0
        pid = R.get().driver.pid
        os.kill(pid, signal.SIGKILL)
        t0 = time.monotonic()
        try:
            (x + 1).cpu()
        except RuntimeError as e:
            print("ERROR", type(e).__name__, round(time.monotonic() - t0, 1), e)
        try:
            strata.ones(2, device="sim")
        except RuntimeError as e:
            print("AGAIN", e)
        print("CPU", (strata.ones(2) + 1).tolist())
        print("PID", pid)
    """)
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert "ERROR DeviceLost" in out and "was killed by signal 9" in out
    assert float(out.split("ERROR DeviceLost ")[1].split()[0]) < 5
    assert "AGAIN the sim device process" in out and "CPU [2.0, 2.0]" in out
    pid = int(out.split("PID ")[1].split()[0])
    assert not os.path.exists(f"/proc/{pid}")             # reaped: no zombie


def test_device_process_exits_with_the_program():
    r = _run("""
        import strata
        from strata.backends.sim import runtime as R
        s = strata.ones(2, device="sim") * 2
        print("PID", R.get().driver.pid, s.tolist())
    """)
    assert r.returncode == 0, r.stderr
    pid = int(r.stdout.split("PID ")[1].split()[0])
    assert "[2.0, 2.0]" in r.stdout and not os.path.exists(f"/proc/{pid}")


def test_launch_blocking_raises_at_the_launching_line():
    r = _run("""
        import strata
        x = strata.ones(4, 3, device="sim")
        idx = strata.tensor([0, 9]).to("sim")
        try:
            x.index_select(0, idx)
        except RuntimeError as e:
            print("RAISED AT LAUNCH", "aten::index_select" in str(e))
    """, env={"STRATA_LAUNCH_BLOCKING": "1"})
    assert "RAISED AT LAUNCH True" in r.stdout, r.stderr
