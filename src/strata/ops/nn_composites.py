"""Composite spatial ops: the ``conv1d``/``conv2d``/``conv3d`` family (padding strings and
transposed forms included), ``pad`` and its circular mode, ``pixel_shuffle``/``pixel_unshuffle``
and ``channel_shuffle``, each a decomposition over the primitives of ``nn.py`` (``convolution``,
``constant_pad_nd``, the mode pads) and shape ops, as in PyTorch's ``Convolution.cpp`` and
``PadNd.cpp``.

Separate from ``nn.py``, which defines those primitives with their meta functions (the ones
the CPU and OpenCL kernels implement).
"""

from . import shape as S
from .factory import clone
from .nn import MODE_PADS, constant_pad_nd, convolution, fmt, int_list
from .op import defop, register_decomposition

# --- composites -----------------------------------------------------------------------------------
conv1d = defop("conv1d(Tensor input, Tensor weight, Tensor? bias=None, SymInt[1] stride=[1], "
               "SymInt[1] padding=[0], SymInt[1] dilation=[1], SymInt groups=1) -> Tensor")
conv1d_padding = defop("conv1d.padding(Tensor input, Tensor weight, Tensor? bias=None, "
                       "SymInt[1] stride=[1], str padding='valid', SymInt[1] dilation=[1], "
                       "SymInt groups=1) -> Tensor")
conv2d = defop("conv2d(Tensor input, Tensor weight, Tensor? bias=None, SymInt[2] stride=[1, 1], "
               "SymInt[2] padding=[0, 0], SymInt[2] dilation=[1, 1], SymInt groups=1) -> Tensor")
conv2d_padding = defop("conv2d.padding(Tensor input, Tensor weight, Tensor? bias=None, "
                       "SymInt[2] stride=[1, 1], str padding='valid', SymInt[2] dilation=[1, 1], "
                       "SymInt groups=1) -> Tensor")
conv_transpose1d = defop("conv_transpose1d(Tensor input, Tensor weight, Tensor? bias=None, "
                         "SymInt[1] stride=[1], SymInt[1] padding=[0], "
                         "SymInt[1] output_padding=[0], SymInt groups=1, SymInt[1] dilation=[1]) "
                         "-> Tensor")
conv_transpose2d = defop("conv_transpose2d.input(Tensor input, Tensor weight, Tensor? bias=None, "
                         "SymInt[2] stride=[1, 1], SymInt[2] padding=[0, 0], "
                         "SymInt[2] output_padding=[0, 0], SymInt groups=1, "
                         "SymInt[2] dilation=[1, 1]) -> Tensor")
conv3d = defop("conv3d(Tensor input, Tensor weight, Tensor? bias=None, SymInt[3] stride=[1, 1, 1], "
               "SymInt[3] padding=[0, 0, 0], SymInt[3] dilation=[1, 1, 1], SymInt groups=1) -> "
               "Tensor")
conv3d_padding = defop("conv3d.padding(Tensor input, Tensor weight, Tensor? bias=None, "
                       "SymInt[3] stride=[1, 1, 1], str padding='valid', "
                       "SymInt[3] dilation=[1, 1, 1], SymInt groups=1) -> Tensor")
conv_transpose3d = defop("conv_transpose3d.input(Tensor input, Tensor weight, Tensor? bias=None, "
                         "SymInt[3] stride=[1, 1, 1], SymInt[3] padding=[0, 0, 0], "
                         "SymInt[3] output_padding=[0, 0, 0], SymInt groups=1, "
                         "SymInt[3] dilation=[1, 1, 1]) -> Tensor")
pad = defop("pad(Tensor self, SymInt[] pad, str mode='constant', float? value=None) -> Tensor")
pad_circular = defop("_pad_circular(Tensor self, SymInt[] pad) -> Tensor")
pixel_shuffle = defop("pixel_shuffle(Tensor self, int upscale_factor) -> Tensor", function=True)
pixel_unshuffle = defop("pixel_unshuffle(Tensor self, int downscale_factor) -> Tensor",
                        function=True)
channel_shuffle = defop("channel_shuffle(Tensor self, SymInt groups) -> Tensor", function=True)


def _batched_conv(name, dims, input, weight, bias, stride, padding, dilation, groups,
                  transposed=False, output_padding=0):
    """conv{1,2,3}d accept unbatched input: add the batch dim around the convolution."""
    if input.ndim not in (dims + 1, dims + 2):
        raise RuntimeError(f"Expected {dims + 1}D (unbatched) or {dims + 2}D (batched) input to "
                           f"{name}, but got input of size: {fmt(input.shape)}")
    batched = input.ndim == dims + 2
    x = input if batched else S.unsqueeze(input, 0)
    stride, padding, dilation, output_padding = (int_list(v, dims) for v in (
        stride, padding, dilation, output_padding))
    out = convolution(x, weight, bias, stride, padding, dilation, transposed, output_padding,
                      groups)
    return out if batched else S.squeeze(out, 0)


