"""``strata.cuda``: there is no CUDA device in strata, and this module says so truthfully.

Programs commonly probe ``cuda.is_available()`` and seed CUDA; those calls work. Anything that
needs a CUDA device raises PyTorch's "Torch not compiled with CUDA enabled" error.
"""

from ..core.device import no_cuda
from . import amp  # noqa: F401


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


def empty_cache() -> None:
    """Nothing is cached without CUDA: a no-op, as in PyTorch's CPU build."""


def memory_allocated(device=None) -> int:
    """0 without CUDA, as in PyTorch's CPU build (scripts log it unguarded)."""
    return 0


max_memory_allocated = memory_reserved = max_memory_reserved = memory_allocated
set_device = synchronize = current_device = get_device_name = get_device_properties = no_cuda
Stream = Event = no_cuda
