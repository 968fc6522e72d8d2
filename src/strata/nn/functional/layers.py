"""``nn.functional``: layers (linear, convolution, pooling, normalization, embedding, padding,
resampling, distances), with ``torch.nn.functional``'s signatures and Python-side checks.

Each function translates PyTorch's Python conventions (``stride=None`` meaning the kernel size,
string paddings, ``return_indices``, ``size`` vs ``scale_factor``) into one op call.

    import strata.nn.functional as F
    F.conv2d(x, w, padding="same")
"""

import math
import numbers

from ...autograd.grad_mode import no_grad
from ...ops import aten
from ...ops import dense as DN
from ...ops import nn as NN
from ...ops import normalization as NZ
from ...ops import pointwise as P
from ...ops import pooling as PL

__all__ = [
    "adaptive_avg_pool1d",
    "adaptive_avg_pool2d",
    "adaptive_max_pool1d",
    "adaptive_max_pool1d_with_indices",
    "adaptive_max_pool2d",
    "adaptive_max_pool2d_with_indices",
    "avg_pool1d",
    "avg_pool2d",
    "batch_norm",
    "bilinear",
    "conv1d",
    "conv2d",
    "conv_transpose1d",
    "conv_transpose2d",
    "cosine_similarity",
    "embedding",
    "fold",
    "group_norm",
    "instance_norm",
    "interpolate",
    "layer_norm",
    "linear",
    "max_pool1d",
    "max_pool1d_with_indices",
    "max_pool2d",
    "max_pool2d_with_indices",
    "normalize",
    "pad",
    "pairwise_distance",
    "pixel_shuffle",
    "pixel_unshuffle",
    "unfold",
    "upsample",
    "upsample_bilinear",
    "upsample_nearest",
]


def linear(input, weight, bias=None):
    return DN.linear(input, weight, bias)


def bilinear(input1, input2, weight, bias=None):
    return DN.bilinear(input1, input2, weight, bias)


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    op = NN.conv1d_padding if isinstance(padding, str) else NN.conv1d
    return op(input, weight, bias, stride, padding, dilation, groups)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    op = NN.conv2d_padding if isinstance(padding, str) else NN.conv2d
    return op(input, weight, bias, stride, padding, dilation, groups)


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    return NN.conv_transpose1d(input, weight, bias, stride, padding, output_padding, groups,
                               dilation)


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    return NN.conv_transpose2d(input, weight, bias, stride, padding, output_padding, groups,
                               dilation)


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """Extract sliding blocks: (N, C, H, W) -> (N, C*kh*kw, L) (``im2col``)."""
    return NN.im2col(input, _pair(kernel_size), _pair(dilation), _pair(padding), _pair(stride))


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """Sum sliding blocks back into an image: the adjoint of ``unfold`` (``col2im``)."""
    return NN.col2im(input, _pair(output_size), _pair(kernel_size), _pair(dilation),
                     _pair(padding), _pair(stride))


def _pair(value):
    return [value, value] if isinstance(value, numbers.Integral) else list(value)


def _stride(stride):
    return [] if stride is None else stride


def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=False):
    return PL.max_pool1d_with_indices(input, kernel_size, _stride(stride), padding, dilation,
                                      ceil_mode)


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    if return_indices:
        return max_pool1d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)
    return PL.max_pool1d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode)


def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=False):
    return PL.max_pool2d_with_indices(input, kernel_size, _stride(stride), padding, dilation,
                                      ceil_mode)


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    if return_indices:
        return max_pool2d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)
    return PL.max_pool2d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode)


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True):
    return PL.avg_pool1d(input, kernel_size, _stride(stride), padding, ceil_mode,
                         count_include_pad)


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    return PL.avg_pool2d(input, kernel_size, _stride(stride), padding, ceil_mode,
                         count_include_pad, divisor_override)


def _int_list(value):
    return [value] if isinstance(value, numbers.Integral) else list(value)


