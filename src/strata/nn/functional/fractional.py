"""``F.fractional_max_pool2d``/``3d`` (Graham's fractional max pooling): windows of a fixed size
whose starts step by a pseudo-random non-integer stride, one sequence per plane and dim drawn
from ``_random_samples`` (uniform in [0, 1), one per plane and dim). The starts are ATen's
``generate_intervals`` (``FractionalMaxPool2d.cpp``): ``int((i + u) * alpha) - int(u * alpha)``
with ``alpha = (in - k) / (out - 1)`` in the input's precision, the last window flush with the
end. The windows' elements are gathered and reduced with ``max``, so autograd's gradient goes
to each window's maximum, as ATen's backward scatters it."""

import math
import numbers

import numpy as np

from ... import creation
from ...core import dtype as D
from ...ops.meta_rules import type_name

__all__ = ["fractional_max_pool2d", "fractional_max_pool2d_with_indices",
           "fractional_max_pool3d", "fractional_max_pool3d_with_indices"]


def _ints(value, dims, what, name):
    if isinstance(value, numbers.Integral):
        return (int(value),) * dims
    value = tuple(value)
    if len(value) == 1:
        return value * dims
    if len(value) != dims:
        raise RuntimeError(f"{name}: {what} must either be a single Int or tuple of Ints")
    return value


def _starts(samples, size, out, kernel, dtype):
    """(N, C, out) window starts along one dim from samples (N, C)."""
    starts = np.full((*samples.shape, out), size - kernel, np.int64)
    if out > 1:
        alpha = dtype.type(size - kernel) / dtype.type(out - 1)
        i = np.arange(out - 1, dtype=dtype)
        u = samples.astype(dtype)[..., None]
        starts[..., :-1] = ((i + u) * alpha).astype(np.int64) - (u * alpha).astype(np.int64)
    return starts


def _fractional(input, kernel_size, output_size, output_ratio, samples, dims):
    name = f"fractional_max_pool{dims}d"
    where = name if dims == 2 else f"{name}_out"      # how ATen's checks name the op
    if output_size is None and output_ratio is None:
        raise ValueError(f"{name} requires specifying either an output_size or an output_ratio")
    if output_size is None:
        if len(output_ratio) > dims:
            raise ValueError(f"{name} requires output_ratio to either be a single Int or tuple "
                             f"of Ints.")
        ratio = tuple(output_ratio) * (dims if len(output_ratio) == 1 else 1)
        output_size = [int(input.shape[-dims + d] * ratio[d]) for d in range(dims)]
    kernel = _ints(kernel_size, dims, "kernel_size", name)
    out = _ints(output_size, dims, "output_size", name)
    if input.ndim not in (dims + 1, dims + 2) or any(
            n == 0 for n in input.shape[-dims - 1:]):
        empty = next((d for d in range(input.ndim - dims - 1, input.ndim) if
                      input.shape[d] == 0), None)
        if empty is not None and input.ndim in (dims + 1, dims + 2):
            raise RuntimeError(f"{where}(): Expected input to have non-zero size for non-batch "
                               f"dimensions, but got{list(input.shape)} with dimension {empty} "
                               f"being empty.")
        raise RuntimeError(f"{name}(): Expected {dims + 1}D or {dims + 2}D tensor, but got: "
                           f"{list(input.shape)}")
    if input.dtype.category != D.FLOATING:
        raise NotImplementedError(f"\"check_uniform_bounds\" not implemented for "
                                  f"'{type_name(input.dtype)}'")
    x = input if input.ndim == dims + 2 else input.unsqueeze(0)
    n, c, spatial = x.shape[0], x.shape[1], tuple(x.shape[2:])
    names = ("time", "height", "width")[-dims:]
    for d in range(dims):
        # ATen's checks: the 2-D one lets the last window end at the input's end, the 3-D one
        # (``fractional_max_pool3d_out``) does not
        if out[d] + kernel[d] - 1 > spatial[d] - (dims == 3):
            raise RuntimeError(f"{where}(): pool {names[d]} {kernel[d]} too large relative to "
                               f"input {names[d]} {spatial[d]}")
    if samples is None:
        samples = creation.rand(n, c, dims, dtype=input.dtype, device=input.device)
    elif samples.ndim != 3:
        raise RuntimeError(f"Expect _random_samples to have 3 dimensions, got {samples.ndim}")
    elif samples.shape[0] < n:
        raise RuntimeError("Expect _random_samples.size(0) no less then input batch size.")
    elif samples.shape[1] != c:
        raise RuntimeError("Expect _random_samples.size(1) equals to input channel size.")
    elif samples.shape[2] != dims:
        raise RuntimeError(f"Expect _random_samples.size(2) equals to {dims}; got "
                           f"{samples.shape[2]}.")
    elif samples.dtype is not input.dtype:
        raise RuntimeError("Expect _random_samples to have the same dtype as input")
    u = samples.detach().cpu().float().numpy() if input.dtype.itemsize == 2 else \
        samples.detach().cpu().numpy()
    precision = np.dtype(np.float64 if input.dtype is D.float64 else np.float32)
    # ATen's 2-D kernel draws the width's sequence from sample 0, the 3-D one the time's
    which = (1, 0) if dims == 2 else (0, 1, 2)
    index = np.zeros((n, c) + (1,) * (2 * dims), np.int64)
    stride = 1
    for d in reversed(range(dims)):
        starts = _starts(u[:n, :, which[d]], spatial[d], out[d], kernel[d], precision)
        at = starts[..., :, None] + np.arange(kernel[d])          # (N, C, out, k)
        shape = [n, c] + [1] * (2 * dims)
        shape[2 + d], shape[2 + dims + d] = out[d], kernel[d]
        index = index + at.reshape(shape) * stride
        stride *= spatial[d]
    flat = index.reshape(n, c, -1)
    picked = creation.tensor(flat, device=input.device)
    windows = x.reshape(n, c, -1).gather(2, picked).reshape(n, c, *out, math.prod(kernel))
    values, at = windows.max(-1)
    indices = picked.reshape(n, c, *out, -1).gather(-1, at.unsqueeze(-1)).squeeze(-1)
    if input.ndim == dims + 1:
        values, indices = values.squeeze(0), indices.squeeze(0)
    return values, indices



def fractional_max_pool2d_with_indices(input, kernel_size, output_size=None, output_ratio=None,
                                       return_indices=False, _random_samples=None):
    return _fractional(input, kernel_size, output_size, output_ratio, _random_samples, 2)


def fractional_max_pool3d_with_indices(input, kernel_size, output_size=None, output_ratio=None,
                                       return_indices=False, _random_samples=None):
    return _fractional(input, kernel_size, output_size, output_ratio, _random_samples, 3)


def fractional_max_pool2d(input, kernel_size, output_size=None, output_ratio=None,
                          return_indices=False, _random_samples=None):
    out = _fractional(input, kernel_size, output_size, output_ratio, _random_samples, 2)
    return out if return_indices else out[0]


def fractional_max_pool3d(input, kernel_size, output_size=None, output_ratio=None,
                          return_indices=False, _random_samples=None):
    out = _fractional(input, kernel_size, output_size, output_ratio, _random_samples, 3)
    return out if return_indices else out[0]
