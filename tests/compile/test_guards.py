"""Guards and recompiles: each change recompiles once with the logged reason; nothing changed
means no recompile (backend calls are counted); sizes that change become dynamic."""

import logging
import warnings

import pytest

import strata
from strata import config


class CountingBackend:
    shape_generic = True   # gm.forward computes dynamic sizes itself

    def __init__(self):
        self.calls = 0
        self.graphs = []

    def __call__(self, gm, example_inputs):
        self.calls += 1
        self.graphs.append(gm)
        return gm.forward


@pytest.fixture
def logs(monkeypatch, caplog):
    monkeypatch.setattr(config, "compile_logs", frozenset({"recompiles", "guards"}))
    caplog.set_level(logging.WARNING, logger="strata.compile")
    return caplog


@pytest.fixture(autouse=True)
def _reset():
    strata._dynamo.reset()
    yield
    strata._dynamo.reset()


def _compile(fn, **kwargs):
    backend = CountingBackend()
    return strata.compile(fn, backend=backend, **kwargs), backend


def test_nothing_changed_no_recompile():
    fn, backend = _compile(lambda x, y: x * y + 1)
    x, y = strata.randn(2, 3), strata.randn(2, 3)
    for _ in range(5):
        fn(x, y)
    fn(strata.randn(2, 3), strata.randn(2, 3))   # new tensors, same metadata
    assert backend.calls == 1


@pytest.mark.parametrize("change, reason", [
    (lambda x: x.double(), "dtype mismatch. expected strata.float32, actual strata.float64"),
    (lambda x: x.clone().requires_grad_(True), "requires_grad mismatch. expected "
                                               "requires_grad=0"),
    (lambda x: x.t(), "size mismatch at index 0. expected 2, actual 3"),
    (lambda x: x.t().contiguous().t(), "stride mismatch at index 0. expected 3, actual 1"),
])
def test_tensor_change_recompiles_with_reason(change, reason, logs):
    fn, backend = _compile(lambda x: x.sin())
    x = strata.randn(2, 3)
    fn(x)
    fn(change(x))
    assert backend.calls == 2
    assert reason in logs.text
    fn(x)   # the first entry still serves the first input
    assert backend.calls == 2


def test_changing_size_becomes_dynamic_once(logs):
    fn, backend = _compile(lambda x: (x * 2).view(x.shape[0], -1).sum(1))
    fn(strata.randn(2, 4))
    assert "size mismatch" not in logs.text
    out = fn(strata.randn(3, 4))
    assert "size mismatch at index 0. expected 2, actual 3" in logs.text
    assert out.shape == (3,)
    for n in (5, 7, 11):
        x = strata.randn(n, 4)
        assert strata.equal(fn(x), (x * 2).view(n, -1).sum(1))
    assert backend.calls == 2
    assert any(n.op == "call_method" and n.target == "size" for n in backend.graphs[1].graph.nodes)


def test_size_one_is_specialised():
    fn, backend = _compile(lambda x: x + 1)
    fn(strata.randn(2, 4))
    fn(strata.randn(3, 4))       # dim 0 dynamic now
    fn(strata.randn(1, 4))       # 0/1 specialisation: a new entry
    assert backend.calls == 3


def test_dynamic_false_recompiles_every_size():
    fn, backend = _compile(lambda x: x + 1, dynamic=False)
    for n in (2, 3, 4):
        fn(strata.randn(n))
    assert backend.calls == 3


def test_dynamic_true_and_mark_dynamic():
    fn, backend = _compile(lambda x: x * 3, dynamic=True)
    for n in (2, 5, 9):
        fn(strata.randn(n, 2))
    assert backend.calls == 1
    fn2, backend2 = _compile(lambda x: x - 1)
    x = strata.randn(4, 3)
    strata._dynamo.mark_dynamic(x, 0)
    fn2(x)
    fn2(strata.randn(6, 3))
    assert backend2.calls == 1


def test_mark_static_keeps_dim_static():
    fn, backend = _compile(lambda x: x * 3, dynamic=True)
    x = strata.randn(4, 3)
    strata._dynamo.mark_static(x, 0)
    fn(x)
    fn(strata.randn(5, 3))
    assert backend.calls == 2


