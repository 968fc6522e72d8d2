"""The sim runtime: streams, events, memory, launches, copies and synchronisation, on the driver.

Layer 5 of "the path of one line": a backend kernel hands the runtime an op and its outputs'
specs; the runtime allocates the outputs through the caching allocator, serializes the launch
(op name, launch site, argument descriptors), submits it to the current stream's hardware queue
through the driver and returns the outputs without waiting. The host waits only at sync points
(``wait``), which also report the device's asynchronous errors.

The runtime starts on first use (``get()``): the device process, the default stream (a hardware
queue) and two caching allocators, one for device memory and one for pinned host memory.
"""

import importlib
import pickle
import sys
import threading

import numpy as np

from ... import config
from ... import random as _random
from ..._tensor import CPU_KEYSET, make_tensor
from ...core import dtype as D
from ...core import trace
from ...core.device import device
from ...core.shape import contiguous_strides, storage_extent
from ...dispatch.keys import backend_keyset
from ...ops import factory as F
from ...ops.op import TensorSpec
from ...runtime import (
    CachingAllocator,
    DeviceMemory,
    DeviceRuntime,
    DeviceStorage,
    PinnedStorage,
    register_runtime,
)
from ..cpu import kernel_table
from ..cpu.array import data
from . import commands as C
from . import staging
from .driver import DeviceLost, DeviceTimeout, QueuesExhausted, SimDriver
from .streams import SimEvent, SimStream

SIM = device("sim", 0)
SIM_KEYSET = backend_keyset("Sim")
CPU = device("cpu")
DTYPE_INDEX = {d: i for i, d in enumerate(D.ALL_DTYPES)}
_STRATA_ROOT = __file__[:__file__.rindex("strata") + len("strata")]
_U63 = 1 << 63
_NOT_A_TENSOR = object()
_CPU_COPY = kernel_table()[F.copy_]   # PyTorch's dtype conversions, as the CPU does them


class SimMemory(DeviceMemory):
    """Device (or pinned host) memory as the caching allocator sees it: buffer objects."""

    def __init__(self, runtime, host):
        self.runtime = runtime
        self.driver = runtime.driver
        self.host = host
        self.capacity = self.driver.host_bytes if host else self.driver.vram_bytes

    def raw_alloc(self, nbytes):
        bo = self.driver.alloc_bo(nbytes, host=self.host)
        return bo, bo.addr

    def raw_free(self, bo):
        self.driver.free_bo(bo)

    def free_bytes(self):
        return self.capacity - self.driver.memory_used(self.host)

    def completed(self, stream, seq):
        return self.driver.fence(stream) >= seq

    def synchronize(self):
        self.runtime.synchronize("allocator: release cached memory")