def _adaptive_size(input, output_size, dims):
    """``None`` in ``output_size`` keeps that input size, as PyTorch's ``_list_with_default``."""
    if isinstance(output_size, numbers.Integral):
        return [output_size] * dims
    output_size = list(output_size)
    if input.ndim <= len(output_size):
        raise ValueError(f"Input dimension should be at least {len(output_size) + 1}")
    lead = input.ndim - len(output_size)
    return [input.shape[lead + i] if s is None else s for i, s in enumerate(output_size)]


def adaptive_avg_pool1d(input, output_size):
    return PL.adaptive_avg_pool1d(input, _int_list(output_size))


def adaptive_avg_pool2d(input, output_size):
    return PL.adaptive_avg_pool2d(input, _adaptive_size(input, output_size, 2))


def adaptive_max_pool1d_with_indices(input, output_size, return_indices=False):
    return PL.adaptive_max_pool1d(input, _int_list(output_size))


def adaptive_max_pool1d(input, output_size, return_indices=False):
    out = adaptive_max_pool1d_with_indices(input, output_size)
    return out if return_indices else out[0]


def adaptive_max_pool2d_with_indices(input, output_size, return_indices=False):
    return PL.adaptive_max_pool2d(input, _adaptive_size(input, output_size, 2))


def adaptive_max_pool2d(input, output_size, return_indices=False):
    out = adaptive_max_pool2d_with_indices(input, output_size)
    return out if return_indices else out[0]


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    return NZ.layer_norm(input, normalized_shape, weight, bias, eps)


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False,
               momentum=0.1, eps=1e-5):
    if training:
        size = list(input.shape)
        if math.prod(size[:1] + size[2:]) == 1:
            raise ValueError(f"Expected more than 1 value per channel when training, got input "
                             f"size {input.shape!r}".replace("strata.", "torch."))
    return NZ.batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps,
                         False)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    return NZ.group_norm(input, num_groups, weight, bias, eps)


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None,
                  use_input_stats=True, momentum=0.1, eps=1e-5):
    if use_input_stats and math.prod(input.shape[2:]) == 1:
        raise ValueError(f"Expected more than 1 spatial element when training, got input size "
                         f"{input.shape!r}".replace("strata.", "torch."))
    return NZ.instance_norm(input, weight, bias, running_mean, running_var, use_input_stats,
                            momentum, eps, False)


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0,
              scale_grad_by_freq=False, sparse=False):
    """Rows of ``weight`` picked by ``input``; ``max_norm`` renormalizes those rows in place."""
    if padding_idx is not None:
        if padding_idx > 0:
            assert padding_idx < weight.shape[0], "Padding_idx must be within num_embeddings"
        elif padding_idx < 0:
            assert padding_idx >= -weight.shape[0], "Padding_idx must be within num_embeddings"
            padding_idx = weight.shape[0] + padding_idx
    else:
        padding_idx = -1
    if max_norm is not None:
        with no_grad():
            DN.embedding_renorm_(weight, input, max_norm, norm_type)
    return DN.embedding(weight, input, padding_idx, scale_grad_by_freq, sparse)


def pad(input, pad, mode="constant", value=None):
    return NN.pad(input, list(pad), mode, value)


def pixel_shuffle(input, upscale_factor):
    return NN.pixel_shuffle(input, upscale_factor)


def pixel_unshuffle(input, downscale_factor):
    return NN.pixel_unshuffle(input, downscale_factor)


