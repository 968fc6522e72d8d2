"""The CBLAS GEMM that generated C and the native pool call directly: MKL's where it is
installed on an Intel CPU (Note [BLAS provider] below), else that of the BLAS NumPy loaded.

A convolution is per sample an im2col and one GEMM (Note [Batch-blocked convolution] in
nn.py). Driven from Python, each sample costs a ctypes call, an ``np.dot`` and a few views:
about 10 us of the GIL's time per sample, a fifth of a 3x3 layer's CPU time on 32 samples of
13x13, which a second thread waits behind. The generated convolution loops
(compile/inductor/eager_conv.py) call BLAS's ``cblas_sgemm``/``cblas_dgemm`` themselves, through
the function address found here, so one C call runs a whole chunk of samples.

Without MKL the address comes from the library NumPy links (threadpoolctl names it):
OpenBLAS, whose symbols NumPy's wheels rename (``scipy_cblas_sgemm64_``: a ``scipy_`` prefix
and a ``64_`` suffix for 64-bit integers). OpenBLAS's own ``openblas_get_config`` says whether
its integers are 64-bit (``USE64BITINT``), whatever the suffix. A NumPy on any other BLAS
(Accelerate, MKL) with no MKL wheel answers None here and the convolution keeps its
NumPy-driven blocks.

Note [BLAS provider]: on an Intel CPU with Intel's MKL installed (``pip install strata[mkl]``:
the ``mkl`` wheel; PyTorch's x86 wheels link MKL too), the products strata drives itself (the
native pool's GEMM table and the generated convolution loops) call MKL's CBLAS instead. On
the 2-core AVX-512 VM of docs/inductor.md the MLP step's eight products took
0.92 ms on MKL against 1.28-1.57 ms on NumPy's OpenBLAS (torch: 0.91). MKL runs sequential
(its threading layer set before its first call, as strata splits products over its own pool:
Note [Parallel GEMM] in linalg.py) in conditional-numerical-reproducibility mode ``AUTO``,
so a product's bits do not move with its operands' alignment from call to call. Small products
NumPy runs itself (``np.dot``) stay on OpenBLAS. ``STRATA_BLAS=openblas`` keeps everything
on NumPy's BLAS; ``STRATA_BLAS=mkl`` insists on MKL, on any CPU (a warning where it is
missing).
``provider()`` names the one in use.

    >>> from strata.backends.cpu import blas
    >>> blas.gemm("float32") is None or blas.gemm("float32").address > 0
    True
"""

import ctypes
import functools
import importlib.metadata
import itertools
import warnings
from typing import NamedTuple

import numpy as np
from threadpoolctl import threadpool_info

from ... import config

_PREFIXES = ("scipy_", "")
_SUFFIXES = ("64_", "_64", "")
_NAMES = {"float32": "cblas_sgemm", "float64": "cblas_dgemm"}
_BATCH_NAMES = {"float32": "cblas_sgemm_batch_strided", "float64": "cblas_dgemm_batch_strided"}


class Gemm(NamedTuple):
    """A CBLAS GEMM: its address and whether its integer arguments are 64-bit."""
    address: int
    ilp64: bool


@functools.cache
def _openblas():
    """(library, symbol prefix, symbol suffix, 64-bit integers) of NumPy's OpenBLAS, or None."""
    np.dot(np.ones((2, 2)), np.ones((2, 2)))   # NumPy loads its BLAS lazily on some builds
    for info in threadpool_info():
        if info.get("internal_api") != "openblas":
            continue
        try:
            lib = ctypes.CDLL(info["filepath"])
        except OSError:
            continue
        for prefix, suffix in itertools.product(_PREFIXES, _SUFFIXES):
            config = getattr(lib, f"{prefix}openblas_get_config{suffix}", None)
            if config is None:
                continue
            config.restype = ctypes.c_char_p
            return lib, prefix, suffix, b"USE64BITINT" in (config() or b"")
    return None


