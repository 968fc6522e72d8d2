"""2-d convolution's generated im2col/col2im and drivers (compile/inductor/eager_conv.py) against
PyTorch on every path (the C drivers calling BLAS, the C im2col/col2im driven from Python as
with a BLAS other than OpenBLAS, and NumPy's windows with the C kernels switched off): outputs
and the input, weight and bias gradients over strides, padding, dilation, groups, views and the
transposed convolution; and the C column matrix is the NumPy one, bit for bit."""

import numpy as np
import pytest
import torch
from helpers import assert_same
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import strata
from strata import config
from strata.backends.cpu import blas, native, nn


@pytest.fixture(params=["driver", "blocks", "numpy"])
def path(request, monkeypatch):
    """"driver": the generated drivers calling BLAS (Note [Convolution drivers]); "blocks": no
    BLAS address, so Python drives the generated im2col/col2im and ``np.dot``; "numpy": no C.
    Each asserts that its path really is the one that runs (CI machines have a compiler)."""
    monkeypatch.setattr(config, "native_kernels", request.param != "numpy")
    native.reset()
    if request.param == "blocks":
        monkeypatch.setattr(blas, "gemm", lambda dtype: None)
    loaded = native.function("eager_conv", "im2col2d_float32") is not None
    assert loaded == (request.param != "numpy")
    assert (nn._driver("conv2d", np.ones(1, np.float32)) is not None) == (
        request.param == "driver")
    yield request.param
    native.reset()


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
    """The generated im2col and col2im against NumPy's windows and ``col2im_nd`` (the
    fallback's), on a flipped view with stride, padding and dilation; the channels-last col2im
    adds the same terms in another order (rounding may differ)."""
    x = np.random.default_rng(3).standard_normal((3, 2, 9, 7)).astype(np.float32)[:, :, ::-1]
    kernel, stride, padding, dilation = (3, 2), (2, 1), (1, 2), (1, 2)
    out = (4, 6)
    native.reset()
    im2col = nn._generated("im2col2d", x, kernel)
    if im2col is None:
        pytest.skip("no C compiler")
    args = (kernel, stride, padding, dilation)
    cols = np.empty((2, *kernel, 3, *out), np.float32)
    im2col(x.ctypes.data, cols.ctypes.data, *nn._im2col_args(x, *args, out), 0, 12)
    view = nn.windows(x, *args, out)                                   # (N, C, *out, *kernel)
    assert np.array_equal(cols, view.transpose(1, 4, 5, 0, 2, 3))
    want = nn.col2im_nd(cols.transpose(3, 0, 1, 2, 4, 5), (9, 7), *args)
    image = np.empty((3, 2, 9, 7), np.float32)
    geometry = (9, 7, *out, *kernel, *stride, *padding, *dilation)
    nn._generated("col2im2d", x, kernel)(cols.ctypes.data, image.ctypes.data, 3, 2, *geometry,
                                         0, 6)
    assert np.array_equal(image, want)
    last = np.ascontiguousarray(cols.transpose(3, 4, 5, 1, 2, 0))    # (N, *out, *kernel, C)
    scratch = np.empty(2 * 9 * 7, np.float32)
    for n in range(3):
        nn._generated("col2im2d_channels_last", x, kernel)(
            last[n].ctypes.data, image[n].ctypes.data, scratch.ctypes.data, 2, *geometry)
    np.testing.assert_allclose(image, want, rtol=1e-6, atol=1e-6)


# Kernels larger than their output take the kernel-row columns (the weight gradient's shape,
# Note [Batch-blocked convolution]); their own weight gradient is then a usual convolution.
@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(size=st.integers(8, 14), k=st.integers(6, 12), s=st.integers(1, 2), p=st.integers(0, 2),
       d=st.integers(1, 2), channels=st.integers(1, 9), groups=st.sampled_from([1, 2]),
       dtype=st.sampled_from(["float32", "float64"]), seed=st.integers(0, 9))
