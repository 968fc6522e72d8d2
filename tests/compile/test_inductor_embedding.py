"""embedding inside inductor graphs: an indexed load fused with its readers, its indices checked
by a Check step (eager's IndexError) before any kernel runs. Values and gradients against
PyTorch eager."""

import numpy as np
import pytest
import torch
from helpers import assert_same
from hypothesis import given, settings
from hypothesis import strategies as st

import strata
from strata.compile.aot import make_fx
from strata.compile.inductor.compile_fx import compile_fx

pytestmark = pytest.mark.filterwarnings("error::RuntimeWarning")


def _rand(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


@settings(max_examples=12, deadline=None)
@given(index_shape=st.lists(st.integers(1, 4), min_size=0, max_size=2),
       rows=st.integers(1, 9), dim=st.integers(1, 6),
       index_dtype=st.sampled_from(["int64", "int32"]), padding=st.booleans(),
       seed=st.integers(0, 1000))
def test_embedding_values_and_gradients_match_torch(index_shape, rows, dim, index_dtype,
                                                    padding, seed):
    rng = np.random.default_rng(seed)
    indices = rng.integers(0, rows, index_shape).astype(index_dtype)
    weight = _rand(rows, dim, seed=seed)
    scale = _rand(dim, seed=seed + 1)
    padding_idx = int(indices.flat[0]) if padding and indices.size else None
    if padding_idx is None:     # (eager strata's padding row gradient is NaN * 0: not PyTorch's 0)
        weight[0, 0] = np.nan

    def run(m, compiled):
        w = m.tensor(weight, requires_grad=True)

        def step(w, i, s):
            out = m.nn.functional.embedding(i, w, padding_idx=padding_idx) * s + 1
            out.tanh().sum().backward()
            return out
        fn = strata.compile(step, backend="inductor") if compiled else step
        return fn(w, m.tensor(indices), m.tensor(scale)), w.grad
    for got, want in zip(run(strata, True), run(torch, False)):
        assert_same(got, want, atol=1e-5, rtol=1e-5)


def test_embedding_is_a_fused_load_after_its_check():
    gm = make_fx(lambda w, i, p: strata.nn.functional.embedding(i, w) + p)(
        strata.randn(10, 4), strata.tensor([[1, 2, 3]]), strata.randn(3, 4))
    run = compile_fx(gm, [strata.randn(10, 4), strata.tensor([[1, 2, 3]]), strata.randn(3, 4)])
    post = run.ir_post_fusion
    assert "Fallback" not in post and post.count("kernel") == 1
    assert post.index("Check(") < post.index("kernel")
    w, i, p = _rand(10, 4), np.array([[9, 0, 3]]), _rand(3, 4, seed=1)
    np.testing.assert_array_equal(
        run(strata.tensor(w), strata.tensor(i), strata.tensor(p))[0].numpy(), w[i] + p)


@pytest.mark.parametrize("bad", [10, -1])
def test_out_of_range_index_raises_eagers_error_before_any_update(bad):
    w = strata.tensor(_rand(10, 4), requires_grad=True)
    step = strata.compile(lambda w, i: strata.nn.functional.embedding(i, w).sum().backward(),
                          backend="inductor")
    step(w, strata.tensor([1, 2, 3]))
    before = w.grad.clone()
    with pytest.raises(IndexError, match="index out of range in self"):
        step(w, strata.tensor([1, bad, 3]))
    np.testing.assert_array_equal(w.grad.numpy(), before.numpy())
    with pytest.raises(IndexError, match="index out of range in self"):
        torch.nn.functional.embedding(torch.tensor([1, bad, 3]), torch.tensor(_rand(10, 4)))
