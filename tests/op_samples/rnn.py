"""Sample inputs for the fused recurrent cells and whole-layer ops of ``ops/rnn.py``.

PyTorch has the cell ops for CUDA only and no whole-layer op of this schema, so on the ``torch``
side each sample computes the same step or layer with PyTorch's ``LSTMCell``/``GRUCell``
formulas, and each backward sample with PyTorch's autograd through them: strata's fused kernels
are checked against independent math."""

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



def _layer_steps(x, reverse):
    return range(x.shape[0] - 1, -1, -1) if reverse else range(x.shape[0])


def _lstm_layer_reference(m, x, hx, cx, w_ih, w_hh, b_ih=None, b_hh=None, w_hr=None,
                          lengths=None, reverse=False):
    """One LSTM layer step by step; the workspaces in the op's (T, features, B) layout."""
    h, c = hx, cx
    outs, gates, cells = [None] * x.shape[0], [None] * x.shape[0], [None] * x.shape[0]
    for t in _layer_steps(x, reverse):
        g = x[t] @ w_ih.T + h @ w_hh.T
        if b_ih is not None:
            g = g + b_ih + b_hh
        i, f, gg, o = g.chunk(4, 1)
        i, f, gg, o = i.sigmoid(), f.sigmoid(), gg.tanh(), o.sigmoid()
        c_new = f * c + i * gg
        h_new = o * c_new.tanh()
        if w_hr is not None:
            h_new = h_new @ w_hr.T
        if lengths is not None:
            running = (lengths > t).unsqueeze(1)
            h_new, c_new = m.where(running, h_new, h), m.where(running, c_new, c)
        h, c = h_new, c_new
        outs[t], gates[t], cells[t] = h, m.cat([i, f, gg, o], 1).T, c.T
    return m.stack(outs), h, c, m.stack(gates).detach(), m.stack(cells).detach()


def _gru_layer_reference(m, x, hx, w_ih, w_hh, b_ih=None, b_hh=None, lengths=None,
                         reverse=False):
    """One GRU layer step by step; the workspace [r, z, hn, n] in the op's layout."""
    h = hx
    outs, workspace = [None] * x.shape[0], [None] * x.shape[0]
    for t in _layer_steps(x, reverse):
        gi, gh = x[t] @ w_ih.T, h @ w_hh.T
        if b_ih is not None:
            gi, gh = gi + b_ih, gh + b_hh
        xr, xz, xn = gi.chunk(3, 1)
        hr, hz, hn = gh.chunk(3, 1)
        r, z = (xr + hr).sigmoid(), (xz + hz).sigmoid()
        n = (xn + r * hn).tanh()
        h_new = n + z * (h - n)
        if lengths is not None:
            h_new = m.where((lengths > t).unsqueeze(1), h_new, h)
        h = h_new
        outs[t], workspace[t] = h, m.cat([r, z, hn, n], 1).T
    return m.stack(outs), h, m.stack(workspace).detach()


def lstm_layer(m, *args, reverse=False):
    if _is_strata(m):
        return m._lstm_layer(*args, reverse=reverse)
    return _lstm_layer_reference(m, *args, reverse=reverse)


def gru_layer(m, *args, reverse=False):
    if _is_strata(m):
        return m._gru_layer(*args, reverse=reverse)
    return _gru_layer_reference(m, *args, reverse=reverse)


def lstm_layer_backward(m, grad_output, grad_hy, grad_cy, x, hx, cx, w_ih, w_hh, b_ih, b_hh,
                        w_hr=None, lengths=None, reverse=False):
    """Gradients of (output, hy, cy) for x, hx, cx, W_ih, W_hh, the bias and W_hr."""
    has_bias = b_ih is not None
    if _is_strata(m):
        output, _, _, gates, cells = m._lstm_layer(x, hx, cx, w_ih, w_hh, b_ih, b_hh, w_hr,
                                                   lengths, reverse)
        return m._lstm_layer_backward(grad_output, grad_hy, grad_cy, x, hx, cx, w_ih, w_hh,
                                      w_hr, output, gates, cells, lengths, has_bias, reverse,
                                      True)
    leaves = [None if a is None else a.detach().requires_grad_()
              for a in (x, hx, cx, w_ih, w_hh, b_ih, b_hh, w_hr)]
    output, hy, cy, _, _ = _lstm_layer_reference(m, *leaves, lengths, reverse)
    wrt = [a for a in leaves if a is not None]
    grads = dict(zip(map(id, wrt), m.autograd.grad((output, hy, cy), wrt,
                                                   (grad_output, grad_hy, grad_cy))))
    empty = x.new_empty(0)
    return tuple(grads[id(a)] if a is not None else empty
                 for a in (leaves[0], leaves[1], leaves[2], leaves[3], leaves[4], leaves[5],
                           leaves[7]))


