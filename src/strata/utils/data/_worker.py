"""What runs inside a DataLoader worker process (``torch/utils/data/_utils/worker.py``).

A worker takes ``(task index, sample indices)`` from its own index queue, fetches and collates the
batch, and puts ``(task index, batch)`` on the result queue shared by all workers. An exception
travels back as an ``ExceptionWrapper`` and is re-raised in the main process with the worker id
and the worker's traceback. A worker exits on ``None``, when the done event is set, or when its
parent process is gone (checked every ``STATUS_CHECK_INTERVAL`` seconds), so it never outlives
the program.
"""

import os
import pickle
import queue
import random
import sys
import traceback

import numpy as np

from ...random import manual_seed

STATUS_CHECK_INTERVAL = 1.0


class WorkerInfo:
    """What ``get_worker_info()`` returns inside a worker: ``id``, ``num_workers``, ``seed`` and
    this worker's copy of ``dataset``."""

    __initialized = False

    def __init__(self, **kwargs):
        for k, v in kwargs.items():
            setattr(self, k, v)
        self.__keys = tuple(kwargs)
        self.__initialized = True

    def __setattr__(self, key, val):
        if self.__initialized:
            raise RuntimeError(f"Cannot assign attributes to {self.__class__.__name__} objects")
        return super().__setattr__(key, val)

    def __repr__(self):
        items = ", ".join(f"{k}={getattr(self, k)}" for k in self.__keys)
        return f"{self.__class__.__name__}({items})"


_worker_info = None


def get_worker_info():
    """The current worker's ``WorkerInfo``, or None in the main process."""
    return _worker_info


class KeyErrorMessage(str):
    """``str(KeyError(msg))`` is ``repr(msg)``, which would print the traceback on one line with
    its newlines escaped; this string's repr is itself."""

    def __repr__(self):
        return self


class ExceptionWrapper:
    """An exception's class and traceback text, so it can cross a process boundary
    (``torch/_utils.py``); ``reraise`` raises the same class in the main process."""

    def __init__(self, exc_info, where):
        self.exc_type = exc_info[0]
        self.exc_msg = "".join(traceback.format_exception(*exc_info))
        self.where = where
        try:  # a class the main process cannot unpickle (a local class) would be lost in transit
            pickle.loads(pickle.dumps(self.exc_type))
        except Exception:  # noqa: BLE001 - any failure to pickle means the same
            self.exc_msg = f"({self.exc_type.__qualname__} cannot be pickled) {self.exc_msg}"
            self.exc_type = RuntimeError

    def reraise(self):
        msg = f"Caught {self.exc_type.__name__} {self.where}.\nOriginal {self.exc_msg}"
        if self.exc_type is KeyError:
            msg = KeyErrorMessage(msg)
        elif getattr(self.exc_type, "message", None):
            # Some exceptions take the message only as a keyword argument.
            raise self.exc_type(message=msg)
        try:
            exception = self.exc_type(msg)
        except Exception:
            # The class cannot be built from one string: keep the message, lose the class.
            raise RuntimeError(msg) from None
        raise exception


class IterableDatasetStopIteration:
    """A worker's iterable-dataset copy is exhausted."""

    def __init__(self, worker_id):
        self.worker_id = worker_id


class ResumeIteration:
    """Persistent workers: start a new epoch (a fresh iterator over an iterable dataset)."""


def fetcher(dataset, is_iterable, auto_collation, collate_fn, drop_last):
    """A function from sample indices (or None, for iterable datasets) to a collated batch."""
    if is_iterable:
        it = iter(dataset)

        def fetch(possibly_batched_index):
            if not auto_collation:
                return collate_fn(next(it))
            data = []
            for _ in possibly_batched_index:
                try:
                    data.append(next(it))
                except StopIteration:
                    break
            if not data or (drop_last and len(data) < len(possibly_batched_index)):
                raise StopIteration
            return collate_fn(data)
        return fetch

    getitems = getattr(dataset, "__getitems__", None)

    def fetch(possibly_batched_index):
        if not auto_collation:
            return collate_fn(dataset[possibly_batched_index])
        if callable(getitems):
            return collate_fn(getitems(possibly_batched_index))
        return collate_fn([dataset[i] for i in possibly_batched_index])
    return fetch


def seed_worker(base_seed, worker_id):
    """Python's, NumPy's and strata's generators get a different seed in every worker."""
    seed = base_seed + worker_id
    random.seed(seed)
    manual_seed(seed)
    np.random.seed(np.random.SeedSequence([worker_id, base_seed]).generate_state(4))
    return seed


def worker_loop(dataset, is_iterable, index_queue, data_queue, done_event, auto_collation,
                collate_fn, drop_last, base_seed, init_fn, worker_id, num_workers, parent_pid):
    global _worker_info
    try:
        seed = seed_worker(base_seed, worker_id)
        _worker_info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed,
                                  dataset=dataset)
        init_error = None
        try:
            if init_fn is not None:
                init_fn(worker_id)
            fetch = fetcher(dataset, is_iterable, auto_collation, collate_fn, drop_last)
        except Exception:
            init_error = ExceptionWrapper(sys.exc_info(),
                                          f"in DataLoader worker process {worker_id}")
        exhausted = False
        while True:
            try:
                task = index_queue.get(timeout=STATUS_CHECK_INTERVAL)
            except queue.Empty:
                if os.getppid() != parent_pid:
                    # Orphaned: nobody will read what is still queued, and a sibling killed
                    # mid-send may hold the queue's write lock; waiting to flush would keep
                    # this process (and its memory) alive forever.
                    data_queue.cancel_join_thread()
                    return
                if done_event.is_set():
                    return
                continue
            if task is None:
                return
            if isinstance(task, ResumeIteration):
                data_queue.put((task, None))
                exhausted = False
                fetch = fetcher(dataset, is_iterable, auto_collation, collate_fn, drop_last)
                continue
            if done_event.is_set() or exhausted:
                continue  # draining: the main process no longer wants data
            idx, index = task
            if init_error is not None:
                data, init_error = init_error, None
            else:
                try:
                    data = fetch(index)
                except StopIteration:
                    if is_iterable:
                        data = IterableDatasetStopIteration(worker_id)
                        exhausted = True
                    else:
                        data = ExceptionWrapper(sys.exc_info(),
                                                f"in DataLoader worker process {worker_id}")
                except Exception:
                    data = ExceptionWrapper(sys.exc_info(),
                                            f"in DataLoader worker process {worker_id}")
            data_queue.put((idx, data))
    except KeyboardInterrupt:
        pass  # the main process handles the interrupt and shuts the workers down
    finally:
        if done_event.is_set():
            data_queue.cancel_join_thread()
            data_queue.close()
