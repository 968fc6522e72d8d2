"""The OpenCL device's windowed ops: convolution, pooling (adaptive too), im2col/col2im, batch
norm.

Each is one loop-IR reduction per output element (``window``): a 2-d convolution without
groups is im2col and the tiled GEMM, any other a direct sum over input channels x kernel
offsets, a max pool an argmax over the window, a transposed convolution, col2im and max-pool
backward the same sum read "backwards" (an output position takes the inputs whose window
covers it: Note [Windows read backwards]). Window
geometry (strides, paddings, dilations, input sizes, channels per group) is passed by value, so
one program serves every shape of a given rank and dtype. Positions outside the input are
clamped for the load and masked out of the result.
"""

from functools import partial

import numpy as np

from ...ops import nn as NN
from ...ops import normalization as NO
from ...ops import pooling as PL
from .ir import InputBuffer, Kernel, Pointwise, Reduction, ops
from .oclprinter import FLOATING, print_kernel
from .opencl_pointwise import (
    kernel_name,
    launch,
    new_output,
    pointwise,
    runtime_of,
    tensor_names,
    tensor_values,
)
from .opencl_rows import _NORMALIZE, opmath, reduce, tiled_matmul


def window(op_name, reads, ints, outs, rsizes, kind, inner, compute):
    """One work-item per output element: ``red = kind-reduce(inner(B, index, rindex))`` over
    ``rsizes``, then ``out_n[index] = finish_n(B, index)`` for each ``(tensor, finish_n)`` of
    ``outs`` (a finish reads ``ops.load("red", "0")``, and ``"red_value"`` for argmax).
    ``reads``: {name: tensor} (not ``x``, ``y``, ``lid``: the printer's variables);
    ``ints``: {name: int} passed by value; ``B``: their
    ``InputBuffer``s by name. Every output has the first one's shape."""
    out = outs[0][0]
    rt = runtime_of(out)
    if kind == "sum" and tuple(rsizes) == (1,):
        kind = "max"      # a gather's one element: 0 + -0.0 would be +0.0, max(-inf, v) is v
    tensors = [*reads.items(), *((f"out{n}", t) for n, (t, _) in enumerate(outs))]
    values = list(ints.values())
    for _, t in tensors:
        values += tensor_values(rt, t)
    values += (*out._shape, *rsizes)

    def names():
        listed = list(ints)
        for name, t in tensors:
            listed += tensor_names(name, t.ndim)
        return listed + [f"s{d}" for d in range(out.ndim)] + \
            [f"rs{d}" for d in range(len(rsizes))]
    key = (op_name, kind, inner, tuple(f for _, f in outs), compute, len(rsizes),
           tuple((n, t.ndim, t.dtype.name) for n, t in reads.items()),
           tuple((t.ndim, t.dtype.name) for t, _ in outs), tuple(ints))

    def buf(name, t):
        return InputBuffer(name, t.dtype.name, (None,) * t.ndim,
                           tuple(f"{name}_st{d}" for d in range(t.ndim)), f"{name}_off")

    def build():
        B = {name: buf(name, t) for name, t in reads.items()}
        scalars = [InputBuffer(name, "int64", (), ()) for name in ints]
        ranges = tuple(f"s{d}" for d in range(out.ndim))
        rranges = tuple(f"rs{d}" for d in range(len(rsizes)))
        red_dtype = "int64" if kind.startswith("arg") else compute
        nodes = [Reduction("red", red_dtype, ranges, rranges, kind, partial(inner, B))]
        layouts = {}
        for n, (t, finish) in enumerate(outs):
            layouts[f"out{n}"] = buf(f"out{n}", t)
            nodes.append(Pointwise(f"out{n}", t.dtype.name, ranges,
                                   partial(_cast, finish, B, t.dtype.name)))
        kernel = Kernel(kernel_name(op_name), [*B.values(), *scalars], nodes,
                        frozenset({"red"}))
        return print_kernel(kernel, ranges, layouts, frozenset(ints))
    launch(op_name, key, build, values, [*reads.values(), *(t for t, _ in outs)], out.numel(),
           rt, names=names)


def _cast(finish, B, dtype, index):
    v = finish(B, index)
    return v if v.dtype == dtype else ops.to_dtype(v, dtype)


