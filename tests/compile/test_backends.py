"""strata.compile's entry points and backends, as torch.compile's."""

import warnings

import pytest

import strata
from strata.compile import backends
from strata.compile.fx import GraphModule


@pytest.fixture(autouse=True)
def _reset():
    strata._dynamo.reset()
    yield


def test_non_callable_raises_pytorch_error():
    with pytest.raises(AssertionError, match="A callable function is expected, but "
                                             "<class 'int'> is provided."):
        strata.compile(1)


def test_invalid_backend_and_mode():
    with pytest.raises(strata._dynamo.exc.InvalidBackend, match="Invalid backend: 'nope'"):
        strata.compile(lambda x: x, backend="nope")
    with pytest.raises(RuntimeError, match="Unrecognized mode=x"):
        strata.compile(lambda x: x, mode="x")


def test_list_and_register_backends():
    assert "inductor" in strata._dynamo.list_backends()
    assert "eager" not in strata._dynamo.list_backends()          # a debug backend
    assert {"eager", "aot_eager"} <= set(strata._dynamo.list_backends(exclude_tags=()))
    calls = []

    @strata._dynamo.register_backend(name="counting_for_test")
    def counting(gm, example_inputs):
        calls.append(len(example_inputs))
        return gm.forward

    try:
        out = strata.compile(lambda x, y: x + y, backend="counting_for_test")(
            strata.ones(2), strata.ones(2))
        assert out.tolist() == [2.0, 2.0] and calls == [2]
        with pytest.raises(AssertionError, match="duplicate name"):
            strata._dynamo.register_backend(lambda gm, ex: gm, name="counting_for_test")
    finally:
        backends._BACKENDS.pop("counting_for_test")


def test_callable_backend_contract():
    seen = {}

    def backend(gm, example_inputs):
        seen["gm"], seen["inputs"] = gm, example_inputs
        return gm

    x = strata.randn(2, 2)
    strata.compile(lambda t: t.exp(), backend=backend)(x)
    assert isinstance(seen["gm"], GraphModule)
    assert seen["inputs"][0] is x


def test_optimized_module_and_module_compile():
    m = strata.nn.Linear(3, 2)
    opt = strata.compile(m, backend="eager")
    assert type(opt).__name__ == "OptimizedModule" and opt._orig_mod is m
    assert list(opt.state_dict()) == ["_orig_mod.weight", "_orig_mod.bias"]
    x = strata.randn(4, 3)
    assert strata.allclose(opt(x), m(x))
    assert opt.weight is m.weight
    m2 = strata.nn.Linear(3, 2)
    m2.compile(backend="eager")
    assert strata.allclose(m2(x), strata.nn.functional.linear(x, m2.weight, m2.bias))
    assert m2._compiled_call_impl._strata_compile_context.caches


def test_decorator_and_disable_forms():
    @strata.compile(backend="eager")
    def f(x):
        return x * 2

    assert f(strata.ones(1)).item() == 2.0
    g = strata.compile(lambda x: x, disable=True)
    assert g(3) == 3


def test_inductor_default_falls_back_with_one_warning(monkeypatch):
    if "inductor" in backends._BACKENDS:
        pytest.skip("the inductor backend is registered")
    monkeypatch.setattr(backends, "_inductor_warned", [False])
    f = strata.compile(lambda x: x.sin() + 1)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        x = strata.randn(3)
        assert strata.allclose(f(x), x.sin() + 1)
        f(strata.randn(4, 4))
    assert sum("inductor" in str(w.message) for w in caught) == 1


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_training_step_matches_eager(backend):
    strata.manual_seed(0)
    model = strata.nn.Sequential(strata.nn.Linear(4, 8), strata.nn.ReLU(),
                                 strata.nn.Linear(8, 1))
    state = {k: v.clone() for k, v in model.state_dict().items()}
    x, y = strata.randn(16, 4), strata.randn(16, 1)

    def train(step_model, steps=3):
        model.load_state_dict(state)
        opt = strata.optim.SGD(model.parameters(), lr=0.1)
        for _ in range(steps):
            opt.zero_grad()
            loss = strata.nn.functional.mse_loss(step_model(x), y)
            loss.backward()
            opt.step()
        return loss.item(), [p.detach().clone() for p in model.parameters()]

    eager_loss, eager_params = train(model)
    loss, params = train(strata.compile(model, backend=backend))
    assert abs(loss - eager_loss) < 1e-6
    for p, e in zip(params, eager_params):
        assert strata.allclose(p, e, atol=1e-6)


def test_compiling_an_optimized_module_compiles_the_original():
    m = strata.nn.Linear(2, 2)
    twice = strata.compile(strata.compile(m, backend="eager"), backend="eager")
    assert twice._orig_mod is m
    x = strata.randn(1, 2)
    assert strata.allclose(twice(x), m(x))
    e = strata._dynamo.explain(strata.compile(m, backend="eager"))(x)
    assert e.graph_count == 1 and e.graph_break_count == 0
    f = strata.compile(lambda t: t.exp(), backend="eager")
    assert strata._dynamo.explain(f)(x).graph_count == 1
