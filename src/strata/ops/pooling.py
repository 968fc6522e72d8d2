"""Pooling: max/avg pooling with PyTorch's window arithmetic, and adaptive pooling.

The 2-d ops are primitives; the 1-d ones decompose into them over an unsqueezed height of 1, as in
PyTorch's ``MaxPooling.cpp``/``AveragePool.cpp``, but keep their own argument checks and messages.
Output sizes follow ``pooling_output_shape`` (``aten/src/ATen/native/Pool.h``): with
``ceil_mode`` a last partial window counts only if it starts inside the (left-padded) input.
"""

import math

from ..core import dtype as D
from . import factory, reductions, scatter
from . import meta_rules as R
from . import pointwise as P
from . import shape as S
from .linalg import CTYPE
from .nn import constant_pad_nd, fmt, not_implemented
from .op import TensorSpec, defop, register_decomposition


def pool_output_size(size, kernel, pad, stride, dilation, ceil_mode):
    """``pooling_output_shape``, with its checks."""
    if stride == 0:
        raise RuntimeError("stride should not be zero")
    if pad < 0:
        raise RuntimeError(f"pad must be non-negative, but got pad: {pad}")
    if pad > ((kernel - 1) * dilation + 1) // 2:
        raise RuntimeError(f"pad should be at most half of effective kernel size, but got "
                           f"pad={pad}, kernel_size={kernel} and dilation={dilation}")
    span = size + 2 * pad - dilation * (kernel - 1) - 1 + (stride - 1 if ceil_mode else 0)
    out = span // stride + 1
    if ceil_mode and (out - 1) * stride >= size + pad:
        out -= 1
    return out


def _unpack(op, name, value, allow_empty=False):
    value = (value,) if isinstance(value, int) else tuple(value)
    if allow_empty and not value:
        return None
    if len(value) not in (1, 2):
        if name == "stride":
            raise RuntimeError(f"{op}: stride must either be omitted, a single int, or a tuple of "
                               f"two ints")
        verb = "be either" if name == "dilation" else "either be"
        raise RuntimeError(f"{op}: {name} must {verb} a single int, or a tuple of two ints")
    return value * 2 if len(value) == 1 else value


def pool2d_args(op, kernel_size, stride, padding, dilation=(1,)):
    kernel = _unpack(op, "kernel_size", kernel_size)
    stride = _unpack(op, "stride", stride, allow_empty=True) or kernel
    return kernel, stride, _unpack(op, "padding", padding), _unpack(op, "dilation", dilation)


def _pool2d_shape_check(self, kernel, stride, padding, dilation, out):
    if min(kernel) <= 0:
        raise RuntimeError(f"kernel size should be greater than zero, but got kH: {kernel[0]} "
                           f"kW: {kernel[1]}")
    if min(stride) <= 0:
        raise RuntimeError(f"stride should be greater than zero, but got dH: {stride[0]} dW: "
                           f"{stride[1]}")
    if min(dilation) <= 0:
        raise RuntimeError(f"dilation should be greater than zero, but got dilationH: "
                           f"{dilation[0]} dilationW: {dilation[1]}")
    shape = tuple(self.shape)
    if not ((self.ndim == 3 and all(shape)) or (self.ndim == 4 and all(shape[1:]))):
        raise RuntimeError(f"Expected 3D or 4D (batch mode) tensor with optional 0 dim batch "
                           f"size for input, but got:{fmt(shape)}")
    if kernel[1] // 2 < padding[1] or kernel[0] // 2 < padding[0]:
        raise RuntimeError(f"pad should be smaller than or equal to half of kernel size, but got "
                           f"padW = {padding[1]}, padH = {padding[0]}, kW = {kernel[1]}, "
                           f"kH = {kernel[0]}")
    if min(out) < 1:
        c, h, w = shape[-3:]
        raise RuntimeError(f"Given input size: ({c}x{h}x{w}). Calculated output size: ({c}x"
                           f"{out[0]}x{out[1]}). Output size is too small")


