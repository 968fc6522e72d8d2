"""The sim driver: the runtime's only way to the device, shaped like a GPU driver's ioctls.

    drv = SimDriver.open(vram_bytes=1 << 30, host_bytes=256 << 20)   # starts the device process
    bo = drv.alloc_bo(2 << 20)                   # a buffer object in device memory
    q = drv.create_queue()
    seq = drv.submit(q, OP_WRITE_VALUE, a0=addr, a1=7)   # record -> ring, then the doorbell
    drv.wait_fence(q, seq)                       # poll the fence, or block on the interrupt

``open`` creates the shared regions (``memfd_create``, sized with ``ftruncate``: pages are only
touched when used), one doorbell eventfd per queue and the interrupt eventfd, and starts the
device process (``python -m strata.backends.sim.device``) with those file descriptors. ``submit``
packs a fixed-size record into the queue's ring, copies a variable-size payload into the queue's
argument arena, publishes the ring head and rings the doorbell (``eventfd_write``: a real
syscall) unless the queue's command processor is awake (Note [Doorbell suppression] in
``commands.py``). The device writes each queue's fence when a record completes.

A watchdog thread waits on the device's pidfd: if the device process dies, every later call
raises ``DeviceLost`` at once, and waiters are woken through the interrupt eventfd. A device
that is alive but makes no progress (stopped, hung) is caught by the waits themselves: Note
[Fence watchdog].
"""

import atexit
import collections
import mmap
import os
import pathlib
import select
import subprocess
import sys
import threading
import time

from ...core import trace
from ...runtime import OutOfDeviceMemory
from . import commands as C
from .memory import RangeAllocator

_now = time.perf_counter_ns
SPIN_NS = 50_000            # poll mode: spin this long, then yield the CPU ...
YIELD_NS = 1_000_000        # ... this long (sched_yield: runs others, returns at once if idle),
MAX_SLEEP_S = 1e-3          # then sleep, doubling up to this
IRQ_TIMEOUT_MS = 50         # interrupt mode: re-check liveness this often


class DeviceLost(RuntimeError):
    """The device process is gone; its memory and queued work are lost."""


class DeviceTimeout(RuntimeError):
    """A wait for the device saw its queue complete nothing for ``STRATA_SIM_TIMEOUT`` s."""


class QueuesExhausted(RuntimeError):
    """Every hardware queue is in use."""


_STOPPED = "T"
_PROCESS_STATES = {"?": "in an unknown state", "R": "running", "S": "sleeping",
                   "D": "in uninterruptible sleep (I/O)", "T": "stopped (by a signal such as "
                   "SIGSTOP)", "t": "stopped by a debugger", "Z": "a zombie"}


class _FenceWatch:
    """Note [Fence watchdog]: a host that waits for a fence must not hang forever on a device
    that has stopped (SIGSTOP, a debugger) or hangs. A wait gives up when the awaited queue has
    completed no command for ``timeout_s``: any completion restarts the clock, so a long run of
    kernels never trips it, only one command (or a stopped device) taking the whole time does.
    A device process still starting up (importing, on a busy machine) has not failed to make
    progress either: until it says it runs (``REG_PID``), only a stopped process trips it. The
    check runs once per period; the message names the queue, the fence value awaited and
    reached, and the device process's state."""

    __slots__ = ("driver", "qid", "seq", "reason", "deadline", "fence", "period")

    def __init__(self, driver, qid, seq, reason, t0):
        self.driver = driver
        self.qid = qid
        self.seq = seq
        self.reason = reason
        self.period = int(driver.timeout_s * 1e9) or None
        self.deadline = t0 + self.period if self.period else float("inf")
        self.fence = driver.fence(qid)

    def check(self, now):
        driver = self.driver
        fence = driver.fence(self.qid)
        state = driver.process_state()
        if fence != self.fence or (not driver.started() and state != _STOPPED):
            self.fence = fence            # progress, or still starting: another period
            self.deadline = now + self.period
            return
        raise DeviceTimeout(
            f"sim device watchdog: queue {self.qid} did not reach fence {self.seq} "
            f"(waiting for: {self.reason}); its fence has stayed at {fence} for "
            f"{driver.timeout_s:g} s. The device process (pid {driver.pid}) is "
            f"{_PROCESS_STATES.get(state, f'in state {state!r}')}. Set STRATA_SIM_TIMEOUT to "
            f"wait longer (0: forever).")


