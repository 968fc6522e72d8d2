"""``strata.cuda``: there is no CUDA device in strata, and this module says so truthfully.

Programs commonly probe ``cuda.is_available()`` and seed CUDA; those calls work. Anything that
needs a CUDA device raises PyTorch's "Torch not compiled with CUDA enabled" error.
"""

from . import amp  # noqa: F401


def _no_cuda(*args, **kwargs):
    raise AssertionError("Torch not compiled with CUDA enabled (strata has no CUDA device)")


def is_available() -> bool:
    return False


def device_count() -> int:
    return 0


def is_bf16_supported(including_emulation=True) -> bool:
    return False


def is_initialized() -> bool:
    return False


def manual_seed(seed) -> None:
    """Seeding CUDA without CUDA is silently ignored, as in PyTorch."""


manual_seed_all = manual_seed
seed = seed_all = lambda: None  # noqa: E731

set_device = synchronize = current_device = get_device_name = get_device_properties = _no_cuda
memory_allocated = max_memory_allocated = memory_reserved = empty_cache = _no_cuda
Stream = Event = _no_cuda
