"""F.fractional_max_pool2d/3d and nn.FractionalMaxPool2d/3d (nn/functional/fractional.py)
against PyTorch with the same ``_random_samples``: values, indices, gradients and errors."""

import numpy as np
import pytest
import torch
from helpers import check_error
from hypothesis import given, settings
from hypothesis import strategies as st

import strata


def _pool(m, x, samples, dims, **kwargs):
    fn = m.nn.functional.fractional_max_pool2d if dims == 2 else \
        m.nn.functional.fractional_max_pool3d
    return fn(m.tensor(x), _random_samples=m.tensor(samples), return_indices=True, **kwargs)


@given(st.integers(0, 10_000), st.sampled_from([2, 3]), st.booleans(),
       st.sampled_from(["float32", "float64"]))
@settings(max_examples=30)
def test_fractional_max_pool_matches_torch(seed, dims, batched, dtype):
    rng = np.random.default_rng(seed)
    spatial = tuple(int(v) for v in rng.integers(4, 10, dims))
    kernel = tuple(int(v) for v in rng.integers(1, 4, dims))
    out = tuple(int(rng.integers(1, s - k + 3 - dims)) for s, k in zip(spatial, kernel))
    shape = ((2,) if batched else ()) + (3,) + spatial
    x = rng.standard_normal(shape).astype(dtype)
    samples = rng.uniform(size=(2, 3, dims)).astype(dtype)
    (tv, ti), (sv, si) = (_pool(m, x, samples, dims, kernel_size=kernel, output_size=out)
                          for m in (torch, strata))
    np.testing.assert_array_equal(sv.numpy(), tv.numpy())
    np.testing.assert_array_equal(si.numpy(), ti.numpy())


def test_fractional_max_pool_ratio_gradient_and_module():
    rng = np.random.default_rng(5)
    x = rng.standard_normal((2, 3, 8, 10))
    samples = rng.uniform(size=(2, 3, 2))
    grads = []
    for m in (torch, strata):
        xt = m.tensor(x, requires_grad=True)
        out = m.nn.functional.fractional_max_pool2d(xt, (2, 3), output_ratio=(0.5, 0.6),
                                                    _random_samples=m.tensor(samples))
        (out * m.arange(out.numel(), dtype=m.float64).reshape(out.shape)).sum().backward()
        grads.append(xt.grad.numpy())
    np.testing.assert_array_equal(grads[1], grads[0])
    pool = strata.nn.FractionalMaxPool3d(2, output_size=3, return_indices=True)
    values, indices = pool(strata.rand(1, 2, 5, 6, 7))
    assert values.shape == indices.shape == (1, 2, 3, 3, 3) and indices.dtype == strata.int64
    assert strata.nn.FractionalMaxPool2d(3, output_ratio=0.5)(strata.rand(2, 8, 8)).shape == \
        (2, 4, 4)


X = np.random.default_rng(0).standard_normal((2, 3, 7, 9)).astype(np.float32)


@pytest.mark.parametrize("call", [
    lambda m: m.nn.functional.fractional_max_pool2d(m.tensor(X), 2),
    lambda m: m.nn.functional.fractional_max_pool2d(m.tensor(X), 4, output_size=(5, 7)),
    lambda m: m.nn.functional.fractional_max_pool2d(m.tensor(X), 2, output_size=(4, 9)),
    lambda m: m.nn.functional.fractional_max_pool2d(m.tensor(X), 2, output_size=(4, 5, 6)),
    lambda m: m.nn.functional.fractional_max_pool2d(m.tensor(X), (2, 3, 4), output_size=(4, 5)),
    lambda m: m.nn.functional.fractional_max_pool2d(m.tensor(X), 2,
                                                    output_ratio=(0.5, 0.5, 0.5)),
    lambda m: m.nn.functional.fractional_max_pool2d(m.tensor(X).long(), 2, output_size=(4, 5)),
    lambda m: m.nn.functional.fractional_max_pool2d(m.zeros(2, 3, 0, 9), 2, output_size=(4, 5)),
    lambda m: m.nn.functional.fractional_max_pool2d(m.tensor(X), 2, output_size=(4, 5),
                                                    _random_samples=m.rand(2, 3)),
    lambda m: m.nn.functional.fractional_max_pool2d(m.tensor(X), 2, output_size=(4, 5),
                                                    _random_samples=m.rand(1, 3, 2)),
    lambda m: m.nn.functional.fractional_max_pool2d(m.tensor(X), 2, output_size=(4, 5),
                                                    _random_samples=m.rand(2, 2, 2)),
    lambda m: m.nn.functional.fractional_max_pool2d(m.tensor(X), 2, output_size=(4, 5),
                                                    _random_samples=m.rand(2, 3, 3)),
    lambda m: m.nn.functional.fractional_max_pool2d(
        m.tensor(X), 2, output_size=(4, 5), _random_samples=m.rand(2, 3, 2, dtype=m.float64)),
    lambda m: m.nn.FractionalMaxPool2d(2, output_ratio=1.5),
    lambda m: m.nn.FractionalMaxPool2d(2, output_size=3, output_ratio=0.5),
    lambda m: m.nn.FractionalMaxPool2d(2),
])
def test_fractional_max_pool_errors(call):
    check_error(call, match=".")


@pytest.mark.parametrize("call", [
    lambda m: m.nn.functional.fractional_max_pool3d(m.rand(1, 1, 6, 6, 6), 3,
                                                    output_size=(4, 3, 3)),
    lambda m: m.nn.functional.fractional_max_pool3d(m.rand(1, 1, 6, 6, 6), 3,
                                                    output_size=(3, 3, 4)),
    lambda m: m.nn.functional.fractional_max_pool3d(m.rand(1, 1, 0, 6, 6), 2, output_size=2),
])
def test_fractional_max_pool3d_errors(call):
    check_error(call, match=".")
