"""DataLoader workers under faults (issue 13): killed mid-send, orphaned, raising, stuck.

Each case runs against strata and, where the behaviour is PyTorch's promise, against PyTorch on
the same dataset. Every wait is bounded."""

import os
import random
import signal
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest
import torch._utils as torch_utils
import torch.utils.data as tdata

import strata
import strata.utils.data as sdata

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


# --- a worker killed while it sends a large batch -----------------------------------------------

class _KilledMidSend(sdata.Dataset):
    """Item 1 is a 128 MB batch; the worker kills itself with SIGKILL while the batch is in the
    result pipe (the pipe holds 64 KiB, so the send takes many reads by the main process)."""

    def __init__(self, delay):
        self.delay = delay

    def __len__(self):
        return 3

    def __getitem__(self, i):
        if i == 0:
            return np.zeros(1, np.float32)
        threading.Timer(self.delay, os.kill, (os.getpid(), signal.SIGKILL)).start()
        return np.zeros(32 * 2**20, np.float32)


def test_worker_killed_mid_send_raises_within_2s_every_time():
    rng = random.Random(0)
    for trial in range(10):
        loader = sdata.DataLoader(_KilledMidSend(rng.uniform(0.0, 0.1)), batch_size=None,
                                  num_workers=1, collate_fn=lambda x: x)
        it = iter(loader)
        pid = it._workers[0].pid
        next(it)
        start = time.monotonic()
        with pytest.raises(RuntimeError) as info:
            next(it)
        elapsed = time.monotonic() - start
        assert elapsed < 2.0, f"trial {trial}: {elapsed:.2f} s"
        assert f"DataLoader worker (pid {pid}) is killed by signal: Killed (SIGKILL)." == str(
            info.value)
        assert not it._workers[0].is_alive()


class _Dying(sdata.Dataset):
    def __len__(self):
        return 6

    def __getitem__(self, i):
        if i == 3:
            os._exit(3)
        return i


@pytest.mark.parametrize("num_workers", [1, 2])
def test_worker_exit_code_named(num_workers):
    """A worker that dies raises at once, naming its pid and exit code, instead of hanging."""
    start = time.monotonic()
    it = iter(sdata.DataLoader(_Dying(), batch_size=1, num_workers=num_workers))
    pid = it._workers[3 % num_workers].pid   # sample 3 goes to this worker
    with pytest.raises(RuntimeError, match=rf"DataLoader worker \(pid {pid}\) exited "
                                           r"unexpectedly with exit code 3\."):
        list(it)
    assert time.monotonic() - start < 30


_ORPHAN_SCRIPT = """
import os, signal, sys, time
import numpy as np
import strata.utils.data as sdata

class Big(sdata.Dataset):
    def __len__(self):
        return 100
    def __getitem__(self, i):
        return np.ones(2 * 2**20, np.float32)   # 8 MB: the prefetched batches fill the pipe

it = iter(sdata.DataLoader(Big(), batch_size=None, num_workers=2, collate_fn=lambda x: x))
next(it)
time.sleep(0.5)   # let the workers block on the full result pipe
print(" ".join(str(w.pid) for w in it._workers), flush=True)
os.kill(os.getpid(), signal.SIGKILL)
"""


def _running(pid):
    """True while ``pid`` exists and is not a zombie (an exited process nobody reaped yet)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_orphaned_workers_exit_on_their_own():
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "src"))
    proc = subprocess.run([sys.executable, "-c", _ORPHAN_SCRIPT], env=env, capture_output=True,
                          text=True, timeout=60, check=False)
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    pids = [int(p) for p in proc.stdout.split()]
    assert len(pids) == 2
    deadline = time.monotonic() + 10
    while any(_running(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    alive = [p for p in pids if _running(p)]
    for p in alive:
        os.kill(p, signal.SIGKILL)
    assert not alive, "workers outlived their parent"


# --- exceptions raised in workers ---------------------------------------------------------------

class TwoArgError(Exception):
    def __init__(self, code, detail):
        super().__init__(f"{code}: {detail}")


class KeywordMessageError(Exception):
    message = "default"

    def __init__(self, *, message):
        super().__init__(message)


class _Raising:
    """A dataset (for either framework) whose item 1 raises ``make()``."""

    def __init__(self, make):
        self.make = make

    def __len__(self):
        return 2

    def __getitem__(self, i):
        if i == 1:
            raise self.make()
        return i


_CASES = {
    "KeyError": lambda: KeyError("missing"),
    "ValueError": lambda: ValueError("bad value"),
    "IndexError": lambda: IndexError("out of range"),
    "OSError": lambda: FileNotFoundError(2, "No such file", "x.png"),
    "UnicodeDecodeError": lambda: b"\xff".decode("utf-8"),
    "TwoArgError": lambda: TwoArgError(7, "broken"),
    "KeywordMessageError": lambda: KeywordMessageError(message="kw only"),
    "ZeroDivisionError": lambda: 1 // 0,
}


def _first_error(data_module, dataset):
    loader = data_module.DataLoader(dataset, batch_size=None, num_workers=1)
    with pytest.raises(Exception) as info:  # the class is what the tests compare
        list(loader)
    return info.value


def _pytorch_reraised(make):
    """What PyTorch's worker -> main process path (``torch._utils.ExceptionWrapper``) raises."""
    try:
        raise make()
    except Exception:  # noqa: BLE001 - every class is a case
        wrapper = torch_utils.ExceptionWrapper(sys.exc_info(), "in DataLoader worker process 0")
    with pytest.raises(Exception) as info:
        wrapper.reraise()
    return info.value


