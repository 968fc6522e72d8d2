"""The register-blocked GEMM (outputs of 64 x 64 or more) against PyTorch: incomplete blocks,
transposed operands, addmm's bias and scalars, batches."""

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import strata
from strata.compile.inductor import opencl_pointwise
from strata.compile.inductor.oclprinter import BLOCK

pytestmark = pytest.mark.skipif(not strata.opencl.is_available(),
                                reason="needs pyopencl with an OpenCL driver (pip install "
                                       "'strata[opencl]' brings PoCL)")


@settings(max_examples=6, deadline=None)
@given(m=st.sampled_from([BLOCK, BLOCK + 3, 2 * BLOCK + 1]), k=st.integers(1, 40),
       n=st.sampled_from([BLOCK, BLOCK + 5]), transpose_a=st.booleans(), seed=st.integers(0, 9))
def test_blocked_gemm_matches_torch(m, k, n, transpose_a, seed):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((k, m) if transpose_a else (m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    sa, ta = strata.tensor(a).to("opencl"), torch.from_numpy(a)
    if transpose_a:
        sa, ta = sa.t(), ta.t()
    got = (sa @ strata.tensor(b).to("opencl")).cpu().numpy()
    np.testing.assert_allclose(got, (ta @ torch.from_numpy(b)).numpy(), rtol=1e-4, atol=1e-4)


def test_blocked_addmm_and_bmm():
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal(s).astype(np.float32) for s in ((70, 30), (30, 65)))
    c = rng.standard_normal(65).astype(np.float32)
    got = strata.addmm(*(strata.tensor(v).to("opencl") for v in (c, a, b)), beta=0.5, alpha=2)
    want = torch.addmm(*(torch.from_numpy(v) for v in (c, a, b)), beta=0.5, alpha=2)
    np.testing.assert_allclose(got.cpu().numpy(), want.numpy(), rtol=1e-4, atol=1e-4)
    x, y = (rng.standard_normal(s).astype(np.float32) for s in ((2, 66, 9), (2, 9, 64)))
    got = strata.bmm(strata.tensor(x).to("opencl"), strata.tensor(y).to("opencl"))
    np.testing.assert_allclose(got.cpu().numpy(),
                               torch.bmm(torch.from_numpy(x), torch.from_numpy(y)).numpy(),
                               rtol=1e-4, atol=1e-4)
    blocked = [key for key in opencl_pointwise._sources if key[0] == "aten::gemm" and key[3]]
    assert blocked, "outputs of 64 x 64 or more use the register-blocked kernel"


def test_vector_loads_for_contiguous_rows():
    """k and n multiples of 4, rows of A and B contiguous: the tiles load with vload4; a
    transposed B (columns contiguous) keeps the scalar loads. Incomplete blocks both ways."""
    _check_both_layouts(70, 36, 68, seed=1)
    kinds = {key[4] for key in opencl_pointwise._sources if key[0] == "aten::gemm" and key[3]}
    assert kinds == {True, False}
    vector = [src for key, (src, _) in opencl_pointwise._sources.items()
              if key[0] == "aten::gemm" and key[4] and key[2] == "float32"]
    assert vector and all("vload4" in src for src in vector)


@pytest.mark.parametrize("blocking", [(64, 4), (64, 8), (128, 8)])
def test_every_gemm_blocking_matches_numpy(blocking, monkeypatch):
    """The register-blocked GEMM's tile shapes (output tile, outputs per work-item) a device
    may be given: incomplete tiles, contiguous (vload4) and transposed operands."""
    from strata.compile.inductor import opencl_rows
    monkeypatch.setattr(opencl_rows, "GEMM_BLOCKINGS", (blocking,))
    _check_both_layouts(130, 36, 140, seed=2)


def _check_both_layouts(m, k, n, seed):
    """``a @ b`` on opencl against NumPy, with B row-major and B transposed (columns
    contiguous)."""
    rng = np.random.default_rng(seed)
    a, b = (rng.standard_normal(s).astype(np.float32) for s in ((m, k), (k, n)))
    sa, sb = strata.tensor(a).to("opencl"), strata.tensor(b).to("opencl")
    np.testing.assert_allclose((sa @ sb).cpu().numpy(), a @ b, rtol=1e-4, atol=1e-4)
    bt = strata.tensor(np.ascontiguousarray(b.T)).to("opencl").t()
    np.testing.assert_allclose((sa @ bt).cpu().numpy(), a @ b, rtol=1e-4, atol=1e-4)


# --- the GEMM lane: a repeated signature replays its launch (opencl_rows._gemm_lane) -----------

@pytest.fixture
def meta_calls(monkeypatch):
    from strata.ops import linalg as L
    calls = []
    for op in (L.mm, L.bmm, L.addmm):
        real = op.meta
        monkeypatch.setattr(op, "meta", lambda *a, real=real, **k: calls.append(1) or
                            real(*a, **k))
    return calls


def _product(m, name, operands, beta, alpha):
    if name == "addmm":
        return m.addmm(*operands, beta=beta, alpha=alpha)
    return getattr(m, name)(*operands)


@settings(max_examples=30, deadline=None)
@given(name=st.sampled_from(["mm", "bmm", "addmm"]), m=st.sampled_from([0, 1, 5, BLOCK + 3]),
       k=st.integers(0, 20), n=st.sampled_from([3, BLOCK]), transpose=st.booleans(),
       bias_rank=st.sampled_from([1, 2]), beta=st.sampled_from([1, 0.5, 0]),
       alpha=st.sampled_from([1, -2.0]), dtype=st.sampled_from([np.float32, np.float64]),
       seed=st.integers(0, 9))
def test_repeated_products_replay_their_launch_and_match_torch(
        name, m, k, n, transpose, bias_rank, beta, alpha, dtype, seed):
    rng = np.random.default_rng(seed)
    batch = (2,) if name == "bmm" else ()
    a = rng.standard_normal((*batch, k, m) if transpose else (*batch, m, k)).astype(dtype)
    b = rng.standard_normal((*batch, k, n)).astype(dtype)
    c = rng.standard_normal((n,) if bias_rank == 1 else (m, n)).astype(dtype)
    ours = [strata.tensor(v).to("opencl") for v in (a, b, c)]
    theirs = [torch.from_numpy(v) for v in (a, b, c)]
    if transpose:
        ours[0], theirs[0] = ours[0].transpose(-2, -1), theirs[0].transpose(-2, -1)
    order = (2, 0, 1) if name == "addmm" else (0, 1)
    want = _product(torch, name, [theirs[i] for i in order], beta, alpha).numpy()
    for _ in range(3):                       # the first call remembers, the others replay
        got = _product(strata, name, [ours[i] for i in order], beta, alpha)
        assert tuple(got.shape) == want.shape
        assert got.dtype == (strata.float32 if dtype == np.float32 else strata.float64)
        np.testing.assert_allclose(got.cpu().numpy(), want, rtol=1e-4, atol=1e-4)


def test_a_replayed_product_skips_its_meta_function(meta_calls):
    a, b = strata.randn(6, 4, device="opencl"), strata.randn(4, 5, device="opencl")
    c = strata.randn(5, device="opencl")
    for _ in range(3):
        a @ b
        strata.addmm(c, a, b, beta=0.5)
        strata.bmm(a[None], b[None])
    assert len(meta_calls) == 3                       # each signature's first call only
    strata.addmm(c, a, b, beta=0.25)                  # a new number: a new signature
    assert len(meta_calls) == 4


def test_a_replayed_product_still_raises_for_bad_shapes_and_launches_nothing(monkeypatch):
    from strata.backends.opencl import runtime
    a, b = strata.randn(6, 4, device="opencl"), strata.randn(4, 5, device="opencl")
    wrong = strata.randn(5, 4, device="opencl")
    for _ in range(2):
        a @ b
    launched = []
    for name in ("launch", "enqueue_prepared"):
        real = getattr(runtime.OpenCLRuntime, name)
        monkeypatch.setattr(runtime.OpenCLRuntime, name,
                            lambda *args, real=real, **kw: launched.append(1) or
                            real(*args, **kw))
    with pytest.raises(RuntimeError, match="cannot be multiplied"):
        a @ wrong
    assert launched == []


def test_a_product_after_the_blockings_change_is_not_replayed(monkeypatch):
    from strata.compile.inductor import opencl_rows
    a, b = strata.randn(BLOCK, 8, device="opencl"), strata.randn(8, BLOCK, device="opencl")
    want = (a @ b).cpu().numpy()
    a @ b
    keys = []
    real = opencl_pointwise.launch
    monkeypatch.setattr(opencl_rows, "launch", lambda op_name, key, *args, **kwargs:
                        keys.append(key) or real(op_name, key, *args, **kwargs))
    monkeypatch.setattr(opencl_rows, "GEMM_BLOCKINGS", ((BLOCK, 4),))
    got = (a @ b).cpu().numpy()
    assert keys and keys[0][5:] == (BLOCK, 4)         # the new blocking's kernel ran
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
