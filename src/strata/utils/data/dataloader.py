"""``DataLoader``: batches from a dataset, in order, in this process or in worker processes
(``torch/utils/data/dataloader.py``).

    loader = DataLoader(TensorDataset(x, y), batch_size=64, shuffle=True,
                        generator=strata.Generator().manual_seed(0), num_workers=2)
    for xb, yb in loader: ...

With ``num_workers > 0`` each worker process has an index queue; all share one result queue.
The main process keeps ``prefetch_factor`` tasks per worker in flight, hands tasks out
round-robin, and yields results in task order whatever order they arrive in. Tensors cross the
process boundary by pickling (by value). Waiting is bounded: a dead worker (noticed by a
``SIGCHLD`` handler, see ``_signal_handling``) or ``timeout`` raises instead of hanging. At the end
of an epoch workers are told to stop and joined; after a failure they are terminated at once, so
the error reaches the user without waiting on a stuck worker.
"""

import itertools
import multiprocessing
import os
import queue
import time
import warnings

from ... import sim
from ...ops import factory as F
from . import _signal_handling, _worker
from ._collate import default_collate, default_convert, pin_memory
from ._worker import ExceptionWrapper, IterableDatasetStopIteration, ResumeIteration
from .dataset import IterableDataset
from .sampler import BatchSampler, RandomSampler, SequentialSampler

__all__ = ["DataLoader", "default_collate", "default_convert", "get_worker_info"]

get_worker_info = _worker.get_worker_info

_JOIN_TIMEOUT = 5.0          # a worker told to stop at the end of an epoch
_FAILED_JOIN_TIMEOUT = 0.5   # a worker terminated after an error or a timeout


class _InfiniteConstantSampler:
    """An iterable dataset has no indices: every task is "the next batch"."""

    def __iter__(self):
        while True:
            yield None


