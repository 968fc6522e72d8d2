"""``linalg_vector_norm`` lowered (lowering_norms.py): every ord, dim/keepdim, dtype, NaN, Inf
and -0.0. Compiled == eager strata bit for bit where no sum is involved (ord +-inf and 0), else
within the rounding of a sum in another order; eager == PyTorch; no Fallback left in a graph
with ``clip_grad_norm_`` and ``normalize``."""

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import strata
from strata.compile.aot import make_fx
from strata.compile.inductor.compile_fx import compile_fx

ORDS = [2, 1, math.inf, -math.inf, 0, 3, 0.5, -1.5, -2]
SPECIALS = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0], np.float64)


def _lowered(fn, *tensors):
    run = compile_fx(make_fx(fn)(*tensors), list(tensors))
    assert "Fallback" not in run.ir_post_fusion, run.ir_post_fusion
    return run


def _within_sum_rounding(got, want, n, ord, dtype):
    """Sums of |x|^p (all >= 0) in two orders differ by at most (n - 1) eps relatively; the
    root 1/p scales that by 1/|p|."""
    eps = np.finfo(dtype).eps
    rtol = 2 * max(n, 2) * eps * max(1.0, 1.0 / abs(ord) if ord else 1.0)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=0, equal_nan=True)


@settings(max_examples=40, deadline=None)
@given(shape=st.lists(st.integers(1, 9), min_size=1, max_size=3), ord=st.sampled_from(ORDS),
       keepdim=st.booleans(), dtype=st.sampled_from(["float32", "float64"]),
       to_double=st.booleans(), specials=st.integers(0, 3), data=st.data())
def test_compiled_norm_equals_eager_and_torch(shape, ord, keepdim, dtype, to_double, specials,
                                              data):
    rng = np.random.default_rng(data.draw(st.integers(0, 2 ** 16)))
    x = (rng.standard_normal(shape) * 3).astype(dtype)
    flat = x.reshape(-1)
    flat[rng.integers(0, flat.size, specials)] = rng.choice(SPECIALS, specials)
    flat[rng.integers(0, flat.size, 2)] = 0.0       # ord 0 counts nonzeros
    dims = data.draw(st.one_of(st.none(), st.integers(-len(shape), len(shape) - 1),
                               st.lists(st.integers(0, len(shape) - 1), min_size=1,
                                        unique=True)))
    out_dtype = "float64" if to_double else None

    def norm(m, t):
        kw = {"dtype": getattr(m, out_dtype)} if out_dtype else {}
        return m.linalg.vector_norm(t, ord, dims, keepdim, **kw)
    a = strata.tensor(x)
    got = _lowered(lambda t: norm(strata, t), a)(a)[0].numpy()
    eager = norm(strata, a).numpy()
    want = norm(torch, torch.tensor(x)).numpy()
    assert got.dtype == eager.dtype == want.dtype and got.shape == eager.shape == want.shape
    reduced = x.size // max(eager.size, 1)
    if ord in (math.inf, -math.inf, 0):
        assert np.array_equal(got, eager, equal_nan=True)
    else:
        _within_sum_rounding(got, eager, reduced, ord, eager.dtype)
    _within_sum_rounding(eager, want, reduced, ord, eager.dtype)


@pytest.mark.parametrize("ord", ORDS)
def test_every_ord_without_a_fallback(ord):
    a = strata.tensor([[3.0, -4.0, 0.0], [-0.0, 1.0, 2.0]])
    got = _lowered(lambda t: strata.linalg.vector_norm(t, ord, 1), a)(a)[0]
    want = torch.linalg.vector_norm(torch.tensor(a.numpy()), ord, 1)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)


def test_clip_grad_norm_and_normalize_compile_without_a_fallback(tmp_path, monkeypatch):
    from strata import config
    monkeypatch.setattr(config, "compile_debug", True)
    monkeypatch.setattr(config, "compile_debug_dir", str(tmp_path))
    strata.manual_seed(0)
    model = strata.nn.Linear(8, 4)
    x = strata.randn(5, 8)

    def step(x):
        model.zero_grad()
        model(x).pow(2).sum().backward()
        total = strata.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
        return strata.nn.functional.normalize(x, dim=1), total
    want = [t.clone() for t in step(x)] + [p.grad.clone() for p in model.parameters()]
    strata._dynamo.reset()
    got = list(strata.compile(step, backend="inductor")(x)) + [
        p.grad for p in model.parameters()]
    for g, w in zip(got, want):
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=2e-6, atol=1e-7)
    texts = [p.read_text() for p in tmp_path.rglob("ir_post_fusion.txt")]
    assert texts and not any("Fallback" in t for t in texts)
    assert any("sqrt" in t for t in texts)


def test_a_bad_input_raises_eagers_error():
    compiled = strata.compile(lambda t: strata.linalg.vector_norm(t), backend="inductor")
    with pytest.raises(RuntimeError, match="Expected a floating point or complex tensor as "
                                           "input. Got Long"):
        compiled(strata.tensor([1, 2]))
    with pytest.raises(RuntimeError, match="Expected a floating point or complex tensor as "
                                           "input. Got Long"):
        torch.linalg.vector_norm(torch.tensor([1, 2]))


@pytest.mark.filterwarnings("ignore:var.*degrees of freedom")     # PyTorch's, correction >= n
@settings(max_examples=25, deadline=None)
@given(shape=st.lists(st.integers(1, 9), min_size=1, max_size=3),
       correction=st.sampled_from([None, 0, 1, 2, 0.5]), keepdim=st.booleans(),
       dtype=st.sampled_from(["float32", "float64"]), specials=st.integers(0, 2), data=st.data())
def test_compiled_var_equals_eager_and_torch(shape, correction, keepdim, dtype, specials, data):
    rng = np.random.default_rng(data.draw(st.integers(0, 2 ** 16)))
    x = (rng.standard_normal(shape) * 3 + 1).astype(dtype)
    flat = x.reshape(-1)
    flat[rng.integers(0, flat.size, specials)] = rng.choice(SPECIALS, specials)
    dims = data.draw(st.one_of(st.none(), st.integers(-len(shape), len(shape) - 1),
                               st.lists(st.integers(0, len(shape) - 1), min_size=1,
                                        unique=True)))

    def var(m, t):
        return m.var(t, dims, correction=correction, keepdim=keepdim)
    a = strata.tensor(x)
    got = _lowered(lambda t: var(strata, t), a)(a)[0].numpy()
    eager = var(strata, a).numpy()
    want = var(torch, torch.tensor(x)).numpy()
    assert got.dtype == eager.dtype == want.dtype and got.shape == eager.shape == want.shape
    n = x.size // max(eager.size, 1)
    rtol = 8 * n * np.finfo(dtype).eps
    np.testing.assert_allclose(got, eager, rtol=rtol, atol=rtol, equal_nan=True)
    np.testing.assert_allclose(eager, want, rtol=rtol, atol=rtol, equal_nan=True)
