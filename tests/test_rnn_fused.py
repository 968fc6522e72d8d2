"""The fused LSTM/GRU cell ops (``ops/rnn.py``) and the recurrent modules built on them: values
and gradients against PyTorch, float64 finite differences, errors, and one fused op per step."""

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


def test_initial_state_gradients_match_torch():
    s, t = _both(lambda nn: nn.LSTM(3, 4, num_layers=2))
    rng = np.random.default_rng(4)
    arrays = [rng.standard_normal(shape).astype(np.float32)
              for shape in ((5, 2, 3), (2, 2, 4), (2, 2, 4))]
    leaves_s = [strata.tensor(a, requires_grad=True) for a in arrays]
    leaves_t = [torch.tensor(a, requires_grad=True) for a in arrays]
    out_s, (_, c_s) = s(leaves_s[0], tuple(leaves_s[1:]))
    out_t, (_, c_t) = t(leaves_t[0], tuple(leaves_t[1:]))
    (out_s.sum() + c_s.sum()).backward()
    (out_t.sum() + c_t.sum()).backward()
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


@pytest.mark.parametrize("mode,node", [("LSTM", "ThnnFusedLstmCellBackward0"),
                                       ("GRU", "ThnnFusedGruCellBackward0")])
def test_one_fused_cell_op_per_step(mode, node):
    steps, layers = 6, 2
    model = getattr(strata.nn, mode)(3, 4, num_layers=layers)
    out, _ = model(strata.randn(steps, 2, 3))
    names = _node_names(out)
    assert names.count(node) == steps * layers
    assert not {"SigmoidBackward0", "TanhBackward0", "MulBackward0"} & set(names)


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
