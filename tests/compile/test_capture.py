"""The bytecode capture: graphs, graph breaks and resume functions, fullgraph errors, explain,
side effects, node metadata, and errors that name the user's line."""

import operator

import pytest

import strata
from strata._dynamo import explain


@pytest.fixture(autouse=True)
def _reset():
    strata._dynamo.reset()
    yield


def _graphs(fn, *args):
    graphs = []

    def backend(gm, example_inputs):
        graphs.append(gm)
        return gm.forward
    out = strata.compile(fn, backend=backend)(*args)
    return out, graphs


def test_graph_records_strata_calls_with_meta_and_stack_trace():
    def f(x, w):
        return strata.relu(x @ w).sum(dim=0)

    x, w = strata.randn(2, 3), strata.randn(3, 4)
    out, (gm,) = _graphs(f, x, w)
    assert strata.allclose(out, f(x, w))
    ops = [n for n in gm.graph.nodes if n.op in ("call_function", "call_method")]
    assert [n.target for n in ops] == [operator.matmul, strata.relu, "sum"]
    assert ops[0].meta["val"].device.type == "meta"
    assert tuple(ops[0].meta["val"].shape) == (2, 4)
    assert "test_capture.py" in ops[1].meta["stack_trace"]
    assert "in f" in ops[1].meta["stack_trace"]


def test_parameters_become_graph_inputs():
    m = strata.nn.Linear(3, 2)
    _, (gm,) = _graphs(m, strata.randn(4, 3))
    sources = [n.meta["source"] for n in gm.graph.nodes if n.op == "placeholder"]
    assert any("_parameters['weight']" in s for s in sources)
    assert any("_parameters['bias']" in s for s in sources)


def test_graph_break_splits_and_resumes():
    def f(x):
        y = x * 2
        print("break", end="\r")
        z = y + x
        if z.sum() > 0:
            return z.sin()
        return z.cos()

    x = strata.ones(3)
    out, graphs = _graphs(f, x)
    assert strata.allclose(out, f(x))
    assert len(graphs) == 3
    e = explain(f)(x)
    assert e.graph_count == 3 and e.graph_break_count == 2
    assert "call to print" in e.break_reasons[0]
    assert "test_capture.py" in e.break_reasons[0]
    assert "truth value of a tensor" in e.break_reasons[1]
    assert e.ops_per_graph[0] == [operator.mul]


def test_resume_functions_are_compiled_frames():
    def f(x):
        a = x + 1
        n = a.sum().item()
        return a * n

    compiled = strata.compile(f, backend="eager")
    x = strata.ones(2)
    assert compiled(x).tolist() == [8.0, 8.0]
    names = [code.co_name for code in compiled._strata_compile_context.caches]
    assert names[0] == "f" and names[1].startswith("__resume_at_")


def test_fullgraph_raises_naming_the_line():
    def f(x):
        y = x * 2
        return y.item()

    with pytest.raises(strata._dynamo.exc.Unsupported) as info:
        strata.compile(f, fullgraph=True, backend="eager")(strata.ones(1))
    assert "Tensor.item()" in str(info.value)
    assert "test_capture.py" in str(info.value) and "line" in str(info.value)


def test_fullgraph_error_is_pytorchs_exception_type():
    """As ``torch._dynamo.exc.Unsupported``: a ``TorchDynamoException``, a ``RuntimeError``.
    (torch.compile itself is not called: once it has run in a process, every later strata
    gradient reads two references more, and AccumulateGrad copies what it would steal.)"""
    import torch._dynamo.exc

    def f(x):
        if x.sum() > 0:          # data-dependent control flow
            return x + 1
        return x - 1

    with pytest.raises(RuntimeError) as info:
        strata.compile(f, fullgraph=True)(strata.ones(3))
    assert isinstance(info.value, strata._dynamo.exc.Unsupported)
    assert isinstance(info.value, strata._dynamo.exc.TorchDynamoException)
    assert "data-dependent" in str(info.value).lower()
    mro = [c.__name__ for c in torch._dynamo.exc.Unsupported.__mro__]
    assert mro[1:3] == ["TorchDynamoException", "RuntimeError"]


def test_side_effects_replayed_after_graph():
    seen = []

    class Holder:
        value = None

    holder = Holder()

    def f(x):
        seen.append(x.shape[0])
        holder.value = x * 3
        return x + 1

    compiled = strata.compile(f, backend="eager")
    x = strata.ones(2)
    compiled(x)
    compiled(x)
    assert seen == [2, 2]
    assert holder.value.tolist() == [3.0, 3.0]


def test_global_write_replayed():
    def f(x):
        global LAST
        LAST = x.sum()
        return x

    strata.compile(f, backend="eager")(strata.ones(4))
    assert LAST.item() == 4.0   # noqa: F821