class SimRuntime(DeviceRuntime):
    """The runtime of the sim device (one per process; see ``get()``)."""

    device_type = "sim"

    def __init__(self):
        self.driver = SimDriver.open(config.sim_memory, config.sim_host_memory, config.sim_sync,
                                     config.sim_timeout)
        self.allocator = CachingAllocator(SimMemory(self, host=False), "sim")
        self.host_allocator = CachingAllocator(SimMemory(self, host=True), "sim_host")
        self._host_bytes = np.frombuffer(self.driver.host_aperture(), np.uint8)
        self.staging_chunk = staging.chunk_bytes_for(config.sim_host_memory)
        self.launch_blocking = config.launch_blocking
        self.recording = None         # a CommandRecording while a compiled graph is recorded
        self._tls = threading.local()
        self._stream_set = False      # no thread has set a stream yet: every thread's is default
        self.device = SIM
        self._default = SimStream._wrap(self, self.driver.create_queue())
        self.queues = {self._default.queue}   # every hardware queue a stream uses
        self._user_queues = []
        self._next_shared = 0
        self._dynamic_lock = threading.Lock()   # one response mailbox per queue
        self._event_slots = list(range(C.MAX_EVENTS - 1, -1, -1))
        self._timed = []              # (queue, seq, name, fields) awaiting device times
        self._synchronized = {}       # queue -> seq the last synchronize() waited for
        self.generator = _random.Generator("sim")
        self._cpu_bits = None         # see _draw_seed

    # --- streams --------------------------------------------------------------------------------
    def current_stream(self) -> SimStream:
        if not self._stream_set:      # cheaper than the thread-local lookup on every launch
            return self._default
        return getattr(self._tls, "stream", None) or self._default

    def default_stream(self) -> SimStream:
        return self._default

    def set_stream(self, stream):
        self._stream_set = True
        self._tls.stream = stream

    def new_queue(self) -> int:
        """A hardware queue for a user stream; when all are taken, new streams share them
        round-robin (PyTorch's per-device stream pool does the same)."""
        try:
            queue = self.driver.create_queue()
        except QueuesExhausted:
            queue = self._user_queues[self._next_shared % len(self._user_queues)]
            self._next_shared += 1
            return queue
        self._user_queues.append(queue)
        self.queues.add(queue)
        return queue

    # --- memory ---------------------------------------------------------------------------------
    def allocate(self, nbytes, stream=None) -> DeviceStorage:
        if not nbytes:
            return DeviceStorage(0, SIM, None)
        queue = (stream or getattr(self._tls, "stream", None) or self._default).queue
        block = self.allocator.malloc(nbytes, queue)
        storage = DeviceStorage(nbytes, SIM, block)
        self.allocator.watch(storage, block)
        return storage

    def empty(self, shape, strides, dtype, stream=None):
        """A sim tensor of ``shape``/``strides``/``dtype`` from the caching allocator."""
        storage = self.allocate(storage_extent(shape, strides) * dtype.itemsize, stream)
        return make_tensor(storage, 0, shape, strides, dtype, SIM, SIM_KEYSET)

    def grow_storage(self, storage, nbytes):
        """A new, bigger device storage holding ``storage``'s bytes (``resize_``)."""
        grown = self.empty((nbytes,), (1,), D.uint8)
        if storage.nbytes:
            old = make_tensor(storage, 0, (storage.nbytes,), (1,), D.uint8, SIM, SIM_KEYSET)
            self.copy(grown[:storage.nbytes], old)
        return grown._storage

    def pinned_empty(self, shape, strides, dtype):
        """A CPU tensor in pinned memory: the device reads and writes it directly."""
        nbytes = storage_extent(shape, strides) * dtype.itemsize
        block = self.host_allocator.malloc(nbytes, 0) if nbytes else None
        start = 0 if block is None else block.addr & ~C.HOST_BIT
        storage = PinnedStorage(nbytes, CPU, self._host_bytes[start:start + nbytes], block)
        if block is not None:
            self.host_allocator.watch(storage, block)
        return make_tensor(storage, 0, shape, strides, dtype, CPU, CPU_KEYSET)

    def pin(self, tensor):
        """``Tensor.pin_memory()``: a pinned copy of a CPU tensor."""
        if tensor.device.type != "cpu" or tensor.is_sparse:
            raise RuntimeError(f"cannot pin '{tensor.type()}' only dense CPU tensors can be "
                               f"pinned")
        out = self.pinned_empty(tensor._shape, contiguous_strides(tensor._shape), tensor.dtype)
        np.copyto(out._np(), data(tensor))
        return out

    def _materialize(self, spec, stream, outs):
        """Allocate the outputs a meta function described; ``outs`` gets one descriptor per
        output in flattening order (None for an argument returned in place)."""
        if type(spec) is TensorSpec:
            shape = spec.shape
            strides = spec.strides if spec.strides is not None else contiguous_strides(shape)
            out = self.empty(shape, strides, spec.dtype, stream)
            outs.append(self._desc(out))
            return out
        if isinstance(spec, (tuple, list)):
            return _rebuild(spec, [self._materialize(s, stream, outs) for s in spec])
        outs.append(None)
        return spec

    def new_recording(self):
        """A recording of submitted commands for graph replay (graphs.py)."""
        from .graphs import CommandRecording
        return CommandRecording(self)

    # --- launches -------------------------------------------------------------------------------
    def launch(self, op, args, spec, plan=None):
        """Enqueue ``op`` on the current stream; its outputs (described by ``spec``, the op's
        meta result) are allocated now and returned at once."""
        stream = getattr(self._tls, "stream", None) or self._default
        if trace.active:
            with _Span("runtime", "launch", op=op.qualname, stream=stream.queue) as fields:
                result, fields["seq"] = self._launch(stream, op, args, spec, plan)
            return result
        return self._launch(stream, op, args, spec, plan)[0]

    def _launch(self, stream, op, args, spec, plan):
        outs = []
        result = self._materialize(spec, stream, outs)
        cross = []
        encoded = self._encode(op, args, plan, stream.queue, cross)
        payload = pickle.dumps((op.qualname, _launch_site(), encoded, outs), 5)
        seq = self._submit(stream, C.OP_LAUNCH, payload, op.qualname, cross)
        if self.recording is not None:
            self.recording.keep(result)
        if self.launch_blocking:
            self.wait(stream.queue, seq, f"launch blocking ({op.qualname})")
        return result, seq

    def _submit(self, stream, opcode, payload, name, cross=(), a0=0, **fields):
        queue = stream.queue
        timed = trace.active
        if self.recording is not None:
            self.recording.command(opcode, payload, a0, name)
        seq = self.driver.submit(queue, opcode, payload, a0, 0, 0, 0,
                                 C.FLAG_TIMED if timed else 0)
        for block in cross:
            self.allocator.record_use(block, queue, seq)
        if timed:
            fields.update(queue=queue, seq=seq, fence=seq, device="sim:0",
                          track=f"sim:0 queue {queue}", pid=self.driver.pid)
            self._timed.append((queue, seq, name, fields))
        return seq

    def _encode(self, op, args, plan, queue, cross):
        """The launch's arguments with tensors replaced by descriptors (see ``commands``)."""
        out = list(args)
        desc = self._desc
        for i in op.tensor_positions:
            out[i] = desc(args[i], queue, cross)
        for i in op.tensorlist_positions:
            out[i] = [desc(t, queue, cross) for t in args[i]]
        if plan is not None:
            for i in plan.devices:
                out[i] = None         # the device runs the kernel "on its own memory"
            for i in plan.generators:
                out[i] = self._draw_seed(args[i])
        return out

    def _desc(self, t, queue=None, cross=None):
        """A tensor's descriptor; a Python number (or None) in a tensor position stays as is."""
        storage = getattr(t, "_storage", _NOT_A_TENSOR)
        if storage is _NOT_A_TENSOR:
            return t
        if type(storage) is DeviceStorage:
            block = storage.block
            if cross is not None and block is not None and block.stream != queue:
                cross.append(block)
            if self.recording is not None:
                self.recording.keep(t)
            return (storage.addr, storage.nbytes, t._offset, t._shape, t._strides,
                    DTYPE_INDEX[t.dtype], storage.id)
        if type(storage) is PinnedStorage:
            return (storage.addr, storage.nbytes, t._offset, t._shape, t._get_strides(),
                    DTYPE_INDEX[t.dtype], 0)
        if t.device.type == "cpu" and t.ndim == 0:
            return (None, t.item(), DTYPE_INDEX[t.dtype])   # a CPU scalar travels by value
        raise RuntimeError(f"Expected all tensors to be on the same device, but found at least "
                           f"two devices, sim:0 and {t.device}!")

    def _draw_seed(self, generator):
        """A seed for one random launch, from ``generator`` or the sim default generator.

        ``strata.manual_seed`` seeds every device in PyTorch; it replaces the CPU generator's
        NumPy generator, so a changed identity means "reseeded" and the sim generator follows."""
        if generator is None:
            cpu_bits = _random.default_generator.bit_generator
            if cpu_bits is not self._cpu_bits:
                self._cpu_bits = cpu_bits
                self.generator.manual_seed(_random.default_generator.initial_seed())
            generator = self.generator
        return int(_random.generator_for(generator).integers(0, _U63))

    def manual_seed(self, seed):
        self._cpu_bits = _random.default_generator.bit_generator
        self.generator.manual_seed(seed)

    def launch_dynamic(self, op, args, plan=None):
        """Run an op whose output shapes depend on the data: launch, wait (a sync point), then
        allocate the outputs and have the device copy its staged results into them."""
        stream = self.current_stream()
        if trace.active:
            with _Span("runtime", "launch", op=op.qualname, stream=stream.queue, dynamic=True):
                return self._launch_dynamic(stream, op, args, plan)
        return self._launch_dynamic(stream, op, args, plan)

    def _launch_dynamic(self, stream, op, args, plan):
        reason = f"data-dependent output ({op.qualname})"
        with self._dynamic_lock:
            cross = []
            encoded = self._encode(op, args, plan, stream.queue, cross)
            payload = pickle.dumps((op.qualname, _launch_site(), encoded), 5)
            seq = self._submit(stream, C.OP_LAUNCH_DYNAMIC, payload, op.qualname, cross)
            self.wait(stream.queue, seq, reason)
            response = pickle.loads(self.driver.response(stream.queue))
        if response[0] == "error":
            raise _rebuild_exception(*response[1:])
        outs = []
        result = self._unstage(response[1], stream, outs)
        if outs:
            self._submit(stream, C.OP_COPY_STAGED, pickle.dumps(outs, 5), "copy staged",
                         a0=seq)
        return result

    def _unstage(self, value, stream, outs):
        if isinstance(value, C.StagedTensor):
            shape = value.shape
            out = self.empty(shape, contiguous_strides(shape), D.ALL_DTYPES[value.dtype], stream)
            outs.append(self._desc(out))
            return out
        if isinstance(value, (tuple, list)):
            return _rebuild(value, [self._unstage(v, stream, outs) for v in value])
        return value

    # --- copies ---------------------------------------------------------------------------------
    def copy(self, dst, src, non_blocking=False):
        """``dst.copy_(src)`` where either side is on sim (host<->device or device<->device)."""
        stream = self.current_stream()
        if trace.active:
            with _Span("runtime", "copy", stream=stream.queue, nbytes=src.nbytes) as fields:
                fields["kind"], fields["seq"] = self._copy(stream, dst, src, non_blocking)
        else:
            self._copy(stream, dst, src, non_blocking)

    def _copy(self, stream, dst, src, non_blocking):
        queue = stream.queue
        site = _launch_site()
        cross = []
        if dst.device.type == "sim" and src.device.type == "sim":
            kind = "D2D"
            payload = (site, self._desc(dst, queue, cross), self._desc(src, queue, cross))
            seq = self._submit(stream, C.OP_COPY, pickle.dumps(payload, 5), "copy D2D", cross)
        elif dst.device.type == "sim":
            kind = "H2D"
            if type(src._storage) is not PinnedStorage and src.nbytes > self.staging_chunk:
                seq = staging.copy_to_device(self, stream, site, self._desc(dst, queue, cross),
                                             src, self.staging_chunk, cross)
            else:
                staged = src if type(src._storage) is PinnedStorage else self._stage_host(src)
                payload = (site, self._desc(dst, queue, cross), self._desc(staged))
                seq = self._submit(stream, C.OP_COPY, pickle.dumps(payload, 5), "copy H2D",
                                   cross)
                if staged._storage.block is not None:
                    self.host_allocator.record_use(staged._storage.block, queue, seq)
            if not non_blocking:
                self.wait(queue, seq, "blocking copy to sim")
        elif non_blocking and type(dst._storage) is PinnedStorage:
            kind = "D2H"
            payload = (site, self._desc(dst), self._desc(src, queue, cross))
            seq = self._submit(stream, C.OP_COPY, pickle.dumps(payload, 5), "copy D2H", cross)
            if dst._storage.block is not None:
                self.host_allocator.record_use(dst._storage.block, queue, seq)
        elif src.nbytes > self.staging_chunk:
            kind = "D2H"
            seq = staging.copy_to_host(self, stream, site, dst, self._desc(src, queue, cross),
                                       self.staging_chunk, cross, _CPU_COPY)
        else:
            kind = "D2H"
            staged = self.pinned_empty(src._shape, contiguous_strides(src._shape), src.dtype)
            payload = (site, self._desc(staged), self._desc(src, queue, cross))
            seq = self._submit(stream, C.OP_COPY, pickle.dumps(payload, 5), "copy D2H", cross)
            if staged._storage.block is not None:   # reused only once the device is done
                self.host_allocator.record_use(staged._storage.block, queue, seq)
            self.wait(queue, seq, "copy to cpu")
            _CPU_COPY(dst, staged)
        if self.launch_blocking:
            self.wait(queue, seq, f"launch blocking (copy {kind})")
        return kind, seq

    def _stage_host(self, src):
        """Pageable host memory cannot be read by the device: copy it into pinned memory."""
        staged = self.pinned_empty(src._shape, contiguous_strides(src._shape), src.dtype)
        np.copyto(staged._np(), data(src))
        return staged

    # --- synchronisation ------------------------------------------------------------------------
    def wait(self, queue, seq, reason):
        """Block until ``queue`` has completed ``seq``: a sync point. Reports device errors."""
        driver = self.driver
        if trace.active:
            with _Span("sync", reason, mode=driver.sync_mode, queue=queue, seq=seq) as fields:
                fields["waited_ns"] = driver.wait_fence(queue, seq, reason=reason)
                fields["fence"] = driver.fence(queue)
        else:
            driver.wait_fence(queue, seq, reason=reason)
        self.collect_device_events()
        self.check_errors()

    def synchronize(self, reason="synchronize"):
        """Wait for every stream (``strata.sim.synchronize()``). When no work was submitted since
        the last one it is a no-op, which the tracer does not see."""
        driver = self.driver
        upto = {q: driver.submitted(q) for q in self.queues}
        if trace.active and upto != self._synchronized:
            with _Span("sync", reason, mode=driver.sync_mode, queue="all") as fields:
                fields["waited_ns"] = sum(driver.wait_fence(q, seq, reason=reason)
                                          for q, seq in upto.items())
        else:
            for queue, seq in upto.items():
                driver.wait_fence(queue, seq, reason=reason)
        self._synchronized = upto
        self.collect_device_events()
        self.check_errors()

    def check_errors(self):
        """Raise the first asynchronous kernel error the device recorded (then forget it)."""
        errors = self.driver.errors()
        if not errors:
            return
        for queue, seq, _ in errors:
            self.driver.clear_error(queue, seq)
        message = min(errors, key=lambda e: e[1])[2]
        raise AsyncKernelError(
            f"{message}\nsim kernel errors are reported asynchronously, at the next "
            f"synchronization point, so the line in this traceback may be later than the "
            f"failing op. Run with STRATA_LAUNCH_BLOCKING=1 to raise them where they are "
            f"launched.")

    def collect_device_events(self):
        """Report the device's start/end times of completed timed commands to the tracer (and
        forget them if tracing has stopped since they were launched)."""
        if not self._timed:
            return
        driver, still = self.driver, []
        for item in self._timed:
            queue, seq, name, fields = item
            if driver.fence(queue) < seq:
                still.append(item)
                continue
            start, end = driver.completion_times(queue, seq)
            if trace.active and start:
                ev = trace.Event("device", name, start, 0, fields)
                ev.end_ns = end
                trace.record(ev)
        self._timed = still

    # --- event timestamp slots -------------------------------------------------------------------
    def event_slot(self) -> int:
        if not self._event_slots:
            raise RuntimeError(f"strata.sim: all {C.MAX_EVENTS} timing event slots are in use")
        return self._event_slots.pop()

    def release_event_slot(self, slot) -> None:
        self._event_slots.append(slot)

    def __repr__(self):
        return f"<SimRuntime device process pid={self.driver.pid}>"


