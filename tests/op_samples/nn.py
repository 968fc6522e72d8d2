"""Sample inputs for the ops of ``ops/nn.py``, ``ops/pooling.py`` and ``ops/normalization.py``."""

import numpy as np

from op_samples import Sample

_rng = np.random.default_rng(11)


def _f(*shape, dtype=np.float32):
    return np.asarray(_rng.standard_normal(shape), dtype=dtype)


def _i(*shape, high=5, dtype=np.int64):
    return np.asarray(_rng.integers(0, high, shape), dtype=dtype)


def F(m):
    return m.nn.functional


_LOW = {"atol": 1e-2, "rtol": 1e-2}
_NAN = np.array([[[[1.0, np.nan, 2.0], [3.0, 4.0, -np.inf], [0.5, 7.0, np.inf]]]], np.float32)

CONV = {
    "aten::convolution": [
        Sample(lambda m, x, w, b: m.convolution(x, w, b, [1, 1], [0, 0], [1, 1], False, [0, 0], 1),
               (_f(2, 3, 5, 5), _f(4, 3, 3, 3), _f(4))),
        Sample(lambda m, x, w: m.convolution(x, w, None, [2], [1], [2], False, [0], 2),
               (_f(2, 4, 9), _f(6, 2, 3)), name="1d_groups_dilation"),
        Sample(lambda m, x, w, b: m.convolution(x, w, b, [2, 1], [1, 2], [1, 1], True, [1, 0], 1),
               (_f(1, 3, 4, 5), _f(3, 2, 3, 3), _f(2)), name="transposed"),
        Sample(lambda m, x, w: m.convolution(x, w, None, [1, 1, 1], [1, 0, 0], [1, 1, 1], False,
                                             [0, 0, 0], 1),
               (_f(1, 2, 3, 4, 4), _f(2, 2, 2, 2, 2)), name="3d"),
    ],
    "aten::conv1d": [
        Sample(lambda m, x, w, b: F(m).conv1d(x, w, b), (_f(2, 3, 8), _f(4, 3, 3), _f(4))),
        Sample(lambda m, x, w: F(m).conv1d(x, w, stride=2, padding=2, dilation=2),
               (_f(3, 9), _f(5, 3, 2)), name="unbatched"),
        Sample(lambda m, x, w: F(m).conv1d(x, w, groups=3), (_f(1, 6, 5, dtype=np.float64),
                                                             _f(6, 2, 2, dtype=np.float64))),
        Sample(lambda m, x, w: F(m).conv1d(x, w), (_i(1, 2, 6), _i(3, 2, 2)), name="int"),
    ],
    "aten::conv1d.padding": [
        Sample(lambda m, x, w: F(m).conv1d(x, w, padding="same"), (_f(2, 3, 8), _f(4, 3, 4))),
        Sample(lambda m, x, w: F(m).conv1d(x, w, padding="same", dilation=3),
               (_f(2, 3, 8), _f(4, 3, 3)), name="dilated"),
        Sample(lambda m, x, w: F(m).conv1d(x, w, padding="valid"), (_f(2, 3, 8), _f(4, 3, 3))),
    ],
    "aten::conv3d": [
        Sample(lambda m, x, w, b: F(m).conv3d(x, w, b, stride=2, padding=1),
               (_f(2, 3, 5, 6, 7), _f(4, 3, 3, 3, 3), _f(4))),
        Sample(lambda m, x, w: F(m).conv3d(x, w, stride=(1, 2, 1), dilation=(1, 1, 2),
                                           groups=2), (_f(1, 4, 4, 5, 6), _f(6, 2, 2, 3, 2)),
               name="groups"),
        Sample(lambda m, x, w: F(m).conv3d(x, w), (_f(3, 4, 4, 4), _f(2, 3, 1, 2, 1)),
               name="unbatched"),
    ],
    "aten::conv3d.padding": [
        Sample(lambda m, x, w: F(m).conv3d(x, w, padding="same"), (_f(1, 2, 4, 5, 4),
                                                                    _f(3, 2, 2, 3, 3))),
    ],
    "aten::conv_transpose3d.input": [
        Sample(lambda m, x, w, b: F(m).conv_transpose3d(x, w, b, stride=2, padding=1,
                                                        output_padding=1),
               (_f(2, 3, 3, 4, 3), _f(3, 2, 3, 3, 3), _f(2))),
        Sample(lambda m, x, w: F(m).conv_transpose3d(x, w, groups=2), (_f(2, 4, 3, 3, 3),
                                                                        _f(4, 1, 2, 2, 2)),
               name="groups"),
    ],
    "aten::conv2d": [
        Sample(lambda m, x, w, b: F(m).conv2d(x, w, b, stride=2, padding=1),
               (_f(2, 3, 7, 7), _f(4, 3, 3, 3), _f(4))),
        Sample(lambda m, x, w: F(m).conv2d(x, w, stride=(1, 2), padding=(2, 0), dilation=(2, 1),
                                           groups=2), (_f(2, 4, 6, 7), _f(6, 2, 3, 2)),
               name="groups"),
        Sample(lambda m, x, w: F(m).conv2d(x, w), (_f(3, 5, 5), _f(2, 3, 1, 1)), name="unbatched"),
        Sample(lambda m, x, w: F(m).conv2d(x, w), (_f(0, 3, 5, 5), _f(2, 3, 3, 3)), name="empty"),
        Sample(lambda m, x, w: F(m).conv2d(x.half(), w.half()), (_f(1, 3, 5, 5), _f(2, 3, 3, 3)),
               **_LOW),
        Sample(lambda m, x, w: F(m).conv2d(x.bfloat16(), w.bfloat16(), padding=1),
               (_f(1, 2, 4, 4), _f(2, 2, 3, 3)), atol=0.1, rtol=0.05),
        Sample(lambda m, x, w: F(m).conv2d(x, w, groups=4), (_f(2, 4, 5, 5, dtype=np.float64),
                                                             _f(8, 1, 3, 3, dtype=np.float64)),
               name="depthwise"),
        Sample(lambda m, x, w: F(m).conv2d(x, w, padding=1), (_i(1, 2, 4, 4), _i(3, 2, 3, 3)),
               name="int"),
    ],
    "aten::conv2d.padding": [
        Sample(lambda m, x, w: F(m).conv2d(x, w, padding="same"), (_f(1, 2, 6, 6),
                                                                    _f(3, 2, 4, 3))),
        Sample(lambda m, x, w: F(m).conv2d(x, w, padding="same", dilation=(1, 2)),
               (_f(1, 2, 6, 6), _f(3, 2, 3, 3)), name="dilated"),
        Sample(lambda m, x, w: F(m).conv2d(x, w, padding="valid"), (_f(1, 2, 6, 6),
                                                                     _f(3, 2, 3, 3))),
    ],
    "aten::conv_transpose1d": [
        Sample(lambda m, x, w, b: F(m).conv_transpose1d(x, w, b, stride=2),
               (_f(2, 3, 5), _f(3, 4, 3), _f(4))),
        Sample(lambda m, x, w: F(m).conv_transpose1d(x, w, stride=3, padding=1,
                                                     output_padding=2, groups=2, dilation=2),
               (_f(4, 6), _f(4, 1, 3)), name="unbatched_groups"),
    ],
    "aten::conv_transpose2d.input": [
        Sample(lambda m, x, w, b: F(m).conv_transpose2d(x, w, b, stride=2, padding=1,
                                                        output_padding=1),
               (_f(2, 3, 4, 4), _f(3, 2, 3, 3), _f(2))),
        Sample(lambda m, x, w: F(m).conv_transpose2d(x, w, groups=2, dilation=(2, 1)),
               (_f(1, 4, 3, 3, dtype=np.float64), _f(4, 3, 2, 2, dtype=np.float64))),
        Sample(lambda m, x, w: F(m).conv_transpose2d(x, w), (_f(2, 3, 3), _f(2, 3, 3, 3)),
               name="unbatched"),
    ],
    "aten::im2col": [
        Sample(lambda m, x: F(m).unfold(x, 2), (_f(2, 3, 4, 5),)),
        Sample(lambda m, x: F(m).unfold(x, (2, 3), dilation=(1, 2), padding=1, stride=(2, 1)),
               (_f(1, 2, 5, 6),), name="args"),
        Sample(lambda m, x: F(m).unfold(x, 3, padding=1), (_f(2, 4, 4, dtype=np.float64),),
               name="unbatched"),
    ],
    "aten::col2im": [
        Sample(lambda m, x: F(m).fold(x, (4, 5), 2), (_f(2, 12, 12),)),
        Sample(lambda m, x: F(m).fold(x, (5, 6), (2, 3), dilation=(1, 2), padding=1,
                                      stride=(2, 1)), (_f(1, 12, 12),), name="args"),
        Sample(lambda m, x: F(m).fold(x, 3, 2), (_f(8, 4, dtype=np.float64),), name="unbatched"),
    ],
    "aten::linear": [
        Sample(lambda m, x, w, b: F(m).linear(x, w, b), (_f(4, 3), _f(5, 3), _f(5))),
        Sample(lambda m, x, w: F(m).linear(x, w), (_f(2, 4, 3), _f(5, 3)), name="no_bias"),
        Sample(lambda m, x, w, b: F(m).linear(x, w, b), (_f(2, 2, 3), _f(5, 3), _f(5)),
               name="3d"),
        Sample(lambda m, x, w, b: F(m).linear(x, w, b), (_f(3), _f(2, 3), _f(2)), name="1d"),
        Sample(lambda m, x, w, b: F(m).linear(x, w, b), (_f(4, 3, dtype=np.float64),
                                                         _f(1, 3, dtype=np.float64),
                                                         _f(dtype=np.float64)), name="0d_bias"),
    ],
    "aten::bilinear": [
        Sample(lambda m, a, b, w, c: F(m).bilinear(a, b, w, c),
               (_f(4, 3), _f(4, 2), _f(5, 3, 2), _f(5))),
        Sample(lambda m, a, b, w: m.bilinear(a, b, w), (_f(2, 4, 3), _f(2, 4, 2), _f(5, 3, 2)),
               name="batched"),
    ],
}

