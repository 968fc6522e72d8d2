"""Convolution and spatial layers: convolution, im2col/col2im, padding, upsampling, pixel
and channel shuffle (dense layers: ``dense.py``; pooling: ``pooling.py``; normalization:
``normalization.py``).

``convolution`` is the one primitive for every conv (1-d/2-d/3-d, transposed, grouped): the
``conv*d`` ops are its composites, as in PyTorch's ``Convolution.cpp`` (they, ``pad`` and the
shuffles are in ``nn_composites.py``). Meta functions carry
PyTorch's shape checks and messages (``aten/src/ATen/native/ConvUtils.h``, ``Im2Col.cpp``,
``PadNd.cpp``, ``UpSample.h``) so the meta device reports the same errors as the CPU.
"""

import numpy as np

from ..core import dtype as D
from ..core.shape import wrap_dim
from . import meta_rules as R
from .linalg import CTYPE
from .op import TensorSpec, defop


def fmt(shape):
    """A shape as PyTorch's C++ prints it: ``[2, 3]``."""
    return "[" + ", ".join(str(s) for s in shape) + "]"


def int_list(value, n, name=None, op=None):
    """An ``int[n]`` argument: an int or a 1-list repeats; otherwise its length must be ``n``."""
    if isinstance(value, int):
        return (value,) * n
    value = tuple(value)
    if len(value) == 1:
        return value * n
    if len(value) != n and name is not None:
        raise RuntimeError(f"{op}: {name} must either be a single int, or a tuple of {n} ints")
    return value


def not_implemented(name, dt):
    raise NotImplementedError(f"\"{name}\" not implemented for '{R.type_name(dt)}'")


# --- convolution (primitive) ----------------------------------------------------------------------

def _conv_param(value, dim, name):
    value = (value,) if isinstance(value, int) else tuple(value)
    if len(value) == 1:
        return value * dim
    if len(value) != dim:
        raise RuntimeError(f"expected {name} to be a single integer value or a list of {dim} "
                           f"values to match the convolution dimensions, but got "
                           f"{name}={fmt(value)}")
    return value


def conv_params(weight, stride, padding, dilation, output_padding):
    dim = weight.ndim - 2
    if dim <= 0:
        raise RuntimeError("weight should have at least three dimensions")
    return (_conv_param(stride, dim, "stride"), _conv_param(padding, dim, "padding"),
            _conv_param(dilation, dim, "dilation"),
            _conv_param(output_padding, dim, "output_padding"))


