"""``mp.spawn(fn, args, nprocs)`` (``torch/multiprocessing/spawn.py``): start ``nprocs``
processes running ``fn(i, *args)``; with ``join`` wait for all, and if one raised, stop the
others and raise ``ProcessRaisedException`` carrying its traceback."""

import multiprocessing
import signal
import traceback


class ProcessException(Exception):
    def __init__(self, msg, error_index, pid):
        super().__init__(msg)
        self.msg, self.error_index, self.pid = msg, error_index, pid

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.pid)


class ProcessRaisedException(ProcessException):
    """A spawned process raised: the message holds its traceback."""


class ProcessExitedException(ProcessException):
    """A spawned process exited with a non-zero code (or was killed by a signal)."""

    def __init__(self, msg, error_index, error_pid, exit_code, signal_name=None):
        super().__init__(msg, error_index, error_pid)
        self.exit_code, self.signal_name = exit_code, signal_name

    def __reduce__(self):
        return (type(self), (self.msg, self.error_index, self.pid, self.exit_code,
                             self.signal_name))


def _wrap(fn, i, args, error_queue):
    try:
        fn(i, *args)
    except KeyboardInterrupt:
        pass
    except Exception:  # noqa: BLE001 - reported to the parent, which raises it
        error_queue.put(traceback.format_exc())
        raise SystemExit(1)


class ProcessContext:
    def __init__(self, processes, error_queues):
        self.processes, self.error_queues = processes, error_queues

    def pids(self):
        return [p.pid for p in self.processes]

    def join(self, timeout=None):
        """Wait for the processes; True when all ended well, ProcessRaisedException (or
        ProcessExitedException) as soon as one failed (the others are terminated)."""
        for index, process in enumerate(self.processes):
            process.join(timeout)
            if process.exitcode is None:
                return False
            if process.exitcode != 0:
                self._fail(index, process)
        return True

    def _fail(self, index, failed):
        for process in self.processes:
            if process.is_alive():
                process.terminate()
            process.join()
        queue = self.error_queues[index]
        if not queue.empty():
            raise ProcessRaisedException(
                f"\n\n-- Process {index} terminated with the following error:\n{queue.get()}",
                index, failed.pid)
        code = failed.exitcode
        if code < 0:
            name = signal.Signals(-code).name
            raise ProcessExitedException(f"process {index} terminated with signal {name}",
                                         index, failed.pid, code, name)
        raise ProcessExitedException(f"process {index} terminated with exit code {code}", index,
                                     failed.pid, code)


def start_processes(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    context = multiprocessing.get_context(start_method)
    processes, queues = [], []
    for i in range(nprocs):
        queue = context.SimpleQueue()
        process = context.Process(target=_wrap, args=(fn, i, args, queue), daemon=daemon)
        process.start()
        processes.append(process)
        queues.append(queue)
    result = ProcessContext(processes, queues)
    if not join:
        return result
    while not result.join():
        pass
    return None


def spawn(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    """Run ``fn(i, *args)`` for i in range(nprocs), each in a new process."""
    return start_processes(fn, args, nprocs, join, daemon, start_method)
