"""CPU kernels for ``ops/normalization.py``: statistics in the float32 "opmath" for half inputs
(float64 for double), biased variance for the normalization, unbiased for running_var."""

import numpy as np

from ...ops import normalization as NZ
from . import native, native_pool
from .array import COMPUTE, compute_data, data, wrap, wrap_reshaped


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
    fn = native.function("eager_rows", f"layer_norm{'_affine' if affine else ''}_{native.dtype_name(x.dtype)}")
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
    native_pool.parallel_call(fn, pointers + [rows, n, n], 0, rows, max(1, native.NATIVE_ROW_GRAIN // n))
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


def _generated_grad_input(x, g, mean, rstd, weight):
    """The (rows, n) input gradient from the generated row kernel (compile/inductor/eager.py)
    for contiguous float32/float64 rows; None where the NumPy formula must run."""
    rows, n = x.shape
    if not (x.dtype in (np.float32, np.float64) and rows and n and g.dtype == x.dtype and
            x.flags.c_contiguous):
        return None
    name = f"layer_norm_backward{'_affine' if weight is not None else ''}_{native.dtype_name(x.dtype)}"
    fn = native.function("eager_rows", name)
    if fn is None:
        return None
    arrays = [np.ascontiguousarray(a, x.dtype).reshape(-1) for a in (mean, rstd)]
    if weight is not None:
        arrays.append(np.ascontiguousarray(weight, x.dtype).reshape(-1))
    out = np.empty_like(x)
    pointers = [g.ctypes.data, x.ctypes.data, *(a.ctypes.data for a in arrays), out.ctypes.data]
    native_pool.parallel_call(fn, pointers + [rows, n, n], 0, rows, max(1, native.NATIVE_ROW_GRAIN // n))
    return out


def _generated_param_grads(x, g, mean, rstd):
    """The (n,) weight and bias gradients from the generated column-sum kernel (compile/
    inductor/eager.py: both sums in one walk down the rows, Note [Column kernels] in
    native.py); None where the NumPy sums must run."""
    rows, n = x.shape
    if not (x.dtype in (np.float32, np.float64) and rows and n and g.dtype == x.dtype and
            x.flags.c_contiguous and g.flags.c_contiguous):
        return None
    fn = native.function("eager_rows", f"layer_norm_param_grads_{native.dtype_name(x.dtype)}")
    if fn is None:
        return None
    mean, rstd = (np.ascontiguousarray(a, x.dtype).reshape(-1) for a in (mean, rstd))
    weight, bias = np.empty(n, x.dtype), np.empty(n, x.dtype)
    native.run_columns(fn, [a.ctypes.data for a in (g, x, mean, rstd, weight, bias)], rows, n)
    return weight, bias


def native_layer_norm_backward(grad_out, input, normalized_shape, mean, rstd, weight, bias,
                               output_mask):
    """The decomposition's values (``layer_norm_backward_composite`` in ops/normalization.py,
    which the compiler and devices without a kernel run: each output its mask asks for, also
    without the parameter) in one generated row kernel for the input gradient and a NumPy
    column sum for each parameter's, instead of a dozen dispatched ops each with its meta and
    a fresh array (1024 rows of 128 floats: ~0.44 -> ~0.25 ms; a tiny GPT's eager step has
    five). Half dtypes compute in float32 and round once, as the forward."""
    dt = input.dtype
    n = int(np.prod(normalized_shape))
    x, g = compute_data(input, dt), compute_data(grad_out, dt)
    rows = int(np.prod(x.shape[:x.ndim - len(normalized_shape)]))
    # a broadcast gradient (``out.sum().backward()``) made contiguous for the C kernels
    x, g = x.reshape(rows, n), np.ascontiguousarray(g.reshape(rows, n))
    m = compute_data(mean, dt).reshape(rows, 1)
    r = compute_data(rstd, dt).reshape(rows, 1)
    w = compute_data(weight, dt).reshape(1, n) if weight is not None else None
    grads = [None, None, None]
    x_hat = None
    if output_mask[0]:
        g_in = _generated_grad_input(x, g, m, r, w)
        if g_in is None:
            x_hat = (x - m) * r
            g_hat = g * w if w is not None else g
            g_in = g_hat - g_hat.mean(axis=1, keepdims=True)
            g_in -= x_hat * (g_hat * x_hat).mean(axis=1, keepdims=True)
            g_in *= r
        grads[0] = wrap_reshaped(g_in, input.shape, dt)
    shape = tuple(normalized_shape)
    params = _generated_param_grads(x, g, m, r) if output_mask[1] or output_mask[2] else None
    if params is not None:
        for k in (1, 2):
            if output_mask[k]:
                grads[k] = wrap(params[k - 1].reshape(shape), dt)
        return tuple(grads)
    if output_mask[1]:
        if x_hat is None:
            x_hat = (x - m) * r
        x_hat *= g
        grads[1] = wrap(np.add.reduce(x_hat, axis=0).reshape(shape), dt)
    if output_mask[2]:
        grads[2] = wrap(np.add.reduce(g, axis=0).reshape(shape), dt)
    return tuple(grads)


KERNELS = {NZ.native_layer_norm: native_layer_norm, NZ.native_batch_norm: native_batch_norm,
           NZ.native_layer_norm_backward: native_layer_norm_backward}
