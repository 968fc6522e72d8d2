"""CPU kernels for ``ops/rnn.py``: one recurrent step's gate math in a few NumPy passes over
(batch, gates) arrays, in the float32 "opmath" for half inputs. The workspace layouts are the ones
``ops/rnn.py`` documents."""

import numpy as np

from ...ops import rnn as RN
from .array import COMPUTE, compute_data, wrap


def _sigmoid_(a):
    """``a`` replaced by ``1 / (1 + exp(-a))`` in place; exp overflows to inf (-> 0) quietly."""
    np.negative(a, out=a)
    with np.errstate(over="ignore"):
        np.exp(a, out=a)
    a += 1
    np.reciprocal(a, out=a)
    return a


def _gates(input_gates, hidden_gates, input_bias, hidden_bias, dt):
    """``input_gates + hidden_gates (+ both biases)`` in a fresh compute-dtype array."""
    gates = np.add(compute_data(input_gates, dt), compute_data(hidden_gates, dt))
    if input_bias is not None:
        gates += compute_data(input_bias, dt)
        gates += compute_data(hidden_bias, dt)
    return gates


def _bias_grad(grad_gates, has_bias, dt):
    return grad_gates.sum(0) if has_bias else np.empty((0,), COMPUTE[dt])


def fused_lstm_cell(input_gates, hidden_gates, cx, input_bias=None, hidden_bias=None):
    dt = RN.fused_lstm_cell.meta(input_gates, hidden_gates, cx, input_bias, hidden_bias)[0].dtype
    ws = _gates(input_gates, hidden_gates, input_bias, hidden_bias, dt)   # becomes the workspace
    h = ws.shape[1] // 4
    _sigmoid_(ws[:, :2 * h])          # i, f
    np.tanh(ws[:, 2 * h:3 * h], out=ws[:, 2 * h:3 * h])
    _sigmoid_(ws[:, 3 * h:])          # o
    i, f, g, o = ws[:, :h], ws[:, h:2 * h], ws[:, 2 * h:3 * h], ws[:, 3 * h:]
    cy = f * compute_data(cx, dt)
    cy += i * g
    hy = np.tanh(cy)
    hy *= o
    return wrap(hy, dt), wrap(cy, dt), wrap(ws, dt)


def fused_lstm_cell_backward(grad_hy, grad_cy, cx, cy, workspace, has_bias):
    spec = RN.fused_lstm_cell_backward.meta(grad_hy, grad_cy, cx, cy, workspace, has_bias)[0]
    dt = spec.dtype
    ws = compute_data(workspace, dt)
    h = ws.shape[1] // 4
    i, f, g, o = ws[:, :h], ws[:, h:2 * h], ws[:, 2 * h:3 * h], ws[:, 3 * h:]
    c = compute_data(cx, dt)
    grad_gates = np.empty_like(ws)
    gi, gf, gg, go = (grad_gates[:, k * h:(k + 1) * h] for k in range(4))
    # d c' = grad_cy + grad_hy * o * (1 - tanh(c')^2); d o = grad_hy * tanh(c') * o (1 - o)
    gc = np.zeros_like(c) if grad_cy is None else np.array(compute_data(grad_cy, dt), copy=True)
    if grad_hy is None:
        go[...] = 0
    else:
        ghy = compute_data(grad_hy, dt)
        tanh_cy = np.tanh(compute_data(cy, dt))
        np.multiply(ghy, tanh_cy, out=go)
        go *= o
        go *= 1 - o
        tanh_cy *= tanh_cy
        np.subtract(1, tanh_cy, out=tanh_cy)
        tanh_cy *= o
        tanh_cy *= ghy
        gc += tanh_cy
    np.multiply(gc, g, out=gi)      # d i = dc' * g * i (1 - i)
    gi *= i
    gi *= 1 - i
    np.multiply(gc, c, out=gf)      # d f = dc' * c * f (1 - f)
    gf *= f
    gf *= 1 - f
    np.multiply(gc, i, out=gg)      # d g = dc' * i * (1 - g^2)
    gg *= 1 - g * g
    gc *= f                         # d c = dc' * f
    return wrap(grad_gates, dt), wrap(gc, dt), wrap(_bias_grad(grad_gates, has_bias, dt), dt)


def fused_gru_cell(input_gates, hidden_gates, hx, input_bias=None, hidden_bias=None):
    dt = RN.fused_gru_cell.meta(input_gates, hidden_gates, hx, input_bias, hidden_bias)[0].dtype
    x = compute_data(input_gates, dt)
    hg = compute_data(hidden_gates, dt)
    if input_bias is not None:
        x = x + compute_data(input_bias, dt)
        hg = hg + compute_data(hidden_bias, dt)
    h = x.shape[1] // 3
    batch = x.shape[0]
    ws = np.empty((batch, 5 * h), x.dtype)
    np.add(x[:, :2 * h], hg[:, :2 * h], out=ws[:, :2 * h])
    _sigmoid_(ws[:, :2 * h])                     # r, z
    r, z, n, hprev, hn = (ws[:, k * h:(k + 1) * h] for k in range(5))
    hn[...] = hg[:, 2 * h:]
    hprev[...] = compute_data(hx, dt)
    np.multiply(r, hn, out=n)                    # n = tanh(x_n + r * hn)
    n += x[:, 2 * h:]
    np.tanh(n, out=n)
    hy = np.subtract(hprev, n)                   # h' = n + z * (h - n)
    hy *= z
    hy += n
    return wrap(hy, dt), wrap(ws, dt)


def fused_gru_cell_backward(grad_hy, workspace, has_bias):
    dt = RN.fused_gru_cell_backward.meta(grad_hy, workspace, has_bias)[0].dtype
    ws = compute_data(workspace, dt)
    g = compute_data(grad_hy, dt)
    h = g.shape[1]
    r, z, n, hprev, hn = (ws[:, k * h:(k + 1) * h] for k in range(5))
    grad_input = np.empty((g.shape[0], 3 * h), ws.dtype)
    gr, gz, gn = (grad_input[:, k * h:(k + 1) * h] for k in range(3))
    np.subtract(hprev, n, out=gz)       # d z = g * (h - n) * z (1 - z)
    gz *= g
    gz *= z
    gz *= 1 - z
    np.subtract(1, z, out=gn)           # d (x_n + r hn) = g * (1 - z) * (1 - n^2)
    gn *= g
    gn *= 1 - n * n
    np.multiply(gn, hn, out=gr)         # d r = that * hn * r (1 - r)
    gr *= r
    gr *= 1 - r
    grad_hidden = grad_input.copy()
    grad_hidden[:, 2 * h:] *= r         # d hn = that * r
    grad_hx = g * z
    return (wrap(grad_input, dt), wrap(grad_hidden, dt), wrap(grad_hx, dt),
            wrap(_bias_grad(grad_input, has_bias, dt), dt),
            wrap(_bias_grad(grad_hidden, has_bias, dt), dt))


KERNELS = {RN.fused_lstm_cell: fused_lstm_cell,
           RN.fused_lstm_cell_backward: fused_lstm_cell_backward,
           RN.fused_gru_cell: fused_gru_cell,
           RN.fused_gru_cell_backward: fused_gru_cell_backward}
