"""``strata.cuda.amp``: ``GradScaler`` and ``autocast`` as PyTorch programs use them (deprecated
there in favour of ``amp``'s, with the same FutureWarning)."""

import warnings

from ..amp import GradScaler as _GradScaler
from ..amp import autocast as _autocast


class GradScaler(_GradScaler):
    def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000, enabled=True):
        warnings.warn("`torch.cuda.amp.GradScaler(args...)` is deprecated. Please use "
                      "`torch.amp.GradScaler('cuda', args...)` instead.", FutureWarning,
                      stacklevel=2)
        super().__init__("cuda", init_scale, growth_factor, backoff_factor, growth_interval,
                         enabled)


def autocast(enabled=True, dtype=None, cache_enabled=True):
    warnings.warn("`torch.cuda.amp.autocast(args...)` is deprecated. Please use "
                  "`torch.amp.autocast('cuda', args...)` instead.", FutureWarning, stacklevel=2)
    from ..core import dtype as D
    return _autocast("cuda", dtype=dtype or D.float16, enabled=enabled)
