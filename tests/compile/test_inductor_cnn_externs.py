"""The compiled CNN's Externs on the CPU. Note [2x2 pools in one pass]
(compile/inductor/eager_pool.py): a 2x2, stride-2 max pool of a realized input is one Extern
computing values and indices together, and its gradient under ReLU's (``threshold_backward``)
one Extern pass. A convolution only a ReLU reads is one Extern with its bias and the ReLU
(``convolution_relu``, lowering_nn.py). All against PyTorch, NaN, ties, -inf, -0.0 and odd
sizes included, and which path ran."""

import numpy as np
import pytest
import torch
from helpers import assert_same
from hypothesis import given, settings
from hypothesis import strategies as st

import strata
from strata.compile.aot import make_fx
from strata.compile.inductor import eager_pool
from strata.compile.inductor.compile_fx import compile_fx


def _input(shape, seed=0, dtype=np.float32):
    x = np.random.default_rng(seed).standard_normal(shape).astype(dtype)
    flat = x.reshape(-1)
    flat[5 % flat.size], flat[17 % flat.size] = np.nan, -np.inf
    flat[1:3] = 1.0                          # ties: the first element wins
    x[..., -1, :] = -0.0
    if shape[-1] >= 2 and shape[-2] >= 2:
        x[0, 0, :2, :2] = -np.inf               # a window of -inf: its first element's index
    return x


def _relu_pool_step(m, compiled):
    def step(xs, gs):
        values, indices = m.nn.functional.max_pool2d(m.relu(xs), 2, return_indices=True)
        (values * gs).sum().backward()
        return values, indices
    return strata.compile(step, backend="inductor") if compiled else step


def _both(x, g):
    results = []
    for m, compiled in ((strata, True), (torch, False)):
        xs = m.tensor(x, requires_grad=True)
        values, indices = _relu_pool_step(m, compiled)(xs, m.tensor(g))
        results.append((values, indices, xs.grad))
    return results


@settings(max_examples=12, deadline=None)
@given(n=st.integers(1, 3), c=st.integers(1, 3), h=st.integers(2, 13), w=st.integers(2, 13),
       dtype=st.sampled_from([np.float32, np.float64]), seed=st.integers(0, 5))
