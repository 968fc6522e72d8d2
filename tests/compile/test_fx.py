"""strata.fx against torch.fx: the same graphs for the same modules, codegen, passes, errors."""

import copy
import operator

import numpy as np
import pytest
import torch
import torch.fx

import strata
import strata.fx as fx


def _net(lib):
    class Net(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = lib.nn.Linear(3, 4)
            self.scale = lib.nn.Parameter(lib.ones(4))

        def forward(self, x, y=2):
            h = lib.relu(self.lin(x)) + self.scale * y
            h = h.view(-1, 2).sum(dim=1)
            return h, h.shape[0]
    return Net()


def _summary(graph):
    """(op, target name) per node: comparable across strata and torch."""
    def name(t):
        return t if isinstance(t, str) else t.__name__
    return [(n.op, name(n.target)) for n in graph.nodes]


def test_same_graph_as_torch_fx():
    s_gm = fx.symbolic_trace(_net(strata))
    t_gm = torch.fx.symbolic_trace(_net(torch))
    assert _summary(s_gm.graph) == _summary(t_gm.graph)
    assert [n.name for n in s_gm.graph.nodes] == [n.name for n in t_gm.graph.nodes]


def test_graph_module_runs_like_the_module():
    net = _net(strata)
    gm = fx.symbolic_trace(net)
    x = strata.randn(2, 3)
    out, size = gm(x)
    ref, ref_size = net(x)
    np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy())
    assert size == ref_size == 4
    assert "def forward(self, x, y = 2):" in gm.code
    assert "strata.relu(lin)" in gm.code
    np.testing.assert_allclose(fx.Interpreter(gm).run(x)[0].detach().numpy(),
                               ref.detach().numpy())
    clone = copy.deepcopy(gm)
    np.testing.assert_allclose(clone(x)[0].detach().numpy(), ref.detach().numpy())


def test_build_graph_by_hand_and_codegen():
    g = fx.Graph()
    x = g.placeholder("x")
    y = g.call_function(operator.add, (x, 1))
    z = g.call_method("mul", (y, y))
    g.output(z)
    gm = fx.GraphModule(strata.nn.Module(), g)
    assert gm.code.strip().splitlines() == [
        "def forward(self, x):",
        "add = x + 1;  x = None".rjust(len("add = x + 1;  x = None") + 4),
        "mul = add.mul(add);  add = None".rjust(len("mul = add.mul(add);  add = None") + 4),
        "return mul".rjust(14)]
    assert gm(strata.tensor([2.0])).tolist() == [9.0]
    t = torch.fx.Graph()
    tx = t.placeholder("x")
    t.output(t.call_method("mul", (t.call_function(operator.add, (tx, 1)),) * 2))
    assert [n.name for n in g.nodes] == [n.name for n in t.nodes]


def test_inserting_before_and_replace_all_uses_with():
    gm = fx.symbolic_trace(lambda x: strata.relu(x) * 2)
    relu = next(n for n in gm.graph.nodes if n.target is strata.relu)
    with gm.graph.inserting_after(relu):
        neg = gm.graph.call_function(strata.neg, (relu,))
    users = relu.replace_all_uses_with(neg, delete_user_cb=lambda u: u is not neg)
    assert [u.op for u in users] == ["call_function"]
    gm.graph.lint()
    gm.recompile()
    assert gm(strata.tensor([1.0, -1.0])).tolist() == [-2.0, 0.0]
    assert list(neg.users) == users and relu.users == {neg: None}


def test_erase_node_with_users_raises_and_keeps_graph():
    gm = fx.symbolic_trace(lambda x: strata.relu(x) + 1)
    relu = next(n for n in gm.graph.nodes if n.target is strata.relu)
    with pytest.raises(RuntimeError, match="still had 1 users in the graph"):
        gm.graph.erase_node(relu)
    assert len(gm.graph.nodes) == 4
    gm.graph.lint()


def test_lint_catches_use_before_definition():
    g = fx.Graph()
    x = g.placeholder("x")
    a = g.call_function(strata.relu, (x,))
    b = g.call_function(strata.neg, (a,))
    g.output(b)
    a.prepend(b)   # move b before its input
    with pytest.raises(RuntimeError, match="used before it has been defined"):
        g.lint()


def test_dead_code_elimination_keeps_inplace():
    def f(x):
        unused = x * 3  # noqa: F841
        x.add_(1)
        return x + 1
    gm = fx.symbolic_trace(f)
    assert gm.graph.eliminate_dead_code()
    assert [n.target for n in gm.graph.nodes if n.op != "placeholder"] == \
        ["add_", operator.add, "output"]


def test_control_flow_on_proxy_raises():
    def f(x):
        if x.sum() > 0:
            return x
        return -x
    with pytest.raises(fx.TraceError, match="cannot be used as inputs to control flow"):
        fx.symbolic_trace(f)


def test_tuple_unpacking_and_print_tabular(capsys):
    def f(x):
        a, b = x.chunk(2)
        return a - b
    gm = fx.symbolic_trace(f)
    assert [n.target for n in gm.graph.nodes][2:4] == [operator.getitem] * 2
    gm.graph.print_tabular()
    printed = capsys.readouterr().out
    assert printed.splitlines()[0].split() == ["opcode", "name", "target", "args", "kwargs"]
    assert gm(strata.tensor([5.0, 2.0])).tolist() == [3.0]


def test_stack_trace_names_user_line():
    gm = fx.symbolic_trace(lambda x: strata.sigmoid(x))
    node = next(n for n in gm.graph.nodes if n.op == "call_function")
    assert "test_fx.py" in node.stack_trace and "sigmoid" in node.stack_trace
    assert "test_fx.py" in gm.print_readable(print_output=False)


