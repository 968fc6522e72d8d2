"""``nn.functional``: layers (linear, convolution, pooling, normalization, embedding, padding,
resampling, distances), with ``torch.nn.functional``'s signatures and Python-side checks.

Each function translates PyTorch's Python conventions (``stride=None`` meaning the kernel size,
string paddings, ``return_indices``, ``size`` vs ``scale_factor``) into one op call.

    import strata.nn.functional as F
    F.conv2d(x, w, padding="same")
"""

import math
import numbers
import warnings

from ...autograd.grad_mode import no_grad
from ...core import dtype as D
from ...dispatch.dispatcher import caller
from ...ops import aten
from ...ops import dense as DN
from ...ops import factory as FA
from ...ops import meta_rules as R
from ...ops import nn as NN
from ...ops import nn_composites as NC
from ...ops import normalization as NZ
from ...ops import pointwise as P
from ...ops import pooling as PL
from ..modules.utils import _ntuple
from .antialias import interpolate_aa

__all__ = [
    "adaptive_avg_pool1d",
    "adaptive_avg_pool2d",
    "adaptive_avg_pool3d",
    "adaptive_max_pool1d",
    "adaptive_max_pool1d_with_indices",
    "adaptive_max_pool2d",
    "adaptive_max_pool2d_with_indices",
    "adaptive_max_pool3d",
    "adaptive_max_pool3d_with_indices",
    "avg_pool1d",
    "avg_pool2d",
    "avg_pool3d",
    "batch_norm",
    "bilinear",
    "rms_norm",
    "channel_shuffle",
    "conv1d",
    "conv2d",
    "conv3d",
    "conv_transpose1d",
    "conv_transpose2d",
    "conv_transpose3d",
    "cosine_similarity",
    "embedding",
    "embedding_bag",
    "fold",
    "group_norm",
    "instance_norm",
    "interpolate",
    "layer_norm",
    "linear",
    "local_response_norm",
    "lp_pool1d",
    "lp_pool2d",
    "lp_pool3d",
    "max_pool1d",
    "max_pool1d_with_indices",
    "max_pool2d",
    "max_pool2d_with_indices",
    "max_pool3d",
    "max_pool3d_with_indices",
    "normalize",
    "pad",
    "pairwise_distance",
    "pdist",
    "pixel_shuffle",
    "pixel_unshuffle",
    "unfold",
    "upsample",
    "upsample_bilinear",
    "upsample_nearest",
]


linear = caller(DN.linear, __name__)   # Note [Generated callers]: one frame, past ``call``


def bilinear(input1, input2, weight, bias=None):
    return DN.bilinear(input1, input2, weight, bias)


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    op = NC.conv1d_padding if isinstance(padding, str) else NC.conv1d
    return op(input, weight, bias, stride, padding, dilation, groups)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    op = NC.conv2d_padding if isinstance(padding, str) else NC.conv2d
    return op(input, weight, bias, stride, padding, dilation, groups)


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    op = NC.conv3d_padding if isinstance(padding, str) else NC.conv3d
    return op(input, weight, bias, stride, padding, dilation, groups)


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    return NC.conv_transpose3d(input, weight, bias, stride, padding, output_padding, groups,
                               dilation)


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    return NC.conv_transpose1d(input, weight, bias, stride, padding, output_padding, groups,
                               dilation)


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    return NC.conv_transpose2d(input, weight, bias, stride, padding, output_padding, groups,
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


def _named(fn, name):
    fn.__name__ = fn.__qualname__ = name
    return fn


def _max_pool_pair(name, with_indices_op, values_op):
    """``F.<name>_with_indices`` and ``F.<name>``, whose ``return_indices`` picks the op (as
    PyTorch's ``boolean_dispatch``)."""
    def with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                     return_indices=False):
        return with_indices_op(input, kernel_size, _stride(stride), padding, dilation, ceil_mode)

    def pool(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
             return_indices=False):
        op = with_indices_op if return_indices else values_op
        return op(input, kernel_size, _stride(stride), padding, dilation, ceil_mode)
    return _named(with_indices, f"{name}_with_indices"), _named(pool, name)


max_pool1d_with_indices, max_pool1d = _max_pool_pair("max_pool1d", PL.max_pool1d_with_indices,
                                                     PL.max_pool1d)
max_pool2d_with_indices, max_pool2d = _max_pool_pair("max_pool2d", PL.max_pool2d_with_indices,
                                                     PL.max_pool2d)
