"""AOT autograd: outputs and gradients of the compiled forward/backward equal eager's; the
functionalised graphs hold no mutation; partitioners; make_fx graphs."""

import operator

import numpy as np
import pytest

import strata
import strata.fx as fx
from strata.compile.aot import (
    aot_function,
    aot_module_simplified,
    default_partition,
    graph_observers,
    make_fx,
    min_cut_rematerialization_partition,
    nop,
    primitive_decompositions,
)

nn = strata.nn


def _compile(model, inputs, partition_fn=None, decompositions=None):
    """AOT-compile a symbolically traced module (or the module itself where Proxy tracing
    cannot go, e.g. into an autograd.Function)."""
    gm = model if getattr(model, "no_symbolic_trace", False) else fx.symbolic_trace(model)
    return aot_module_simplified(gm, list(inputs), fw_compiler=nop, bw_compiler=nop,
                                 partition_fn=partition_fn, decompositions=decompositions)


def _training_runtime(compiled):
    return next(r for key, r in compiled.aot.runtimes.items() if key[0])


def _flat(out):
    return list(out) if isinstance(out, (tuple, list)) else [out]


def _grads(model, inputs):
    return [p.grad.numpy().copy() for p in model.parameters()] + \
           [x.grad.numpy().copy() for x in inputs if x.requires_grad]


def _check_against_eager(make_model, inputs, partition_fn=None, decompositions=None,
                         rtol=1e-5, atol=1e-6):
    """Same weights and inputs: compiled outputs and gradients equal eager's."""
    strata.manual_seed(0)
    eager_model, compiled_model = make_model(), make_model()
    compiled_model.load_state_dict(eager_model.state_dict())
    eager_in = [x.detach().clone().requires_grad_(x.requires_grad) for x in inputs]
    compiled_in = [x.detach().clone().requires_grad_(x.requires_grad) for x in inputs]
    compiled = _compile(compiled_model, compiled_in, partition_fn, decompositions)
    ref, out = _flat(eager_model(*eager_in)), _flat(compiled(*compiled_in))
    assert len(ref) == len(out)
    for r, o in zip(ref, out):
        np.testing.assert_allclose(o.detach().numpy(), r.detach().numpy(), rtol=rtol, atol=atol)
    sum(r.float().sum() for r in ref if r.requires_grad).backward()
    sum(o.float().sum() for o in out if o.requires_grad).backward()
    for r, o in zip(_grads(eager_model, eager_in), _grads(compiled_model, compiled_in)):
        np.testing.assert_allclose(o, r, rtol=rtol, atol=atol)
    for (name, r), o in zip(eager_model.named_buffers(), compiled_model.buffers()):
        np.testing.assert_allclose(o.numpy(), r.numpy(), rtol=rtol, atol=atol, err_msg=name)
    return compiled


def _mlp():
    return nn.Sequential(nn.Linear(6, 16), nn.GELU(), nn.Linear(16, 16), nn.Tanh(),
                         nn.Linear(16, 3))


class _CNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(2, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)
        self.pool = nn.MaxPool2d(2)
        self.fc = nn.Linear(4 * 3 * 3, 5)

    def forward(self, x):
        x = self.pool(strata.relu(self.bn(self.conv(x))))
        return self.fc(x.flatten(1))


class _LSTMModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(4, 6, batch_first=True)
        self.head = nn.Linear(6, 2)

    def forward(self, x):
        out, _ = self.lstm(x)
        return self.head(out[:, -1])


class _TransformerBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0,
                                                batch_first=True)

    def forward(self, x):
        return self.layer(x)


def _transformer_layer():
    return _TransformerBlock()


@pytest.mark.parametrize("partition", [default_partition, min_cut_rematerialization_partition])
def test_mlp_outputs_and_gradients(partition):
    _check_against_eager(_mlp, [strata.randn(5, 6, requires_grad=True)], partition)


@pytest.mark.parametrize("partition", [default_partition, min_cut_rematerialization_partition])
def test_cnn_with_batchnorm_running_stats(partition):
    _check_against_eager(_CNN, [strata.randn(2, 2, 6, 6)], partition, rtol=1e-4, atol=1e-5)


def test_transformer_layer():
    _check_against_eager(_transformer_layer, [strata.randn(2, 5, 8)],
                         min_cut_rematerialization_partition, rtol=1e-4, atol=1e-5)