def _max_pool2d_meta(self, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    if self.ndim not in (3, 4):
        raise RuntimeError("non-empty 3D or 4D (batch mode) tensor expected for input")
    kernel, stride, padding, dilation = pool2d_args("max_pool2d", kernel_size, stride, padding,
                                                    dilation)
    out = tuple(pool_output_size(n, k, p, s, d, ceil_mode) for n, k, p, s, d in
                zip(self.shape[-2:], kernel, padding, stride, dilation))
    _pool2d_shape_check(self, kernel, stride, padding, dilation, out)
    if self.dtype is D.bool_:
        not_implemented("max_pool2d", self.dtype)
    shape = tuple(self.shape[:-2]) + out
    return TensorSpec(shape, self.dtype), TensorSpec(shape, D.int64)


def _max_pool2d_backward_meta(grad_output, self, kernel_size, stride, padding, dilation,
                              ceil_mode, indices):
    """``max_pool2d_with_indices_backward``: the input's gradient, checked as
    ``max_pool2d_backward_shape_check`` (``Pool.h``) checks it."""
    out, _ = _max_pool2d_meta(self, kernel_size, stride, padding, dilation, ceil_mode)
    if grad_output.dtype is not self.dtype:
        raise RuntimeError(f"expected dtype {CTYPE[self.dtype]} for `gradOutput` but got dtype "
                           f"{CTYPE[grad_output.dtype]}")
    for t in (grad_output, indices):   # check_dim_size, on the plane, height and width
        for d in range(self.ndim - 3, self.ndim):
            if t.ndim != self.ndim or t.shape[d] != out.shape[d]:
                raise RuntimeError(f"Expected a tensor of dimension {self.ndim} and tensor.size"
                                   f"[{d}] == {out.shape[d]} but got: dimension {t.ndim} and "
                                   f"tensor.size[{d}] = {t.shape[d]}")
    return TensorSpec(tuple(self.shape), self.dtype)


def _avg_pool2d_meta(self, kernel_size, stride=(), padding=0, ceil_mode=False,
                     count_include_pad=True, divisor_override=None):
    kernel, stride, padding, _ = pool2d_args("avg_pool2d", kernel_size, stride, padding)
    if self.dtype.category != D.FLOATING and self.dtype is not D.int64:
        not_implemented("avg_pool2d", self.dtype)
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    for d in (-3, -2, -1):   # PyTorch reads the plane/height/width sizes first
        if self.ndim < -d:
            raise IndexError(f"Dimension out of range (expected to be in range of "
                             f"[{-max(self.ndim, 1)}, {max(self.ndim, 1) - 1}], but got {d})")
    out = tuple(pool_output_size(n, k, p, s, 1, ceil_mode) for n, k, p, s in
                zip(self.shape[-2:], kernel, padding, stride))
    _pool2d_shape_check(self, kernel, stride, padding, (1, 1), out)
    return TensorSpec(tuple(self.shape[:-2]) + out, self.dtype)


def _adaptive_checks(name, self, output_size, suffix=""):
    output_size = tuple(output_size)
    if self.ndim not in (3, 4):
        raise RuntimeError(f"{name}(): Expected 3D or 4D tensor, but got{suffix} "
                           f"{fmt(self.shape)}")
    return output_size


def _adaptive_avg_meta(self, output_size):
    output_size = tuple(output_size)
    if len(output_size) != 2:
        raise RuntimeError("adaptive_avg_pool2d: output_size must be 2")
    if min(output_size) < 0:
        raise RuntimeError(f"adaptive_avg_pool2d: elements of output_size must be greater than or "
                           f"equal to 0 but received {{{output_size[0]}, {output_size[1]}}}")
    _adaptive_checks("adaptive_avg_pool2d", self, output_size)
    for d in (-2, -1):
        if self.shape[d] == 0:
            raise RuntimeError(f"adaptive_avg_pool2d(): Expected input to have non-zero size for "
                               f"non-batch dimensions, but input has sizes {fmt(self.shape)} with "
                               f"dimension {d + self.ndim} being empty")
    if self.dtype.category != D.FLOATING:
        not_implemented("adaptive_avg_pool2d", self.dtype)
    return TensorSpec(tuple(self.shape[:-2]) + output_size, self.dtype)


def _adaptive_max_meta(self, output_size):
    output_size = _adaptive_checks("adaptive_max_pool2d", self, output_size, ":")
    for i in range(1, self.ndim):
        if self.shape[i] == 0:
            raise RuntimeError(f"adaptive_max_pool2d(): Expected input to have non-zero size for "
                               f"non-batch dimensions, but input has sizes {fmt(self.shape)} with "
                               f"dimension {i} being empty")
    if len(output_size) != 2:
        raise RuntimeError("adaptive_max_pool2d(): internal error: output_size.size() must be 2")
    shape = tuple(self.shape[:-2]) + output_size
    if min(output_size) < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension "
                           f"{min(output_size)}: {fmt(shape)}")
    if self.dtype.category != D.FLOATING:
        not_implemented("adaptive_max_pool2d", self.dtype)
    return TensorSpec(shape, self.dtype), TensorSpec(shape, D.int64)


