"""``strata.opencl``: the OpenCL device's Python API, shaped like ``torch.cuda``.

    strata.opencl.is_available()            # pyopencl found a driver with a device
    x = strata.ones(1024, device="opencl")  # opencl:0, chosen by STRATA_OPENCL_DEVICE
    start = strata.opencl.Event(enable_timing=True); start.record()
    y = x * 2
    end = strata.opencl.Event(enable_timing=True); end.record()
    strata.opencl.synchronize(); start.elapsed_time(end)   # milliseconds of device time

Nothing here starts a device except calls that need it. See docs/opencl.md.
"""


from .backends.opencl import runtime as _rt
from .backends.opencl.streams import OpenCLEvent as Event  # noqa: F401
from .backends.opencl.streams import OpenCLStream as Stream
from .core.device import as_device
from .runtime import use_stream


def is_available() -> bool:
    """True when pyopencl is installed and an OpenCL driver offers a device."""
    return bool(_rt.devices())


def device_count() -> int:
    return len(_rt.devices())


def _runtime(device=None):
    if isinstance(device, int):
        return _rt.get(device)
    return _rt.get(_rt.device_index(None if device is None else as_device(device)))


def get_device_name(device=None) -> str:
    """The driver's name of the device, with its platform: "pthread-AMD EPYC (Portable...)"."""
    dev = _runtime(device).cl_device
    return f"{dev.name} ({dev.platform.name})"


def is_initialized() -> bool:
    """Whether a device runtime has started (tensors, streams or events were made)."""
    return bool(_rt.started())


def current_device() -> int:
    return 0


def synchronize(device=None) -> None:
    """Wait until all work queued on the device's streams has finished."""
    _runtime(device).synchronize("strata.opencl.synchronize()")


def current_stream(device=None) -> Stream:
    return _runtime(device).current_stream()


def default_stream(device=None) -> Stream:
    return _runtime(device).default_stream()


stream = use_stream     # ``with strata.opencl.stream(s):``


def memory_allocated(device=None) -> int:
    """Bytes held by live opencl tensors (rounded to the allocator's block sizes)."""
    return _runtime(device).allocator.memory_allocated()


def memory_reserved(device=None) -> int:
    """Bytes of cl.Buffer segments the caching allocator holds (allocated or cached)."""
    return _runtime(device).allocator.memory_reserved()


def max_memory_allocated(device=None) -> int:
    return _runtime(device).allocator.max_memory_allocated()


def max_memory_reserved(device=None) -> int:
    return _runtime(device).allocator.max_memory_reserved()


def reset_peak_memory_stats(device=None) -> None:
    _runtime(device).allocator.reset_peak_memory_stats()


def memory_summary(device=None, abbreviated=False) -> str:
    return _runtime(device).allocator.memory_summary()


def memory_stats(device=None) -> dict:
    return _runtime(device).allocator.memory_stats()


def empty_cache() -> None:
    """Release the cached segments no tensor uses."""
    for rt in _rt.started():
        rt.allocator.empty_cache()