def test_lstm():
    _check_against_eager(_LSTMModel, [strata.randn(3, 4, 4)], rtol=1e-4, atol=1e-5)


def test_primitive_decompositions_leave_only_primitives():
    compiled = _check_against_eager(_mlp, [strata.randn(5, 6)], None,
                                    primitive_decompositions(), rtol=1e-4, atol=1e-5)
    graphs = [_training_runtime(compiled).bw_gm.graph]
    for graph in graphs:
        for node in graph.nodes:
            assert getattr(node.target, "decomposition", None) is None, node.format_node()


class _Scale(strata.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * 3

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * 3 + x * 0


class _WithFunction(nn.Module):
    no_symbolic_trace = True

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 3)

    def forward(self, x):
        return _Scale.apply(self.lin(x)).sin()


def test_custom_autograd_function():
    _check_against_eager(_WithFunction, [strata.randn(4, 3, requires_grad=True)])


class _Dropout(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)
        self.drop = nn.Dropout(0.5)

    def forward(self, x):
        return self.drop(self.lin(x)).relu()


def test_dropout_draws_what_eager_draws_and_gradient_uses_the_mask():
    model = _Dropout()
    x = strata.randn(16, 8)
    compiled = _compile(model, [x], min_cut_rematerialization_partition)
    strata.manual_seed(3)
    eager = model(x).detach().numpy()
    eager_next = strata.rand(3).numpy()
    strata.manual_seed(3)
    first = compiled(x)
    np.testing.assert_allclose(first.detach().numpy(), eager, rtol=1e-6)
    np.testing.assert_array_equal(strata.rand(3).numpy(), eager_next)   # stream kept in step
    second = compiled(x)
    assert not np.array_equal(first.detach().numpy(), second.detach().numpy())
    values = first.detach().numpy()
    assert (values == 0).mean() > 0.2
    first.sum().backward()
    kept = (values != 0).astype(np.float32) * 2     # 1 / (1 - p) where the mask kept a value
    np.testing.assert_allclose(model.lin.bias.grad.numpy(), kept.sum(0), rtol=1e-5)
    runtime = _training_runtime(compiled)
    assert not any("bernoulli" in str(n.target) for n in runtime.bw_gm.graph.nodes)


def test_recomputed_random_op_draws_the_same_mask():
    from strata.compile.aot.functionalize import rng_state_tensor

    def f(x):
        return x * strata.nn.functional.dropout(strata.ones_like(x), 0.5) * 2

    gm = make_fx(f, tracing_mode="fake", functionalize=True)(strata.randn(50))
    state = next(n for n in gm.graph.nodes if n.op == "placeholder")
    assert state.name == "rng_state"
    snapshot = rng_state_tensor(strata.Generator().manual_seed(7))
    x = strata.randn(50)
    np.testing.assert_array_equal(gm(snapshot, x).numpy(), gm(snapshot, x).numpy())


