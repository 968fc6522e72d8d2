"""Fold and Unfold (``torch/nn/modules/fold.py``): ``F.fold``/``F.unfold`` (col2im/im2col)."""

from .. import functional as F
from .module import Module


class Fold(Module):
    """Sum sliding blocks (N, C * prod(kernel_size), L) back into (N, C, *output_size)."""

    def __init__(self, output_size, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.output_size = output_size
        self.kernel_size, self.dilation, self.padding, self.stride = (kernel_size, dilation,
                                                                      padding, stride)

    def forward(self, input):
        return F.fold(input, self.output_size, self.kernel_size, self.dilation, self.padding,
                      self.stride)

    def extra_repr(self):
        return f"output_size={self.output_size}, " + _window_repr(self)


class Unfold(Module):
    """Extract sliding blocks: (N, C, H, W) -> (N, C * prod(kernel_size), L)."""

    def __init__(self, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.kernel_size, self.dilation, self.padding, self.stride = (kernel_size, dilation,
                                                                      padding, stride)

    def forward(self, input):
        return F.unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self):
        return _window_repr(self)


def _window_repr(m):
    return (f"kernel_size={m.kernel_size}, dilation={m.dilation}, padding={m.padding}, "
            f"stride={m.stride}")
