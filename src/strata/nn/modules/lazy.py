"""Lazy modules (``torch/nn/modules/lazy.py``): ``LazyLinear(10)`` learns ``in_features`` from
its first input. Until then its parameters are ``UninitializedParameter``s; the first forward
materializes them, initializes them as the eager layer would, and turns the module into that
layer (``cls_to_become``), so later calls cost nothing extra.
"""

import itertools

from ... import creation
from ...autograd.grad_mode import no_grad
from ...core import dtype as D
from ..parameter import UninitializedBuffer, UninitializedParameter
from .batchnorm import BatchNorm1d, BatchNorm2d, BatchNorm3d
from .conv import Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from .instancenorm import InstanceNorm1d, InstanceNorm2d, InstanceNorm3d
from .linear import Linear

_UNINITIALIZED = (UninitializedParameter, UninitializedBuffer)


class LazyModuleMixin:
    cls_to_become = None

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._initialize_hook = self.register_forward_pre_hook(self._infer_parameters)
        self._load_hook = self._register_load_state_dict_pre_hook(self._lazy_load_hook)

    def has_uninitialized_params(self):
        return any(isinstance(t, _UNINITIALIZED)
                   for t in itertools.chain(self._parameters.values(), self._buffers.values()))

    def initialize_parameters(self, *args, **kwargs):   # by design: each Lazy module overrides
        raise NotImplementedError(f"initialize_parameters is not implemented for "
                                  f"{type(self).__name__}")

    def _lazy_load_hook(self, state_dict, prefix, *args):
        """A checkpoint of the initialized module gives the uninitialized tensors their
        shapes, so that loading it is the same as a first forward (as PyTorch's)."""
        for name, t in itertools.chain(self._parameters.items(), self._buffers.items()):
            loaded = state_dict.get(prefix + name)
            if isinstance(t, _UNINITIALIZED) and loaded is not None and \
                    not isinstance(loaded, _UNINITIALIZED):
                with no_grad():
                    t.materialize(tuple(loaded.shape))

    def _infer_parameters(self, module, args):
        module.initialize_parameters(*args)
        if module.has_uninitialized_params():
            raise RuntimeError(f"module {type(module).__name__} has not been fully initialized")
        module._initialize_hook.remove()
        module._load_hook.remove()
        del module._initialize_hook, module._load_hook
        if module.cls_to_become is not None:
            module.__class__ = module.cls_to_become


class LazyLinear(LazyModuleMixin, Linear):
    cls_to_become = Linear

    def __init__(self, out_features, bias=True, device=None, dtype=None):
        super().__init__(0, 0, False)
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_features = out_features
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.in_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input):
        if self.has_uninitialized_params():
            with no_grad():
                self.in_features = input.shape[-1]
                self.weight.materialize((self.out_features, self.in_features))
                if self.bias is not None:
                    self.bias.materialize((self.out_features,))
                self.reset_parameters()
        if self.in_features == 0:   # loaded from a checkpoint: the weight knows its width
            if input.shape[-1] != self.weight.shape[-1]:
                raise AssertionError(f"The in_features inferred from input: {input.shape[-1]} "
                                     f"is not equal to in_features from self.weight: "
                                     f"{self.weight.shape[-1]}")
            self.in_features = input.shape[-1]


class _LazyConvMixin(LazyModuleMixin):
    def __init__(self, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                 bias=True, padding_mode="zeros", device=None, dtype=None, output_padding=0):
        super().__init__(0, 0, kernel_size, stride, padding, dilation, groups, False,
                         padding_mode, output_padding=output_padding)
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_channels = out_channels
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()

    def initialize_parameters(self, input, *args):
        if not self.has_uninitialized_params():
            return
        spatial = self._n
        if input.ndim not in (spatial + 1, spatial + 2):
            raise RuntimeError(f"Expected {spatial + 1}D (unbatched) or {spatial + 2}D (batched) "
                               f"input to {type(self).__name__}, but got input of size: "
                               f"{input.shape}")
        self.in_channels = input.shape[1] if input.ndim == spatial + 2 else input.shape[0]
        if self.in_channels % self.groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        with no_grad():
            shape = ((self.in_channels, self.out_channels // self.groups) if self._transposed
                     else (self.out_channels, self.in_channels // self.groups))
            self.weight.materialize(shape + tuple(self.kernel_size))
            if self.bias is not None:
                self.bias.materialize((self.out_channels,))
            self.reset_parameters()


def _lazy_conv(eager):
    name = f"Lazy{eager.__name__}"
    return type(name, (_LazyConvMixin, eager), {"cls_to_become": eager, "__module__": __name__,
                                                "__doc__": f"``{eager.__name__}`` with "
                                                           f"in_channels from the first input."})


LazyConv1d, LazyConv2d, LazyConv3d = (_lazy_conv(c) for c in (Conv1d, Conv2d, Conv3d))
LazyConvTranspose1d, LazyConvTranspose2d, LazyConvTranspose3d = (
    _lazy_conv(c) for c in (ConvTranspose1d, ConvTranspose2d, ConvTranspose3d))


class _LazyNormMixin(LazyModuleMixin):
    def __init__(self, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True,
                 device=None, dtype=None):
        super().__init__(0, eps, momentum, False, False)
        self.affine, self.track_running_stats = affine, track_running_stats
        if affine:
            self.weight = UninitializedParameter(device=device, dtype=dtype)
            self.bias = UninitializedParameter(device=device, dtype=dtype)
        if track_running_stats:
            self.running_mean = UninitializedBuffer(device=device, dtype=dtype)
            self.running_var = UninitializedBuffer(device=device, dtype=dtype)
            self.num_batches_tracked = creation.tensor(0, dtype=D.int64, device=device)

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.num_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input):
        if not self.has_uninitialized_params():
            return
        self.num_features = input.shape[1]
        with no_grad():
            for t in (self.weight, self.bias, self.running_mean, self.running_var):
                if isinstance(t, _UNINITIALIZED):
                    t.materialize((self.num_features,))
            self.reset_parameters()


def _lazy_norm(eager):
    return type(f"Lazy{eager.__name__}", (_LazyNormMixin, eager),
                {"cls_to_become": eager, "__module__": __name__,
                 "__doc__": f"``{eager.__name__}`` with num_features from the first input."})


LazyBatchNorm1d, LazyBatchNorm2d, LazyBatchNorm3d = (
    _lazy_norm(b) for b in (BatchNorm1d, BatchNorm2d, BatchNorm3d))
# affine, with running statistics, by default (unlike the eager InstanceNorms), as PyTorch's
LazyInstanceNorm1d, LazyInstanceNorm2d, LazyInstanceNorm3d = (
    _lazy_norm(n) for n in (InstanceNorm1d, InstanceNorm2d, InstanceNorm3d))
