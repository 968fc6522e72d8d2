"""The fused LSTM/GRU cell and whole-layer ops (``ops/rnn.py``) and the recurrent modules built
on them: values and gradients against PyTorch, float64 finite differences, errors, and one
autograd node per layer and direction."""

import numpy as np
import pytest
import torch
from helpers import assert_same, check_error
from hypothesis import given, settings
from hypothesis import strategies as st

import strata


def _f64(rng, *shape):
    return strata.tensor(rng.standard_normal(shape), requires_grad=True)


@settings(max_examples=6, deadline=None)
@given(batch=st.integers(1, 3), hidden=st.integers(1, 4), bias=st.booleans(),
       seed=st.integers(0, 2**16))
def test_lstm_cell_gradcheck(batch, hidden, bias, seed):
    rng = np.random.default_rng(seed)
    args = [_f64(rng, batch, 4 * hidden), _f64(rng, batch, 4 * hidden), _f64(rng, batch, hidden)]
    if bias:
        args += [_f64(rng, 4 * hidden), _f64(rng, 4 * hidden)]
    assert strata.autograd.gradcheck(lambda *a: strata._thnn_fused_lstm_cell(*a)[:2], args)


@settings(max_examples=6, deadline=None)
@given(batch=st.integers(1, 3), hidden=st.integers(1, 4), bias=st.booleans(),
       seed=st.integers(0, 2**16))
def test_gru_cell_gradcheck(batch, hidden, bias, seed):
    rng = np.random.default_rng(seed)
    args = [_f64(rng, batch, 3 * hidden), _f64(rng, batch, 3 * hidden), _f64(rng, batch, hidden)]
    if bias:
        args += [_f64(rng, 3 * hidden), _f64(rng, 3 * hidden)]
    assert strata.autograd.gradcheck(lambda *a: strata._thnn_fused_gru_cell(*a)[0], args)


def test_only_hy_or_only_cy_reaches_the_lstm_cell():
    """A gradient for one output only: the other counts as zero (as PyTorch's undefined grad)."""
    rng = np.random.default_rng(0)
    args = [_f64(rng, 2, 8), _f64(rng, 2, 8), _f64(rng, 2, 2)]
    for k in (0, 1):
        assert strata.autograd.gradcheck(
            lambda *a, k=k: strata._thnn_fused_lstm_cell(*a)[k], args)


def test_double_backward_through_a_cell_raises():
    rng = np.random.default_rng(1)
    gates, cx = _f64(rng, 2, 8), _f64(rng, 2, 2)
    hy, _, _ = strata._thnn_fused_lstm_cell(gates, gates * 0, cx)
    (g,) = strata.autograd.grad(hy.sum(), gates, create_graph=True)
    with pytest.raises(NotImplementedError, match="_thnn_fused_lstm_cell_backward_impl"):
        g.sum().backward()


@pytest.mark.parametrize("fn,shapes,message", [
    (lambda m, *a: m.ops.aten._thnn_fused_lstm_cell(*a), [(2, 8), (2, 4), (2, 2)], r"\[2, 8\]"),
    (lambda m, *a: m.ops.aten._thnn_fused_lstm_cell(*a), [(2, 8), (2, 8), (2, 3)], "6 != 4"),
    (lambda m, *a: m.ops.aten._thnn_fused_gru_cell(*a), [(2, 6, 1), (2, 6, 1), (2, 2)],
     "3 != 2"),
    (lambda m, *a: m.ops.aten._thnn_fused_gru_cell(*a), [(2, 6), (2, 6), (2, 2), (5,), (5,)],
     "5 != 6"),
])
def test_bad_sizes_raise_runtime_error(fn, shapes, message):
    """The checks of PyTorch's ``rnn_cell_checkSizes``, before anything is computed. (PyTorch
    has these ops for CUDA only, so the error is compared with its meta function's.)"""
    rng = np.random.default_rng(2)
    inputs = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    with pytest.raises(RuntimeError, match=message):
        fn(strata, *(strata.tensor(x) for x in inputs))
    with pytest.raises(RuntimeError):
        fn(torch, *(torch.tensor(x).to("meta") for x in inputs))