def _same_padding(name, dims, input, weight, bias, stride, padding, dilation, groups):
    """``padding='same'|'valid'``: PyTorch's ``_convolution_mode``, padding asymmetric cases."""
    if padding == "valid":
        return _batched_conv(name, dims, input, weight, bias, stride, 0, dilation, groups)
    if padding != "same":
        raise RuntimeError(f"Invalid padding string: '{padding}'")
    stride = int_list(stride, dims)
    dilation = int_list(dilation, dims)
    if any(s != 1 for s in stride):
        raise RuntimeError("padding='same' is not supported for strided convolutions")
    kernel = tuple(weight.shape[2:])
    left = [d * (k - 1) // 2 for d, k in zip(dilation, kernel)]
    right = [d * (k - 1) - lo for d, k, lo in zip(dilation, kernel, left)]
    if left != right:   # the odd leftover goes on the right, as an explicit pad
        extra = []
        for lo, hi in reversed(list(zip(left, right))):
            extra += [0, hi - lo]
        input = constant_pad_nd(input, extra, 0)
    return _batched_conv(name, dims, input, weight, bias, stride, left, dilation, groups)


@register_decomposition(conv1d)
def _conv1d(input, weight, bias=None, stride=(1,), padding=(0,), dilation=(1,), groups=1):
    return _batched_conv("conv1d", 1, input, weight, bias, stride, padding, dilation, groups)


@register_decomposition(conv2d)
def _conv2d(input, weight, bias=None, stride=(1, 1), padding=(0, 0), dilation=(1, 1),
            groups=1):
    return _batched_conv("conv2d", 2, input, weight, bias, stride, padding, dilation, groups)


@register_decomposition(conv1d_padding)
def _conv1d_padding(input, weight, bias=None, stride=(1,), padding="valid", dilation=(1,),
                    groups=1):
    return _same_padding("conv1d", 1, input, weight, bias, stride, padding, dilation, groups)


@register_decomposition(conv2d_padding)
def _conv2d_padding(input, weight, bias=None, stride=(1, 1), padding="valid", dilation=(1, 1),
                    groups=1):
    return _same_padding("conv2d", 2, input, weight, bias, stride, padding, dilation, groups)


@register_decomposition(conv_transpose1d)
def _conv_transpose1d(input, weight, bias=None, stride=(1,), padding=(0,), output_padding=(0,),
                      groups=1, dilation=(1,)):
    return _batched_conv("conv_transpose1d", 1, input, weight, bias, stride, padding, dilation,
                         groups, True, output_padding)


@register_decomposition(conv_transpose2d)
def _conv_transpose2d(input, weight, bias=None, stride=(1, 1), padding=(0, 0),
                      output_padding=(0, 0), groups=1, dilation=(1, 1)):
    return _batched_conv("conv_transpose2d", 2, input, weight, bias, stride, padding, dilation,
                         groups, True, output_padding)


@register_decomposition(conv3d)
def _conv3d(input, weight, bias=None, stride=(1, 1, 1), padding=(0, 0, 0), dilation=(1, 1, 1),
            groups=1):
    return _batched_conv("conv3d", 3, input, weight, bias, stride, padding, dilation, groups)


@register_decomposition(conv3d_padding)
def _conv3d_padding(input, weight, bias=None, stride=(1, 1, 1), padding="valid",
                    dilation=(1, 1, 1), groups=1):
    return _same_padding("conv3d", 3, input, weight, bias, stride, padding, dilation, groups)


@register_decomposition(conv_transpose3d)
def _conv_transpose3d(input, weight, bias=None, stride=(1, 1, 1), padding=(0, 0, 0),
                      output_padding=(0, 0, 0), groups=1, dilation=(1, 1, 1)):
    return _batched_conv("conv_transpose3d", 3, input, weight, bias, stride, padding, dilation,
                         groups, True, output_padding)


@register_decomposition(pad)
def _pad(self, pad, mode="constant", value=None):
    """PyTorch's ``_pad_enum``: constant pads any dims; the other modes the last 1-3 dims of a
    batched or unbatched input."""
    pad = tuple(pad)
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) > 2 * self.ndim:
        raise RuntimeError(f"Padding length should be less than or equal to two times the input "
                           f"dimension but got padding length {len(pad)} and input of dimension "
                           f"{self.ndim}")
    if mode == "constant":
        return constant_pad_nd(self, pad, 0 if value is None else value)
    if mode not in ("reflect", "replicate", "circular"):
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if value is not None and value != 0:
        raise RuntimeError(f"Padding mode \"{mode}\" doesn't take in value argument")
    dims = len(pad) // 2
    if dims not in (1, 2, 3) or self.ndim not in (dims + 1, dims + 2):
        raise NotImplementedError(f"Padding size {len(pad)} is not supported for {self.ndim}D "
                                  f"input tensor.")
    if mode == "circular":
        return pad_circular(self, pad)
    return MODE_PADS["reflection" if mode == "reflect" else "replication", dims](self, pad)


