"""The sim device: a separate OS process that executes command rings.

    python -m strata.backends.sim.device VRAM_BYTES HOST_BYTES CTRL VRAM HOST IRQ DOORBELL...

(started by ``driver.SimDriver.open`` with the file descriptors it passes). The main thread
serves the admin queue (create queue, shutdown) and watches the host process; each
hardware queue has a command processor thread that sleeps on its doorbell eventfd, executes the
queue's records in order and writes the queue's fence after each one. A kernel launch rebuilds
its arguments as CPU tensors over views of device memory and calls *the CPU backend's kernel*,
then copies the result into the output the host allocated; nothing is copied back to the host.
A failing command is recorded in the queue's error area (the host reports it at its next sync
point) and the queue carries on; what it was to write is poisoned (Note [Poisoned allocations]).
"""

import mmap
import os
import pickle
import select
import sys
import threading
import time
import traceback

import numpy as np

from ..._tensor import CPU_KEYSET, from_array, make_tensor
from ...core import dtype as D
from ...core.device import cpu
from ...core.fp_errors import ignore_fp_errors
from ...core.storage import Storage
from ...ops.op import REGISTRY
from ...random import Generator
from ..cpu import kernel_table
from ..cpu.array import data
from . import commands as C

_now = time.perf_counter_ns
_DTYPES = D.ALL_DTYPES
_DTYPE_INDEX = {d: i for i, d in enumerate(_DTYPES)}

# Note [Poisoned allocations]: a kernel that fails on the device leaves its outputs holding
# whatever that memory held before (often a freed tensor's bytes). CUDA makes such an error
# sticky for the whole context; here it is sticky per result. When a command fails, the
# allocations it was to write (a launch's outputs and the arguments it writes in place, a copy's
# destination) are *poisoned*: the device records their allocation ids (``DeviceStorage.id``,
# which unlike an address is never handed out again) with the error's text. A later command
# that reads a poisoned allocation does not run: it poisons what it would have written with the
# same text and reports that text as its own error. So everything computed from a failed
# kernel's output carries the original error: a copy of it to the host raises it at the sync
# point that waits for the copy, a launch that uses it raises it at the next sync point, a
# data-dependent launch raises it at once, and tensors that do not depend on it keep working.
# Poison belongs to an allocation, not to elements: writing into a poisoned tensor, even all
# of it, does not clear it; a new tensor is clean.


class _PoisonedInput(Exception):
    """A command read an allocation poisoned by ``error`` (the failed kernel's text)."""

    def __init__(self, error):
        super().__init__(error)
        self.error = error


def _is_device_tensor(d):
    return type(d) is tuple and d[0] is not None


