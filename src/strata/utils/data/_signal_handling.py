"""Noticing dead DataLoader workers at once (``torch/utils/data/_utils/signal_handling.py``).

A worker killed while it writes a batch leaves half a message in the result pipe; the main
process, blocked reading the rest, would wait forever, and a poll on a timer never runs. A
``SIGCHLD`` handler runs in the main thread whenever a child exits: the blocking read is
interrupted, the handler checks the registered workers with ``waitid(WNOHANG | WNOWAIT)`` (which
leaves the exit status for ``Process.join``) and raises, naming the worker's pid and its exit code
or signal. Python runs signal handlers only in the main thread; a loader iterated in another
thread falls back to the periodic liveness check.

At interpreter exit, multiprocessing's atexit hook terminates the daemonic workers of loaders
still alive (a module-level loader with ``persistent_workers=True``): those deaths are expected,
so, as PyTorch's ``python_exit_status``, an atexit hook that runs before it (registered later)
marks the exit, unregisters every worker and makes shutting them down a no-op.
"""

import atexit
import multiprocessing.util  # noqa: F401  (registers its atexit hook before ours: ours runs first)
import os
import signal
import threading

# id(iterator) -> worker pids, for the iterators whose workers must not die. No lock: the
# handler runs in the main thread between bytecodes and would deadlock on one the thread holds;
# single dict operations are atomic under the GIL.
_worker_pids = {}
_handler_installed = False
_python_exiting = False


def python_exiting():
    return _python_exiting


@atexit.register
def _mark_python_exit():
    global _python_exiting
    _python_exiting = True
    _worker_pids.clear()


def set_worker_pids(key, pids):
    _worker_pids[key] = tuple(pids)


def remove_worker_pids(key):
    _worker_pids.pop(key, None)


def worker_failure(pid):
    """A message naming how worker ``pid`` ended, or None while it runs or after a clean exit."""
    try:
        status = os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except ChildProcessError:  # already reaped (by Process.join): not ours to judge
        return None
    if status is None:
        return None
    if status.si_code == os.CLD_EXITED:
        if status.si_status == 0:
            return None
        return (f"DataLoader worker (pid {pid}) exited unexpectedly with exit code "
                f"{status.si_status}. Details are lost due to multiprocessing. Rerunning with "
                f"num_workers=0 may give better error trace.")
    name = signal.strsignal(status.si_status) or f"signal {status.si_status}"
    return (f"DataLoader worker (pid {pid}) is killed by signal: {name} "
            f"({signal.Signals(status.si_status).name}).")


def error_if_any_worker_fails():
    """Raise for the first registered worker that died; its loader's workers are then
    unregistered, so one failure raises once, not again at every later child exit."""
    for key, pids in list(_worker_pids.items()):
        for pid in pids:
            message = worker_failure(pid)
            if message is not None:
                remove_worker_pids(key)
                raise RuntimeError(message)


def install_sigchld_handler():
    """Install the handler once (chaining any previous one); a no-op outside the main thread."""
    global _handler_installed
    if _handler_installed or threading.current_thread() is not threading.main_thread():
        return
    previous = signal.getsignal(signal.SIGCHLD)
    if not callable(previous):
        previous = None

    def handler(signum, frame):
        error_if_any_worker_fails()
        if previous is not None:
            previous(signum, frame)

    signal.signal(signal.SIGCHLD, handler)
    _handler_installed = True
