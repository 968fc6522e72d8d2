"""The one way strata builds, caches and loads C: the CPU backend's C kernels and the compiler's.

Every other CPU kernel is NumPy. NumPy runs one pass over a whole array per call, so a kernel
that needs several passes over each row (softmax: max, exp and sum, scale) either streams the
array through memory once per pass or loops over small blocks in Python. ATen fuses such passes
in C++ (``aten/src/ATen/native/cpu/SoftMaxKernel.cpp``); here the C comes from the code
generator of ``compile/inductor``: its eager kernels (``compile/inductor/eager.py``) register
with ``register_generated`` at import time, as a higher layer does, and compiled graphs call
``load`` with their source. ctypes releases the GIL for the call, so ``parallel_for`` runs one
C call per thread.

Note [Native cache]
A library is built on first use into ``<cache_dir>/native/<name>-<key>.so``; the key hashes the
source, the compiler's path and version, the flags, the CPU (``-march=native``) and strata's
version, so any change builds a new file. The folder is kept mode 0700 (a folder anyone can
write is a way to run planted code). Beside each library, ``<name>-<key>.so.sha256`` records the
hash of the built bytes; a library is loaded only if its bytes match it and it has the
expected symbols.
A missing, truncated, replaced or symbol-less entry is evicted and rebuilt with one warning,
never loaded. Builds of one key are serialised by an advisory lock on ``<name>-<key>.lock``;
each writes a temporary file in the same folder and ``os.replace``s it, so readers never see a
half-written file, and processes racing for the same key leave one entry.

With no compiler, a failed build, or ``STRATA_NATIVE_KERNELS=0``, ``function`` answers None and
the caller keeps its NumPy path; ``status()`` says which happened and why.
"""

import _ctypes
import ctypes
import fcntl
import functools
import hashlib
import importlib.metadata
import os
import platform
import shutil
import subprocess
import tempfile
import threading
import time
import warnings
from pathlib import Path

import numpy as np

from ... import config
from . import native_pool
from .array import empty_apart, pointer

# No -ffast-math: results keep IEEE semantics (NaN, Inf, -0.0, no reassociation). -fno-math-errno
# only drops errno writes (lets sqrt vectorise); -fwrapv makes signed overflow wrap as in ATen;
# Note [No contraction]: -ffp-contract=off rounds each product as NumPy (eager) does; gcc's
# default fuses a product and a later sum into one fma, even across statements, so a compiled
# x * y + z would differ from eager's by an ulp.
# Note [No sincos]: gcc turns sin(t) and cos(t) of one t into a call of the scalar sincos, which
# the vectoriser cannot split: a kernel of sin(t) * cos(t) ran 4.5 ns per element on one thread,
# against 0.7 ns with libmvec's vector sin and cos. Not treating sin and cos as builtins keeps
# them separate calls, each vectorised through its ``declare simd``.
# Note [No unroll-and-jam]: -O3's unroll-and-jam (gcc 12) fuses two iterations of a column
# reduction's row loop (``out[x] += in[row(y) + x]`` for each row y) into its SIMD loop over
# the columns, and the jammed loop, whose two rows' offsets are not one affine function, is
# no longer vectorised: the tiny GPT's layer_norm weight and bias gradients (1024 rows of 128)
# ran scalar, 99 us against 36 us. Every generated loop nest is written with its SIMD loop
# innermost already, so the transformation has nothing to offer here.
FLAGS = ("-O3", "-march=native", "-fopenmp-simd", "-fno-math-errno", "-fno-trapping-math",
         "-fwrapv", "-ffp-contract=off", "-fno-loop-unroll-and-jam",
         "-fno-builtin-sin", "-fno-builtin-cos",
         "-fno-builtin-sinf", "-fno-builtin-cosf", "-shared", "-fPIC")
LIBS = ("-lmvec", "-lm")

_lock = threading.Lock()
_libraries: dict = {}     # name -> ctypes.CDLL, or None when it could not be had
_status: dict = {}        # name -> where it was loaded from, or why not
_generated: dict = {}     # name -> (a function returning the C source, signatures)


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