def test_integer_gates_are_refused():
    ints = [np.ones((1, 4), np.int64), np.ones((1, 4), np.int64), np.ones((1, 1), np.int64)]
    with pytest.raises(NotImplementedError, match="not implemented for 'Long'"):
        strata._thnn_fused_lstm_cell(*(strata.tensor(x) for x in ints))


def _both(build):
    torch.manual_seed(0)
    t = build(torch.nn)
    s = build(strata.nn)
    with strata.no_grad():
        for (name, ps), pt in zip(s.named_parameters(), t.parameters()):
            ps.copy_(strata.tensor(pt.detach().numpy()))
    return s, t


MODULES = [
    ("lstm-2-layers", lambda nn: nn.LSTM(5, 6, num_layers=2), (7, 3, 5)),
    ("lstm-bidirectional-batch_first",
     lambda nn: nn.LSTM(5, 4, num_layers=2, bidirectional=True, batch_first=True), (3, 6, 5)),
    ("lstm-proj", lambda nn: nn.LSTM(5, 6, proj_size=3), (4, 2, 5)),
    ("lstm-no-bias-unbatched", lambda nn: nn.LSTM(5, 6, bias=False), (4, 5)),
    ("gru-2-layers", lambda nn: nn.GRU(5, 6, num_layers=2), (7, 3, 5)),
    ("gru-bidirectional-no-bias", lambda nn: nn.GRU(5, 4, bidirectional=True, bias=False),
     (6, 2, 5)),
    ("rnn-tanh", lambda nn: nn.RNN(5, 4, num_layers=2), (5, 2, 5)),
    ("lstm-proj-bidirectional-2-layers",
     lambda nn: nn.LSTM(5, 6, num_layers=2, proj_size=2, bidirectional=True), (4, 3, 5)),
    ("gru-batch_first-unbatched", lambda nn: nn.GRU(5, 3, batch_first=True), (4, 5)),
    ("lstm-dropout-1-training", lambda nn: nn.LSTM(5, 3, num_layers=3, dropout=1.0), (4, 2, 5)),
]

CELLS = [
    ("lstm-cell", lambda nn: nn.LSTMCell(5, 4), (3, 5)),
    ("lstm-cell-unbatched-no-bias", lambda nn: nn.LSTMCell(5, 4, bias=False), (5,)),
    ("gru-cell", lambda nn: nn.GRUCell(5, 4), (3, 5)),
    ("gru-cell-unbatched", lambda nn: nn.GRUCell(5, 4), (5,)),
]


@pytest.mark.parametrize("name,build,shape", CELLS, ids=[c[0] for c in CELLS])
def test_cell_module_unrolled_matches_torch(name, build, shape):
    """Three steps of a cell, state fed back, then backward: values and every gradient."""
    s, t = _both(build)
    x = np.random.default_rng(5).standard_normal(shape).astype(np.float32)
    xs, xt = strata.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    state_s = state_t = None
    for _ in range(3):
        state_s, state_t = s(xs, state_s), t(xt, state_t)
    assert_same(state_s, state_t, atol=1e-5, rtol=1e-4)
    h_s = state_s[0] if isinstance(state_s, tuple) else state_s
    h_t = state_t[0] if isinstance(state_t, tuple) else state_t
    (h_s * h_s).sum().backward()
    (h_t * h_t).sum().backward()
    assert_same(xs.grad, xt.grad, atol=1e-5, rtol=1e-4)
    for (name_, ps), pt in zip(s.named_parameters(), t.parameters()):
        assert_same(ps.grad, pt.grad, atol=1e-5, rtol=1e-4, path=name_)


