"""The CPU backend's few C kernels: built once with the system C compiler, loaded with ctypes.

Every other CPU kernel is NumPy. NumPy runs one pass over a whole array per call, so a kernel
that needs several passes over each row (softmax: max, exp and sum, scale) either streams the
array through memory once per pass or loops over small blocks in Python, and with two threads
each call is a hand-over of the GIL. ATen fuses such passes per row in C++
(``aten/src/ATen/native/cpu/SoftMaxKernel.cpp``); ``csrc/<name>.c`` does the same, small enough
to read next to its NumPy twin. ctypes releases the GIL for the call, so ``parallel_for`` runs
one C call per thread.

A library is built on first use into ``<cache_dir>/native/<name>-<hash>.so``, the hash covering
the source, the flags, the compiler's version and the CPU (the code is built for this machine:
``-march=native``). With no compiler, a failed build, or ``STRATA_NATIVE_KERNELS=0``, ``function``
answers None and the caller keeps its NumPy path; ``status()`` says which happened and why.
"""

import ctypes
import hashlib
import os
import platform
import shutil
import subprocess
import tempfile
import threading
from pathlib import Path

from ... import config

SOURCES = Path(__file__).with_name("csrc")
FLAGS = ("-O3", "-march=native", "-fopenmp-simd", "-fno-math-errno", "-fno-trapping-math",
         "-shared", "-fPIC")

_ROWS = (ctypes.c_void_p, ctypes.c_void_p) + (ctypes.c_int64,) * 4
# library -> its functions' argument types (every function returns void)
SIGNATURES = {
    "softmax": {"softmax_rows": _ROWS, "log_softmax_rows": _ROWS},
}

_lock = threading.Lock()
_libraries: dict = {}     # name -> ctypes.CDLL, or None when it could not be had
_status: dict = {}        # name -> where it was loaded from, or why not


class BuildError(RuntimeError):
    pass


def _cpu_id() -> str:
    """What ``-march=native`` depends on: the CPU's model and feature flags."""
    try:
        with open("/proc/cpuinfo") as f:
            lines = [ln for ln in f if ln.startswith(("model name", "flags", "Features"))]
        return "".join(sorted(set(lines)))
    except OSError:
        return platform.processor() or platform.machine()


def _compiler_version(cc: str) -> str:
    out = subprocess.run([cc, "--version"], capture_output=True, text=True, timeout=30)
    return out.stdout


def build(name: str) -> Path:
    """The path of ``csrc/<name>.c`` built as a shared library, compiling it if not cached."""
    cc = shutil.which(config.c_compiler)
    if cc is None:
        raise BuildError(f"no C compiler: {config.c_compiler!r} is not on PATH (set CC)")
    source = (SOURCES / f"{name}.c").read_text()
    key = hashlib.sha256("\0".join(
        (source, " ".join(FLAGS), _compiler_version(cc), _cpu_id())).encode()).hexdigest()[:16]
    target = Path(config.cache_dir) / "native" / f"{name}-{key}.so"
    if target.exists():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    # Build beside the target and rename: other processes may be building the same file.
    fd, tmp = tempfile.mkstemp(suffix=".so", dir=target.parent)
    os.close(fd)
    try:
        done = subprocess.run([cc, *FLAGS, str(SOURCES / f"{name}.c"), "-o", tmp, "-lm"],
                              capture_output=True, text=True, timeout=120)
        if done.returncode != 0:
            raise BuildError(f"{cc} failed on csrc/{name}.c:\n{done.stderr.strip()}")
        os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return target


def _load(name: str):
    if not config.native_kernels:
        _status[name] = "disabled (STRATA_NATIVE_KERNELS=0)"
        return None
    try:
        path = build(name)
        lib = ctypes.CDLL(str(path))
    except (BuildError, OSError, subprocess.SubprocessError) as e:
        _status[name] = f"NumPy fallback: {e}"
        return None
    for fn_name, argtypes in SIGNATURES[name].items():
        fn = getattr(lib, fn_name)
        fn.argtypes, fn.restype = argtypes, None
    _status[name] = f"loaded {path}"
    return lib


def function(library: str, name: str):
    """The C function ``name`` of ``csrc/<library>.c``, or None (the caller falls back)."""
    lib = _libraries.get(library, False)
    if lib is False:
        with _lock:
            lib = _libraries.get(library, False)
            if lib is False:
                lib = _libraries[library] = _load(library)
    return None if lib is None else getattr(lib, name)


def status() -> dict:
    """For each native library: where it was loaded from, or why NumPy is used instead."""
    for name in SIGNATURES:
        function(name, next(iter(SIGNATURES[name])))
    return dict(_status)


def reset() -> None:
    """Forget loaded libraries (tests switch the compiler or the flag and load again)."""
    with _lock:
        _libraries.clear()
        _status.clear()
