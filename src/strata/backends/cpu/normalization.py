"""CPU kernels for ``ops/normalization.py``: statistics in the float32 "opmath" for half inputs
(float64 for double), biased variance for the normalization, unbiased for running_var."""

import numpy as np

from ...ops import normalization as NZ
from . import native, native_pool
from .array import COMPUTE, GRAIN_SIZE, compute_data, data, wrap


def _generated_layer_norm(x, n, weight, bias, eps):
    """(out, mean, rstd) from the generated row kernel (compile/inductor/eager.py) for a
    contiguous float32/float64 ``x`` whose last dims hold the ``n`` normalized elements, with
    both or neither of weight and bias; None where the NumPy formula must run."""
    if not (x.dtype in (np.float32, np.float64) and x.flags.c_contiguous and x.size
            and (weight is None) == (bias is None)):
        return None
    affine = weight is not None
    if affine:
        weight, bias = (np.ascontiguousarray(data(t), x.dtype).reshape(-1)
                        for t in (weight, bias))
    fn = native.function("eager_rows", f"layer_norm{'_affine' if affine else ''}_{x.dtype.name}")
    if fn is None:
        return None
    rows = x.size // n
    out = np.empty_like(x)
    mean, rstd = np.empty(rows, x.dtype), np.empty(rows, x.dtype)
    eps_value = np.array([eps], x.dtype)
    pointers = [x.ctypes.data, eps_value.ctypes.data]
    if affine:
        pointers += [weight.ctypes.data, bias.ctypes.data]
    pointers += [mean.ctypes.data, rstd.ctypes.data, out.ctypes.data]
    native_pool.parallel_call(fn, pointers + [rows, n, n], 0, rows, max(1, GRAIN_SIZE // n))
    return out, mean, rstd


def native_layer_norm(input, normalized_shape, weight, bias, eps):
    out_spec, stat_spec, _ = NZ.native_layer_norm.meta(input, normalized_shape, weight, bias,
                                                        eps)
    dt = out_spec.dtype
    x = compute_data(input, dt)
    n = int(np.prod(normalized_shape))
    generated = _generated_layer_norm(x, n, weight, bias, eps) if n else None
    if generated is not None:
        out, mean, rstd = generated
        return (wrap(out, dt), wrap(mean.reshape(stat_spec.shape), stat_spec.dtype),
                wrap(rstd.reshape(stat_spec.shape), stat_spec.dtype))
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
