"""The OpenCL runtime: device selection, streams, memory, kernel launches and host copies.

One runtime per OpenCL device (``opencl:N``), started on first use (``get(index)``): a context,
the default stream (an in-order command queue with profiling enabled) and a caching allocator.

Note [Buffers and offsets]: the caching allocator (runtime/allocator.py) carves big ``cl.Buffer``
segments into blocks. A block is not made a sub-buffer: ``clCreateSubBuffer`` needs its origin
aligned to ``CL_DEVICE_MEM_BASE_ADDR_ALIGN`` (1024 bits on PoCL, and NVIDIA accepts unaligned
origins it should refuse; reference/opencl.md section 3). Every kernel instead takes the segment's
buffer plus an element offset, and host copies take a byte offset. Block addresses are virtual:
segment ``k`` starts at ``k << 40``, so ``addr - segment.addr`` is the byte offset in its buffer.

Kernels are launched through driver.py (libOpenCL called directly, no event per kernel); the
rest goes through pyopencl. The host waits only at sync points (a copy to the host,
``synchronize()``, an event wait);
errors the driver reports (a failed build, a bad launch, out of resources) are raised as
``RuntimeError``s naming the op.
"""

import ctypes
import hashlib
import logging
import re
import threading
import time
import warnings

import numpy as np

from ... import config
from ... import random as _random
from ..._tensor import make_tensor
from ...core import trace
from ...core.device import as_device, device
from ...core.shape import contiguous_strides, storage_extent
from ...dispatch.keys import backend_keyset
from ...ops import factory as F
from ...runtime import (
    CachingAllocator,
    DeviceRuntime,
    DeviceStorage,
    register_runtime,
)
from ..cpu import native
from ..cpu.array import data
from . import pinned
from .asserts import DeviceAsserts
from .driver import Driver, DriverError, KernelArgs
from .memory import BufferSegments
from .streams import OpenCLStream

_log = logging.getLogger("strata.opencl")

OPENCL_KEYSET = backend_keyset("OpenCL")
_I63 = 2 ** 63


def cl():
    """pyopencl, imported on first use so that strata imports without it."""
    try:
        import pyopencl
    except ImportError as exc:
        raise RuntimeError("the opencl device needs pyopencl and an OpenCL driver: "
                           "pip install 'strata[opencl]'") from exc
    return pyopencl


def devices() -> list:
    """The OpenCL devices strata can use, in order (``STRATA_OPENCL_DEVICE`` filters them)."""
    try:
        pycl = cl()
        platforms = pycl.get_platforms()
    except Exception:  # noqa: BLE001  (no pyopencl, or no ICD: PLATFORM_NOT_FOUND_KHR)
        return []
    wanted = config.opencl_device.lower()
    found = []
    for platform in platforms:
        for dev in platform.get_devices():
            if wanted in f"{platform.name} {dev.name}".lower():
                found.append(dev)
    return found


def build_options(cl_device) -> list:
    """Note [Correctly rounded division]: OpenCL lets a driver divide and take square roots of
    floats to 2.5 and 3 ulp unless a program asks for IEEE rounding; NVIDIA's driver takes that
    leave (``int / int`` and histogram edges differed from PyTorch's by an ulp on an H200).
    PyTorch's CUDA kernels are compiled with nvcc's defaults, ``-prec-div=true
    -prec-sqrt=true``: correctly rounded. So every program asks for it where the device offers
    it (OpenCL 3.0, 5.8.4.3); doubles always round correctly."""
    flag = cl().device_fp_config.CORRECTLY_ROUNDED_DIVIDE_SQRT
    if cl_device.single_fp_config & flag:
        return ["-cl-fp32-correctly-rounded-divide-sqrt"]
    return []


