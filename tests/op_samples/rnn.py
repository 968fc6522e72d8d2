"""Sample inputs for the fused recurrent cells of ``ops/rnn.py``.

PyTorch has these ops for CUDA only, so on the ``torch`` side each sample computes the same step
with PyTorch's ``LSTMCell``/``GRUCell`` formulas, and each backward sample with PyTorch's
autograd through them: strata's fused kernels are checked against independent math."""

import numpy as np

from op_samples import Sample

_rng = np.random.default_rng(17)


def _f(*shape, dtype=np.float32):
    return np.asarray(_rng.standard_normal(shape), dtype=dtype)


def _is_strata(m):
    return m.__name__ == "strata"


def _lstm_reference(m, input_gates, hidden_gates, cx, input_bias=None, hidden_bias=None):
    gates = input_gates + hidden_gates
    if input_bias is not None:
        gates = gates + input_bias + hidden_bias
    i, f, g, o = gates.chunk(4, 1)
    i, f, g, o = i.sigmoid(), f.sigmoid(), g.tanh(), o.sigmoid()
    cy = f * cx + i * g
    return o * cy.tanh(), cy, m.cat([i, f, g, o], 1).detach()   # the workspace has no grad


def _gru_reference(m, input_gates, hidden_gates, hx, input_bias=None, hidden_bias=None):
    if input_bias is not None:
        input_gates, hidden_gates = input_gates + input_bias, hidden_gates + hidden_bias
    xr, xz, xn = input_gates.chunk(3, 1)
    hr, hz, hn = hidden_gates.chunk(3, 1)
    r, z = (xr + hr).sigmoid(), (xz + hz).sigmoid()
    n = (xn + r * hn).tanh()
    return n + z * (hx - n), m.cat([r, z, n, hx, hn], 1).detach()


def lstm_cell(m, *args):
    return (m._thnn_fused_lstm_cell if _is_strata(m) else
            lambda *a: _lstm_reference(m, *a))(*args)


def gru_cell(m, *args):
    return (m._thnn_fused_gru_cell if _is_strata(m) else lambda *a: _gru_reference(m, *a))(*args)


def lstm_backward(m, gates, cx, grad_hy, grad_cy, has_bias):
    """Gradients of (hy, cy) with respect to the gates, cx and the bias."""
    if _is_strata(m):
        _, cy, workspace = m._thnn_fused_lstm_cell(gates, m.zeros_like(gates), cx)
        return m._thnn_fused_lstm_cell_backward_impl(grad_hy, grad_cy, cx, cy, workspace,
                                                     has_bias)
    gates, cx = gates.detach().requires_grad_(), cx.detach().requires_grad_()
    hy, cy, _ = _lstm_reference(m, gates, m.zeros_like(gates), cx)
    g_gates, g_cx = m.autograd.grad((hy, cy), (gates, cx), (grad_hy, grad_cy))
    return g_gates, g_cx, g_gates.sum(0) if has_bias else g_gates.new_empty(0)


def gru_backward(m, input_gates, hidden_gates, hx, grad_hy, has_bias):
    if _is_strata(m):
        _, workspace = m._thnn_fused_gru_cell(input_gates, hidden_gates, hx)
        return m._thnn_fused_gru_cell_backward(grad_hy, workspace, has_bias)
    leaves = [t.detach().requires_grad_() for t in (input_gates, hidden_gates, hx)]
    hy, _ = _gru_reference(m, *leaves)
    g_in, g_hidden, g_hx = m.autograd.grad(hy, leaves, grad_hy)
    if not has_bias:
        return g_in, g_hidden, g_hx, g_in.new_empty(0), g_in.new_empty(0)
    return g_in, g_hidden, g_hx, g_in.sum(0), g_hidden.sum(0)


SAMPLES = {
    "aten::_thnn_fused_lstm_cell": [
        Sample(lstm_cell, (_f(3, 8), _f(3, 8), _f(3, 2))),
        Sample(lstm_cell, (_f(2, 12), _f(2, 12), _f(2, 3), _f(12), _f(12)), name="bias"),
        Sample(lstm_cell, (_f(4, 20, dtype=np.float64), _f(4, 20, dtype=np.float64),
                           _f(4, 5, dtype=np.float64)), name="float64"),
        Sample(lstm_cell, (10 * _f(2, 8), 10 * _f(2, 8), _f(2, 2)), name="saturated"),
    ],
    "aten::_thnn_fused_lstm_cell_backward_impl": [
        Sample(lambda m, *a: lstm_backward(m, *a, False), (_f(3, 8), _f(3, 2), _f(3, 2),
                                                           _f(3, 2))),
        Sample(lambda m, *a: lstm_backward(m, *a, True),
               (_f(2, 12, dtype=np.float64), _f(2, 3, dtype=np.float64),
                _f(2, 3, dtype=np.float64), _f(2, 3, dtype=np.float64)), name="bias_float64"),
    ],
    "aten::_thnn_fused_gru_cell": [
        Sample(gru_cell, (_f(3, 6), _f(3, 6), _f(3, 2))),
        Sample(gru_cell, (_f(2, 9), _f(2, 9), _f(2, 3), _f(9), _f(9)), name="bias"),
        Sample(gru_cell, (_f(4, 15, dtype=np.float64), _f(4, 15, dtype=np.float64),
                          _f(4, 5, dtype=np.float64)), name="float64"),
    ],
    "aten::_thnn_fused_gru_cell_backward": [
        Sample(lambda m, *a: gru_backward(m, *a, False), (_f(3, 6), _f(3, 6), _f(3, 2),
                                                          _f(3, 2))),
        Sample(lambda m, *a: gru_backward(m, *a, True),
               (_f(2, 9, dtype=np.float64), _f(2, 9, dtype=np.float64),
                _f(2, 3, dtype=np.float64), _f(2, 3, dtype=np.float64)), name="bias_float64"),
    ],
}