class _Span:
    """A trace span that ends even if the traced code raises; ``with`` gives its fields."""

    __slots__ = ("ev",)

    def __init__(self, layer, name, **fields):
        self.ev = trace.begin(layer, name, **fields)

    def __enter__(self):
        return self.ev.fields

    def __exit__(self, *exc):
        trace.end(self.ev)


def _rebuild(template, items):
    """A sequence of ``template``'s type (a list, tuple or named tuple) holding ``items``."""
    if hasattr(template, "_fields"):
        return type(template)(*items)
    return type(template)(items)


class AsyncKernelError(RuntimeError):
    """A kernel failed on the device; raised at the next synchronization point."""


class _LaunchPlan:
    """What a launch must rewrite in an op's arguments: devices and generators."""

    __slots__ = ("devices", "generators")

    def __init__(self, op):
        args = op.schema.arguments
        self.devices = tuple(i for i, a in enumerate(args) if a.type in ("Device?", "Device"))
        self.generators = tuple(i for i, a in enumerate(args) if a.type == "Generator?")


def plan_for(op):
    plan = _LaunchPlan(op)
    return plan if plan.devices or plan.generators else None


def _launch_site():
    """(file, line) of the innermost frame outside strata: where the user launched the op."""
    f = sys._getframe(2)
    while f is not None and f.f_code.co_filename.startswith(_STRATA_ROOT):
        f = f.f_back
    return None if f is None else (f.f_code.co_filename, f.f_lineno)


def _rebuild_exception(module, name, message):
    """The exception a data-dependent launch raised on the device, raised again on the host."""
    try:
        cls = getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError):
        cls = None
    if not (isinstance(cls, type) and issubclass(cls, Exception)):
        cls = RuntimeError
    try:
        return cls(message)
    except TypeError:
        return RuntimeError(message)


_runtime = None
_lock = threading.Lock()


def get() -> SimRuntime:
    """The sim runtime, starting the device process on first use."""
    global _runtime
    rt = _runtime
    if rt is None:
        with _lock:
            if _runtime is None:
                _runtime = SimRuntime()
            rt = _runtime
    return rt


def get_if_started():
    return _runtime


register_runtime("sim", get_if_started)

__all__ = ["AsyncKernelError", "DeviceLost", "DeviceTimeout", "SimEvent", "SimRuntime", "SimStream",
           "get", "get_if_started"]
