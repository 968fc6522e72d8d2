"""``strata.sim``: the sim accelerator's Python API, shaped like ``torch.cuda``.

    x = strata.ones(1024, device="sim")      # starts the device process on first use
    s = strata.sim.Stream()
    with strata.sim.stream(s):
        y = x * 2
    strata.sim.synchronize()
    strata.sim.memory_allocated()

Nothing here starts the device except calls that need it (a stream, an event, a tensor, the
memory summary); statistics of a device that has not started are zero.
"""

import os

from .backends.sim import runtime as _rt
from .backends.sim.driver import DeviceLost, DeviceTimeout  # noqa: F401
from .backends.sim.runtime import AsyncKernelError  # noqa: F401
from .backends.sim.streams import SimEvent as Event  # noqa: F401
from .backends.sim.streams import SimStream as Stream
from .core.device import as_device
from .runtime import (
    OutOfMemoryError,  # noqa: F401
    use_stream,
)


def is_available() -> bool:
    """True where the device can run: Linux with memfd, eventfd and pidfd."""
    return all(hasattr(os, f) for f in ("memfd_create", "eventfd", "pidfd_open"))


def is_initialized() -> bool:
    return _rt.get_if_started() is not None


def init() -> None:
    """Start the device process now (it otherwise starts on first use)."""
    _rt.get()


def device_count() -> int:
    return 1 if is_available() else 0


def current_device() -> int:
    return 0


def set_device(device) -> None:
    if _index(device) != 0:
        raise RuntimeError(f"sim error: invalid device ordinal {device}")


def get_device_name(device=None) -> str:
    return "strata sim (a device process on the host CPU)"


def _index(device):
    if device is None:
        return 0
    if isinstance(device, int):
        return device
    return as_device(device).index or 0


# --- streams and synchronisation ------------------------------------------------------------------

def synchronize(device=None) -> None:
    """Wait until all work queued on the device has finished."""
    _rt.get().synchronize("strata.sim.synchronize()")


def current_stream(device=None) -> Stream:
    return _rt.get().current_stream()


def default_stream(device=None) -> Stream:
    return _rt.get().default_stream()


def set_stream(stream) -> None:
    _rt.get().set_stream(stream)


stream = use_stream     # ``with strata.sim.stream(s):``


def set_sync_mode(mode: str) -> None:
    """How the host waits for the device: "poll" (spin on the fence, then back off) or
    "interrupt" (sleep until the device's completion eventfd fires). Default: STRATA_SIM_SYNC."""
    if mode not in ("poll", "interrupt"):
        raise ValueError(f"sync mode must be 'poll' or 'interrupt', got {mode!r}")
    _rt.get().driver.sync_mode = mode


def get_sync_mode() -> str:
    rt = _rt.get_if_started()
    if rt is None:
        from . import config
        return config.sim_sync
    return rt.driver.sync_mode


# --- memory ---------------------------------------------------------------------------------------

def _allocator():
    rt = _rt.get_if_started()
    return None if rt is None else rt.allocator


def memory_allocated(device=None) -> int:
    """Bytes held by live sim tensors (rounded to the allocator's block sizes)."""
    a = _allocator()
    return 0 if a is None else a.memory_allocated()


def max_memory_allocated(device=None) -> int:
    a = _allocator()
    return 0 if a is None else a.max_memory_allocated()


def memory_reserved(device=None) -> int:
    """Bytes of device memory the caching allocator holds (allocated or cached)."""
    a = _allocator()
    return 0 if a is None else a.memory_reserved()


def max_memory_reserved(device=None) -> int:
    a = _allocator()
    return 0 if a is None else a.max_memory_reserved()


def reset_peak_memory_stats(device=None) -> None:
    a = _allocator()
    if a is not None:
        a.reset_peak_memory_stats()


def memory_stats(device=None) -> dict:
    a = _allocator()
    return {} if a is None else a.memory_stats()


def memory_snapshot() -> list:
    a = _allocator()
    return [] if a is None else a.memory_snapshot()


def memory_summary(device=None, abbreviated=False) -> str:
    return _rt.get().allocator.memory_summary()


def empty_cache() -> None:
    """Return the cached memory no tensor uses to the device (live tensors are kept), and the
    pinned host memory no tensor or copy uses to the OS."""
    rt = _rt.get_if_started()
    if rt is not None:
        rt.allocator.empty_cache()
        rt.host_allocator.empty_cache()


# --- random numbers -------------------------------------------------------------------------------

def manual_seed(seed) -> None:
    """Seed the sim device's default generator (``strata.manual_seed`` seeds it too)."""
    _rt.get().manual_seed(int(seed))


manual_seed_all = manual_seed


def initial_seed() -> int:
    return _rt.get().generator.initial_seed()


def seed() -> None:
    """Seed the sim generator from OS entropy."""
    rt = _rt.get()
    rt.manual_seed(rt.generator.seed())