class _Counter(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("calls", strata.zeros((), dtype=strata.int64))
        self.lin = nn.Linear(3, 3)

    def forward(self, x):
        self.calls.add_(1)
        return self.lin(x)


def test_buffer_mutation_applied_after_the_graph():
    model = _Counter()
    compiled = _compile(model, [strata.randn(2, 3)])
    for _ in range(3):
        compiled(strata.randn(2, 3))
    assert model.calls.item() == 3


def test_inplace_on_input_and_on_view_of_input():
    def f(x, y):
        x.add_(1)
        y[1].mul_(2)
        return x * y

    gm = make_fx(f, tracing_mode="fake", functionalize=True)(strata.randn(3), strata.randn(2, 3))
    inplace = [n for n in gm.graph.nodes if n.op == "call_function"
               and getattr(n.target, "is_inplace", False)]
    assert [n.target.name for n in inplace] == ["copy_", "copy_"]   # only the write-backs
    x, y = strata.randn(3), strata.randn(2, 3)
    ex, ey = x.clone(), y.clone()
    out = gm(x, y)
    ref = f(ex, ey)
    np.testing.assert_allclose(out.numpy(), ref.numpy())
    np.testing.assert_allclose(x.numpy(), ex.numpy())
    np.testing.assert_allclose(y.numpy(), ey.numpy())


class _Mutating(nn.Module):
    def forward(self, x, y):
        x.mul_(2)
        view = y.view(-1)
        view[:2].add_(5)
        return y + x.sum(), x


def test_aot_input_mutation_epilogue_and_aliased_output():
    x, y = strata.randn(4), strata.randn(2, 2)
    ex, ey = x.clone(), y.clone()
    compiled = _compile(_Mutating(), [x.clone(), y.clone()])
    out, same = compiled(x, y)
    ref, _ = _Mutating()(ex, ey)
    np.testing.assert_allclose(out.numpy(), ref.numpy())
    np.testing.assert_allclose(x.numpy(), ex.numpy())
    np.testing.assert_allclose(y.numpy(), ey.numpy())
    assert same is x


def test_inference_skips_the_joint_graph():
    stages = []
    graph_observers.append(lambda stage, gm, info: stages.append(stage))
    try:
        model = _mlp()
        x = strata.randn(2, 6)
        with strata.no_grad():
            compiled = _compile(model, [x])
            out = compiled(x)
        np.testing.assert_allclose(out.numpy(), model(x).detach().numpy(), rtol=1e-6)
    finally:
        graph_observers.pop()
    assert stages == ["inference"]


class _Pointwise(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(32, 32)

    def forward(self, x):
        h = self.lin(x)
        return (h.sin().cos() * h.sigmoid()).tanh().exp()


def test_min_cut_saves_fewer_bytes_and_never_recomputes_matmul():
    saved = {}

    def observe(stage, gm, info):
        if stage == "backward":
            saved.setdefault("runs", []).append((sum(info["saved_bytes"].values()), gm))
    graph_observers.append(observe)
    try:
        x = strata.randn(8, 32)
        _check_against_eager(_Pointwise, [x], default_partition, rtol=1e-5)
        _check_against_eager(_Pointwise, [x], min_cut_rematerialization_partition, rtol=1e-5)
    finally:
        graph_observers.pop()
    (default_bytes, _), (min_cut_bytes, bw) = saved["runs"]
    assert min_cut_bytes < default_bytes
    matmuls = [n for n in bw.graph.nodes if n.op == "call_function"
               and getattr(n.target, "name", "") in ("mm", "addmm", "bmm")]
    tangent_users = set()
    for node in bw.graph.nodes:
        if node.name.startswith("tangents") or tangent_users & set(node.all_input_nodes):
            tangent_users.add(node)
    assert matmuls and all(n in tangent_users for n in matmuls)


def test_every_aot_node_has_meta_val():
    graphs = []
    graph_observers.append(lambda stage, gm, info: graphs.append(gm))
    try:
        _compile(_Dropout(), [strata.randn(2, 8)])(strata.randn(2, 8))
    finally:
        graph_observers.pop()
    assert len(graphs) == 3
    for gm in graphs:
        for node in gm.graph.nodes:
            if node.op != "output":
                assert "val" in node.meta, node.format_node()


def test_make_fx_records_aten_ops():
    gm = make_fx(lambda x, w: strata.nn.functional.linear(x, w).relu())(
        strata.randn(2, 3), strata.randn(4, 3))
    targets = [n.target.name for n in gm.graph.nodes if n.op == "call_function"]
    assert targets == ["t", "mm", "relu"]   # as PyTorch's make_fx
    x, w = strata.randn(2, 3), strata.randn(4, 3)
    np.testing.assert_allclose(gm(x, w).numpy(), (x @ w.T).relu().numpy(), rtol=1e-6)
    assert gm.graph.find_nodes(op="placeholder")[0].meta["val"].device.type == "meta"


def test_new_shapes_and_python_values_compile_again():
    def f(x, n):
        return x * n

    compiled = aot_module_simplified(fx.symbolic_trace(f), [strata.randn(3), 2], nop)
    np.testing.assert_allclose(compiled(strata.ones(3), 2).numpy(), [2.0] * 3)
    np.testing.assert_allclose(compiled(strata.ones(5), 3).numpy(), [3.0] * 5)
    assert len(compiled.aot.runtimes) == 2   # the example inputs and the (5,), 3 call


def test_aten_nodes_carry_the_users_source_line():
    compiled = _compile(_Pointwise(), [strata.randn(2, 32)])
    runtime = _training_runtime(compiled)
    tanh = next(n for n in runtime.bw_gm.graph.nodes if getattr(n.target, "name", "") == "tanh"
                or n.name.startswith("tanh"))
    assert "test_aot.py" in tanh.stack_trace and ".tanh()" in tanh.stack_trace


def test_debug_folder_has_each_graph_and_saved_bytes(tmp_path):
    from strata.compile.aot import DebugFolderWriter
    graph_observers.append(DebugFolderWriter(str(tmp_path)))
    try:
        _compile(_mlp(), [strata.randn(2, 6)])
    finally:
        graph_observers.pop()
    (folder,) = (tmp_path / "aot").iterdir()
    names = sorted(p.name for p in folder.iterdir())
    assert names == ["backward_graph.py", "forward_graph.py", "joint_graph.py",
                     "saved_tensors.txt", "timings.txt"]
    saved = (folder / "saved_tensors.txt").read_text().splitlines()
    assert saved[-1].startswith("total: ") and int(saved[-1].split()[1]) > 0
    assert "strata.ops.aten.mm.default" in (folder / "backward_graph.py").read_text()


class _Tied(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(10, 4)
        self.head = nn.Linear(4, 10, bias=False)
        self.head.weight = self.embed.weight

    def forward(self, idx):
        return self.head(self.embed(idx).tanh())


def test_tied_weights_are_one_input():
    _check_against_eager(_Tied, [strata.randint(0, 10, (3, 5))], rtol=1e-5)


class _ViewOfInput(nn.Module):
    def forward(self, x):
        x.add_(1)
        return x.view(-1)[1:], x * 2


def test_output_that_is_a_view_of_an_input_aliases_it():
    x = strata.randn(2, 3)
    before = x.clone()
    compiled = _compile(_ViewOfInput(), [x.clone()])
    view, doubled = compiled(x)
    np.testing.assert_allclose(x.numpy(), before.numpy() + 1, rtol=1e-6)
    np.testing.assert_allclose(doubled.numpy(), x.numpy() * 2, rtol=1e-6)
    view.mul_(0)                       # writes through to x, as eager's view would
    assert x.view(-1)[1:].abs().sum().item() == 0 and x[0, 0].item() != 0


class _Slice(nn.Module):
    def forward(self, x):
        return x.view(-1)[1:]


def test_view_of_input_output_gets_gradient_through_the_view():
    leaf = strata.randn(2, 3, requires_grad=True)
    out = _compile(_Slice(), [leaf])(leaf)
    out.sum().backward()
    assert leaf.grad.numpy().tolist() == [[0, 1, 1], [1, 1, 1]]


def test_writing_into_a_captured_constant_raises():
    table = strata.zeros(3)

    def f(x):
        table.add_(1)
        return x + table

    with pytest.raises(RuntimeError, match="neither an input nor a buffer"):
        make_fx(f, tracing_mode="real", functionalize=True)(strata.randn(3))


def test_plain_tensor_attributes_are_inputs_and_their_writes_land():
    g = fx.Graph()
    x = g.placeholder("x")
    table = g.get_attr("table")
    g.call_method("add_", (table, 1))
    g.output(g.call_function(strata.add, (x, table)))
    root = nn.Module()
    root.table = strata.zeros(3)    # not a buffer
    gm = fx.GraphModule(root, g)
    compiled = aot_module_simplified(gm, [strata.zeros(3)], nop)
    assert compiled(strata.zeros(3)).tolist() == [1.0, 1.0, 1.0]
    assert compiled(strata.zeros(3)).tolist() == [2.0, 2.0, 2.0]
    assert gm.table.tolist() == [2.0, 2.0, 2.0]


def test_torch_import_paths():
    from strata._functorch.aot_autograd import aot_module_simplified as from_functorch
    from strata._functorch.partitioners import min_cut_rematerialization_partition as mc
    from strata.fx.experimental.proxy_tensor import make_fx as from_fx
    assert from_functorch is aot_module_simplified and from_fx is make_fx
    assert mc is min_cut_rematerialization_partition


def test_freezing_a_parameter_compiles_again():
    model = _mlp()
    x = strata.randn(2, 6)
    compiled = _compile(model, [x])
    compiled(x).sum().backward()
    model[0].weight.requires_grad_(False)
    model[0].weight.grad = None
    compiled(x).sum().backward()
    assert model[0].weight.grad is None and model[2].weight.grad is not None
    assert len(compiled.aot.runtimes) == 2


def test_print_readable_annotates_shapes():
    gm = make_fx(lambda x, w: strata.nn.functional.linear(x, w).relu(), tracing_mode="fake")(
        strata.randn(2, 3), strata.randn(4, 3))
    text = gm.print_readable(print_output=False)
    assert 'def forward(self, arg0_1: "f32[2, 3]", arg1_1: "f32[4, 3]"):' in text
    assert 'relu: "f32[2, 4]" = strata.ops.aten.relu.default(mm)' in text


def test_inplace_random_op_draws_what_eager_draws():
    def f(x):
        noise = strata.empty_like(x).uniform_(-1, 1)
        return x + noise

    x = strata.zeros(5)
    compiled = aot_function(f, nop)
    strata.manual_seed(11)
    eager = f(x)
    strata.manual_seed(11)
    np.testing.assert_allclose(compiled(x).numpy(), eager.numpy())


def test_closure_tensor_error_says_what_to_do():
    weight = strata.randn(3, 3)
    with pytest.raises(RuntimeError, match="not one of its arguments"):
        aot_function(lambda x: x @ weight, nop)(strata.randn(2, 3))


def test_autocast_region():
    model = nn.Linear(4, 4)
    x = strata.randn(3, 4, requires_grad=True)
    compiled = _compile(model, [x])
    with strata.autocast("cpu", dtype=strata.bfloat16):
        eager, out = model(x), compiled(x)
    assert out.dtype == eager.dtype == strata.bfloat16
    assert len(compiled.aot.runtimes) == 2     # traced again under autocast
    np.testing.assert_allclose(out.float().detach().numpy(), eager.float().detach().numpy())
    eager.float().sum().backward()
    grad = x.grad.clone()
    x.grad = None
    out.float().sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), grad.numpy())


def test_inplace_write_to_an_input_that_requires_grad_raises_before_running():
    def f(x):
        x.mul_(2)
        return x.sum()

    base = strata.randn(3, requires_grad=True)
    x = base * 1
    before = x.detach().clone()
    with pytest.raises(NotImplementedError, match="writes in place to an input that requires"):
        aot_function(f, nop)(x)
    np.testing.assert_array_equal(x.detach().numpy(), before.numpy())


def test_compiled_cnn_training_step_matches_torch():
    """The AOT-compiled forward+backward (min-cut) against PyTorch eager on the same weights."""
    import torch

    model = _CNN()   # and its torch twin, with the same parameters and buffers:
    t_conv = torch.nn.Conv2d(2, 4, 3, padding=1)
    t_bn = torch.nn.BatchNorm2d(4)
    t_fc = torch.nn.Linear(36, 5)
    for t_mod, s_mod in ((t_conv, model.conv), (t_bn, model.bn), (t_fc, model.fc)):
        for name, value in s_mod.state_dict().items():
            getattr(t_mod, name).data.copy_(torch.tensor(value.numpy()))
    x = np.random.default_rng(0).standard_normal((2, 2, 6, 6)).astype(np.float32)
    compiled = _compile(model, [strata.tensor(x)], min_cut_rematerialization_partition)
    out = compiled(strata.tensor(x))
    t_out = t_fc(torch.nn.functional.max_pool2d(torch.relu(t_bn(t_conv(torch.tensor(x)))), 2)
                 .flatten(1))
    np.testing.assert_allclose(out.detach().numpy(), t_out.detach().numpy(), rtol=1e-4,
                               atol=1e-5)
    (out * out).sum().backward()
    (t_out * t_out).sum().backward()
    for s_param, t_param in ((model.conv.weight, t_conv.weight), (model.bn.weight, t_bn.weight),
                             (model.fc.weight, t_fc.weight)):
        np.testing.assert_allclose(s_param.grad.numpy(), t_param.grad.numpy(), rtol=1e-4,
                                   atol=1e-5)
    np.testing.assert_allclose(model.bn.running_var.numpy(), t_bn.running_var.numpy(),
                               rtol=1e-5)


@pytest.mark.filterwarnings("error")
@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
@pytest.mark.parametrize("values", [[1.5, -2.0, 0.5, 3.0], [1.5, 0.0, 0.5, 3.0],
                                    [0.0, 0.0, 2.0, 1.0]])
def test_cumprod_backward_compiles_with_and_without_zeros(backend, values):
    """cumprod's backward looks for zeros in eager; traced (meta tensors) it takes the zero-safe
    form, as PyTorch's does for tensor subclasses, instead of failing capture."""
    import torch

    def f(m, x):
        return (x.cumprod(0) * m.arange(4.0)).sum()
    x = strata.tensor(values, requires_grad=True)
    strata.compile(lambda x: f(strata, x), backend=backend)(x).backward()
    t = torch.tensor(values, requires_grad=True)
    f(torch, t).backward()
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-6, atol=1e-6)


