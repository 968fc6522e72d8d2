"""Convolutions (``torch/nn/modules/conv.py``): weight (out, in/groups, *kernel), Kaiming init."""

import math

from ...creation import empty
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module
from .utils import _ntuple


class _ConvNd(Module):
    _n = 0
    _transposed = False

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1,
                 groups=1, bias=True, padding_mode="zeros", device=None, dtype=None,
                 output_padding=0):
        super().__init__()
        n = self._n
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        if padding_mode not in ("zeros", "reflect", "replicate", "circular"):
            raise ValueError(f"padding_mode must be one of ['zeros', 'reflect', 'replicate', "
                             f"'circular'], but got padding_mode='{padding_mode}'")
        if isinstance(padding, str):
            if padding not in ("same", "valid"):
                raise ValueError(f"Invalid padding string {padding!r}, should be one of "
                                 "{'valid', 'same'}")
            if padding == "same" and any(s != 1 for s in _ntuple(n)(stride)):
                raise ValueError("padding='same' is not supported for strided convolutions")
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size = _ntuple(n)(kernel_size)
        self.stride = _ntuple(n)(stride)
        self.padding = padding if isinstance(padding, str) else _ntuple(n)(padding)
        self.dilation = _ntuple(n)(dilation)
        self.output_padding = _ntuple(n)(output_padding)
        self.groups = groups
        self.padding_mode = padding_mode
        self.transposed = self._transposed
        shape = ((in_channels, out_channels // groups) if self._transposed
                 else (out_channels, in_channels // groups)) + self.kernel_size
        self.weight = Parameter(empty(shape, device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(empty(out_channels, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            if fan_in != 0:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def _padded(self, input):
        """Non-zero padding modes pad explicitly, then convolve with no padding."""
        if self.padding_mode == "zeros" or self.padding == "valid":
            return input, self.padding
        pads = []
        if self.padding == "same":   # the odd leftover on the right, as PyTorch's _ConvNd
            for d, k in zip(reversed(self.dilation), reversed(self.kernel_size)):
                total = d * (k - 1)
                pads += [total // 2, total - total // 2]
        else:
            for p in reversed(self.padding):
                pads += [p, p]
        return F.pad(input, pads, mode=self.padding_mode), (0,) * self._n

    def extra_repr(self):
        s = (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
             f"stride={self.stride}")
        if self.padding != (0,) * self._n:
            s += f", padding={self.padding}"   # a string unquoted, as PyTorch's format()
        if self.dilation != (1,) * self._n:
            s += f", dilation={self.dilation}"
        if self._transposed and self.output_padding != (0,) * self._n:
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s


class Conv1d(_ConvNd):
    _n = 1

    def forward(self, input):
        x, padding = self._padded(input)
        return F.conv1d(x, self.weight, self.bias, self.stride, padding, self.dilation,
                        self.groups)


class Conv2d(_ConvNd):
    _n = 2

    def forward(self, input):
        x, padding = self._padded(input)
        return F.conv2d(x, self.weight, self.bias, self.stride, padding, self.dilation,
                        self.groups)


class ConvTranspose1d(_ConvNd):
    _n = 1
    _transposed = True

    def forward(self, input, output_size=None):
        return F.conv_transpose1d(input, self.weight, self.bias, self.stride, self.padding,
                                  self.output_padding, self.groups, self.dilation)


class ConvTranspose2d(_ConvNd):
    _n = 2
    _transposed = True

    def forward(self, input, output_size=None):
        return F.conv_transpose2d(input, self.weight, self.bias, self.stride, self.padding,
                                  self.output_padding, self.groups, self.dilation)


class Conv3d(_ConvNd):
    _n = 3

    def forward(self, input):
        x, padding = self._padded(input)
        return F.conv3d(x, self.weight, self.bias, self.stride, padding, self.dilation,
                        self.groups)


class ConvTranspose3d(_ConvNd):
    _n = 3
    _transposed = True

    def forward(self, input, output_size=None):
        return F.conv_transpose3d(input, self.weight, self.bias, self.stride, self.padding,
                                  self.output_padding, self.groups, self.dilation)
