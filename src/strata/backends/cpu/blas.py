"""The GEMM of the BLAS that NumPy loaded, for generated C that calls it directly.

A convolution is per sample an im2col and one GEMM (Note [Batch-blocked convolution] in
nn.py). Driven from Python, each sample costs a ctypes call, an ``np.dot`` and a few views:
about 10 us of the GIL's time per sample, a fifth of a 3x3 layer's CPU time on 32 samples of
13x13, which a second thread waits behind. The generated convolution loops
(compile/inductor/eager_conv.py) call BLAS's ``cblas_sgemm``/``cblas_dgemm`` themselves, through
the function address found here, so one C call runs a whole chunk of samples.

The address comes from the library NumPy links (threadpoolctl names it): OpenBLAS, whose
symbols NumPy's wheels rename (``scipy_cblas_sgemm64_``: a ``scipy_`` prefix and a ``64_``
suffix for 64-bit integers). OpenBLAS's own ``openblas_get_config`` says whether its integers
are 64-bit (``USE64BITINT``), whatever the suffix. Any other BLAS (MKL, Accelerate) answers
None here and the convolution keeps its NumPy-driven blocks.

    >>> from strata.backends.cpu import blas
    >>> blas.gemm("float32") is None or blas.gemm("float32").address > 0
    True
"""

import ctypes
import functools
import itertools
from typing import NamedTuple

import numpy as np
from threadpoolctl import threadpool_info

_PREFIXES = ("scipy_", "")
_SUFFIXES = ("64_", "_64", "")
_NAMES = {"float32": "cblas_sgemm", "float64": "cblas_dgemm"}


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


@functools.cache
def gemm(dtype: str):
    """The CBLAS GEMM for ``dtype`` ("float32" or "float64") of NumPy's BLAS, or None."""
    found = _openblas()
    if found is None or dtype not in _NAMES:
        return None
    lib, prefix, suffix, ilp64 = found
    fn = getattr(lib, f"{prefix}{_NAMES[dtype]}{suffix}", None)
    if fn is None:
        return None
    return Gemm(ctypes.cast(fn, ctypes.c_void_p).value, ilp64)
