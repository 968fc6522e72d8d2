"""How CPU kernels see tensors: as NumPy arrays, and back.

* ``data(x)``: the NumPy view of a tensor (a Python scalar passes through unchanged).
* ``wrap(arr, dtype)``: a new tensor that owns a kernel's fresh result array.
* Half-precision floats compute in float32 and round once at the end, as PyTorch's CPU kernels
  do (their "opmath" type), so results match bit for bit.
"""

import ctypes
import functools
import os
import queue
import threading
import warnings

import numpy as np

from ... import config
from ..._tensor import from_array
from ...core import dtype as D
from ...core import fp_errors
from ...core.fp_errors import ignore_fp_errors
from ...core.tensor_impl import TensorImpl
from ...ops.pointwise import _user_stacklevel

# NumPy's messages for sizes past what an array can index (PyTorch: a storage size overflow).
_NUMPY_SIZE_ERRORS = ("array is too big", "Maximum allowed dimension exceeded",
                      "iterator is too large")


def cpu_kernel(fn):
    """``fn`` as the dispatcher calls it: under Note [Silent IEEE arithmetic] (core/fp_errors.py),
    with NumPy's allocation failures raised as PyTorch's CPU allocator raises them. A kernel
    marked ``manages_cpu_state`` does both in its own frame (Note [One-frame CPU kernels])."""
    if getattr(fn, "manages_cpu_state", False):
        return fn
    set_state, reset_state = fp_errors.state.set, fp_errors.state.reset
    ignore = fp_errors.IGNORE

    def kernel(*args):
        token = set_state(ignore)
        try:
            return fn(*args)
        except (MemoryError, ValueError) as exc:
            error = allocation_error(exc)
            if error is None:
                raise
            raise error from None
        finally:
            reset_state(token)
    return functools.update_wrapper(kernel, fn)


# Note [One-frame CPU kernels]: ``cpu_kernel``'s wrapper is a Python frame around every CPU
# kernel. The kernels of the smallest, most frequent calls (binary pointwise ops) set NumPy's
# error state and translate allocation failures themselves, as the wrapper would, and are
# registered unwrapped: ``x + y`` on one element spends a tenth of its time in that frame.
def allocation_error(exc):
    """PyTorch's CPU allocator error for NumPy's ``MemoryError`` or size ``ValueError``; None
    for any other error (re-raised as it was)."""
    if isinstance(exc, MemoryError):
        nbytes = getattr(exc, "_total_size", None)   # NumPy's _ArrayMemoryError has it
        return RuntimeError(f"DefaultCPUAllocator: can't allocate memory: you tried to "
                            f"allocate {nbytes} bytes. Error code 12 (Cannot allocate memory)")
    if str(exc).startswith(_NUMPY_SIZE_ERRORS):
        return RuntimeError(f"Storage size calculation overflowed: {exc}")
    return None


COMPUTE = {d: (np.dtype(np.float32) if d in (D.float16, D.bfloat16) else d.np)
           for d in D.ALL_DTYPES}

# Note [CPU allocations]: every kernel result is a fresh NumPy array from malloc. glibc serves
# big blocks (from 128 KiB, rising with use) with their own mmap and trims the heap when its
# top has more than twice that free, so a training step's activations and optimizer
# temporaries come back as fresh pages each time: a page fault per 4 KiB, about a tenth of the
# step's time. PyTorch caches device memory in its allocators for the same reason. Here glibc
# is told to keep it: blocks up to its 32 MiB maximum come from the heap, and freed memory stays
# mapped up to TRIM_THRESHOLD. Peak RSS is unchanged (the memory was in use at the peak anyway).
# STRATA_NO_MALLOC_TUNING=1 keeps glibc's defaults.
MMAP_THRESHOLD = 32 << 20
TRIM_THRESHOLD = 256 << 20


def _tune_malloc():
    try:
        glibc = os.confstr("CS_GNU_LIBC_VERSION")
    except (AttributeError, ValueError, OSError):
        glibc = None
    if not glibc:
        return   # musl, macOS, Windows: their allocators have no such knobs
    mallopt = ctypes.CDLL(None).mallopt
    m_trim_threshold, m_mmap_threshold = -1, -3   # <malloc.h>
    mallopt(m_mmap_threshold, MMAP_THRESHOLD)
    mallopt(m_trim_threshold, TRIM_THRESHOLD)


if not config.no_malloc_tuning:
    _tune_malloc()


# Note [4K aliasing]: a streaming kernel whose output starts a few bytes after its input, modulo
# 4 KiB, stalls on false store-to-load dependencies (the CPU compares only the low 12 address
# bits): NumPy's exp/sin/log over 4M float32 take 3x longer. Heap blocks of one size sit back to
# back, 16 bytes apart modulo every power of two, so a big result of the same size as its input
# lands just there. ``empty_apart`` places such a result half a page away from its input instead.
PAGE = 4096