max_pool3d_with_indices, max_pool3d = _max_pool_pair("max_pool3d", PL.max_pool3d_with_indices,
                                                     PL.max_pool3d)


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    return PL.avg_pool3d(input, kernel_size, _stride(stride), padding, ceil_mode,
                         count_include_pad, divisor_override)


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True):
    return PL.avg_pool1d(input, kernel_size, _stride(stride), padding, ceil_mode,
                         count_include_pad)


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    return PL.avg_pool2d(input, kernel_size, _stride(stride), padding, ceil_mode,
                         count_include_pad, divisor_override)


def _lp_pool(avg_pool, input, norm_type, kernel_size, stride, ceil_mode, dims):
    """PyTorch's ``lp_pool``: the window's sum of ``x ** p`` (an average times the window
    size), then its p-th root (a negative sum, from an odd p, becomes 0 first)."""
    out = avg_pool(P.pow(input, norm_type), kernel_size, stride, 0, ceil_mode)
    window = math.prod(_ntuple(dims)(kernel_size))
    return P.pow(P.mul(P.mul(P.sign(out), P.relu(P.abs(out))), window), 1.0 / norm_type)


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    return _lp_pool(avg_pool1d, input, norm_type, kernel_size, stride, ceil_mode, 1)


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    return _lp_pool(avg_pool2d, input, norm_type, kernel_size, stride, ceil_mode, 2)


def lp_pool3d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    return _lp_pool(avg_pool3d, input, norm_type, kernel_size, stride, ceil_mode, 3)


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


def adaptive_avg_pool3d(input, output_size):
    return PL.adaptive_avg_pool3d(input, _adaptive_size(input, output_size, 3))


def _adaptive_max_pool_pair(name, op, output_size_of):
    """``F.<name>_with_indices`` (values and indices) and ``F.<name>`` (values unless
    ``return_indices``)."""
    def with_indices(input, output_size, return_indices=False):
        return op(input, output_size_of(input, output_size))

    def pool(input, output_size, return_indices=False):
        out = with_indices(input, output_size)
        return out if return_indices else out[0]
    return _named(with_indices, f"{name}_with_indices"), _named(pool, name)


adaptive_max_pool1d_with_indices, adaptive_max_pool1d = _adaptive_max_pool_pair(
    "adaptive_max_pool1d", PL.adaptive_max_pool1d, lambda input, size: _int_list(size))
adaptive_max_pool2d_with_indices, adaptive_max_pool2d = _adaptive_max_pool_pair(
    "adaptive_max_pool2d", PL.adaptive_max_pool2d,
    lambda input, size: _adaptive_size(input, size, 2))
adaptive_max_pool3d_with_indices, adaptive_max_pool3d = _adaptive_max_pool_pair(
    "adaptive_max_pool3d", PL.adaptive_max_pool3d,
    lambda input, size: _adaptive_size(input, size, 3))


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    return NZ.layer_norm(input, normalized_shape, weight, bias, eps)


def rms_norm(input, normalized_shape, weight=None, eps=None):
    return NZ.rms_norm(input, normalized_shape, weight, eps)


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


