"""Prepared launches: a kernel launch worked out once, replayed with new buffers.

Note [Prepared launches]: a pointwise op called again with the same signature (compile/
inductor/opencl_lane.py) launches the same kernel over the same work-items with the same
arguments, except its tensors' buffers and offsets (and the output is a new tensor of a known
layout and size). A ``PreparedLaunch`` keeps everything else from the first call: the
``KernelArgs``, the argument list with its constants converted, where each tensor's buffer and
offset go in it, the packed work size and the output's byte size. A call allocates the output,
writes the buffers and offsets, sets only the arguments that changed since this launch last
set its kernel's arguments, and calls ``clEnqueueNDRangeKernel`` itself: no argument plan, no
dict of kernels, no meta function. While anything needs the general path (the tracer, a graph
recording, ``STRATA_LAUNCH_BLOCKING``), it goes through ``OpenCLRuntime.launch`` with the same
arguments; with several streams it records the uses of other streams' blocks as that does.
"""

from ..._tensor import make_tensor
from ...core import trace
from ...core.shape import storage_extent
from .driver import packed_sizes


class PreparedLaunch:
    """One remembered launch of kernel ``name`` of ``source`` that makes a new tensor of
    ``shape``, ``strides``, ``dtype``: ``args`` is a launch's argument list, ``places`` the
    positions of each tensor's (buffer, element offset) in it, the output's last;
    ``global_size`` an int or a tuple, with ``local_size`` (a tuple) or None."""

    __slots__ = ("args", "dtype", "global_size", "kernel", "local_size", "local_sizes", "name",
                 "nbytes", "op_name", "places", "rt", "shape", "sizes", "source", "strides")

    def __init__(self, rt, op_name, source, name, global_size, args, places, out,
                 local_size=None):
        self.rt, self.op_name, self.source, self.name = rt, op_name, source, name
        self.kernel = rt.kernel(source, name)
        self.global_size = (global_size,) if type(global_size) is int else tuple(global_size)
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
        args = self.args.copy()
        tensors = (*inputs, out)
        for t, (at_buffer, at_offset) in zip(tensors, self.places):
            # a device tensor always has a storage; a block, as an empty launch is never kept
            block = t._storage_or_none.block
            args[at_buffer] = block.segment.handle[0]
            args[at_offset] = (block.addr - block.segment.addr) // t.dtype.itemsize + t._offset
        if trace.active or rt.recording is not None or rt.launch_blocking:
            rt.launch(self.op_name, self.source, self.name, self.global_size, args, tensors,
                      self.local_size)
            return out
        if len(rt.streams) > 1:         # as the general launch: uses of other streams' blocks
            rt.record_cross_use(tensors, stream)
        kernel = self.kernel
        if kernel.owner is not self:
            kernel.set(args)
            kernel.owner = self
        else:                                       # only buffers and offsets can differ
            held = kernel.held
            for at_buffer, at_offset in self.places:
                if held[at_buffer] is not args[at_buffer]:
                    kernel.set_at(at_buffer, args[at_buffer])
                if held[at_offset] != args[at_offset]:
                    kernel.set_at(at_offset, args[at_offset])
        rt.enqueue_prepared(self.op_name, stream, kernel, len(self.global_size), self.sizes,
                            self.local_sizes)
        return out
