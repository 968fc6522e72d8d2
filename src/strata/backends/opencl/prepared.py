"""Prepared launches: a kernel launch worked out once, replayed with new buffers.

Note [Prepared launches]: a pointwise op called again with the same signature (compile/
inductor/opencl_lane.py) launches the same kernel over the same work-items with the same
arguments, except its tensors' buffers and offsets (and the output is a new tensor of a known
layout and size). A ``PreparedLaunch`` keeps everything else from the first call: the
``KernelArgs``, the argument list with its constants converted, where each tensor's buffer and
offset go in it, the packed work size and the output's byte size. A call allocates the output,
writes the buffers and offsets, sets only the arguments that changed since this launch last
set them, and calls ``clEnqueueNDRangeKernel`` itself: no argument plan, no dict of kernels,
no meta function. Each prepared launch has a ``cl_kernel`` of its own (a kernel object keeps
its arguments between launches): prepared launches that share a kernel's source, the same
op at other shapes, would otherwise set each other's arguments back on every call (49 of a
GPT step's 78 prepared calls did, 17 arguments each). While anything needs the general path
(the tracer, a graph recording, ``STRATA_LAUNCH_BLOCKING``), it goes through
``OpenCLRuntime.launch`` with the same arguments; with several streams it records the uses of
other streams' blocks as that does.
"""

from ..._tensor import make_tensor
from ...core import trace
from ...core.shape import storage_extent
from .driver import INT64, INT64_SIZE, POINTER, POINTER_SIZE, packed_sizes
from .runtime import grouped


class PreparedLaunch:
    """One remembered launch of kernel ``name`` of ``source`` that makes a new tensor of
    ``shape``, ``strides``, ``dtype``: ``args`` is a launch's argument list, ``places`` the
    positions of each tensor's (buffer, element offset) in it, the output's last;
    ``global_size`` an int or a tuple, with ``local_size`` (a tuple) or None."""

    __slots__ = ("args", "dtype", "global_size", "kernel", "local_size", "local_sizes", "name",
                 "nbytes", "op_name", "places", "primed", "rt", "shape", "sizes", "source",
                 "strides")

    def __init__(self, rt, op_name, source, name, global_size, args, places, out,
                 local_size=None):
        self.rt, self.op_name, self.source, self.name = rt, op_name, source, name
        self.kernel = rt.new_kernel(source, name)
        self.primed = False             # whether ``kernel`` holds this launch's constants
        self.global_size = (global_size,) if type(global_size) is int else tuple(global_size)
        if self.kernel.group and local_size is None and len(self.global_size) == 1:
            self.global_size, local_size = grouped(self.global_size[0], self.kernel.group)
        self.sizes = packed_sizes(self.global_size)
        self.local_size = local_size
        self.local_sizes = None if local_size is None else packed_sizes(tuple(local_size))
        self.args = list(args)
        self.places = tuple(places)
        self.shape, self.strides, self.dtype = out._shape, out._strides, out.dtype
        self.nbytes = storage_extent(out._shape, out._strides) * out.dtype.itemsize

    def __call__(self, inputs):
        """The output of one launch over the device tensors ``inputs`` (in ``places``'
        order)."""
        rt = self.rt
        stream = rt.current_stream()
        out = make_tensor(rt.allocate(self.nbytes, stream), 0, self.shape, self.strides,
                          self.dtype, rt.device, rt.keyset)
        tensors = (*inputs, out)
        if not self.primed or trace.active or rt.recording is not None or rt.launch_blocking:
            if self._general(tensors, stream):
                return out
        else:       # only buffers and offsets can differ from the kernel's last launch
            kernel = self.kernel
            held, set_arg, handle = kernel.held, kernel.driver.set_arg, kernel.handle
            for t, (at_buffer, at_offset) in zip(tensors, self.places):
                # a device tensor always has a storage; a block, as an empty launch is never
                # kept
                block = t._storage_or_none.block
                segment = block.segment
                buffer = segment.handle[0]
                if held[at_buffer] is not buffer:
                    status = set_arg(handle, at_buffer, POINTER_SIZE,
                                     POINTER.pack(buffer.int_ptr))
                    if status:
                        kernel.driver.check(status, f"clSetKernelArg({at_buffer})")
                    held[at_buffer] = buffer
                offset = (block.addr - segment.addr) // t.dtype.itemsize + t._offset
                if held[at_offset] != offset:
                    status = set_arg(handle, at_offset, INT64_SIZE, INT64.pack(offset))
                    if status:
                        kernel.driver.check(status, f"clSetKernelArg({at_offset})")
                    held[at_offset] = offset
            if len(rt.streams) > 1:     # as the general launch: uses of other streams' blocks
                rt.record_cross_use(tensors, stream)
        rt.enqueue_prepared(self.op_name, stream, self.kernel, len(self.global_size),
                            self.sizes, self.local_sizes)
        return out

    def _general(self, tensors, stream):
        """The first call (every argument set), or one while something watches the launches
        (through ``OpenCLRuntime.launch``: True, launched)."""
        rt = self.rt
        args = self.args.copy()
        for t, (at_buffer, at_offset) in zip(tensors, self.places):
            block = t._storage_or_none.block
            args[at_buffer] = block.segment.handle[0]
            args[at_offset] = (block.addr - block.segment.addr) // t.dtype.itemsize + t._offset
        if trace.active or rt.recording is not None or rt.launch_blocking:
            rt.launch(self.op_name, self.source, self.name, self.global_size, args, tensors,
                      self.local_size)
            return True
        if len(rt.streams) > 1:
            rt.record_cross_use(tensors, stream)
        self.kernel.set(args)
        self.primed = True
        return False