_compiler_versions: dict = {}


def _compiler_version(cc: str) -> str:
    if cc not in _compiler_versions:
        out = subprocess.run([cc, "--version"], capture_output=True, text=True, timeout=30,
                             check=False)
        _compiler_versions[cc] = out.stdout
    return _compiler_versions[cc]


@functools.cache
def _strata_version() -> str:
    """Looked up once: reading the installed metadata costs milliseconds per call."""
    try:
        return importlib.metadata.version("strata")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def cache_folder(name: str = "native") -> Path:
    """``<cache_dir>/<name>``, created mode 0700; refused if another user owns it."""
    root = Path(config.cache_dir)
    root.mkdir(mode=0o700, parents=True, exist_ok=True)   # a root it makes is private too
    folder = root / name
    folder.mkdir(mode=0o700, exist_ok=True)
    info = folder.stat()
    if info.st_uid != os.getuid():
        raise BuildError(f"the cache folder {folder} belongs to another user; not using it")
    if info.st_mode & 0o077:
        os.chmod(folder, 0o700)
    return folder


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _write_atomically(path: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _compile(cc: str, source_path: Path, target: Path) -> None:
    """Compile into a temporary file beside ``target``, record its hash, then move it in."""
    fd, tmp = tempfile.mkstemp(suffix=".so", dir=target.parent, prefix=".tmp-")
    os.close(fd)
    try:
        done = subprocess.run([cc, *FLAGS, str(source_path), "-o", tmp, *LIBS],
                              capture_output=True, text=True, timeout=300, check=False)
        if done.returncode != 0:
            raise BuildError(f"{cc} failed on {source_path.name}:\n{done.stderr.strip()}")
        built = Path(tmp).read_bytes()
        _write_atomically(_hash_file(target), _digest(built).encode())
        os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def _hash_file(target: Path) -> Path:
    return target.with_name(target.name + ".sha256")


def _verified(target: Path) -> bool:
    """Whether ``target``'s bytes match the hash recorded beside it."""
    try:
        recorded = _hash_file(target).read_text().strip()
        return _digest(target.read_bytes()) == recorded
    except OSError:
        return False


def write_verified(path: Path, data: bytes) -> None:
    """Store ``data`` at ``path`` with its hash beside it (the rules of Note [Native cache]); the
    compiler's graph cache keeps its entries this way too."""
    _write_atomically(_hash_file(path), _digest(data).encode())
    _write_atomically(path, data)


def read_verified(path: Path):
    """The bytes at ``path`` if they match the recorded hash; None if there is no entry. A
    damaged entry is evicted with a warning (the caller then makes it again).

    Another process may be between ``write_verified``'s two writes: a hash whose entry is not
    there yet is no entry (it used to read as damaged, and the eviction deleted the writer's
    hash: one of 8 processes compiling one graph warned), and a mismatch is read once more
    after a moment (a writer replacing the pair) before the entry counts as damaged."""
    for attempt in range(2):
        try:
            data = path.read_bytes()
            recorded = _hash_file(path).read_text().strip()
        except FileNotFoundError:
            return None
        except OSError:
            break
        if _digest(data) == recorded:
            return data
        if attempt == 0:
            time.sleep(0.05)
    warnings.warn(f"strata: the cache entry {path} is damaged or does not match its recorded "
                  "hash; making it again", RuntimeWarning, stacklevel=3)
    _evict(path)
    return None


def _evict(target: Path) -> None:
    for path in (target, _hash_file(target)):
        try:
            path.unlink()
        except FileNotFoundError:
            pass


# Note [Task entries]: a function whose arguments are pointers and int64s, ending with the
# ``lo, hi`` of the range it covers (every generated kernel, the eager ones, the optimizer's),
# gets a second entry ``<name>__task(context, lo, hi)`` that calls it with the words of the
# table ``context``: the one signature the native pool calls (backends/cpu/native_pool.py), so
# any such function splits over it from Python with no per-function C written by hand. Each
# word goes to its parameter through C's own conversions (an integer to a pointer), as the
# ctypes call would pass it.
_WORDS = (ctypes.c_void_p, ctypes.c_int64)


def _task_entries(signatures: dict) -> str:
    entries = []
    for name, argtypes in signatures.items():
        argtypes = tuple(argtypes)
        if len(argtypes) < 2 or argtypes[-2:] != (ctypes.c_int64,) * 2 or \
                any(t not in _WORDS for t in argtypes):
            continue
        words = "".join(("(void *)(intptr_t)" if t is ctypes.c_void_p else "") + f"w[{i}], "
                        for i, t in enumerate(argtypes[:-2]))
        entries.append(f"void {name}__task(const void *context, int64_t lo, int64_t hi) {{\n"
                       f"    const int64_t *w = (const int64_t *)context;\n"
                       f"    (void)w;\n    {name}({words}lo, hi);\n}}\n")
    if not entries:
        return ""
    return "\n/* Note [Task entries] (backends/cpu/native.py) */\n#include <stdint.h>\n" + \
        "".join(entries)


def _load_verified(target: Path, signatures: dict):
    """The library at ``target`` with its functions typed, if its bytes match the recorded hash
    and it has every symbol of ``signatures``; else None (nothing of it stays loaded)."""
    if not _verified(target):
        return None
    try:
        lib = ctypes.CDLL(str(target))
    except OSError:
        return None
    for fn_name, argtypes in signatures.items():
        fn = getattr(lib, fn_name, None)
        if fn is None:
            # unload it, or dlopen would answer this handle again for the rebuilt file's path
            _ctypes.dlclose(lib._handle)
            return None
        fn.argtypes, fn.restype = argtypes, None
        task = getattr(lib, fn_name + "__task", None)   # Note [Task entries]
        fn.strata_task = None if task is None else ctypes.cast(task, ctypes.c_void_p).value
    lib.strata_path = target
    return lib


def cache_key(source: str, cc: str) -> str:
    """The content address of ``source`` built with ``cc`` on this machine (Note [Native cache])."""
    parts = (source, cc, _compiler_version(cc), " ".join(FLAGS + LIBS), _cpu_id(),
             _strata_version())
    return _digest("\0".join(parts).encode())[:20]


def load(name: str, source: str, signatures: dict, tasks: bool = True):
    """``source`` built (or found in the cache) as a library with ``signatures`` typed, and
    (``tasks``) the native pool's entries of those that take one (Note [Task entries]).

    Raises ``BuildError`` when no compiler is usable or the source does not compile.
    """
    cc = shutil.which(config.c_compiler)
    if cc is None:
        raise BuildError(f"no C compiler: {config.c_compiler!r} is not on PATH (set CC)")
    cc = os.path.realpath(cc)
    source += _task_entries(signatures) if tasks else ""
    folder = cache_folder()
    stem = f"{name}-{cache_key(source, cc)}"
    target = folder / f"{stem}.so"
    lib = _load_verified(target, signatures)
    if lib is not None:
        return lib
    with open(folder / f"{stem}.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        lib = _load_verified(target, signatures)   # another process may have built it meanwhile
        if lib is not None:
            return lib
        if target.exists() or _hash_file(target).exists():
            warnings.warn(f"strata: the cached library {target} is damaged or does not match its "
                          "recorded hash; rebuilding it", RuntimeWarning, stacklevel=3)
            _evict(target)
        source_path = folder / f"{stem}.c"
        _write_atomically(source_path, source.encode())
        _compile(cc, source_path, target)
        lib = _load_verified(target, signatures)
        if lib is None:
            raise BuildError(f"{target} was built but does not load or lacks a symbol of "
                             f"{sorted(signatures)}")
        return lib


def register_generated(name: str, make_source, signatures: dict) -> None:
    """Make ``function(name, ...)`` build the C that ``make_source()`` returns (the code
    generator of compile/inductor registers its eager kernels here)."""
    _generated[name] = (make_source, signatures)


# Elements from which a generated eager kernel beats NumPy (below it the ctypes call costs more
# than it saves).
GENERATED_MIN_SIZE = 1024
# Elements per chunk at least of the other generated kernels (transcendental ones: tanh, gelu,
# exp, ...). 256K was the Python pool's (array.GRAIN_SIZE says why); the native pool's threads
# spin after a loop, so a second thread pays from fewer elements: tanh over float32, us, grain
# 256K -> 32K (AVX-512 VM, 2 threads): 64K 31 -> 24, 128K 54 -> 36, 256K 109 -> 59, 0.5M 114
# (two chunks either way).
GENERATED_GRAIN = 1 << 15
# formulas of a few flops per element (and the casts): chunks of NATIVE_MEMORY_BOUND_GRAIN elements.
# array.MEMORY_BOUND_GRAIN (1M) is the Python pool's, whose sleeping threads take 30-50 us to
# wake; the native pool's threads spin after a loop, so a second thread pays from far fewer
# elements. tanh_backward over float32, one thread (1M grain) -> two (64K), us, Intel Xeon
# (AVX-512) VM, torch beside: 128K 53 -> 34 (torch 12), 256K 145 -> 61 (33), 512K 279 -> 160
# (116), 1M 535 -> 328 (269); 32K and 64K unchanged (one chunk).
NATIVE_MEMORY_BOUND_GRAIN = 1 << 16
# The generated row kernels (softmax, log_softmax, layer_norm and their backward ops, the row
# operators) split from this many elements too: a few flops per element each. 1024 rows of 128
# (a tiny GPT's layer_norm) ran in one chunk at GRAIN_SIZE's 256K elements: 89-150 -> 74-76 us
# forward, 393-583 -> 351-356 us forward and backward; softmax over 4096 rows of 64 223-333 ->
# 167-178 us (interleaved runs, torch 41 and 142; AVX-512 VM of docs/inductor.md).
NATIVE_ROW_GRAIN = NATIVE_MEMORY_BOUND_GRAIN
MEMORY_BOUND_FORMULAS = frozenset({"tanh_backward", "sigmoid_backward", "relu", "neg", "abs",
                                   "threshold_backward", "add", "sub", "mul", "div",
                                   "add_scalar", "sub_scalar", "mul_scalar", "div_scalar",
                                   "rsub_scalar"})
GENERATED_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def run_unary(formula: str, a, *scalars):
    """``formula`` (a generated eager kernel, see compile/inductor/eager.py) applied to the
    contiguous float array ``a``, as a fresh array; None where the caller's NumPy path must run
    (another dtype or layout, a small array, no C). ``scalars``: the formula's scalar arguments
    (softplus's beta and threshold), converted to ``a``'s dtype as ATen converts a Scalar."""
    if not (type(a) is np.ndarray and a.size >= GENERATED_MIN_SIZE
            and a.dtype in GENERATED_DTYPES and a.flags.c_contiguous):
        return None
    return _run(formula, a, (a,), scalars)


def run_binary(formula: str, a, b, *scalars):
    """``formula`` of two same-shape contiguous float arrays of one dtype (a generated eager
    kernel taking ``(in0, in1, [params,] out, n, x_lo, x_hi)``), as a fresh array; None
    otherwise."""
    if not (type(a) is np.ndarray and a.size >= GENERATED_MIN_SIZE   # small: the common "no"
            and a.dtype in GENERATED_DTYPES and a.flags.c_contiguous):
        return None
    if not (type(b) is np.ndarray and b.dtype == a.dtype and b.shape == a.shape
            and b.flags.c_contiguous):
        return None
    return _run(formula, a, (a, b), scalars)


# Elements from which eager add/sub/mul/div (and a bias added to a product) take the generated
# kernels on the native pool (Note [Native arithmetic] in elementwise.py).
ARITHMETIC_MIN_SIZE = 1 << 16


def run_rows(formula: str, a, vector):
    """``formula`` (add, sub, mul, div) of each row of the contiguous float array ``a`` (its
    last dim as the row) with the contiguous ``vector`` of its row's length and dtype, as a
    fresh array (a generated row kernel, Note [Native arithmetic] in elementwise.py); None
    otherwise."""
    if not (type(a) is np.ndarray and a.size >= GENERATED_MIN_SIZE and a.ndim >= 1
            and a.dtype in GENERATED_DTYPES and a.flags.c_contiguous
            and type(vector) is np.ndarray and vector.dtype == a.dtype
            and vector.shape == a.shape[-1:] and vector.flags.c_contiguous):
        return None
    return _run_rows(f"{formula}_rows", a, [vector], a.shape[-1])


def _run_rows(kernel, a, others, n):
    """The generated row kernel ``kernel`` of ``a`` as rows of ``n`` (``others``: the arrays it
    reads after ``a``) into a fresh array, the rows split over the native pool; None without
    the kernel."""
    fn = function("eager_rows", f"{kernel}_{dtype_name(a.dtype)}")
    if fn is None:
        return None
    out = empty_apart(a.shape, a.dtype, a)   # Note [4K aliasing]
    rows = a.size // n
    pointers = [a.ctypes.data, *(x.ctypes.data for x in others), out.ctypes.data]
    native_pool.parallel_call(fn, pointers + [rows, n, n], 0, rows,
                              max(1, NATIVE_ROW_GRAIN // n))
    return out


# Note [Column kernels]: a generated column sum (``column_sum``, layer_norm's parameter
# gradients) walks the rows in order, adding each to its columns' sums. Tall inputs stream from
# memory, which one core already saturates on the AVX-512 VM of docs/inductor.md: 1024x512
# float32 summed in 50 us on one thread and 70 us with the columns split over two (4096x1024:
# 571 vs 638; NumPy 77 and 642), so they run on the caller's thread; a few wide rows split
# their columns (64x16384: 162 -> 70 us).
COLUMN_SPLIT_MAX_ROWS = 256


def run_columns(fn, pointers, rows: int, n: int) -> None:
    """The column kernel ``fn(*pointers, n, rows, lo, hi)`` over columns ``[0, n)``."""
    if rows >= COLUMN_SPLIT_MAX_ROWS:
        fn(*pointers, n, rows, 0, n)
    else:
        native_pool.parallel_call(fn, [*pointers, n, rows], 0, n,
                                  max(1, GENERATED_GRAIN // rows))


# NumPy's own sum down a few rows is as fast (64x512 float32: 5.5 us against 11.7; 256x512:
# 16.5 and 18.2; 64x16384: 189 and 198); from 512 rows the kernel wins (512x128: 14.9 -> 10.8
# us, 1024x512: 108 -> 77)
COLUMN_SUM_MIN_ROWS = 512


def column_sum(a):
    """``a.sum(0)`` of a C-contiguous float array of two or more dims, in NumPy's order (each
    row added in turn: the same bits), by the generated ``column_sum`` kernel; None where
    NumPy must run (or is as fast: fewer than ``COLUMN_SUM_MIN_ROWS`` rows)."""
    if not (type(a) is np.ndarray and a.size >= GENERATED_MIN_SIZE and a.ndim >= 2
            and a.shape[0] >= COLUMN_SUM_MIN_ROWS and a.dtype in GENERATED_DTYPES
            and a.flags.c_contiguous):
        return None
    fn = function("eager_rows", f"column_sum_{dtype_name(a.dtype)}")
    if fn is None:
        return None
    rows = a.shape[0]
    out = np.empty(a.shape[1:], a.dtype)
    run_columns(fn, [a.ctypes.data, out.ctypes.data], rows, a.size // rows)
    return out


def row_sums(a, n: int):
    """The sums of the C-contiguous float array ``a`` read as rows of ``n`` (a flat array of
    ``a.size // n``), by the generated ``row_sum`` kernel, the rows split over the native
    pool; None where NumPy must run."""
    if not (type(a) is np.ndarray and a.dtype in GENERATED_DTYPES and a.flags.c_contiguous
            and n and a.size % n == 0):
        return None
    fn = function("eager_rows", f"row_sum_{dtype_name(a.dtype)}")
    if fn is None:
        return None
    rows = a.size // n
    out = np.empty(rows, a.dtype)
    native_pool.parallel_call(fn, [a.ctypes.data, out.ctypes.data, rows, n, n], 0, rows,
                              max(1, NATIVE_ROW_GRAIN // n))
    return out


def index_add_rows(target, index, src) -> bool:
    """``target[index[y]] += src[y]`` for each row y of ``src`` in order, in place, by the
    generated ``index_add_rows`` kernel (the same sums as ``np.add.at``), for a contiguous
    float ``target`` of two or more dims and ``src`` of its dtype and rows; False (nothing
    done) otherwise. The caller has checked the indices."""
    if not (type(src) is np.ndarray and src.size >= GENERATED_MIN_SIZE and src.ndim >= 2
            and src.dtype in GENERATED_DTYPES and src.flags.c_contiguous
            and type(target) is np.ndarray and target.dtype == src.dtype
            and target.flags.c_contiguous and target.shape[1:] == src.shape[1:]
            and index.shape == src.shape[:1] and not np.may_share_memory(target, src)):
        return False     # (an aliased source keeps np.add.at, which buffers it)
    fn = function("eager_rows", f"index_add_rows_{dtype_name(src.dtype)}")
    if fn is None:
        return False
    index = np.ascontiguousarray(index, np.int64)
    rows = src.shape[0]
    run_columns(fn, [src.ctypes.data, index.ctypes.data, target.ctypes.data], rows,
                src.size // rows)
    return True


def masked_fill_rows(a, mask, value):
    """``a`` with ``value`` where the bool ``mask`` is set, as a fresh array, where the mask
    (leading 1s aside) is the trailing dims of the contiguous float array ``a`` (attention's
    causal mask over its heads): one generated row kernel; None otherwise."""
    if not (type(a) is np.ndarray and a.size >= ARITHMETIC_MIN_SIZE
            and a.dtype in GENERATED_DTYPES and a.flags.c_contiguous
            and type(mask) is np.ndarray and mask.dtype == np.bool_
            and mask.flags.c_contiguous and mask.size):
        return None
    trailing = mask.shape
    while trailing and trailing[0] == 1:
        trailing = trailing[1:]
    if not trailing or trailing != a.shape[a.ndim - len(trailing):] or mask.ndim > a.ndim:
        return None
    return _run_rows("masked_fill_rows", a, [mask, np.array([value], a.dtype)], mask.size)


def address(arr):
    """The address of ``arr``'s first element, to pass to a generated kernel's pointer argument.
    A writable contiguous array lends its buffer (a ``byref`` of a ctypes view: 0.2 us); any
    other takes ``arr.ctypes.data``, which builds a ctypes helper object per call (~1 us, two
    of them a third of a 1x2 softmax's kernel)."""
    try:
        return _byref(_c_char.from_buffer(arr))
    except (TypeError, ValueError, BufferError):   # read-only, strided or empty
        return arr.ctypes.data


_byref, _c_char = ctypes.byref, ctypes.c_char


_DTYPE_NAMES: dict = {}     # np.dtype -> its name: ``np.dtype.name`` is a Python property (2 us)


def dtype_name(dtype) -> str:
    """``dtype.name`` of a NumPy dtype, remembered: the generated kernels are looked up by it
    on every call."""
    name = _DTYPE_NAMES.get(dtype)
    if name is None:
        name = _DTYPE_NAMES[dtype] = dtype.name
    return name


def _run(formula, a, inputs, scalars):
    fn = function("eager_pointwise", f"{formula}_{dtype_name(a.dtype)}")
    if fn is None:
        return None
    out = empty_apart(a.shape, a.dtype, a)   # Note [4K aliasing]
    pointers = [pointer(x) for x in inputs]
    if scalars:
        params = np.array(scalars, a.dtype)      # kept alive for the call
        pointers.append(params.ctypes.data)
    pointers.append(pointer(out))
    n = a.size
    grain = NATIVE_MEMORY_BOUND_GRAIN if formula in MEMORY_BOUND_FORMULAS else GENERATED_GRAIN
    native_pool.parallel_call(fn, pointers + [n], 0, n, grain, native_pool.VECTOR_ROWS)
    return out


# (source, destination) dtype names the generated cast kernels convert (library "eager_casts",
# printed by compile/inductor/eager.py). bfloat16 -> float32 is a shift that ml_dtypes' astype
# already vectorises (5 us for 64K elements against the loop's 14): it keeps astype.
CAST_PAIRS = (("float32", "float16"), ("float16", "float32"), ("float32", "bfloat16"))
_CAST_PAIRS = frozenset(CAST_PAIRS)


def cast_into(dst, src) -> bool:
    """``dst[...] = src`` between float32 and float16/bfloat16 by a generated kernel (same bits
    as NumPy's conversion), when both are C-contiguous, of one shape and big enough; False
    (nothing written) otherwise."""
    if not (type(src) is np.ndarray and src.size >= GENERATED_MIN_SIZE and
            src.shape == dst.shape and src.flags.c_contiguous and dst.flags.c_contiguous and
            dst.flags.writeable and (dtype_name(src.dtype), dtype_name(dst.dtype)) in _CAST_PAIRS):
        return False
    fn = function("eager_casts", f"cast_{dtype_name(src.dtype)}_{dtype_name(dst.dtype)}")
    if fn is None:
        return False
    native_pool.parallel_call(fn, [src.ctypes.data, dst.ctypes.data, src.size], 0, src.size,
                              NATIVE_MEMORY_BOUND_GRAIN, native_pool.VECTOR_ROWS)
    return True


def converted(arr, dtype):
    """``arr.astype(dtype)`` (a fresh array), by ``cast_into`` where it can."""
    if type(arr) is np.ndarray and arr.size >= GENERATED_MIN_SIZE and arr.flags.c_contiguous:
        dtype = np.dtype(dtype)        # small arrays (the common case) go straight to astype
        if (dtype_name(arr.dtype), dtype_name(dtype)) in _CAST_PAIRS:
            out = np.empty(arr.shape, dtype)
            if cast_into(out, arr):
                return out
    return arr.astype(dtype)


def generated_or(formula: str, fallback, min_size=GENERATED_MIN_SIZE):
    """``fallback(a, *extra)`` (a NumPy formula), with ``run_unary(formula, a)`` tried first
    from ``min_size`` elements (where NumPy's own loop is fast, from where the second thread
    and the ctypes call pay: Note [Generated unary] in pointwise.py)."""
    def run(a, *extra, **kwargs):
        if not kwargs and a.size >= min_size:
            out = run_unary(formula, a)
            if out is not None:
                return out
        return fallback(a, *extra, **kwargs)
    run.__name__ = run.__qualname__ = getattr(fallback, "__name__", formula)
    return run


def _load(name: str):
    if not config.native_kernels:
        _status[name] = "disabled (STRATA_NATIVE_KERNELS=0)"
        return None
    try:
        make_source, signatures = _generated[name]
        lib = load(name, make_source(), signatures)
    except (BuildError, OSError, subprocess.SubprocessError) as e:
        _status[name] = f"NumPy fallback: {e}"
        return None
    _status[name] = f"loaded {lib.strata_path}"
    return lib


def function(library: str, name: str):
    """The C function ``name`` of a registered generated library, or None (the caller falls
    back to NumPy)."""
    lib = _libraries.get(library, False)
    if lib is False:
        with _lock:
            lib = _libraries.get(library, False)
            if lib is False:
                lib = _libraries[library] = _load(library)
    return None if lib is None else getattr(lib, name)


def status() -> dict:
    """For each native library: where it was loaded from, or why NumPy is used instead."""
    for name, (_, signatures) in _generated.items():
        function(name, next(iter(signatures)))
    return dict(_status)


def reset() -> None:
    """Forget loaded libraries (tests switch the compiler or the flag and load again)."""
    with _lock:
        _libraries.clear()
        _status.clear()