PADDING = {
    "aten::constant_pad_nd": [
        Sample(lambda m, x: m.constant_pad_nd(x, [1, 2]), (_f(2, 3),)),
        Sample(lambda m, x: m.constant_pad_nd(x, [1, 0, -1, 2], 1.5), (_f(2, 3, 4),),
               name="negative"),
        Sample(lambda m, x: m.constant_pad_nd(x, [2, 2, 1, 1, 1, 0], 7), (_i(1, 2, 3),),
               name="int"),
        Sample(lambda m, x: m.constant_pad_nd(x, [1, 1]), (_i(3) > 2,), name="bool"),
        Sample(lambda m, x: m.constant_pad_nd(x, [0, 1]), (_f(0, 2),), name="empty"),
    ],
    "aten::pad": [
        Sample(lambda m, x: F(m).pad(x, (1, 2)), (_f(2, 3),)),
        Sample(lambda m, x: F(m).pad(x, (1, 2, 0, 1), value=-1.0), (_f(2, 3, 4),), name="value"),
        Sample(lambda m, x: F(m).pad(x, (2, 1), mode="reflect"), (_f(2, 4),), name="reflect1d"),
        Sample(lambda m, x: F(m).pad(x, (1, 2, 2, 0), mode="reflect"), (_f(1, 2, 3, 4),),
               name="reflect2d"),
        Sample(lambda m, x: F(m).pad(x, (1, 2, 2, 0), "replicate"), (_f(2, 3, 4),),
               name="replicate2d"),
        Sample(lambda m, x: F(m).pad(x, (1, 1, 1, 1, 1, 1), "replicate"), (_f(1, 1, 2, 2, 2),),
               name="replicate3d"),
        Sample(lambda m, x: F(m).pad(x, (1, 2, 3, 0), mode="circular"), (_f(1, 2, 3, 4),),
               name="circular"),
        Sample(lambda m, x: F(m).pad(x, (-1, 2), mode="circular"), (_f(2, 4),),
               name="circular_negative"),
        Sample(lambda m, x: F(m).pad(x, (1, 1), mode="reflect"), (_i(2, 3),), name="reflect_int"),
    ],
    "aten::reflection_pad1d": [Sample(lambda m, x: m.ops.aten.reflection_pad1d(x, [2, 1]),
                                      (_f(2, 3, 4),))],
    "aten::reflection_pad2d": [Sample(lambda m, x: m.ops.aten.reflection_pad2d(x, [1, 0, 2, 1]),
                                      (_f(2, 3, 4),))],
    "aten::reflection_pad3d": [Sample(lambda m, x: m.ops.aten.reflection_pad3d(
        x, [1, 0, 1, 1, 0, 1]), (_f(1, 2, 2, 3, 3),))],
    "aten::replication_pad1d": [Sample(lambda m, x: m.ops.aten.replication_pad1d(x, [3, 1]),
                                       (_f(3, 2),))],
    "aten::replication_pad2d": [Sample(lambda m, x: m.ops.aten.replication_pad2d(x, [1, 2, 0, 3]),
                                       (_f(1, 2, 3, 2),))],
    "aten::replication_pad3d": [Sample(lambda m, x: m.ops.aten.replication_pad3d(
        x, [1, 0, 0, 2, 1, 1]), (_f(2, 2, 3, 2),))],
    "aten::_pad_circular": [Sample(lambda m, x: m.ops.aten._pad_circular(x, [1, 2]),
                                   (_f(2, 3, 4),))],
}

