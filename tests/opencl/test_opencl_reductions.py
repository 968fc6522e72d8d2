"""Work-group tree reductions on opencl (rows of GROUP_ROW elements or more) against PyTorch:
sums, means, extremes, softmax and layer_norm rows, NaN propagation, integer sums."""

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import strata
from strata.compile.inductor import opencl_pointwise, opencl_rows

pytestmark = pytest.mark.skipif(not strata.opencl.is_available(),
                                reason="needs pyopencl with an OpenCL driver (pip install "
                                       "'strata[opencl]' brings PoCL)")

LONG = opencl_rows.GROUP_ROW


@settings(max_examples=6, deadline=None)
@given(rows=st.integers(1, 3), row=st.sampled_from([LONG, LONG + 1, 3 * LONG + 7]),
       op=st.sampled_from(["sum", "mean", "amax", "amin"]), last=st.booleans(),
       seed=st.integers(0, 99))
def test_tree_reductions_match_torch(rows, row, op, last, seed):
    x = np.random.default_rng(seed).standard_normal((rows, row) if last else (row, rows))
    x = x.astype(np.float32)
    dim = 1 if last else 0
    got = getattr(strata, op)(strata.tensor(x).to("opencl"), dim).cpu().numpy()
    want = getattr(torch, op)(torch.from_numpy(x), dim).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_tree_kernel_is_chosen_for_long_rows_only():
    before = set(opencl_pointwise._sources)
    strata.tensor(np.ones((2, LONG), np.float32)).to("opencl").sum(1).cpu()
    strata.tensor(np.ones((2, 5), np.float32)).to("opencl").sum(1).cpu()
    new = {k: v for k, v in opencl_pointwise._sources.items() if k not in before}
    grouped = [src for key, (src, _) in opencl_pointwise._sources.items()
               if key[0] == "aten::sum.dim_IntList" and key[-1]]
    assert grouped and all("barrier(CLK_LOCAL_MEM_FENCE)" in src for src in grouped)
    assert all(key[-1] is None or "barrier" in src for key, (src, _) in new.items())


def test_tree_reductions_propagate_nan_and_sum_integers():
    x = np.ones((2, 3 * LONG), np.float32)
    x[1, LONG + 3] = np.nan
    t = strata.tensor(x).to("opencl")
    np.testing.assert_array_equal(t.amax(1).cpu().numpy(), [1, np.nan])
    np.testing.assert_array_equal(t.sum(1).cpu().numpy(), [3 * LONG, np.nan])
    ints = np.arange(2 * LONG, dtype=np.int64).reshape(2, LONG)
    got = strata.tensor(ints).to("opencl").sum(1)
    assert got.dtype == strata.int64
    np.testing.assert_array_equal(got.cpu().numpy(), ints.sum(1))


def test_softmax_and_layer_norm_over_long_rows():
    x = np.random.default_rng(0).standard_normal((3, 2 * LONG + 5)).astype(np.float32)
    t, ref = strata.tensor(x).to("opencl"), torch.from_numpy(x)
    np.testing.assert_allclose(strata.softmax(t, -1).cpu().numpy(),
                               torch.softmax(ref, -1).numpy(), rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(
        strata.nn.functional.layer_norm(t, (x.shape[1],)).cpu().numpy(),
        torch.nn.functional.layer_norm(ref, (x.shape[1],)).numpy(), rtol=1e-4, atol=1e-5)


# --- the reduction lane: a repeated sum/mean replays its launch (opencl_rows._reduction_lane) ---

@settings(max_examples=25, deadline=None)
@given(shape=st.lists(st.integers(0, 5), min_size=1, max_size=3).map(tuple), data=st.data(),
       op=st.sampled_from(["sum", "mean"]), keepdim=st.booleans(),
       dtype=st.sampled_from(["float32", "float64", "int64"]), long_row=st.booleans())
def test_repeated_sums_and_means_replay_their_launch_and_match_torch(shape, data, op, keepdim,
                                                                     dtype, long_row):
    if long_row:
        shape = (*shape[:-1], LONG + 3)                  # a work-group per row
    dims = data.draw(st.lists(st.integers(-len(shape), len(shape) - 1), min_size=1,
                              max_size=len(shape), unique_by=lambda d: d % len(shape)))
    x = (np.random.default_rng(len(dims)).standard_normal(shape) * 3).astype(dtype)
    ours, theirs = strata.tensor(x).to("opencl"), torch.from_numpy(x)
    if op == "mean" and dtype == "int64":
        with pytest.raises(RuntimeError, match="mean"):
            torch.mean(theirs, dims, keepdim)
        for _ in range(2):                               # raises every time, from its meta
            with pytest.raises(RuntimeError, match="mean"):
                strata.mean(ours, dims, keepdim)
        return
    want = getattr(torch, op)(theirs, dims, keepdim)
    for _ in range(3):                                   # the first remembers, then replays
        got = getattr(strata, op)(ours, dims, keepdim)
        assert tuple(got.shape) == tuple(want.shape) and got.stride() == want.stride()
        assert str(got.dtype) == str(want.dtype).replace("torch", "strata")
        np.testing.assert_allclose(got.cpu().numpy(), want.numpy(), rtol=1e-5, atol=1e-5)


def test_a_replayed_sum_skips_its_meta_function_and_still_raises(monkeypatch):
    from strata.ops import reductions as RED
    calls = []
    real = RED.sum.meta
    monkeypatch.setattr(RED.sum, "meta", lambda *a, **k: calls.append(1) or real(*a, **k))
    x = strata.randn(4, 6, device="opencl")
    for _ in range(3):
        x.sum(0)
        x.sum([1], dtype=strata.float64)
    assert len(calls) == 2
    with pytest.raises(IndexError, match="Dimension out of range"):
        x.sum(2)