@pytest.mark.parametrize("name,build,shape", MODULES, ids=[m[0] for m in MODULES])
def test_module_forward_and_backward_match_torch(name, build, shape):
    s, t = _both(build)
    x = np.random.default_rng(3).standard_normal(shape).astype(np.float32)
    xs, xt = strata.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    out_s, hid_s = s(xs)
    out_t, hid_t = t(xt)
    assert_same(out_s, out_t, atol=1e-5, rtol=1e-4)
    assert_same(hid_s, hid_t, atol=1e-5, rtol=1e-4)
    h_s = hid_s[0] if isinstance(hid_s, tuple) else hid_s
    h_t = hid_t[0] if isinstance(hid_t, tuple) else hid_t
    ((out_s * out_s).sum() + h_s.sum()).backward()
    ((out_t * out_t).sum() + h_t.sum()).backward()
    assert_same(xs.grad, xt.grad, atol=1e-5, rtol=1e-4)
    for (name_, ps), pt in zip(s.named_parameters(), t.parameters()):
        assert_same(ps.grad, pt.grad, atol=1e-5, rtol=1e-4, path=name_)


@pytest.mark.parametrize("mode", ["LSTM", "GRU"])
def test_initial_state_gradients_match_torch(mode):
    s, t = _both(lambda nn: getattr(nn, mode)(3, 4, num_layers=2, bidirectional=True))
    rng = np.random.default_rng(4)
    shapes = ((5, 2, 3), (4, 2, 4), (4, 2, 4))[:3 if mode == "LSTM" else 2]
    arrays = [rng.standard_normal(shape).astype(np.float32) for shape in shapes]
    leaves_s = [strata.tensor(a, requires_grad=True) for a in arrays]
    leaves_t = [torch.tensor(a, requires_grad=True) for a in arrays]
    state_s = tuple(leaves_s[1:]) if mode == "LSTM" else leaves_s[1]
    state_t = tuple(leaves_t[1:]) if mode == "LSTM" else leaves_t[1]
    out_s, hidden_s = s(leaves_s[0], state_s)
    out_t, hidden_t = t(leaves_t[0], state_t)
    last_s = hidden_s[1] if mode == "LSTM" else hidden_s
    last_t = hidden_t[1] if mode == "LSTM" else hidden_t
    (out_s.sum() + (last_s * last_s).sum()).backward()
    (out_t.sum() + (last_t * last_t).sum()).backward()
    for a, b in zip(leaves_s, leaves_t):
        assert_same(a.grad, b.grad, atol=1e-5, rtol=1e-4)


def _node_names(tensor):
    seen, stack, names = set(), [tensor.grad_fn], []
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        names.append(node.name())
        stack.extend(fn for fn, _ in node.next_functions)
    return names


@pytest.mark.parametrize("mode,node", [("LSTM", "LstmLayerBackward0"),
                                       ("GRU", "GruLayerBackward0")])
def test_one_node_per_layer_and_direction(mode, node):
    """Note [Whole-layer RNN ops]: the graph has one node per layer and direction, whatever the
    sequence's length, and none per step."""
    layers = 2
    model = getattr(strata.nn, mode)(3, 4, num_layers=layers, bidirectional=True)
    out, _ = model(strata.randn(6, 2, 3))
    names = _node_names(out)
    assert names.count(node) == 2 * layers
    assert not {"MmBackward0", "SigmoidBackward0", "TanhBackward0", "MulBackward0",
                "ThnnFusedLstmCellBackward0", "ThnnFusedGruCellBackward0"} & set(names)


@settings(max_examples=12, deadline=None)
@given(mode=st.sampled_from(["LSTM", "GRU"]), steps=st.integers(1, 4), batch=st.integers(1, 3),
       hidden=st.integers(2, 3), bias=st.booleans(), proj=st.booleans(), reverse=st.booleans(),
       packed=st.booleans(), seed=st.integers(0, 2**16))
