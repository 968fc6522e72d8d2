"""Checkpoint files under faults (issue 13): hostile and corrupt files, killed and concurrent
saves, links and permissions, memory. PyTorch is measured on the same case where it is cheap."""

import io
import os
import pickle
import signal
import stat
import subprocess
import sys
import threading
import time
import tracemalloc
import zipfile

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import strata
from strata import serialization
from strata.serialization._structure import PICKLE_KEY

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _strata_pickle_file(payload):
    """A safetensors-format checkpoint (valid checksum) whose pickle is ``payload``."""
    arrays = {PICKLE_KEY: np.frombuffer(payload, dtype=np.uint8)}
    metadata = {"strata.kind": "pickle",
                "strata.crc32": serialization._checksum("pickle", "", arrays)}
    buf = io.BytesIO()
    serialization._safetensors.write(buf, arrays, metadata)
    return buf.getvalue()


def _torch_zip_file(payload, storages=()):
    """A torch.save-style zip whose data.pkl is ``payload``, with arrays as storages 0, 1..."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("archive/data.pkl", payload)
        z.writestr("archive/byteorder", "little")
        for key, array in enumerate(storages):
            z.writestr(f"archive/data/{key}", array.tobytes())
        z.writestr("archive/version", "3\n")
    return buf.getvalue()


def _calls(module, name, *args):
    """A protocol-2 pickle that calls ``module.name(*args)`` (integer args)."""
    ints = b"".join(b"J" + a.to_bytes(4, "little", signed=True) for a in args)
    return b"\x80\x02c" + f"{module}\n{name}\n".encode() + b"(" + ints + b"tR."


# --- hostile files ------------------------------------------------------------------------------

@pytest.mark.parametrize("make", [_strata_pickle_file, _torch_zip_file])
@pytest.mark.parametrize("module,name", [
    ("strata.nn.modules.linear", "Linear"), ("strata.nn", "Linear"),
    ("torch.nn.modules.linear", "Linear"), ("strata.nn.functional", "linear"),
    ("strata", "ones"), ("builtins", "eval"), ("posix", "system"),
])
def test_hostile_constructor_refused_fast(make, module, name):
    data = make(_calls(module, name, 16000, 16000))
    start = time.monotonic()
    with pytest.raises(pickle.UnpicklingError, match=f"Unsupported global: GLOBAL {module}.{name}"
                                                     f" was not an allowed global by default"
                       ) as info:
        strata.load(io.BytesIO(data))
    assert time.monotonic() - start < 0.5
    assert type(info.value) is pickle.UnpicklingError   # PyTorch's class, not a subclass


def test_pytorch_refuses_the_same_module_global():
    data = _torch_zip_file(_calls("torch.nn.modules.linear", "Linear", 4, 4))
    with pytest.raises(pickle.UnpicklingError, match="Unsupported global: GLOBAL "
                                                     "torch.nn.modules.linear.Linear"):
        torch.load(io.BytesIO(data))


def test_module_allowed_only_through_safe_globals():
    data = _strata_pickle_file(_calls("strata.nn.modules.linear", "Linear", 3, 2))
    with serialization.safe_globals([strata.nn.Linear]):
        layer = strata.load(io.BytesIO(data))
    assert isinstance(layer, strata.nn.Linear) and tuple(layer.weight.shape) == (2, 3)
    with pytest.raises(pickle.UnpicklingError):
        strata.load(io.BytesIO(data))


def _rebuild_pickle(offset, size, stride, numel):
    """A torch data.pkl: one tensor over a float storage of ``numel`` elements."""
    ints = lambda xs: b"(" + b"".join(b"J" + x.to_bytes(4, "little", signed=True)
                                      for x in xs) + b"t"
    return (b"\x80\x02ctorch._utils\n_rebuild_tensor_v2\n((X\x07\x00\x00\x00storage"
            b"ctorch\nFloatStorage\nX\x01\x00\x00\x000X\x03\x00\x00\x00cpu"
            + b"J" + numel.to_bytes(4, "little") + b"tQ" + b"J" + offset.to_bytes(4, "little")
            + ints(size) + ints(stride) + b"\x89ccollections\nOrderedDict\n)RtR.")


@pytest.mark.parametrize("offset,size,stride", [
    (0, [5], [1]), (3, [2], [1]), (0, [2, 3], [3, 1]), (0, [3], [2]), (0, [2], [-1]),
])
def test_tensor_reaching_past_its_storage_is_an_error(offset, size, stride):
    data = _torch_zip_file(_rebuild_pickle(offset, size, stride, 4),
                           [np.arange(4, dtype=np.float32)])
    with pytest.raises(RuntimeError, match="not a valid checkpoint"):
        strata.load(io.BytesIO(data))


def test_in_bounds_strided_tensor_reads_the_right_elements():
    data = _torch_zip_file(_rebuild_pickle(1, [2], [2], 4), [np.arange(4, dtype=np.float32)])
    assert strata.load(io.BytesIO(data)).tolist() == [1.0, 3.0]
    assert torch.load(io.BytesIO(data)).tolist() == [1.0, 3.0]


# --- corrupt files: a clean error or the right values, never silently wrong values --------------

def _good_checkpoint(suffix, tmp_path):
    sd = {"w": strata.arange(64.0).reshape(8, 8), "b": strata.ones(8, dtype=strata.int64),
          "step": 7}
    path = tmp_path / f"good{suffix}"
    strata.save(sd, path)
    return sd, path.read_bytes()


@settings(max_examples=60, deadline=None)
@given(suffix=st.sampled_from([".safetensors", ".pt"]), data=st.data())
def test_flipped_bytes_are_errors_or_harmless(tmp_path_factory, suffix, data):
    sd, good = _good_checkpoint(suffix, tmp_path_factory.mktemp("flip"))
    position = data.draw(st.integers(0, len(good) - 1))
    bad = bytearray(good)
    bad[position] ^= data.draw(st.integers(1, 255))
    try:
        loaded = strata.load(io.BytesIO(bytes(bad)))
    except (RuntimeError, pickle.UnpicklingError):
        return
    # The flip hit bytes no reader uses (zip padding, a file name, a timestamp): values intact.
    assert loaded["step"] == 7
    assert loaded["w"].tolist() == sd["w"].tolist() and loaded["b"].tolist() == [1] * 8


@settings(max_examples=30, deadline=None)
@given(suffix=st.sampled_from([".safetensors", ".pt"]), cut=st.floats(0, 0.999))
def test_truncated_files_are_clean_errors(tmp_path_factory, suffix, cut):
    _, good = _good_checkpoint(suffix, tmp_path_factory.mktemp("cut"))
    with pytest.raises(RuntimeError, match="not a valid checkpoint"):
        strata.load(io.BytesIO(good[:int(len(good) * cut)]))


# --- killed saves -------------------------------------------------------------------------------

_KILLED_SAVE = """
import os, signal, sys, threading, strata
path = sys.argv[1]
sd = {"w": strata.zeros(24 * 2**20)}   # 96 MiB: the kill lands mid-write
directory, name = os.path.split(path)
mine = f".{name}.{os.getpid()}."   # not a dead predecessor's temp file
def kill_when_temp_appears():
    while not any(f.startswith(mine) for f in os.listdir(directory)):
        pass
    os.kill(os.getpid(), signal.SIGKILL)