def test_user_error_names_user_line():
    emb = strata.nn.Embedding(3, 2)

    def f(idx):
        return emb(idx * 1) + 1

    compiled = strata.compile(f, backend="eager")
    compiled(strata.tensor([0, 1]))
    with pytest.raises(IndexError) as info:
        compiled(strata.tensor([0, 7]))
    notes = "\n".join(getattr(info.value, "__notes__", []))
    assert "test_capture.py" in notes and "in f" in notes


def test_disable_runs_eagerly_inside_compiled():
    @strata._dynamo.disable
    def helper(x):
        return x.sum().item()

    def f(x):
        return x * helper(x)

    e = explain(f)(strata.ones(2))
    assert "strata._dynamo.disable" in e.break_reasons[0]
    assert strata.compile(f, backend="eager")(strata.ones(2)).tolist() == [2.0, 2.0]


def test_is_compiling_folds_to_true():
    def f(x):
        return x + 1 if strata.compiler.is_compiling() else x - 1

    assert strata.compile(f, backend="eager")(strata.zeros(1)).item() == 1.0
    assert f(strata.zeros(1)).item() == -1.0


def test_closures_and_nested_calls_inline():
    def outer(x):
        k = 2

        def inner(y):
            return y * k
        return inner(inner(x))

    out, (gm,) = _graphs(outer, strata.ones(2))
    assert out.tolist() == [4.0, 4.0]
    assert len([n for n in gm.graph.nodes if n.op == "call_function"]) == 2


def test_explain_lists_guards():
    e = explain(lambda x: x + 1)(strata.ones(2))
    assert any("L['x']" in g for g in e.out_guards)
    assert "Graph Count: 1" in str(e)


