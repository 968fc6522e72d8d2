"""nn layers against PyTorch: error classes and wording for bad ranks/channels/arguments,
hypothesis tests of convolution and pooling shape arithmetic (values too, in float64), and the
in-place side effects (batch-norm running statistics, ``max_norm`` embedding renorm)."""

import numpy as np
import pytest
import torch
from helpers import check, check_error, check_meta
from hypothesis import given
from hypothesis import strategies as st

import strata

RNG = np.random.default_rng(5)


def f32(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def f64(*shape):
    return RNG.standard_normal(shape)


def i64(*shape, high=4):
    return RNG.integers(0, high, shape)


def F(m):
    return m.nn.functional


def same_error(fn, *inputs):
    """Both raise the same exception class with the same message (first line)."""
    s, t = check_error(fn, *inputs)
    assert str(s).splitlines()[0] == str(t).splitlines()[0], f"{s!r} != torch's {t!r}"
    return s


CONV_ERRORS = [
    (lambda m, x, w: F(m).conv2d(x, w), (f32(1, 2, 5, 5), f32(4, 3, 3, 3))),
    (lambda m, x, w: F(m).conv2d(x, w), (f32(2, 5, 5), f32(4, 3, 3, 3))),
    (lambda m, x, w: F(m).conv2d(x, w), (f32(5, 5), f32(4, 3, 3, 3))),
    (lambda m, x, w: F(m).conv2d(x, w), (f32(1, 3, 5, 5), f32(4, 3, 3))),
    (lambda m, x, w: F(m).conv2d(x, w, groups=2), (f32(1, 4, 5, 5), f32(3, 2, 3, 3))),
    (lambda m, x, w: F(m).conv2d(x, w, groups=0), (f32(1, 4, 5, 5), f32(4, 2, 3, 3))),
    (lambda m, x, w, b: F(m).conv2d(x, w, b), (f32(1, 3, 5, 5), f32(4, 3, 3, 3), f32(3))),
    (lambda m, x, w, b: F(m).conv2d(x, w, b), (f64(1, 3, 5, 5), f64(4, 3, 3, 3), f32(4))),
    (lambda m, x, w: F(m).conv2d(x, w), (f64(1, 3, 5, 5), f32(4, 3, 3, 3))),
    (lambda m, x, w: F(m).conv2d(x, w), (f32(1, 3, 2, 2), f32(4, 3, 3, 3))),
    (lambda m, x, w: F(m).conv2d(x, w, stride=0), (f32(1, 3, 5, 5), f32(4, 3, 3, 3))),
    (lambda m, x, w: F(m).conv2d(x, w, padding=-1), (f32(1, 3, 5, 5), f32(4, 3, 3, 3))),
    (lambda m, x, w: F(m).conv2d(x, w, padding=(1, 1, 1)), (f32(1, 3, 5, 5), f32(4, 3, 3, 3))),
    (lambda m, x, w: F(m).conv2d(x, w, padding="same", stride=2),
     (f32(1, 3, 5, 5), f32(4, 3, 3, 3))),
    (lambda m, x, w: F(m).conv2d(x, w, padding="foo"), (f32(1, 3, 5, 5), f32(4, 3, 3, 3))),
    (lambda m, x, w: F(m).conv2d(x.bool(), w.bool()), (f32(1, 3, 5, 5), f32(4, 3, 3, 3))),
    (lambda m, x, w: F(m).conv1d(x, w), (f32(1, 2, 5), f32(4, 3, 3))),
    (lambda m, x, w: F(m).conv1d(x, w), (f32(1, 2, 5, 5), f32(4, 3, 3))),
    (lambda m, x, w: F(m).conv_transpose2d(x, w), (f32(1, 2, 5, 5), f32(3, 4, 3, 3))),
    (lambda m, x, w: F(m).conv_transpose2d(x, w, output_padding=1),
     (f32(1, 3, 5, 5), f32(3, 4, 3, 3))),
    (lambda m, x, w, b: F(m).conv_transpose2d(x, w, b), (f32(1, 3, 5, 5), f32(3, 4, 3, 3),
                                                         f32(3))),
    (lambda m, x, w: F(m).conv_transpose2d(x.int(), w.int()), (f32(1, 3, 5, 5),
                                                               f32(3, 4, 3, 3))),
    (lambda m, x, w: F(m).linear(x, w), (f32(4, 3), f32(2, 5))),
    (lambda m, x, w: F(m).linear(x, w), (f32(4, 3), f64(2, 3))),
    (lambda m, x, w, b: F(m).linear(x, w, b), (f32(4, 3), f32(2, 3), f32(3))),
    (lambda m, a, b, w: F(m).bilinear(a, b, w), (f32(4, 3), f32(4, 2), f32(5, 3, 3))),
    (lambda m, a, b, w: F(m).bilinear(a, b, w), (f32(4, 3), f32(3, 2), f32(5, 3, 2))),
]


@pytest.mark.parametrize("fn,inputs", CONV_ERRORS)
def test_conv_and_linear_errors(fn, inputs):
    same_error(fn, *inputs)


def test_conv_dilation_error():
    check_error(lambda m, x, w: F(m).conv2d(x, w, dilation=0), f32(1, 3, 5, 5), f32(4, 3, 3, 3),
                match="dilation should be greater than zero")


POOL_ERRORS = [
    (lambda m, x: F(m).max_pool2d(x, 6), (f32(1, 3, 5, 5),)),
    (lambda m, x: F(m).max_pool2d(x, 2, padding=2), (f32(1, 3, 5, 5),)),
    (lambda m, x: F(m).max_pool2d(x, 2), (f32(5),)),
    (lambda m, x: F(m).max_pool2d(x, 2), (f32(1, 0, 5, 5),)),
    (lambda m, x: F(m).max_pool2d(x, 2), (f32(0, 5, 5),)),
    (lambda m, x: F(m).max_pool2d(x, (2, 2, 2)), (f32(1, 1, 5, 5),)),
    (lambda m, x: F(m).max_pool2d(x, 0), (f32(1, 1, 5, 5),)),
    (lambda m, x: F(m).max_pool2d(x, 2, (1, 1, 1)), (f32(1, 1, 5, 5),)),
    (lambda m, x: F(m).max_pool2d(x, 2, stride=0), (f32(1, 3, 5, 5),)),
    (lambda m, x: F(m).max_pool2d(x, 2, padding=-1), (f32(1, 3, 5, 5),)),
    (lambda m, x: F(m).max_pool2d(x, 2, dilation=0), (f32(1, 3, 5, 5),)),
    (lambda m, x: F(m).max_pool2d(x.bool(), 2), (f32(1, 1, 4, 4),)),
    (lambda m, x: F(m).max_pool1d(x, 6), (f32(1, 3, 5),)),
    (lambda m, x: F(m).max_pool1d(x, 2), (f32(5),)),
    (lambda m, x: F(m).max_pool1d(x, (2, 2)), (f32(2, 5),)),
    (lambda m, x: F(m).max_pool1d(x, 2, 0), (f32(2, 5),)),
    (lambda m, x: F(m).max_pool1d(x, 2, padding=2), (f32(2, 5),)),
    (lambda m, x: F(m).max_pool1d(x, 2, dilation=0), (f32(2, 5),)),
    (lambda m, x: F(m).max_pool1d(x, 2), (i64(2, 5),)),
    (lambda m, x: F(m).max_pool1d(x, 2, return_indices=True), (f32(5),)),
    (lambda m, x: F(m).max_pool1d(x, 2, return_indices=True), (f32(1, 1),)),
    (lambda m, x: F(m).avg_pool2d(x, 6), (f32(1, 3, 5, 5),)),
    (lambda m, x: F(m).avg_pool2d(x, 2, padding=2), (f32(1, 3, 5, 5),)),
    (lambda m, x: F(m).avg_pool2d(x, 2, divisor_override=0), (f32(1, 1, 4, 4),)),
    (lambda m, x: F(m).avg_pool2d(x, 2), (f32(5),)),
    (lambda m, x: F(m).avg_pool2d(x, 2), (i64(1, 1, 4, 4).astype(np.uint8),)),
    (lambda m, x: F(m).avg_pool2d(x, 2), (i64(1, 1, 4, 4).astype(np.int32),)),
    (lambda m, x: F(m).avg_pool1d(x, 6), (f32(1, 3, 5),)),
    (lambda m, x: F(m).avg_pool1d(x, 2), (f32(5),)),
    (lambda m, x: F(m).avg_pool1d(x, (2, 2)), (f32(1, 5),)),
    (lambda m, x: F(m).adaptive_avg_pool2d(x, 2), (f32(5, 5),)),
    (lambda m, x: F(m).adaptive_avg_pool2d(x, 2), (i64(1, 1, 4, 4),)),
    (lambda m, x: F(m).adaptive_avg_pool2d(x, (2, 2, 2)), (f32(1, 5, 5),)),
    (lambda m, x: F(m).adaptive_avg_pool2d(x, (-1, 2)), (f32(1, 5, 5),)),
    (lambda m, x: F(m).adaptive_avg_pool2d(x, (2, 2)), (f32(1, 0, 5),)),
    (lambda m, x: F(m).adaptive_max_pool2d(x, 2), (f32(5, 5),)),
    (lambda m, x: F(m).adaptive_max_pool2d(x, 2), (i64(1, 1, 4, 4),)),
    (lambda m, x: F(m).adaptive_max_pool2d(x, (2, 2)), (f32(1, 0, 5),)),
    (lambda m, x: F(m).adaptive_avg_pool1d(x, 2), (f32(5),)),
    (lambda m, x: F(m).adaptive_avg_pool1d(x, (2, 2)), (f32(1, 5),)),
    (lambda m, x: F(m).adaptive_max_pool1d(x, 2), (f32(5),)),
    (lambda m, x: F(m).adaptive_max_pool1d(x, (2, 2)), (f32(2, 5),)),
]


@pytest.mark.parametrize("fn,inputs", POOL_ERRORS)
def test_pooling_errors(fn, inputs):
    same_error(fn, *inputs)


NORM_ERRORS = [
    (lambda m, x: F(m).layer_norm(x, (4,)), (f32(2, 3),)),
    (lambda m, x, w: F(m).layer_norm(x, (3,), w), (f32(2, 3), f32(4))),
    (lambda m, x, b: F(m).layer_norm(x, (3,), None, b), (f32(2, 3), f32(4))),
    (lambda m, x: F(m).layer_norm(x, ()), (f32(2, 3),)),
    (lambda m, x: F(m).layer_norm(x, (3,)), (i64(2, 3),)),
    (lambda m, x, rm, rv: F(m).batch_norm(x, rm, rv), (f32(2, 3), f32(4), f32(4))),
    (lambda m, x: F(m).batch_norm(x, None, None, training=True), (f32(1, 3),)),
    (lambda m, x, w: F(m).batch_norm(x, None, None, w, training=True), (f32(2, 3), f32(4))),
    (lambda m, x: F(m).batch_norm(x, None, None, training=True), (i64(2, 3),)),
    (lambda m, x: F(m).batch_norm(x, None, None), (f32(2, 3),)),
    (lambda m, x, w: F(m).batch_norm(x, None, None, w, training=True), (f64(2, 3), f32(3))),
    (lambda m, x: F(m).group_norm(x, 4), (f32(2, 6, 3),)),
    (lambda m, x, w: F(m).group_norm(x, 3, w), (f32(2, 6, 3), f32(5))),
    (lambda m, x, b: F(m).group_norm(x, 3, None, b), (f32(2, 6, 3), f32(5))),
    (lambda m, x: F(m).instance_norm(x), (f32(2, 3),)),
    (lambda m, x: F(m).instance_norm(x), (f32(2, 3, 1),)),
]


@pytest.mark.parametrize("fn,inputs", NORM_ERRORS)
def test_normalization_errors(fn, inputs):
    same_error(fn, *inputs)


OTHER_ERRORS = [
    (lambda m, i, w: F(m).embedding(i, w), (f32(3), f32(5, 4))),
    (lambda m, i, w: F(m).embedding(i, w), (i64(3) * 7, f32(5, 4))),
    (lambda m, i, w: F(m).embedding(i, w), (-i64(3) - 1, f32(5, 4))),
    (lambda m, i, w: F(m).embedding(i, w), (i64(3), f32(5))),
    (lambda m, i, w: F(m).embedding(i, w, padding_idx=7), (i64(3), f32(5, 4))),
    (lambda m, i, w: F(m).embedding(i, w, padding_idx=-7), (i64(3), f32(5, 4))),
    (lambda m, x: F(m).pad(x, (1, 2, 3)), (f32(2, 3),)),
    (lambda m, x: F(m).pad(x, (1, 2, 3, 4, 5, 6)), (f32(2, 3),)),
    (lambda m, x: F(m).pad(x, (3, 3), mode="reflect"), (f32(1, 2, 3),)),
    (lambda m, x: F(m).pad(x, (1, 1), mode="reflect"), (f32(3),)),
    (lambda m, x: F(m).pad(x, (1, 1), mode="reflect"), (f32(1, 3, 4, 4),)),
    (lambda m, x: F(m).pad(x, (1, 1), mode="replicate"), (f32(3),)),
    (lambda m, x: F(m).pad(x, (4, 4), mode="circular"), (f32(1, 2, 3),)),
    (lambda m, x: F(m).pad(x, (4, 4), mode="foo"), (f32(1, 2, 3),)),
    (lambda m, x: F(m).pad(x, (-4, 0)), (f32(1, 2, 3),)),
    (lambda m, x: F(m).pad(x, (1, 1), mode="reflect", value=1.0), (f32(1, 2, 3),)),
    (lambda m, x: F(m).pad(x.bool(), (1, 1), mode="reflect"), (f32(1, 2, 3),)),
    (lambda m, x: F(m).pixel_shuffle(x, 2), (f32(1, 3, 2, 2),)),
    (lambda m, x: F(m).pixel_shuffle(x, 2), (f32(4, 2),)),
    (lambda m, x: F(m).pixel_unshuffle(x, 2), (f32(1, 3, 3, 2),)),
    (lambda m, x: F(m).unfold(x, 3), (f32(1, 3, 2, 2),)),
    (lambda m, x: F(m).unfold(x, 3), (f32(3, 2),)),
    (lambda m, x: F(m).unfold(x, 2, stride=0), (f32(1, 3, 4, 4),)),
    (lambda m, x: F(m).unfold(x, 2), (i64(1, 3, 4, 4),)),
    (lambda m, x: F(m).fold(x, (3, 3), 2), (f32(1, 12, 5),)),
    (lambda m, x: F(m).fold(x, (3, 3), 2), (f32(1, 10, 4),)),
    (lambda m, x: F(m).interpolate(x, scale_factor=2, mode="bilinear"), (f32(1, 3, 4),)),
    (lambda m, x: F(m).interpolate(x, size=3, scale_factor=2), (f32(1, 3, 4, 4),)),
    (lambda m, x: F(m).interpolate(x), (f32(1, 3, 4, 4),)),
    (lambda m, x: F(m).interpolate(x, size=3, align_corners=True), (f32(1, 3, 4, 4),)),
    (lambda m, x: F(m).interpolate(x, size=3, mode="foo"), (f32(1, 3, 4, 4),)),
    (lambda m, x: F(m).interpolate(x, size=(3,)), (f32(1, 3, 4, 4),)),
    (lambda m, x: F(m).interpolate(x, size=3, recompute_scale_factor=True), (f32(1, 3, 4, 4),)),
    (lambda m, x: F(m).interpolate(x, size=3, mode="linear"), (f32(1, 3, 4, 4),)),
    (lambda m, x: F(m).interpolate(x, size=3), (i64(1, 3, 4, 4),)),
    (lambda m, a, b: F(m).cosine_similarity(a, b), (f32(3, 4), f32(2, 4))),
    (lambda m, a, b: F(m).cosine_similarity(a, b), (i64(3, 4), i64(3, 4))),
    (lambda m, a, b: F(m).pairwise_distance(a, b), (f32(3, 4), f32(2, 4))),
]


@pytest.mark.parametrize("fn,inputs", OTHER_ERRORS)
def test_other_layer_errors(fn, inputs):
    same_error(fn, *inputs)


@pytest.mark.parametrize("fn,inputs", [
    (lambda m, x, w: F(m).conv2d(x, w), (f32(1, 2, 5, 5), f32(4, 3, 3, 3))),
    (lambda m, x: F(m).max_pool2d(x, 6), (f32(1, 3, 5, 5),)),
    (lambda m, x: F(m).layer_norm(x, (4,)), (f32(2, 3),)),
    (lambda m, i, w: F(m).embedding(i, w), (f32(3), f32(5, 4))),
    (lambda m, x: F(m).pad(x, (3, 3), mode="reflect"), (f32(1, 2, 3),)),
])
def test_meta_device_raises_the_same_errors(fn, inputs):
    with pytest.raises(Exception) as cpu:
        fn(strata, *(strata.tensor(x) for x in inputs))
    with pytest.raises(type(cpu.value)) as meta:
        fn(strata, *(strata.tensor(x).to("meta") for x in inputs))
    assert str(meta.value) == str(cpu.value)


# --- side effects ------------------------------------------------------------------------------

def test_batch_norm_updates_running_stats_in_place():
    x = f32(8, 3, 4)
    rm, rv = f32(3), np.abs(f32(3))
    srm, srv = strata.tensor(rm), strata.tensor(rv)
    trm, trv = torch.tensor(rm), torch.tensor(rv)
    ptr = srm.data_ptr()
    F(strata).batch_norm(strata.tensor(x), srm, srv, training=True, momentum=0.3)
    F(torch).batch_norm(torch.tensor(x), trm, trv, training=True, momentum=0.3)
    assert srm.data_ptr() == ptr
    np.testing.assert_allclose(srm.numpy(), trm.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(srv.numpy(), trv.numpy(), rtol=1e-5, atol=1e-6)
    before = srm.numpy().copy()
    F(strata).batch_norm(strata.tensor(x), srm, srv, training=False)
    np.testing.assert_array_equal(srm.numpy(), before)


def test_batch_norm_on_meta_leaves_running_stats_alone():
    rm = strata.zeros(3)
    out = F(strata).batch_norm(strata.ones(4, 3, device="meta"), rm.to("meta"),
                               strata.ones(3, device="meta"), training=True)
    assert out.device.type == "meta" and rm.tolist() == [0.0, 0.0, 0.0]


def test_embedding_max_norm_renormalizes_weight_rows():
    w = f32(6, 4) * 3
    idx = np.array([[0, 2], [2, 5]])
    sw, tw = strata.tensor(w), torch.tensor(w)
    s = F(strata).embedding(strata.tensor(idx), sw, max_norm=1.0)
    t = F(torch).embedding(torch.tensor(idx), tw, max_norm=1.0)
    np.testing.assert_allclose(s.numpy(), t.numpy(), rtol=1e-5)
    np.testing.assert_allclose(sw.numpy(), tw.numpy(), rtol=1e-5)
    np.testing.assert_array_equal(sw.numpy()[1], w[1])  # untouched row
    assert sw._version == tw._version == 1   # one in-place write, as PyTorch counts it


def test_padding_idx_is_normalized_like_torch():
    check(lambda m, i, w: F(m).embedding(i, w, padding_idx=-1), i64(2, 3, high=5), f32(5, 2))


# --- property tests: conv and pool shape arithmetic --------------------------------------------

@st.composite
def conv_case(draw, transposed=False):
    groups = draw(st.integers(1, 2))
    cin, cout = groups * draw(st.integers(1, 2)), groups * draw(st.integers(1, 2))
    kernel = tuple(draw(st.integers(1, 3)) for _ in range(2))
    stride = tuple(draw(st.integers(1, 3)) for _ in range(2))
    dilation = tuple(draw(st.integers(1, 2)) for _ in range(2))
    padding = tuple(draw(st.integers(0, 2)) for _ in range(2))
    spatial = tuple(draw(st.integers(1, 7)) for _ in range(2))
    if transposed:
        output_padding = tuple(draw(st.integers(0, max(s, d) - 1))
                               for s, d in zip(stride, dilation))
        return (draw(st.integers(1, 2)), cin) + spatial, (cin, cout // groups) + kernel, \
            {"stride": stride, "padding": padding, "output_padding": output_padding,
             "groups": groups, "dilation": dilation}
    return (draw(st.integers(0, 2)), cin) + spatial, (cout, cin // groups) + kernel, \
        {"stride": stride, "padding": padding, "dilation": dilation, "groups": groups}


@given(conv_case())
def test_conv2d_matches_torch(case):
    x_shape, w_shape, kwargs = case
    fn = lambda m, x, w, b: F(m).conv2d(x, w, b, **kwargs)
    args = (f64(*x_shape), f64(*w_shape), f64(w_shape[0]))
    try:
        torch_out = fn(torch, *(torch.tensor(a) for a in args))
    except RuntimeError:   # kernel larger than the padded input: both must refuse
        same_error(fn, *args)
        return
    assert tuple(torch_out.shape) == tuple(fn(strata, *(strata.tensor(a) for a in args)).shape)
    check(fn, *args)
    check_meta(fn, *args)


@given(conv_case(transposed=True))
def test_conv_transpose2d_matches_torch(case):
    x_shape, w_shape, kwargs = case
    fn = lambda m, x, w: F(m).conv_transpose2d(x, w, **kwargs)
    args = (f64(*x_shape), f64(*w_shape))
    try:
        fn(torch, *(torch.tensor(a) for a in args))
    except RuntimeError:   # a non-positive output size: both must refuse
        same_error(fn, *args)
        return
    check(fn, *args)
    check_meta(fn, *args)


@st.composite
def pool_case(draw):
    kernel = tuple(draw(st.integers(1, 4)) for _ in range(2))
    stride = tuple(draw(st.integers(1, 3)) for _ in range(2))
    padding = tuple(draw(st.integers(0, k // 2)) for k in kernel)
    spatial = tuple(draw(st.integers(1, 8)) for _ in range(2))
    return (draw(st.integers(1, 2)), 2) + spatial, kernel, stride, padding, draw(st.booleans())


@given(pool_case(), st.integers(1, 2))
def test_max_pool2d_matches_torch(case, dilation):
    shape, kernel, stride, padding, ceil_mode = case
    fn = lambda m, x: F(m).max_pool2d(x, kernel, stride, padding, dilation, ceil_mode,
                                      return_indices=True)
    x = f64(*shape)
    try:
        fn(torch, torch.tensor(x))
    except RuntimeError:
        same_error(fn, x)
        return
    check(fn, x)
    check_meta(fn, x)


@given(pool_case(), st.booleans())
def test_avg_pool2d_matches_torch(case, count_include_pad):
    shape, kernel, stride, padding, ceil_mode = case
    fn = lambda m, x: F(m).avg_pool2d(x, kernel, stride, padding, ceil_mode,
                                      count_include_pad)
    x = f64(*shape)
    try:
        fn(torch, torch.tensor(x))
    except RuntimeError:
        same_error(fn, x)
        return
    check(fn, x)
    check_meta(fn, x)


@given(st.tuples(st.integers(1, 9), st.integers(1, 9)),
       st.tuples(st.integers(1, 6), st.integers(1, 6)))
def test_adaptive_pools_match_torch(size, out):
    x = f64(1, 2, *size)
    check(lambda m, a: F(m).adaptive_avg_pool2d(a, out), x)
    check(lambda m, a: F(m).adaptive_max_pool2d(a, out, return_indices=True), x)


@given(st.tuples(st.integers(1, 6), st.integers(1, 6)),
       st.tuples(st.integers(1, 9), st.integers(1, 9)), st.booleans())
def test_interpolate_matches_torch(size, out, align_corners):
    x = f64(1, 2, *size)
    check(lambda m, a: F(m).interpolate(a, size=out), x)
    check(lambda m, a: F(m).interpolate(a, size=out, mode="bilinear",
                                        align_corners=align_corners), x)


@given(st.integers(1, 3), st.integers(1, 3), st.integers(0, 1), st.integers(1, 2))
def test_unfold_fold_round_trip(kh, kw, pad, stride):
    x = f64(2, 3, 5, 6)
    check(lambda m, a: F(m).fold(F(m).unfold(a, (kh, kw), padding=pad, stride=stride), (5, 6),
                                 (kh, kw), padding=pad, stride=stride), x)


# --- functional wrappers without ops of their own ----------------------------------------------

@pytest.mark.parametrize("kwargs", [{}, {"p": 1.0}, {"dim": 0}, {"p": 3, "dim": (0, 2)},
                                    {"eps": 10.0}])
def test_normalize(kwargs):
    check(lambda m, x: F(m).normalize(x, **kwargs), f32(3, 4, 2))


def test_normalize_errors_and_out():
    same_error(lambda m, x: F(m).normalize(x), i64(3, 4))
    out = strata.empty(2, 3)
    res = F(strata).normalize(strata.ones(2, 3), out=out)
    assert res is out
    np.testing.assert_allclose(out.numpy(), np.full((2, 3), 3 ** -0.5), rtol=1e-6)


@pytest.mark.parametrize("fn", [
    lambda m, x: F(m).interpolate(x, size=(2, 3), mode="area"),
    lambda m, x: F(m).interpolate(x, scale_factor=0.5, mode="area"),
    lambda m, x: F(m).upsample(x, scale_factor=2),
    lambda m, x: F(m).upsample_nearest(x, size=5),
    lambda m, x: F(m).upsample_bilinear(x, scale_factor=2),
    lambda m, x: F(m).interpolate(x, size=(5, 9), mode="bicubic"),
    lambda m, x: F(m).interpolate(x.reshape(1, 2, 2, 2, 6), scale_factor=1.5, mode="trilinear"),
    lambda m, x: F(m).interpolate(x.reshape(1, 2, 2, 2, 6), size=(3, 1, 4)),
])
def test_interpolate_modes_and_aliases(fn):
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # torch deprecates the upsample* aliases
        check(fn, f32(1, 2, 4, 6))


def test_interpolate_unsupported_mode_says_so():
    with pytest.raises(NotImplementedError, match="area"):
        F(strata).interpolate(strata.ones(1, 1, 2, 2, 2), size=3, mode="area")


@pytest.mark.parametrize("affine", [True, False])
def test_layer_norm_double_backward_matches_torch(affine):
    """Under create_graph the mean and rstd are recomputed from the input, so the second
    derivative sees their dependence on x (the saved ones have no history)."""
    rng = np.random.default_rng(0)
    x, g, v = (rng.standard_normal((3, 2, 5)) for _ in range(3))
    w, b = rng.standard_normal((2, 5)), rng.standard_normal((2, 5))

    def second(m):
        inputs = [m.tensor(x, requires_grad=True)]
        if affine:
            inputs += [m.tensor(w, requires_grad=True), m.tensor(b, requires_grad=True)]
        y = m.nn.functional.layer_norm(inputs[0], (2, 5), *inputs[1:], eps=1e-5)
        firsts = m.autograd.grad((y * m.tensor(g)).sum(), inputs, create_graph=True)
        total = sum((f * m.tensor(v if f.shape == v.shape else v[0])).sum() for f in firsts)
        return [t.detach().numpy() for t in m.autograd.grad(total, inputs[:2])]

    for got, want in zip(second(strata), second(torch)):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