threading.Thread(target=kill_when_temp_appears, daemon=True).start()
strata.save(sd, path)
"""


@pytest.mark.parametrize("suffix", [".safetensors", ".pt"])
def test_killed_saves_keep_the_old_file_and_the_next_save_cleans_up(tmp_path, suffix):
    path = tmp_path / f"ckpt{suffix}"
    strata.save({"w": strata.ones(4)}, path)
    before = path.read_bytes()
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "src"))
    for _ in range(3):
        proc = subprocess.run([sys.executable, "-c", _KILLED_SAVE, str(path)], env=env,
                              capture_output=True, timeout=120, check=False)
        assert proc.returncode == -signal.SIGKILL, proc.stderr
        assert path.read_bytes() == before
        # Each killed save removed its dead predecessor's temp file before starting its own.
        assert len([f for f in os.listdir(tmp_path) if f.endswith(".tmp")]) == 1
    strata.save({"w": strata.full((4,), 2.0)}, path)
    assert os.listdir(tmp_path) == [path.name]
    assert strata.load(path)["w"].tolist() == [2.0] * 4


def test_cleanup_spares_temp_files_of_live_writers(tmp_path):
    path = tmp_path / "ckpt.pt"
    live = tmp_path / f".ckpt.pt.{os.getppid()}.0123456789ab.tmp"   # a live process's save
    live.write_bytes(b"in progress")
    unrelated = tmp_path / ".other.pt.999999999.tmp"
    unrelated.write_bytes(b"not ours")
    strata.save({"w": strata.ones(1)}, path)
    assert live.exists() and unrelated.exists()


# --- concurrent saves ---------------------------------------------------------------------------

def _payload(i):
    return {"writer": i, "w": strata.full((1000,), float(i))}


def _check_one_complete(path, writers):
    loaded = strata.load(path)
    assert loaded["writer"] in writers
    assert loaded["w"].tolist() == [float(loaded["writer"])] * 1000
    assert [f for f in os.listdir(os.path.dirname(path)) if f.endswith(".tmp")] == []


@pytest.mark.parametrize("suffix", [".safetensors", ".pt"])
def test_concurrent_thread_saves_all_succeed(tmp_path, suffix):
    path = str(tmp_path / f"ckpt{suffix}")
    errors = []

    def save_many(i):
        try:
            for _ in range(10):
                strata.save(_payload(i), path)
        except Exception as e:  # noqa: BLE001 - every failure is reported below
            errors.append(e)

    threads = [threading.Thread(target=save_many, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert errors == []
    _check_one_complete(path, range(8))


_SAVER = """
import sys, strata
for _ in range(10):
    strata.save({"writer": int(sys.argv[2]), "w": strata.full((1000,), float(sys.argv[2]))},
                sys.argv[1])
