"""Derivatives of the nn op files (``ops/nn.py``, ``nn_composites.py``, ``dense.py``,
``normalization.py``, ``pooling.py``): convolution by convolutions, windows by col2im/im2col,
padding and upsampling by index_add along each dim, pooling by scatter, norms by their closed
forms."""

import math

import numpy as np

from ... import creation
from ..._tensor import make_sparse
from ...core import dtype as D
from ...ops import dense as DN
from ...ops import factory as F
from ...ops import linalg as L
from ...ops import nn as NN
from ...ops import nn_composites as NC
from ...ops import normalization as NO
from ...ops import pointwise as P
from ...ops import pooling as PL
from ...ops import reductions as RD
from ...ops import scatter as SC
from ...ops import shape as S
from ..grad_mode import is_grad_enabled
from . import derivative, not_implemented, zeros


def _index(values, like):
    return creation.tensor(np.asarray(values, dtype=np.int64), device=like.device)


def _weights(values, like):
    return creation.tensor(np.asarray(values, dtype=np.float64), device=like.device).to(like.dtype)


def _gather_back(grad, dim, src, size, weights=None):
    """Adjoint of "output position o reads input position src[o] (times weights[o])" along
    ``dim``: add each output gradient into its source position."""
    shape = list(grad._shape)
    shape[dim] = size
    if weights is not None:
        view = [1] * grad.ndim
        view[dim] = len(weights)
        grad = P.mul(grad, S.view(_weights(weights, grad), view))
    return SC.index_add_(zeros(shape, grad), dim, _index(src, grad), grad)


# --- convolution ----------------------------------------------------------------------------------
def _narrow_spatial(x, sizes):
    for i, n in enumerate(sizes):
        if x._shape[2 + i] != n:
            x = S.slice(x, 2 + i, 0, n)
    return x


class _Shape:
    """Stands in for the weight in ``conv_params``, which reads only its ``ndim``."""

    def __init__(self, shape):
        self.ndim = len(shape)


@derivative(NN.convolution, "ConvolutionBackward0", save=("input if weight", "weight if input"))
def _convolution(ctx, grad):
    """Input: the transposed convolution of the gradient (and vice versa). Weight: a
    convolution of the input with the gradient as the kernel, batch and channels swapped and
    stride/dilation exchanged; groups become blocks of the channel dim."""
    w_shape, x_shape = ctx.sizes("weight"), ctx.sizes("input")
    stride, padding, dilation, _ = NN.conv_params(
        _Shape(w_shape), ctx.stride, ctx.padding, ctx.dilation, ctx.output_padding)
    groups, transposed = ctx.groups, ctx.transposed
    spatial, kernel = x_shape[2:], w_shape[2:]
    g_in = g_w = g_b = None
    if ctx.needs[0]:
        w = ctx.weight
        if transposed:
            g_in = NN.convolution(grad, w, None, stride, padding, dilation, False,
                                  [0] * len(spatial), groups)
            g_in = _narrow_spatial(g_in, spatial)
        else:
            out = grad._shape[2:]
            extra = [n - ((o - 1) * s - 2 * p + d * (k - 1) + 1) for n, o, s, p, d, k in
                     zip(spatial, out, stride, padding, dilation, kernel)]
            g_in = NN.convolution(grad, w, None, stride, padding, dilation, True, extra, groups)
    if ctx.needs[1]:
        x = ctx.input
        n = x_shape[0]
        if transposed:   # the gradient plays the input, the input the kernel
            src, ker, cg = grad, x, grad._shape[1] // groups
        else:
            src, ker, cg = x, grad, x_shape[1] // groups
        folded = S.reshape(S.permute(S.reshape(src, (n, groups, cg) + tuple(src._shape[2:])),
                                     [2, 1, 0] + list(range(3, src.ndim + 1))),
                           (cg, groups * n) + tuple(src._shape[2:]))
        g = NN.convolution(folded, S.transpose(ker, 0, 1), None, dilation, padding, stride,
                           False, [0] * len(spatial), groups)
        g_w = S.transpose(_narrow_spatial(g, kernel), 0, 1)
    if ctx.needs[2]:
        g_b = RD.sum(grad, [0] + list(range(2, grad.ndim)), False)
    return g_in, g_w, g_b


@derivative(NN.im2col, "Im2ColBackward0")
def _im2col(ctx, grad):
    return NN.col2im(grad, ctx.sizes("self")[-2:], ctx.kernel_size, ctx.dilation, ctx.padding,
                     ctx.stride)


