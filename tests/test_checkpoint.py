"""strata.utils.checkpoint against torch.utils.checkpoint: same outputs and gradients as the
un-checkpointed block and as PyTorch, activations really not kept, the block re-run in
backward, dropout masks replayed by preserve_rng_state, and PyTorch's warnings and errors."""

import gc
import warnings
import weakref

import numpy as np
import pytest
import torch
from helpers import assert_same

import strata

RNG = np.random.default_rng(0)
X, W1, W2 = (RNG.standard_normal(s) for s in [(4, 5), (5, 6), (6, 3)])

VARIANTS = [False, True]


def _tensors(m, dtype):
    x = m.tensor(X, dtype=dtype, requires_grad=True)
    w1 = m.tensor(W1, dtype=dtype, requires_grad=True)
    w2 = m.tensor(W2, dtype=dtype, requires_grad=True)
    return x, w1, w2


def _block(m, w2):
    """x, w1 -> activations; w2 is reached through the closure (a parameter, as in a module)."""
    def block(x, w1):
        return ((x @ w1).tanh() * 2).exp() @ w2
    return block


def _run(m, use_reentrant, checkpointed=True):
    x, w1, w2 = _tensors(m, m.float64)
    block = _block(m, w2)
    y = m.utils.checkpoint.checkpoint(block, x, w1, use_reentrant=use_reentrant) \
        if checkpointed else block(x, w1)
    (y.sin().sum()).backward()
    return y, x.grad, w1.grad, w2.grad


@pytest.mark.parametrize("use_reentrant", VARIANTS)
def test_gradients_match_torch_and_uncheckpointed(use_reentrant):
    s = _run(strata, use_reentrant)
    assert_same(s, _run(torch, use_reentrant))
    assert_same(s, _run(torch, use_reentrant, checkpointed=False))
    plain = _run(strata, use_reentrant, checkpointed=False)
    for a, b in zip(s, plain):
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())


@pytest.mark.parametrize("use_reentrant", VARIANTS)
def test_activations_are_freed_and_recomputed_in_backward(use_reentrant):
    """A checkpointed block keeps none of its intermediates alive; backward runs it again."""
    calls, inner = [], []

    def block(x):
        calls.append(1)
        h = x.exp()             # an intermediate that sin() saves for backward
        inner.append(weakref.ref(h))
        return h.sin()

    x = strata.randn(3, requires_grad=True)
    y = block(x)
    gc.collect()
    assert inner[-1]() is not None          # without checkpoint the graph keeps h
    del y
    y = strata.utils.checkpoint.checkpoint(block, x, use_reentrant=use_reentrant)
    gc.collect()
    assert inner[-1]() is None              # with checkpoint nothing holds it
    assert len(calls) == 2
    y.sum().backward()
    assert len(calls) == 3                  # recomputed once in backward
    np.testing.assert_allclose(x.grad.numpy(), (x.exp().cos() * x.exp()).detach().numpy())


def test_non_reentrant_saves_only_position_numbers():
    """Every tensor the block saves goes through the checkpoint's pack hook (an int comes
    back), so an outer saved_tensors_hooks sees nothing from inside the block."""
    seen = []
    x = strata.randn(3, requires_grad=True)
    with strata.autograd.graph.saved_tensors_hooks(lambda t: seen.append(t) or t, lambda t: t):
        y = strata.utils.checkpoint.checkpoint(lambda t: t.exp().sin() * t, x,
                                               use_reentrant=False)
    assert seen == []
    y.sum().backward()
    expected = (x.exp().sin() + x * x.exp().cos() * x.exp()).detach().numpy()
    np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-6)


def _dropout_grad(m, use_reentrant, preserve, checkpointed=True):
    m.manual_seed(3)
    x = m.tensor(np.ones((200,)), dtype=m.float32, requires_grad=True)
    f = lambda t: m.nn.functional.dropout(t * 3, p=0.5, training=True)
    y = m.utils.checkpoint.checkpoint(f, x, use_reentrant=use_reentrant,
                                      preserve_rng_state=preserve) if checkpointed else f(x)
    y.sum().backward()
    return y.detach().numpy(), x.grad.numpy()