RESAMPLE = {
    "aten::upsample_nearest1d": [
        Sample(lambda m, x: F(m).interpolate(x, size=7), (_f(2, 3, 4),)),
        Sample(lambda m, x: F(m).interpolate(x, scale_factor=2.5), (_f(1, 2, 3),), name="scale"),
    ],
    "aten::upsample_nearest2d": [
        Sample(lambda m, x: F(m).interpolate(x, scale_factor=2), (_f(1, 2, 3, 4),)),
        Sample(lambda m, x: F(m).interpolate(x, size=(5, 3)), (_f(2, 2, 3, 4),), name="size"),
        Sample(lambda m, x: F(m).interpolate(x, scale_factor=(1.7, 0.6)), (_f(1, 1, 5, 6),),
               name="fractional"),
        Sample(lambda m, x: F(m).interpolate(x, scale_factor=1.7, recompute_scale_factor=True),
               (_i(1, 1, 5, 6, dtype=np.uint8),), name="recompute_uint8"),
    ],
    "aten::_upsample_nearest_exact1d": [
        Sample(lambda m, x: F(m).interpolate(x, size=7, mode="nearest-exact"), (_f(2, 3, 4),))],
    "aten::_upsample_nearest_exact2d": [
        Sample(lambda m, x: F(m).interpolate(x, scale_factor=1.5, mode="nearest-exact"),
               (_f(1, 2, 3, 4),))],
    "aten::upsample_linear1d": [
        Sample(lambda m, x: F(m).interpolate(x, size=7, mode="linear"), (_f(2, 3, 4),)),
        Sample(lambda m, x: F(m).interpolate(x, scale_factor=2, mode="linear",
                                             align_corners=True), (_f(1, 2, 5),), name="corners"),
    ],
    "aten::upsample_bilinear2d": [
        Sample(lambda m, x: F(m).interpolate(x, size=(5, 7), mode="bilinear"), (_f(1, 2, 3, 4),)),
        Sample(lambda m, x: F(m).interpolate(x, scale_factor=0.5, mode="bilinear",
                                             align_corners=True), (_f(2, 1, 6, 6),),
               name="corners"),
        Sample(lambda m, x: F(m).interpolate(x, scale_factor=(1.5, 2.25), mode="bilinear"),
               (_f(1, 1, 4, 4, dtype=np.float64),), name="scales"),
        Sample(lambda m, x: F(m).interpolate(x.half(), size=(5, 7), mode="bilinear"),
               (_f(1, 2, 3, 4),), **_LOW),
    ],
    "aten::upsample_nearest3d": [
        Sample(lambda m, x: F(m).interpolate(x, size=(3, 5, 2)), (_f(1, 2, 2, 3, 4),)),
        Sample(lambda m, x: F(m).interpolate(x, scale_factor=(1.5, 2, 0.7)), (_f(1, 1, 2, 3, 4),),
               name="scales"),
    ],
    "aten::upsample_trilinear3d": [
        Sample(lambda m, x: F(m).interpolate(x, size=(3, 5, 2), mode="trilinear"),
               (_f(1, 2, 2, 3, 4),)),
        Sample(lambda m, x: F(m).interpolate(x, scale_factor=1.5, mode="trilinear",
                                             align_corners=True),
               (_f(1, 1, 2, 3, 2, dtype=np.float64),), name="corners"),
    ],
    "aten::upsample_bicubic2d": [
        Sample(lambda m, x: F(m).interpolate(x, size=(5, 7), mode="bicubic"), (_f(1, 2, 3, 4),)),
        Sample(lambda m, x: F(m).interpolate(x, scale_factor=0.6, mode="bicubic",
                                             align_corners=True), (_f(2, 1, 6, 6),),
               name="corners"),
        Sample(lambda m, x: F(m).interpolate(x, scale_factor=(1.5, 2.25), mode="bicubic"),
               (_f(1, 1, 4, 4, dtype=np.float64),), name="scales"),
    ],
    "aten::pixel_shuffle": [
        Sample(lambda m, x: F(m).pixel_shuffle(x, 2), (_f(1, 8, 2, 3),)),
        Sample(lambda m, x: m.pixel_shuffle(x, 3), (_i(2, 1, 9, 1, 2),), name="batch_dims"),
    ],
    "aten::pixel_unshuffle": [
        Sample(lambda m, x: F(m).pixel_unshuffle(x, 2), (_f(1, 2, 4, 6),)),
        Sample(lambda m, x: m.pixel_unshuffle(x, 3), (_f(3, 3, 6),), name="unbatched"),
    ],
    "aten::channel_shuffle": [
        Sample(lambda m, x: F(m).channel_shuffle(x, 2), (_f(2, 6, 3),)),
        Sample(lambda m, x: m.channel_shuffle(x, 3), (_i(1, 6, 2, 2),), name="int_4d"),
        Sample(lambda m, x: m.nn.ChannelShuffle(1)(x), (_f(0, 3, 2, dtype=np.float64),),
               name="empty_one_group"),
    ],
    "aten::embedding": [
        Sample(lambda m, i, w: F(m).embedding(i, w), (_i(2, 3, high=5), _f(5, 4))),
        Sample(lambda m, i, w: F(m).embedding(i.int(), w, padding_idx=-2), (_i(4, high=5),
                                                                             _f(5, 3)),
               name="int32"),
        Sample(lambda m, i, w: m.embedding(w, i), (_i(high=5), _f(5, 3)), name="0d"),
        Sample(lambda m, i, w: F(m).embedding(i, w), (_i(0, high=5), _f(5, 3)), name="empty"),
        Sample(lambda m, i, w: F(m).embedding(i, w.half()), (_i(3, high=5), _f(5, 3)),
               name="half"),
    ],
    "aten::embedding_renorm_": [
        Sample(lambda m, i, w: (F(m).embedding(i, w, max_norm=1.0), w), (_i(2, 3, high=5),
                                                                         _f(5, 4)),
               name="max_norm"),
        Sample(lambda m, i, w: m.embedding_renorm_(w, i, 0.5, 1.0),
               (_i(4, high=5), _f(5, 3, dtype=np.float64)), name="p1"),
    ],
    "aten::embedding_dense_backward": [
        Sample(lambda m, g, i: m.ops.aten.embedding_dense_backward(g, i, 6, -1, False),
               (_f(2, 3, 4), _i(2, 3, high=6))),
        Sample(lambda m, g, i: m.ops.aten.embedding_dense_backward(g, i, 5, 2, True),
               (_f(4, 3, dtype=np.float64), _i(4, high=5)), name="padding_scaled"),
    ],
    "aten::cosine_similarity": [
        Sample(lambda m, a, b: F(m).cosine_similarity(a, b), (_f(3, 4), _f(3, 4))),
        Sample(lambda m, a, b: F(m).cosine_similarity(a, b, dim=-1), (_f(2, 1, 4), _f(3, 4)),
               name="broadcast"),
        Sample(lambda m, a, b: F(m).cosine_similarity(a, b, dim=0),
               (_f(3, 2), np.zeros((3, 2), np.float32)), name="zeros"),
        Sample(lambda m, a, b: F(m).cosine_similarity(a, b), (_i(3, 4), _f(3, 4)),
               name="int_float"),
    ],
    "aten::pairwise_distance": [
        Sample(lambda m, a, b: F(m).pairwise_distance(a, b), (_f(3, 4), _f(3, 4))),
        Sample(lambda m, a, b: F(m).pairwise_distance(a, b, p=1, keepdim=True),
               (_f(3, 4), _f(4)), name="p1"),
        Sample(lambda m, a, b: F(m).pairwise_distance(a, b, p=3.0), (_f(2, 5), _f(2, 5)),
               name="p3"),
        Sample(lambda m, a, b: F(m).pairwise_distance(a, b, p=0), (_f(2, 5), _f(2, 5)),
               name="p0"),
        Sample(lambda m, a, b: F(m).pairwise_distance(a, b, p=float("inf")),
               (_f(2, 5), _f(2, 5)), name="inf"),
        Sample(lambda m, a, b: F(m).pairwise_distance(a, b), (_f(4), _f(4)), name="1d"),
    ],
    "aten::pdist": [
        Sample(lambda m, a: F(m).pdist(a), (_f(5, 3),)),
        Sample(lambda m, a: m.pdist(a, 1), (_f(4, 2),), name="p1"),
        Sample(lambda m, a: m.pdist(a, 3.5), (_f(4, 3),), name="p3.5"),
        Sample(lambda m, a: m.pdist(a, float("inf")), (_f(4, 3),), name="inf"),
        Sample(lambda m, a: m.pdist(m.cat([a, a]), 2), (_f(2, 3),), name="zero_distances"),
        Sample(lambda m, a: m.pdist(a), (_f(1, 3),), name="one_row"),
    ],
}


