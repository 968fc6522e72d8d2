"""_softmax_backward_data and _log_softmax_backward_data as primitives: the generated row kernels
and the NumPy fallback against PyTorch (shapes, dims, views, special values, halves), their
derivative rows (second derivatives), cross-entropy's gradient on both paths, and the compiled
graph keeping nll_loss_backward fused into the row sum."""

import numpy as np
import pytest
import torch
from helpers import assert_same, native_paths
from hypothesis import given, settings
from hypothesis import strategies as st

import strata
from strata import config
from strata.backends.cpu import native
from strata.compile.aot import make_fx
from strata.compile.inductor.compile_fx import compile_fx

KINDS = {"softmax": "_softmax_backward_data", "log_softmax": "_log_softmax_backward_data"}


path = native_paths("eager_rows", "log_softmax_backward_float32")


def _backward(m, kind, g, x, dim, view=lambda t: t):
    """``kind``'s backward op on grad ``g`` and the (log-)softmax of ``x``, both through
    ``view``."""
    y = getattr(m, kind)(m.tensor(x), dim)
    return getattr(m.ops.aten, KINDS[kind]).default(view(m.tensor(g)), view(y), dim, y.dtype)


def _compare(kind, g, x, dim, view=lambda t: t, tol=1e-5):
    got, want = _backward(strata, kind, g, x, dim, view), _backward(torch, kind, g, x, dim, view)
    assert_same(got, want, atol=tol, rtol=tol, check_stride=True)


@settings(max_examples=60, deadline=None)
@given(shape=st.lists(st.integers(1, 40), min_size=1, max_size=3), data=st.data(),
       kind=st.sampled_from(sorted(KINDS)), dtype=st.sampled_from([np.float32, np.float64]),
       native_on=st.booleans())
def test_matches_torch(shape, data, kind, dtype, native_on):
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    config.native_kernels, saved = native_on, config.native_kernels
    native.reset()
    try:
        rng = np.random.default_rng(sum(shape) * 7 + dim)
        g, x = (rng.standard_normal(shape).astype(dtype) * 3 for _ in range(2))
        _compare(kind, g, x, dim, tol=1e-5 if dtype == np.float32 else 1e-12)
    finally:
        config.native_kernels = saved
        native.reset()


@pytest.mark.parametrize("kind", KINDS)
def test_views_special_values_and_halves(path, kind):
    rng = np.random.default_rng(1)
    g, x = (rng.standard_normal((6, 40)).astype(np.float32) for _ in range(2))
    _compare(kind, g, x, -1, view=lambda t: t[::2, 3:30])    # rows 80 floats apart
    _compare(kind, g, x, -1, view=lambda t: t[:, ::3])       # inner stride 3: NumPy path
    _compare(kind, g, x, 0, view=lambda t: t.t())            # transposed rows
    _compare(kind, g[:, :1], x[:, :1], -1)                   # one-element rows
    special = x.copy()
    special[0, :3], special[1, :] = [np.inf, np.nan, -np.inf], -np.inf
    g[2, 5] = np.nan
    _compare(kind, g, special, -1)
    for name, tol in (("float16", 2e-3), ("bfloat16", 2e-2)):   # computed in float32
        _compare(kind, g, x, -1, view=lambda t, name=name: t.to(getattr(
            strata if isinstance(t, strata.Tensor) else torch, name)), tol=tol)
    _compare(kind, np.zeros((0, 5), np.float32), np.zeros((0, 5), np.float32), 1)