class Device:
    def __init__(self, vram_bytes, host_bytes, ctrl_fd, vram_fd, host_fd, irq_fd, doorbells):
        self._kernels = {op.qualname: fn for op, fn in kernel_table().items()}
        self._copy = self._kernels["aten::copy_"]
        self._generator_positions = {}
        ctrl = mmap.mmap(ctrl_fd, C.CONTROL_BYTES)
        self._ctrl = memoryview(ctrl)
        self._regs = self._ctrl[C.REGS_OFFSET:C.REGS_OFFSET + C.MAX_QUEUES * C.NREGS * 8] \
            .cast("Q")
        self._events = self._ctrl[C.EVENTS_OFFSET:C.RINGS_OFFSET].cast("Q")
        self._completions = self._ctrl[C.COMPLETIONS_OFFSET:C.ERRORS_OFFSET].cast("Q")
        self._vram_map = mmap.mmap(vram_fd, vram_bytes)
        self._host_map = mmap.mmap(host_fd, host_bytes)
        self._vram = np.frombuffer(self._vram_map, np.uint8)
        self._host = np.frombuffer(self._host_map, np.uint8)
        self._irq = irq_fd
        self._doorbells = doorbells
        self._threads = {}
        self._stopping = False
        self._staged = {}     # (queue, seq) -> arrays of a data-dependent launch
        self._poison = {}     # allocation id -> error text (Note [Poisoned allocations])

    # --- the admin queue and the process ------------------------------------------------------
    def run(self):
        regs = self._regs
        regs[C.REG_PID] = os.getpid()
        regs[C.REG_STATE] = C.STATE_SLEEPING   # the admin queue always waits for its doorbell
        parent = os.pidfd_open(os.getppid())
        poller = select.poll()
        poller.register(self._doorbells[0], select.POLLIN)
        poller.register(parent, select.POLLIN)
        ring, tail = self._ring(0), 0
        while True:
            ready = dict(poller.poll())
            if parent in ready:          # the host is gone: nobody will read our results
                os._exit(0)
            os.eventfd_read(self._doorbells[0])
            head = regs[C.REG_HEAD]
            while tail < head:
                tail += 1
                opcode, _, seq, _, _, a0, *_ = C.RECORD.unpack_from(ring, self._slot(tail))
                if opcode == C.OP_CREATE_QUEUE:
                    thread = threading.Thread(target=self._serve, args=(a0,), daemon=True,
                                              name=f"queue-{a0}")
                    self._threads[a0] = thread
                    thread.start()
                elif opcode == C.OP_SHUTDOWN:
                    self._shutdown()
                regs[C.REG_FENCE] = seq

    def _shutdown(self):
        """Stop after the command each queue is running (queued work is abandoned)."""
        self._stopping = True
        for qid in self._threads:
            os.eventfd_write(self._doorbells[qid], 1)
        for thread in self._threads.values():
            thread.join(timeout=2)
        os._exit(0)

    @staticmethod
    def _slot(seq):
        return ((seq - 1) & (C.RING_SLOTS - 1)) * C.RECORD.size

    def _ring(self, qid):
        at = C.ring_offset(qid)
        return self._ctrl[at:at + C.RING_SLOTS * C.RECORD.size]

    # --- a command processor ------------------------------------------------------------------
    def _serve(self, qid):
        """A queue's command processor. If it ever fails outside a command (a bug), the whole
        device goes down, so the host reports a lost device instead of waiting forever."""
        ignore_fp_errors()   # Note [Silent IEEE arithmetic]
        try:
            self._process(qid)
        except BaseException:
            traceback.print_exc()
            os._exit(70)

    def _process(self, qid):
        regs, ring, doorbell = self._regs, self._ring(qid), self._doorbells[qid]
        at = C.arena_offset(qid)
        arena = self._ctrl[at:at + C.ARENA_BYTES]
        head_reg, fence_reg = qid * C.NREGS + C.REG_HEAD, qid * C.NREGS + C.REG_FENCE
        armed_reg = qid * C.NREGS + C.REG_IRQ_ARMED
        state_reg = qid * C.NREGS + C.REG_STATE
        regs[state_reg] = C.STATE_RUNNING
        poller = select.poll()
        poller.register(doorbell, select.POLLIN)
        tail = regs[fence_reg]
        execute, slot, barrier = self._execute, self._slot, C.barrier
        while not self._stopping:
            head = regs[head_reg]
            if tail >= head:
                # Out of work (Note [Doorbell suppression]): poll the head, then sleep.
                deadline = _now() + C.IDLE_SPIN_NS
                while regs[head_reg] == tail and _now() < deadline:
                    pass
                if regs[head_reg] != tail:
                    continue
                regs[state_reg] = C.STATE_SLEEPING
                barrier()
                if regs[head_reg] == tail and poller.poll(C.DOORBELL_TIMEOUT_MS):
                    os.eventfd_read(doorbell)
                regs[state_reg] = C.STATE_RUNNING
                continue
            while tail < head and not self._stopping:
                tail += 1
                execute(qid, C.RECORD.unpack_from(ring, slot(tail)), arena)
                regs[fence_reg] = tail
                barrier()
                if regs[armed_reg]:
                    os.eventfd_write(self._irq, 1)
        regs[state_reg] = C.STATE_STOPPED

    def _execute(self, qid, record, arena):
        opcode, flags, seq, off, n, a0, a1, _, _ = record
        t0 = _now() if flags & C.FLAG_TIMED else 0
        try:
            self._run(qid, seq, opcode, arena[off:off + n], a0, a1)
        except Exception as exc:
            payload = arena[off:off + n]
            where = self._where(opcode, payload)
            if isinstance(exc, _PoisonedInput):
                error = exc.error
                text = (f"{error}\n{where} read a tensor computed from that failed kernel's "
                        f"output, so it did not run")
            else:
                error = text = f"{where} failed on the sim device: {type(exc).__name__}: {exc}"
            for d in self._written(opcode, payload):
                self._poison[d[-1]] = error
            self._report(qid, seq, text)
        if t0:
            at = (qid * C.RING_SLOTS + ((seq - 1) & (C.RING_SLOTS - 1))) * 2
            self._completions[at] = t0
            self._completions[at + 1] = _now()

    def _run(self, qid, seq, opcode, payload, a0, a1):
        """Execute one command (of the ring, or of a recorded command list)."""
        if opcode == C.OP_LAUNCH:
            self._launch(payload)
        elif opcode == C.OP_COPY:
            _, dst, src = pickle.loads(payload)
            if self._poison:
                self._check_inputs((src,))
            self._copy(self._tensor(dst), self._tensor(src))
        elif opcode == C.OP_LAUNCH_DYNAMIC:
            self._launch_dynamic(qid, seq, payload)
        elif opcode == C.OP_COPY_STAGED:
            outs = pickle.loads(payload)
            for arr, d in zip(self._staged.pop((qid, a0)), outs):
                np.copyto(self._array(d), arr, casting="unsafe")
        elif opcode == C.OP_WRITE_VALUE:
            self._word(a0)[0] = a1
        elif opcode == C.OP_WAIT_VALUE:
            word = self._word(a0)
            self._wait_until(lambda: word[0] >= a1)
        elif opcode == C.OP_EVENT_RECORD:
            if a0 < C.MAX_EVENTS:
                self._events[a0] = _now()
        elif opcode == C.OP_EVENT_WAIT:
            regs, fence = self._regs, a0 * C.NREGS + C.REG_FENCE
            self._wait_until(lambda: regs[fence] >= a1)
        elif opcode == C.OP_EXEC_LIST:
            mapping, _, at = self._region(a0)
            n = int.from_bytes(mapping[at:at + 8], "little")
            for command, data, b0 in pickle.loads(mapping[at + 8:at + 8 + n]):
                self._run(qid, seq, command, data, b0, 0)
        elif opcode != C.OP_NOP:
            raise RuntimeError(f"unknown opcode {opcode}")

    def _wait_until(self, done):
        """A command that waits (on a value or another queue) sleeps in short steps."""
        sleep = 10e-6
        while not done():
            if self._stopping:
                raise RuntimeError("device shutting down")
            time.sleep(sleep)
            sleep = min(sleep * 2, 1e-3)

    @staticmethod
    def _where(opcode, payload):
        """The failing command, as the error names it: the op and the user's line."""
        if opcode in (C.OP_LAUNCH, C.OP_LAUNCH_DYNAMIC):
            where, site = pickle.loads(payload)[:2]
        elif opcode == C.OP_COPY:
            where, site = "copy_", pickle.loads(payload)[0]
        else:
            where, site = C.OPCODE_NAMES.get(opcode, f"opcode {opcode}"), None
        if site:
            where += f" (launched at {site[0]}:{site[1]})"
        return where

    @staticmethod
    def _written(opcode, payload):
        """The device tensors a command writes (poisoned if it fails)."""
        if opcode == C.OP_COPY:
            out = [pickle.loads(payload)[1]]
        elif opcode == C.OP_LAUNCH:
            qualname, _, args, outs = pickle.loads(payload)
            op = REGISTRY[qualname]
            out = list(outs)
            for i in op.written_positions:
                out += args[i] if i in op.tensorlist_positions else [args[i]]
        else:
            out = []
        return [d for d in out if _is_device_tensor(d) and d[-1]]

    def _check_inputs(self, descriptors):
        """Refuse to compute from a poisoned allocation (Note [Poisoned allocations])."""
        poison = self._poison
        for d in descriptors:
            if _is_device_tensor(d) and d[-1] in poison:
                raise _PoisonedInput(poison[d[-1]])

    def _report(self, qid, seq, text):
        regs = self._regs
        if regs[qid * C.NREGS + C.REG_ERR_SEQ]:
            return   # the first error is the one reported, as CUDA does
        text = text.encode()[:C.ERROR_BYTES]
        at = C.error_offset(qid)
        self._ctrl[at:at + len(text)] = text
        regs[qid * C.NREGS + C.REG_ERR_LEN] = len(text)
        regs[qid * C.NREGS + C.REG_ERR_SEQ] = seq

    # --- kernels --------------------------------------------------------------------------------
    def _call(self, payload):
        qualname, site, args, *outs = pickle.loads(payload)
        op = REGISTRY[qualname]
        if self._poison:
            self._check_inputs([args[i] for i in op.tensor_positions] +
                               [d for i in op.tensorlist_positions for d in args[i]])
        args = list(args)
        for i in op.tensor_positions:
            args[i] = self._tensor(args[i])
        for i in op.tensorlist_positions:
            args[i] = [self._tensor(d) for d in args[i]]
        gens = self._generator_positions.get(op)
        if gens is None:
            gens = self._generator_positions[op] = [
                i for i, a in enumerate(op.schema.arguments) if a.type == "Generator?"]
        for i in gens:
            args[i] = Generator().manual_seed(args[i])
        return self._kernels[qualname](*args), outs

    def _launch(self, payload):
        result, (outs,) = self._call(payload)
        for value, d in zip(_flatten(result), outs):
            if d is not None:
                np.copyto(self._array(d), data(value), casting="unsafe")

    def _launch_dynamic(self, qid, seq, payload):
        """Run an op whose output shapes depend on the data; describe its results in the
        response mailbox and keep the tensors until the host says where they go."""
        try:
            result, _ = self._call(payload)
            staged = []
            response = ("ok", self._stage(result, staged))
            if staged:
                self._staged[qid, seq] = staged
        except _PoisonedInput as exc:
            response = ("error", "strata.backends.sim.runtime", "AsyncKernelError", exc.error)
        except Exception as exc:   # reported to the host synchronously: it waits for this
            response = ("error", type(exc).__module__, type(exc).__qualname__, str(exc))
        blob = pickle.dumps(response, protocol=5)
        if len(blob) > C.RESPONSE_BYTES:
            blob = pickle.dumps(("error", "builtins", "RuntimeError",
                                 "sim device: the description of a data-dependent result is "
                                 "too large for the response mailbox"))
        at = C.response_offset(qid)
        self._ctrl[at:at + len(blob)] = blob
        self._regs[qid * C.NREGS + C.REG_RESP_LEN] = len(blob)

    def _stage(self, value, staged):
        if isinstance(value, (tuple, list)):
            items = [self._stage(v, staged) for v in value]
            return type(value)(*items) if hasattr(value, "_fields") else type(value)(items)
        if hasattr(value, "_keyset"):
            staged.append(np.ascontiguousarray(data(value)))
            return C.StagedTensor(len(staged) - 1, tuple(value.shape), _DTYPE_INDEX[value.dtype])
        return value

    # --- memory ---------------------------------------------------------------------------------
    def _region(self, addr):
        """(the mapping, its bytes as an array, the offset) that an address points into."""
        if addr & C.HOST_BIT:
            return self._host_map, self._host, addr & ~C.HOST_BIT
        return self._vram_map, self._vram, addr

    def _tensor(self, d):
        """A CPU tensor over device memory, described by the host (see ``commands``)."""
        if type(d) is not tuple:
            return d      # None, or a Python number in a tensor position
        addr, *rest = d
        if addr is None:             # a 0-dim CPU tensor, sent by value
            value, dt = rest
            return from_array(np.array(value, dtype=_DTYPES[dt].np))
        nbytes, offset, shape, strides, dt, _ = rest
        mapping, region, start = self._region(addr)
        dtype = _DTYPES[dt]
        t = make_tensor(_DeviceBytes(nbytes, region, start), offset, shape, strides, dtype, cpu,
                        CPU_KEYSET)
        t._array = _view(mapping, start, offset, shape, strides, dtype.np)
        return t

    def _array(self, d):
        """The NumPy view of a tensor descriptor's elements."""
        addr, *rest = d
        if addr is None:
            value, dt = rest
            return np.array(value, dtype=_DTYPES[dt].np)
        _, offset, shape, strides, dt, _ = rest
        mapping, _, start = self._region(addr)
        return _view(mapping, start, offset, shape, strides, _DTYPES[dt].np)

    def _word(self, addr):
        _, region, start = self._region(addr)
        return memoryview(region[start:start + 8]).cast("Q")


def _view(mapping, start, offset, shape, strides, dtype):
    """An array over a mapping of device memory (no copy; cheaper than slicing it first)."""
    size = dtype.itemsize
    return np.ndarray(shape, dtype, buffer=mapping, offset=start + offset * size,
                      strides=tuple(s * size for s in strides))


class _DeviceBytes(Storage):
    """The storage of a kernel argument: a range of device memory. Kernels read tensors through
    their array view; the flat byte view is only made if a kernel asks for the storage."""

    __slots__ = ("_region", "_start")

    def __init__(self, nbytes, region, start):
        Storage.__init__(self, nbytes, cpu)
        self._region = region
        self._start = start

    @property
    def data(self):
        if self._data is None:
            self._data = self._region[self._start:self._start + self.nbytes]
        return self._data


def _flatten(value):
    if isinstance(value, (tuple, list)):
        for v in value:
            yield from _flatten(v)
    else:
        yield value


def main(argv):
    vram_bytes, host_bytes, ctrl_fd, vram_fd, host_fd, irq_fd, *doorbells = map(int, argv)
    Device(vram_bytes, host_bytes, ctrl_fd, vram_fd, host_fd, irq_fd, doorbells).run()


if __name__ == "__main__":
    main(sys.argv[1:])
