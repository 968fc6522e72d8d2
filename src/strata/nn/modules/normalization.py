"""LayerNorm, GroupNorm, RMSNorm, LocalResponseNorm (``torch/nn/modules/normalization.py``)."""

from ... import creation
from ...autograd import Function
from ...ops import shape as S
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module


class LayerNorm(Module):
    """Normalises over the trailing ``normalized_shape`` dims (biased variance)."""

    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True,
                 device=None, dtype=None):
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(creation.ones(self.normalized_shape, device=device,
                                                  dtype=dtype))
            if bias:
                self.bias = Parameter(creation.zeros(self.normalized_shape, device=device,
                                                     dtype=dtype))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)

    def reset_parameters(self):
        if self.elementwise_affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def forward(self, input):
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return f"{self.normalized_shape}, eps={self.eps}, " \
               f"elementwise_affine={self.elementwise_affine}, bias={self.bias is not None}"


class RMSNorm(Module):
    def __init__(self, normalized_shape, eps=None, elementwise_affine=True, device=None,
                 dtype=None):
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(creation.ones(self.normalized_shape, device=device,
                                                  dtype=dtype))
        else:
            self.register_parameter("weight", None)

    def forward(self, x):
        return F.rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self):
        return f"{self.normalized_shape}, eps={self.eps}, " \
               f"elementwise_affine={self.elementwise_affine}"


class GroupNorm(Module):
    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True, device=None,
                 dtype=None, *, bias=True):
        super().__init__()
        if num_channels % num_groups != 0:
            raise ValueError("num_channels must be divisible by num_groups")
        self.num_groups, self.num_channels, self.eps, self.affine = \
            num_groups, num_channels, eps, affine
        if affine:
            self.weight = Parameter(creation.ones(num_channels, device=device, dtype=dtype))
        else:
            self.register_parameter("weight", None)
        if affine and bias:
            self.bias = Parameter(creation.zeros(num_channels, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)

    def forward(self, input):
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return f"{self.num_groups}, {self.num_channels}, eps={self.eps}, " \
               f"affine={self.affine}, bias={self.bias is not None}"


class _CrossChannelNorm(Module):
    """The settings of a normalisation over ``size`` neighbouring channels."""

    def __init__(self, size, alpha=1e-4, beta=0.75, k=1.0):
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def extra_repr(self):
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


class LocalResponseNorm(_CrossChannelNorm):
    """Normalises each channel by the mean square over ``size`` neighbouring channels."""

    def forward(self, input):
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)



class CrossMapLRN2d(_CrossChannelNorm):
    """The legacy (Lua Torch) cross-channel normalisation of 4-D inputs: PyTorch keeps its own
    running-sum forward and hand-written backward (``torch/nn/modules/_functions.py``), whose
    window differs from ``LocalResponseNorm``'s at the channel edges; they are ported here."""

    def __init__(self, size, alpha=1e-4, beta=0.75, k=1):
        super().__init__(size, alpha, beta, k)

    def forward(self, input):
        return _CrossMapLRN2d.apply(input, self.size, self.alpha, self.beta, self.k)


class _CrossMapLRN2d(Function):
    @staticmethod
    def forward(ctx, input, size, alpha=1e-4, beta=0.75, k=1):
        if input.dim() != 4:
            raise ValueError(f"CrossMapLRN2d: Expected input to be 4D, got {input.dim()}D "
                             f"instead.")
        ctx.size, ctx.alpha, ctx.beta, ctx.k = size, alpha, beta, k
        channels = input.size(1)
        square = input.pow(2)
        pre_pad = int((size - 1) / 2 + 1)
        # the first map's sum, then each next one adds the map entering the window and drops
        # the one leaving it (PyTorch's loop, edges included)
        sums = [square[:, :min(pre_pad, channels)].sum(1)]
        for c in range(1, channels):
            current = sums[-1]
            if c < channels - pre_pad + 1:
                current = current + square[:, c + pre_pad - 1]
            if c > pre_pad:
                current = current - square[:, c - pre_pad]
            sums.append(current)
        scale = S.stack(sums, 1).mul(alpha / size).add(k)
        output = scale.pow(-beta).mul(input)
        ctx.save_for_backward(input, output, scale)
        return output

    @staticmethod
    def backward(ctx, grad_output):
        input, output, scale = ctx.saved_tensors
        size, channels = ctx.size, input.size(1)
        ratio = 2 * ctx.alpha * ctx.beta / size
        inverse_pre_pad = int(size - (size - 1) / 2)
        grad_input = scale.pow(-ctx.beta).mul(grad_output)
        # per map, PyTorch's window of (grad * output / scale) over the padded channels
        centre = grad_output.mul(output).div(scale)
        padded = creation.zeros((input.size(0), channels + size - 1, *input.shape[2:]),
                                dtype=input.dtype)
        padded[:, inverse_pre_pad:inverse_pre_pad + channels] = centre
        accum = padded[:, :size - 1].sum(1)
        terms = []
        for c in range(channels):
            accum = accum + padded[:, c + size - 1]
            terms.append(accum)
            accum = accum - padded[:, c]
        return grad_input - ratio * input * S.stack(terms, 1), None, None, None, None