def test_compile_debug_folder(tmp_path, monkeypatch):
    from strata import config
    monkeypatch.setattr(config, "compile_debug", True)
    monkeypatch.setattr(config, "compile_debug_dir", str(tmp_path))

    def f(x):
        return (x * 2).sin().sum()

    x = strata.randn(3, requires_grad=True)
    strata.compile(f, backend="aot_eager")(x).backward()
    (run,) = tmp_path.glob("run_*")
    (frame,) = run.iterdir()
    files = {p.name for p in frame.iterdir()}
    assert {"captured_graph.py", "guards.py", "frame.py", "timings.json"} <= files
    assert "def ___guard(L, G):" in (frame / "guards.py").read_text()
    assert "sin" in (frame / "captured_graph.py").read_text()
    import os
    import subprocess
    import sys
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    run = subprocess.run([sys.executable, str(frame / "captured_graph.py")], env=env,
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert "tensor(" in run.stdout
    import json
    timings = json.loads((frame / "timings.json").read_text())
    assert {"capture_s", "backend_s"} <= set(timings)


def test_strata_explain_shows_guard_check_and_cache():
    f = strata.compile(lambda x: (x * 2).sin(), backend="eager")
    x = strata.randn(3)
    first = strata.explain(f, x, file=False).text
    assert "cache miss: capture" in first
    second = strata.explain(f, x, file=False).text
    assert "guard check  entry=0 passed=True" in second and "cache hit" in second
    assert "aten::sin" in second


def test_logs_graph_breaks_and_graph_code(monkeypatch, caplog):
    import logging
    from strata import config
    monkeypatch.setattr(config, "compile_logs", frozenset({"graph_breaks", "graph_code"}))
    caplog.set_level(logging.WARNING, logger="strata.compile")

    def f(x):
        y = x.cos()
        return y * y.sum().item()

    strata.compile(f, backend="eager")(strata.ones(2))
    assert "Graph break in f: Tensor.item()" in caplog.text
    assert "TRACED GRAPH of f" in caplog.text and "cos" in caplog.text


def test_frame_with_unsupported_instruction_runs_eagerly():
    def f(x):
        with open(__file__) as handle:   # BEFORE_WITH on a file object: not traceable
            handle.readline()
        return x + 1

    e = explain(f)(strata.ones(1))
    # open() breaks the graph; its resume function starts with the `with`: that frame is skipped
    assert "call to open" in e.break_reasons[0]
    assert e.break_reasons[1].startswith("skipped frame __resume_at_")
    assert strata.compile(f, backend="eager")(strata.ones(1)).item() == 2.0


def test_break_inside_no_grad_restores_mode_on_exception():
    def f(x):
        with strata.no_grad():
            y = x * 2
            if y.sum() > 0:       # a graph break inside the block
                raise ValueError("positive")
        return y

    compiled = strata.compile(f, backend="eager")
    with pytest.raises(ValueError, match="positive"):
        compiled(strata.ones(2, requires_grad=True))
    assert strata.is_grad_enabled()
    assert not compiled(-strata.ones(2, requires_grad=True)).requires_grad
    assert strata.is_grad_enabled()


def test_break_at_other_instruction_runs_the_rest_eagerly():
    seen = []

    def f(x):
        y = x.sin() * 2
        seen.append(f"{y.sum()}")      # FORMAT_VALUE (3.13: FORMAT_SIMPLE) of a tensor
        return (y + 1).cos()

    x = strata.ones(3)
    e = explain(f)(x)
    assert e.graph_count == 1 and "at FORMAT_" in e.break_reasons[0]
    assert strata.allclose(strata.compile(f, backend="eager")(x), f(x))
    assert seen[-1] == seen[-2]


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_break_inside_an_inlined_call_drops_the_inputs_it_read(backend):
    """Capture backs out of ``block(...)`` at the break inside it: the parameters it wrapped as
    graph inputs on the way in must go with the nodes (the eager backend's graph takes exactly
    its placeholders)."""
    nn = strata.nn

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.norm = nn.LayerNorm(4)

        def forward(self, x):
            y = self.norm(x)
            return y * id(y) * 0 + y       # id(): a break, after the norm's weight was read

    class Outer(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Linear(4, 4)
            self.block = Block()

        def forward(self, x):
            return self.block(self.embed(x)).relu()

    m, x = Outer(), strata.randn(2, 4)

    def f(x):
        return m(x).sum()
    assert strata.allclose(strata.compile(f, backend=backend)(x), f(x))
    assert explain(f)(x).graph_count >= 2


def test_graph_break_allow_in_graph_and_optimize():
    def f(x):
        y = x + 1
        strata._dynamo.graph_break()
        return y * 2

    e = explain(f)(strata.ones(2))
    assert e.graph_count == 2 and "graph_break" in e.break_reasons[0]

    @strata._dynamo.allow_in_graph
    def helper(t):
        return t.sin() + 1

    out, (gm,) = _graphs(lambda x: helper(x) * 3, strata.zeros(2))
    assert out.tolist() == [3.0, 3.0]
    assert [n.target for n in gm.graph.nodes if n.op == "call_function"][0] is helper
    fast = strata._dynamo.optimize("eager")(lambda x: x - 1)
    assert fast(strata.ones(1)).item() == 0.0


def test_user_shape_error_raises_eagerly_and_later_calls_compile():
    def f(x, w):
        return x @ w

    compiled = strata.compile(f, backend="eager")
    with pytest.raises(RuntimeError):
        compiled(strata.ones(2, 3), strata.ones(2, 3))
    x, w = strata.ones(2, 3), strata.ones(3, 4)
    assert strata.equal(compiled(x, w), x @ w)
    (cache,) = compiled._strata_compile_context.caches.values()
    assert not cache.eager and len(cache.entries) == 1


def test_closure_live_at_a_break_is_rebuilt_unless_rebound():
    def f(x):
        k = 3

        def act(t, bias=1.0):
            return (t * k + bias).relu()
        y = act(x)
        print(end="")
        return act(y * 2)

    def g(x):
        k = 3

        def act(t):
            return t * k
        y = act(x)
        print(end="")
        k = 5                      # the closure must see this: the frame runs eagerly
        return act(y)

    x = strata.ones(2)
    assert explain(f)(x).graph_count == 2
    assert strata.compile(f, backend="eager")(x).tolist() == f(x).tolist() == [25.0, 25.0]
    assert "rebinds closed-over variables" in explain(g)(x).break_reasons[0]
    assert strata.compile(g, backend="eager")(x).tolist() == g(x).tolist() == [15.0, 15.0]


def test_sets_deletions_and_ordered_side_effects():
    state = {"a": 1, "b": 2}
    log = []

    def f(x):
        names = {"a", "b"}
        names.add("c")
        d = {"p": x, "q": x * 2}
        del d["p"]
        items = [x, x + 1]
        del items[0]
        log.append(state["b"])   # read before the deletion below is replayed
        del state["b"]
        return d["q"] + items[0] + len(names)

    out, (gm,) = _graphs(f, strata.ones(2))
    assert out.tolist() == [7.0, 7.0]
    assert state == {"a": 1} and log == [2]


def test_reading_grad_of_inputs_in_an_update_step():
    def sgd_step(params, lr):
        with strata.no_grad():
            for p in params:
                if p.grad is not None:
                    p.add_(p.grad, alpha=-lr)

    compiled = strata.compile(sgd_step, backend="eager")
    m, m2 = strata.nn.Linear(3, 2), strata.nn.Linear(3, 2)
    m2.load_state_dict(m.state_dict())
    x = strata.randn(4, 3)
    for _ in range(3):
        for module, step in ((m, compiled), (m2, sgd_step)):
            module.zero_grad()
            module(x).sum().backward()
            step(list(module.parameters()), 0.1)
    assert all(strata.allclose(a, b) for a, b in zip(m.parameters(), m2.parameters()))
    assert explain(sgd_step)(list(m.parameters()), 0.1).graph_count == 1


def test_functools_wraps_wrapper_binds_its_own_varargs_and_setdefault_is_replayed():
    """A ``functools.wraps`` wrapper (an optimizer's hooked ``step``) is inlined with its own
    ``*args, **kwargs``, not the wrapped function's signature; ``dict.setdefault`` traces."""
    import functools

    def scale(x, factor=2):
        return x * factor

    @functools.wraps(scale)
    def wrapper(*args, **kwargs):
        return scale(*args, **kwargs) + len(args)

    seen = {"a": 1}

    def f(x):
        first = seen.setdefault("a", 5)
        second = seen.setdefault("b", 7)
        return wrapper(x, 3) + first + second

    out, graphs = _graphs(f, strata.ones(2))
    assert out.tolist() == [13.0, 13.0] and len(graphs) == 1
    assert seen == {"a": 1, "b": 7}
    assert strata.compile(wrapper, backend="eager")(strata.ones(2), 3).tolist() == [5.0, 5.0]


def test_compiled_train_step_runs_the_optimizers_native_update():
    """``opt.step()`` inside a compiled train step: its update runs as eager's, once per call."""
    strata.manual_seed(0)
    models = [strata.nn.Linear(4, 3) for _ in range(2)]
    models[1].load_state_dict(models[0].state_dict())
    opts = [strata.optim.Adam(m.parameters(), lr=0.1) for m in models]
    x = strata.randn(5, 4)

    def make_step(model, opt):
        def step(x):
            opt.zero_grad()
            loss = model(x).square().mean()
            loss.backward()
            opt.step()
            return loss
        return step
    compiled = strata.compile(make_step(models[0], opts[0]), backend="inductor")
    eager = make_step(models[1], opts[1])
    for _ in range(3):
        assert abs(float(compiled(x)) - float(eager(x))) < 1e-6
    for a, b in zip(models[0].parameters(), models[1].parameters()):
        assert strata.allclose(a, b, atol=1e-6)
    assert int(opts[0].state[models[0].weight]["step"]) == 3


@pytest.mark.parametrize("method, args", [("t_", ()), ("transpose_", (0, 1)),
                                          ("squeeze_", (0,)), ("unsqueeze_", (1,)),
                                          ("swapdims_", (0, 1)),
                                          ("as_strided_", ((4, 1), (1, 4)))])
def test_inplace_view_methods_break_the_graph_and_match_torch(method, args):
    """An in-place view method changes the tensor's own sizes and strides, which the graph's
    functional nodes cannot hold (traced, ``y.t_()`` gave wrong values): it runs eagerly
    between two graphs, with torch's results."""
    import numpy as np
    import torch

    def f(m, x):
        y = x * 2
        getattr(y, method)(*args)
        return (y + 1) * 3

    x = np.random.default_rng(0).standard_normal((1, 4)).astype(np.float32)
    want = f(torch, torch.tensor(x))
    got = strata.compile(lambda a: f(strata, a))(strata.tensor(x))
    np.testing.assert_allclose(got.numpy(), want.numpy())
    e = explain(lambda a: f(strata, a))(strata.tensor(x))
    assert any(f"Tensor.{method}()" in reason for reason in e.break_reasons)


def test_compiles_partials_builtins_and_callable_objects():
    """``functools.partial`` of a Python function captures that function's frame with the bound
    arguments (it once recursed without end through ``partial.__call__``); a builtin or C
    callable runs inside a frame that calls it; an object's Python ``__call__`` is captured."""
    import functools

    def f(x, k, scale=1.0):
        return (x * k).sin() * scale

    x = strata.randn(3)
    bound = functools.partial(f, k=2.0, scale=3.0)
    assert strata.allclose(strata.compile(bound, backend="eager")(x), bound(x))
    assert explain(bound)(x).graph_count == 1
    first = functools.partial(f, x)
    assert strata.allclose(strata.compile(first, backend="eager")(2.0), first(2.0))
    assert strata.allclose(strata.compile(strata.sin, backend="eager")(x), x.sin())
    doubled = functools.partial(strata.mul, other=2.0)
    assert strata.allclose(strata.compile(doubled, backend="eager")(x), x * 2)

    class Cos:
        def __call__(self, x):
            return x.cos()
    assert strata.allclose(strata.compile(Cos(), backend="eager")(x), x.cos())