def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    """``input / (k + alpha * mean of input^2 over ``size`` neighbouring channels)^beta``: the
    channel window is an average pool over a zero-padded channel axis, as in PyTorch."""
    dim = input.dim()
    if dim < 3:
        raise ValueError(f"Expected 3D or higher dimensionality                          input "
                         f"(got {dim} dimensions)")
    if input.numel() == 0:
        return input
    sizes = tuple(input.shape)
    div = P.mul(input, input).reshape(sizes[0], 1, sizes[1], -1)   # (N, 1, C, rest)
    div = NC.pad(div, [0, 0, size // 2, (size - 1) // 2])
    div = PL.avg_pool2d(div, [size, 1], [1, 1]).reshape(sizes)
    return P.div(input, P.pow(P.add(P.mul(div, alpha), k), beta))


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


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2,
                  scale_grad_by_freq=False, mode="mean", sparse=False, per_sample_weights=None,
                  include_last_offset=False, padding_idx=None):
    """Sums, means or maxes of bags of ``weight`` rows. A composite, so autograd comes free:
    ``embedding`` picks the rows, ``index_add`` (sum, mean) or ``scatter_reduce`` (max) folds
    each bag; empty bags give zeros and ``padding_idx`` entries are left out of their bag."""
    if weight.dtype is D.int64 and input.is_floating_point():
        warnings.warn("Argument order of nn.functional.embedding_bag was changed. Usage "
                      "`embedding_bag(weight, input, ...)` is deprecated, and should now be "
                      "`embedding_bag(input, weight, ...)`.", stacklevel=2)
        weight, input = input, weight
    if per_sample_weights is not None and input.size() != per_sample_weights.size():
        raise ValueError(f"embedding_bag: If per_sample_weights ({per_sample_weights.shape}) is "
                         f"not None, then it must have the same shape as the input "
                         f"({input.shape})".replace("strata.", "torch."))
    if weight.dim() != 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension "
                         f"{weight.dim()}")
    if input.dim() == 2:
        if offsets is not None:
            raise ValueError(f"if input is 2D, then offsets has to be None, as input is treated "
                             f"is a mini-batch of fixed length sequences. However, found offsets "
                             f"of type {type(offsets)}")
        offsets = FA.arange(0, input.numel(), input.size(1), dtype=input.dtype,
                            device=input.device)
        include_last_offset = False
        input = input.reshape(-1)
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.reshape(-1)
    elif input.dim() == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.dim() != 1:
            raise ValueError("offsets has to be a 1D Tensor")
    else:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension "
                         f"{input.dim()}")
    if mode not in ("sum", "mean", "max"):
        raise ValueError("mode has to be one of sum, mean or max")
    if mode == "max" and scale_grad_by_freq:
        raise ValueError("max mode does not support scaling the gradient by the frequency")
    if mode == "max" and sparse:
        raise ValueError("max mode does not support sparse weights")
    if max_norm is not None:
        with no_grad():
            DN.embedding_renorm_(weight, input, max_norm, norm_type)
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(f"embedding_bag: per_sample_weights was not None. "
                                  f"per_sample_weights is only supported for mode='sum' (got "
                                  f"mode='{mode}'). Please open a feature request on GitHub.")
    _check_bag_args(input, weight, offsets, per_sample_weights)
    padding_idx = _bag_padding_idx(padding_idx, weight.size(0))
    bags = offsets.numel() - 1 if include_last_offset else offsets.numel()
    bag_of = P.sub(aten.searchsorted.Tensor(offsets.long(), FA.arange(
        0, input.numel(), device=input.device), right=True), 1)
    keep = P.logical_and(P.ge(bag_of, 0), P.lt(bag_of, bags))
    if padding_idx is not None:
        keep = P.logical_and(keep, P.ne(input, padding_idx))
    bag_of = bag_of[keep]
    rows = DN.embedding(weight, input[keep], -1, scale_grad_by_freq, sparse)
    out = FA.full((max(bags, 0), weight.size(1)), 0, dtype=weight.dtype, device=weight.device)
    if mode == "max":
        index = bag_of.unsqueeze(1).expand(-1, weight.size(1))
        return out.scatter_reduce(0, index, rows, "amax", include_self=False)
    if per_sample_weights is not None:
        rows = P.mul(rows, per_sample_weights[keep].unsqueeze(1))
    out = out.index_add(0, bag_of, rows)
    if mode == "sum":
        return out
    counts = FA.full((out.size(0),), 0, dtype=weight.dtype, device=weight.device)
    counts = counts.index_add(0, bag_of, FA.full((bag_of.numel(),), 1, dtype=weight.dtype,
                                                 device=weight.device))
    return P.div(out, P.clamp(counts, 1).unsqueeze(1))


def _check_bag_args(input, weight, offsets, per_sample_weights):
    """The checks of PyTorch's ``_embedding_bag`` kernel, with its messages."""
    DN.check_indices(input, "embedding_bag")
    DN.check_indices(offsets, "embedding_bag")
    if weight.dtype.category != D.FLOATING:
        raise RuntimeError(f"Expected tensor for argument #1 'weight' to have one of the "
                           f"following scalar types: Half, BFloat16, Float, Double; but got "
                           f"torch.{R.type_name(weight.dtype)}Tensor instead (while checking "
                           f"arguments for embedding_bag)")
    if per_sample_weights is not None and per_sample_weights.dtype is not weight.dtype:
        raise RuntimeError(f"Expected tensor for argument #1 'weight' to have the same type as "
                           f"tensor for argument #1 'per_sample_weights'; but type torch."
                           f"{R.type_name(weight.dtype)}Tensor does not equal torch."
                           f"{R.type_name(per_sample_weights.dtype)}Tensor (while checking "
                           f"arguments for embedding_bag)")
    if offsets.numel():
        first, last = int(offsets[0]), int(offsets[-1])
        if first != 0:
            raise RuntimeError(f"offsets[0] has to be 0, i.e., the first sequence in the "
                               f"mini-batch has to start from position 0. However, got {first}")
        if last > input.numel():
            raise RuntimeError(f"offsets[-1] can not be greater than input's length "
                               f"{input.numel()} but got offsets[-1] of {last}")
        if offsets.numel() > 1 and bool(P.lt(offsets[1:], offsets[:-1]).any()):
            raise RuntimeError("embedding_bag: offsets must be non-decreasing")
    bad = P.logical_or(P.lt(input, 0), P.ge(input, weight.size(0))).nonzero()
    if bad.numel():
        i = int(bad[0, 0])
        raise RuntimeError(f"Index {i} of input takes value {int(input[i])} which is not in the "
                           f"valid range [0, {weight.size(0)})")