class BufferObject:
    """A region of device (or host-visible) memory held by the driver."""

    __slots__ = ("handle", "addr", "offset", "size", "host")

    def __init__(self, handle, offset, size, host):
        self.handle = handle
        self.offset = offset
        self.size = size
        self.host = host
        self.addr = offset | (C.HOST_BIT if host else 0)

    def __repr__(self):
        return (f"BufferObject(handle={self.handle}, addr={self.addr:#x}, size={self.size}, "
                f"{'host' if self.host else 'vram'})")


class _Queue:
    """The host's side of one hardware queue: its ring, its arena, the next sequence number."""

    __slots__ = ("id", "lock", "seq", "ring", "arena", "arena_head", "payloads", "doorbell")

    def __init__(self, qid, ring, arena, doorbell):
        self.id = qid
        self.lock = threading.Lock()
        self.seq = 0
        self.ring = ring
        self.arena = arena
        self.arena_head = 0
        self.payloads = collections.deque()   # (seq, start, end) of payloads still in the arena
        self.doorbell = doorbell


class SimDriver:
    """One open sim device. Methods are the driver's ioctls; see the module docstring."""

    def __init__(self):
        raise TypeError("use SimDriver.open()")

    @classmethod
    def open(cls, vram_bytes: int, host_bytes: int, sync_mode: str = "poll",
             timeout_s: float = 0):
        """``timeout_s``: Note [Fence watchdog] (0: wait forever)."""
        self = object.__new__(cls)
        self.vram_bytes = vram_bytes
        self.host_bytes = host_bytes
        self.sync_mode = sync_mode
        self.timeout_s = timeout_s
        self.dead = None            # the exit status, once the device process has died
        self._closing = False
        self._closed = False
        self._pid_of_opener = os.getpid()
        fds = []
        try:
            self._ctrl_fd = os.memfd_create("strata-sim-control")
            self._vram_fd = os.memfd_create("strata-sim-vram")
            self._host_fd = os.memfd_create("strata-sim-host")
            fds += [self._ctrl_fd, self._vram_fd, self._host_fd]
            os.ftruncate(self._ctrl_fd, C.CONTROL_BYTES)
            os.ftruncate(self._vram_fd, vram_bytes)
            os.ftruncate(self._host_fd, host_bytes)
            self._doorbells = [os.eventfd(0, os.EFD_CLOEXEC) for _ in range(C.MAX_QUEUES)]
            self._irq = os.eventfd(0, os.EFD_CLOEXEC | os.EFD_NONBLOCK)
            fds += self._doorbells + [self._irq]
        except OSError:
            for fd in fds:
                os.close(fd)
            raise
        self._ctrl = mmap.mmap(self._ctrl_fd, C.CONTROL_BYTES)
        self._vram = mmap.mmap(self._vram_fd, vram_bytes)
        self._hostmem = mmap.mmap(self._host_fd, host_bytes)
        ctrl = memoryview(self._ctrl)
        self._regs = ctrl[C.REGS_OFFSET:C.REGS_OFFSET + C.MAX_QUEUES * C.NREGS * 8].cast("Q")
        self._events = ctrl[C.EVENTS_OFFSET:C.RINGS_OFFSET].cast("Q")
        self._completions = ctrl[C.COMPLETIONS_OFFSET:C.ERRORS_OFFSET].cast("Q")
        self._ctrl_view = ctrl
        self._vram_alloc = RangeAllocator(vram_bytes)
        self._host_alloc = RangeAllocator(host_bytes)
        self._bos = {}
        self._next_handle = 1
        self._bo_lock = threading.Lock()
        self._queues = {}
        self._free_queue_ids = list(range(C.MAX_QUEUES - 1, 0, -1))
        self._queues[0] = self._make_queue(0)
        self._start_process()
        atexit.register(self.close)
        os.register_at_fork(after_in_child=self._forget_in_child)
        return self

    def _make_queue(self, qid):
        ring_at = C.ring_offset(qid)
        arena_at = C.arena_offset(qid)
        ring = self._ctrl_view[ring_at:ring_at + C.RING_SLOTS * C.RECORD.size]
        arena = self._ctrl_view[arena_at:arena_at + C.ARENA_BYTES]
        return _Queue(qid, ring, arena, self._doorbells[qid])

    def _start_process(self):
        src = str(pathlib.Path(__file__).resolve().parents[3])
        env = dict(os.environ, STRATA_SHOW_DISPATCH_TRACE="0")
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [src, env.get("PYTHONPATH")]))
        # The device computes on the cores the host does not need: BLAS threads that outnumber
        # the free cores stall each other whenever the host thread runs (dispatching).
        cores = str(max(1, len(os.sched_getaffinity(0)) - 1))
        for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
            env.setdefault(var, cores)
        fds = [self._ctrl_fd, self._vram_fd, self._host_fd, self._irq] + self._doorbells
        args = [str(fd) for fd in fds]
        self.process = subprocess.Popen(
            [sys.executable, "-m", "strata.backends.sim.device", str(self.vram_bytes),
             str(self.host_bytes), *args],
            pass_fds=fds, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, env=env)
        self.pid = self.process.pid
        self._pidfd = os.pidfd_open(self.pid)
        threading.Thread(target=self._watchdog, name="strata-sim-watchdog", daemon=True).start()

    def _watchdog(self):
        poller = select.poll()
        poller.register(self._pidfd, select.POLLIN)
        poller.poll()
        status = self.process.wait()
        if not self._closing:
            self.dead = status
            os.eventfd_write(self._irq, 1)   # wake any host thread waiting for an interrupt

    def _lost(self) -> DeviceLost:
        how = f"was killed by signal {-self.dead}" if self.dead < 0 else \
            f"exited with status {self.dead}"
        return DeviceLost(
            f"the sim device process (pid {self.pid}) {how}; its memory and queued work are "
            f"lost, so tensors on 'sim' can no longer be used. CPU tensors are unaffected.")

    def check_alive(self):
        if self.dead is not None:
            raise self._lost()
        if os.getpid() != self._pid_of_opener:
            raise DeviceLost("the sim device belongs to the process that started it; a forked "
                             "child (a DataLoader worker) cannot use it")
        if self._closed:
            raise DeviceLost("the sim device has been closed (the program is exiting)")

    # --- buffer objects -------------------------------------------------------------------------
    def alloc_bo(self, size: int, host: bool = False) -> BufferObject:
        """A buffer object of ``size`` bytes in VRAM (or host-visible memory)."""
        with self._bo_lock:
            ranges = self._host_alloc if host else self._vram_alloc
            offset = ranges.alloc(size)
            if offset is None:
                raise OutOfDeviceMemory(f"no {size}-byte range free in "
                                        f"{'host-visible memory' if host else 'VRAM'}")
            bo = BufferObject(self._next_handle, offset, -(-size // 4096) * 4096, host)
            self._next_handle += 1
            self._bos[bo.handle] = bo
        if trace.active:
            trace.instant("driver", "ioctl", name="alloc_bo", handle=bo.handle, size=bo.size,
                          domain="host" if host else "vram")
        return bo

    def free_bo(self, bo: BufferObject) -> None:
        """Release a buffer object; its pages go back to the OS (MADV_REMOVE)."""
        with self._bo_lock:
            del self._bos[bo.handle]
            (self._host_alloc if bo.host else self._vram_alloc).free(bo.offset)
            (self._hostmem if bo.host else self._vram).madvise(mmap.MADV_REMOVE, bo.offset,
                                                                bo.size)
        if trace.active:
            trace.instant("driver", "ioctl", name="free_bo", handle=bo.handle, size=bo.size)

    def map(self, bo: BufferObject) -> memoryview:
        """The host's mapping of a buffer object's bytes."""
        region = self._hostmem if bo.host else self._vram
        if trace.active:
            trace.instant("driver", "ioctl", name="map", handle=bo.handle)
        return memoryview(region)[bo.offset:bo.offset + bo.size]

    def memory_used(self, host: bool = False) -> int:
        """Bytes held by buffer objects in VRAM (or host-visible memory)."""
        return (self._host_alloc if host else self._vram_alloc).used

    def host_aperture(self) -> mmap.mmap:
        """The host's mapping of all host-visible memory (where pinned buffers live)."""
        return self._hostmem

    # --- queues ---------------------------------------------------------------------------------
    def create_queue(self) -> int:
        """A new hardware queue (the device starts its command processor for it)."""
        self.check_alive()
        with self._bo_lock:
            if not self._free_queue_ids:
                raise QueuesExhausted(f"sim driver: all {C.MAX_QUEUES - 1} hardware queues are "
                                      f"in use")
            qid = self._free_queue_ids.pop()
            self._queues[qid] = self._make_queue(qid)
        self.submit(0, C.OP_CREATE_QUEUE, a0=qid)
        if trace.active:
            trace.instant("driver", "ioctl", name="create_queue", queue=qid)
        return qid

    def submit(self, qid, opcode, payload=b"", a0=0, a1=0, a2=0, a3=0, flags=0) -> int:
        """Write one command into ``qid``'s ring and ring its doorbell; returns its sequence
        number (the fence value that says it is done)."""
        if self.dead is not None or self._closed:
            self.check_alive()
        q = self._queues[qid]
        regs = self._regs
        n = len(payload)
        with q.lock:
            seq = q.seq + 1
            if seq - regs[qid * C.NREGS + C.REG_FENCE] > C.RING_SLOTS:
                self.wait_fence(qid, seq - C.RING_SLOTS, reason="command ring full")
            off = self._place_payload(q, seq, payload) if n else 0
            slot = (seq - 1) & (C.RING_SLOTS - 1)
            C.RECORD.pack_into(q.ring, slot * C.RECORD.size, opcode, flags, seq, off, n,
                               a0, a1, a2, a3)
            q.seq = seq
            regs[qid * C.NREGS + C.REG_HEAD] = seq
        # The lock's release orders the head store before this load (Note [Doorbell suppression])
        ring = regs[qid * C.NREGS + C.REG_STATE] != C.STATE_RUNNING
        if ring:   # Note [Doorbell suppression]
            os.eventfd_write(q.doorbell, 1)
        if trace.active:
            trace.instant("driver", "ioctl", name="submit", queue=qid, slot=slot, seq=seq,
                          command=C.OPCODE_NAMES.get(opcode, opcode), payload_bytes=n)
            trace.instant("driver", "doorbell", queue=qid, fd=q.doorbell, rung=ring)
        return seq

    def _place_payload(self, q, seq, payload):
        """Copy ``payload`` into the queue's arena where no unfinished command's payload is."""
        n = len(payload)
        if n > C.ARENA_BYTES:
            raise RuntimeError(f"sim driver: a {n}-byte command payload does not fit in the "
                               f"{C.ARENA_BYTES}-byte argument arena")
        pending = q.payloads
        while True:
            off = self._arena_fit(q, n)
            if off is not None:
                break
            fence = self._regs[q.id * C.NREGS + C.REG_FENCE]
            while pending and pending[0][0] <= fence:
                pending.popleft()
            off = self._arena_fit(q, n)
            if off is not None:
                break
            self.wait_fence(q.id, pending[0][0], reason="argument arena full")
        q.arena[off:off + n] = payload
        pending.append((seq, off, off + n))
        q.arena_head = off + n
        return off

    @staticmethod
    def _arena_fit(q, n):
        head = q.arena_head
        if not q.payloads:
            return head if head + n <= C.ARENA_BYTES else 0
        tail = q.payloads[0][1]
        if head > tail:                     # in use: [tail, head)
            if head + n <= C.ARENA_BYTES:
                return head
            return 0 if n <= tail else None
        return head if head + n <= tail else None   # wrapped: free is [head, tail)

    # --- completion -----------------------------------------------------------------------------
    def fence(self, qid: int) -> int:
        """The sequence number of the last command ``qid`` completed."""
        return self._regs[qid * C.NREGS + C.REG_FENCE]

    def submitted(self, qid: int) -> int:
        return self._queues[qid].seq

    def wait_fence(self, qid: int, seq: int, mode=None, reason="wait") -> int:
        """Block until ``qid``'s fence reaches ``seq``; returns the nanoseconds waited.

        ``mode`` "poll" spins on the fence, then yields the CPU, then backs off with short
        sleeps; "interrupt" arms the queue's interrupt and sleeps in ``poll(2)`` on the
        interrupt eventfd."""
        regs = self._regs
        at = qid * C.NREGS + C.REG_FENCE
        if regs[at] >= seq:
            return 0
        t0 = _now()
        mode = mode or self.sync_mode
        watch = _FenceWatch(self, qid, seq, reason, t0)
        if mode == "interrupt":
            self._wait_interrupt(qid, at, seq, watch)
        else:
            self._wait_poll(at, seq, t0, watch)
        waited = _now() - t0
        if trace.active:
            trace.instant("driver", "ioctl", name="wait_fence", queue=qid, seq=seq, mode=mode,
                          reason=reason, waited_ns=waited)
        return waited

    def _wait_poll(self, at, seq, t0, watch):
        regs = self._regs
        sleep = 20e-6
        while regs[at] < seq:
            if self.dead is not None:
                raise self._lost()
            now = _now()
            spent = now - t0
            if spent > SPIN_NS + YIELD_NS:
                time.sleep(sleep)
                sleep = min(sleep * 2, MAX_SLEEP_S)
                if now > watch.deadline:
                    watch.check(now)
            elif spent > SPIN_NS:
                os.sched_yield()

    def _wait_interrupt(self, qid, at, seq, watch):
        regs = self._regs
        armed = qid * C.NREGS + C.REG_IRQ_ARMED
        poller = select.poll()
        poller.register(self._irq, select.POLLIN)
        regs[armed] = 1
        C.barrier()     # Note [Doorbell suppression]: armed before the fence is read
        try:
            while regs[at] < seq:
                if self.dead is not None:
                    raise self._lost()
                if poller.poll(IRQ_TIMEOUT_MS):
                    try:
                        os.eventfd_read(self._irq)
                    except BlockingIOError:   # another waiting thread took it
                        pass
                now = _now()
                if now > watch.deadline:
                    watch.check(now)
        finally:
            regs[armed] = 0

    def process_state(self) -> str:
        """The device process's scheduler state letter from /proc ("R", "S", "T", ...)."""
        try:
            with open(f"/proc/{self.pid}/stat", "rb") as f:
                return f.read().rsplit(b")", 1)[1].split()[0].decode()
        except (OSError, IndexError):
            return "?"

    def started(self) -> bool:
        """Whether the device process has finished starting up and serves its queues."""
        return self._regs[C.REG_PID] != 0

    def errors(self):
        """``[(queue, seq, message)]`` of commands that failed on the device."""
        regs = self._regs
        out = []
        for qid in list(self._queues):
            seq = regs[qid * C.NREGS + C.REG_ERR_SEQ]
            if seq:
                n = regs[qid * C.NREGS + C.REG_ERR_LEN]
                at = C.error_offset(qid)
                out.append((qid, seq, bytes(self._ctrl_view[at:at + n]).decode(errors="replace")))
        return out

    def clear_error(self, qid: int, seq: int) -> None:
        """Forget the error of command ``seq``, which the host has read. The device writes an
        error only while the register is 0, so this cannot lose a newer one."""
        at = qid * C.NREGS + C.REG_ERR_SEQ
        if self._regs[at] == seq:
            self._regs[at] = 0

    def response(self, qid: int) -> memoryview:
        """The queue's response mailbox, as the last data-dependent command left it."""
        n = self._regs[qid * C.NREGS + C.REG_RESP_LEN]
        at = C.response_offset(qid)
        return self._ctrl_view[at:at + n]

    def completion_times(self, qid: int, seq: int):
        """``(start_ns, end_ns)`` the device measured for a command submitted with FLAG_TIMED."""
        at = (qid * C.RING_SLOTS + ((seq - 1) & (C.RING_SLOTS - 1))) * 2
        return self._completions[at], self._completions[at + 1]

    def event_time(self, slot: int) -> int:
        return self._events[slot]

    def host_word(self, bo: BufferObject, index: int = 0) -> memoryview:
        """A u64 of a host-visible buffer object, as the host sees it (for wait/write value)."""
        return self.map(bo)[index * 8:index * 8 + 8].cast("Q")

    # --- shutdown -------------------------------------------------------------------------------
    def close(self) -> None:
        """Stop the device process (it exits after finishing its queues) and release fds."""
        if self._closed or os.getpid() != self._pid_of_opener:
            return
        self._closing = True
        if self.dead is None:
            try:
                self.submit(0, C.OP_SHUTDOWN)
                self.process.wait(timeout=5)
            except (subprocess.TimeoutExpired, DeviceLost):
                self.process.kill()
            except OSError:
                pass
        self._closed = True
        self.process.wait()
        atexit.unregister(self.close)
        for fd in [self._ctrl_fd, self._vram_fd, self._host_fd, self._irq, self._pidfd,
                   *self._doorbells]:
            os.close(fd)

    def _forget_in_child(self):
        """A forked child (a DataLoader worker) must never drive its parent's device."""
        self._closed = True
