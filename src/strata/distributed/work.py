"""``Work``: a collective in flight, and the worker thread that runs a group's collectives.

Note [One worker per group]: every collective of a group, synchronous or not, is queued to the
group's one worker thread, which runs them in issue order with blocking MPI calls. MPI needs all
ranks to start a communicator's collectives in the same order, and a FIFO gives exactly that;
mpi4py releases the GIL inside MPI calls, so the caller (e.g. the rest of backward) keeps running
while the worker communicates, as gloo's worker threads do. A caller waits on a
``threading.Event`` with the group's timeout, so a collective whose peers never arrive ends the
job with a clear error instead of a hang.

Point-to-point ops do not use the worker: two ranks that each ``isend`` then ``recv`` would
deadlock in a FIFO; they post MPI's nonblocking ``Isend``/``Irecv`` at once instead.
"""

import itertools
import queue
import threading
import time

from ..core import trace


class Future:
    """``Work.get_future()``: the outputs of a finished collective."""

    def __init__(self, work):
        self._work = work

    def wait(self):
        self._work.wait()
        return self._work.result()

    def value(self):
        return self.wait()

    def done(self) -> bool:
        return self._work.is_completed()


class Work:
    """One collective. ``wait()`` blocks until it finished (and raises its error if it failed);
    ``is_completed()`` never blocks. Outputs that had to be staged through a host copy (a
    non-contiguous or non-CPU tensor) are written back by ``wait()``."""

    def __init__(self, op_name, timeout_s, on_timeout, outputs=()):
        self.op_name = op_name
        self._timeout_s = timeout_s
        self._on_timeout = on_timeout
        self._outputs = list(outputs)
        self._done = threading.Event()
        self._error = None
        self._write_backs = []
        self._waited = False

    # the worker's side
    def _finish(self, error=None):
        self._error = error
        self._done.set()

    def _after_wait(self, fn):
        self._write_backs.append(fn)

    # the caller's side
    def _block(self, deadline_s):
        if not self._done.wait(deadline_s):
            self._on_timeout(f"{self.op_name} did not finish within the process group's timeout "
                             f"({deadline_s:g} s): a rank died, hangs, or called a different "
                             f"collective")

    def wait(self, timeout=None) -> bool:
        seconds = self._timeout_s if timeout is None else _seconds(timeout)
        self._block(seconds)
        if self._error is not None:
            raise self._error
        if not self._waited:
            self._waited = True
            for write_back in self._write_backs:
                write_back()
        return True

    def is_completed(self) -> bool:
        return self._done.is_set()

    def is_success(self) -> bool:
        return self._done.is_set() and self._error is None

    def exception(self):
        return self._error

    def result(self):
        return list(self._outputs)

    def get_future(self) -> Future:
        return Future(self)

    def __repr__(self):
        state = "completed" if self.is_completed() else "pending"
        return f"<Work {self.op_name} {state}>"


class RequestWork(Work):
    """A point-to-point op: an MPI request posted by the caller, polled until it completes."""

    def __init__(self, op_name, timeout_s, on_timeout, request, outputs=()):
        super().__init__(op_name, timeout_s, on_timeout, outputs)
        self._request = request
        self.status = None

    def _poll(self):
        if not self._done.is_set() and self._request.Test(self.status):
            self._finish()
        return self._done.is_set()

    def _block(self, deadline_s):
        deadline = time.monotonic() + deadline_s
        pause = 0.0
        while not self._poll():
            if time.monotonic() > deadline:
                self._on_timeout(f"{self.op_name} did not finish within the process group's "
                                 f"timeout ({deadline_s:g} s): the peer died or never posted "
                                 f"the matching operation")
            time.sleep(pause)
            pause = min(pause * 2 or 1e-5, 1e-3)

    def is_completed(self) -> bool:
        return self._poll()


def _seconds(timeout):
    return timeout.total_seconds() if hasattr(timeout, "total_seconds") else float(timeout)