def test_layer_ops_gradcheck(mode, steps, batch, hidden, bias, proj, reverse, packed, seed):
    """float64 gradients of the whole-layer ops against finite differences, every option."""
    rng = np.random.default_rng(seed)
    gates = (4 if mode == "LSTM" else 3) * hidden
    state = 1 if proj and mode == "LSTM" else hidden
    x, h = _f64(rng, steps, batch, 2), _f64(rng, batch, state)
    weights = [_f64(rng, gates, 2), _f64(rng, gates, state)]
    biases = [_f64(rng, gates), _f64(rng, gates)] if bias else [None, None]
    if mode == "LSTM":
        w_hr = _f64(rng, state, hidden) if state != hidden else None
        positional = [x, h, _f64(rng, batch, hidden), *weights, *biases, w_hr]
        op, differentiable_outputs = strata._lstm_layer, 3
    else:
        positional = [x, h, *weights, *biases]
        op, differentiable_outputs = strata._gru_layer, 2
    lengths = strata.tensor(rng.integers(1, steps + 1, batch)) if packed else None

    def fn(*leaves):
        it = iter(leaves)
        args = [None if a is None else next(it) for a in positional]
        return op(*args, lengths, reverse)[:differentiable_outputs]
    assert strata.autograd.gradcheck(fn, [a for a in positional if a is not None])


def test_double_backward_through_a_layer_raises():
    """As PyTorch's cuDNN RNN: the layer's backward op has no derivative of its own."""
    model = strata.nn.LSTM(2, 3, dtype=strata.float64)
    x = strata.randn(4, 1, 2, dtype=strata.float64, requires_grad=True)
    out, _ = model(x)
    (g,) = strata.autograd.grad(out.sum(), x, create_graph=True)
    with pytest.raises(NotImplementedError, match="_lstm_layer_backward"):
        g.sum().backward()


def test_bad_layer_weights_raise_before_computing():
    x, h = strata.randn(3, 2, 4), strata.zeros(2, 5)
    with pytest.raises(RuntimeError, match=r"weight_ih \[15, 3\] != \[15, 4\]"):
        strata._gru_layer(x, h, strata.randn(15, 3), strata.randn(15, 5))
    with pytest.raises(RuntimeError, match="expected scalar type Float but found Double"):
        strata._gru_layer(x, h, strata.randn(15, 4), strata.randn(15, 5, dtype=strata.float64))


def test_lstm_dtype_mismatch_is_refused_before_any_state_changes():
    model = strata.nn.LSTM(3, 4)
    before = [p.detach().clone() for p in model.parameters()]
    check_error(lambda m, x: m.nn.LSTM(3, 4)(x), np.ones((2, 1, 3)), match="does not match")
    with pytest.raises(ValueError):
        model(strata.ones(2, 1, 3, dtype=strata.float64))
    for a, b in zip(before, model.parameters()):
        assert strata.equal(a, b.detach())


def test_grad_of_two_outputs_of_one_node():
    """Both outputs of one node as roots of autograd.grad (the engine counted the node's edges
    once per root, so the inputs never became ready)."""
    rng = np.random.default_rng(6)
    arrays = [rng.standard_normal(s) for s in ((3, 8), (3, 8), (3, 2))]
    leaves_s = [strata.tensor(a, requires_grad=True) for a in arrays]
    leaves_t = [torch.tensor(a, requires_grad=True) for a in arrays]
    hy, cy, _ = strata._thnn_fused_lstm_cell(*(x.clone() for x in leaves_s))
    xs = [x.clone() for x in leaves_t]
    hy_t, cy_t = _torch_lstm_cell(xs)
    cot = rng.standard_normal((3, 2))
    grads_s = strata.autograd.grad([hy, cy], leaves_s, [strata.tensor(cot)] * 2)
    grads_t = torch.autograd.grad([hy_t, cy_t], leaves_t, [torch.tensor(cot)] * 2)
    for a, b in zip(grads_s, grads_t):
        assert_same(a, b)