# Note [Work-group sizes]: given no work-group size, an OpenCL driver picks one at every
# enqueue; NVIDIA's takes ~5.5 us of host time to do so (an H200: a bare enqueue 12.0 us, 6.5 us
# with the size given), half of a launch. A kernel that opens as the loop-IR printer prints it
# (and the row kernels are written), ``const long x = get_global_id(0); if (x >= <range>)
# return;``, ignores work-items past its range, so the runtime launches it over whole
# work-groups of its own choosing instead:
# ``GROUP_SIZE`` work-items (fewer where the kernel allows fewer), or one group of the whole
# range where it is smaller, the range rounded up. Not on PoCL, which compiles a kernel again
# for each work-group size it meets and picks one at no cost; ``STRATA_OPENCL_GROUP_SIZES``
# overrides that (the tests run both ways).
GROUP_SIZE = 256
_GUARDED = re.compile(r"__kernel void (\w+)\([^)]*\)\s*\{\s*const long (\w+) = get_global_id\(0\);"
                      r"\s*if \(\2 >= [^;]*\) return;")


def sizes_groups(cl_device) -> bool:
    """Whether launches on ``cl_device`` get work-group sizes (Note [Work-group sizes])."""
    if config.opencl_group_sizes in ("0", "1"):
        return config.opencl_group_sizes == "1"
    return "Portable Computing Language" not in cl_device.platform.name