@pytest.mark.parametrize("use_reentrant", VARIANTS)
def test_preserve_rng_state_replays_dropout_mask(use_reentrant):
    y, g = _dropout_grad(strata, use_reentrant, True)
    y_plain, g_plain = _dropout_grad(strata, use_reentrant, True, checkpointed=False)
    np.testing.assert_array_equal(y, y_plain)
    np.testing.assert_array_equal(g, g_plain)
    np.testing.assert_array_equal(g != 0, y != 0)   # the gradient mask is the forward mask
    _, g_fresh = _dropout_grad(strata, use_reentrant, False)
    assert not np.array_equal(g_fresh != 0, y != 0)   # a new mask without the replay


@pytest.mark.parametrize("use_reentrant", VARIANTS)
def test_recompute_leaves_callers_rng_state_alone(use_reentrant):
    x = strata.ones(10, requires_grad=True)
    y = strata.utils.checkpoint.checkpoint(
        lambda t: strata.nn.functional.dropout(t, 0.5), x, use_reentrant=use_reentrant)
    state = strata.get_rng_state()
    y.sum().backward()
    np.testing.assert_array_equal(strata.get_rng_state().numpy(), state.numpy())


def test_use_reentrant_not_given_warns_and_defaults_to_reentrant():
    for m in (strata, torch):
        x = m.ones(2, requires_grad=True)
        with pytest.warns(UserWarning, match="use_reentrant parameter should be passed"):
            y = m.utils.checkpoint.checkpoint(lambda t: t * 2, x)
        assert type(y.grad_fn).__name__ == "CheckpointFunctionBackward"
        with pytest.warns(UserWarning, match="checkpoint_sequential: the use_reentrant"):
            m.utils.checkpoint.checkpoint_sequential([lambda t: t + 1, lambda t: t * 2], 2, x)


def test_reentrant_warns_when_no_input_requires_grad():
    for m in (strata, torch):
        with pytest.warns(UserWarning, match="None of the inputs have requires_grad=True"):
            m.utils.checkpoint.checkpoint(lambda t: t * 2, m.ones(2), use_reentrant=True)


ERRORS = [
    (lambda m, x: m.utils.checkpoint.checkpoint(lambda t, k=1: t * k, x, k=2,
                                                use_reentrant=True),
     ValueError, "Unexpected keyword arguments: k"),
    (lambda m, x: m.utils.checkpoint.checkpoint(
        lambda t: t, x, use_reentrant=True,
        context_fn=lambda: (warnings.catch_warnings(), warnings.catch_warnings())),
     ValueError, "only supported when use_reentrant=False"),
    (lambda m, x: m.utils.checkpoint.checkpoint_sequential([lambda t: t], 1, x,
                                                           use_reentrant=False, foo=1),
     ValueError, "Unexpected keyword arguments: foo"),
]


@pytest.mark.parametrize("fn, exc, match", ERRORS)
def test_bad_arguments_raise_like_torch(fn, exc, match):
    for m in (strata, torch):
        with pytest.raises(exc, match=match):
            fn(m, m.ones(2, requires_grad=True))


def test_recomputation_that_saves_different_tensors_raises_checkpoint_error():
    for m in (strata, torch):
        def flaky(t, calls=[]):   # noqa: B006  (counts this closure's calls)
            calls.append(1)
            return t.exp().sin() if len(calls) == 1 else t.exp()

        y = m.utils.checkpoint.checkpoint(flaky, m.ones(2, requires_grad=True),
                                          use_reentrant=False)
        with pytest.raises(m.utils.checkpoint.CheckpointError,
                           match="A different number of tensors was saved"):
            y.sum().backward()


