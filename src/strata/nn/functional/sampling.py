"""Sampling images at given places: ``affine_grid``/``grid_sample`` (spatial transformers) and
``max_unpool1d-3d`` (the partial inverse of max pooling). The ops are ``ops/pooling.py``'s."""

import numbers
import warnings

from ...ops import pooling as PL
from ...ops import sampling as SA

__all__ = ["affine_grid", "grid_sample", "max_unpool1d", "max_unpool2d", "max_unpool3d"]


def _int_list(value):
    return [value] if isinstance(value, numbers.Integral) else list(value)


_ALIGN_CORNERS_WARNING = (
    "Default grid_sample and affine_grid behavior has changed to align_corners=False since "
    "1.3.0. Please specify align_corners=True if the old behavior is desired. See the "
    "documentation of {name} for details.")


def affine_grid(theta, size, align_corners=None):
    """The sampling grid (N, H, W, 2) (or (N, D, H, W, 3)) of the affine maps ``theta``
    (N, 2, 3) (or (N, 3, 4)), for ``grid_sample``."""
    if align_corners is None:
        warnings.warn(_ALIGN_CORNERS_WARNING.format(name="grid_sample"))
        align_corners = False
    if not theta.is_floating_point():
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    size = list(size)
    if len(size) == 4:
        if theta.ndim != 3 or tuple(theta.shape[-2:]) != (2, 3):
            raise ValueError(f"Expected a batch of 2D affine matrices of shape Nx2x3 for size "
                             f"{tuple(size)}. Got {theta.shape}.".replace("strata.", "torch."))
    elif len(size) == 5:
        if theta.ndim != 3 or tuple(theta.shape[-2:]) != (3, 4):
            raise ValueError(f"Expected a batch of 3D affine matrices of shape Nx3x4 for size "
                             f"{tuple(size)}. Got {theta.shape}.".replace("strata.", "torch."))
    else:
        raise NotImplementedError(f"affine_grid only supports 4D and 5D sizes, for 2D and 3D "
                                  f"affine transforms, respectively. Got size {tuple(size)}.")
    if min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {tuple(size)}")
    return SA.affine_grid_generator(theta, size, align_corners)


def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    """``input`` (N, C, H, W) sampled at ``grid`` (N, Ho, Wo, 2) in [-1, 1] coordinates (or
    (N, C, D, H, W) at (N, Do, Ho, Wo, 3))."""
    if mode not in SA.GRID_MODES:
        raise ValueError(f"nn.functional.grid_sample(): expected mode to be 'bilinear', "
                         f"'nearest' or 'bicubic', but got: '{mode}'")
    if padding_mode not in SA.GRID_PADDINGS:
        raise ValueError(f"nn.functional.grid_sample(): expected padding_mode to be 'zeros', "
                         f"'border', or 'reflection', but got: '{padding_mode}'")
    if align_corners is None:
        warnings.warn(_ALIGN_CORNERS_WARNING.format(name="grid_sample"))
        align_corners = False
    sampler = SA.grid_sampler_3d if input.ndim == 5 else SA.grid_sampler_2d
    return sampler(input, grid, SA.GRID_MODES[mode], SA.GRID_PADDINGS[padding_mode],
                   align_corners)


def _unpool_output_size(input, kernel_size, stride, padding, output_size):
    """The spatial size max_unpool writes: the pooled input's unless ``output_size`` (within a
    stride of it) says otherwise."""
    dims = len(kernel_size)
    default = [(input.shape[-dims + d] - 1) * stride[d] + kernel_size[d] - 2 * padding[d]
               for d in range(dims)]
    if output_size is None:
        return default
    output_size = list(output_size)
    if len(output_size) == dims + 2:
        output_size = output_size[2:]
    if len(output_size) != dims:
        raise ValueError(f"output_size should be a sequence containing {dims} or {dims + 2} "
                         f"elements, but it has a length of '{len(output_size)}'")
    for d in range(dims):
        low, high = default[d] - stride[d], default[d] + stride[d]
        if not low < output_size[d] < high:
            raise ValueError(f'invalid output_size "{tuple(output_size)}" (dim {d} must be '
                             f'between {low} and {high})')
    return output_size


def _unpool_args(kernel_size, stride, padding, dims):
    kernel = _int_list(kernel_size) * (dims if isinstance(kernel_size, int) else 1)
    stride = kernel if stride is None else _int_list(stride) * (dims if isinstance(stride, int)
                                                                 else 1)
    padding = _int_list(padding) * (dims if isinstance(padding, int) else 1)
    return kernel, stride, padding


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    kernel, stride, padding = _unpool_args(kernel_size, stride, padding, 1)
    size = _unpool_output_size(input, kernel, stride, padding, output_size) + [1]
    return PL.max_unpool2d(input.unsqueeze(-1), indices.unsqueeze(-1), size).squeeze(-1)


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    kernel, stride, padding = _unpool_args(kernel_size, stride, padding, 2)
    size = _unpool_output_size(input, kernel, stride, padding, output_size)
    return PL.max_unpool2d(input, indices, size)


def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    kernel, stride, padding = _unpool_args(kernel_size, stride, padding, 3)
    size = _unpool_output_size(input, kernel, stride, padding, output_size)
    return PL.max_unpool3d(input, indices, size, stride, padding)
