"""max_pool2d's generated C loops (compile/inductor/eager_pool.py) against PyTorch, on both
paths (C, and the NumPy fallback with the C kernels switched off): values, indices and input
gradients, with NaN, +-inf and ties in the windows, padding, dilation and ceil mode."""

import numpy as np
import pytest
import torch
from helpers import assert_same, native_paths
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import strata
from strata.backends.cpu import pooling


path = native_paths("eager_pool", "max_pool2d_float32")


def _input(shape, dtype, seed):
    rng = np.random.default_rng(seed)
    a = rng.integers(-3, 4, shape).astype(dtype)       # small integers: many ties
    flat = a.reshape(-1)
    picks = rng.choice(flat.size, size=min(flat.size, 6), replace=False)
    flat[picks] = [np.nan, np.inf, -np.inf, np.nan, -np.inf, np.inf][:picks.size]
    return a


def _pool_both(a, grad, args):
    results = []
    for m in (strata, torch):
        x = m.tensor(a, requires_grad=True)
        y, i = m.nn.functional.max_pool2d(x, *args, return_indices=True)
        y.backward(m.tensor(grad))
        results.append((y.detach(), i, x.grad))
    return results


def _check(a, args, seed=0):
    with torch.no_grad():
        shape = torch.nn.functional.max_pool2d(torch.tensor(a), *args).shape
    grad = np.random.default_rng(seed + 1).standard_normal(tuple(shape)).astype(a.dtype)
    (ys, i_s, gs), (yt, i_t, gt) = _pool_both(a, grad, args)
    assert_same(ys, yt, atol=0, rtol=0)
    assert_same(i_s, i_t, atol=0, rtol=0)
    assert_same(gs, gt, atol=1e-6, rtol=1e-6)


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(h=st.integers(1, 20), w=st.integers(1, 40), k=st.integers(1, 4), s=st.integers(1, 3),
       p=st.integers(0, 2), d=st.integers(1, 2), ceil=st.booleans(),
       dtype=st.sampled_from(["float32", "float64"]), seed=st.integers(0, 9))
def test_matches_torch(path, h, w, k, s, p, d, ceil, dtype, seed):
    if p > k // 2 or (h + 2 * p - d * (k - 1) - 1) < 0 or (w + 2 * p - d * (k - 1) - 1) < 0:
        return   # PyTorch refuses these (tested in test_nn_layers.py)
    _check(_input((2, 3, h, w), dtype, seed), (k, s, p, d, ceil), seed)


@pytest.mark.parametrize("shape,args", [
    ((4, 8, 26, 26), (2,)),                    # 2x2, stride 2: the one-pass pair kernel
    ((2, 4, 11, 11), (2,)),                    # floor mode drops the last row and column
    ((4, 8, 26, 26), (3,)),                    # every window inside: the plane kernel
    ((4, 8, 26, 26), (2, 1)),                  # 2x2 windows overlapping: the plane kernel
    ((2, 3, 40, 40), (3, 2, 1)),               # padding, long rows: the row kernel
    ((2, 3, 40, 37), (3, 2, 1, 2, True)),      # dilation and an overhanging last window
    ((1, 2, 9, 9), (2, 2, 1)),                 # padding, short rows: NumPy on both paths
    ((32, 32, 26, 26), (2,)),                  # the backward's planes in several chunks
])
def test_each_kernel_matches_torch(path, shape, args):
    _check(_input(shape, "float32", 3), args)


def test_the_kernel_chosen(path):
    """Short rows with padding stay on NumPy (faster there); everything else runs C."""
    runs = (path == "native")
    x = np.zeros((2, 3, 40, 40), np.float32)
    assert (pooling._generated_max_pool(x, (20, 20), (2, 2), (2, 2), (0, 0), (1, 1))
            is not None) == runs
    assert (pooling._generated_max_pool(x, (21, 21), (2, 2), (2, 2), (1, 1), (1, 1))
            is not None) == runs
    assert pooling._generated_max_pool(x[..., :9, :9].copy(), (5, 5), (2, 2), (2, 2), (1, 1),
                                       (1, 1)) is None


def test_views_halves_and_channels_last(path):
    a = _input((2, 4, 12, 12), "float32", 5)
    for view in (lambda m, t: t[:, ::2], lambda m, t: t.transpose(2, 3),
                 lambda m, t: t.to(memory_format=m.channels_last), lambda m, t: t.half()):
        s = strata.nn.functional.max_pool2d(view(strata, strata.tensor(a)), 2,
                                            return_indices=True)
        t = torch.nn.functional.max_pool2d(view(torch, torch.tensor(a)), 2, return_indices=True)
        assert_same(s[0], t[0], atol=0, rtol=0)
        assert_same(s[1], t[1], atol=0, rtol=0)


def test_overlapping_windows_sum_gradients_in_torch_order(path):
    """stride < kernel: one input element wins several windows; its gradient is their sum."""
    a = np.zeros((1, 1, 6, 6), np.float64)
    a[0, 0, 2, 2] = 5.0
    _check(a, (3, 1))


def test_expanded_and_strided_gradients(path):
    a = _input((2, 3, 8, 8), "float64", 6)
    for m_grad in (lambda m, y: m.ones(()).expand(y.shape), lambda m, y: m.ones(
            tuple(y.shape[:-1]) + (2 * y.shape[-1],), dtype=m.float64)[..., ::2]):
        grads = []
        for m in (strata, torch):
            x = m.tensor(a, requires_grad=True)
            y = m.nn.functional.max_pool2d(x, 2)
            y.backward(m_grad(m, y).to(y.dtype))
            grads.append(x.grad)
        assert_same(grads[0], grads[1], atol=0, rtol=0)


def test_two_by_two_pools_take_the_pair_kernel(path, monkeypatch):
    """Note [Eager 2x2 pools]: kernel 2, stride 2, no padding or dilation (odd sizes too) runs
    the compiled graph's one-pass kernel; other inside pools the plane kernel."""
    from strata.backends.cpu import native
    asked, real = [], native.function
    monkeypatch.setattr(native, "function", lambda lib, name: asked.append(name) or real(lib, name))
    for shape, args, kernel in (((2, 3, 13, 13), (2,), "max_pool2d_2x2_float32"),
                                ((2, 3, 12, 12), (2, 2, 0, 2), "max_pool2d_inside_float32"),
                                ((2, 3, 12, 12), (3, 3), "max_pool2d_inside_float32")):
        del asked[:]
        _check(_input(shape, "float32", 1), args)
        assert kernel in asked