_MKL_THREADING_SEQUENTIAL = 1
_MKL_INTERFACE_LP64 = 0
_MKL_CBWR_AUTO = 2


def _mkl_path():
    """Where the ``mkl`` wheel put ``libmkl_rt``, or None."""
    try:
        files = importlib.metadata.files("mkl") or ()
    except importlib.metadata.PackageNotFoundError:
        return None
    found = [f for f in files if f.name.startswith("libmkl_rt.so")]
    return str(found[0].locate()) if found else None


def _intel_cpu() -> bool:
    """Whether this is an Intel CPU (``auto`` picks MKL only there: its GEMMs were measured
    on Intel; on other x86 CPUs MKL's code paths are not known to beat OpenBLAS's)."""
    try:
        with open("/proc/cpuinfo") as f:
            return any(line.startswith("vendor_id") and "GenuineIntel" in line for line in f)
    except OSError:
        return False


@functools.cache
def _mkl():
    """MKL's runtime library, set up sequential, LP64 and reproducible, or None (not installed,
    ``STRATA_BLAS=openblas``, ``auto`` on a CPU that is not Intel's, or already running
    threaded in this process)."""
    if config.blas == "openblas" or config.blas == "auto" and not _intel_cpu():
        return None
    path = _mkl_path()
    lib = None
    if path is not None:
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            lib = None
    if lib is not None and (lib.MKL_Set_Threading_Layer(_MKL_THREADING_SEQUENTIAL)
                            != _MKL_THREADING_SEQUENTIAL
                            or lib.MKL_Set_Interface_Layer(_MKL_INTERFACE_LP64)
                            != _MKL_INTERFACE_LP64):
        lib = None     # someone loaded it first with other layers: keep NumPy's BLAS
    if lib is not None:
        lib.MKL_CBWR_Set(_MKL_CBWR_AUTO)
    if lib is None and config.blas == "mkl":
        warnings.warn("STRATA_BLAS=mkl, but MKL's runtime (pip install mkl) could not be "
                      "loaded sequential; using NumPy's BLAS", stacklevel=2)
    return lib


def provider() -> str:
    """The BLAS of the products strata drives itself: "mkl", "openblas" or "none"."""
    if gemm("float32") is None:
        return "none"
    return "mkl" if _mkl() is not None else "openblas"


@functools.cache
def gemm_batch(dtype: str):
    """The address of MKL's strided batch GEMM for ``dtype`` (``cblas_sgemm_batch_strided``:
    Note [Batched GEMM] in native_pool.py), or None: OpenBLAS has none."""
    mkl = _mkl()
    fn = getattr(mkl, _BATCH_NAMES.get(dtype, ""), None) if mkl is not None else None
    return None if fn is None else ctypes.cast(fn, ctypes.c_void_p).value


def numpy_gemm(dtype: str):
    """The CBLAS GEMM of NumPy's own OpenBLAS for ``dtype``, whatever ``gemm`` answers, or
    None (another BLAS under NumPy): the one ``np.dot`` calls for a product of two matrices,
    so a table row on it (a compiled graph's small product) gets ``np.dot``'s bits, as eager's
    small products have them (checked over 1440 shapes, layouts and dtypes)."""
    found = _openblas() if dtype in _NAMES else None
    if found is None:
        return None
    lib, prefix, suffix, ilp64 = found
    fn = getattr(lib, f"{prefix}{_NAMES[dtype]}{suffix}", None)
    return None if fn is None else Gemm(ctypes.cast(fn, ctypes.c_void_p).value, ilp64)


@functools.cache
def gemm(dtype: str):
    """The CBLAS GEMM for ``dtype`` ("float32" or "float64"): MKL's where installed (Note
    [BLAS provider]), else NumPy's OpenBLAS; None for any other dtype or BLAS."""
    if dtype not in _NAMES:
        return None
    mkl = _mkl()
    if mkl is not None:
        return Gemm(ctypes.cast(getattr(mkl, _NAMES[dtype]), ctypes.c_void_p).value, False)
    return numpy_gemm(dtype)
