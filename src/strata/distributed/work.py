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
    """An op the caller posted as a nonblocking MPI request (point-to-point ops, DDP's bucket
    all-reduces), tested until it completes. ``span``, when tracing, is its comm "run" event,
    ended when a test first finds the request complete."""

    def __init__(self, op_name, timeout_s, on_timeout, request, outputs=(), span=None):
        super().__init__(op_name, timeout_s, on_timeout, outputs)
        self._request = request
        self._span = span
        self.status = None

    def _poll(self):
        if not self._done.is_set() and self._request.Test(self.status):
            self._complete()
        return self._done.is_set()

    def _complete(self):
        if self._span is not None:
            self._span.end_ns = time.perf_counter_ns()
        self._finish()

    def _block(self, deadline_s):
        if self._done.is_set():
            return   # testing a completed request again would overwrite its status
        if not finish(self._request, deadline_s, self.status):
            self._on_timeout(f"{self.op_name} did not finish within the process group's "
                             f"timeout ({deadline_s:g} s): a peer died, hangs, or never posted "
                             f"the matching operation")
        self._complete()

    def progress(self):
        """Test the request once: MPICH advances every pending request only inside MPI calls,
        so a caller with requests in flight calls this between its own work."""
        return self._poll()

    def is_completed(self) -> bool:
        return self._poll()


def _seconds(timeout):
    return timeout.total_seconds() if hasattr(timeout, "total_seconds") else float(timeout)


_work_ids = itertools.count()   # links a collective's "post" event to its "run" span


# Note [Requests on the caller's thread]: a collective that the worker runs waits for the GIL
# at every step. While the caller runs Python (DDP: the rest of backward), the worker gets the
# GIL back only when the caller's switch interval (5 ms) runs out, both to start the MPI call
# and after each test of it; measured on the 2-rank DDP MLP step, a 1 MB bucket took 5-10 ms
# from ready to done instead of 0.3 ms. DDP therefore starts its bucket all-reduces itself, as
# nonblocking requests on a communicator of its own (``ProcessGroup.dup_comm``, so they cannot
# interleave with the worker's collectives), tests them from its later gradient hooks (MPICH
# advances requests only inside MPI calls) and waits for them at the end of backward.


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

    def start_request(self, op_name, start, **trace_fields) -> RequestWork:
        """Run ``start()``, which posts a nonblocking MPI call and returns its request, on the
        caller's thread instead of queueing it (Note [Requests on the caller's thread]). When
        tracing, its post and its time in flight show on this group's comm track."""
        span = None
        if trace.active:
            work_id = next(_work_ids)
            trace.instant("comm", f"post {op_name}", kind="post", work=work_id,
                          group=self.group_name, request=True, **trace_fields)
            span = trace.Event("comm", f"mpi:{op_name}", time.perf_counter_ns(), 0,
                               dict(kind="run", group=self.group_name, work=work_id,
                                    request=True, **trace_fields))
            if self._thread is not None:
                span.thread = self._thread.ident   # the comm track, not the caller's
            trace.record(span)
        return RequestWork(op_name, self.timeout_s, self.on_timeout, start(), span=span)

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
# arrives, and MPICH advances a nonblocking request only inside MPI calls. A waiter therefore
# tests the request (which makes MPI progress) in a tight loop for a moment (SPIN_S), which
# catches a peer that is already communicating, then sleeps between tests with a backoff capped
# at MAX_PAUSE_S, so that it does not keep a core that the peer needs: ranks usually have one
# core each, and on a busy machine both ranks may share one. Measured on the 2-rank DDP MLP step
# (2 cores, load average about 3, medians of 6 interleaved jobs): spinning for 2 ms before
# sleeping gave 14.7 ms per step, 50 us gave 11.7 ms, sleeping at once 11.3 ms.
SPIN_S = 5e-5
MAX_PAUSE_S = 2e-4


def finish(request, timeout_s=None, status=None) -> bool:
    """Wait for an MPI request (Note [Waiting without spinning]); False if ``timeout_s`` passed
    first."""
    start = time.monotonic()
    spin_until = start + SPIN_S
    deadline = None if timeout_s is None else start + timeout_s
    pause = 1e-5
    while not request.Test(status):
        now = time.monotonic()
        if deadline is not None and now > deadline:
            return False
        if now > spin_until:
            time.sleep(pause)
            pause = min(pause * 2, MAX_PAUSE_S)
    return True


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
