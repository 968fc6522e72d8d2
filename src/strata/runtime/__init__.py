"""Layer 6: the device runtime — the interface every device implements, shared by all devices.

* ``interface``: ``DeviceRuntime``, ``Stream``, ``Event`` and ``DeviceMemory`` (what a device
  provides);
* ``allocator``: the ``CachingAllocator`` every device uses for tensor memory;
* ``storage``: ``DeviceStorage`` (bytes in device memory) and ``PinnedStorage`` (host memory the
  device reaches directly).

A backend registers its runtime here (``register_runtime``) so device-generic code (``strata
.accelerator``, the profiler) can synchronize every device without importing the backends.
"""

import contextlib

from .allocator import CachingAllocator, OutOfMemoryError, format_size  # noqa: F401
from .interface import (  # noqa: F401
    DeviceMemory, DeviceRuntime, Event, OutOfDeviceMemory, Stream,
)
from .storage import DeviceStorage, PinnedStorage  # noqa: F401

_runtimes = {}   # device type -> zero-argument function returning its started runtime, or None


def register_runtime(device_type: str, get_if_started) -> None:
    """``get_if_started()`` returns the device's runtime if it has been started, else None (so
    that asking never starts a device)."""
    _runtimes[device_type] = get_if_started


def started_runtimes() -> list:
    return [rt for get in _runtimes.values() if (rt := get()) is not None]


def synchronize_all(reason: str = "synchronize") -> None:
    """Wait for every started device (the profiler calls this to collect device events)."""
    for rt in started_runtimes():
        rt.synchronize(reason)


@contextlib.contextmanager
def use_stream(stream):
    """``with strata.opencl.stream(s):`` (and ``strata.sim.stream``): work in the block is
    queued on ``s``; ``None`` changes nothing, as in ``torch.cuda.stream``."""
    if stream is None:
        yield
        return
    with stream:
        yield