@pytest.mark.filterwarnings("error")
@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
@pytest.mark.parametrize("op", ["prod", "det"])
def test_value_tested_backwards_compile(backend, op):
    """prod's and det's backwards test for zeros in eager; traced, their general forms."""
    import torch
    rng = np.random.default_rng(0)
    values = rng.standard_normal((3, 3)) if op == "det" else np.array([1.5, 0.0, 0.5, 3.0])

    def f(m, x):
        return (m.linalg.det(x) if op == "det" else x.prod()) * 2
    x = strata.tensor(values, requires_grad=True)
    strata.compile(lambda x: f(strata, x), backend=backend)(x).backward()
    t = torch.tensor(values, requires_grad=True)
    f(torch, t).backward()
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
def test_tensors_made_from_python_data_keep_their_values(backend):
    """``x.new_tensor([...])`` inside a compiled program (and decompositions that build index
    tensors from Python lists: ``combinations``) traced on meta stand-ins once recorded an
    ``empty``: garbage or zeros, silently. The data now becomes a graph constant."""
    x = strata.zeros(3)
    out = strata.compile(lambda a: a + a.new_tensor([1.0, 2.0, 3.0]), backend=backend)(x)
    assert out.tolist() == [1.0, 2.0, 3.0]
    v = strata.tensor([1.5, -2.0, 3.0, 0.5])
    for r in (2, 3):
        got = strata.compile(lambda a, r=r: strata.combinations(a, r), backend=backend)(v)
        assert strata.equal(got, strata.combinations(v, r))


