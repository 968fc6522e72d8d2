"""``strata.multiprocessing``: Python's ``multiprocessing`` plus tensors in shared memory
(``torch/multiprocessing``), so Hogwild training works:

    model.share_memory()                       # parameters move into shared memory
    workers = [mp.Process(target=train, args=(model,)) for _ in range(4)]

Note [Shared tensors]: ``Tensor.share_memory_()`` moves a CPU tensor's storage into a POSIX
shared-memory segment (``multiprocessing.shared_memory``). A forked child maps the same pages; a
spawned or forkserver child receives shared tensors through this module's pickler reducer as the
segment's name plus the tensor's geometry, and maps it too, so every process reads and writes the
same numbers. Tensors that are not shared are sent by value, as strata pickles them elsewhere
(PyTorch instead moves them into shared memory on the way). The creating process unlinks a
segment when its storage dies. A view whose data was already read before ``share_memory_()``
keeps its NumPy view of the old memory (tensors cache it); views read afterwards share.
"""

import copyreg
import multiprocessing
from multiprocessing import *  # noqa: F401,F403  (Process, Queue, Pool, get_context, ...)
from multiprocessing.reduction import ForkingPickler

from .. import _tensor
from .sharing import is_shared, rebuild_shared_tensor, share_memory_, shared_handle
from .spawn import (  # noqa: F401
    ProcessContext, ProcessExitedException, ProcessRaisedException, spawn, start_processes,
)

__all__ = list(multiprocessing.__all__) + [
    "spawn", "start_processes", "ProcessContext", "ProcessRaisedException",
    "ProcessExitedException", "get_sharing_strategy", "set_sharing_strategy",
    "get_all_sharing_strategies"]

_SHARING_STRATEGIES = {"file_descriptor", "file_system"}
_sharing_strategy = ["file_system"]


def get_all_sharing_strategies():
    """Both of PyTorch's names; strata's segments are named files in /dev/shm either way."""
    return set(_SHARING_STRATEGIES)


def set_sharing_strategy(new_strategy):
    if new_strategy not in _SHARING_STRATEGIES:
        raise ValueError(f"invalid sharing strategy: {new_strategy!r}")
    _sharing_strategy[0] = new_strategy


def get_sharing_strategy():
    return _sharing_strategy[0]


def _reduce_tensor(t):
    """Through multiprocessing queues and pipes: a shared tensor by its segment, others by
    value (the copyreg reducer ``serialization.py`` registers)."""
    if is_shared(t):
        return rebuild_shared_tensor, shared_handle(t)
    return copyreg.dispatch_table[_tensor.Tensor](t)


ForkingPickler.register(_tensor.Tensor, _reduce_tensor)
_tensor.Tensor.share_memory_ = share_memory_
_tensor.Tensor.is_shared = is_shared