def _torch_lstm_cell(args):
    i, f, g, o = (args[0] + args[1]).chunk(4, 1)
    cy = f.sigmoid() * args[2] + i.sigmoid() * g.tanh()
    return o.sigmoid() * cy.tanh(), cy


@pytest.mark.parametrize("mode", ["LSTM", "GRU", "RNN"])
def test_empty_sequence_is_refused(mode):
    """PyTorch's check, before any layer runs."""
    check_error(lambda m, x: getattr(m.nn, mode)(3, 4)(x), np.ones((0, 2, 3), np.float32),
                match="Expected sequence length to be larger than 0 in RNN")


@settings(max_examples=8, deadline=None)
@given(mode=st.sampled_from(["LSTM", "GRU"]), layers=st.integers(1, 2),
       bidirectional=st.booleans(), batch_first=st.booleans(), bias=st.booleans(),
       proj=st.booleans(), steps=st.integers(1, 5), batch=st.integers(1, 3),
       seed=st.integers(0, 2**16))
def test_module_float64_matches_torch(mode, layers, bidirectional, batch_first, bias, proj,
                                      steps, batch, seed):
    """Any configuration, with initial states: output, final states and every gradient."""
    proj_size = 2 if proj and mode == "LSTM" else 0
    extra = {"proj_size": proj_size} if proj_size else {}
    s, t = _both(lambda nn: getattr(nn, mode)(3, 4, num_layers=layers, bias=bias,
                                              batch_first=batch_first,
                                              bidirectional=bidirectional,
                                              dtype=torch_or(nn).float64, **extra))
    rng = np.random.default_rng(seed)
    dirs = layers * (2 if bidirectional else 1)
    shapes = [(batch, steps, 3) if batch_first else (steps, batch, 3),
              (dirs, batch, proj_size or 4)]
    shapes += [(dirs, batch, 4)] if mode == "LSTM" else []
    arrays = [rng.standard_normal(shape) for shape in shapes]
    results = []
    for m, module in ((strata, s), (torch, t)):
        leaves = [m.tensor(a, requires_grad=True) for a in arrays]
        state = tuple(leaves[1:]) if mode == "LSTM" else leaves[1]
        out, hidden = module(leaves[0], state)
        finals = hidden if mode == "LSTM" else (hidden,)
        loss = (out * out).sum() + sum((f * f * f).sum() for f in finals)
        loss.backward()
        results.append((out, finals, [x.grad for x in leaves],
                        [p.grad for p in module.parameters()]))
    for a, b in zip(results[0], results[1]):
        assert_same(a, b, atol=1e-10, rtol=1e-9)


def torch_or(nn):
    """The library whose ``nn`` this is (``_both`` builds a module from each)."""
    return strata if nn is strata.nn else torch


def test_gru_refuses_any_proj_size():
    check_error(lambda m: m.nn.GRU(3, 4, proj_size=0), match="only supported for LSTM")


@pytest.mark.parametrize("mode", ["LSTM", "GRU"])
def test_packed_sequence_on_another_device(mode):
    """The lengths of a PackedSequence stay on the CPU; the layer op gets them on its device."""
    rnn = strata.nn.utils.rnn
    model = getattr(strata.nn, mode)(3, 4, bidirectional=True)
    x, lengths = strata.randn(5, 3, 3), strata.tensor([5, 2, 3])
    expected, _ = model(rnn.pack_padded_sequence(x, lengths, enforce_sorted=False))
    model.to("sim")
    out, _ = model(rnn.pack_padded_sequence(x.to("sim"), lengths, enforce_sorted=False))
    assert out.data.device.type == "sim"
    np.testing.assert_allclose(out.data.to("cpu").detach().numpy(),
                               expected.data.detach().numpy(), rtol=1e-6, atol=1e-7)