@derivative(NN.col2im, "Col2ImBackward0")
def _col2im(ctx, grad):
    return NN.im2col(grad, ctx.kernel_size, ctx.dilation, ctx.padding, ctx.stride)


# --- padding and upsampling -----------------------------------------------------------------------
@derivative(NN.constant_pad_nd, "ConstantPadNdBackward0")
def _constant_pad_nd(ctx, grad):
    return NN.constant_pad_nd(grad, [-p for p in ctx.pad], 0)


def _mode_pad(op, mode, dims):
    numpy_mode = "reflect" if mode == "reflection" else "edge"
    name = f"{mode.capitalize()}Pad{dims}DBackward0"

    @derivative(op, name)
    def formula(ctx, grad):
        shape = ctx.sizes("self")
        pad = tuple(ctx.padding)
        for i in range(dims):
            d = len(shape) - 1 - i
            src = np.pad(np.arange(shape[d]), (pad[2 * i], pad[2 * i + 1]), mode=numpy_mode)
            grad = _gather_back(grad, d, src, shape[d])
        return grad


for (_mode, _dims), _op in NN.MODE_PADS.items():
    _mode_pad(_op, _mode, _dims)


def _upsample_name(op):
    parts = op.schema.name.strip("_").split("_")
    name = "".join(p.capitalize() for p in parts)
    return name.replace("1d", "1D").replace("2d", "2D").replace("3d", "3D") + "Backward0"


def _nearest(op, exact):
    @derivative(op, _upsample_name(op))
    def formula(ctx, grad):
        shape = ctx.sizes("self")
        scales = _scales(ctx)
        for i, (n, o) in enumerate(zip(shape[2:], ctx.output_size)):
            grad = _gather_back(grad, 2 + i, NN.nearest_source(n, o, scales[i], exact), n)
        return grad


def _scales(ctx):
    names = ctx._deriv.index
    if "scales" in names:
        return [ctx.scales]
    if "scales_d" in names:
        return [ctx.scales_d, ctx.scales_h, ctx.scales_w]
    return [ctx.scales_h, ctx.scales_w]


def _linear(op):
    @derivative(op, _upsample_name(op))
    def formula(ctx, grad):
        shape = ctx.sizes("self")
        scales = _scales(ctx)
        dtype = np.float64 if grad.dtype.itemsize == 8 else np.float32
        for i, (n, o) in enumerate(zip(shape[2:], ctx.output_size)):
            i0, i1, w0, w1 = NN.linear_taps(n, o, ctx.align_corners, scales[i], np.dtype(dtype))
            d = 2 + i
            grad = P.add(_gather_back(grad, d, i0, n, w0), _gather_back(grad, d, i1, n, w1))
        return grad


def _cubic(op):
    @derivative(op, _upsample_name(op))
    def formula(ctx, grad):
        shape = ctx.sizes("self")
        scales = _scales(ctx)
        dtype = np.dtype(np.float64 if grad.dtype.itemsize == 8 else np.float32)
        for i, (n, o) in enumerate(zip(shape[2:], ctx.output_size)):
            taps = NN.cubic_taps(n, o, ctx.align_corners, scales[i], dtype)
            parts = [_gather_back(grad, 2 + i, idx, n, w) for idx, w in taps]
            grad = P.add(P.add(parts[0], parts[1]), P.add(parts[2], parts[3]))
        return grad


_nearest(NN.upsample_nearest1d, False)
_nearest(NN.upsample_nearest2d, False)
_nearest(NN.upsample_nearest_exact1d, True)
_nearest(NN.upsample_nearest_exact2d, True)
_linear(NN.upsample_linear1d)
_linear(NN.upsample_bilinear2d)
_nearest(NN.upsample_nearest3d, False)
_linear(NN.upsample_trilinear3d)
_cubic(NN.upsample_bicubic2d)


# the shuffles are composites with rows of their own (CompositeExplicitAutograd); each one's
# gradient is the inverse shuffle
derivative(NC.pixel_shuffle, "PixelShuffleBackward0")(
    lambda ctx, grad: NC.pixel_unshuffle(grad, ctx.upscale_factor))
derivative(NC.pixel_unshuffle, "PixelUnshuffleBackward0")(
    lambda ctx, grad: NC.pixel_shuffle(grad, ctx.downscale_factor))
