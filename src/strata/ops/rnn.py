"""Fused recurrent ops: one LSTM or GRU time step (``LSTMCell``/``GRUCell``), or one whole layer
and direction (``nn.LSTM``/``nn.GRU``, Note [Whole-layer RNN ops] below), as one op with a
backward op of its own.

An unrolled ``nn.LSTM`` step written with pointwise ops is about a dozen recorded ops forward and
as many backward; these primitives do the gate math of one step in one call each way, as
PyTorch's ``_thnn_fused_lstm_cell`` / ``_thnn_fused_gru_cell`` (``aten/src/ATen/native/cuda/
RNN.cu``) do. The matmuls stay outside (``input_gates = x W_ih^T``, ``hidden_gates = h W_hh^T``):
BLAS does them best.

A cell's *workspace* output keeps what the backward needs, laid out as PyTorch's:

* LSTM: ``(batch, 4 * hidden)``, the activated gates ``[sigmoid(i), sigmoid(f), tanh(g),
  sigmoid(o)]``; ``c' = f c + i g``, ``h' = o tanh(c')``.
* GRU: ``(batch, 5 * hidden)``, ``[r, z, n, h, hn]`` with ``hn`` the hidden gates' n-part plus
  its bias; ``n = tanh(x_n + r hn)``, ``h' = n + z (h - n)``.
"""

from ..core import dtype as D
from . import meta_rules as R
from .op import TensorSpec, defop


def _check(cond, message):
    if not cond:
        raise RuntimeError(message)


def _check_cell_sizes(input_gates, hidden_gates, input_bias, hidden_bias, factor, prev_hidden):
    """``rnn_cell_checkSizes`` (``torch/_meta_registrations.py``, ``RNN.cu``)."""
    _check(input_gates.ndim == 2, f"{input_gates.ndim} != 2")
    _check(tuple(input_gates._shape) == tuple(hidden_gates._shape),
           f"{list(input_gates._shape)} != {list(hidden_gates._shape)}")
    gates_size = input_gates._shape[1]
    if input_bias is not None or hidden_bias is not None:
        _check(input_bias is not None and hidden_bias is not None,
               "input_bias and hidden_bias must be given together")
        _check(input_bias.ndim == 1, f"{input_bias.ndim} != 1")
        _check(input_bias.numel() == gates_size, f"{input_bias.numel()} != {gates_size}")
        _check(tuple(input_bias._shape) == tuple(hidden_bias._shape),
               f"{list(input_bias._shape)} != {list(hidden_bias._shape)}")
    _check(prev_hidden.ndim == 2, f"{prev_hidden.ndim} != 2")
    expected = input_gates._shape[0] * gates_size // factor
    _check(prev_hidden.numel() == expected, f"{prev_hidden.numel()} != {expected}")
    _check(gates_size % factor == 0, f"{gates_size} % {factor} != 0")
    dt = input_gates.dtype
    for t in (hidden_gates, prev_hidden, input_bias, hidden_bias):
        if t is not None and t.dtype is not dt:
            raise RuntimeError(f"expected scalar type {R.type_name(dt)} but found "
                               f"{R.type_name(t.dtype)}")
    if dt.category != D.FLOATING:
        raise NotImplementedError(f"\"fused_rnn_cell\" not implemented for '{R.type_name(dt)}'")
    return dt


def _lstm_cell_meta(input_gates, hidden_gates, cx, input_bias=None, hidden_bias=None):
    dt = _check_cell_sizes(input_gates, hidden_gates, input_bias, hidden_bias, 4, cx)
    state = TensorSpec(tuple(cx._shape), dt)
    return state, state, TensorSpec(tuple(input_gates._shape), dt)


def _lstm_cell_backward_meta(grad_hy, grad_cy, cx, cy, workspace, has_bias):
    _check(grad_hy is not None or grad_cy is not None,
           "_thnn_fused_lstm_cell_backward_impl: no gradient for hy or cy")
    _check(workspace.ndim == 2 and workspace._shape[1] == 4 * cx._shape[-1],
           f"{list(workspace._shape)} is not a (batch, 4 * hidden) LSTM workspace")
    dt = workspace.dtype
    bias = TensorSpec((workspace._shape[1],) if has_bias else (0,), dt)
    return TensorSpec(tuple(workspace._shape), dt), TensorSpec(tuple(cx._shape), dt), bias


def _gru_cell_meta(input_gates, hidden_gates, hx, input_bias=None, hidden_bias=None):
    dt = _check_cell_sizes(input_gates, hidden_gates, input_bias, hidden_bias, 3, hx)
    batch, hidden = hx._shape
    return TensorSpec(tuple(hx._shape), dt), TensorSpec((batch, 5 * hidden), dt)


