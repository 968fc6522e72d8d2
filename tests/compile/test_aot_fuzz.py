"""Random small programs (pointwise, broadcasting, views, in-place on views) traced by make_fx
with functionalisation and by AOT autograd: the same values and gradients as eager."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import strata
from strata.compile.aot import aot_function, make_fx, nop

STEPS = {
    "add_other": lambda x, y: x + y,
    "mul_sum": lambda x, y: x * y.sum(),
    "relu": lambda x, y: x.relu(),
    "tanh": lambda x, y: x.tanh(),
    "view_roundtrip": lambda x, y: x.reshape(-1).view(x.shape),
    "transpose": lambda x, y: x.transpose(0, -1).contiguous().transpose(0, -1),
    "sub_mean": lambda x, y: x - x.mean(dim=0, keepdim=True),
}
INPLACE_STEPS = {
    "inplace_mul": lambda x, y: x.mul_(1.5),
    "inplace_first_row": lambda x, y: (x[0].add_(2.0), x)[1],
    "inplace_through_view": lambda x, y: (x.view(-1)[:1].mul_(3.0), x)[1],
}


def _program(names, steps):
    def f(x, y):
        x = x * 1.0        # a fresh intermediate, so in-place steps never touch the input
        for name in names:
            x = steps[name](x, y)
        return x
    return f


shapes = st.lists(st.integers(1, 4), min_size=1, max_size=3)


@settings(max_examples=25, deadline=None)
@given(shape=shapes, names=st.lists(st.sampled_from(sorted({**STEPS, **INPLACE_STEPS})),
                                    min_size=1, max_size=6), seed=st.integers(0, 2 ** 16))
def test_functionalised_graph_matches_eager(shape, names, seed):
    f = _program(names, {**STEPS, **INPLACE_STEPS})
    strata.manual_seed(seed)
    x, y = strata.randn(*shape), strata.randn(shape[-1])
    gm = make_fx(f, tracing_mode="fake", functionalize=True)(x, y)
    assert not [n for n in gm.graph.nodes if getattr(n.target, "is_inplace", False)]
    np.testing.assert_allclose(gm(x, y).numpy(), f(x, y).numpy(), rtol=1e-5, atol=1e-6)


@settings(max_examples=15, deadline=None)
@given(shape=shapes, names=st.lists(st.sampled_from(sorted(STEPS)), min_size=1, max_size=5),
       seed=st.integers(0, 2 ** 16))
def test_aot_gradients_match_eager(shape, names, seed):
    f = _program(names, STEPS)
    strata.manual_seed(seed)
    x, y = strata.randn(*shape), strata.randn(shape[-1])
    ex, ey = x.clone().requires_grad_(), y.clone().requires_grad_()
    cx, cy = x.clone().requires_grad_(), y.clone().requires_grad_()
    ref = f(ex, ey)
    out = aot_function(f, nop)(cx, cy)
    np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy(), rtol=1e-5, atol=1e-6)
    (ref * ref).sum().backward()
    (out * out).sum().backward()
    for c, e in ((cx, ex), (cy, ey)):
        if e.grad is None:
            assert c.grad is None
        else:
            np.testing.assert_allclose(c.grad.numpy(), e.grad.numpy(), rtol=1e-4, atol=1e-5)


@settings(max_examples=12, deadline=None)
@given(names=st.lists(st.sampled_from(sorted(STEPS)), min_size=1, max_size=6),
       seed=st.integers(0, 2 ** 16))
def test_min_cut_never_saves_more_than_default(names, seed):
    """On any program the min-cut partition saves at most the default's bytes, and the two
    partitions give the same gradients."""
    from strata.compile.aot import (default_partition, graph_observers,
                                    min_cut_rematerialization_partition)
    body = _program(names, STEPS)

    def f(x, w, y):
        return body(x @ w, y)

    strata.manual_seed(seed)
    x, w, y = strata.randn(3, 4), strata.randn(4, 4), strata.randn(4)
    saved, grads = {}, {}
    for partition in (default_partition, min_cut_rematerialization_partition):
        observer = (lambda stage, gm, info, p=partition:
                    saved.__setitem__(p, sum(info["saved_bytes"].values()))
                    if stage == "backward" else None)
        graph_observers.append(observer)
        try:
            leaves = [t.clone().requires_grad_() for t in (x, w, y)]
            out = aot_function(f, nop, partition_fn=partition)(*leaves)
            (out * out).sum().backward()
        finally:
            graph_observers.pop()
        grads[partition] = [t.grad.numpy() if t.grad is not None else None for t in leaves]
    assert saved[min_cut_rematerialization_partition] <= saved[default_partition]
    for a, b in zip(*grads.values()):
        if a is None or b is None:
            assert a is b
        else:
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