def _max_pool2d_backward(kernel, stride, padding, dilation, ceil_mode):
    """The backward op applied to ``g`` with the indices of ``x``'s forward pooling."""
    def fn(m, g, x):
        idx = F(m).max_pool2d_with_indices(x, kernel, stride, padding, dilation, ceil_mode)[1]
        return m.ops.aten.max_pool2d_with_indices_backward(g, x, kernel, stride, padding,
                                                           dilation, ceil_mode, idx)
    return fn


POOLING = {
    "aten::max_pool2d_with_indices": [
        Sample(lambda m, x: F(m).max_pool2d(x, 2, return_indices=True), (_f(2, 3, 6, 6),)),
        Sample(lambda m, x: F(m).max_pool2d(x, 3, 2, 1, dilation=1, ceil_mode=True,
                                            return_indices=True), (_f(1, 2, 7, 8),),
               name="ceil"),
        Sample(lambda m, x: F(m).max_pool2d_with_indices(x, (3, 2), (1, 2), (1, 0), dilation=2),
               (_f(2, 9, 7),), name="unbatched_dilation"),
        Sample(lambda m, x: F(m).max_pool2d(x, 2, 1, return_indices=True), (_NAN,), name="nan"),
        Sample(lambda m, x: F(m).max_pool2d(x, 2, return_indices=True), (_i(1, 1, 4, 4),),
               name="int"),
        Sample(lambda m, x: F(m).max_pool2d(x, 2, return_indices=True), (_f(0, 2, 4, 4),),
               name="empty_batch"),
        Sample(lambda m, x: F(m).max_pool2d(x.half(), 2, return_indices=True), (_f(1, 2, 4, 4),)),
    ],
    "aten::max_pool2d_with_indices_backward": [
        Sample(_max_pool2d_backward([3, 3], [2, 2], [1, 1], [1, 1], True),
               (_f(1, 2, 4, 5), _f(1, 2, 7, 8)), name="ceil"),
        Sample(_max_pool2d_backward([3, 2], [1, 2], [1, 0], [2, 2], False),
               (_f(2, 7, 3), _f(2, 9, 7)), name="unbatched_dilation"),
        Sample(_max_pool2d_backward([2, 2], [1, 1], [0, 0], [1, 1], False),
               (_f(0, 2, 3, 3), _f(0, 2, 4, 4)), name="empty_batch"),
    ],
    "aten::max_pool2d": [
        Sample(lambda m, x: F(m).max_pool2d(x, 2), (_f(2, 3, 6, 6),)),
        Sample(lambda m, x: F(m).max_pool2d(x, (2, 3), stride=(1, 2), padding=1,
                                            ceil_mode=True), (_f(2, 5, 7, dtype=np.float64),)),
    ],
    "aten::max_pool1d_with_indices": [
        Sample(lambda m, x: F(m).max_pool1d(x, 3, 2, 1, return_indices=True), (_f(2, 3, 8),)),
        Sample(lambda m, x: F(m).max_pool1d_with_indices(x, 2, ceil_mode=True), (_f(3, 7),)),
    ],
    "aten::max_pool1d": [
        Sample(lambda m, x: F(m).max_pool1d(x, 3), (_f(2, 3, 9),)),
        Sample(lambda m, x: F(m).max_pool1d(x, 2, 1, 1, dilation=2, ceil_mode=True),
               (_f(3, 6),), name="unbatched"),
    ],
    "aten::avg_pool2d": [
        Sample(lambda m, x: F(m).avg_pool2d(x, 2), (_f(2, 3, 6, 6),)),
        Sample(lambda m, x: F(m).avg_pool2d(x, 3, 2, 1), (_f(1, 2, 7, 8),), name="pad"),
        Sample(lambda m, x: F(m).avg_pool2d(x, 3, 2, 1, count_include_pad=False,
                                            ceil_mode=True), (_f(1, 2, 8, 8),), name="exclude"),
        Sample(lambda m, x: F(m).avg_pool2d(x, (2, 3), 1, (1, 1), ceil_mode=True),
               (_f(2, 5, 6),), name="ceil_unbatched"),
        Sample(lambda m, x: F(m).avg_pool2d(x, 2, divisor_override=3), (_f(1, 1, 4, 4),),
               name="divisor"),
        Sample(lambda m, x: F(m).avg_pool2d(x, 2), (_i(1, 1, 4, 4, high=9) - 4,), name="int"),
        Sample(lambda m, x: F(m).avg_pool2d(x.bfloat16(), 2), (_f(1, 2, 4, 4),), atol=1e-2),
    ],
    "aten::avg_pool1d": [
        Sample(lambda m, x: F(m).avg_pool1d(x, 3), (_f(2, 3, 9),)),
        Sample(lambda m, x: F(m).avg_pool1d(x, 4, 2, 2, ceil_mode=True, count_include_pad=False),
               (_f(3, 7),), name="unbatched"),
    ],
    "aten::adaptive_avg_pool2d": [
        Sample(lambda m, x: F(m).adaptive_avg_pool2d(x, 1), (_f(2, 3, 5, 5),)),
        Sample(lambda m, x: F(m).adaptive_avg_pool2d(x, (3, 4)), (_f(1, 2, 7, 5),), name="odd"),
        Sample(lambda m, x: F(m).adaptive_avg_pool2d(x, (None, 2)), (_f(2, 4, 6),),
               name="none"),
        Sample(lambda m, x: F(m).adaptive_avg_pool2d(x, (8, 7)), (_f(1, 1, 3, 4),), name="up"),
        Sample(lambda m, x: F(m).adaptive_avg_pool2d(x, (0, 2)), (_f(1, 3, 5, 5),), name="zero"),
        Sample(lambda m, x: F(m).adaptive_avg_pool2d(x.half(), 2), (_f(1, 3, 5, 5),), **_LOW),
    ],
    "aten::adaptive_avg_pool1d": [
        Sample(lambda m, x: F(m).adaptive_avg_pool1d(x, 3), (_f(2, 3, 7),)),
        Sample(lambda m, x: F(m).adaptive_avg_pool1d(x, 5), (_f(2, 3),), name="unbatched"),
    ],
    "aten::adaptive_max_pool2d": [
        Sample(lambda m, x: F(m).adaptive_max_pool2d(x, 2, return_indices=True),
               (_f(2, 3, 5, 5),)),
        Sample(lambda m, x: F(m).adaptive_max_pool2d(x, (3, 4), return_indices=True),
               (_f(2, 7, 5),), name="unbatched"),
        Sample(lambda m, x: F(m).adaptive_max_pool2d(x, (4, 4)), (_f(1, 1, 3, 3),), name="up"),
        Sample(lambda m, x: F(m).adaptive_max_pool2d(x, 2, True), (_NAN,), name="nan"),
    ],
    "aten::max_pool3d_with_indices": [
        Sample(lambda m, x: F(m).max_pool3d(x, 2, return_indices=True), (_f(2, 3, 4, 5, 6),)),
        Sample(lambda m, x: F(m).max_pool3d(x, (3, 2, 2), (2, 1, 2), (1, 1, 0), (1, 2, 1), True,
                                            True), (_f(1, 2, 6, 7, 5, dtype=np.float64),),
               name="ceil-dilated"),
        Sample(lambda m, x: F(m).max_pool3d(x, 3, 2, 1, return_indices=True), (_f(2, 5, 6, 4),),
               name="unbatched"),
    ],
    "aten::max_pool3d": [
        Sample(lambda m, x: F(m).max_pool3d(x, 2, ceil_mode=True), (_f(2, 2, 5, 5, 5),)),
        Sample(lambda m, x: F(m).max_pool3d(x, (1, 2, 2)), (_NAN[None],), name="nan"),
    ],
    "aten::avg_pool3d": [
        Sample(lambda m, x: F(m).avg_pool3d(x, 2), (_f(2, 3, 4, 5, 6),)),
        Sample(lambda m, x: F(m).avg_pool3d(x, 3, 2, 1, True, False), (_f(1, 2, 6, 7, 5),),
               name="ceil-exclude-pad"),
        Sample(lambda m, x: F(m).avg_pool3d(x, 3, 2, 1, True, True), (_f(1, 2, 6, 7, 5),),
               name="ceil-include-pad"),
        Sample(lambda m, x: F(m).avg_pool3d(x, (2, 3, 2), divisor_override=5), (_f(2, 4, 6, 4),),
               name="divisor-unbatched"),
    ],
    "aten::max_unpool2d": [   # indices are checked against the output size: no meta run
        Sample(lambda m, x, i: F(m).max_unpool2d(x, i, 2),
               (_f(2, 3, 2, 2), np.array([0, 3, 9, 14] * 6).reshape(2, 3, 2, 2)), meta=False),
        Sample(lambda m, x, i: F(m).max_unpool2d(x, i, 2, output_size=(5, 5)),
               (_f(3, 2, 2), np.array([1, 4, 12, 24] * 3).reshape(3, 2, 2)), meta=False,
               name="unbatched"),
    ],
    "aten::max_unpool3d": [
        Sample(lambda m, x, i: F(m).max_unpool3d(x, i, 2),
               (_f(1, 2, 1, 2, 2), np.array([0, 7, 21, 30] * 2).reshape(1, 2, 1, 2, 2)),
               meta=False),
    ],
    "aten::affine_grid_generator": [
        Sample(lambda m, t: F(m).affine_grid(t, (2, 3, 4, 5), align_corners=False),
               (_f(2, 2, 3),)),
        Sample(lambda m, t: F(m).affine_grid(t, (1, 2, 2, 3, 4), align_corners=True),
               (_f(1, 3, 4, dtype=np.float64),), name="3d"),
    ],
    "aten::grid_sampler_2d": [
        Sample(lambda m, x, g: F(m).grid_sample(x, g, align_corners=False),
               (_f(2, 3, 5, 4), np.tanh(_f(2, 3, 6, 2)) * 1.2)),
        Sample(lambda m, x, g: F(m).grid_sample(x, g, "nearest", "reflection", True),
               (_f(1, 2, 4, 4, dtype=np.float64), _f(1, 5, 5, 2, dtype=np.float64)),
               name="nearest-reflection"),
        Sample(lambda m, x, g: F(m).grid_sample(x, g, padding_mode="border",
                                                align_corners=True),
               (_f(1, 1, 3, 5), _f(1, 2, 2, 2)), name="border"),
        Sample(lambda m, x, g: F(m).grid_sample(x, g, "bicubic", "reflection",
                                                align_corners=False),
               (_f(1, 2, 4, 5, dtype=np.float64), _f(1, 3, 3, 2, dtype=np.float64)),
               name="bicubic"),
    ],
    "aten::grid_sampler_3d": [
        Sample(lambda m, x, g: F(m).grid_sample(x, g, align_corners=False),
               (_f(2, 2, 3, 4, 5), np.tanh(_f(2, 2, 3, 2, 3)) * 1.2)),
        Sample(lambda m, x, g: F(m).grid_sample(x, g, "nearest", "border", True),
               (_f(1, 1, 3, 3, 3, dtype=np.float64), _f(1, 2, 2, 2, 3, dtype=np.float64)),
               name="nearest-border"),
    ],
    "aten::adaptive_max_pool1d": [
        Sample(lambda m, x: F(m).adaptive_max_pool1d(x, 3, return_indices=True), (_f(2, 3, 7),)),
        Sample(lambda m, x: F(m).adaptive_max_pool1d(x, 4), (_f(2, 9, dtype=np.float64),)),
    ],
    "aten::adaptive_avg_pool3d": [
        Sample(lambda m, x: F(m).adaptive_avg_pool3d(x, (2, 3, 4)), (_f(2, 3, 5, 7, 9),)),
        Sample(lambda m, x: F(m).adaptive_avg_pool3d(x, (None, 1, 5)),
               (_f(3, 4, 5, 3, dtype=np.float64),), name="unbatched-none"),
    ],
    "aten::adaptive_max_pool3d": [
        Sample(lambda m, x: F(m).adaptive_max_pool3d(x, (2, 3, 4), return_indices=True),
               (_f(2, 3, 5, 7, 9),)),
        Sample(lambda m, x: F(m).adaptive_max_pool3d(x, 1, return_indices=True),
               (np.array([[[[1.0, 3.0], [3.0, 0.0]], [[3.0, 2.0], [1.0, 3.0]]]], np.float32),),
               name="ties"),
    ],
}