def _bag_padding_idx(padding_idx, num_weights):
    if padding_idx is None:
        return None
    if not -num_weights <= padding_idx < num_weights:
        raise RuntimeError(f"padding_idx must be within the number of embeddings, "
                           f"-{num_weights} through {num_weights - 1}, but got {padding_idx}")
    return padding_idx % num_weights


def channel_shuffle(input, groups):
    return NC.channel_shuffle(input, groups)


def pad(input, pad, mode="constant", value=None):
    return NC.pad(input, list(pad), mode, value)


def pixel_shuffle(input, upscale_factor):
    return NC.pixel_shuffle(input, upscale_factor)


def pixel_unshuffle(input, downscale_factor):
    return NC.pixel_unshuffle(input, downscale_factor)


_UPSAMPLE = {
    ("nearest", 3): NN.upsample_nearest1d, ("nearest", 4): NN.upsample_nearest2d,
    ("nearest-exact", 3): NN.upsample_nearest_exact1d,
    ("nearest-exact", 4): NN.upsample_nearest_exact2d,
    ("linear", 3): NN.upsample_linear1d, ("bilinear", 4): NN.upsample_bilinear2d,
    ("nearest", 5): NN.upsample_nearest3d, ("trilinear", 5): NN.upsample_trilinear3d,
    ("bicubic", 4): NN.upsample_bicubic2d,
}
_WRONG_RANK = {("bilinear", 3): "Got 3D input, but bilinear mode needs 4D input",
               ("trilinear", 3): "Got 3D input, but trilinear mode needs 5D input",
               ("linear", 4): "Got 4D input, but linear mode needs 3D input",
               ("trilinear", 4): "Got 4D input, but trilinear mode needs 5D input",
               ("linear", 5): "Got 5D input, but linear mode needs 3D input",
               ("bilinear", 5): "Got 5D input, but bilinear mode needs 4D input"}


def _per_spatial_dim(value, input, what, got, expected):
    """``size``/``scale_factor``: one value for every spatial dim, or exactly one per dim."""
    dim = input.ndim - 2
    if not isinstance(value, (list, tuple)):
        return [value] * dim
    if len(value) != dim:
        raise ValueError(f"Input and {what} must have the same number of spatial dimensions, "
                         f"but got input with spatial dimensions of {list(input.shape[2:])} and "
                         f"{got} {value}. Please provide input tensor in (N, C, d1, d2, ...,dK) "
                         f"format and {expected} format.")
    return list(value)


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False):
    """Resample the spatial dims (PyTorch's argument rules; modes nearest, nearest-exact, area,
    linear (3-D), bilinear and bicubic (4-D), trilinear (5-D))."""
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
        output_size = _per_spatial_dim(size, input, "output", "output size of",
                                       "output size in (o1, o2, ...,oK)")
    elif scale_factor is not None:
        scale_factors = _per_spatial_dim(scale_factor, input, "scale_factor",
                                         "scale_factor of shape",
                                         "scale_factor in (s1, s2, ...,sK)")
        output_size = [int(n * s) for n, s in zip(input.shape[2:], scale_factors)]
    else:
        raise ValueError("either size or scale_factor should be defined")
    if recompute_scale_factor and size is not None:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    if recompute_scale_factor or mode == "area":
        scale_factors = None
    if antialias:
        if mode not in ("bilinear", "bicubic", "lanczos") or input.ndim != 4:
            raise ValueError("Anti-alias option is restricted to bilinear, bicubic, and lanczos "
                             "modes and requires a 4-D tensor as input")
        if mode != "lanczos":       # lanczos raises below, as without antialias
            return interpolate_aa(input, output_size, mode, align_corners, scale_factors)
    if mode == "area" and input.ndim in (3, 4):
        pool = adaptive_avg_pool1d if input.ndim == 3 else adaptive_avg_pool2d
        return pool(input, output_size)
    op = _UPSAMPLE.get((mode, input.ndim))
    if op is not None:
        scales = scale_factors if scale_factors is not None else [None] * dim
        if mode in ("linear", "bilinear", "trilinear", "bicubic"):
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


def pdist(input, p=2):
    return DN.pdist(input, p)
