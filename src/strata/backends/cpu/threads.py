"""How many threads CPU work uses: strata's two pools, one number for both. The Python pool
(``array.parallel_for``) splits NumPy's kernels; the native pool (native_pool.py, Note [Native
pool]) splits the C work: BLAS products (Note [Parallel GEMM] in linalg.py) and generated
kernels. The BLAS libraries loaded in the process (NumPy's OpenBLAS) are held at one thread
each, through threadpoolctl. OpenMP pools are left alone: strata runs no OpenMP code, and they
belong to other libraries (PyTorch's intra-op pool, when both are imported).

    >>> import strata
    >>> strata.set_num_threads(1)
    >>> strata.get_num_threads()
    1

Note [Default thread count]: the pool starts as wide as the cores this process may run on,
unless ``STRATA_NUM_THREADS`` or ``OMP_NUM_THREADS`` says otherwise. What makes that safe on a
busy machine is how the work is split, not how many threads there are. OpenBLAS splits a
product into one static part per thread, and its threads spin while they wait for work: when
another process keeps a core busy, a BLAS pool as wide as the machine has a thread waiting for
that core, and every product waits for it. On the 2-core machine this was measured on
(docs/performance.md, "Threads"), a small CNN's training step took 20-40 ms with one BLAS
thread and 115-155 ms with two while other processes kept the cores busy. strata's pools hand
chunks out dynamically (Note [CPU parallel_for] in array.py): a thread kept off its core
delays a loop by one chunk at most, and the caller runs the chunks nobody took. The Python
pool's threads sleep while idle; the native pool's spin for 1 ms after a loop, yielding
their core to any other runnable thread, then sleep. So BLAS runs one thread per call, and
strata's native pool splits the large products. PyTorch's default is every physical core too.
"""

import builtins
import os

from threadpoolctl import threadpool_limits

from ... import config
from . import array

BLAS_THREADS = 1   # per BLAS call: a product's parallelism is the pool's (Note [Parallel GEMM])


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity, else the machine's count)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def default_num_threads() -> int:
    """See Note [Default thread count]."""
    if config.num_threads is not None:
        return config.num_threads
    return usable_cores()


def get_num_threads() -> int:
    """Threads CPU kernels use, the large matrix products' included."""
    return array.NUM_THREADS


def set_num_threads(n: int) -> None:
    """Use ``n`` threads for CPU work from now on: strata's parallel loops, generated kernels and
    matrix products, on both pools (BLAS stays at one thread per call; Note [Default thread
    count]). The native pool's workers follow at its next loop."""
    if not isinstance(n, builtins.int) or isinstance(n, bool):   # PyTorch's RuntimeError:
        raise RuntimeError(  # noqa: TRY004
            f"set_num_threads expects an int, but got {type(n).__name__}")
    if n < 1:
        raise RuntimeError("set_num_threads expects a positive integer")
    array.resize_pool(n)
    hold_blas()


_interop_threads = None   # set once, as PyTorch allows


def get_num_interop_threads() -> int:
    """PyTorch's inter-op pool runs ``torch.jit.fork`` tasks; strata has no such tasks (ops run
    one after another, each may split over the pool above), so the number is only kept for the
    programs that set and read it, with PyTorch's default and rules."""
    return _interop_threads or usable_cores()


def set_num_interop_threads(n: int) -> None:
    """Accepted once, as in PyTorch (a second call raises its RuntimeError)."""
    global _interop_threads
    if not isinstance(n, builtins.int) or isinstance(n, bool):   # PyTorch's RuntimeError:
        raise RuntimeError(  # noqa: TRY004
            f"set_num_interop_threads expects an int, but got {type(n).__name__}")
    if n < 1:
        raise RuntimeError("set_num_interop_threads expects a positive integer")
    if _interop_threads is not None:
        raise RuntimeError("Error: cannot set number of interop threads after parallel work has "
                           "started or set_num_interop_threads called")
    _interop_threads = n


def hold_blas() -> None:
    """Hold the BLAS libraries loaded so far at one thread per call."""
    threadpool_limits(limits=BLAS_THREADS, user_api="blas")


def register() -> None:
    """Called once when the CPU backend registers: start at the default count."""
    set_num_threads(default_num_threads())