def test_transformer_rewrites():
    class ReluToSigmoid(fx.Transformer):
        def call_function(self, target, args, kwargs):
            if target is strata.relu:
                target = strata.sigmoid
            return super().call_function(target, args, kwargs)
    gm = ReluToSigmoid(fx.symbolic_trace(lambda x: strata.relu(x) + 1)).transform()
    assert "strata.sigmoid" in gm.code
    np.testing.assert_allclose(gm(strata.zeros(2)).numpy(), [1.5, 1.5])


def test_shape_prop_records_meta_values():
    from strata.fx.passes.shape_prop import ShapeProp
    gm = fx.symbolic_trace(_net(strata))
    ShapeProp(gm).propagate(strata.randn(5, 3))
    vals = {n.name: n.meta["val"] for n in gm.graph.nodes if n.op != "output"}
    assert vals["lin"].shape == (5, 4) and vals["lin"].device.type == "meta"
    assert vals["sum_1"].shape == (10,) and vals["getitem"] == 10


def test_interpreter_frees_values_after_last_use():
    class Recording(fx.Interpreter):
        def run_node(self, n):
            result = super().run_node(n)
            self.sizes = getattr(self, "sizes", []) + [len(self.env)]
            return result
    gm = fx.symbolic_trace(lambda x: ((x + 1) * 2).relu().neg())
    interp = Recording(gm)
    interp.run(strata.randn(3))
    assert max(interp.sizes) <= 2


def test_concrete_args_and_graph_module_from_dict_root():
    def f(x, scale):
        return x * scale
    gm = fx.symbolic_trace(f, concrete_args={"scale": 3.0})
    assert [n.op for n in gm.graph.nodes] == ["placeholder", "call_function", "output"]
    assert gm(strata.ones(2)).tolist() == [3.0, 3.0]
    g = fx.Graph()
    x = g.placeholder("x")
    w = g.get_attr("layer.weight")
    g.output(g.call_function(strata.matmul, (x, w)))
    weight = strata.eye(2) * 4
    gm2 = fx.GraphModule({"layer.weight": weight}, g)
    assert gm2(strata.ones(1, 2)).tolist() == [[4.0, 4.0]]
    assert "self.layer.weight" in gm2.code and "strata.matmul" in gm2.code
    with pytest.raises(RuntimeError, match="was not provided in ``root``"):
        fx.GraphModule({}, g)


def _helper(x):
    return x.sum().item() > 0   # data-dependent: must not be traced into


fx.wrap("_helper")


def test_wrap_records_one_call():
    gm = fx.symbolic_trace(lambda x: _helper(x))
    assert [n.target for n in gm.graph.nodes if n.op == "call_function"] == [_helper]


def test_graph_module_recompile_after_edit_and_submodules():
    gm = fx.symbolic_trace(_net(strata))
    for node in gm.graph.nodes:
        if node.target is strata.relu:
            node.target = strata.sigmoid
    gm.recompile()
    assert "strata.sigmoid(lin)" in gm.code and "strata.relu" not in gm.code
    gm.graph.lint()


def _nested(lib):
    class Block(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = lib.nn.Linear(4, 4)
            self.conv = lib.nn.Conv2d(1, 2, 3)

        def forward(self, x, img):
            y = self.lin(x).permute(1, 0)[0:2, ...]
            z = lib.relu(self.conv(img)).flatten(1)
            return y @ y.t() + z.sum(), -x, x.size(0)

    class Outer(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.block = Block()

        def forward(self, x, img):
            return self.block(x, img)
    return Outer()


def test_generated_code_is_torch_fx_code():
    """Same module, same source: torch.fx's code with ``torch`` read as ``strata``."""
    ours = fx.symbolic_trace(_nested(strata)).code.strip()
    theirs = torch.fx.symbolic_trace(_nested(torch)).code.strip()
    assert ours == theirs.replace("torch.", "strata.")
    gm = fx.symbolic_trace(_nested(strata))
    out, neg, size = gm(strata.randn(4, 4), strata.randn(2, 1, 5, 5))
    assert out.shape == (2, 2) and size == 4


def _error(fn):
    try:
        fn()
    except Exception as e:   # noqa: BLE001 - the point is to compare what was raised
        return type(e).__name__, str(e).splitlines()[0]
    raise AssertionError("no error raised")


def _relu_graph(lib, fx_module):
    g = fx_module.Graph()
    x = g.placeholder("x")
    relu = g.call_function(lib.relu, (x,))
    g.output(relu)
    return g, relu


def test_errors_match_torch_fx():
    from torch.fx.experimental.proxy_tensor import make_fx as torch_make_fx

    from strata.compile.aot import make_fx
    s_graph, s_relu = _relu_graph(strata, fx)
    t_graph, t_relu = _relu_graph(torch, torch.fx)
    assert _error(lambda: s_graph.erase_node(s_relu)) == \
        _error(lambda: t_graph.erase_node(t_relu))
    assert len(s_graph.nodes) == 3            # nothing was removed
    assert _error(lambda: fx.GraphModule(3, s_graph)) == \
        _error(lambda: torch.fx.GraphModule(3, t_graph))
    kind, message = _error(lambda: torch.fx.symbolic_trace(lambda x: len(x)))
    assert _error(lambda: fx.symbolic_trace(lambda x: len(x))) == \
        (kind, message.replace("torch.fx", "strata.fx"))
    assert _error(lambda: fx.symbolic_trace(lambda x: x if x.sum() > 0 else -x)) == \
        _error(lambda: torch.fx.symbolic_trace(lambda x: x if x.sum() > 0 else -x))
    assert _error(lambda: make_fx(lambda x: x, tracing_mode="bogus")(strata.ones(1))) == \
        _error(lambda: torch_make_fx(lambda x: x, tracing_mode="bogus")(torch.ones(1)))
