"""Damaged, planted and raced entries of the native build cache (Note [Native cache] in
backends/cpu/native.py): never loaded, never a crash, rebuilt with one warning."""

import os
import stat
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from strata import config
from strata.backends.cpu import native

SRC = Path(__file__).resolve().parents[2] / "src"

SOURCE = "void answer(long *out) { *out = 42; }\n"
SIGNATURES = {"answer": (native.ctypes.c_void_p,)}
# a fresh process loading ``name`` built from ``source`` and printing its answer
RACER = """
import sys
from strata import config
from strata.backends.cpu import native
config.cache_dir = sys.argv[1]
lib = native.load({name!r}, {source!r}, {{"answer": (native.ctypes.c_void_p,)}})
out = native.ctypes.c_long()
lib.answer(native.ctypes.addressof(out))
print(out.value)
"""


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setattr(config, "cache_dir", str(tmp_path))
    native.reset()
    yield tmp_path / "native"
    native.reset()


def _call(lib) -> int:
    out = native.ctypes.c_long()
    lib.answer(native.ctypes.addressof(out))
    return out.value


def _entry(cache_dir: Path) -> Path:
    (so,) = cache_dir.glob("probe-*.so")
    return so


def _load_quietly():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return native.load("probe", SOURCE, SIGNATURES)


def test_folder_is_private_and_entry_has_a_hash(cache):
    assert _call(_load_quietly()) == 42
    assert stat.S_IMODE(cache.stat().st_mode) == 0o700
    so = _entry(cache)
    recorded = Path(str(so) + ".sha256").read_text()
    assert recorded == native._digest(so.read_bytes())


def test_loose_folder_permissions_are_tightened(cache):
    cache.mkdir(parents=True)
    os.chmod(cache, 0o777)
    _load_quietly()
    assert stat.S_IMODE(cache.stat().st_mode) == 0o700


def _build_elsewhere(cache, script=None):
    """Build the entry in another process: this one must not have the file mapped (truncating a
    mapped file in place is a SIGBUS whatever the cache does)."""
    script = script or RACER.format(source=SOURCE, name="probe")
    done = subprocess.run([sys.executable, "-c", script, str(cache.parent)], capture_output=True,
                          text=True, env={**os.environ, "PYTHONPATH": str(SRC)}, timeout=240,
                          check=False)
    assert done.returncode == 0, done.stderr


def _damage_and_reload(cache, damage):
    _build_elsewhere(cache)
    so = _entry(cache)
    damage(so)
    with pytest.warns(RuntimeWarning, match="damaged or does not match"):
        lib = native.load("probe", SOURCE, SIGNATURES)
    assert _call(lib) == 42
    assert _entry(cache) == so
    assert native._digest(so.read_bytes()) == Path(str(so) + ".sha256").read_text()
    _load_quietly()     # one warning: the rebuilt entry is good


def test_truncated_library_is_rebuilt_not_loaded(cache):
    # loading a truncated ELF file kills the process with SIGBUS: it must never reach dlopen
    _damage_and_reload(cache, lambda so: so.write_bytes(so.read_bytes()[:1000]))


def test_missing_hash_is_rebuilt(cache):
    _damage_and_reload(cache, lambda so: Path(str(so) + ".sha256").unlink())


def test_planted_library_is_not_run(cache, tmp_path):
    """A different library under the expected name (here one answering 7) is replaced."""
    planted = tmp_path / "planted.so"
    src = tmp_path / "planted.c"
    src.write_text("void answer(long *out) { *out = 7; }\n")
    subprocess.run(["cc", "-shared", "-fPIC", str(src), "-o", str(planted)], check=True)
    _damage_and_reload(cache, lambda so: so.write_bytes(planted.read_bytes()))


def test_library_without_the_symbol_is_rebuilt(cache, tmp_path):
    """Even with a matching hash, a library lacking a symbol is evicted, not an AttributeError."""
    def plant_symbolless(so):
        src = tmp_path / "other.c"
        src.write_text("void something_else(void) {}\n")
        subprocess.run(["cc", "-shared", "-fPIC", str(src), "-o", str(so)], check=True)
        Path(str(so) + ".sha256").write_text(native._digest(so.read_bytes()))
    _damage_and_reload(cache, plant_symbolless)


def test_garbage_entry_through_function_falls_back_or_rebuilds(cache):
    """The eager kernels' entry point (``function``) never raises on a damaged entry."""
    _build_elsewhere(cache, "import sys, strata\nfrom strata import config\n"
                     "from strata.backends.cpu import native\n"
                     "config.cache_dir = sys.argv[1]\n"
                     "assert native.function('eager_rows', 'softmax_float32')\n")
    (so,) = cache.glob("eager_rows-*.so")
    so.write_bytes(b"\x7fELF garbage")
    native.reset()
    with pytest.warns(RuntimeWarning):
        assert native.function("eager_rows", "softmax_float32") is not None


def test_other_users_folder_is_refused(cache, monkeypatch):
    cache.mkdir(parents=True)
    monkeypatch.setattr(os, "getuid", lambda: os.stat(cache).st_uid + 1)
    with pytest.raises(native.BuildError, match="belongs to another user"):
        native.load("probe", SOURCE, SIGNATURES)




def test_eight_processes_building_one_source_all_succeed_and_leave_one_entry(cache):
    source = SOURCE + "/* race */\n"
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    script = RACER.format(source=source, name="race")
    procs = [subprocess.Popen([sys.executable, "-c", script, str(cache.parent)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
             for _ in range(8)]
    results = [p.communicate(timeout=240) for p in procs]
    assert [p.returncode for p in procs] == [0] * 8, [err for _, err in results]
    assert [out.strip() for out, _ in results] == ["42"] * 8
    assert not any("damaged" in err for _, err in results)
    assert len(list(cache.glob("race-*.so"))) == 1
    assert not list(cache.glob(".tmp-*"))


GRAPH_RACER = """
import sys, strata
from strata import config
config.cache_dir = sys.argv[1]
step = strata.compile(lambda x: (x.exp() * 3).log_softmax(-1).sum(), backend="inductor")
print(float(step(strata.ones(5, 7))))
"""


def test_eight_processes_compiling_one_graph_leave_one_library_and_one_graph_entry(cache):
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    procs = [subprocess.Popen([sys.executable, "-c", GRAPH_RACER, str(cache.parent)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
             for _ in range(8)]
    results = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0] * 8, [err for _, err in results]
    assert len({out for out, _ in results}) == 1
    assert not any("damaged" in err for _, err in results)
    assert len(list(cache.glob("graph_*.so"))) == 1
    assert len(list((cache.parent / "fxgraph").glob("*.json"))) == 1