def _gru_cell_backward_meta(grad_hy, workspace, has_bias):
    _check(grad_hy.ndim == 2 and tuple(workspace._shape) == (grad_hy._shape[0],
                                                             5 * grad_hy._shape[1]),
           f"{list(workspace._shape)} is not a (batch, 5 * hidden) GRU workspace")
    batch, hidden = grad_hy._shape
    dt = grad_hy.dtype
    gates = TensorSpec((batch, 3 * hidden), dt)
    bias = TensorSpec((3 * hidden,) if has_bias else (0,), dt)
    return gates, gates, TensorSpec((batch, hidden), dt), bias, bias


# --- primitives ---------------------------------------------------------------------------------
fused_lstm_cell = defop("_thnn_fused_lstm_cell(Tensor input_gates, Tensor hidden_gates, Tensor cx, "
                        "Tensor? input_bias=None, Tensor? hidden_bias=None) -> "
                        "(Tensor, Tensor, Tensor)", _lstm_cell_meta, function=True)
fused_lstm_cell_backward = defop(
    "_thnn_fused_lstm_cell_backward_impl(Tensor? grad_hy, Tensor? grad_cy, Tensor cx, Tensor cy, "
    "Tensor workspace, bool has_bias) -> (Tensor, Tensor, Tensor)", _lstm_cell_backward_meta,
    function=True)
fused_gru_cell = defop("_thnn_fused_gru_cell(Tensor input_gates, Tensor hidden_gates, Tensor hx, "
                       "Tensor? input_bias=None, Tensor? hidden_bias=None) -> (Tensor, Tensor)",
                       _gru_cell_meta, function=True)
fused_gru_cell_backward = defop(
    "_thnn_fused_gru_cell_backward(Tensor grad_hy, Tensor workspace, bool has_bias) -> "
    "(Tensor, Tensor, Tensor, Tensor, Tensor)", _gru_cell_backward_meta, function=True)


# --- whole layers ------------------------------------------------------------------------------
# Note [Whole-layer RNN ops]: one layer and direction of nn.LSTM / nn.GRU over the whole sequence
# is one op, with one autograd node, as PyTorch's CPU ``mkldnn_rnn_layer`` and cuDNN's RNN are.
# The input projection of every time step is one GEMM; only ``h W_hh^T`` and the gate math loop
# over time, forward and (backward through time) in the backward op, which ends with one GEMM
# each for the weight and input gradients. The op cannot be differentiated twice (as cuDNN's).
#
# ``lengths`` (int64, one per batch row) masks the steps of a packed batch past each row's length:
# there h and c keep their value (Note [Packed sequences] in nn/modules/rnn.py). ``reverse`` runs
# the sequence from its end. Workspaces, in time order and feature-major (Note [Feature-major RNN
# steps] in backends/cpu/rnn.py): LSTM ``gates`` (T, 4 * hidden, B), the activated [i, f, g, o],
# and ``cells`` (T, hidden, B), each step's c; GRU (T, 4 * hidden, B), [r, z, hn, n] with hn the
# hidden projection's n-part plus its bias.

def _check_layer(input, hx, weight_ih, weight_hh, bias_ih, bias_hh, factor, lengths):
    dt = input.dtype
    _check(input.ndim == 3, f"expected a (seq, batch, feature) input, got {input.ndim}-D")
    steps, batch, features = input._shape
    _check(steps > 0, "Expected sequence length to be larger than 0 in RNN")
    gate_size, state_size = weight_hh._shape
    _check(gate_size % factor == 0, f"{gate_size} % {factor} != 0")
    _check(tuple(weight_ih._shape) == (gate_size, features),
           f"weight_ih {list(weight_ih._shape)} != {[gate_size, features]}")
    _check(tuple(hx._shape) == (batch, state_size),
           f"hx {list(hx._shape)} != {[batch, state_size]}")
    for b in (bias_ih, bias_hh):
        _check(b is None or tuple(b._shape) == (gate_size,),
               f"bias {list(b._shape) if b is not None else None} != {[gate_size]}")
    _check((bias_ih is None) == (bias_hh is None),
           "input_bias and hidden_bias must be given together")
    _check(lengths is None or tuple(lengths._shape) == (batch,), "lengths must be (batch,)")
    for t in (hx, weight_ih, weight_hh, bias_ih, bias_hh):
        if t is not None and t.dtype is not dt:
            raise RuntimeError(f"expected scalar type {R.type_name(dt)} but found "
                               f"{R.type_name(t.dtype)}")
    if dt.category != D.FLOATING:
        raise NotImplementedError(f"\"rnn_layer\" not implemented for '{R.type_name(dt)}'")
    return dt, steps, batch, gate_size // factor