def pointer(arr) -> int:
    """The address of ``arr``'s first element as an int (for a table of pointers): 0.4 us for
    a writable contiguous array, where ``arr.ctypes.data`` costs ~1.3 us."""
    try:
        return _addressof(_c_char.from_buffer(arr))
    except (TypeError, ValueError, BufferError):   # read-only, strided or empty
        return arr.ctypes.data


_addressof, _c_char = ctypes.addressof, ctypes.c_char


def empty_apart(shape, dtype, source):
    """A fresh C-contiguous array of ``shape``/``dtype`` (a NumPy dtype) whose address is half a
    page away from ``source``'s modulo the page size (Note [4K aliasing])."""
    nbytes = dtype.itemsize
    for n in shape:
        nbytes *= n
    buf = np.empty(nbytes + PAGE, np.uint8)
    start = (pointer(source) + PAGE // 2 - pointer(buf)) % PAGE
    return np.ndarray(shape, dtype, buf, start)


def data(x):
    if isinstance(x, TensorImpl):
        arr = x._array
        return arr if arr is not None else x._np()
    return x


def real_part(arr):
    """``arr`` about to become real: a complex array's real part, with PyTorch's warning."""
    if not np.iscomplexobj(arr):
        return arr
    warnings.warn("Casting complex values to real discards the imaginary part", UserWarning,
                  stacklevel=_user_stacklevel())
    return arr.real


def compute_data(x, dt):
    """``x`` as an array (or scalar) in the compute dtype of result dtype ``dt``."""
    if isinstance(x, TensorImpl):
        arr = x._array
        if arr is None:
            arr = x._np()
        cdt = COMPUTE[dt]
        return arr if arr.dtype == cdt else arr.astype(cdt)
    return x


def add_at(target, key, src):
    """``np.add.at(target, key, src)`` (``index_add_``, ``index_put_(accumulate=True)``). Rows
    added along dim 0 of a C-contiguous target by one 1-D integer index (an embedding's
    backward) go through ``add.at`` on the flat array: NumPy's one-dimensional ``ufunc.at``
    loop is ~5x faster than the broadcast one (1024 rows of 128 floats: 1.1 -> 0.22 ms), and
    it adds in the same order (rows in index order, as ATen's loops), so the sums are
    bit-identical. A negative index wraps on the flat array to the same row."""
    index = key[0] if len(key) == 1 else None
    if index is not None and isinstance(index, np.ndarray) and index.ndim == 1 and \
            index.dtype.kind in "iu" and target.ndim > 1 and target.flags.c_contiguous and \
            src.shape == (index.size, *target.shape[1:]):
        row = target[0].size
        flat = (index[:, None] * row + np.arange(row)).reshape(-1)
        np.add.at(target.reshape(-1), flat, src.reshape(-1))
    else:
        np.add.at(target, key, src)


def wrap(arr, dt):
    """A tensor of dtype ``dt`` owning ``arr`` (a fresh kernel result)."""
    if type(arr) is not np.ndarray:
        arr = np.asarray(arr)
    if arr.dtype != dt.np:
        arr = arr.astype(dt.np)
    elif arr.base is not None and not arr.flags.owndata:
        arr = arr.copy()
    return from_array(arr, dt)


def wrap_reshaped(arr, shape, dt):
    """``wrap(arr.reshape(shape), dt)`` for ``arr`` a fresh result that the calling kernel
    made and hands over: where it is C-contiguous and of dtype ``dt``, the reshaped view's base
    is ``arr``, which no other tensor holds, so it is not copied (``wrap`` copies every view,
    not knowing whose memory it shows: a layer_norm's 512 KB input gradient paid ~80 us)."""
    if arr.flags.c_contiguous and arr.dtype == dt.np:
        return from_array(arr.reshape(shape), dt)
    return wrap(arr.reshape(shape), dt)


def write(self, result):
    """Copy a result array into ``self`` (an in-place op's last step) and return ``self``."""
    np.copyto(data(self), result, casting="unsafe")
    return self


# --- parallel loops ----------------------------------------------------------------------------
# Note [CPU parallel_for]: NumPy releases the GIL inside its ufunc and reduction loops (and
# ctypes around a generated C kernel), so chunks of one array computation run truly in parallel
# on a small thread pool, like ATen's ``at::parallel_for`` (``aten/src/ATen/Parallel.h``). A
# nested call runs inline, as in ATen, so pool threads never wait on the pool.
#
# Chunks are handed out dynamically (OpenMP's ``schedule(dynamic)``), a few per thread, from
# one shared counter that the caller's thread drains too; the caller waits for the chunks, not
# for the threads. A pool thread that another process keeps off its core therefore delays a
# loop by at most the one chunk it holds: if it never wakes in time, the caller runs every
# chunk itself. A static split (one chunk per thread, as OpenBLAS does) waits for the slowest
# thread, which on a busy machine is one waiting for a core (Note [Default thread count]).

NUM_THREADS = 1   # set by threads.set_num_threads (backends/cpu/threads.py) at registration
GRAIN_SIZE = 1 << 18  # elements: a smaller chunk is not worth a thread. ATen's is 32768, for
# OpenMP threads spinning for work; a loop on this pool pays ~30-50 us to wake a sleeping thread
# and hand the GIL back and forth (measured on the 2-core VM of docs/performance.md, "Threads":
# a sigmoid over 256K float32 took 114 us on one thread and 144 us on two, over 1M 421 vs 317 us)
# A loop of a few flops per element (``x * y``, ``tanh_backward``) is bound by memory, and pays a
# second thread's wake-up only from about 2M elements (``x * x`` over 0.5M float32: 55 us on one
# thread, 113 us on two; over 2M: 257 vs 220 us).
MEMORY_BOUND_GRAIN = 1 << 20
CHUNKS_PER_THREAD = 4   # enough to rebalance around a late thread; each chunk costs ~1-2 us

_pool = None
_pool_lock = threading.Lock()
_region = threading.local()


def _forget_pool():
    """A forked child has none of the parent's threads: it must start its own pool."""
    global _pool
    _pool = None


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pool)


