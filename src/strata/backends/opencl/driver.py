"""The launch hot path, called straight into libOpenCL (ctypes), as CUDA's runtime calls its
driver: ``clSetKernelArg`` for the arguments that changed and ``clEnqueueNDRangeKernel`` with no
event.

Note [Launches without events]: pyopencl's ``enqueue_nd_range_kernel`` creates and returns a
``cl_event`` for every launch. On NVIDIA's driver that costs most of a launch (18.5 us of host
time, against the 9.3 us of a whole ``x + y`` in torch on CUDA). An in-order queue needs no
event per command, as a CUDA stream needs none: the stream counts its commands and makes an
event only where one is needed (streams.py: an ``Event.record``, a cross-stream wait, the
caching allocator asking whether another stream's use has ended) and runtime.py asks for one
per launch only while the tracer is on (the profiler's device track). Everything else (building,
buffers, copies, markers) stays in pyopencl: the handles (``int_ptr``) of its objects are the
ones passed here, from the same ICD loader pyopencl uses.
"""

import ctypes
import ctypes.util
import os
import struct

import numpy as np

INT64 = struct.Struct("q")
POINTER = struct.Struct("P")
_SIZES = [struct.Struct(f"{n}N") for n in range(4)]     # size_t[work_dim], dims 0-3
_NULL_BUFFER = bytes(POINTER.size)


def _library_path():
    """The libOpenCL (ICD loader) pyopencl loaded: the one in this process's memory map (a
    pyopencl wheel bundles its own), else the system's."""
    try:
        with open("/proc/self/maps") as maps:
            for line in maps:
                path = line.split()[-1]
                if os.path.basename(path).startswith("libOpenCL"):
                    return path
    except OSError:
        pass                                        # not Linux
    path = ctypes.util.find_library("OpenCL")
    if path is None:
        raise RuntimeError("the opencl device could not find libOpenCL (the ICD loader)")
    return path


class Driver:
    """The launch path's calls, looked up once; Python ints pass as C ints (the ``cl_uint``
    arguments).
    ``clSetKernelArg`` never blocks, so it keeps the GIL (``PyDLL``); an enqueue may block while
    the queue is full, so it releases it (``CDLL``)."""

    def __init__(self, pycl):
        path = _library_path()
        self.set_arg = ctypes.PyDLL(path).clSetKernelArg
        self.set_arg.restype = ctypes.c_int32
        self.enqueue_kernel = ctypes.CDLL(path).clEnqueueNDRangeKernel
        self.enqueue_kernel.restype = ctypes.c_int32
        self.flush = ctypes.CDLL(path).clFlush      # streams.py's Note [Flushing]
        self.flush.restype = ctypes.c_int32
        self._status_names = {v: k for k, v in vars(pycl.status_code).items()
                              if not k.startswith("_") and isinstance(v, int)}
        self._pycl = pycl

    def check(self, status, call):
        if status:
            raise DriverError(f"{call} failed: {self._status_names.get(status, status)}")

    def enqueue(self, queue, kernel, global_size, local_size=None, with_event=False):
        """Enqueue ``kernel`` (a ``KernelArgs``) on ``queue`` (a ``cl_command_queue`` handle);
        returns its ``cl.Event`` if ``with_event``, else None."""
        dims = len(global_size)
        event = ctypes.c_void_p() if with_event else None
        status = self.enqueue_kernel(
            queue, kernel.handle, dims, None, _SIZES[dims].pack(*global_size),
            None if local_size is None else _SIZES[dims].pack(*local_size), 0, None,
            None if event is None else ctypes.byref(event))
        self.check(status, "clEnqueueNDRangeKernel")
        if event is None:
            return None
        return self._pycl.Event.from_int_ptr(event.value, retain=False)


class DriverError(RuntimeError):
    """An OpenCL call's error status, named as pyopencl names it."""


class KernelArgs:
    """A ``cl_kernel`` and the arguments it holds: a kernel object keeps its arguments between
    launches, so only the ones that changed are set again (``set``)."""

    __slots__ = ("driver", "group", "handle", "held", "kernel")

    def __init__(self, driver, kernel):
        self.driver = driver
        self.kernel = kernel                        # the cl.Kernel, kept alive
        self.handle = ctypes.c_void_p(kernel.int_ptr)
        self.held = []
        self.group = None   # the work-group size of its guarded launches (runtime.py)

    def set(self, args):
        """``args``: ``cl.Buffer``s (None: no buffer), Python ints (a ``long``) and NumPy
        scalars (their own type). Buffers compare by identity: a released buffer's handle may
        be reused by a new one; numbers by value, except zeros (the sign of a float zero)."""
        held = self.held
        if len(held) != len(args):
            held = self.held = [_UNSET] * len(args)
        set_arg, handle = self.driver.set_arg, self.handle
        for i, new in enumerate(args):
            old = held[i]
            if old is new:
                continue
            kind = type(new)
            # equal numbers are not set again, but a NumPy zero is: -0.0 == 0.0
            if (kind is int or isinstance(new, np.generic)) and type(old) is kind and \
                    old == new and (new or kind is int):
                continue
            value = _encode(new, kind)
            status = set_arg(handle, i, _ARG_SIZES[len(value)], value)
            if status:
                self.driver.check(status, f"clSetKernelArg({i})")
            held[i] = new


def packed_sizes(sizes):
    """``sizes`` (a tuple of 1 to 3 ints) as the ``size_t`` array an enqueue takes."""
    return _SIZES[len(sizes)].pack(*sizes)


_UNSET = object()
_ARG_SIZES = {n: ctypes.c_size_t(n) for n in (1, 2, 4, 8, 16)}    # size_t, not a C int
POINTER_SIZE, INT64_SIZE = _ARG_SIZES[POINTER.size], _ARG_SIZES[INT64.size]


def _encode(value, kind):
    """The bytes ``clSetKernelArg`` copies for one argument."""
    if kind is int:
        return INT64.pack(value)
    if value is None:
        return _NULL_BUFFER
    if isinstance(value, np.generic):
        return value.tobytes()
    if not hasattr(value, "int_ptr"):
        raise TypeError(f"an OpenCL kernel argument must be a cl.Buffer, None, an int or a "
                        f"NumPy scalar, not {kind.__name__}")
    return POINTER.pack(value.int_ptr)              # a cl.Buffer: its cl_mem handle
