"""The opencl device: a real GPU API (pyopencl; PoCL on the CPU in tests, vendor drivers on
GPUs). See docs/opencl.md.

    streams.py    Stream (a profiled in-order command queue) and Event (a marker)
    runtime.py    device selection, the caching allocator over cl.Buffer segments, launches,
                  host copies, synchronisation
    driver.py     the launch hot path, straight into libOpenCL: changed arguments only, no
                  event per kernel
    prepared.py   a pointwise launch worked out once, replayed with new buffers and offsets
    memory.py     segments of cl.Buffer memory, for both caching allocators
    pinned.py     pinned host memory (``pin_memory("opencl")``, non-blocking copies' staging)
    graphs.py     recording launches and replaying them (``mode="reduce-overhead"``)

Its kernels are OpenCL C printed from the compiler's loop IR (compile/inductor/oclprinter.py),
a layer below this one may not import: compile/inductor/opencl_kernels.py builds the table and
hands it to ``register``. An op without an entry raises the dispatcher's "Could not run
'aten::xxx' with arguments from the 'OpenCL' backend".
"""

from ... import tensor_conversion
from ...core.device import register_device_type
from ...dispatch import register_kernel


def _pin(tensor):
    from . import runtime
    return runtime.get(0).pin(tensor)


def register(kernels: dict) -> None:
    """Make ``opencl`` a device type and install ``kernels`` ({op: fn}) at the OpenCL key."""
    register_device_type("opencl", "OpenCL")
    tensor_conversion.install_pin_memory(_pin, "opencl", default=False)
    for op, fn in kernels.items():
        register_kernel(op, "OpenCL", fn)