def test_grad_mode_recompiles(logs):
    fn, backend = _compile(lambda x: x * 2)
    x = strata.randn(3, requires_grad=True)
    fn(x)
    with strata.no_grad():
        out = fn(x)
    assert not out.requires_grad
    assert backend.calls == 2
    assert "GLOBAL_STATE changed: grad_mode" in logs.text


SCALE = 2.0


def _uses_global(x):
    return x * SCALE


def test_global_change_recompiles(logs):
    global SCALE
    fn, backend = _compile(_uses_global)
    x = strata.ones(2)
    assert fn(x).tolist() == [2.0, 2.0]
    SCALE = 5.0
    try:
        assert fn(x).tolist() == [5.0, 5.0]
    finally:
        SCALE = 2.0
    assert backend.calls == 2
    assert "G['SCALE'] == 2.0, actual 5.0" in logs.text


def test_module_attribute_change_recompiles(logs):
    class Scaled(strata.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = strata.nn.Linear(2, 2)
            self.scale = 1.0

        def forward(self, x):
            return self.lin(x) * self.scale

    m = Scaled()
    compiled = strata.compile(m, backend=(backend := CountingBackend()))
    x = strata.randn(3, 2)
    compiled(x)
    compiled(x)
    m.scale = 3.0
    assert strata.allclose(compiled(x), m(x))
    assert backend.calls == 2
    assert "scale == 1.0, actual 3.0" in logs.text


def test_swapped_submodule_recompiles():
    m = strata.nn.Sequential(strata.nn.Linear(2, 2))
    compiled = strata.compile(m, backend=(backend := CountingBackend()))
    x = strata.randn(1, 2)
    compiled(x)
    m[0] = strata.nn.Linear(2, 2)
    assert strata.allclose(compiled(x), m(x))
    assert backend.calls == 2


def test_hook_added_recompiles():
    m = strata.nn.Linear(2, 2)
    compiled = strata.compile(m, backend=(backend := CountingBackend()))
    x = strata.randn(1, 2)
    compiled(x)
    m.register_forward_hook(lambda mod, args, out: out * 0)
    assert compiled(x).abs().sum().item() == 0
    assert backend.calls == 2


def test_recompile_limit_then_eager_with_one_warning():
    fn, backend = _compile(lambda x, scale: x * scale)   # floats are always specialised
    x = strata.ones(2)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for n in range(12):
            assert fn(x, n + 0.5).tolist() == [n + 0.5] * 2
    assert backend.calls == strata._dynamo.config.recompile_limit == 8
    limit = [w for w in caught if "recompile_limit" in str(w.message)]
    assert len(limit) == 1


def test_guards_are_one_generated_function():
    fn, _ = _compile(lambda x: x + 1)
    fn(strata.randn(2))
    ctx = fn._strata_compile_context
    (cache,) = ctx.caches.values()
    (entry,) = cache.entries
    assert entry.guard_src.startswith("def ___guard(L, G):")
    assert "L['x']" in entry.guard_src and "grad_enabled" in entry.guard_src


def test_reset_forgets_everything():
    fn, backend = _compile(lambda x: x + 1)
    fn(strata.randn(2))
    strata._dynamo.reset()
    fn(strata.randn(2))
    strata.compiler.reset()
    fn(strata.randn(2))
    assert backend.calls == 3


def test_dynamic_graph_with_aot_eager_serves_all_sizes():
    fn = strata.compile(lambda x: (x * 2).view(x.shape[0], -1).sum(1), backend="aot_eager")
    for n in (2, 3, 5, 3):
        x = strata.randn(n, 4, requires_grad=True)
        out = fn(x)
        out.sum().backward()
        assert strata.allclose(out, (x * 2).view(n, -1).sum(1))
        assert strata.allclose(x.grad, strata.full((n, 4), 2.0))
    (cache,) = fn._strata_compile_context.caches.values()
    assert len(cache.entries) == 2   # static first, then one dynamic entry


def test_globals_of_another_module_guarded_without_recompiles():
    other_module = {"strata": strata, "FACTOR": 3.0}
    exec("def helper(x):\n    return strata.relu(x) * FACTOR\n", other_module)
    helper = other_module["helper"]
    fn, backend = _compile(lambda x: helper(x) + 1)
    x = strata.ones(2)
    for _ in range(3):
        assert fn(x).tolist() == [4.0, 4.0]
    assert backend.calls == 1
    other_module["FACTOR"] = 5.0
    assert fn(x).tolist() == [6.0, 6.0]
    assert backend.calls == 2


def test_cache_size_limit_is_honoured(monkeypatch):
    monkeypatch.setattr(strata._dynamo.config, "cache_size_limit", 2)
    fn, backend = _compile(lambda x, scale: x * scale)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for n in range(5):
            fn(strata.ones(1), n + 0.5)
    assert backend.calls == 2


def test_automatic_dynamic_off(monkeypatch):
    monkeypatch.setattr(strata._dynamo.config, "automatic_dynamic_shapes", False)
    fn2, backend2 = _compile(lambda x: x + 1)
    for n in (2, 3, 4):
        fn2(strata.randn(n))
    assert backend2.calls == 3


def test_changing_int_becomes_a_graph_input(logs):
    fn, backend = _compile(lambda x, n: x * n + n)
    x = strata.ones(2)
    for n in range(2, 9):
        assert fn(x, n).tolist() == [2.0 * n] * 2
    assert backend.calls == 2
    assert "L['n'] == 2, actual 3" in logs.text
    placeholders = [n.target for n in backend.graphs[1].graph.nodes if n.op == "placeholder"]
    assert len(placeholders) == 2
    assert fn(x, 1).tolist() == [2.0, 2.0]   # 0 and 1 stay specialised
    assert backend.calls == 3


def test_module_counter_attribute_stops_recompiling():
    class Counting(strata.nn.Module):
        def __init__(self):
            super().__init__()
            self.steps = 0

        def forward(self, x):
            self.steps += 1
            return x * self.steps

    m = Counting()
    compiled = strata.compile(m, backend=(backend := CountingBackend()))
    for step in range(1, 8):
        assert compiled(strata.ones(1)).item() == float(step)
    assert m.steps == 7
    assert backend.calls <= 4


def test_iterating_a_dynamic_dim_guards_its_size():
    fn, backend = _compile(lambda x: sum(row * i for i, row in enumerate(x)), dynamic=True)
    for n in (2, 3, 4, 3):
        x = strata.randn(n, 3)
        assert strata.allclose(fn(x), sum(row * i for i, row in enumerate(x)))
    assert backend.calls == 3   # the loop unrolls per size: one entry each


def test_split_over_dynamic_dim_stays_correct():
    fn, _ = _compile(lambda x: [t.sum() for t in x.split(2)], dynamic=True)
    for n in (4, 6, 5):
        x = strata.randn(n)
        got, want = fn(x), [t.sum() for t in x.split(2)]
        assert len(got) == len(want)
        assert all(strata.allclose(a, b) for a, b in zip(got, want))


def _make_shift(k_default, bias_default):
    """A new closure each call: same code, the given defaults."""
    offset = 1.0

    def shift(t, k=k_default, *, bias=bias_default):
        return t * k + bias + offset
    return shift


def test_closure_made_per_call_guards_code_and_defaults_not_identity(logs):
    """A closure live at a graph break reaches the resume function as a new object on every
    call: it is guarded by its code and defaults (not its id), so nothing recompiles; changed
    defaults (an int for a float included) recompile."""
    def f(x, shift):
        y = x * 2
        print("graph break", end="\r")
        return shift(y)

    fn, backend = _compile(f)
    x = strata.ones(3)
    for _ in range(3):
        assert strata.equal(fn(x, _make_shift(3.0, 0.5)), x * 6 + 1.5)
    assert backend.calls == 2   # one graph before the break, one in the resume function
    for k, bias in ((2.0, 0.5), (3.0, -1.0), (3, 0.5)):
        calls = backend.calls
        for _ in range(2):   # recompiles once (f and its resume function guard ``shift``)
            assert strata.equal(fn(x, _make_shift(k, bias)), x * 2 * k + bias + 1)
        assert calls < backend.calls <= calls + 2, (k, bias)
    assert "__defaults__[0] == 3.0, actual 2.0" in logs.text
    assert "__kwdefaults__['bias'] == 0.5, actual -1.0" in logs.text
    assert "type(L['shift'].__defaults__[0]) is float" in logs.text   # 3 is not 3.0
