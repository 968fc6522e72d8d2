"""The sim device on its worst day: failing kernels, a stopped or killed device process, copies
bigger than pinned memory, out of memory, failed in-place ops.

Tests that need a fresh device with other settings (a short watchdog, little pinned memory) or
that stop or kill it run in a child process, so the device the other tests share stays healthy.
"""

import gc
import os
import pathlib
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import strata
from strata.sim import AsyncKernelError, DeviceLost, DeviceTimeout

pytestmark = pytest.mark.skipif(not strata.sim.is_available(), reason="needs memfd/eventfd")
SRC = str(pathlib.Path(__file__).resolve().parents[2] / "src")
INDEX_ERROR = "aten::index_select .*failed on the sim device"


def _run(code, timeout=60, **env):
    env = dict(os.environ, PYTHONPATH=SRC, **env)
    result = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                            text=True, timeout=timeout, env=env)
    assert result.returncode == 0, result.stderr
    return result.stdout


def _failed_kernel():
    """(x, y): y = x.index_select with an index out of range, which fails on the device."""
    x = strata.ones(4, 3, device="sim")
    y = x.index_select(0, strata.tensor([0, 9]).to("sim"))
    return x, y


def _raises_original(fn):
    with pytest.raises(AsyncKernelError, match=INDEX_ERROR):
        fn()


# --- sticky kernel errors (Note [Poisoned allocations]) -------------------------------------------

def test_a_failed_kernels_outputs_and_everything_computed_from_them_raise_its_error():
    x, y = _failed_kernel()
    z = (y * 2).exp()                                   # launched before anyone knows
    _raises_original(z.cpu)                             # the first sync reports it
    for read in (y.cpu, z.cpu, lambda: z.sum().item(), lambda: print(y), y.tolist):
        _raises_original(read)                          # sticky: every later read too
    w = z + 1                                           # a use launches, then fails
    _raises_original(strata.sim.synchronize)
    _raises_original(w.cpu)
    _raises_original(lambda: z[z > 0])                 # data-dependent: raises at once
    assert x.sum().item() == 12.0                       # what does not depend on it works
    assert (x * 3).cpu().tolist() == [[3.0] * 3] * 4


def test_writing_into_a_poisoned_tensor_does_not_make_it_valid():
    _, y = _failed_kernel()
    _raises_original(strata.sim.synchronize)
    y.fill_(1.0)                                        # fill_ reads y: a use, reported ...
    _raises_original(lambda: y.copy_(strata.ones(2, 3)))   # ... at this blocking copy
    _raises_original(y.cpu)


def test_memory_of_a_poisoned_tensor_is_clean_once_reused():
    _, y = _failed_kernel()
    _raises_original(strata.sim.synchronize)
    address = y.data_ptr()
    del y
    gc.collect()
    fresh = [strata.empty(2, 3, device="sim") for _ in range(64)]
    assert address in [t.data_ptr() for t in fresh]     # the same block, a new allocation
    assert sum(t.fill_(2.0).sum().item() for t in fresh) == 64 * 12.0


def test_a_failed_in_place_kernel_poisons_its_target():
    target = strata.zeros(4, device="sim")
    target.index_add_(0, strata.tensor([7]).to("sim"), strata.ones(1, device="sim"))
    with pytest.raises(AsyncKernelError, match="aten::index_add_"):
        (target + 1).cpu()
    with pytest.raises(AsyncKernelError, match="aten::index_add_"):
        target.cpu()


# --- a stopped device: the fence watchdog (Note [Fence watchdog]) ---------------------------------

@pytest.mark.parametrize("mode", ["poll", "interrupt"])
def test_a_stopped_device_times_out_with_the_queue_and_fence_then_recovers(mode):
    out = _run("""
        import os, signal, time, strata
        from strata.backends.sim import runtime as R
        x = strata.ones(3, device="sim")
        assert x.sum().item() == 3.0
        pid = R.get().driver.pid
        os.kill(pid, signal.SIGSTOP)
        while R.get().driver.process_state() != "T":   # the stop lands asynchronously
            time.sleep(0.01)
        start = time.monotonic()
        try:
            (x + 1).sum().item()
        except strata.sim.DeviceTimeout as e:
            print("SECONDS", time.monotonic() - start)
            print("ERROR", e)
        os.kill(pid, signal.SIGCONT)
        print("AFTER", (x + 2).sum().item())
    """, STRATA_SIM_TIMEOUT="1", STRATA_SIM_SYNC=mode)
    assert 0.9 < float(out.split("SECONDS ")[1].split()[0]) < 10
    error = out.split("ERROR ")[1]
    assert "queue 1 did not reach fence" in error and "its fence has stayed at" in error
    assert "stopped" in error and "STRATA_SIM_TIMEOUT" in error
    assert "AFTER 9.0" in out