max_pool2d_with_indices = defop(
    "max_pool2d_with_indices(Tensor self, int[2] kernel_size, int[2] stride=[], "
    "int[2] padding=0, int[2] dilation=1, bool ceil_mode=False) -> (Tensor, Tensor)",
    _max_pool2d_meta)
max_pool2d_with_indices_backward = defop(
    "max_pool2d_with_indices_backward(Tensor grad_output, Tensor self, int[2] kernel_size, "
    "int[2] stride, int[2] padding, int[2] dilation, bool ceil_mode, Tensor indices) -> Tensor",
    _max_pool2d_backward_meta)
avg_pool2d = defop("avg_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], "
                   "int[2] padding=0, bool ceil_mode=False, bool count_include_pad=True, "
                   "int? divisor_override=None) -> Tensor", _avg_pool2d_meta)
adaptive_avg_pool2d = defop("adaptive_avg_pool2d(Tensor self, SymInt[2] output_size) -> Tensor",
                            _adaptive_avg_meta)
adaptive_max_pool2d = defop("adaptive_max_pool2d(Tensor self, int[2] output_size) -> "
                            "(Tensor, Tensor)", _adaptive_max_meta)

# --- composites -----------------------------------------------------------------------------------
max_pool2d = defop("max_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], "
                   "int[2] padding=0, int[2] dilation=1, bool ceil_mode=False) -> Tensor",
                   function=True)
max_pool1d = defop("max_pool1d(Tensor self, int[1] kernel_size, int[1] stride=[], "
                   "int[1] padding=[0], int[1] dilation=[1], bool ceil_mode=False) -> Tensor",
                   function=True)
max_pool1d_with_indices = defop(
    "max_pool1d_with_indices(Tensor self, int[1] kernel_size, int[1] stride=[], "
    "int[1] padding=[0], int[1] dilation=[1], bool ceil_mode=False) -> (Tensor, Tensor)")
avg_pool1d = defop("avg_pool1d(Tensor self, int[1] kernel_size, int[1] stride=[], "
                   "int[1] padding=[0], bool ceil_mode=False, bool count_include_pad=True) -> "
                   "Tensor", function=True)
adaptive_avg_pool1d = defop("adaptive_avg_pool1d(Tensor self, int[1] output_size) -> Tensor",
                            function=True)
adaptive_max_pool1d = defop("adaptive_max_pool1d(Tensor self, int[1] output_size) -> "
                            "(Tensor, Tensor)", function=True)


@register_decomposition(max_pool2d)
def _max_pool2d(self, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    return max_pool2d_with_indices(self, kernel_size, stride, padding, dilation, ceil_mode)[0]


def _as_list(value):
    return [value] if isinstance(value, int) else list(value)


def _check_dim_range(name, self):
    """PyTorch's ``checkDimRange(..., 2, 4)`` for the 1-d pooling ops."""
    if self.ndim not in (2, 3):
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {self.ndim}-dimensional tensor "
                           f"for argument #1 'self' (while checking arguments for {name})")


def _check1d(name, arg, value):
    if len(value) != 1:
        raise RuntimeError(f"{name}() argument '{arg}' should contain one int (got {len(value)})")


def _pool1d_as_2d(self, kernel, stride, padding, dilation, ceil_mode):
    values, indices = max_pool2d_with_indices(S.unsqueeze(self, -2), [1, kernel[0]],
                                              [1, stride[0]], [0, padding[0]],
                                              [1, dilation[0]], ceil_mode)
    return S.squeeze(values, -2), S.squeeze(indices, -2)


@register_decomposition(max_pool1d_with_indices)
def _max_pool1d_with_indices(self, kernel_size, stride=(), padding=(0,), dilation=(1,),
                             ceil_mode=False):
    _check_dim_range("max_pool1d", self)
    kernel = _as_list(kernel_size)
    stride = _as_list(stride) or kernel
    return _pool1d_as_2d(self, kernel, stride, _as_list(padding), _as_list(dilation), ceil_mode)