def _valid(conditions):
    return ops.index_expr(" && ".join(conditions) or "1", "bool")


def _masked(conditions, value):
    return ops.where(_valid(conditions), value, ops.constant(0, value.dtype))


def _clamp(expr, size):
    return f"clamp((long)({expr}), 0L, {size} - 1)"


def lowest(dtype):
    """The smallest value of a dtype (by name): what never wins a maximum."""
    if dtype == "bool":
        return False
    return float("-inf") if dtype in FLOATING else int(np.iinfo(dtype).min)


def highest(dtype):
    if dtype == "bool":
        return True
    return float("inf") if dtype in FLOATING else int(np.iinfo(dtype).max)


def _geometry(prefix, values):
    return {f"{prefix}{d}": int(v) for d, v in enumerate(values)}


# --- convolution --------------------------------------------------------------------------------

def convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding,
                groups):
    spec = NN.convolution.meta(input, weight, bias, stride, padding, dilation, transposed,
                               output_padding, groups)
    stride, padding, dilation, _ = NN.conv_params(weight, stride, padding, dilation,
                                                  output_padding)
    out = new_output(spec, input)
    if not out.numel():
        return out
    if not transposed and groups == 1 and input.ndim == 4 and out.dtype.is_floating_point:
        return _im2col_gemm(input, weight, bias, stride, padding, dilation, out)
    ints = {**_geometry("st", stride), **_geometry("pd", padding), **_geometry("dl", dilation),
            **_geometry("xs", input._shape[2:])}
    reads = {"inp": input, "w": weight}
    if transposed:          # weight [in channels, out channels per group, k...]
        ints.update(icg=input._shape[1] // groups, ocg=weight._shape[1])
        rsizes = (input._shape[1] // groups, *weight._shape[2:])
        inner = _transposed_term
    else:                   # weight [out channels, in channels per group, k...]
        ints.update(icg=weight._shape[1], ocg=weight._shape[0] // groups)
        rsizes = tuple(weight._shape[1:])
        inner = _conv_term
    finish = _plus_bias if bias is not None else _reduced
    if bias is not None:
        reads["b"] = bias
    window("aten::convolution", reads, ints, [(out, finish)], rsizes, "sum", inner,
           out.dtype.name)
    return out


def _im2col_gemm(input, weight, bias, stride, padding, dilation, out):
    """A 2-d convolution as im2col and the tiled GEMM (opencl_rows.tiled_matmul): the weight,
    viewed (out channels, in channels x kernel), times each image's columns."""
    n, channels = out._shape[:2]
    cols = im2col(input, tuple(weight._shape[2:]), dilation, padding, stride)
    rows = weight.reshape(channels, -1)
    product = out.view(n, channels, -1)
    tiled_matmul("aten::convolution", rows.expand(n, *rows._shape), cols, product, None, 1, 1)
    if bias is not None:
        pointwise("aten::convolution", _add, [(out, out.dtype), (bias.view(channels, 1, 1),
                                                                out.dtype)], out)
    return out


def _add(a, b):
    return ops.add(a, b)


def _conv_term(B, index, rindex):
    """x[n, group's channel c, o * stride - pad + k * dilation] * w[oc, c, k]."""
    n, oc, *o = index
    c, *k = rindex
    conditions, at = [], []
    for d, (o_d, k_d) in enumerate(zip(o, k)):
        pos = f"({o_d} * st{d} - pd{d} + {k_d} * dl{d})"
        conditions += [f"{pos} >= 0", f"{pos} < xs{d}"]
        at.append(_clamp(pos, f"xs{d}"))
    channel = f"(({oc}) / ocg * icg + {c})"
    x = B["inp"].load((n, channel, *at))
    w = B["w"].load((oc, c, *k))
    return _masked(conditions, ops.mul(x, w))


def _transposed_term(B, index, rindex):
    """Note [Windows read backwards]: output position y of a transposed convolution takes
    input position q where q * stride - pad + k * dilation == y, i.e. t = y + pad - k * dil is
    a non-negative multiple of the stride and q = t / stride lies inside the input."""
    n, oc, *y = index
    c, *k = rindex
    conditions, at = [], []
    for d, (y_d, k_d) in enumerate(zip(y, k)):
        t = f"({y_d} + pd{d} - {k_d} * dl{d})"
        conditions += [f"{t} >= 0", f"{t} % st{d} == 0", f"{t} / st{d} < xs{d}"]
        at.append(_clamp(f"{t} / st{d}", f"xs{d}"))
    channel = f"(({oc}) / ocg * icg + {c})"
    x = B["inp"].load((n, channel, *at))
    w = B["w"].load((channel, f"(({oc}) % ocg)", *k))
    return _masked(conditions, ops.mul(x, w))


def _reduced(B, index):
    return ops.load("red", "0")


def _plus_bias(B, index):
    return ops.add(ops.load("red", "0"), B["b"].load((index[1],)))


# --- im2col / col2im ----------------------------------------------------------------------------

def _pair(values):
    return tuple(values) * 2 if len(tuple(values)) == 1 else tuple(values)


def im2col(self, kernel_size, dilation, padding, stride):
    """cols[.., c * kh * kw + a * kw + b, l] = x[.., c, oh * s - p + a * d, ...]: a gather,
    written as a one-element window."""
    spec = NN.im2col.meta(self, kernel_size, dilation, padding, stride)
    out = new_output(spec, self)
    if not out.numel():
        return out
    kernel, dil, pad, st = map(_pair, (kernel_size, dilation, padding, stride))
    h, w = self._shape[-2:]
    blocks_w = (w + 2 * pad[1] - dil[1] * (kernel[1] - 1) - 1) // st[1] + 1
    ints = {**_geometry("st", st), **_geometry("pd", pad), **_geometry("dl", dil),
            **_geometry("xs", (h, w)), **_geometry("ks", kernel), "bw": blocks_w}
    window("aten::im2col", {"inp": self}, ints, [(out, _reduced)], (1,), "sum", _im2col_term,
           out.dtype.name)
    return out


def _im2col_term(B, index, rindex):
    *lead, row, col = index
    c, a, b = f"(({row}) / (ks0 * ks1))", f"((({row}) / ks1) % ks0)", f"(({row}) % ks1)"
    conditions, at = [], []
    for d, (o, k) in enumerate(((f"(({col}) / bw)", a), (f"(({col}) % bw)", b))):
        pos = f"({o} * st{d} - pd{d} + {k} * dl{d})"
        conditions += [f"{pos} >= 0", f"{pos} < xs{d}"]
        at.append(_clamp(pos, f"xs{d}"))
    return _masked(conditions, B["inp"].load((*lead, c, *at)))


def col2im(self, output_size, kernel_size, dilation, padding, stride):
    """img[.., c, y, x] = the sum of the columns whose block covers (y, x) (Note [Windows read
    backwards])."""
    spec = NN.col2im.meta(self, output_size, kernel_size, dilation, padding, stride)
    out = new_output(spec, self)
    if not out.numel():
        return out
    kernel, dil, pad, st = map(_pair, (kernel_size, dilation, padding, stride))
    size = _pair(output_size)
    blocks = [(n + 2 * p - d * (k - 1) - 1) // s + 1 for n, k, d, p, s in
              zip(size, kernel, dil, pad, st)]
    ints = {**_geometry("st", st), **_geometry("pd", pad), **_geometry("dl", dil),
            **_geometry("bs", blocks), **_geometry("ks", kernel)}
    window("aten::col2im", {"cols": self}, ints, [(out, _reduced)], tuple(kernel), "sum",
           _col2im_term, out.dtype.name)
    return out


def _col2im_term(B, index, rindex):
    *lead, c, y, x = index
    a, b = rindex
    conditions, at = [], []
    for d, (p, k) in enumerate(((y, a), (x, b))):
        t = f"({p} + pd{d} - {k} * dl{d})"
        conditions += [f"{t} >= 0", f"{t} % st{d} == 0", f"{t} / st{d} < bs{d}"]
        at.append(_clamp(f"{t} / st{d}", f"bs{d}"))
    row = f"({c} * ks0 * ks1 + {a} * ks1 + {b})"
    return _masked(conditions, B["cols"].load((*lead, row, f"({at[0]} * bs1 + {at[1]})")))


# --- pooling ------------------------------------------------------------------------------------

def _pool_ints(self, kernel, stride, padding, dilation):
    return {**_geometry("st", stride), **_geometry("pd", padding), **_geometry("dl", dilation),
            **_geometry("xs", self._shape[-2:])}


def max_pool2d_with_indices(self, kernel_size, stride=(), padding=0, dilation=1,
                            ceil_mode=False):
    """(values, indices): the first largest element of each window (a NaN wins), its index
    flat within its H x W plane, as ATen returns it."""
    specs = PL.max_pool2d_with_indices.meta(self, kernel_size, stride, padding, dilation,
                                            ceil_mode)
    values, indices = new_output(specs[0], self), new_output(specs[1], self)
    if not values.numel():
        return values, indices
    kernel, stride, padding, dilation = PL.pool2d_args("max_pool2d", kernel_size, stride,
                                                       padding, dilation)
    ints = {**_pool_ints(self, kernel, stride, padding, dilation), "ks1": kernel[1]}
    window("aten::max_pool2d_with_indices", {"inp": self}, ints,
           [(values, _window_max), (indices, _window_argmax)], tuple(kernel), "argmax",
           _pool_value, self.dtype.name)
    return values, indices


def _pool_value(B, index, rindex):
    """The window's element, or -inf outside the input (never the maximum; no padding value is
    ever returned: the meta function keeps padding under half the window)."""
    *lead, oh, ow = index
    conditions, at = [], []
    for d, (o, k) in enumerate(((oh, rindex[0]), (ow, rindex[1]))):
        pos = f"({o} * st{d} - pd{d} + {k} * dl{d})"
        conditions += [f"{pos} >= 0", f"{pos} < xs{d}"]
        at.append(_clamp(pos, f"xs{d}"))
    x = B["inp"].load((*lead, *at))
    low = ops.constant(lowest(x.dtype), x.dtype)
    return ops.where(_valid(conditions), x, low)


def _window_max(B, index):
    return ops.load("red_value", "0")


def _window_argmax(B, index):
    """The plane index of the window's argmax ``red`` (a flat kernel offset)."""
    *_, oh, ow = index
    y = ops.load("red", "0")
    return ops.index_expr(f"({oh} * st0 - pd0 + ({y} / ks1) * dl0) * xs1 + "
                          f"({ow} * st1 - pd1 + ({y} % ks1) * dl1)", "int64")


def max_pool2d_with_indices_backward(grad_output, self, kernel_size, stride, padding, dilation,
                                     ceil_mode, indices):
    """grad_input[.., y, x] = the sum of grad_output over the windows covering (y, x) whose
    index names (y, x) (Note [Windows read backwards])."""
    spec = PL.max_pool2d_with_indices_backward.meta(grad_output, self, kernel_size, stride,
                                                    padding, dilation, ceil_mode, indices)
    out = new_output(spec, self)
    if not out.numel():
        return out
    kernel, stride, padding, dilation = PL.pool2d_args("max_pool2d", kernel_size, stride,
                                                       padding, dilation)
    ints = {**_pool_ints(self, kernel, stride, padding, dilation),
            **_geometry("os", grad_output._shape[-2:])}
    window("aten::max_pool2d_with_indices_backward", {"g": grad_output, "idx": indices}, ints,
           [(out, _reduced)], tuple(kernel), "sum", _max_pool_grad_term, out.dtype.name)
    return out


def _max_pool_grad_term(B, index, rindex):
    *lead, y, x = index
    conditions, at = [], []
    for d, (p, k) in enumerate(((y, rindex[0]), (x, rindex[1]))):
        t = f"({p} + pd{d} - {k} * dl{d})"
        conditions += [f"{t} >= 0", f"{t} % st{d} == 0", f"{t} / st{d} < os{d}"]
        at.append(_clamp(f"{t} / st{d}", f"os{d}"))
    chosen = B["idx"].load((*lead, *at))
    conditions.append(f"{chosen} == {y} * xs1 + {x}")
    return _masked(conditions, B["g"].load((*lead, *at)))


def avg_pool2d(self, kernel_size, stride=(), padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    """The window's sum over the divisor ATen uses (``AvgPoolKernel.cpp``): the override, or the
    window clipped to the padded input (count_include_pad) or to the input."""
    spec = PL.avg_pool2d.meta(self, kernel_size, stride, padding, ceil_mode, count_include_pad,
                              divisor_override)
    out = new_output(spec, self)
    if not out.numel():
        return out
    kernel, stride, padding, _ = PL.pool2d_args("avg_pool2d", kernel_size, stride, padding)
    ints = {**_pool_ints(self, kernel, stride, padding, (1, 1)), **_geometry("ks", kernel),
            "divisor": int(divisor_override or 0), "with_pad": int(bool(count_include_pad))}
    window("aten::avg_pool2d", {"inp": self}, ints, [(out, _window_mean)], tuple(kernel), "sum",
           _avg_term, out.dtype.name)
    return out


def _avg_term(B, index, rindex):
    *lead, oh, ow = index
    conditions, at = [], []
    for d, (o, k) in enumerate(((oh, rindex[0]), (ow, rindex[1]))):
        pos = f"({o} * st{d} - pd{d} + {k})"
        conditions += [f"{pos} >= 0", f"{pos} < xs{d}"]
        at.append(_clamp(pos, f"xs{d}"))
    return _masked(conditions, B["inp"].load((*lead, *at)))


def _window_mean(B, index):
    *_, oh, ow = index
    counts = []
    for d, o in enumerate((oh, ow)):
        start, end = f"({o} * st{d} - pd{d})", f"min({o} * st{d} - pd{d} + ks{d}, xs{d} + pd{d})"
        clipped = f"(min({end}, xs{d}) - max({start}, 0L))"
        counts.append(f"(with_pad ? ({end} - {start}) : {clipped})")
    total = ops.load("red", "0")
    divisor = ops.index_expr(f"divisor ? divisor : {counts[0]} * {counts[1]}", total.dtype)
    return ops.truediv(total, divisor)


def _adaptive_bounds(o, d):
    """ATen's adaptive window along dim d: [floor(o * in / out), ceil((o + 1) * in / out))."""
    return f"(({o}) * xs{d} / os{d})", f"((({o}) + 1) * xs{d} + os{d} - 1) / os{d}"


def _adaptive_value(B, index, rindex, low):
    """The window's element at offset rindex, or ``low`` past the window's end (windows of one
    pooling differ in size by one: the loop covers the largest)."""
    *lead, oh, ow = index
    conditions, at = [], []
    for d, (o, k) in enumerate(((oh, rindex[0]), (ow, rindex[1]))):
        start, end = _adaptive_bounds(o, d)
        pos = f"({start} + {k})"
        conditions.append(f"{pos} < {end}")
        at.append(_clamp(pos, f"xs{d}"))
    x = B["inp"].load((*lead, *at))
    return ops.where(_valid(conditions), x, ops.constant(low, x.dtype))


def _adaptive_sum_term(B, index, rindex):
    return _adaptive_value(B, index, rindex, 0)


def _adaptive_max_term(B, index, rindex):
    return _adaptive_value(B, index, rindex, float("-inf"))


def _adaptive_mean(B, index):
    *_, oh, ow = index
    sizes = []
    for d, o in enumerate((oh, ow)):
        start, end = _adaptive_bounds(o, d)
        sizes.append(f"({end} - {start})")
    total = ops.load("red", "0")
    return ops.truediv(total, ops.index_expr(" * ".join(sizes), total.dtype))


def _adaptive_argmax(B, index):
    """The plane index of the window's argmax ``red`` (a flat offset in the largest window)."""
    *_, oh, ow = index
    y = ops.load("red", "0")
    starts = [_adaptive_bounds(o, d)[0] for d, o in enumerate((oh, ow))]
    return ops.index_expr(f"({starts[0]} + {y} / ks1) * xs1 + {starts[1]} + {y} % ks1",
                          "int64")


def _adaptive(self, output_size):
    """The window geometry of an adaptive pooling: ints and the largest window."""
    sizes = self._shape[-2:]
    largest = tuple(-(-n // o) + 1 if o else 1 for n, o in zip(sizes, output_size))
    ints = {**_geometry("xs", sizes), **_geometry("os", output_size), "ks1": largest[1]}
    return ints, largest


def adaptive_avg_pool2d(self, output_size):
    spec = PL.adaptive_avg_pool2d.meta(self, output_size)
    out = new_output(spec, self)
    if out.numel():
        ints, largest = _adaptive(self, tuple(output_size))
        window("aten::adaptive_avg_pool2d", {"inp": self}, ints, [(out, _adaptive_mean)],
               largest, "sum", _adaptive_sum_term, out.dtype.name)
    return out


def adaptive_max_pool2d(self, output_size):
    """(values, indices): the first largest element of each adaptive window (a NaN wins)."""
    specs = PL.adaptive_max_pool2d.meta(self, output_size)
    values, indices = new_output(specs[0], self), new_output(specs[1], self)
    if values.numel():
        ints, largest = _adaptive(self, tuple(output_size))
        window("aten::adaptive_max_pool2d", {"inp": self}, ints,
               [(values, _window_max), (indices, _adaptive_argmax)], largest, "argmax",
               _adaptive_max_term, self.dtype.name)
    return values, indices


# --- batch norm ---------------------------------------------------------------------------------

def native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps):
    """Training: the per-channel mean and biased variance (one row reduction over N and the
    spatial dims), the running statistics updated in place with the unbiased variance, then one
    pointwise kernel. Evaluation: the running statistics normalise; the saved ones are empty."""
    out_spec, stats_spec, _ = NO.native_batch_norm.meta(input, weight, bias, running_mean,
                                                        running_var, training, momentum, eps)
    rt = runtime_of(input)
    c = opmath(stats_spec.dtype)       # half statistics: kept in float, returned rounded
    channels = input._shape[1]
    view = (1, channels) + (1,) * (input.ndim - 2)
    if training:
        mean, invstd, var = (rt.empty((channels,), (1,), c) for _ in range(3))
        outputs = [(mean, "mu"), (invstd, "rstd"), (var, "var")]
        saved = (mean, invstd)
        if c is not stats_spec.dtype:
            saved = tuple(rt.empty((channels,), (1,), stats_spec.dtype) for _ in range(2))
            outputs += [(saved[0], "mu"), (saved[1], "rstd")]
        reduce("aten::native_batch_norm", "meanvar", input,
               [0] + list(range(2, input.ndim)), False, c, outputs, eps=float(eps))
        n = input.numel() // max(channels, 1)
        for stat, fresh, scale in ((running_mean, mean, 1.0), (running_var, var,
                                                               n / (n - 1) if n > 1 else
                                                               float("inf"))):
            if stat is not None:
                pointwise("aten::native_batch_norm", _running_update,
                          [(stat, c), (fresh, c), (float(momentum), c), (scale, c)], stat)
    else:
        mean = running_mean
        invstd = pointwise("aten::native_batch_norm", _inverse_std,
                           [(running_var, c), (float(eps), c)],
                           rt.empty((channels,), (1,), c))
        saved = tuple(rt.empty((0,), (1,), stats_spec.dtype) for _ in range(2))
    operands = [(input, c), (mean.view(view), c), (invstd.view(view), c)]
    operands += [(t.view(view), c) for t in (weight, bias) if t is not None]
    affine = (weight is not None, bias is not None)
    out = pointwise("aten::native_batch_norm", _NORMALIZE[affine], operands,
                    new_output(out_spec, input))
    return out, saved[0], saved[1]


def _running_update(stat, fresh, momentum, scale):
    keep = ops.sub(ops.constant(1, momentum.dtype), momentum)
    return ops.add(ops.mul(keep, stat), ops.mul(momentum, ops.mul(fresh, scale)))


def _inverse_std(var, eps):
    return ops.rsqrt(ops.add(var, eps))


def kernels() -> dict:
    return {NN.convolution: convolution, NN.im2col: im2col, NN.col2im: col2im,
            PL.max_pool2d_with_indices: max_pool2d_with_indices,
            PL.max_pool2d_with_indices_backward: max_pool2d_with_indices_backward,
            PL.avg_pool2d: avg_pool2d, NO.native_batch_norm: native_batch_norm,
            PL.adaptive_avg_pool2d: adaptive_avg_pool2d,
            PL.adaptive_max_pool2d: adaptive_max_pool2d}

