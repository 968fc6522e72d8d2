"""Recording a compiled graph's launches and replaying them (the CUDA-graph idea, on OpenCL).

While a ``LaunchRecording`` is the runtime's ``recording``, every kernel launch and device copy
is also kept: a kernel gets a ``cl.Kernel`` object of its own with its arguments set once, so a
replay is one batch of ``clEnqueueNDRangeKernel`` calls (driver.py, no events) with nothing set
and no Python op dispatch in between (OpenCL 1.2 has no graph object:
``cl_khr_command_buffer`` is an extension few drivers ship). Every tensor a recorded command
touches is kept alive by the recording, so its memory is never handed to anyone else: the
recording owns a private pool, as a CUDA graph does. A copy to or from the host (a sync point,
or host data that would be stale) cannot be replayed: the recording names it in ``problem``
and the graph runs normally instead. Index
checks run on the device (asserts.py), so ``embedding`` and the losses replay too.
"""

from ...core import trace
from .driver import KernelArgs
from .runtime import cl


class LaunchRecording:
    """The commands enqueued on one runtime between ``start`` and ``stop``."""

    def __init__(self, runtime):
        self.runtime = runtime
        self.commands = []      # ("kernel", KernelArgs, global, local) | ("copy", args...)
        self.tensors = []       # kept alive: their blocks belong to the recording
        self.problem = None     # why this recording cannot be replayed, if it cannot
        self.stream = None
        self.slots = set()      # flag slots of the device-side index checks it ran (asserts.py)

    def start(self):
        if self.runtime.recording is not None:
            raise RuntimeError("OpenCL: a graph is already being recorded on this device")
        self.stream = self.runtime.current_stream()
        self.runtime.recording = self

    def stop(self):
        self.runtime.recording = None

    def launch(self, source, name, global_size, local_size, args, tensors):
        own = KernelArgs(self.runtime.driver, cl().Kernel(self.runtime.program(source), name))
        own.set(args)
        self.commands.append(("kernel", own, global_size, local_size))
        self.tensors.extend(tensors)

    def copy(self, dst, src, nbytes):
        dst_buffer, dst_offset = self.runtime.buffer_of(dst)
        src_buffer, src_offset = self.runtime.buffer_of(src)
        self.commands.append(("copy", dst_buffer, src_buffer, nbytes,
                              dst_offset * dst.dtype.itemsize, src_offset * src.dtype.itemsize))
        self.tensors.extend((dst, src))

    def copy_input(self, static, new):
        """Copy a new input into its static buffer (one enqueued copy when layouts match)."""
        if new.is_contiguous() and static.is_contiguous() and new.dtype == static.dtype and \
                new.shape == static.shape and new.device == static.device:
            self.runtime.copy_buffer(static, new, new.numel() * new.dtype.itemsize)
        else:
            static.copy_(new)

    def checked(self, slot):
        """A recorded kernel writes the device-side assert flag ``slot``."""
        self.slots.add(slot)

    def unsupported(self, what):
        self.problem = self.problem or what

    def replay(self):
        """Enqueue every recorded command on the current stream, in order; returns at once."""
        pycl = cl()
        stream = self.runtime.current_stream()
        if stream is not self.stream:
            self.runtime.record_cross_use(self.tensors, stream)
        driver = self.runtime.driver
        for command in self.commands:
            if command[0] == "kernel":
                _, knl, global_size, local_size = command
                driver.enqueue(stream.handle, knl, global_size, local_size)
                stream.launched()             # an eventless command (streams.py)
            else:
                _, dst, src, nbytes, dst_offset, src_offset = command
                stream.enqueued(pycl.enqueue_copy(stream.queue, dst, src, byte_count=nbytes,
                                                  dst_offset=dst_offset, src_offset=src_offset))
        for slot in self.slots:
            self.runtime.asserts.expect(slot, stream)
        if trace.active:
            trace.instant("runtime", "graph replay", device=str(self.runtime.device),
                          stream=stream.id, seq=stream.seq, commands=len(self.commands))
        if self.runtime.launch_blocking:
            stream.synchronize()
