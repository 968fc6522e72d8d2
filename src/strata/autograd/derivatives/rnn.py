"""Derivatives of ``ops/rnn.py``: each fused cell's backward is one call of its backward op (whose
own backward is not implemented, as in PyTorch, so double backward through a cell raises)."""

from ...ops import rnn as RN
from . import derivative


@derivative(RN.fused_lstm_cell, "ThnnFusedLstmCellBackward0",
            save=("cx", "input_bias", "result1", "result2"), outputs=(True, True, False))
def _fused_lstm_cell(ctx, grad_hy, grad_cy, _grad_workspace=None):
    has_bias = ctx.input_bias is not None
    grad_gates, grad_cx, grad_bias = RN.fused_lstm_cell_backward(
        grad_hy, grad_cy, ctx.cx, ctx.result1, ctx.result2, has_bias)
    bias = grad_bias if has_bias else None
    return grad_gates, grad_gates, grad_cx, bias, bias


@derivative(RN.fused_gru_cell, "ThnnFusedGruCellBackward0", save=("input_bias", "result1"),
            outputs=(True, False))
def _fused_gru_cell(ctx, grad_hy, _grad_workspace=None):
    has_bias = ctx.input_bias is not None
    grad_input, grad_hidden, grad_hx, grad_input_bias, grad_hidden_bias = \
        RN.fused_gru_cell_backward(grad_hy, ctx.result1, has_bias)
    if not has_bias:
        grad_input_bias = grad_hidden_bias = None
    return grad_input, grad_hidden, grad_hx, grad_input_bias, grad_hidden_bias