def _contiguous_copy(x):
    return clone(x, memory_format="contiguous_format")


@register_decomposition(pad_circular)
def _pad_circular_impl(self, pad):
    """Wrap around: each padded dim is [tail, x, head], cropped first for negative pads."""
    out = self
    for i in range(len(pad) // 2):
        d = self.ndim - 1 - i
        left, right = pad[2 * i], pad[2 * i + 1]
        size = self.shape[d]
        if left > size or right > size:
            raise RuntimeError("Padding value causes wrapping around more than once.")
        if left < 0:
            out = S.narrow(out, d, -left, out.shape[d] + left)
        if right < 0:
            out = S.narrow(out, d, 0, out.shape[d] + right)
        parts = []
        if left > 0:
            parts.append(S.narrow(out, d, out.shape[d] - left, left))
        parts.append(out)
        if right > 0:
            parts.append(S.narrow(out, d, 0, right))
        if len(parts) > 1:
            out = S.cat(parts, d)
    return out if out is not self else _contiguous_copy(self)


def _check_shuffle(self, name, factor, kind):
    if self.ndim < 3:
        raise RuntimeError(f"{name} expects input to have at least 3 dimensions, but got input "
                           f"with {self.ndim} dimension(s)")
    if factor <= 0:
        raise RuntimeError(f"{name} expects a positive {kind}_factor, but got {factor}")


@register_decomposition(pixel_shuffle)
def _pixel_shuffle(self, upscale_factor):
    _check_shuffle(self, "pixel_shuffle", upscale_factor, "upscale")
    r = upscale_factor
    *batch, c, h, w = self.shape
    if c % (r * r):
        raise RuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be "
                           f"divisible by the square of upscale_factor, but input.size(-3)={c} "
                           f"is not divisible by {r * r}")
    batch = tuple(batch)
    n = len(batch)
    x = S.reshape(self, batch + (c // (r * r), r, r, h, w))
    x = S.permute(x, tuple(range(n)) + (n, n + 3, n + 1, n + 4, n + 2))
    return S.reshape(_contiguous_copy(x), batch + (c // (r * r), h * r, w * r))


@register_decomposition(pixel_unshuffle)
def _pixel_unshuffle(self, downscale_factor):
    _check_shuffle(self, "pixel_unshuffle", downscale_factor, "downscale")
    r = downscale_factor
    *batch, c, h, w = self.shape
    if h % r:
        raise RuntimeError(f"pixel_unshuffle expects height to be divisible by downscale_factor, "
                           f"but input.size(-2)={h} is not divisible by {r}")
    if w % r:
        raise RuntimeError(f"pixel_unshuffle expects width to be divisible by downscale_factor, "
                           f"but input.size(-1)={w} is not divisible by {r}")
    batch = tuple(batch)
    n = len(batch)
    x = S.reshape(self, batch + (c, h // r, r, w // r, r))
    x = S.permute(x, tuple(range(n)) + (n, n + 2, n + 4, n + 1, n + 3))
    return S.reshape(_contiguous_copy(x), batch + (c * r * r, h // r, w // r))


@register_decomposition(channel_shuffle)
def _channel_shuffle(self, groups):
    """(N, g, C/g, *) -> (N, C/g, g, *): channel i of group j moves to position i * g + j."""
    if self.ndim <= 2:
        raise RuntimeError(f"channel_shuffle expects input with > 2 dims, but got input with "
                           f"sizes {fmt(self.shape)}")
    if groups <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value of "
                           f"groups:{groups}")
    n, c, *rest = self.shape
    if c % groups:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {c} channels and "
                           f"{groups} groups.")
    x = S.reshape(self, (n, groups, c // groups, *rest))
    x = S.permute(x, (0, 2, 1) + tuple(range(3, x.ndim)))
    return S.reshape(_contiguous_copy(x), tuple(self.shape))