def gru_layer_backward(m, grad_output, grad_hy, x, hx, w_ih, w_hh, b_ih, b_hh, lengths=None,
                       reverse=False):
    """Gradients of (output, hy) for x, hx, W_ih, W_hh and both biases."""
    has_bias = b_ih is not None
    if _is_strata(m):
        output, _, workspace = m._gru_layer(x, hx, w_ih, w_hh, b_ih, b_hh, lengths, reverse)
        return m._gru_layer_backward(grad_output, grad_hy, x, hx, w_ih, w_hh, output,
                                     workspace, lengths, has_bias, reverse, True)
    leaves = [None if a is None else a.detach().requires_grad_()
              for a in (x, hx, w_ih, w_hh, b_ih, b_hh)]
    output, hy, _ = _gru_layer_reference(m, *leaves, lengths, reverse)
    wrt = [a for a in leaves if a is not None]
    grads = dict(zip(map(id, wrt), m.autograd.grad((output, hy), wrt, (grad_output, grad_hy))))
    empty = x.new_empty(0)
    return tuple(grads[id(a)] if a is not None else empty for a in leaves)


def _lstm_args(steps, batch, features, hidden, proj=0, bias=True, dtype=np.float32):
    state = proj or hidden
    args = [_f(steps, batch, features, dtype=dtype), _f(batch, state, dtype=dtype),
            _f(batch, hidden, dtype=dtype), _f(4 * hidden, features, dtype=dtype),
            _f(4 * hidden, state, dtype=dtype)]
    args += [_f(4 * hidden, dtype=dtype), _f(4 * hidden, dtype=dtype)] if bias else [None, None]
    return args + [_f(proj, hidden, dtype=dtype) if proj else None]


def _gru_args(steps, batch, features, hidden, bias=True, dtype=np.float32):
    args = [_f(steps, batch, features, dtype=dtype), _f(batch, hidden, dtype=dtype),
            _f(3 * hidden, features, dtype=dtype), _f(3 * hidden, hidden, dtype=dtype)]
    return args + ([_f(3 * hidden, dtype=dtype), _f(3 * hidden, dtype=dtype)] if bias
                   else [None, None])


_LENGTHS = np.array([4, 1, 3])

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
    "aten::_lstm_layer": [
        Sample(lstm_layer, (*_lstm_args(4, 3, 2, 3), None)),
        Sample(lambda m, *a: lstm_layer(m, *a, reverse=True),
               (*_lstm_args(4, 3, 2, 3, proj=2, bias=False), _LENGTHS), name="reverse_proj_packed"),
        Sample(lstm_layer, (*_lstm_args(3, 2, 3, 4, dtype=np.float64), None), name="float64"),
    ],
    "aten::_lstm_layer_backward": [
        Sample(lstm_layer_backward, (_f(4, 3, 3), _f(3, 3), _f(3, 3), *_lstm_args(4, 3, 2, 3))),
        Sample(lambda m, *a: lstm_layer_backward(m, *a, reverse=True),
               (_f(4, 3, 2), _f(3, 2), _f(3, 3), *_lstm_args(4, 3, 2, 3, proj=2, bias=False),
                _LENGTHS), name="reverse_proj_packed"),
        Sample(lstm_layer_backward, (_f(4, 3, 2), _f(3, 2), _f(3, 3),
                                     *_lstm_args(4, 3, 2, 3, proj=2), _LENGTHS),
               name="proj_packed"),
    ],
    "aten::_gru_layer": [
        Sample(gru_layer, (*_gru_args(4, 3, 2, 3), None)),
        Sample(lambda m, *a: gru_layer(m, *a, reverse=True),
               (*_gru_args(4, 3, 2, 3, bias=False), _LENGTHS), name="reverse_packed"),
    ],
    "aten::_gru_layer_backward": [
        Sample(gru_layer_backward, (_f(4, 3, 3), _f(3, 3), *_gru_args(4, 3, 2, 3))),
        Sample(lambda m, *a: gru_layer_backward(m, *a, reverse=True),
               (_f(4, 3, 3), _f(3, 3), *_gru_args(4, 3, 2, 3, bias=False), _LENGTHS),
               name="reverse_packed"),
    ],
}