@register_decomposition(max_pool1d)
def _max_pool1d(self, kernel_size, stride=(), padding=(0,), dilation=(1,), ceil_mode=False):
    """``max_pool1d`` keeps its own messages (``MaxPooling.cpp``), then pools as 2-d."""
    kernel, stride = _as_list(kernel_size), _as_list(stride)
    padding, dilation = _as_list(padding), _as_list(dilation)
    shape = tuple(self.shape)
    if not ((self.ndim == 2 and shape[-1] and shape[0]) or (self.ndim == 3 and all(shape[1:]))):
        raise RuntimeError(f"max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 "
                           f"dim batch size for input, but got:{fmt(shape)}")
    for arg, value, choices in (("kernel_size", kernel, "an int, list of ints or tuple of ints"),
                                ("stride", stride, "None, an int, list of ints, or tuple of ints"),
                                ("padding", padding, "an int, list of ints, or tuple of ints"),
                                ("dilation", dilation, "an int, list of ints or tuple of ints")):
        if len(value) != 1 and not (arg == "stride" and not value):
            raise RuntimeError(f"max_pool1d() {arg} must be {choices} of size 1 but got size "
                               f"{len(value)}")
    stride = stride or kernel
    k, s, p, d = kernel[0], stride[0], padding[0], dilation[0]
    if k <= 0:
        raise RuntimeError(f"max_pool1d() kernel_size must be greater than zero, but got {k}")
    if s <= 0:
        raise RuntimeError(f"max_pool1d() stride must be greater than zero, but got {s}")
    if p < 0:
        raise RuntimeError(f"max_pool1d() padding must be non-negative, but got {p}")
    if p > k // 2:
        raise RuntimeError(f"max_pool1d() padding should be at most half of kernel size, but got "
                           f"padding={p} and kernel_size={k}")
    if d <= 0:
        raise RuntimeError(f"max_pool1d() dilation must be greater than zero, but got {d}")
    span = shape[-1] + 2 * p - d * (k - 1) - 1
    out = (span + (s - 1 if ceil_mode else 0)) // s + 1
    if ceil_mode and (out - 1) * s >= shape[-1] + p:
        out -= 1
    if out < 1:
        raise RuntimeError(f"max_pool1d() Invalid computed output size: {out}")
    if self.dtype.category != D.FLOATING:
        not_implemented("max_pool1d_impl", self.dtype)
    return _pool1d_as_2d(self, [k], [s], [p], [d], ceil_mode)[0]


@register_decomposition(avg_pool1d)
def _avg_pool1d(self, kernel_size, stride=(), padding=(0,), ceil_mode=False,
                count_include_pad=True):
    kernel, stride, padding = _as_list(kernel_size), _as_list(stride), _as_list(padding)
    _check1d("avg_pool1d", "kernel_size", kernel)
    if stride:
        _check1d("avg_pool1d", "stride", stride)
    _check1d("avg_pool1d", "padding", padding)
    _check_dim_range("avg_pool1d", self)
    stride = stride or kernel
    out = avg_pool2d(S.unsqueeze(self, -2), [1, kernel[0]], [1, stride[0]], [0, padding[0]],
                     ceil_mode, count_include_pad)
    return S.squeeze(out, -2)


@register_decomposition(adaptive_avg_pool1d)
def _adaptive_avg_pool1d(self, output_size):
    _check_dim_range("adaptive_avg_pool1d", self)
    output_size = _as_list(output_size)
    _check1d("adaptive_avg_pool1d", "output_size", output_size)
    return S.squeeze(adaptive_avg_pool2d(S.unsqueeze(self, -2), [1, output_size[0]]), -2)


@register_decomposition(adaptive_max_pool1d)
def _adaptive_max_pool1d(self, output_size):
    _check_dim_range("adaptive_max_pool1d", self)
    output_size = _as_list(output_size)
    _check1d("adaptive_max_pool1d", "output_size", output_size)
    for i in range(1, self.ndim):
        if self.shape[i] == 0:
            raise RuntimeError(f"adaptive_max_pool1d(): Expected input to have non-zero size for "
                               f"non-batch dimensions, but input has sizes {fmt(self.shape)} with "
                               f"dimension {i} being empty")
    values, indices = adaptive_max_pool2d(S.unsqueeze(self, -2), [1, output_size[0]])
    return S.squeeze(values, -2), S.squeeze(indices, -2)