class _GeluMLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm, self.fc1, self.fc2 = nn.LayerNorm(16), nn.Linear(16, 32), nn.Linear(32, 16)

    def forward(self, x):
        return self.fc2(nn.functional.gelu(self.fc1(self.norm(x))))


def test_min_cut_saves_what_a_backward_matmul_reads_and_no_backward_only_value():
    """PyTorch's rules (torch/_functorch/partitioners.py): gelu(h), which the second Linear's
    weight gradient (a matmul) reads, is saved rather than recomputed, and layer_norm's
    x_hat = (x - mean) * rstd, which only the backward reads, is not computed in the forward
    for it (Note [Saving a backward value]): its input and statistics are saved instead."""
    graphs = {}
    graph_observers.append(lambda stage, gm, info: graphs.setdefault(stage, (gm, info)))
    try:
        _check_against_eager(_GeluMLP, [strata.randn(8, 16, requires_grad=True)],
                             min_cut_rematerialization_partition, rtol=1e-5)
    finally:
        graph_observers.pop()
    forward, _ = graphs["forward"]
    backward, info = graphs["backward"]
    targets = {n.name: getattr(n.target, "name", str(n.target)) for n in forward.graph.nodes}
    saved = [targets.get(name, name) for name in info["saved_bytes"]]
    assert "gelu" in saved                   # saved: the weight gradient's matmul reads it
    assert not any(getattr(n.target, "name", "") == "gelu" for n in backward.graph.nodes)
    # the forward computes nothing only the backward reads: every node feeds its outputs
    outputs = forward.graph.output_node().args[0][:1]
    needed = set()
    stack = list(outputs)
    while stack:
        node = stack.pop()
        if node not in needed:
            needed.add(node)
            stack.extend(node.all_input_nodes)
    computed = [n for n in forward.graph.nodes if n.op == "call_function"]
    assert all(n in needed or n.target is operator.getitem or
               getattr(n.target, "is_view", False) for n in computed), \
        [n.name for n in computed if n not in needed]
