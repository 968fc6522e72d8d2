"""2-d convolution's generated im2col/col2im (compile/inductor/eager_conv.py) against PyTorch on
both paths (C, and NumPy's windows with the C kernels switched off): outputs and the input,
weight and bias gradients over strides, padding, dilation, groups, views and the transposed
convolution; and the C column matrix is the NumPy one, bit for bit."""

import numpy as np
import pytest
import torch
from helpers import assert_same, native_paths
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import strata
from strata.backends.cpu import native, nn


path = native_paths("eager_conv", "im2col2d_float32")


def _check(a, wt, args, view=lambda m, t: t, transposed=False):
    rng = np.random.default_rng(7)
    results = []
    conv = "conv_transpose2d" if transposed else "conv2d"
    for m in (strata, torch):
        x = m.tensor(a, requires_grad=True)
        w = m.tensor(wt, requires_grad=True)
        channels = wt.shape[1] * args[-1] if transposed else wt.shape[0]
        b = m.tensor(np.arange(channels, dtype=a.dtype), requires_grad=True)
        y = getattr(m.nn.functional, conv)(view(m, x), w, b, *args)
        if m is strata:
            grad = rng.standard_normal(tuple(y.shape)).astype(a.dtype)
        y.backward(m.tensor(grad))
        results.append((y.detach(), x.grad, w.grad, b.grad))
    tol = 2e-4 if a.dtype == np.float32 else 1e-10
    for got, want in zip(*results):
        assert_same(got, want, atol=tol, rtol=tol)


@settings(max_examples=30, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(h=st.integers(1, 12), w=st.integers(1, 12), k=st.integers(1, 4), s=st.integers(1, 3),
       p=st.integers(0, 2), d=st.integers(1, 2), groups=st.sampled_from([1, 2]),
       dtype=st.sampled_from(["float32", "float64"]), seed=st.integers(0, 9))
def test_matches_torch(path, h, w, k, s, p, d, groups, dtype, seed):
    if h + 2 * p - d * (k - 1) - 1 < 0 or w + 2 * p - d * (k - 1) - 1 < 0:
        return   # no output position: PyTorch's error (tested in test_nn_layers.py)
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((2, 4, h, w)).astype(dtype)
    wt = rng.standard_normal((6, 4 // groups, k, k)).astype(dtype)
    _check(a, wt, (s, p, d, groups))


@pytest.mark.parametrize("view", [lambda m, t: t.transpose(2, 3), lambda m, t: t[:, :, ::2],
                                  lambda m, t: t.to(memory_format=m.channels_last)])
def test_strided_inputs(path, view):
    rng = np.random.default_rng(1)
    a = rng.standard_normal((2, 3, 10, 10)).astype(np.float32)
    _check(a, rng.standard_normal((4, 3, 3, 3)).astype(np.float32), (1, 1, 1, 1), view)


def test_transposed_convolution(path):
    rng = np.random.default_rng(2)
    a = rng.standard_normal((2, 4, 5, 6))
    _check(a, rng.standard_normal((4, 3, 3, 3)), (2, 1, 1, 1), transposed=True)


def test_special_values_stay_in_their_windows(path):
    a = np.zeros((1, 1, 6, 6), np.float32)
    a[0, 0, 0, 0], a[0, 0, 5, 5] = np.inf, np.nan
    _check(a, np.ones((1, 1, 2, 2), np.float32), (2, 0, 1, 1))


def test_columns_are_numpys_bit_for_bit():
    x = np.random.default_rng(3).standard_normal((3, 2, 9, 7)).astype(np.float32)[:, :, ::-1]
    args = ((3, 2), (2, 1), (1, 2), (1, 2))
    out = (4, 6)
    native.reset()
    cols = nn._im2col2d(x, *args, out)
    if cols is None:
        pytest.skip("no C compiler")
    view = nn.windows(x, *args, out).transpose(1, 4, 5, 0, 2, 3)
    assert np.array_equal(cols, view)
    image = nn._col2im2d(np.ascontiguousarray(cols), 3, (9, 7), *args)
    want = nn.col2im_nd(np.ascontiguousarray(cols).transpose(3, 0, 1, 2, 4, 5), (9, 7), *args)
    assert np.array_equal(image, want)