def resize_pool(num_threads: int) -> None:
    """Run later parallel loops on ``num_threads`` threads (the caller's included)."""
    global NUM_THREADS, _pool
    with _pool_lock:
        NUM_THREADS, old, _pool = num_threads, _pool, None
    if old is not None:
        old.shutdown()   # running chunks finish; new loops get a pool of the new size


class _Pool:
    """The pool's threads, each taking loops from one queue (a C ``SimpleQueue``: handing a loop
    over costs ~0.1 us, where ``ThreadPoolExecutor.submit``'s Future and locks cost ~20 us of the
    caller's time per loop, serial time in every parallel kernel: Note [Measured row tiles] in
    compile/inductor/autotune.py). The threads sleep in ``get`` while idle."""

    def __init__(self, workers):
        self.loops = queue.SimpleQueue()
        self.workers = workers
        for i in range(workers):
            threading.Thread(target=self._work, name=f"strata-cpu_{i}", daemon=True).start()

    def _work(self):
        ignore_fp_errors()
        while (task := self.loops.get()) is not None:
            task()

    def submit(self, task):
        """Run ``task()`` on a pool thread, when one is free."""
        self.loops.put(task)

    def shutdown(self):
        for _ in range(self.workers):
            self.loops.put(None)


class _Loop:
    """One ``parallel_for``: its chunks, the counter handing them out, and how many are left."""

    __slots__ = ("begin", "chunks", "done", "end", "error", "fn", "left", "lock", "step")

    def __init__(self, fn, begin, end, chunks):
        self.fn, self.begin, self.end = fn, begin, end
        self.step = -(-(end - begin) // chunks)
        self.chunks = iter(range(-(-(end - begin) // self.step)))   # next() is atomic
        self.left = -(-(end - begin) // self.step)
        self.done = threading.Lock()   # held until the last chunk ends (an Event costs ~6 us)
        self.done.acquire()
        self.lock = threading.Lock()
        self.error = None

    def drain(self):
        """Run chunks until none are left to take (any thread, the caller's included)."""
        _region.active = True
        try:
            for i in self.chunks:
                lo = self.begin + i * self.step
                try:
                    self.fn(lo, min(lo + self.step, self.end))
                except BaseException as e:  # noqa: BLE001 - re-raised by the caller
                    self.error = self.error or e
                with self.lock:
                    self.left -= 1
                    if self.left == 0:
                        self.done.release()
        finally:
            _region.active = False


def parallel_for(begin: int, end: int, grain_size: int, fn) -> None:
    """Call ``fn(lo, hi)`` over ``[begin, end)`` in contiguous chunks of at least ``grain_size``
    iterations, handed out to the pool's threads and the caller's as each finishes one (Note
    [CPU parallel_for]); returns once every chunk has run."""
    global _pool
    n = end - begin
    chunks = min(NUM_THREADS * CHUNKS_PER_THREAD, n // max(grain_size, 1))
    if chunks <= 1 or NUM_THREADS == 1 or getattr(_region, "active", False):
        if n > 0:
            fn(begin, end)
        return
    with _pool_lock:
        if _pool is None:
            _pool = _Pool(NUM_THREADS - 1)
        pool = _pool
    loop = _Loop(fn, begin, end, chunks)
    for _ in range(min(NUM_THREADS, chunks) - 1):
        pool.submit(loop.drain)   # (a pool that set_num_threads shut down meanwhile: the
    loop.drain()                  # caller drains every chunk)
    loop.done.acquire()   # never return (or raise) while a chunk is still writing
    if loop.error is not None:
        raise loop.error
