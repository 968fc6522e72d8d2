"""Reductions and normalisations over shapes with size-1 dims, compiled with inductor, against
eager strata and torch (Note [Unit dims] in compile/inductor/scheduler.py). A keepdim reduction
whose *kept* dims include a size-1 one (batch 1) once read its result with the wrong strides:
layer_norm of a (1, 5, 32) input compiled to NaN."""

import numpy as np
import pytest
import strata
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from strata.compile.aot import make_fx
from strata.compile.inductor.compile_fx import compile_fx

OPS = {
    "sum_keepdim": lambda m, x: x.sum(-1, keepdim=True) * x,
    "mean_keepdim_mid": lambda m, x: x - x.mean(1, keepdim=True),
    "amax_keepdim": lambda m, x: x.amax(-1, keepdim=True) + x,
    "var_keepdim": lambda m, x: x.var(-1, keepdim=True) + x,
    "softmax": lambda m, x: m.softmax(x, -1),
    "log_softmax_mid": lambda m, x: m.log_softmax(x, 1),
    "layer_norm": lambda m, x: m.nn.functional.layer_norm(x, x.shape[-1:]),
}

shapes = st.lists(st.sampled_from([1, 2, 3, 7]), min_size=3, max_size=4)


@pytest.mark.parametrize("name", sorted(OPS))
@settings(max_examples=12, deadline=None)
@given(shape=shapes, seed=st.integers(0, 2**16))
def test_reductions_over_unit_dims_match_eager_and_torch(name, shape, seed):
    x = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    op = OPS[name]
    xs = strata.tensor(x)
    run = compile_fx(make_fx(lambda t: op(strata, t))(xs), [xs])
    got = run(xs)[0].numpy()
    np.testing.assert_allclose(got, op(strata, xs).numpy(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got, op(torch, torch.tensor(x)).numpy(), rtol=1e-4, atol=1e-5)


def test_batch_one_layer_norm_statistics_share_one_kernel():
    x = strata.randn(1, 5, 32)
    run = compile_fx(make_fx(lambda t: strata.nn.functional.layer_norm(t, (32,)))(x), [x])
    assert run.ir_post_fusion.count("kernel") == 1
    np.testing.assert_allclose(run(x)[0].numpy(),
                               torch.nn.functional.layer_norm(torch.tensor(x.numpy()), (32,))
                               .numpy(), atol=1e-5)


def test_layer_norm_weight_and_bias_grads_share_one_column_kernel():
    """Note [Sibling column sums]: both parameter gradients walk the rows once, together."""
    strata.manual_seed(0)
    ln = strata.nn.LayerNorm(64)
    x = strata.randn(32, 64, requires_grad=True)

    def fn(x):
        return (ln(x) * 3).sum()
    compiled = strata.compile(fn, backend="inductor")
    compiled(x).backward()
    got = [t.grad.clone() for t in (x, ln.weight, ln.bias)]
    for t in (x, ln.weight, ln.bias):
        t.grad = None
    fn(x).backward()
    for g, t in zip(got, (x, ln.weight, ln.bias)):
        np.testing.assert_allclose(g.numpy(), t.grad.numpy(), rtol=1e-5, atol=1e-5)
    A = strata.ops.aten
    w = ln.weight.detach()

    def backward(g, x, w):
        _, mean, rstd = A.native_layer_norm(x, (64,), w, None, 1e-5)
        return A.native_layer_norm_backward(g, x, (64,), mean, rstd, w, None, [True] * 3)
    args = [strata.randn(32, 64), x.detach(), w]
    run = compile_fx(make_fx(backward)(*args), args)
    assert "rows [64] x [32], 2 node(s) fused" in run.ir_post_fusion
    for got, want in zip(run(*args), backward(*args)):
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-5)