def _lstm_layer_meta(input, hx, cx, weight_ih, weight_hh, bias_ih=None, bias_hh=None,
                     weight_hr=None, lengths=None, reverse=False):
    dt, steps, batch, hidden = _check_layer(input, hx, weight_ih, weight_hh, bias_ih, bias_hh,
                                            4, lengths)
    out_size = hidden if weight_hr is None else weight_hr._shape[0]
    _check(tuple(cx._shape) == (batch, hidden), f"cx {list(cx._shape)} != {[batch, hidden]}")
    _check(weight_hr is None or tuple(weight_hr._shape) == (hx._shape[1], hidden),
           "weight_hr must be (proj_size, hidden_size)")
    _check(hx._shape[1] == out_size, f"hx {list(hx._shape)} != {[batch, out_size]}")
    return (TensorSpec((steps, batch, out_size), dt), TensorSpec((batch, out_size), dt),
            TensorSpec((batch, hidden), dt), TensorSpec((steps, 4 * hidden, batch), dt),
            TensorSpec((steps, hidden, batch), dt))


def _lstm_layer_backward_meta(grad_output, grad_hy, grad_cy, input, hx, cx, weight_ih,
                              weight_hh, weight_hr, output, gates, cells, lengths, has_bias,
                              reverse, input_grad):
    dt = input.dtype
    bias = TensorSpec((weight_hh._shape[0],) if has_bias else (0,), dt)
    hr = TensorSpec((0,) if weight_hr is None else tuple(weight_hr._shape), dt)
    return (TensorSpec(tuple(input._shape) if input_grad else (0,), dt),
            TensorSpec(tuple(hx._shape), dt), TensorSpec(tuple(cx._shape), dt),
            TensorSpec(tuple(weight_ih._shape), dt), TensorSpec(tuple(weight_hh._shape), dt),
            bias, hr)


def _gru_layer_meta(input, hx, weight_ih, weight_hh, bias_ih=None, bias_hh=None, lengths=None,
                    reverse=False):
    dt, steps, batch, hidden = _check_layer(input, hx, weight_ih, weight_hh, bias_ih, bias_hh,
                                            3, lengths)
    _check(hx._shape[1] == hidden, f"hx {list(hx._shape)} != {[batch, hidden]}")
    return (TensorSpec((steps, batch, hidden), dt), TensorSpec((batch, hidden), dt),
            TensorSpec((steps, 4 * hidden, batch), dt))


def _gru_layer_backward_meta(grad_output, grad_hy, input, hx, weight_ih, weight_hh, output,
                             workspace, lengths, has_bias, reverse, input_grad):
    dt = input.dtype
    bias = TensorSpec((weight_hh._shape[0],) if has_bias else (0,), dt)
    return (TensorSpec(tuple(input._shape) if input_grad else (0,), dt),
            TensorSpec(tuple(hx._shape), dt), TensorSpec(tuple(weight_ih._shape), dt),
            TensorSpec(tuple(weight_hh._shape), dt), bias, bias)


lstm_layer = defop(
    "_lstm_layer(Tensor input, Tensor hx, Tensor cx, Tensor weight_ih, Tensor weight_hh, "
    "Tensor? bias_ih=None, Tensor? bias_hh=None, Tensor? weight_hr=None, Tensor? lengths=None, "
    "bool reverse=False) -> (Tensor, Tensor, Tensor, Tensor, Tensor)", _lstm_layer_meta,
    function=True)
lstm_layer_backward = defop(
    "_lstm_layer_backward(Tensor? grad_output, Tensor? grad_hy, Tensor? grad_cy, Tensor input, "
    "Tensor hx, Tensor cx, Tensor weight_ih, Tensor weight_hh, Tensor? weight_hr, "
    "Tensor output, Tensor gates, Tensor cells, Tensor? lengths, bool has_bias, bool reverse, "
    "bool input_grad) -> (Tensor, Tensor, Tensor, Tensor, Tensor, Tensor, Tensor)",
    _lstm_layer_backward_meta, function=True)
gru_layer = defop(
    "_gru_layer(Tensor input, Tensor hx, Tensor weight_ih, Tensor weight_hh, "
    "Tensor? bias_ih=None, Tensor? bias_hh=None, Tensor? lengths=None, bool reverse=False) -> "
    "(Tensor, Tensor, Tensor)", _gru_layer_meta, function=True)
gru_layer_backward = defop(
    "_gru_layer_backward(Tensor? grad_output, Tensor? grad_hy, Tensor input, Tensor hx, "
    "Tensor weight_ih, Tensor weight_hh, Tensor output, Tensor workspace, Tensor? lengths, "
    "bool has_bias, bool reverse, bool input_grad) -> "
    "(Tensor, Tensor, Tensor, Tensor, Tensor, Tensor)", _gru_layer_backward_meta, function=True)