class DataLoader:
    """Combines a dataset and a sampler and iterates over batches. See the module docstring."""

    _FROZEN = ("batch_size", "batch_sampler", "sampler", "drop_last", "dataset",
               "persistent_workers")

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None,
                 num_workers=0, collate_fn=None, pin_memory=False, drop_last=False, timeout=0,
                 worker_init_fn=None, multiprocessing_context=None, generator=None, *,
                 prefetch_factor=None, persistent_workers=False, pin_memory_device="",
                 in_order=True):
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to "
                             "disable multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError("prefetch_factor option could only be specified in multiprocessing."
                             "let num_workers > 0 to enable multiprocessing, otherwise set "
                             "prefetch_factor to None.")
        if num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        elif prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError("prefetch_factor option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")
        if not in_order:
            raise ValueError("DataLoader: in_order=False is not supported by strata; batches "
                             "always arrive in sampler order")
        self._is_iterable = isinstance(dataset, IterableDataset)
        if self._is_iterable:
            if shuffle not in (False, None):
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified shuffle "
                                 f"option, but got shuffle={shuffle}")
            if sampler is not None:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified sampler "
                                 f"option, but got sampler={sampler}")
            if batch_sampler is not None:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified "
                                 f"batch_sampler option, but got batch_sampler={batch_sampler}")
        shuffle = bool(shuffle)
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, "
                                 "shuffle, sampler, and drop_last")
            batch_size, drop_last = None, False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually "
                             "exclusive with drop_last")
        if sampler is None:
            if self._is_iterable:
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)

        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator
        self.in_order = in_order
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn
        self.persistent_workers = persistent_workers
        self._iterator = None
        self.__initialized = True

    def __setattr__(self, attr, val):
        if self.__dict__.get("_DataLoader__initialized") and attr in self._FROZEN:
            raise ValueError(f"{attr} attribute should not be set after "
                             f"{self.__class__.__name__} is initialized")
        super().__setattr__(attr, val)

    @property
    def _auto_collation(self):
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        return self.batch_sampler if self._auto_collation else self.sampler

    def __len__(self):
        if self._is_iterable:
            length = len(self.dataset)
            if self.batch_size is not None:
                length = (length // self.batch_size if self.drop_last
                          else -(-length // self.batch_size))
            return length
        return len(self._index_sampler)

    def __iter__(self):
        if self.num_workers == 0:
            return _SingleProcessIter(self)
        if self.persistent_workers:
            if self._iterator is None or self._iterator._shutdown:
                self._iterator = _MultiProcessIter(self)
            else:
                self._iterator._reset()
            return self._iterator
        return _MultiProcessIter(self)


def _base_seed(loader):
    return int(F.randint(0, 2 ** 63 - 1, (), generator=loader.generator).item())


def _pins(loader):
    """Batches are pinned when asked and the sim accelerator is in use (PyTorch: when an
    accelerator is available). A CPU-only program gets PyTorch's warning instead: pinning would
    start the device process only to copy every batch into memory nothing reads from."""
    if not loader.pin_memory:
        return False
    if sim.is_initialized():
        return True
    warnings.warn("'pin_memory' argument is set as true but no accelerator is found, then "
                  "device pinned memory won't be used.", stacklevel=4)
    return False


def _pinned_if_asked(pin, batch):
    return pin_memory(batch) if pin else batch


class _SingleProcessIter:
    def __init__(self, loader):
        self._base_seed = _base_seed(loader)
        self._pin = _pins(loader)
        self._sampler_iter = iter(loader._index_sampler)
        self._fetch = _worker.fetcher(loader.dataset, loader._is_iterable,
                                      loader._auto_collation, loader.collate_fn,
                                      loader.drop_last)

    def __iter__(self):
        return self

    def __next__(self):
        index = next(self._sampler_iter)
        return _pinned_if_asked(self._pin, self._fetch(index))


class _MultiProcessIter:
    """Workers, queues and the bookkeeping that returns batches in order."""

    def __init__(self, loader):
        self._loader = loader
        self._num_workers = loader.num_workers
        self._prefetch = loader.prefetch_factor * loader.num_workers
        self._timeout = loader.timeout
        self._persistent = loader.persistent_workers
        self._shutdown = False
        self._workers = []
        ctx = loader.multiprocessing_context
        if ctx is None:
            ctx = multiprocessing.get_context()
        elif isinstance(ctx, str):
            ctx = multiprocessing.get_context(ctx)
        self._base_seed = _base_seed(loader)
        self._pin = _pins(loader)
        self._data_queue = ctx.Queue()
        self._done_event = ctx.Event()
        self._index_queues = []
        for worker_id in range(self._num_workers):
            index_queue = ctx.Queue()
            index_queue.cancel_join_thread()
            process = ctx.Process(target=_worker.worker_loop, daemon=True, args=(
                loader.dataset, loader._is_iterable, index_queue, self._data_queue,
                self._done_event, loader._auto_collation, loader.collate_fn, loader.drop_last,
                self._base_seed, loader.worker_init_fn, worker_id, self._num_workers,
                os.getpid()))
            process.start()
            self._index_queues.append(index_queue)
            self._workers.append(process)
        _signal_handling.set_worker_pids(id(self), [w.pid for w in self._workers])
        _signal_handling.install_sigchld_handler()
        self._start_epoch()

    def _start_epoch(self):
        self._sampler_iter = iter(self._loader._index_sampler)
        self._send_idx = 0          # next task to hand out
        self._rcvd_idx = 0          # next task to yield
        self._task_info = {}        # task -> (worker,) while pending, (worker, data) when here
        self._workers_status = [True] * self._num_workers
        self._worker_queue_idx_cycle = itertools.cycle(range(self._num_workers))
        for _ in range(self._prefetch):
            self._try_put_index()

    def _reset(self):
        """Persistent workers: a new epoch with the same processes."""
        for index_queue in self._index_queues:
            index_queue.put(ResumeIteration())
        acks = 0
        while acks < self._num_workers:
            task, _ = self._get_data()
            if isinstance(task, ResumeIteration):
                acks += 1
        self._start_epoch()

    def __iter__(self):
        return self

    def _try_put_index(self):
        try:
            index = next(self._sampler_iter)
        except StopIteration:
            return
        for _ in range(self._num_workers):
            worker_id = next(self._worker_queue_idx_cycle)
            if self._workers_status[worker_id]:
                break
        else:
            return  # every worker's iterable dataset is exhausted
        self._index_queues[worker_id].put((self._send_idx, index))
        self._task_info[self._send_idx] = (worker_id,)
        self._send_idx += 1

    def _get_data(self):
        """One result from any worker, waiting at most ``timeout`` (if set) and noticing dead
        workers every few seconds."""
        deadline = time.monotonic() + self._timeout if self._timeout > 0 else None
        while True:
            wait = _worker.STATUS_CHECK_INTERVAL
            if deadline is not None:
                wait = min(wait, max(deadline - time.monotonic(), 0))
            try:
                return self._data_queue.get(timeout=wait)
            except queue.Empty:
                failures = [_signal_handling.worker_failure(w.pid) for w in self._workers]
                failures = [f for f in failures if f is not None]
                dead = [w for w in self._workers if not w.is_alive()]
                if failures or dead:
                    pids = ", ".join(str(w.pid) for w in dead)
                    self._shutdown_workers(failed=True)
                    raise RuntimeError(" ".join(failures) or f"DataLoader worker (pid(s) "
                                       f"{pids}) exited unexpectedly") from None
                if deadline is not None and time.monotonic() >= deadline:
                    self._shutdown_workers(failed=True)
                    raise RuntimeError(f"DataLoader timed out after {self._timeout} "
                                       f"seconds") from None
            except RuntimeError:  # the SIGCHLD handler: a worker died, maybe mid-message
                self._shutdown_workers(failed=True)
                raise

    def __next__(self):
        while True:
            # Skip tasks that went to a worker whose iterable dataset has run out.
            while self._rcvd_idx < self._send_idx:
                info = self._task_info[self._rcvd_idx]
                if len(info) == 2 or self._workers_status[info[0]]:
                    break
                del self._task_info[self._rcvd_idx]
                self._rcvd_idx += 1
            else:
                if not self._persistent:
                    self._shutdown_workers()
                raise StopIteration
            info = self._task_info[self._rcvd_idx]
            if len(info) == 2:
                del self._task_info[self._rcvd_idx]
                self._rcvd_idx += 1
                return self._process_data(info[1])
            if self._shutdown:
                raise RuntimeError("DataLoader: the worker processes have been shut down")
            idx, data = self._get_data()
            if isinstance(data, IterableDatasetStopIteration):
                self._workers_status[data.worker_id] = False
                self._try_put_index()
                continue
            if idx != self._rcvd_idx:
                self._task_info[idx] += (data,)  # early: keep it until its turn
                continue
            del self._task_info[idx]
            self._rcvd_idx += 1
            return self._process_data(data)

    def _process_data(self, data):
        self._try_put_index()
        if isinstance(data, ExceptionWrapper):
            if not self._persistent:
                self._shutdown_workers()  # the epoch is over; persistent workers stay for more
            data.reraise()
        return _pinned_if_asked(self._pin, data)

    def __len__(self):
        return len(self._loader)

    def _shutdown_workers(self, failed=False):
        """Stop every worker: a sentinel and a bounded join, then terminate stragglers. After a
        failure (a dead worker, a timeout) the result pipe may hold half a message and a worker
        may be stuck, so all are terminated at once (then killed if they ignore it). At
        interpreter exit it does nothing: multiprocessing terminates the daemonic workers."""
        if self._shutdown or _signal_handling.python_exiting():
            return
        self._shutdown = True
        _signal_handling.remove_worker_pids(id(self))  # their exits are expected from now on
        failed = failed or not all(w.is_alive() for w in self._workers)
        self._done_event.set()
        for index_queue in self._index_queues:
            try:
                index_queue.put(None)
            except (OSError, ValueError):
                pass
        if failed:
            for process in self._workers:
                process.terminate()
        join_timeout = _FAILED_JOIN_TIMEOUT if failed else _JOIN_TIMEOUT
        for process in self._workers:
            process.join(timeout=join_timeout)
            if process.is_alive():
                if failed:
                    process.kill()
                else:
                    process.terminate()
                process.join(timeout=join_timeout)
        for index_queue in self._index_queues:
            index_queue.close()
        self._data_queue.cancel_join_thread()
        self._data_queue.close()

    def __del__(self):
        if self._workers:
            self._shutdown_workers()
