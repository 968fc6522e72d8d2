"""Fused recurrent cells: one LSTM or GRU time step as one op, with a backward op of its own.

An unrolled ``nn.LSTM`` step written with pointwise ops is about a dozen recorded ops forward and
as many backward; these primitives do the gate math of one step in one call each way, as
PyTorch's ``_thnn_fused_lstm_cell`` / ``_thnn_fused_gru_cell`` (``aten/src/ATen/native/cuda/
RNN.cu``) do. The matmuls stay outside (``input_gates = x W_ih^T``, ``hidden_gates = h W_hh^T``):
BLAS does them best.

The *workspace* output keeps what the backward needs, laid out as PyTorch's:

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