def _convolution_meta(input, weight, bias, stride, padding, dilation, transposed, output_padding,
                      groups):
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    stride, padding, dilation, output_padding = conv_params(weight, stride, padding, dilation,
                                                            output_padding)
    if any(p < 0 for p in padding):
        raise RuntimeError("negative padding is not supported")
    if any(p < 0 for p in output_padding):
        raise RuntimeError("negative output_padding is not supported")
    if any(s <= 0 for s in stride):
        raise RuntimeError("non-positive stride is not supported")
    if any(d <= 0 for d in dilation):
        raise RuntimeError(f"dilation should be greater than zero, but got {fmt(dilation)}")
    w = tuple(weight.shape)
    if input.ndim != weight.ndim:
        raise RuntimeError(f"Expected {weight.ndim}-dimensional input for {weight.ndim}-"
                           f"dimensional weight {fmt(w)}, but got {input.ndim}-dimensional input "
                           f"of size {fmt(input.shape)} instead")
    if w[0] < groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be at least {groups} at "
                           f"dimension 0, but got weight of size {fmt(w)} instead")
    if w[0] % groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} "
                           f"at dimension 0, but got weight of size [{fmt(w)}] instead")
    spatial = tuple(input.shape[2:])
    kernel = w[2:]
    if not transposed:
        if input.shape[1] != w[1] * groups:
            raise RuntimeError(f"Given groups={groups}, weight of size {fmt(w)}, expected "
                               f"input{fmt(input.shape)} to have {w[1] * groups} channels, but "
                               f"got {input.shape[1]} channels instead")
        if bias is not None and (bias.ndim != 1 or bias.shape[0] != w[0]):
            raise RuntimeError(f"Given weight of size {fmt(w)}, expected bias to be "
                               f"1-dimensional with {w[0]} elements, but got bias of size "
                               f"{fmt(bias.shape)} instead")
        padded = [n + 2 * p for n, p in zip(spatial, padding)]
        effective = [d * (k - 1) + 1 for k, d in zip(kernel, dilation)]
        if any(n < k for n, k in zip(padded, effective)):
            raise RuntimeError(f"Calculated padded input size per channel: "
                               f"({' x '.join(map(str, padded))}). Kernel size: "
                               f"({' x '.join(map(str, effective))}). Kernel size can't be greater "
                               f"than actual input size")
        out = tuple((n - k) // s + 1 for n, k, s in zip(padded, effective, stride))
        channels = w[0]
    else:
        if input.shape[1] != w[0]:
            raise RuntimeError(f"Given transposed=1, weight of size {fmt(w)}, expected "
                               f"input{fmt(input.shape)} to have {w[0]} channels, but got "
                               f"{input.shape[1]} channels instead")
        if bias is not None and (bias.ndim != 1 or bias.shape[0] != w[1] * groups):
            raise RuntimeError(f"Given transposed=1, weight of size {fmt(w)}, expected bias to "
                               f"be 1-dimensional with {w[1] * groups} elements, but got bias "
                               f"of size {fmt(bias.shape)} instead")
        lift = (lambda v: (1,) + tuple(v)) if len(spatial) == 1 else tuple  # 1-d runs as 2-d
        for op, s, d in zip(output_padding, stride, dilation):
            if op >= s and op >= d:
                raise RuntimeError(_output_padding_message(
                    (0,) + tuple(output_padding) if len(spatial) == 1 else output_padding,
                    lift(stride), lift(dilation)))
        out = tuple((n - 1) * s - 2 * p + d * (k - 1) + op + 1 for n, s, p, d, k, op in
                    zip(spatial, stride, padding, dilation, kernel, output_padding))
        if min(out) < 1:
            raise RuntimeError(f"Given input size per channel: "
                               f"({' x '.join(map(str, lift(spatial)))}). Calculated output size "
                               f"per channel: ({' x '.join(map(str, lift(out)))}). Output size is "
                               f"too small")
        channels = w[1] * groups
    if input.dtype is not weight.dtype:
        raise RuntimeError(f"expected scalar type {R.type_name(input.dtype)} but found "
                           f"{R.type_name(weight.dtype)}")
    if bias is not None and bias.dtype is not input.dtype:
        raise RuntimeError(f"Input type ({CTYPE[input.dtype]}) and bias type "
                           f"({CTYPE[bias.dtype]}) should be the same")
    if transposed and input.dtype not in (D.float32, D.float64, D.float16, D.bfloat16, D.int64):
        not_implemented("slow_conv_transpose2d_out_cpu", input.dtype)
    if input.dtype is D.bool_:
        not_implemented("slow_conv2d_cpu", input.dtype)
    return TensorSpec((input.shape[0], channels) + out, input.dtype)


def _output_padding_message(output_padding, stride, dilation):
    names = ("height", "width") if len(stride) == 2 else ("depth", "height", "width")[-len(stride):]
    parts = [f"output_padding_{n}: {v}" for n, v in zip(names, output_padding)]
    parts += [f"stride_{n}: {v}" for n, v in zip(names, stride)]
    parts += [f"dilation_{n}: {v}" for n, v in zip(names, dilation)]
    return ("output padding must be smaller than either stride or dilation, but got "
            + " ".join(parts))


convolution = defop("convolution(Tensor input, Tensor weight, Tensor? bias, SymInt[] stride, "
                    "SymInt[] padding, SymInt[] dilation, bool transposed, "
                    "SymInt[] output_padding, SymInt groups) -> Tensor", _convolution_meta,
                    function=True)


# --- im2col / col2im (primitives: F.unfold / F.fold) ----------------------------------------------

def _pair_args(name, **args):
    out = []
    for arg, value in args.items():
        value = (value,) if isinstance(value, int) else tuple(value)
        if len(value) != 2:
            raise RuntimeError(f"It is expected {arg} equals to 2, but got size {len(value)}")
        out.append(value)
    return out


def _check_window_args(kernel, dilation, padding, stride):
    if min(kernel) <= 0:
        raise RuntimeError(f"kernel size should be greater than zero, but got kernel_height: "
                           f"{kernel[0]} kernel_width: {kernel[1]}")
    if min(dilation) <= 0:
        raise RuntimeError(f"dilation should be greater than zero, but got dilation_height: "
                           f"{dilation[0]} dilation_width: {dilation[1]}")
    if min(padding) < 0:
        raise RuntimeError(f"padding should be non-negative, but got pad_height: {padding[0]} "
                           f"pad_width: {padding[1]}")
    if min(stride) <= 0:
        raise RuntimeError(f"stride should be greater than zero, but got stride_height: "
                           f"{stride[0]} stride_width: {stride[1]}")


def _blocks(size, k, d, p, s):
    return (size + 2 * p - (d * (k - 1) + 1)) // s + 1


def _im2col_meta(self, kernel_size, dilation, padding, stride):
    kernel, dilation, padding, stride = _pair_args("im2col", kernel_size=kernel_size,
                                                   dilation=dilation, padding=padding,
                                                   stride=stride)
    _check_window_args(kernel, dilation, padding, stride)
    shape = tuple(self.shape)
    nd = len(shape)
    if not ((nd == 3 and shape[0] and shape[1] and shape[2]) or
            (nd == 4 and shape[1] and shape[2] and shape[3])):
        if nd < 3:
            wrap_dim(2, nd)   # PyTorch reads size(2) first: IndexError for 1-D/2-D inputs
        raise RuntimeError(f"Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and "
                           f"other non-zero dimensions for input, but got: {fmt(shape)}")
    if self.dtype.category == D.INTEGRAL:
        not_implemented("im2col_out_cpu", self.dtype)
    h, w = shape[-2:]
    out = [_blocks(n, k, d, p, s) for n, k, d, p, s in zip((h, w), kernel, dilation, padding,
                                                            stride)]
    if min(out) < 1:
        raise RuntimeError(f"Given input with spatial size ({h}, {h}), kernel_size=({kernel[0]}, "
                           f"{kernel[1]}), dilation=({dilation[0]}, {dilation[1]}), padding=("
                           f"{padding[0]}, {padding[1]}), calculated shape of the array of sliding "
                           f"blocks as ({out[0]}, {out[1]}), but its components must be at "
                           f"least one.")
    return TensorSpec(shape[:-3] + (shape[-3] * kernel[0] * kernel[1], out[0] * out[1]),
                      self.dtype)


def _col2im_meta(self, output_size, kernel_size, dilation, padding, stride):
    output_size, kernel, dilation, padding, stride = _pair_args(
        "col2im", output_size=output_size, kernel_size=kernel_size, dilation=dilation,
        padding=padding, stride=stride)
    _check_window_args(kernel, dilation, padding, stride)
    shape = tuple(self.shape)
    nd = len(shape)
    if not ((nd == 2 and shape[0] and shape[1]) or (nd == 3 and shape[1] and shape[2])):
        raise RuntimeError(f"Expected 2D or 3D (batch mode) tensor for input with possibly 0 "
                           f"batch size and non-zero dimensions for input, but got: {fmt(shape)}")
    if self.dtype.category == D.INTEGRAL:
        not_implemented("col2im_out_cpu", self.dtype)
    planes, length = shape[-2:]
    kk = kernel[0] * kernel[1]
    if planes % kk:
        raise RuntimeError(f"Expected size of input's dimension 1 to be divisible by the product "
                           f"of kernel_size, but got input.size(1)={planes} and kernel_size=("
                           f"{kernel[0]}, {kernel[1]}).")
    blocks = [_blocks(n, k, d, p, s) for n, k, d, p, s in zip(output_size, kernel, dilation,
                                                               padding, stride)]
    described = (f"Given output_size=({output_size[0]}, {output_size[1]}), kernel_size=("
                 f"{kernel[0]}, {kernel[1]}), dilation=({dilation[0]}, {dilation[1]}), padding=("
                 f"{padding[0]}, {padding[1]}), stride=({stride[0]}, {stride[1]}), ")
    if length != blocks[0] * blocks[1]:
        raise RuntimeError(described + f"expected size of input's dimension 2 to match the "
                           f"calculated number of sliding blocks {blocks[0]} * {blocks[1]} = "
                           f"{blocks[0] * blocks[1]}, but got input.size(2)={length}.")
    if min(blocks) < 1:
        raise RuntimeError(described + f"calculated shape of the array of sliding blocks as "
                           f"({blocks[0]}, {blocks[1]}), which is invalid.")
    return TensorSpec(shape[:-2] + (planes // kk,) + tuple(output_size), self.dtype)


im2col = defop("im2col(Tensor self, int[2] kernel_size, int[2] dilation, int[2] padding, "
               "int[2] stride) -> Tensor", _im2col_meta)
col2im = defop("col2im(Tensor self, SymInt[2] output_size, int[2] kernel_size, int[2] dilation, "
               "int[2] padding, int[2] stride) -> Tensor", _col2im_meta)


# --- padding (primitives) -------------------------------------------------------------------------

def _constant_pad_meta(self, pad, value=0):
    pad = tuple(pad)
    if len(pad) % 2:
        raise RuntimeError(f"Length of pad must be even but instead it equals {len(pad)}")
    if len(pad) // 2 > self.ndim:
        raise RuntimeError(f"Length of pad should be no more than twice the number of dimensions "
                           f"of the input. Pad length is {len(pad)} while the input has "
                           f"{self.ndim} dimensions.")
    shape = list(self.shape)
    for i in range(len(pad) // 2):
        d = self.ndim - 1 - i
        for p in pad[2 * i:2 * i + 2]:   # negative pads crop first (PyTorch narrows)
            if p < 0 and shape[d] + p < 0:
                raise RuntimeError("narrow(): length must be non-negative.")
            shape[d] += min(p, 0)
        shape[d] += max(pad[2 * i], 0) + max(pad[2 * i + 1], 0)
    return TensorSpec(tuple(shape), self.dtype)


def _mode_pad_meta(mode, dims):
    """reflection_pad{1,2,3}d / replication_pad{1,2,3}d: ``dims`` trailing dims padded."""
    name = f"{mode}_pad{dims}d"

    def meta(self, padding):
        padding = tuple(padding)
        if len(padding) != 2 * dims:
            raise RuntimeError(f"padding size is expected to be {2 * dims}, but got: "
                               f"{len(padding)}")
        shape = tuple(self.shape)
        if not (self.ndim in (dims + 1, dims + 2) and all(shape[1:])):
            raise RuntimeError(f"Expected {dims + 1}D or {dims + 2}D (batch mode) tensor with "
                               f"possibly 0 batch size and other non-zero dimensions for input, "
                               f"but got: {fmt(shape)}")
        if self.dtype is D.bool_:
            not_implemented(name, self.dtype)
        out = list(shape)
        for i in range(dims):
            d = self.ndim - 1 - i
            left, right = padding[2 * i], padding[2 * i + 1]
            if mode == "reflection" and not (left < shape[d] and right < shape[d]):
                raise RuntimeError(f"Argument #{4 + 2 * i}: Padding size should be less than "
                                   f"the corresponding input dimension, but got: padding ("
                                   f"{left}, {right}) at dimension {d} of input {fmt(shape)}")
            out[d] = shape[d] + left + right
        if min(out[-dims:]) < 1:
            raise RuntimeError(f"input (W: {shape[-1]}) is too small. Calculated output W: "
                               f"{out[-1]}")
        return TensorSpec(tuple(out), self.dtype)
    return name, meta


constant_pad_nd = defop("constant_pad_nd(Tensor self, SymInt[] pad, Scalar value=0) -> Tensor",
                        _constant_pad_meta, function=True)
MODE_PADS = {}
for _mode in ("reflection", "replication"):
    for _dims in (1, 2, 3):
        _name, _meta = _mode_pad_meta(_mode, _dims)
        MODE_PADS[_mode, _dims] = defop(f"{_name}(Tensor self, SymInt[{2 * _dims}] padding) -> "
                                        f"Tensor", _meta)
reflection_pad1d, reflection_pad2d, reflection_pad3d = (MODE_PADS["reflection", n]
                                                        for n in (1, 2, 3))
replication_pad1d, replication_pad2d, replication_pad3d = (MODE_PADS["replication", n]
                                                           for n in (1, 2, 3))


# --- upsampling (primitives) ----------------------------------------------------------------------

def _upsample_meta(name, dims):
    def meta(self, output_size, *rest):
        output_size = tuple(output_size)
        if len(output_size) != dims:
            raise RuntimeError(f"It is expected output_size equals to {dims}, but got size "
                               f"{len(output_size)}")
        if self.ndim != dims + 2:
            raise RuntimeError(f"It is expected input_size equals to {dims + 2}, but got size "
                               f"{self.ndim}")
        spatial = tuple(self.shape[2:])
        if min(spatial + output_size) <= 0:
            names = ("H", "W")[-dims:] if dims <= 2 else ("D", "H", "W")
            ins = ", ".join(f"{n}: {v}" for n, v in zip(names, spatial))
            outs = ", ".join(f"{n}: {v}" for n, v in zip(names, output_size))
            raise RuntimeError(f"Input and output sizes should be greater than 0, but got input "
                               f"({ins}) output ({outs})")
        if "nearest" not in name and self.dtype.category != D.FLOATING:
            not_implemented(name, self.dtype)
        if "nearest" in name and self.dtype.category != D.FLOATING and self.dtype is not D.uint8:
            not_implemented("compute_indices_weights_nearest" if dims == 1 else
                            "upsample_nearest2d_channels_last", self.dtype)
        return TensorSpec(tuple(self.shape[:2]) + output_size, self.dtype)
    return meta


def nearest_scale(in_size, out_size, scale):
    """ATen's ``compute_scales_value`` in float32, as the nearest modes use it: 1 / scale when
    one is given, else in / out."""
    if scale is not None and scale > 0:
        return np.float32(1.0 / scale)
    return np.float32(in_size) / np.float32(out_size)


def area_pixel_scale(in_size, out_size, align_corners, scale):
    """ATen's ``area_pixel_compute_scale`` (linear and cubic modes), as a Python float."""
    if align_corners:
        return (in_size - 1) / (out_size - 1) if out_size > 1 else 0.0
    return 1.0 / scale if scale is not None and scale > 0 else in_size / out_size


def linear_taps(in_size, out_size, align_corners, scale, dtype):
    """Source indices and weights of linear interpolation along one dim
    (``area_pixel_compute_source_index``, computed in ``dtype``): shared by the kernel and the
    backward."""
    s = dtype.type(area_pixel_scale(in_size, out_size, align_corners, scale))
    dst = np.arange(out_size, dtype=dtype)
    src = s * dst if align_corners else np.maximum(s * (dst + dtype.type(0.5)) - dtype.type(0.5),
                                                   0)
    i0 = np.minimum(src.astype(np.int64), in_size - 1)
    i1 = i0 + (i0 < in_size - 1)
    w1 = np.clip(src - i0, 0, 1).astype(dtype)
    return i0, i1, (1 - w1).astype(dtype), w1


def nearest_source(in_size, out_size, scale, exact):
    """The input index each output index of a nearest upsampling reads (PyTorch's ``nearest_idx``/
    ``nearest_neighbor_exact_idx``, in float32 as there): shared by the kernel and the backward."""
    if not exact and out_size == in_size:
        return np.arange(out_size)
    if not exact and out_size == 2 * in_size:
        return np.arange(out_size) >> 1
    s = nearest_scale(in_size, out_size, scale)
    dst = np.arange(out_size, dtype=np.float32)
    src = np.floor((dst + np.float32(0.5)) * s) if exact else np.floor(dst * s)
    return np.minimum(src.astype(np.int64), in_size - 1)


def cubic_taps(in_size, out_size, align_corners, scale, dtype):
    """The four (source indices, weights) taps of bicubic interpolation along one dim, as ATen
    computes them in ``dtype`` (``area_pixel_compute_source_index`` unclamped for cubic, the
    indices clamped into the input, Keys' cubic convolution with A = -0.75): shared by the kernel
    and the backward."""
    s = area_pixel_scale(in_size, out_size, align_corners, scale)
    s, one, a = dtype.type(s), dtype.type(1), dtype.type(-0.75)
    dst = np.arange(out_size, dtype=dtype)
    src = s * dst if align_corners else s * (dst + dtype.type(0.5)) - dtype.type(0.5)
    start = np.floor(src)
    t = src - start

    def near(x):      # |x| <= 1
        return ((a + 2) * x - (a + 3)) * x * x + one

    def far(x):       # 1 < |x| < 2
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
    weights = (far(t + one), near(t), near(one - t), far(one - t + one))
    first = start.astype(np.int64) - 1
    return [(np.clip(first + k, 0, in_size - 1), w.astype(dtype))
            for k, w in enumerate(weights)]


upsample_nearest1d = defop("upsample_nearest1d(Tensor self, SymInt[1] output_size, "
                           "float? scales=None) -> Tensor",
                           _upsample_meta("upsample_nearest1d", 1))
upsample_nearest2d = defop("upsample_nearest2d(Tensor self, SymInt[2] output_size, "
                           "float? scales_h=None, float? scales_w=None) -> Tensor",
                           _upsample_meta("upsample_nearest2d", 2))
upsample_nearest_exact1d = defop("_upsample_nearest_exact1d(Tensor self, SymInt[1] output_size, "
                                 "float? scales=None) -> Tensor",
                                 _upsample_meta("_upsample_nearest_exact1d", 1))
upsample_nearest_exact2d = defop("_upsample_nearest_exact2d(Tensor self, SymInt[2] output_size, "
                                 "float? scales_h=None, float? scales_w=None) -> Tensor",
                                 _upsample_meta("_upsample_nearest_exact2d", 2))
upsample_linear1d = defop("upsample_linear1d(Tensor self, SymInt[1] output_size, "
                          "bool align_corners, float? scales=None) -> Tensor",
                          _upsample_meta("upsample_linear1d", 1))
upsample_bilinear2d = defop("upsample_bilinear2d(Tensor self, SymInt[2] output_size, "
                            "bool align_corners, float? scales_h=None, float? scales_w=None) -> "
                            "Tensor", _upsample_meta("upsample_bilinear2d", 2))
upsample_nearest3d = defop("upsample_nearest3d(Tensor self, SymInt[3] output_size, "
                           "float? scales_d=None, float? scales_h=None, float? scales_w=None) -> "
                           "Tensor", _upsample_meta("upsample_nearest3d", 3))
upsample_trilinear3d = defop("upsample_trilinear3d(Tensor self, SymInt[3] output_size, "
                             "bool align_corners, float? scales_d=None, float? scales_h=None, "
                             "float? scales_w=None) -> Tensor",
                             _upsample_meta("upsample_trilinear3d", 3))
upsample_bicubic2d = defop("upsample_bicubic2d(Tensor self, SymInt[2] output_size, "
                           "bool align_corners, float? scales_h=None, float? scales_w=None) -> "
                           "Tensor", _upsample_meta("upsample_bicubic2d", 2))
