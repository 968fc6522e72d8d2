"""How many threads CPU work uses: strata's kernel pool (``array.parallel_for``) and the BLAS
libraries loaded in the process (NumPy's OpenBLAS, through threadpoolctl), under one number.
OpenMP pools are left alone: strata runs no OpenMP code, and they belong to other libraries
(PyTorch's intra-op pool, when both are imported).

    >>> import strata
    >>> strata.set_num_threads(1)
    >>> strata.get_num_threads()
    1

Note [Default thread count]: the default is one thread less than the cores this process may
run on (at least one), unless ``STRATA_NUM_THREADS`` or ``OMP_NUM_THREADS`` says otherwise.
OpenBLAS's threads spin while they wait for work; when another process keeps a core busy, a
pool as wide as the machine has a thread that waits for that core, and every matmul waits for
it. On the 2-core machine this was measured on (docs/performance.md), a small CNN's training
step took about 20-40 ms with one thread and 115-155 ms with two while other processes kept the
cores busy, and was no faster with two on an idle machine. Leaving one core free costs little
when the machine is idle and keeps one other busy process from collapsing the step. PyTorch's
default is every physical core; ``set_num_threads`` sets the same number here for a machine
that is known to be idle.
"""

import builtins
import os

from threadpoolctl import threadpool_limits

from ... import config
from . import array


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity, else the machine's count)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def default_num_threads() -> int:
    """See Note [Default thread count]."""
    if config.num_threads is not None:
        return config.num_threads
    return max(1, usable_cores() - 1)


def get_num_threads() -> int:
    """Threads CPU kernels use: strata's pool and BLAS share this one number."""
    return array.NUM_THREADS


def set_num_threads(n: int) -> None:
    """Use ``n`` threads for CPU work from now on: strata's parallel loops and every BLAS
    library loaded in the process (a library loaded later gets it from ``apply``)."""
    if not isinstance(n, builtins.int) or isinstance(n, bool):   # PyTorch's RuntimeError:
        raise RuntimeError(  # noqa: TRY004
            f"set_num_threads expects an int, but got {type(n).__name__}")
    if n < 1:
        raise RuntimeError("set_num_threads expects a positive integer")
    array.resize_pool(n)
    apply()


def apply() -> None:
    """Impose the current count on the BLAS libraries loaded so far."""
    threadpool_limits(limits=array.NUM_THREADS, user_api="blas")


def register() -> None:
    """Called once when the CPU backend registers: start at the default count."""
    set_num_threads(default_num_threads())
