"""Derivatives of ``ops/rnn.py``: each fused cell's or whole layer's backward is one call of its
backward op (whose own backward is not implemented, as in PyTorch, so double backward raises)."""

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


@derivative(RN.lstm_layer, "LstmLayerBackward0",
            save=("input", "hx", "cx", "weight_ih", "weight_hh", "bias_ih", "weight_hr",
                  "lengths", "result0", "result3", "result4"),
            outputs=(True, True, True, False, False))
def _lstm_layer(ctx, grad_output, grad_hy, grad_cy, _grad_gates=None, _grad_cells=None):
    has_bias = ctx.bias_ih is not None
    grad_input, grad_hx, grad_cx, grad_w_ih, grad_w_hh, grad_bias, grad_w_hr = \
        RN.lstm_layer_backward(grad_output, grad_hy, grad_cy, ctx.input, ctx.hx, ctx.cx,
                               ctx.weight_ih, ctx.weight_hh, ctx.weight_hr, ctx.result0,
                               ctx.result3, ctx.result4, ctx.lengths, has_bias, ctx.reverse,
                               ctx.needs[0])
    bias = grad_bias if has_bias else None
    return (grad_input if ctx.needs[0] else None, grad_hx, grad_cx, grad_w_ih, grad_w_hh, bias,
            bias, grad_w_hr if ctx.weight_hr is not None else None, None)


@derivative(RN.gru_layer, "GruLayerBackward0",
            save=("input", "hx", "weight_ih", "weight_hh", "bias_ih", "lengths", "result0",
                  "result2"),
            outputs=(True, True, False))
def _gru_layer(ctx, grad_output, grad_hy, _grad_workspace=None):
    has_bias = ctx.bias_ih is not None
    grad_input, grad_hx, grad_w_ih, grad_w_hh, grad_b_ih, grad_b_hh = RN.gru_layer_backward(
        grad_output, grad_hy, ctx.input, ctx.hx, ctx.weight_ih, ctx.weight_hh, ctx.result0,
        ctx.result2, ctx.lengths, has_bias, ctx.reverse, ctx.needs[0])
    if not has_bias:
        grad_b_ih = grad_b_hh = None
    return (grad_input if ctx.needs[0] else None, grad_hx, grad_w_ih, grad_w_hh, grad_b_ih,
            grad_b_hh, None)
