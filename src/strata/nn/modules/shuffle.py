"""PixelShuffle, PixelUnshuffle and ChannelShuffle (``torch/nn/modules/pixelshuffle.py`` and
``channelshuffle.py``): one integer argument, passed to the ``nn.functional`` of that name."""

from .. import functional as F
from .module import Module


class _Shuffle(Module):
    _fn = _arg = ""

    def __init__(self, value):
        super().__init__()
        setattr(self, self._arg, value)

    def forward(self, input):
        return getattr(F, self._fn)(input, getattr(self, self._arg))

    def extra_repr(self):
        return f"{self._arg}={getattr(self, self._arg)}"


class PixelShuffle(_Shuffle):
    """(*, C * r^2, H, W) -> (*, C, H * r, W * r)."""
    _fn, _arg = "pixel_shuffle", "upscale_factor"

    def __init__(self, upscale_factor):
        super().__init__(upscale_factor)


class PixelUnshuffle(_Shuffle):
    """(*, C, H * r, W * r) -> (*, C * r^2, H, W): the inverse of PixelShuffle."""
    _fn, _arg = "pixel_unshuffle", "downscale_factor"

    def __init__(self, downscale_factor):
        super().__init__(downscale_factor)


class ChannelShuffle(_Shuffle):
    """Interleave ``groups`` groups of channels (ShuffleNet)."""
    _fn, _arg = "channel_shuffle", "groups"

    def __init__(self, groups):
        super().__init__(groups)