_work_ids = itertools.count()   # links a collective's "post" event to its "run" span


class Worker:
    """The thread that runs one group's collectives in issue order (Note [One worker per
    group]). Its thread name, ``strata-comm <group>``, names the comm track of a Chrome trace."""

    def __init__(self, group_name, timeout_s, on_timeout):
        self.group_name = group_name
        self.timeout_s = timeout_s
        self.on_timeout = on_timeout
        self._queue = queue.SimpleQueue()
        self._thread = None
        self._lock = threading.Lock()

    def submit(self, op_name, run, outputs=(), **trace_fields) -> Work:
        """Queue ``run()`` (the MPI calls) and return its Work."""
        work = Work(op_name, self.timeout_s, self.on_timeout, outputs)
        work_id = next(_work_ids)
        if trace.active:
            trace.instant("comm", f"post {op_name}", kind="post", work=work_id,
                          group=self.group_name, **trace_fields)
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._loop, daemon=True,
                                                name=f"strata-comm {self.group_name}")
                self._thread.start()
            self._queue.put((work, run, dict(trace_fields, work=work_id),
                             time.perf_counter_ns()))
        time.sleep(0)   # hand the GIL over now, so the worker starts the MPI call at once
        return work

    def _loop(self):
        while True:
            item = self._queue.get()
            if item is None:
                return
            work, run, fields, queued_ns = item
            span = None
            if trace.active:
                span = trace.begin("comm", f"mpi:{work.op_name}", kind="run",
                                   group=self.group_name,
                                   queued_ns=time.perf_counter_ns() - queued_ns, **fields)
            try:
                run()
            except BaseException as exc:   # handed to the caller, which raises it in wait()
                work._finish(exc)
            else:
                work._finish()
            finally:
                if span is not None:
                    trace.end(span)

    def close(self):
        with self._lock:
            if self._thread is not None:
                self._queue.put(None)
                self._thread = None


# Note [Waiting without spinning]: MPICH's blocking calls busy-poll a core until the peer
# arrives. A comm thread spinning like that during backward takes the core the backward needs
# (ranks usually have one core each), so the worker waits for a nonblocking call instead:
# it tests the request (which also makes MPI progress) a few times, then sleeps between tests
# with a backoff capped at MAX_PAUSE_S.
SPINS_BEFORE_SLEEP = 200
MAX_PAUSE_S = 2e-4


def finish(request):
    """Wait for an MPI request, yielding the CPU while it is not done."""
    spins, pause = 0, 0.0
    while not request.Test():
        spins += 1
        if spins > SPINS_BEFORE_SLEEP:
            time.sleep(pause)
            pause = min(pause * 2 or 1e-5, MAX_PAUSE_S)


class YieldingComm:
    """A communicator whose blocking collectives are its nonblocking ones plus ``finish``."""

    def __init__(self, comm):
        self._comm = comm

    def __getattr__(self, name):
        return getattr(self._comm, name)

    def Allreduce(self, *args, **kwargs):
        finish(self._comm.Iallreduce(*args, **kwargs))

    def Reduce(self, *args, **kwargs):
        finish(self._comm.Ireduce(*args, **kwargs))

    def Bcast(self, *args, **kwargs):
        finish(self._comm.Ibcast(*args, **kwargs))

    def Allgather(self, *args, **kwargs):
        finish(self._comm.Iallgather(*args, **kwargs))

    def Allgatherv(self, *args, **kwargs):
        finish(self._comm.Iallgatherv(*args, **kwargs))

    def Gather(self, *args, **kwargs):
        finish(self._comm.Igather(*args, **kwargs))

    def Scatter(self, *args, **kwargs):
        finish(self._comm.Iscatter(*args, **kwargs))

    def Alltoallv(self, *args, **kwargs):
        finish(self._comm.Ialltoallv(*args, **kwargs))

    def Barrier(self):
        finish(self._comm.Ibarrier())