# --- 3-d pooling, as decompositions over sliding windows (``unfold`` views) ---------------------
max_pool3d_with_indices = defop(
    "max_pool3d_with_indices(Tensor self, int[3] kernel_size, int[3] stride=[], "
    "int[3] padding=0, int[3] dilation=1, bool ceil_mode=False) -> (Tensor, Tensor)")
max_pool3d = defop("max_pool3d(Tensor self, int[3] kernel_size, int[3] stride=[], "
                   "int[3] padding=0, int[3] dilation=1, bool ceil_mode=False) -> Tensor",
                   function=True)
avg_pool3d = defop("avg_pool3d(Tensor self, int[3] kernel_size, int[3] stride=[], "
                   "int[3] padding=0, bool ceil_mode=False, bool count_include_pad=True, "
                   "int? divisor_override=None) -> Tensor")


def _triple(value, name):
    values = [value] * 3 if isinstance(value, int) else list(value)
    if len(values) == 1:
        values *= 3
    if len(values) != 3:
        raise RuntimeError(f"{name} must either be a single int, or a tuple of three ints")
    return values


def _pool3d_geometry(self, kernel_size, stride, padding, dilation, ceil_mode):
    """Checked arguments and output sizes (``pool3d_shape_check``)."""
    if self.ndim not in (4, 5) or self.numel() == 0 and self.ndim == 4:
        raise RuntimeError("non-empty 4D or 5D (batch mode) tensor expected for input")
    kernel = _triple(kernel_size, "max_pool3d: kernel_size")
    stride = _triple(stride, "max_pool3d: stride") if stride else kernel
    padding = _triple(padding, "max_pool3d: padding")
    dilation = _triple(dilation, "max_pool3d: dilation")
    sizes = self.shape[-3:]
    out = [pool_output_size(n, k, p, s, d, ceil_mode)
           for n, k, p, s, d in zip(sizes, kernel, padding, stride, dilation)]
    if min(out) < 1:
        shown = lambda dims: "x".join(map(str, dims))  # noqa: E731
        raise RuntimeError(f"Given input size: ({shown(self.shape[-4:])}). Calculated output "
                           f"size: ({shown([self.shape[-4]] + out)}). Output size is too small")
    return kernel, stride, padding, dilation, out


def _windows(x, kernel, stride, padding, dilation, out, pad_value, overflow_value):
    """(N, C, oD, oH, oW, kd*kh*kw): every pooling window of the 5-d ``x``, padded by
    ``pad_value`` and, past the padding (ceil mode), by ``overflow_value``."""
    spans = [d * (k - 1) + 1 for k, d in zip(kernel, dilation)]
    needed = [(o - 1) * s + span for o, s, span in zip(out, stride, spans)]
    if any(padding):   # F.pad order: the last dim first
        x = constant_pad_nd(x, [w for p in reversed(padding) for w in (p, p)], pad_value)
    extra = [max(0, n - size) for n, size in zip(needed, x.shape[2:])]
    if any(extra):
        x = constant_pad_nd(x, [w for e in reversed(extra) for w in (0, e)], overflow_value)
    for i, (s, d, span, n) in enumerate(zip(stride, dilation, spans, needed)):
        x = S.slice(S.unfold(S.slice(x, 2 + i, 0, n), 2 + i, span, s), -1, 0, span, d)
    return S.flatten(x, -3, -1)


@register_decomposition(max_pool3d_with_indices)
def _max_pool3d_with_indices(self, kernel_size, stride=(), padding=0, dilation=1,
                             ceil_mode=False):
    """The max of each window and its index in the flattened (D, H, W) input; the gradient
    reaches that one element, as PyTorch's."""
    kernel, stride, padding, dilation, out = _pool3d_geometry(self, kernel_size, stride,
                                                              padding, dilation, ceil_mode)
    batched = self.ndim == 5
    x = self if batched else S.unsqueeze(self, 0)
    inf = float("-inf") if self.dtype.category == D.FLOATING else D.iinfo(self.dtype).min
    windows = _windows(x, kernel, stride, padding, dilation, out, inf, inf)
    where = reductions.argmax(windows, -1, True)
    values = S.squeeze(scatter.gather(windows, -1, where), [-1])
    offsets = S.squeeze(where, [-1])
    kd, kh, kw = kernel
    coords = []
    for i, (size, first) in enumerate(zip((kd, kh, kw), out)):
        inner = kh * kw if i == 0 else kw if i == 1 else 1
        step = P.remainder(P.div_mode(offsets, inner, "floor"), size)
        start = P.sub(P.mul(S.view(_arange_like(first, self), [-1] + [1] * (2 - i)), stride[i]),
                      padding[i])
        coords.append(P.add(start, P.mul(step, dilation[i])))
    H, W = self.shape[-2:]
    index = P.add(P.mul(P.add(P.mul(coords[0], H), coords[1]), W), coords[2])
    if not batched:
        values, index = S.squeeze(values, [0]), S.squeeze(index, [0])
    return values, index