def test_the_watchdog_does_not_fire_while_the_device_makes_progress():
    out = _run("""
        import time, strata
        x = strata.ones(256, 256, device="sim")
        x.sum().item()
        start = time.monotonic()
        while time.monotonic() - start < 4:      # far longer in all than the 1 s watchdog
            for _ in range(20):
                x = (x @ x).tanh()
            x.sum().item()
        print("SUM", x.sum().item())
    """, STRATA_SIM_TIMEOUT="1")
    assert "SUM" in out


# --- copies bigger than pinned memory are staged in pieces ----------------------------------------

def test_copies_larger_than_pinned_memory_work_in_pieces():
    out = _run("""
        import numpy as np, strata
        n = 12 << 20                                  # 48 MiB of int32; pinned memory: 16 MiB
        x = strata.arange(n, dtype=strata.int32)
        d = x.to("sim")
        assert np.array_equal(d.cpu().numpy(), x.numpy())
        assert d[-1].item() == n - 1
        # strided destination, dtype change on the device, broadcast source
        m = strata.arange(6 * 1024 * 1024, dtype=strata.int32).reshape(6, 1024, 1024)
        dm = strata.empty(1024, 1024, 6, device="sim", dtype=strata.float64).permute(2, 1, 0)
        dm.copy_(m)
        out = strata.empty(1024, 6, 1024, dtype=strata.int64).transpose(0, 1)
        out.copy_(dm)
        assert np.array_equal(out.numpy(), m.numpy())
        row = strata.arange(1024, dtype=strata.int32).to("sim")
        big = strata.empty(8 * 1024, 1024, dtype=strata.int32)
        big.copy_(row)
        assert np.array_equal(big.numpy(), np.broadcast_to(np.arange(1024), (8 * 1024, 1024)))
        print("PINNED", strata.sim.memory_allocated(), "OK")
    """, STRATA_SIM_HOST_MEMORY="16M")
    assert "OK" in out


# --- what already held, kept ----------------------------------------------------------------------

def test_a_killed_device_raises_device_lost_fast_and_cpu_carries_on():
    out = _run("""
        import os, signal, time, strata
        from strata.backends.sim import runtime as R
        x = strata.ones(3, device="sim")
        assert x.sum().item() == 3.0
        os.kill(R.get().driver.pid, signal.SIGKILL)
        start = time.monotonic()
        try:
            (x + 1).cpu()
        except strata.sim.DeviceLost as e:
            print("SECONDS", time.monotonic() - start)
        print("CPU", (strata.ones(2) + 1).tolist())
    """)
    assert float(out.split("SECONDS ")[1].split()[0]) < 2
    assert "CPU [2.0, 2.0]" in out
    assert issubclass(DeviceLost, RuntimeError) and issubclass(DeviceTimeout, RuntimeError)


def test_out_of_device_memory_is_clear_and_the_allocator_recovers():
    with pytest.raises(strata.OutOfMemoryError, match="SIM out of memory. Tried to allocate"):
        strata.empty(1 << 40, dtype=strata.uint8, device="sim")
    with pytest.raises(RuntimeError, match="Storage size calculation overflowed"):
        strata.empty(2 ** 62, device="sim")
    assert strata.ones(1024, device="sim").sum().item() == 1024.0


@pytest.mark.parametrize("device", ["cpu", "sim"])
def test_failed_in_place_ops_leave_their_input_unchanged(device):
    x = strata.arange(6.0, device=device).reshape(2, 3)
    before = x.cpu().numpy().copy()
    bad = [lambda: x.add_(strata.ones(4, device=device)),
           lambda: x.addmm_(strata.ones(2, 4, device=device), strata.ones(5, 3, device=device)),
           lambda: x.copy_(strata.ones(3, 2, device=device)),
           lambda: x.bitwise_not_()]
    if device == "cpu":          # on sim a bad index is found by the kernel: asynchronously
        bad.append(lambda: x.index_fill_(0, strata.tensor([5]), 1.0))
    for call in bad:
        with pytest.raises((RuntimeError, IndexError)):
            call()
        np.testing.assert_array_equal(x.cpu().numpy(), before)