def test_kernels_larger_than_their_output(path, size, k, s, p, d, channels, groups, dtype, seed):
    if size + 2 * p - d * (k - 1) - 1 < 0:
        return
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((3, channels * groups, size, size + 1)).astype(dtype)
    wt = rng.standard_normal((6, channels, k, k)).astype(dtype)
    _check(a, wt, (s, p, d, groups))


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(h=st.integers(1, 7), k=st.integers(1, 4), s=st.integers(1, 3), p=st.integers(0, 2),
       d=st.integers(1, 2), groups=st.sampled_from([1, 2]), n=st.integers(1, 5),
       dtype=st.sampled_from(["float32", "float64"]), seed=st.integers(0, 9))
def test_transposed_convolution_matches_torch(path, h, k, s, p, d, groups, n, dtype, seed):
    extra = seed % max(s, d)   # output_padding must be below stride or dilation
    if (h - 1) * s - 2 * p + d * (k - 1) + extra + 1 <= 0:
        return
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((n, 4, h, h + 2)).astype(dtype)
    wt = rng.standard_normal((4, 6 // groups, k, k)).astype(dtype)
    results = []
    for m in (strata, torch):
        y = m.nn.functional.conv_transpose2d(m.tensor(a), m.tensor(wt), None, s, p, extra,
                                             groups, d)
        results.append(y)
    tol = 2e-4 if dtype == "float32" else 1e-10
    assert_same(results[0], results[1], atol=tol, rtol=tol)


@pytest.mark.parametrize("threads", [1, 2])
def test_one_sample_blocks_on_the_pool(path, threads):
    """The benchmark's layer: blocks of one sample (forward), the channels-last col2im (input
    gradient), channel blocks of kernel-row columns (weight gradient), on one and two threads;
    the same bits on every run."""
    before = strata.get_num_threads()
    strata.set_num_threads(threads)
    try:
        rng = np.random.default_rng(4)
        a = rng.standard_normal((6, 32, 13, 13)).astype(np.float32)
        wt = (rng.standard_normal((64, 32, 3, 3)) * 0.1).astype(np.float32)
        _check(a, wt, (1, 1, 1, 1))
        x, w = strata.tensor(a), strata.tensor(wt)
        runs = [strata.nn.functional.conv2d(x, w).numpy() for _ in range(2)]
        assert np.array_equal(*runs)
    finally:
        strata.set_num_threads(before)


def test_each_gradient_takes_its_blocked_path(monkeypatch):
    """Which path ran: a path's test passing through the NumPy fallback would prove nothing."""
    native.reset()
    if native.function("eager_conv", "im2col2d_float32") is None:
        pytest.skip("no C compiler")
    ran = []
    for name in ("_conv_blocked", "_conv_by_kernel_rows", "_conv_transpose_channels_last",
                 "_conv_transpose_blocked"):
        real = getattr(nn, name)
        monkeypatch.setattr(nn, name, lambda *a, _real=real, _name=name: (ran.append(_name),
                                                                          _real(*a))[1])
    rng = np.random.default_rng(5)
    a = rng.standard_normal((4, 8, 11, 11)).astype(np.float32)
    _check(a, rng.standard_normal((6, 8, 3, 3)).astype(np.float32), (1, 0, 1, 1))
    assert ran == ["_conv_blocked", "_conv_transpose_channels_last", "_conv_by_kernel_rows"]
    ran.clear()
    _check(a, rng.standard_normal((6, 4, 3, 3)).astype(np.float32), (1, 0, 1, 2))
    assert ran == ["_conv_blocked", "_conv_transpose_blocked"] + ["_conv_by_kernel_rows"] * 2


@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize("n", [0, 3])
def test_bias_and_owned_results(path, n, transposed):
    """The bias is added per block (forward) or after (the others), an empty batch included;
    the result owns its memory (the kernel wrapper copies a view: a serial pass)."""
    rng = np.random.default_rng(6)
    a = rng.standard_normal((n, 4, 9, 9)).astype(np.float32)
    wt = rng.standard_normal((4, 5, 3, 3) if transposed else (5, 4, 3, 3)).astype(np.float32)
    b = rng.standard_normal(5).astype(np.float32)
    conv = "conv_transpose2d" if transposed else "conv2d"
    got = getattr(strata.nn.functional, conv)(*map(strata.tensor, (a, wt, b)))
    want = getattr(torch.nn.functional, conv)(*map(torch.tensor, (a, wt, b)))
    assert_same(got, want, atol=1e-4, rtol=1e-4)
    out = nn.convolution_arrays(a, wt, b, (1, 1), (0, 0), (1, 1), transposed, 1,
                                tuple(want.shape[2:]))
    assert out.flags.c_contiguous and (out.flags.owndata or not n)   # empty: nothing to copy
    np.testing.assert_allclose(out, want.numpy(), atol=1e-4, rtol=1e-4)


def test_blas_gemm_is_found():
    """NumPy's wheels bundle OpenBLAS: its GEMMs are found, with their integer width; a dtype
    BLAS has no GEMM for answers None."""
    for dtype in ("float32", "float64"):
        gemm = blas.gemm(dtype)
        assert gemm is not None and gemm.address > 0 and gemm.ilp64 in (True, False)
    assert blas.gemm("int32") is None


def test_no_openblas_means_no_gemm(monkeypatch):
    """A NumPy on another BLAS (Accelerate) and no MKL wheel: no address, so the convolution
    keeps its Python-driven blocks (the "blocks" path above)."""
    blas._openblas.cache_clear()
    blas.gemm.cache_clear()
    monkeypatch.setattr(blas, "threadpool_info", lambda: [{"internal_api": "accelerate"}])
    monkeypatch.setattr(blas, "_mkl", lambda: None)
    try:
        assert blas.gemm("float32") is None and blas.provider() == "none"
        assert nn._driver("conv2d", np.ones(1, np.float32)) is None
    finally:
        blas._openblas.cache_clear()
        blas.gemm.cache_clear()


@pytest.mark.parametrize(("batch", "transposed_kernel", "mode"),
                         [(1, True, 0), (8, False, 1), (8, True, 2)])
def test_kernel_row_gemm_modes(monkeypatch, batch, transposed_kernel, mode):
    """Note [Kernel-row GEMMs]: few rows take one GEMM per channel (the kernel read in place),
    more rows one GEMM per block, a contiguous kernel in place, a transposed one (the output
    gradient's) gathered first; each against PyTorch."""
    native.reset()
    if nn._driver("conv2d_kernel_rows", np.ones(1, np.float32)) is None:
        pytest.skip("no C compiler or no OpenBLAS")
    modes = []
    real = nn._params
    monkeypatch.setattr(nn, "_params", lambda *v: (modes.append(v[23]), real(*v))[1])  # p[23]
    rng = np.random.default_rng(8)
    x = rng.standard_normal((batch, 4, 12, 12)).astype(np.float32)
    w = rng.standard_normal((6, 4, 10, 10)).astype(np.float32)
    if transposed_kernel:   # (6, 4, 10, 10) seen through a (4, 6, 10, 10) array's strides
        w = np.ascontiguousarray(w.transpose(1, 0, 2, 3)).transpose(1, 0, 2, 3)
    got = nn.convolution_arrays(x, w, None, (1, 1), (0, 0), (1, 1), False, 1, (3, 3))
    want = torch.nn.functional.conv2d(torch.tensor(x), torch.tensor(w))
    assert modes == [mode]
    np.testing.assert_allclose(got, want.numpy(), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("transposed", [False, True])
def test_relu_epilogue(path, transposed):
    """``relu=True`` (the compiled graph's conv + ReLU Extern): ReLU's ``x < 0 ? 0 : x`` after
    the bias on every path, per block where the blocks run; a NaN stays NaN."""
    rng = np.random.default_rng(9)
    a = rng.standard_normal((3, 4, 9, 9)).astype(np.float32)
    a[1, 2, 4, 4] = np.nan
    wt = rng.standard_normal((4, 5, 3, 3) if transposed else (5, 4, 3, 3)).astype(np.float32)
    b = rng.standard_normal(5).astype(np.float32)
    conv = "conv_transpose2d" if transposed else "conv2d"
    want = torch.relu(getattr(torch.nn.functional, conv)(*map(torch.tensor, (a, wt, b))))
    got = nn.convolution_arrays(a, wt, b, (1, 1), (0, 0), (1, 1), transposed, 1,
                                tuple(want.shape[2:]), relu=True)
    np.testing.assert_allclose(got, want.numpy(), atol=1e-4, rtol=1e-4)
    assert np.isnan(got).sum() == np.isnan(want.numpy()).sum() > 0