def _layer_norm_backward(m, g, x, normalized, w, b, mask):
    _, mean, rstd = m.native_layer_norm(x, normalized, w, b, 1e-5)
    return m.ops.aten.native_layer_norm_backward(g, x, normalized, mean, rstd, w, b, mask)


NORMALIZATION = {
    "aten::native_layer_norm": [
        Sample(lambda m, x, w, b: m.native_layer_norm(x, [4], w, b, 1e-5),
               (_f(2, 3, 4), _f(4), _f(4))),
        Sample(lambda m, x: m.native_layer_norm(x, [3, 4], None, None, 1e-3),
               (_f(2, 3, 4, dtype=np.float64),), name="2d"),
        Sample(lambda m, x: m.native_layer_norm(x.half(), [4], None, None, 1e-5),
               (_f(2, 4),), **_LOW),
    ],
    "aten::native_layer_norm_backward": [
        Sample(lambda m, g, x, w, b: _layer_norm_backward(m, g, x, [4], w, b, [True] * 3),
               (_f(2, 3, 4), _f(2, 3, 4), _f(4), _f(4))),
        Sample(lambda m, g, x: _layer_norm_backward(m, g, x, [3, 4], None, None,
                                                    [True, False, False]),
               (_f(2, 3, 4, dtype=np.float64), _f(2, 3, 4, dtype=np.float64)), name="2d_input"),
        Sample(lambda m, g, x, w: _layer_norm_backward(m, g.half(), x.half(), [4], w.half(),
                                                       None, [True, True, False]),
               (_f(0, 4), _f(0, 4), _f(4)), name="half_empty", **_LOW),
        Sample(lambda m, g, x, w: _layer_norm_backward(m, g.half(), x.half(), [8], w.half(),
                                                       None, [True, True, False]),
               (_f(3, 8), _f(3, 8), _f(8)), name="half", **_LOW),
    ],
    "aten::layer_norm": [
        Sample(lambda m, x, w, b: F(m).layer_norm(x, (4,), w, b), (_f(2, 3, 4), _f(4), _f(4))),
        Sample(lambda m, x: F(m).layer_norm(x, (5,), eps=0.1), (_f(5),), name="1d"),
        Sample(lambda m, x, w: F(m).layer_norm(x, [2, 3], w), (_f(0, 2, 3), _f(2, 3)),
               name="empty"),
    ],
    "aten::rms_norm": [
        Sample(lambda m, x, w: F(m).rms_norm(x, (4,), w), (_f(2, 3, 4), _f(4))),
        Sample(lambda m, x: F(m).rms_norm(x, [3, 4], eps=0.1), (_f(2, 3, 4, dtype=np.float64),),
               name="2d"),
        Sample(lambda m, x: F(m).rms_norm(x.half(), (4,)), (_f(2, 4),), name="half", **_LOW),
        Sample(lambda m, x, w: F(m).rms_norm(x, (3,), w), (_f(0, 3), _f(3)), name="empty"),
    ],
    "aten::native_batch_norm": [
        Sample(lambda m, x, w, b, rm, rv: (m.native_batch_norm(x, w, b, rm, rv, True, 0.1, 1e-5),
                                           rm, rv),
               (_f(4, 3, 2), _f(3), _f(3), _f(3), np.abs(_f(3)))),
        Sample(lambda m, x, rm, rv: m.native_batch_norm(x, None, None, rm, rv, False, 0.1, 1e-5),
               (_f(4, 3), _f(3), np.abs(_f(3))), name="eval"),
        Sample(lambda m, x: m.native_batch_norm(x, None, None, None, None, True, 0.3, 1e-3),
               (_f(2, 2, 3, 3, dtype=np.float64),), name="no_stats"),
        Sample(lambda m, x, rm, rv: (m.native_batch_norm(x.half(), None, None, rm, rv, True, 0.1,
                                                         1e-5), rm, rv),
               (_f(4, 3), _f(3), np.abs(_f(3))), name="half_float_stats", **_LOW),
    ],
    "aten::batch_norm": [
        Sample(lambda m, x, rm, rv, w, b: (F(m).batch_norm(x, rm, rv, w, b, training=True,
                                                           momentum=0.2), rm, rv),
               (_f(4, 3, 5), _f(3), np.abs(_f(3)), _f(3), _f(3))),
        Sample(lambda m, x, rm, rv: F(m).batch_norm(x, rm, rv), (_f(2, 3, 2, 2), _f(3),
                                                                 np.abs(_f(3))), name="eval"),
        Sample(lambda m, x: F(m).batch_norm(x, None, None, training=True), (_f(5, 2),),
               name="no_stats"),
    ],
    "aten::group_norm": [
        Sample(lambda m, x, w, b: F(m).group_norm(x, 2, w, b), (_f(2, 4, 3, 3), _f(4), _f(4))),
        Sample(lambda m, x: F(m).group_norm(x, 3, eps=1e-3), (_f(2, 6, 5, dtype=np.float64),),
               name="3d"),
        Sample(lambda m, x: F(m).group_norm(x, 1), (_f(3, 4),), name="2d"),
    ],
    "aten::instance_norm": [
        Sample(lambda m, x, w, b: F(m).instance_norm(x, weight=w, bias=b), (_f(2, 3, 4, 4), _f(3),
                                                                            _f(3))),
        Sample(lambda m, x, rm, rv: (F(m).instance_norm(x, rm, rv, momentum=0.5), rm, rv),
               (_f(2, 3, 5), _f(3), np.abs(_f(3))), name="running"),
        Sample(lambda m, x, rm, rv: F(m).instance_norm(x, rm, rv, use_input_stats=False),
               (_f(2, 3, 5), _f(3), np.abs(_f(3))), name="eval"),
    ],
}

SAMPLES = {**CONV, **PADDING, **RESAMPLE, **POOLING, **NORMALIZATION}