@pytest.mark.parametrize("case", sorted(_CASES))
def test_worker_exception_class_and_traceback_as_pytorch(case):
    ours = _first_error(sdata, _Raising(_CASES[case]))
    theirs = _pytorch_reraised(_CASES[case])
    assert type(ours) is type(theirs), (type(ours), type(theirs))
    text = str(ours)
    assert "in DataLoader worker process 0" in text
    assert "Original Traceback (most recent call last)" in text
    assert "__getitem__" in text          # the worker's own frames
    assert str(ours).splitlines()[0] == str(theirs).splitlines()[0]   # "Caught <class> in..."


def test_key_error_as_pytorch_dataloader():
    ours = _first_error(sdata, _Raising(_CASES["KeyError"]))
    theirs = _first_error(tdata, _Raising(_CASES["KeyError"]))
    assert type(ours) is type(theirs) is KeyError
    assert str(ours).splitlines()[:2] == str(theirs).splitlines()[:2]


def test_unpicklable_exception_class_still_arrives():
    class LocalError(Exception):
        pass

    def make():
        return LocalError("local")
    err = _first_error(sdata, _Raising(make))
    assert type(err) is RuntimeError and "LocalError" in str(err) and "local" in str(err)


# --- timeout ------------------------------------------------------------------------------------

class _Stuck(sdata.Dataset):
    def __len__(self):
        return 2

    def __getitem__(self, i):
        if i == 1:
            time.sleep(60)
        return i


def test_timeout_raises_at_two_seconds_then_cleans_up():
    it = iter(sdata.DataLoader(_Stuck(), batch_size=1, num_workers=1, timeout=2))
    assert next(it).item() == 0
    start = time.monotonic()
    with pytest.raises(RuntimeError, match="^DataLoader timed out after 2 seconds$"):
        next(it)
    elapsed = time.monotonic() - start
    assert 1.9 <= elapsed < 3.0, elapsed
    assert not it._workers[0].is_alive()


# --- pin_memory without an accelerator in use ---------------------------------------------------

_PIN_SCRIPT = """
import warnings
import strata, strata.sim
import strata.utils.data as sdata
ds = sdata.TensorDataset(strata.arange(8.0))
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    batches = list(sdata.DataLoader(ds, batch_size=2, pin_memory=True))
    batches += list(sdata.DataLoader(ds, batch_size=2, pin_memory=True, num_workers=1))
pin = [str(w.message) for w in caught if "pin_memory" in str(w.message)]
print(len(pin), pin[0])
print(strata.sim.is_initialized(), any(b[0].is_pinned() for b in batches))
"""


def test_pin_memory_in_cpu_program_warns_and_never_starts_the_device():
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "src"))
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(_PIN_SCRIPT)], env=env,
                          capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr
    first, second = proc.stdout.splitlines()
    assert first == ("2 'pin_memory' argument is set as true but no accelerator is found, then "
                     "device pinned memory won't be used.")
    assert second == "False False"


def test_pin_memory_pins_when_the_device_is_in_use():
    strata.sim.init()
    batch = next(iter(sdata.DataLoader(sdata.TensorDataset(strata.arange(4.0)), batch_size=2,
                                       pin_memory=True)))
    assert batch[0].is_pinned()