def _arange_like(n, like):
    return factory.arange(0, n, dtype=D.int64, device=like.device)


@register_decomposition(max_pool3d)
def _max_pool3d(self, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    return max_pool3d_with_indices(self, kernel_size, stride, padding, dilation, ceil_mode)[0]


@register_decomposition(avg_pool3d)
def _avg_pool3d(self, kernel_size, stride=(), padding=0, ceil_mode=False,
                count_include_pad=True, divisor_override=None):
    """Window sums over the window's count: its padded size (``count_include_pad``) or its
    input elements, never the part past the padding that ceil mode adds."""
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    kernel, stride, padding, dilation, out = _pool3d_geometry(self, kernel_size, stride,
                                                              padding, 1, ceil_mode)
    batched = self.ndim == 5
    x = self if batched else S.unsqueeze(self, 0)
    total = reductions.sum(_windows(x, kernel, stride, padding, dilation, out, 0, 0), [-1])
    if divisor_override is not None:
        result = P.div(total, divisor_override)
    else:
        ones = factory.full((1, 1) + tuple(x.shape[2:]), 1, dtype=x.dtype, device=x.device)
        count = reductions.sum(_windows(ones, kernel, stride, padding, dilation, out,
                                        1 if count_include_pad else 0, 0), [-1])
        result = P.div(total, count)
    return result if batched else S.squeeze(result, [0])


# --- max unpooling: the partial inverse of max pooling, a scatter --------------------------------
max_unpool2d = defop("max_unpool2d(Tensor self, Tensor indices, SymInt[2] output_size) -> Tensor")
max_unpool3d = defop("max_unpool3d(Tensor self, Tensor indices, SymInt[3] output_size, "
                     "int[3] stride, int[3] padding) -> Tensor")


def _max_unpool(self, indices, output_size, dims):
    """Each value written at its index in the flattened (zeroed) output plane(s)."""
    if indices.dtype is not D.int64:
        raise RuntimeError(f"elements in indices should be type int64 but got: "
                           f"{R.type_name(indices.dtype)}")
    if tuple(indices.shape) != tuple(self.shape):
        raise RuntimeError(f"Expected shape of indices to be same as that of the input tensor "
                           f"({fmt(self.shape)}) but got indices tensor with shape: "
                           f"{fmt(indices.shape)}")
    if self.ndim not in (dims + 1, dims + 2):
        raise RuntimeError(f"Input to max_unpooling{dims}d should be a {dims + 1}d or "
                           f"{dims + 2}d Tensor, but got a tensor with {self.ndim} dimensions.")
    batched = self.ndim == dims + 2
    x = self if batched else S.unsqueeze(self, 0)
    idx = indices if batched else S.unsqueeze(indices, 0)
    volume = 1
    for n in output_size:
        volume *= n
    flat_idx = S.flatten(idx, 2, -1)
    if flat_idx.numel() and (reductions.max(flat_idx).item() >= volume or
                             reductions.min(flat_idx).item() < 0):
        bad = flat_idx[P.logical_or(P.ge(flat_idx, volume), P.lt(flat_idx, 0))][0].item()
        raise RuntimeError(f"Found an invalid max index: {bad} (output volumes are of size "
                           f"{'x'.join(map(str, output_size))})")
    out = factory.full(tuple(x.shape[:2]) + (volume,), 0, dtype=x.dtype, device=x.device)
    out = scatter.scatter(out, 2, flat_idx, S.flatten(x, 2, -1))
    out = S.view(out, tuple(x.shape[:2]) + tuple(output_size))
    return out if batched else S.squeeze(out, [0])


@register_decomposition(max_unpool2d)
def _max_unpool2d(self, indices, output_size):
    return _max_unpool(self, indices, list(output_size), 2)


@register_decomposition(max_unpool3d)
def _max_unpool3d(self, indices, output_size, stride, padding):
    return _max_unpool(self, indices, list(output_size), 3)



# --- adaptive 3-d pooling: separable, (H, W) by the 2-d op, then D by the 1-d one --------------
adaptive_avg_pool3d = defop("adaptive_avg_pool3d(Tensor self, SymInt[3] output_size) -> Tensor")
adaptive_max_pool3d = defop("adaptive_max_pool3d(Tensor self, int[3] output_size) -> "
                            "(Tensor, Tensor)")


def _adaptive3d_checks(name, self, output_size):
    """ATen's checks, in its order for each op (the max op checks its input first)."""
    output_size = list(output_size)
    if name == "adaptive_avg_pool3d":
        if len(output_size) != 3:
            raise RuntimeError(f"{name}: output_size must be 3")
        if min(output_size) < 0:
            raise RuntimeError(f"{name}: elements of output_size must be greater than or equal "
                               f"to 0 but received {{{output_size[0]}, {output_size[1]},"
                               f"{output_size[2]}}}")
    if self.ndim not in (4, 5):
        got = "got:" if name == "adaptive_max_pool3d" else "got"
        raise RuntimeError(f"{name}(): Expected 4D or 5D tensor, but {got} {fmt(self.shape)}")
    for i in range(self.ndim - 4, self.ndim):
        if i > 0 and self.shape[i] == 0:
            raise RuntimeError(f"{name}(): Expected input to have non-zero size for non-batch "
                               f"dimensions, but input has sizes {fmt(self.shape)} with "
                               f"dimension {i} being empty")
    if len(output_size) != 3:
        raise RuntimeError(f"{name}(): internal error: output_size.size() must be 3")
    if min(output_size) < 0:
        shape = tuple(self.shape[:-3]) + tuple(output_size)
        raise RuntimeError(f"Trying to create tensor with negative dimension "
                           f"{min(output_size)}: {fmt(shape)}")
    if self.dtype.category != D.FLOATING:
        not_implemented(f"{name}_cpu", self.dtype)
    return output_size


def _depth_last(x, batch, out_hw):
    """(B, d, H, W) -> (B, H*W, d): depth becomes the 1-d pooling axis."""
    return S.reshape(S.permute(x, [0, 2, 3, 1]), [batch, out_hw[0] * out_hw[1], x.shape[1]])


def _depth_back(x, lead, out):
    """(B, H*W, D) -> (*lead, D, H, W)."""
    x = S.permute(S.reshape(x, [x.shape[0], out[1], out[2], out[0]]), [0, 3, 1, 2])
    return S.reshape(x, list(lead) + list(out))


@register_decomposition(adaptive_avg_pool3d)
def _adaptive_avg_pool3d(self, output_size):
    """A box mean is the mean over depth of the means over (h, w)."""
    out = _adaptive3d_checks("adaptive_avg_pool3d", self, output_size)
    *lead, d, h, w = self.shape
    batch = math.prod(lead)
    planes = adaptive_avg_pool2d(S.reshape(self, [batch, d, h, w]), out[1:])
    return _depth_back(adaptive_avg_pool1d(_depth_last(planes, batch, out[1:]), out[:1]),
                       lead, out)


@register_decomposition(adaptive_max_pool3d)
def _adaptive_max_pool3d(self, output_size):
    """The box max is the max over depth of the (h, w) maxima; the first maximum in (d, h, w)
    order is in the first depth that holds it, at its first (h, w) there, as ATen's scan."""
    out = _adaptive3d_checks("adaptive_max_pool3d", self, output_size)
    *lead, d, h, w = self.shape
    batch = math.prod(lead)
    values, plane_index = adaptive_max_pool2d(S.reshape(self, [batch, d, h, w]), out[1:])
    values, depth = adaptive_max_pool1d(_depth_last(values, batch, out[1:]), out[:1])
    within = scatter.gather(_depth_last(plane_index, batch, out[1:]), -1, depth)
    index = P.add(P.mul(depth, h * w), within)
    return _depth_back(values, lead, out), _depth_back(index, lead, out)