@pytest.mark.parametrize("kind", KINDS)
def test_gradients_of_gradients_match_torch(path, kind):
    """The forward's node calls the backward primitive, whose own row gives second derivatives
    (derivatives.yaml; softmax_double_backward for softmax's output)."""
    rng = np.random.default_rng(3)
    a, w = rng.standard_normal((5, 7)), rng.standard_normal((5, 7))
    results = []
    for m in (strata, torch):
        x = m.tensor(a, requires_grad=True)
        y = getattr(m, kind)(x, -1)
        (g,) = m.autograd.grad((y * m.tensor(w)).sum(), x, create_graph=True)
        node = "LogSoftmaxBackwardDataBackward0" if kind == "log_softmax" else \
            "SoftmaxBackwardDataBackward0"
        assert type(g.grad_fn).__name__ == node
        (gg,) = m.autograd.grad((g * g * m.tensor(w)).sum(), x)
        results.append((g.detach(), gg))
    assert_same(results[0], results[1], atol=1e-12, rtol=1e-10)


@pytest.mark.parametrize("kind", KINDS)
def test_double_backward_to_grad_output_and_output(kind):
    """Both inputs of the backward op get gradients, as in PyTorch."""
    rng = np.random.default_rng(4)
    ga, xa, wa = (rng.standard_normal((4, 6)) for _ in range(3))
    results = []
    for m in (strata, torch):
        g = m.tensor(ga, requires_grad=True)
        y = getattr(m, kind)(m.tensor(xa), 1).requires_grad_()
        out = getattr(m.ops.aten, KINDS[kind]).default(g, y, 1, y.dtype)
        results.append(m.autograd.grad((out * m.tensor(wa)).sum(), (g, y)))
    assert_same(results[0], results[1], atol=1e-12, rtol=1e-10)


@pytest.mark.parametrize("weighted", [False, True])
def test_cross_entropy_gradient_matches_torch(path, weighted):
    rng = np.random.default_rng(5)
    x = rng.standard_normal((33, 10)).astype(np.float32) * 4
    targets = rng.integers(0, 10, 33)
    targets[3] = -100
    weight = rng.random(10).astype(np.float32)
    results = []
    for m in (strata, torch):
        xs = m.tensor(x, requires_grad=True)
        loss = m.nn.functional.cross_entropy(xs, m.tensor(targets),
                                             weight=m.tensor(weight) if weighted else None)
        loss.backward()
        results.append((loss.detach(), xs.grad))
    assert_same(results[0], results[1], atol=1e-6, rtol=1e-5)


def test_bad_input_raises_before_any_output():
    """The meta function runs ATen's checks: no kernel runs and no autograd node is made."""
    g = strata.randn(3, 4, requires_grad=True)
    with pytest.raises(RuntimeError, match="expected scalar type Float but found Double"):
        strata.ops.aten._log_softmax_backward_data.default(g, g.double(), 1, strata.float32)
    with pytest.raises(IndexError, match="Dimension out of range"):
        strata.ops.aten._softmax_backward_data.default(g, g, 2, strata.float32)
    assert g.grad is None and g.grad_fn is None
    meta = strata.empty(3, 4, device="meta").t()
    out = strata.ops.aten._log_softmax_backward_data.default(meta, meta, 0, strata.float32)
    assert out.device.type == "meta" and out.shape == (4, 3) and out.stride() == (3, 1)


def test_compiled_cross_entropy_keeps_nll_loss_backward_fused():
    x, t = strata.randn(8, 5, requires_grad=True), strata.tensor([0, 1, 2, 3, 4, 0, 1, 2])

    def step(x, t):
        loss = strata.nn.functional.cross_entropy(x, t)
        return loss, strata.autograd.grad(loss, x)[0]
    graph = make_fx(step)(x, t)
    assert any("_log_softmax_backward_data" in str(n.target) for n in graph.graph.nodes)
    run = compile_fx(graph, [x, t])
    ir = run.ir_post_fusion
    assert "Fallback" not in ir and ir.count("kernel") == 4, ir   # Note [Sibling kernels]
    xt = torch.tensor(x.detach().numpy(), requires_grad=True)
    torch.nn.functional.cross_entropy(xt, torch.tensor(t.numpy())).backward()
    assert_same(run(x, t)[1], xt.grad, atol=1e-6, rtol=1e-5)
