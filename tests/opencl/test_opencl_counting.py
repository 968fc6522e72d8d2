"""histogram, unique(dim=) and resize_ on opencl against PyTorch (compile/inductor/
opencl_counting.py, opencl_resize.py)."""

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import strata

pytestmark = pytest.mark.skipif(not strata.opencl.is_available(),
                                reason="needs pyopencl with an OpenCL driver (pip install "
                                       "'strata[opencl]' brings PoCL)")


def _on_device(a):
    return strata.tensor(a).to("opencl")


@settings(max_examples=6, deadline=None)
@given(n=st.integers(0, 40), bins=st.integers(1, 9), ranged=st.booleans(),
       weighted=st.booleans(), density=st.booleans(),
       dtype=st.sampled_from(["float32", "float64"]), seed=st.integers(0, 99))
def test_histogram_by_count_matches_torch(n, bins, ranged, weighted, density, dtype, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(n).astype(dtype)
    w = rng.random(n).astype(dtype)
    kwargs = {"density": density}
    if ranged:
        kwargs["range"] = (-1.0, 1.5)
    if weighted:
        kwargs["weight"] = w
    got = strata.histogram(_on_device(x), bins, **{k: _on_device(v) if k == "weight" else v
                                                   for k, v in kwargs.items()})
    want = torch.histogram(torch.tensor(x), bins, **{k: torch.tensor(v) if k == "weight" else v
                                                     for k, v in kwargs.items()})
    for g, t in zip(got, want):
        assert g.device.type == "opencl" and str(g.dtype)[7:] == str(t.dtype)[6:]
        np.testing.assert_allclose(g.cpu().numpy(), t.numpy(), rtol=1e-5, atol=1e-6)


def test_histogram_of_a_constant_and_with_given_edges_matches_torch():
    for x in (np.full(5, 2.0, np.float32), np.array([0.5, 0.5, 3.0], np.float32)):
        got = strata.histogram(_on_device(x), 3)
        want = torch.histogram(torch.tensor(x), 3)
        for g, t in zip(got, want):
            np.testing.assert_allclose(g.cpu().numpy(), t.numpy())
    x = np.random.default_rng(1).standard_normal(60)
    edges = np.array([-2.0, -0.5, 0.0, 0.0, 1.0, 2.5])     # a repeated edge: an empty bin
    got = strata.histogram(_on_device(x), _on_device(edges), density=True)
    want = torch.histogram(torch.tensor(x), torch.tensor(edges), density=True)
    for g, t in zip(got, want):
        np.testing.assert_allclose(g.cpu().numpy(), t.numpy(), rtol=1e-12)


def test_half_histogram_matches_the_cpu_device():
    x = np.random.default_rng(2).standard_normal(30).astype(np.float32)
    for half in (strata.float16, strata.bfloat16):
        want = strata.histogram(strata.tensor(x).to(half), 5)
        got = strata.histogram(_on_device(x).to(half), 5)
        for g, t in zip(got, want):
            assert g.dtype is half
            np.testing.assert_array_equal(g.cpu().float().numpy(), t.float().numpy())


def test_histogram_bad_input_raises_torchs_error():
    with pytest.raises(RuntimeError) as got:
        strata.histogram(_on_device(np.zeros(3, np.float32)), 0)
    with pytest.raises(RuntimeError) as want:
        torch.histogram(torch.zeros(3), 0)
    assert str(got.value) == str(want.value)


@settings(max_examples=8, deadline=None)
@given(rows=st.integers(1, 7), cols=st.integers(1, 4), dim=st.sampled_from([0, 1, -1]),
       high=st.integers(1, 3), seed=st.integers(0, 99))
def test_unique_dim_matches_torch(rows, cols, dim, high, seed):
    x = np.random.default_rng(seed).integers(0, high, (rows, cols, 2))
    got = strata.unique(_on_device(x), dim=dim, return_inverse=True, return_counts=True)
    want = torch.unique(torch.tensor(x), dim=dim, return_inverse=True, return_counts=True)
    for g, t in zip(got, want):
        assert g.device.type == "opencl"
        np.testing.assert_array_equal(g.cpu().numpy(), t.numpy())


def test_unique_dim_of_floats_with_signed_zeros_matches_torch():
    x = np.array([[1.5, -0.0], [0.25, 3.0], [1.5, 0.0], [-2.0, 1.0]], np.float32)
    got = strata.unique(_on_device(x), dim=0, return_counts=True)
    want = torch.unique(torch.tensor(x), dim=0, return_counts=True)
    for g, t in zip(got, want):
        np.testing.assert_array_equal(g.cpu().numpy(), t.numpy())


def test_unique_dim_bad_dim_raises_torchs_error():
    with pytest.raises(IndexError) as got:
        strata.unique(_on_device(np.zeros((2, 2))), dim=2)
    with pytest.raises(IndexError) as want:
        torch.unique(torch.zeros(2, 2), dim=2)
    assert str(got.value) == str(want.value)


def test_resize_grows_keeping_the_prefix_and_shrinks_in_place():
    x = _on_device(np.arange(6, dtype=np.float32))
    storage = x.untyped_storage().size()
    x.resize_(2, 2)
    assert tuple(x.shape) == (2, 2) and x.untyped_storage().size() == storage
    np.testing.assert_array_equal(x.cpu().numpy(), [[0, 1], [2, 3]])
    x.resize_(4, 5)                  # past the storage: a new block holding the old bytes
    assert x.device.type == "opencl" and x.untyped_storage().size() >= 80
    np.testing.assert_array_equal(x.cpu().numpy().reshape(-1)[:6], np.arange(6))
    x.fill_(7.0)
    np.testing.assert_array_equal(x.cpu().numpy(), np.full((4, 5), 7.0))
    y = _on_device(np.arange(8, dtype=np.float32).reshape(2, 4))
    y.resize_(2, 2, 1, 2, memory_format=strata.channels_last)
    want = torch.arange(8.0).reshape(2, 4).resize_(2, 2, 1, 2, memory_format=torch.channels_last)
    assert tuple(y.stride()) == tuple(want.stride())
    np.testing.assert_array_equal(y.cpu().numpy(), want.numpy())


def test_resize_bad_size_raises_the_cpu_error_before_changing_the_tensor():
    """The CPU device's error (torch 2.13 words a negative size as an overflow of numel)."""
    x = _on_device(np.arange(4, dtype=np.float32))
    with pytest.raises(RuntimeError) as got:
        x.resize_(-1, 2)
    with pytest.raises(RuntimeError) as want:
        strata.arange(4.0).resize_(-1, 2)
    with pytest.raises(RuntimeError):
        torch.arange(4.0).resize_(-1, 2)
    assert str(got.value) == str(want.value)
    assert tuple(x.shape) == (4,)
    np.testing.assert_array_equal(x.cpu().numpy(), np.arange(4))


@settings(max_examples=6, deadline=None)
@given(rows=st.integers(0, 7), cols=st.integers(1, 3), dim=st.sampled_from([0, 1]),
       high=st.integers(1, 3), inverse=st.booleans(), counts=st.booleans(),
       seed=st.integers(0, 99))
def test_unique_consecutive_along_a_dim_matches_torch(rows, cols, dim, high, inverse, counts,
                                                      seed):
    x = np.random.default_rng(seed).integers(0, high, (rows, cols)).astype(np.float32)
    if rows == 0:
        dim = 0          # torch refuses to pick a non-empty dim of an empty tensor
    kwargs = {"return_inverse": inverse, "return_counts": counts, "dim": dim}
    got = strata.unique_consecutive(_on_device(x), **kwargs)
    want = torch.unique_consecutive(torch.tensor(x), **kwargs)
    got, want = (got if isinstance(got, tuple) else (got,)), \
        (want if isinstance(want, tuple) else (want,))
    assert len(got) == len(want)
    for g, t in zip(got, want):
        assert g.device.type == "opencl"
        np.testing.assert_array_equal(g.cpu().numpy(), t.numpy())