def test_relu_pool_forward_and_backward_match_torch(n, c, h, w, dtype, seed):
    """Odd sizes leave a row and a column no window covers: their gradient is 0."""
    x = _input((n, c, h, w), seed, dtype)
    g = np.random.default_rng(seed + 1).standard_normal((n, c, h // 2, w // 2)).astype(dtype)
    g.reshape(-1)[0] = np.inf
    got, want = _both(x, g)
    for a, b in zip(got, want):
        assert_same(a, b, atol=1e-6, rtol=1e-6)


def test_relu_pool_runs_the_one_pass_externs():
    """The forward's pool is one Extern, no kernel; the backward's pool gradient under ReLU's
    is one Extern and no generated kernel reads the indices; a pool gradient alone stays the
    fusable gather."""
    x = strata.randn(2, 3, 8, 8)

    def forward_backward(x, g):
        xs = x.detach().requires_grad_()
        values, _ = strata.nn.functional.max_pool2d(strata.relu(xs), 2, return_indices=True)
        return strata.autograd.grad((values * g).sum(), xs)[0]
    run = _compiled(forward_backward, x, strata.randn(2, 3, 4, 4))
    text = run.ir_post_fusion
    assert "Extern(<function max_pool2d_2x2 " in text
    assert "Extern(<function max_pool2d_backward_masked " in text
    assert "threshold" not in text and "Fallback" not in text
    grad, indices = strata.randn(2, 3, 4, 4), strata.nn.functional.max_pool2d(
        x, 2, return_indices=True)[1]
    alone = _compiled(lambda g, x, i: strata.ops.aten.max_pool2d_with_indices_backward(
        g, x, [2, 2], [2, 2], [0, 0], [1, 1], False, i), grad, x, indices)
    assert "Extern" not in alone.ir_post_fusion and "Fallback" not in alone.ir_post_fusion


def _cnn(m):
    nn = m.nn
    return nn.Sequential(nn.Conv2d(1, 4, 3), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(4, 8, 3),
                         nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(), nn.Linear(8 * 5 * 5, 10))


def _gradients(m, model, step, x, y, steps=3):
    opt = m.optim.SGD(model.parameters(), lr=0.1)
    run = []
    for _ in range(steps):
        opt.zero_grad()
        step(m.tensor(x), m.tensor(y))
        run.append([p.grad.detach().numpy().copy() for p in model.parameters()])
        opt.step()
    return run


def test_relu_pool_in_a_training_step_matches_torch():
    """The CNN of benchmarks/training.py, smaller: two pools under ReLU, three SGD steps."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((4, 1, 28, 28)).astype(np.float32)
    y = rng.integers(0, 10, 4)
    mine, theirs = _cnn(strata), _cnn(torch)
    for p, q in zip(mine.parameters(), theirs.parameters()):
        q.data = torch.tensor(p.detach().numpy())

    def loss_backward(m, model):
        return lambda xs, ys: m.nn.functional.cross_entropy(model(xs), ys).backward()
    got = _gradients(strata, mine, strata.compile(loss_backward(strata, mine),
                                                  backend="inductor"), x, y)
    want = _gradients(torch, theirs, loss_backward(torch, theirs), x, y)
    for step_got, step_want in zip(got, want):
        for a, b in zip(step_got, step_want):
            np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)


def test_missing_c_kernel_names_the_pool(monkeypatch):
    monkeypatch.setattr(eager_pool.native, "function", lambda library, name: None)
    with pytest.raises(RuntimeError, match="max_pool2d_backward_masked needs the C kernels"):
        eager_pool.max_pool2d_backward_masked(np.ones((1, 1, 1, 1), np.float32),
                                              np.zeros((1, 1, 1, 1), np.int64),
                                              np.ones((1, 1, 2, 2), np.float32), 0.0)


def test_masked_backward_adds_repeated_indices_then_masks():
    """Eager's scatter order (PyTorch's): two outputs naming one element add up, -0.0 + 0
    gives 0.0, and a masked element stays 0 whatever reaches it (NaN, inf)."""
    grad = np.array([[[[1.5, -0.0], [np.nan, 2.0]]]], np.float32)
    indices = np.array([[[[0, 1], [5, 0]]]], np.int64)
    mask = np.array([[[[1, 1, 1], [1, 1, -1], [1, 1, 1]]]], np.float32)
    got = eager_pool.max_pool2d_backward_masked(grad, indices, mask, 0.0)
    want = torch.ops.aten.threshold_backward(torch.ops.aten.max_pool2d_with_indices_backward(
        torch.tensor(grad), torch.tensor(mask), [2, 2], [1, 1], [0, 0], [1, 1], False,
        torch.tensor(indices)), torch.tensor(mask), 0.0)
    assert_same(strata.tensor(got), want)
    assert np.signbit(got.reshape(-1)[1]) == np.signbit(want.numpy().reshape(-1)[1])


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("groups", [1, 2])
def test_convolution_under_relu_is_one_extern(bias, groups):
    """conv + bias + ReLU: one ``convolution_relu`` Extern, no epilogue kernel; a NaN input
    pixel (NaN through the ReLU) and gradients against PyTorch."""
    rng = np.random.default_rng(4)
    x = rng.standard_normal((3, 4, 9, 8)).astype(np.float32)
    x[0, 1, 2, 3] = np.nan
    w = rng.standard_normal((6, 4 // groups, 3, 3)).astype(np.float32)
    b = rng.standard_normal(6).astype(np.float32)
    results = []
    for m, compiled in ((strata, True), (torch, False)):
        ts = [m.tensor(a, requires_grad=True) for a in (x, w, b)]

        def step(x, w, b, m=m):
            y = m.relu(m.nn.functional.conv2d(x, w, b if bias else None, padding=1,
                                              groups=groups))
            (y * y).sum().backward()
            return y
        fn = strata.compile(step, backend="inductor") if compiled else step
        results.append((fn(*ts), *(t.grad for t in ts[:2 + bias])))
    for got, want in zip(*results):
        assert_same(got, want, atol=1e-4, rtol=1e-4)
    xs, ws, bs = strata.tensor(x), strata.tensor(w), strata.tensor(b)
    run = _compiled(lambda x, w, b: strata.relu(strata.nn.functional.conv2d(
        x, w, b if bias else None, groups=groups)) * 2, xs, ws, bs)
    text = run.ir_post_fusion
    assert "Extern(<function convolution_relu " in text and text.count("kernel") == 1

    def shared(x, w, b):   # the convolution read twice: it keeps the epilogue kernel
        y = strata.nn.functional.conv2d(x, w, b, groups=groups)
        return strata.relu(y) + y
    assert "convolution_relu" not in _compiled(shared, xs, ws, bs).ir_post_fusion


def _compiled(fn, *tensors):
    return compile_fx(make_fx(fn)(*tensors), list(tensors))