derivative(NC.channel_shuffle, "ChannelShuffleBackward0")(
    lambda ctx, grad: NC.channel_shuffle(grad, ctx.sizes("self")[1] // ctx.groups))


# --- dense: embedding -----------------------------------------------------------------------------
@derivative(DN.embedding, "EmbeddingBackward0", save=("indices",))
def _embedding(ctx, grad):
    """``embedding_dense_backward`` (ops/dense.py), or a sparse gradient."""
    num = ctx.sizes("weight")[0]
    if ctx.sparse:
        dim = ctx.sizes("weight")[1]
        return _embedding_sparse_backward(ctx, S.reshape(ctx.indices, (-1,)),
                                          S.reshape(grad, (-1, dim)), num), None
    padding_idx = -1 if ctx.padding_idx is None else ctx.padding_idx
    return DN.embedding_dense_backward(grad, ctx.indices, num, padding_idx,
                                       ctx.scale_grad_by_freq), None


@derivative(DN.embedding_dense_backward, "EmbeddingDenseBackwardBackward0",
            save=("indices",))
def _embedding_dense_backward(ctx, grad):
    """ATen's ``embedding_dense_double_backward``: each position looks up its row of
    ``grad`` (zero at padding_idx); the frequency scaling is not differentiated, as in ATen."""
    idx = S.reshape(ctx.indices, (-1,))
    rows = SC.index_select(grad, 0, idx)
    if ctx.padding_idx >= 0:
        rows = P.where(S.unsqueeze(P.eq(idx, ctx.padding_idx), 1), 0.0, rows)
    return S.reshape(rows, (*ctx.indices.shape, rows.shape[-1])), None


def _embedding_sparse_backward(ctx, idx, g, num):
    """``embedding_sparse_backward``: a sparse COO gradient with one (uncoalesced) row per
    lookup, the padding_idx lookups left out."""
    if ctx.scale_grad_by_freq:
        raise RuntimeError("embedding_backward: scale_grad_by_freq not supported with sparse "
                           "gradients")
    if ctx.padding_idx is not None and ctx.padding_idx >= 0:
        keep = P.ne(idx, ctx.padding_idx)
        idx, g = idx[keep], g[keep]
    return make_sparse(S.reshape(idx.to(D.int64), (1, -1)), g, (num, g._shape[-1]))


# F.embedding renormalizes under no_grad, so training never reaches this node
not_implemented(DN.embedding_renorm_, "EmbeddingRenormBackward0")


# --- normalization --------------------------------------------------------------------------------
@derivative(NO.native_layer_norm, "NativeLayerNormBackward0",
            save=("input", "weight", "bias", "result1", "result2"), outputs=(True, False, False))
def _native_layer_norm(ctx, grad, _g_mean=None, _g_rstd=None):
    # PyTorch's structure: the backward is an op (a device's fused kernel) with a derivative of
    # its own, so double backward sees the mean and rstd depend on the input (below)
    return NO.native_layer_norm_backward(grad, ctx.input, ctx.normalized_shape, ctx.result1,
                                         ctx.result2, ctx.weight, ctx.bias, list(ctx.needs[:3]))


@derivative(NO.native_layer_norm_backward, "NativeLayerNormBackwardBackward0",
            save=("grad_out", "input", "mean", "rstd", "weight"))
def _native_layer_norm_backward(ctx, gg_in, gg_w, gg_b):
    """PyTorch's ``layer_norm_double_backward``: the first backward differentiated with the
    mean and rstd as functions of the input (saved values here, their dependence written out);
    the gradients of grad_out, input and weight (mean, rstd and bias get none, as in
    derivatives.yaml)."""
    x, g_out, w = ctx.input, ctx.grad_out, ctx.weight
    axis = x.ndim - len(ctx.normalized_shape)
    n = math.prod(x._shape[axis:])
    rows = math.prod(x._shape[:axis])
    x2, g2 = S.reshape(x, (rows, n)), S.reshape(g_out, (rows, n))
    mu = S.reshape(ctx.mean, (rows, 1))
    rstd = S.reshape(ctx.rstd, (rows, 1))
    if mu.dtype is not x.dtype:   # a direct call may pass float statistics of half inputs
        mu, rstd = F._to_copy(mu, dtype=x.dtype), F._to_copy(rstd, dtype=x.dtype)
    centred = P.sub(x2, mu)
    rstd2 = P.mul(rstd, rstd)
    rstd3 = P.mul(rstd2, rstd)
    gamma = S.reshape(w, (1, n)) if w is not None else None

    def row_sum(t):
        return RD.sum(t, [1], True)

    def first_grad_input(g, scale):
        """The first backward's grad_input for upstream ``g`` (times ``scale``, the weight)."""
        h = P.sub(P.sub(P.mul(g, n), row_sum(g)), P.mul(P.mul(centred, rstd2),
                                                       row_sum(P.mul(g, centred))))
        h = P.mul(P.div(rstd, n), h)
        return P.mul(h, scale) if scale is not None else h

    gg_in = S.reshape(gg_in, (rows, n)) if gg_in is not None else None
    gg_w = S.reshape(gg_w, (1, n)) if gg_w is not None else None
    g_x = g_w = g_g = None
    if ctx.needs[1]:
        terms = []
        if gg_in is not None:
            g_hat = P.mul(g2, gamma) if gamma is not None else g2
            g_hat_mu_sum, g_hat_sum = row_sum(P.mul(g_hat, centred)), row_sum(g_hat)
            gg_sum, gg_mu_sum = row_sum(gg_in), row_sum(P.mul(gg_in, centred))
            all_sub = P.add(P.sub(P.div(P.mul(gg_sum, g_hat_sum), n),
                                  row_sum(P.mul(gg_in, g_hat))),
                            P.mul(P.mul(P.mul(rstd2, g_hat_mu_sum), gg_mu_sum), 3.0 / n))
            terms += [P.div(P.mul(P.mul(centred, rstd3), all_sub), n),
                      P.mul(P.div(P.mul(gg_mu_sum, rstd3), n), P.sub(P.div(g_hat_sum, n), g_hat)),
                      P.mul(P.div(P.mul(g_hat_mu_sum, rstd3), n), P.sub(P.div(gg_sum, n), gg_in))]
        if gg_w is not None:   # grad_weight = sum(g * x_hat) depends on x too
            g_ggw = P.mul(g2, gg_w)
            terms += [P.mul(g_ggw, rstd), P.div(P.mul(rstd, row_sum(g_ggw)), -n),
                      P.div(P.mul(P.mul(centred, rstd3), row_sum(P.mul(g_ggw, centred))), -n)]
        g_x = _sum_terms(terms, x._shape)
    if ctx.needs[4] and gg_in is not None:
        g_w = S.reshape(RD.sum(P.mul(g2, first_grad_input(gg_in, None)), [0], False), w._shape)
    if ctx.needs[0]:
        terms = []
        if gg_in is not None:
            terms.append(first_grad_input(gg_in, gamma))
        if gg_w is not None:
            terms.append(P.mul(P.mul(gg_w, centred), rstd))
        if gg_b is not None:
            terms.append(S.expand(S.reshape(gg_b, (1, n)), (rows, n)))
        g_g = _sum_terms(terms, x._shape)
    return g_g, g_x, None, None, g_w, None


def _sum_terms(terms, shape):
    """The sum of a gradient's (rows, N) terms, in the input's shape (None without terms)."""
    if not terms:
        return None
    total = terms[0]
    for t in terms[1:]:
        total = P.add(total, t)
    return S.reshape(total, shape)


@derivative(NO.native_batch_norm, "NativeBatchNormBackward0",
            save=("input", "weight", "running_mean", "running_var", "result1", "result2"),
            outputs=(True, False, False))
def _native_batch_norm(ctx, grad, _g_mean=None, _g_invstd=None):
    x, w = ctx.input, ctx.weight
    view = [1, x._shape[1]] + [1] * (x.ndim - 2)
    dims = [0] + list(range(2, x.ndim))
    if ctx.training and is_grad_enabled():
        # create_graph: this formula is itself differentiated (a WGAN-GP gradient penalty
        # through a BatchNorm/InstanceNorm), where the batch statistics are functions of the
        # input, as in PyTorch's batchnorm_double_backward; the saved ones are constants
        mean = RD.mean(x, dims, True)
        centred = P.sub(x, mean)
        invstd = P.rsqrt(P.add(RD.mean(P.mul(centred, centred), dims, True), ctx.eps))
    elif ctx.training:
        mean, invstd = S.view(ctx.result1, view), S.view(ctx.result2, view)
    else:
        mean = S.view(ctx.running_mean, view)
        invstd = S.view(P.rsqrt(P.add(ctx.running_var, ctx.eps)), view)
    x_hat = P.mul(P.sub(x, mean), invstd)
    g_in = g_w = g_b = None
    if ctx.needs[0]:
        g_hat = P.mul(grad, S.view(w, view)) if w is not None else grad
        g_in = NO.normalized_backward(g_hat, x_hat, invstd, dims) if ctx.training else \
            P.mul(g_hat, invstd)
    # a half gradient's sums accumulate in float32 and round once, to the parameters' dtype (by
    # validate_outputs), as ATen's CPU kernel sums in its opmath type
    acc = D.float32 if grad.dtype in (D.float16, D.bfloat16) else None
    if ctx.needs[1]:
        g_w = RD.sum(P.mul(grad, x_hat), dims, False, dtype=acc)
    if ctx.needs[2]:
        g_b = RD.sum(grad, dims, False, dtype=acc)
    return g_in, g_w, g_b, None, None


# --- pooling --------------------------------------------------------------------------------------
def _scatter_to_plane(grad, indices, shape, dims=2):
    """Max pooling's gradient: each output's gradient goes to the input element its index
    names (flat within its plane of the last ``dims`` dims)."""
    plane = int(np.prod(shape[-dims:]))
    lead = tuple(shape[:-dims])
    n_out = int(np.prod(grad._shape[-dims:]))
    flat = SC.scatter_add(zeros(lead + (plane,), grad), len(lead),
                          S.reshape(indices, lead + (n_out,)), S.reshape(grad, lead + (n_out,)))
    return S.reshape(flat, shape)


@derivative(PL.max_pool2d_with_indices, "MaxPool2DWithIndicesBackward0",
            save=("self", "result1"))
def _max_pool2d(ctx, grad, _g_indices=None):
    return PL.max_pool2d_with_indices_backward(grad, ctx.self, ctx.kernel_size, ctx.stride,
                                               ctx.padding, ctx.dilation, ctx.ceil_mode,
                                               ctx.result1)


@derivative(PL.adaptive_max_pool2d, "AdaptiveMaxPool2DBackward0", save=("result1",))
def _adaptive_max_pool2d(ctx, grad, _g_indices=None):
    return _scatter_to_plane(grad, ctx.result1, ctx.sizes("self"))


def _window_counts(size, out, kernel, stride, pad, include_pad):
    """Elements of each window along one dim, as PyTorch counts them (``AvgPoolKernel.cpp``)."""
    start = np.arange(out) * stride - pad
    end = np.minimum(start + kernel, size + pad)
    if include_pad:
        return end - start
    return np.minimum(end, size) - np.maximum(start, 0)


@derivative(PL.avg_pool2d, "AvgPool2DBackward0")
def _avg_pool2d(ctx, grad):
    """Spread each window's gradient / divisor over the window: col2im of the gradient repeated
    for every kernel offset (the image is extended when ceil_mode windows overhang, then cut)."""
    shape = ctx.sizes("self")
    kernel, stride, padding, _ = PL.pool2d_args("avg_pool2d", ctx.kernel_size, ctx.stride,
                                                ctx.padding)
    out = grad._shape[-2:]
    if ctx.divisor_override is not None:
        divisor = np.full(out, ctx.divisor_override, dtype=np.float64)
    else:
        counts = [_window_counts(n, o, k, s, p, ctx.count_include_pad) for n, o, k, s, p in
                  zip(shape[-2:], out, kernel, stride, padding)]
        divisor = counts[0][:, None] * counts[1]
    g = P.div(grad, _weights(divisor, grad))
    batched = len(shape) == 4
    if not batched:
        g = S.unsqueeze(g, 0)
    n, c = g._shape[:2]
    kk = kernel[0] * kernel[1]
    cols = S.reshape(S.expand(S.reshape(g, (n, c, 1, out[0] * out[1])),
                              (n, c, kk, out[0] * out[1])), (n, c * kk, out[0] * out[1]))
    size = [max(h, (o - 1) * s + k - 2 * p) for h, o, s, k, p in
            zip(shape[-2:], out, stride, kernel, padding)]
    img = NN.col2im(cols, size, kernel, (1, 1), padding, stride)
    img = S.slice(S.slice(img, -2, 0, shape[-2]), -1, 0, shape[-1])
    return img if batched else S.squeeze(img, [0])


def _adaptive_matrix(size, out, like):
    start = (np.arange(out) * size) // out
    end = -((-(np.arange(out) + 1) * size) // out)
    m = np.zeros((out, size))
    for i, (s, e) in enumerate(zip(start, end)):
        m[i, s:e] = 1.0 / (e - s)
    return _weights(m, like)


@derivative(PL.adaptive_avg_pool2d, "AdaptiveAvgPool2DBackward0")
def _adaptive_avg_pool2d(ctx, grad):
    """Adaptive average pooling is separable: out = A_h x A_w^T with averaging matrices A."""
    shape = ctx.sizes("self")
    oh, ow = grad._shape[-2:]
    a_h = _adaptive_matrix(shape[-2], oh, grad)
    a_w = _adaptive_matrix(shape[-1], ow, grad)
    return L.matmul(S.transpose(a_h, 0, 1), L.matmul(grad, a_w))


# The 3-d poolings are composites with rows of their own (CompositeExplicitAutograd in
# backends/composite.py). Average pooling is separable: a window's sum is a 0/1 band matrix per
# dim, its divisor a product of per-dim counts, so the gradient maps back one dim at a time.
@derivative(PL.max_pool3d_with_indices, "MaxPool3DWithIndicesBackward0", save=("result1",))
def _max_pool3d(ctx, grad, _g_indices=None):
    return _scatter_to_plane(grad, ctx.result1, ctx.sizes("self"), 3)


@derivative(PL.adaptive_max_pool3d, "AdaptiveMaxPool3DBackward0", save=("result1",))
def _adaptive_max_pool3d(ctx, grad, _g_indices=None):
    return _scatter_to_plane(grad, ctx.result1, ctx.sizes("self"), 3)


def _along(grad, matrix, dim):
    """``grad`` with dim ``dim`` (the matrix's rows) mapped through ``matrix`` (out x size)."""
    return S.movedim(L.matmul(S.movedim(grad, dim, -1), matrix), -1, dim)


@derivative(PL.adaptive_avg_pool3d, "AdaptiveAvgPool3DBackward0")
def _adaptive_avg_pool3d(ctx, grad):
    shape = ctx.sizes("self")
    for d in (-3, -2, -1):
        grad = _along(grad, _adaptive_matrix(shape[d], grad._shape[d], grad), d)
    return grad


def _band_matrix(size, out, kernel, stride, pad):
    """(out, size): 1 where output ``o``'s window covers input element ``i``."""
    start = np.arange(out) * stride - pad
    i = np.arange(size)
    return (i >= start[:, None]) & (i < (start + kernel)[:, None])


@derivative(PL.avg_pool3d, "AvgPool3DBackward0")
def _avg_pool3d(ctx, grad):
    shape = ctx.sizes("self")
    kernel = PL._triple(ctx.kernel_size, "avg_pool3d: kernel_size")
    stride = PL._triple(ctx.stride, "avg_pool3d: stride") if ctx.stride else kernel
    padding = PL._triple(ctx.padding, "avg_pool3d: padding")
    out = grad._shape[-3:]
    geometry = list(zip(shape[-3:], out, kernel, stride, padding))
    if ctx.divisor_override is not None:
        divisor = np.full(out, ctx.divisor_override, dtype=np.float64)
    else:
        counts = [_window_counts(n, o, k, st, p, ctx.count_include_pad)
                  for n, o, k, st, p in geometry]
        divisor = counts[0][:, None, None] * counts[1][:, None] * counts[2]
    grad = P.div(grad, _weights(divisor, grad))
    for d, (n, o, k, st, p) in zip((-3, -2, -1), geometry):
        grad = _along(grad, _weights(_band_matrix(n, o, k, st, p).astype(np.float64), grad), d)
    return grad


@derivative(PL.max_unpool2d, "MaxUnpool2DBackward0", save=("indices",))
def _max_unpool2d(ctx, grad):
    return _gather_from_plane(grad, ctx.indices, 2)


@derivative(PL.max_unpool3d, "MaxUnpool3DBackward0", save=("indices",))
def _max_unpool3d(ctx, grad):
    return _gather_from_plane(grad, ctx.indices, 3)


def _gather_from_plane(grad, indices, dims):
    """Max unpooling's gradient: each input reads the output gradient at its index (flat
    within its plane of the last ``dims`` dims)."""
    lead = tuple(indices._shape[:-dims])
    plane = S.reshape(grad, lead + (int(np.prod(grad._shape[-dims:])),))
    picked = SC.gather(plane, len(lead), S.reshape(indices, lead + (-1,)))
    return S.reshape(picked, indices._shape), None