def test_non_reentrant_supports_kwargs_autograd_grad_and_retain_graph():
    def run(m):
        x, w1, _ = _tensors(m, m.float64)
        y = m.utils.checkpoint.checkpoint(lambda a, scale: (a.sin() * scale).exp(), x,
                                          scale=w1[:4, :5].mul(1), use_reentrant=False)
        g1 = m.autograd.grad(y.sum(), x, retain_graph=True)
        g2 = m.autograd.grad(y.sum(), x)       # a second backward recomputes again
        return y, g1, g2
    assert_same(run(strata), run(torch))


@pytest.mark.parametrize("use_reentrant", VARIANTS)
def test_checkpoint_sequential_matches_torch(use_reentrant):
    def run(m):
        m.manual_seed(0)
        layers = [m.nn.Linear(5, 5, dtype=m.float64) for _ in range(4)]
        for layer, seed in zip(layers, range(4)):
            w = np.random.default_rng(seed).standard_normal((5, 5))
            with m.no_grad():
                layer.weight.copy_(m.tensor(w))
                layer.bias.zero_()
        model = m.nn.Sequential(layers[0], m.nn.Tanh(), layers[1], m.nn.Tanh(), layers[2],
                                layers[3])
        x = m.tensor(X, requires_grad=True)
        y = m.utils.checkpoint.checkpoint_sequential(model, 3, x, use_reentrant=use_reentrant)
        y.pow(2).sum().backward()
        return y, x.grad, [p.grad for p in model.parameters()]
    assert_same(run(strata), run(torch))


@pytest.mark.parametrize("use_reentrant", VARIANTS)
def test_gradcheck_through_checkpoint(use_reentrant):
    """gradcheck takes gradients with autograd.grad, which the reentrant variant refuses (as
    PyTorch's does)."""
    x = strata.tensor(X[0], requires_grad=True)
    w = strata.tensor(W1, requires_grad=True)

    def run():
        return strata.autograd.gradcheck(
            lambda a, b: strata.utils.checkpoint.checkpoint(lambda p, q: (p @ q).tanh(), a, b,
                                                            use_reentrant=use_reentrant),
            (x, w))
    if use_reentrant:
        with pytest.raises(RuntimeError, match="incompatible with .grad()"):
            run()
    else:
        assert run()


def test_detach_variable_keeps_requires_grad():
    a = strata.ones(2, requires_grad=True)
    out = strata.utils.checkpoint.detach_variable((a, 3, strata.ones(2)))
    assert out[0].requires_grad and out[0].grad_fn is None and out[1] == 3
    assert not out[2].requires_grad
    with pytest.raises(RuntimeError, match="Only tuple of tensors is supported"):
        strata.utils.checkpoint.detach_variable([a])


def test_double_backward_through_non_reentrant_checkpoint():
    """create_graph=True: the recomputed activations keep their graph (a gradient penalty)."""
    def run(m):
        x = m.tensor([1.0, 2.0, 3.0], dtype=m.float64, requires_grad=True)
        y = m.utils.checkpoint.checkpoint(lambda t: t.sin().pow(3) + t.pow(3), x,
                                          use_reentrant=False)
        g, = m.autograd.grad(y.sum(), x, create_graph=True)
        return m.autograd.grad(g.sum(), x)[0]
    np.testing.assert_allclose(run(strata).numpy(), run(torch).numpy(), rtol=1e-12)


@pytest.mark.parametrize("how", ["grad", "backward_inputs"])
def test_reentrant_checkpoint_refuses_partial_backward(how):
    def run(m):
        w = m.ones(3, requires_grad=True)
        y = m.utils.checkpoint.checkpoint(lambda t, v: (t * v).sin(),
                                          m.ones(3, requires_grad=True), w,
                                          use_reentrant=True).sum()
        if how == "grad":
            m.autograd.grad(y, w)
        else:
            y.backward(inputs=[w])
    with pytest.raises(RuntimeError, match="incompatible with .grad()") as t_err:
        run(torch)
    with pytest.raises(RuntimeError) as s_err:
        run(strata)
    assert str(s_err.value) == str(t_err.value)