def grouped(work_items, group):
    """(global size, local size) of a guarded launch of ``work_items`` in groups of at most
    ``group`` (Note [Work-group sizes])."""
    if work_items <= group:
        return (work_items,), (work_items,)
    return (-(-work_items // group) * group,), (group,)


class OpenCLMemory(BufferSegments):
    """Segments for the caching allocator: one ``cl.Buffer`` each (Note [Buffers and offsets])."""

    def make(self, nbytes):
        pycl = cl()
        return pycl.Buffer(self.runtime.context, pycl.mem_flags.READ_WRITE, nbytes), nbytes

    def release(self, handle):
        handle[0].release()


class OpenCLRuntime(DeviceRuntime):
    """The runtime of one OpenCL device."""

    device_type = "opencl"
    keyset = OPENCL_KEYSET

    def __init__(self, index, cl_device):
        pycl = cl()
        self.index = index
        self.device = device("opencl", index)
        self.cl_device = cl_device
        self.context = pycl.Context([cl_device])
        self.streams = []             # stream id -> OpenCLStream
        self._tls = threading.local()
        self._stream_set = False      # no thread has set a stream yet: every thread's is default
        self._default = OpenCLStream(_owner=self)
        self.allocator = CachingAllocator(OpenCLMemory(self), "opencl", index)
        self._programs = {}           # source -> built cl.Program
        self._kernels = {}            # (source, name) -> KernelArgs (kept: see reference 4)
        self.programs_from_disk = 0
        self.driver = Driver(pycl)    # the launch path (driver.py)
        self.asserts = DeviceAsserts(self)    # index checks on the device (asserts.py)
        self._timed = []              # (cl.Event, op name, stream id) of traced launches
        self._offset = None           # host ns - device ns (Note [Device clock])
        self.launch_blocking = config.launch_blocking
        self.recording = None         # a LaunchRecording while a compiled graph is recorded
        self._host_allocator = None   # pinned host memory (pinned.py), made on first use
        self._philox = None           # (CPU NumPy generator seen, seed, launches) for philox()
        self.build_options = build_options(cl_device)
        self.sizes_groups = sizes_groups(cl_device)

    def new_queue(self, stream):
        """A command queue for ``stream`` (in order, profiled); returns the stream's id."""
        pycl = cl()
        stream.queue = pycl.CommandQueue(
            self.context, self.cl_device, pycl.command_queue_properties.PROFILING_ENABLE)
        stream.handle = ctypes.c_void_p(stream.queue.int_ptr)
        self.streams.append(stream)
        return len(self.streams) - 1

    # --- streams --------------------------------------------------------------------------------
    def current_stream(self) -> OpenCLStream:
        # every allocation and launch asks; a thread-local lookup costs more than the flag
        if not self._stream_set:
            return self._default
        return getattr(self._tls, "stream", None) or self._default

    def default_stream(self) -> OpenCLStream:
        return self._default

    def set_stream(self, stream):
        self._stream_set = True
        self._tls.stream = stream

    # --- memory ---------------------------------------------------------------------------------
    def allocate(self, nbytes, stream=None) -> DeviceStorage:
        if not nbytes:
            return DeviceStorage(0, self.device, None)
        block = self.allocator.malloc(nbytes, (stream or self.current_stream()).id)
        storage = DeviceStorage(nbytes, self.device, block)
        self.allocator.watch(storage, block)
        return storage

    def empty(self, shape, strides, dtype, stream=None):
        storage = self.allocate(storage_extent(shape, strides) * dtype.itemsize, stream)
        return make_tensor(storage, 0, shape, strides, dtype, self.device, OPENCL_KEYSET)

    @staticmethod
    def buffer_of(tensor):
        """(the ``cl.Buffer`` of a tensor's segment, the tensor's first element's offset in it
        in elements). Zero-byte tensors have no buffer: (None, 0)."""
        block = tensor._storage.block
        if block is None:
            return None, 0
        start = block.addr - block.segment.addr
        return block.segment.handle[0], start // tensor.dtype.itemsize + tensor._offset

    def record_cross_use(self, tensors, stream):
        for t in tensors:
            block = t._storage.block
            if block is not None and block.stream != stream.id:
                self.allocator.record_use(block, stream.id, stream.seq + 1)

    # --- programs and launches ------------------------------------------------------------------
    def kernel(self, source, name):
        """The built kernel ``name`` of ``source`` (built once per source and device: the
        runtime belongs to one device, and the driver version cannot change in a process)."""
        knl = self._kernels.get((source, name))
        if knl is None:
            knl = self._kernels[source, name] = self.new_kernel(source, name)
        return knl

    def new_kernel(self, source, name):
        """A new kernel object for ``name`` of ``source`` (``kernel`` keeps one per source and
        name; a ``PreparedLaunch`` has its own, which no other caller sets arguments on: Note
        [Prepared launches]), with the work-group size of its guarded launches (Note
        [Work-group sizes]) where it has them."""
        kernel = cl().Kernel(self.program(source, name), name)
        knl = KernelArgs(self.driver, kernel)
        if self.sizes_groups and any(m.group(1) == name for m in _GUARDED.finditer(source)):
            pycl = cl()
            most = kernel.get_work_group_info(pycl.kernel_work_group_info.WORK_GROUP_SIZE,
                                              self.cl_device)
            knl.group = min(GROUP_SIZE, 1 << (most.bit_length() - 1))
        return knl

    def program(self, source, name="<program>"):
        """The built program of ``source`` (``name``: a kernel of it, for build errors)."""
        program = self._programs.get(source)
        if program is None:
            program = self._programs[source] = self._build(source, name)
        return program

    def _build(self, source, name):
        """Build ``source``: from the program binary cached on disk for this source, device and
        driver (the native kernels' cache rules: a 0700 folder, a hash checked before use), else
        from source, storing the binary."""
        pycl = cl()
        dev = self.cl_device
        options = self.build_options
        identity = [source, " ".join(options), dev.platform.name, dev.platform.version,
                    dev.name, dev.version, dev.driver_version, pycl.VERSION_TEXT]
        key = hashlib.sha256("\0".join(identity).encode()).hexdigest()
        path = native.cache_folder("opencl") / f"{key}.bin"
        binary = native.read_verified(path)
        if binary is not None:
            try:
                program = pycl.Program(self.context, [dev], [binary]).build(options)
                self.programs_from_disk += 1
                return program
            except pycl.Error:
                pass       # the driver refused its own binary: build from source again
        try:
            with warnings.catch_warnings():
                # NVIDIA's compiler leaves remarks in the build log of most kernels; pyopencl
                # turns each into a CompilerWarning. They go to the "strata.opencl" logger.
                warnings.simplefilter("ignore", pycl.CompilerWarning)
                program = pycl.Program(self.context, source).build(options)
            if _log.isEnabledFor(logging.DEBUG):
                build_log = program.get_build_info(dev, pycl.program_build_info.LOG).strip()
                if build_log:
                    _log.debug("build log of kernel '%s' on %s:\n%s", name, dev.name,
                               build_log)
        except pycl.Error as exc:
            raise RuntimeError(f"OpenCL: building kernel '{name}' failed on {dev.name}: "
                               f"{exc}\n{source}") from None
        native.write_verified(path, program.get_info(pycl.program_info.BINARIES)[0])
        return program

    def launch(self, op_name, source, name, global_size, args, tensors=(), local_size=None):
        """Enqueue kernel ``name`` of ``source`` over ``global_size`` work-items (an int, or a
        tuple with ``local_size``) on the current stream; ``args`` are ``cl.Buffer``s, Python
        ints (``long``) and NumPy scalars, ``tensors`` the device tensors it reads or writes.
        Returns at once, with no event unless the tracer is on (Note [Launches without
        events] in driver.py)."""
        if type(global_size) is int:
            global_size = (global_size,)
        if 0 in global_size:
            return
        knl = self._kernels.get((source, name)) or self.kernel(source, name)
        if knl.group and local_size is None and len(global_size) == 1:
            global_size, local_size = grouped(global_size[0], knl.group)
        stream = self.current_stream()
        if len(self.streams) > 1:         # with one stream, every block is that stream's
            self.record_cross_use(tensors, stream)
        span = trace.begin("runtime", "launch", op=op_name, kernel=name,
                           stream=stream.id) if trace.active else None
        try:
            knl.set(args)
            event = self.driver.enqueue(stream.handle, knl, global_size, local_size,
                                        span is not None)
        except DriverError as exc:
            if span is not None:
                trace.end(span)
            raise RuntimeError(f"OpenCL: launching {op_name} (kernel '{name}') failed: "
                               f"{exc}") from None
        except BaseException:
            if span is not None:
                trace.end(span)
            raise
        stream.launched()             # an eventless command (streams.py)
        if self.recording is not None:
            self.recording.launch(source, name, global_size, local_size, args, tensors)
        if span is not None:
            trace.end(span, seq=stream.seq, queue=self.queue_name(stream),
                      work_items="x".join(map(str, global_size)))
            self._timed.append((event, op_name, stream.id, stream.seq))
        if self.launch_blocking:
            stream.synchronize()

    def enqueue_prepared(self, op_name, stream, kernel, dims, sizes, local_sizes=None):
        """The enqueue of a ``PreparedLaunch`` (prepared.py) whose arguments are set: ``sizes``
        and ``local_sizes`` (or None) packed ``size_t[dims]``, no event, on ``stream`` (the
        current stream)."""
        status = self.driver.enqueue_kernel(stream.handle, kernel.handle, dims, None, sizes,
                                            local_sizes, 0, None, None)
        if status:
            try:
                self.driver.check(status, "clEnqueueNDRangeKernel")
            except DriverError as exc:
                raise RuntimeError(f"OpenCL: launching {op_name} (kernel "
                                   f"'{kernel.kernel.function_name}') failed: {exc}") from None
        stream.launched()

    def philox(self, generator=None):
        """(key, offset) of one random launch (oclprinter's Note [Philox]). The default
        generator: the seed of strata's default generator, offset counting launches; a
        ``manual_seed`` (it replaces the CPU generator's NumPy generator) restarts the count, as
        a seed restarts CUDA's Philox offset. A given generator: a key drawn from it."""
        if generator is not None:
            return int(_random.generator_for(generator).integers(0, _I63)), 0
        source = _random.default_generator.bit_generator
        if self._philox is None or self._philox[0] is not source:
            seed = _random.default_generator.initial_seed()
            self._philox = [source, seed - 2 ** 64 if seed >= 2 ** 63 else seed, 0]
        self._philox[2] += 1
        return self._philox[1], self._philox[2]

    def new_recording(self):
        """A recording of launches for graph replay (graphs.py)."""
        from .graphs import LaunchRecording
        return LaunchRecording(self)

    # --- pinned memory and host copies ---------------------------------------------------------
    @property
    def host_allocator(self):
        if self._host_allocator is None:
            self._host_allocator = pinned.allocator(self)
        return self._host_allocator

    def pin(self, tensor):
        """``Tensor.pin_memory("opencl")``: a copy of a CPU tensor in pinned memory."""
        if tensor.device.type != "cpu" or tensor.is_sparse:
            raise RuntimeError(f"cannot pin '{tensor.type()}' only dense CPU tensors can be "
                               f"pinned")
        shape = tuple(tensor._shape)
        out = pinned.pinned_empty(self, shape, contiguous_strides(shape),
                                  tensor.numel() * tensor.dtype.itemsize, tensor.dtype)
        np.copyto(out._np(), data(tensor))
        return out

    def upload(self, dst, array, non_blocking=False, source=None):
        """Copy the contiguous host ``array`` (the bytes of the CPU tensor ``source``) into the
        contiguous device tensor ``dst``. A non-blocking copy from memory that is not pinned
        first copies it into a pinned staging block (pinned.py), so that it can return."""
        if not array.nbytes:
            return
        if self.recording is not None:
            self.recording.unsupported("a copy from the host")
        pycl = cl()
        keep = source
        if non_blocking and (source is None or not pinned.is_pinned_by(self, source)):
            keep = pinned.stage(self, array)
            array = keep._storage.data
        buffer, offset = self.buffer_of(dst)
        stream = self.current_stream()
        self.record_cross_use((dst,), stream)
        event = self._traced_copy("H2D", array.nbytes, stream, lambda: pycl.enqueue_copy(
            stream.queue, buffer, array, dst_offset=offset * dst.dtype.itemsize,
            is_blocking=not non_blocking))
        stream.enqueued(event, keep=keep if non_blocking else None)
        block = getattr(getattr(keep, "_storage", None), "block", None)
        if non_blocking and block is not None and pinned.is_pinned_by(self, keep):
            self.host_allocator.record_use(block, stream.id, stream.seq)

    def download(self, array, src, non_blocking=False):
        """Copy the contiguous device tensor ``src`` into the contiguous host ``array``; a
        blocking copy is a sync point."""
        if not array.nbytes:
            return
        if self.recording is not None:
            self.recording.unsupported("a copy to the host")
        pycl = cl()
        buffer, offset = self.buffer_of(src)
        stream = self.current_stream()
        self.record_cross_use((src,), stream)
        event = self._traced_copy("D2H", array.nbytes, stream, lambda: pycl.enqueue_copy(
            stream.queue, array, buffer, src_offset=offset * src.dtype.itemsize,
            is_blocking=not non_blocking))
        stream.enqueued(event, keep=array)
        if not non_blocking:          # a sync point: device-side asserts report here
            self.asserts.check(stream)

    def copy_buffer(self, dst, src, nbytes):
        """A device-to-device copy of ``nbytes`` between contiguous tensors."""
        if not nbytes:
            return
        pycl = cl()
        dst_buffer, dst_offset = self.buffer_of(dst)
        src_buffer, src_offset = self.buffer_of(src)
        stream = self.current_stream()
        self.record_cross_use((dst, src), stream)
        event = self._traced_copy("D2D", nbytes, stream, lambda: pycl.enqueue_copy(
            stream.queue, dst_buffer, src_buffer, byte_count=nbytes,
            dst_offset=dst_offset * dst.dtype.itemsize,
            src_offset=src_offset * src.dtype.itemsize))
        stream.enqueued(event)
        if self.recording is not None:
            self.recording.copy(dst, src, nbytes)

    def _traced_copy(self, kind, nbytes, stream, enqueue):
        """Run ``enqueue()`` (an ``enqueue_copy``) and return its event; while tracing, as a
        "runtime" copy span (kind H2D/D2H/D2D, bytes, queue, sequence number) whose profiled
        execution is reported at the next sync point as a "device" event, like a launch's."""
        if not trace.active:
            return enqueue()
        span = trace.begin("runtime", "copy", kind=kind, nbytes=nbytes, stream=stream.id)
        try:
            event = enqueue()
        except BaseException:
            trace.end(span)
            raise
        trace.end(span, seq=stream.seq + 1, queue=self.queue_name(stream))
        self._timed.append((event, f"copy {kind}", stream.id, stream.seq + 1))
        return event

    def copy(self, dst, src, non_blocking=False):
        """``dst.copy_(src)`` through the dispatcher (the OpenCL ``copy_`` kernel)."""
        F.copy_(dst, src, non_blocking)

    def queue_name(self, stream):
        """The command queue of ``stream`` as explain() names it."""
        return f"cl_command_queue {stream.id} of '{self.cl_device.name.strip()}' " \
               f"({self.cl_device.platform.name.strip()}; in order, profiled)"

    # --- synchronisation ------------------------------------------------------------------------
    def synchronize(self, reason="synchronize"):
        # an idle device is not traced: explain() of a CPU line synchronises every started one
        busy = trace.active and any(s.seq > s._done for s in self.streams)
        span = trace.begin("sync", reason, device=str(self.device)) if busy else None
        for stream in self.streams:
            stream.synchronize()
        if span is not None:
            trace.end(span)
        self.collect_device_events()

    def collect_device_events(self):
        """Report the profiled start/end of completed traced launches as "device" events, on
        the host clock (Note [Device clock])."""
        if not self._timed:
            return
        still = []
        offset = self._clock_offset()
        for item in self._timed:
            event, name, stream_id, seq = item
            if event.command_execution_status != 0:
                still.append(item)
                continue
            if trace.active:
                profile = event.profile
                fields = {"device": str(self.device), "queue": stream_id, "seq": seq,
                          "track": f"{self.device} stream {stream_id}",
                          "event": _COMMAND_TYPES.get(event.command_type, event.command_type),
                          "queued_to_start": _us(profile.start - profile.queued),
                          "ran": _us(profile.end - profile.start)}
                ev = trace.Event("device", name, event.profile.start + offset, 0, fields)
                ev.end_ns = event.profile.end + offset
                trace.record(ev)
        self._timed = still

    def _clock_offset(self):
        """Note [Device clock]: profiling counters are the device's nanoseconds, not the host's
        ``perf_counter_ns``. A marker's end, read right after ``finish()``, is paired with the
        host time then (an estimate within the finish's latency), once per runtime."""
        if self._offset is None:
            pycl = cl()
            marker = pycl.enqueue_marker(self._default.queue)
            self._default.queue.finish()
            self._offset = time.perf_counter_ns() - marker.profile.end
        return self._offset


def _us(ns) -> str:
    return f"{ns / 1e3:.1f}us"


# cl_command_type values (CL/cl.h) of the commands the runtime times
_COMMAND_TYPES = {0x11F0: "CL_COMMAND_NDRANGE_KERNEL", 0x11F3: "CL_COMMAND_READ_BUFFER",
                  0x11F4: "CL_COMMAND_WRITE_BUFFER", 0x11F5: "CL_COMMAND_COPY_BUFFER"}

_runtimes = {}
_lock = threading.Lock()


def device_index(dev) -> int:
    """The index of an ``opencl`` device; raises PyTorch's error for one that does not exist."""
    dev = None if dev is None else as_device(dev)
    index = 0 if dev is None or dev.index is None else dev.index
    count = len(devices())
    if index >= count:
        if count == 0:
            cl()   # without pyopencl, say so and how to install it
        raise RuntimeError(f"OpenCL error: invalid device ordinal {index}: {count} OpenCL "
                           f"device(s) available")
    return index


def get(index=0) -> OpenCLRuntime:
    """The started runtime of device ``opencl:index`` (started now if needed)."""
    rt = _runtimes.get(index)
    if rt is not None:
        return rt
    with _lock:
        if index not in _runtimes:
            found = devices()
            if index >= len(found):
                raise RuntimeError(
                    f"OpenCL error: invalid device ordinal {index}: {len(found)} OpenCL "
                    f"device(s) available (STRATA_OPENCL_DEVICE={config.opencl_device!r})")
            _runtimes[index] = OpenCLRuntime(index, found[index])
    return _runtimes[index]


def started() -> list:
    return list(_runtimes.values())


class _AllStarted:
    """``register_runtime`` wants one runtime per device type: this one synchronizes them all."""

    device_type = "opencl"

    def synchronize(self, reason="synchronize"):
        for rt in started():
            rt.synchronize(reason)


register_runtime("opencl", lambda: _AllStarted() if _runtimes else None)
