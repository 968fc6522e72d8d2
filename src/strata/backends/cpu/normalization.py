"""CPU kernels for ``ops/normalization.py``: statistics in the float32 "opmath" for half inputs
(float64 for double), biased variance for the normalization, unbiased for running_var."""

import numpy as np

from ...ops import normalization as NZ
from .array import COMPUTE, compute_data, data, wrap


def native_layer_norm(input, normalized_shape, weight, bias, eps):
    out_spec, stat_spec, _ = NZ.native_layer_norm.meta(input, normalized_shape, weight, bias,
                                                        eps)
    dt = out_spec.dtype
    x = compute_data(input, dt)
    axes = tuple(range(x.ndim - len(normalized_shape), x.ndim))
    mean = x.mean(axis=axes, keepdims=True)
    centered = x - mean
    rstd = 1 / np.sqrt((centered * centered).mean(axis=axes, keepdims=True) + eps)
    out = centered * rstd
    if weight is not None:
        out *= compute_data(weight, dt)
    if bias is not None:
        out += compute_data(bias, dt)
    return wrap(out, dt), wrap(mean, stat_spec.dtype), wrap(rstd, stat_spec.dtype)


def native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps):
    out_spec, stat_spec, _ = NZ.native_batch_norm.meta(input, weight, bias, running_mean,
                                                        running_var, training, momentum, eps)
    dt, sdt = out_spec.dtype, stat_spec.dtype
    x = compute_data(input, dt)
    c = x.shape[1]
    axes = (0,) + tuple(range(2, x.ndim))
    if training:
        mean = x.mean(axis=axes)
        var = x.var(axis=axes)
        invstd = 1 / np.sqrt(var + eps)
        n = x.size // c if c else 0
        if running_mean is not None:
            rm = data(running_mean)
            rm[...] = (1 - momentum) * rm + momentum * mean
        if running_var is not None:
            rv = data(running_var)
            with np.errstate(divide="ignore", invalid="ignore"):
                unbiased = var * (n / (n - 1)) if n > 1 else var * np.inf
            rv[...] = (1 - momentum) * rv + momentum * unbiased
    else:
        mean = compute_data(running_mean, dt)
        invstd = 1 / np.sqrt(compute_data(running_var, dt) + eps)
    shape = (1, c) + (1,) * (x.ndim - 2)
    out = (x - mean.reshape(shape)) * invstd.reshape(shape)
    if weight is not None:
        out *= compute_data(weight, dt).reshape(shape)
    if bias is not None:
        out += compute_data(bias, dt).reshape(shape)
    if not training:
        empty = np.empty((0,), COMPUTE[sdt])
        return wrap(out, dt), wrap(empty, sdt), wrap(empty.copy(), sdt)
    return wrap(out, dt), wrap(mean, sdt), wrap(invstd, sdt)


KERNELS = {NZ.native_layer_norm: native_layer_norm, NZ.native_batch_norm: native_batch_norm}