"""


def test_concurrent_process_saves_all_succeed(tmp_path):
    path = str(tmp_path / "ckpt.pt")
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "src"))
    procs = [subprocess.Popen([sys.executable, "-c", _SAVER, path, str(i)], env=env,
                              stderr=subprocess.PIPE) for i in range(4)]
    for p in procs:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err.decode()
    _check_one_complete(path, range(4))


# --- links and permissions ----------------------------------------------------------------------

@pytest.mark.parametrize("suffix", [".safetensors", ".pt"])
def test_save_through_a_symlink_updates_the_target(tmp_path, suffix):
    (tmp_path / "real").mkdir()
    target = tmp_path / "real" / f"ckpt{suffix}"
    link = tmp_path / f"link{suffix}"
    strata.save({"w": strata.ones(2)}, target)
    link.symlink_to(target)
    strata.save({"w": strata.zeros(3)}, link)
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert strata.load(target)["w"].tolist() == [0.0] * 3
    assert sorted(os.listdir(tmp_path)) == ["link" + suffix, "real"]
    assert os.listdir(tmp_path / "real") == [target.name]


@pytest.mark.parametrize("framework", ["strata", "torch"])
def test_hard_link_partner_sees_the_new_data_as_pytorch(tmp_path, framework):
    fw = strata if framework == "strata" else torch
    path, partner = tmp_path / "ckpt.pt", tmp_path / "partner.pt"
    fw.save({"w": fw.ones(2)}, path)
    os.link(path, partner)
    fw.save({"w": fw.zeros(3)}, path)
    assert fw.load(partner)["w"].tolist() == [0.0] * 3
    assert os.stat(path).st_ino == os.stat(partner).st_ino


@pytest.mark.parametrize("framework", ["strata", "torch"])
@pytest.mark.parametrize("suffix", [".safetensors", ".pt"])
def test_modes_as_pytorch(tmp_path, framework, suffix):
    fw = strata if framework == "strata" else torch
    old = os.umask(0o027)
    try:
        fresh = tmp_path / f"new{suffix}"
        fw.save({"w": fw.ones(1)}, fresh)
        assert stat.S_IMODE(os.stat(fresh).st_mode) == 0o640
        existing = tmp_path / f"existing{suffix}"
        existing.write_bytes(b"")
        os.chmod(existing, 0o604)
        fw.save({"w": fw.ones(1)}, existing)
        assert stat.S_IMODE(os.stat(existing).st_mode) == 0o604
    finally:
        os.umask(old)


# --- memory ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("suffix", [".safetensors", ".pt"])
def test_load_peak_memory_at_most_1_2x_the_file(tmp_path, suffix):
    path = tmp_path / f"big{suffix}"
    strata.save({f"w{i}": strata.ones(2**20) for i in range(8)}, path)   # 32 MiB
    size = os.path.getsize(path)
    tracemalloc.start()
    try:
        loaded = strata.load(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert float(loaded["w7"][-1]) == 1.0
    assert peak <= 1.2 * size, f"peak {peak / size:.2f}x the file"


@pytest.mark.parametrize("enabled", [False, True])
def test_fsync_only_when_configured(tmp_path, monkeypatch, enabled):
    from strata import config
    from strata.serialization import _files

    synced = []
    monkeypatch.setattr(config, "checkpoint_fsync", enabled)
    monkeypatch.setattr(_files.os, "fsync", synced.append)
    strata.save({"w": strata.ones(2)}, tmp_path / "ckpt.pt")
    assert len(synced) == (2 if enabled else 0)    # the file, then its directory
    assert strata.load(tmp_path / "ckpt.pt")["w"].tolist() == [1.0, 1.0]


@pytest.mark.parametrize("suffix", [".safetensors", ".pt"])
def test_mmap_load_is_copy_on_write(tmp_path, suffix):
    path = tmp_path / f"ckpt{suffix}"
    strata.save({"w": strata.arange(6.0), "n": 3}, path)
    before = path.read_bytes()
    loaded = strata.load(path, mmap=True)
    assert loaded["w"].tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0] and loaded["n"] == 3
    loaded["w"].add_(1)                              # private pages: the file is untouched
    assert loaded["w"].tolist() == [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    assert path.read_bytes() == before
    # PyTorch's check (it reads the zip header first, so only for its own format).
    for framework in (strata, torch) if suffix == ".pt" else (strata,):
        with pytest.raises(ValueError, match="f must be a file path in order to use the mmap "
                                             "argument"):
            framework.load(io.BytesIO(before), mmap=True)