_UPSAMPLE = {
    ("nearest", 3): NN.upsample_nearest1d, ("nearest", 4): NN.upsample_nearest2d,
    ("nearest-exact", 3): NN.upsample_nearest_exact1d,
    ("nearest-exact", 4): NN.upsample_nearest_exact2d,
    ("linear", 3): NN.upsample_linear1d, ("bilinear", 4): NN.upsample_bilinear2d,
}
_WRONG_RANK = {("bilinear", 3): "Got 3D input, but bilinear mode needs 4D input",
               ("trilinear", 3): "Got 3D input, but trilinear mode needs 5D input",
               ("linear", 4): "Got 4D input, but linear mode needs 3D input",
               ("trilinear", 4): "Got 4D input, but trilinear mode needs 5D input",
               ("linear", 5): "Got 5D input, but linear mode needs 3D input",
               ("bilinear", 5): "Got 5D input, but bilinear mode needs 4D input"}


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False):
    """Resample the spatial dims (PyTorch's argument rules; modes nearest, nearest-exact, area,
    linear (3-D) and bilinear (4-D))."""
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating modes: "
                             "linear | bilinear | bicubic | trilinear")
    elif align_corners is None:
        align_corners = False
    dim = input.ndim - 2
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        scale_factors = None
        if isinstance(size, (list, tuple)):
            if len(size) != dim:
                raise ValueError(f"Input and output must have the same number of spatial "
                                 f"dimensions, but got input with spatial dimensions of "
                                 f"{list(input.shape[2:])} and output size of {size}. Please "
                                 f"provide input tensor in (N, C, d1, d2, ...,dK) format and "
                                 f"output size in (o1, o2, ...,oK) format.")
            output_size = list(size)
        else:
            output_size = [size] * dim
    elif scale_factor is not None:
        if isinstance(scale_factor, (list, tuple)):
            if len(scale_factor) != dim:
                raise ValueError(f"Input and scale_factor must have the same number of spatial "
                                 f"dimensions, but got input with spatial dimensions of "
                                 f"{list(input.shape[2:])} and scale_factor of shape "
                                 f"{scale_factor}. Please provide input tensor in (N, C, d1, d2, "
                                 f"...,dK) format and scale_factor in (s1, s2, ...,sK) format.")
            scale_factors = list(scale_factor)
        else:
            scale_factors = [scale_factor] * dim
        output_size = [int(n * s) for n, s in zip(input.shape[2:], scale_factors)]
    else:
        raise ValueError("either size or scale_factor should be defined")
    if recompute_scale_factor and size is not None:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    if recompute_scale_factor or mode == "area":
        scale_factors = None
    if antialias:
        raise NotImplementedError("strata: F.interpolate(antialias=True) is not supported")
    if mode == "area" and input.ndim in (3, 4):
        pool = adaptive_avg_pool1d if input.ndim == 3 else adaptive_avg_pool2d
        return pool(input, output_size)
    op = _UPSAMPLE.get((mode, input.ndim))
    if op is not None:
        scales = scale_factors if scale_factors is not None else [None] * dim
        if mode in ("linear", "bilinear"):
            return op(input, output_size, align_corners, *scales)
        return op(input, output_size, *scales)
    if (mode, input.ndim) in _WRONG_RANK:
        raise NotImplementedError(_WRONG_RANK[mode, input.ndim])
    if input.ndim in (3, 4, 5) and mode in ("nearest", "nearest-exact", "area", "bicubic",
                                            "trilinear", "lanczos"):
        raise NotImplementedError(f"strata: F.interpolate mode '{mode}' on a {input.ndim}D input "
                                  f"is not supported")
    raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported (got "
                              f"{input.ndim}D) for the modes: nearest | linear | bilinear | "
                              f"bicubic | trilinear | lanczos | area | nearest-exact (got {mode})")


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    """``input / max(||input||_p, eps)`` along ``dim``."""
    dims = [dim] if isinstance(dim, numbers.Integral) else list(dim)
    norm = aten.linalg_vector_norm.default(input, p, dims, True)
    result = P.div(input, P.clamp(norm, eps).expand_as(input))
    return result if out is None else out.copy_(result)


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    return DN.cosine_similarity(x1, x2, dim, eps)


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    return DN.pairwise_distance(x1, x2, p, eps, keepdim)
