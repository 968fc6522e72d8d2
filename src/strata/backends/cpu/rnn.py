"""CPU kernels for ``ops/rnn.py``: one recurrent step's gate math in a few NumPy passes over
(batch, gates) arrays, in the float32 "opmath" for half inputs. The workspace layouts are the ones
``ops/rnn.py`` documents."""

import numpy as np

from ...ops import rnn as RN
from .array import COMPUTE, compute_data, data, wrap


def _sigmoid_(a):
    """``a`` replaced by ``1 / (1 + exp(-a))`` in place; exp overflows to inf (-> 0) quietly
    (kernels run under Note [Silent IEEE arithmetic])."""
    np.negative(a, out=a)
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



# --- whole layers (Note [Whole-layer RNN ops] in ops/rnn.py) -------------------------------------
# Note [Feature-major RNN steps]: inside the time loop every per-step array is (features, batch),
# so each gate is a contiguous block of rows: a NumPy ufunc over a contiguous (64, 20) block
# costs 0.4 us, over the same block cut out of the columns of a (20, 256) array 4 us, ten times
# more, and a step makes dozens. The whole-sequence GEMMs stay (T * B, features); one transposing
# copy each way converts. Arrays are kept in time order; ``_in_order`` views them in processing
# order (reversed for the reverse direction), so one loop serves both directions.

def _in_order(arr, reverse):
    return arr[::-1] if reverse else arr


def _swap(arr):
    """The last two axes swapped, laid out contiguously: (T, B, F) <-> (T, F, B)."""
    return np.ascontiguousarray(np.swapaxes(arr, -1, -2))


def _running(lengths, steps, reverse):
    """Per processing step, the (1, batch) mask of rows still inside their sequence, or None."""
    if lengths is None:
        return None
    mask = np.arange(steps)[:, None] < data(lengths)[None, :]
    return _in_order(mask, reverse)[:, None, :]


def _project_inputs(x, weight_ih, bias):
    """``x W_ih^T (+ bias)`` for every time step in one GEMM, feature-major: (T, gates, B)."""
    steps, batch, features = x.shape
    gates = np.matmul(x.reshape(steps * batch, features), weight_ih.T)
    if bias is not None:
        gates += bias
    return _swap(gates.reshape(steps, batch, -1))


def _previous_states(output, h0, reverse):
    """Each step's incoming state in time order: h0 then the outputs, shifted by one step."""
    prev = np.empty_like(output)
    prev_seq, out_seq = _in_order(prev, reverse), _in_order(output, reverse)
    prev_seq[0] = h0
    prev_seq[1:] = out_seq[:-1]
    return prev


def _batch_major(grad):
    """A feature-major (T, F, B) gradient as the (T * B, F) matrix of the whole-sequence GEMMs."""
    return _swap(grad).reshape(-1, grad.shape[1])


def _over_steps(flat_grad, inputs):
    """``sum_t grad_t^T inputs_t`` (a weight's gradient) as one GEMM; ``inputs`` (T, B, G)."""
    return np.matmul(flat_grad.T, inputs.reshape(-1, inputs.shape[-1]))


def _input_grad(flat_grad, x, weight_ih, input_grad):
    """``dX = dG W_ih``, or an empty array when the input needs no gradient."""
    if not input_grad:
        return np.empty((0,), flat_grad.dtype)
    return np.matmul(flat_grad, weight_ih).reshape(x.shape)


def _state_t(tensor, shape, dt, dtype):
    """A (batch, F) state or its gradient as a fresh feature-major (F, batch) array."""
    return np.zeros(shape[::-1], dtype) if tensor is None else _swap(compute_data(tensor, dt))


def lstm_layer(input, hx, cx, weight_ih, weight_hh, bias_ih=None, bias_hh=None, weight_hr=None,
               lengths=None, reverse=False):
    dt = RN.lstm_layer.meta(input, hx, cx, weight_ih, weight_hh, bias_ih, bias_hh, weight_hr,
                            lengths, reverse)[0].dtype
    x = compute_data(input, dt)
    w_hh = compute_data(weight_hh, dt)
    w_hr = None if weight_hr is None else compute_data(weight_hr, dt)
    bias = None if bias_ih is None else compute_data(bias_ih, dt) + compute_data(bias_hh, dt)
    gates_in = _project_inputs(x, compute_data(weight_ih, dt), bias)
    steps, batch = x.shape[:2]
    hidden = w_hh.shape[0] // 4
    h, c = _swap(compute_data(hx, dt)), _swap(compute_data(cx, dt))
    output = np.empty((steps, h.shape[0], batch), x.dtype)
    gates = np.empty((steps, 4 * hidden, batch), x.dtype)
    cells = np.empty((steps, hidden, batch), x.dtype)
    running = _running(lengths, steps, reverse)
    seq = [_in_order(a, reverse) for a in (gates_in, output, gates, cells)]
    for s, (g_in, out, g, cell) in enumerate(zip(*seq)):
        np.matmul(w_hh, h, out=g)
        g += g_in
        i, f, gg, o = g[:hidden], g[hidden:2 * hidden], g[2 * hidden:3 * hidden], g[3 * hidden:]
        _sigmoid_(g[:2 * hidden])
        np.tanh(gg, out=gg)
        _sigmoid_(o)
        np.multiply(f, c, out=cell)          # c' = f c + i g
        cell += i * gg
        if w_hr is None:                     # h' = o tanh(c') (W_hr^T)
            np.tanh(cell, out=out)
            out *= o
        else:
            np.matmul(w_hr, np.tanh(cell) * o, out=out)
        if running is not None:
            np.copyto(out, h, where=~running[s])
            np.copyto(cell, c, where=~running[s])
        h, c = out, cell
    return (wrap(_swap(output), dt), wrap(_swap(h), dt), wrap(_swap(c), dt),
            wrap(gates, dt), wrap(cells, dt))


def lstm_layer_backward(grad_output, grad_hy, grad_cy, input, hx, cx, weight_ih, weight_hh,
                        weight_hr, output, gates, cells, lengths, has_bias, reverse, input_grad):
    dt = input.dtype
    x, out = compute_data(input, dt), compute_data(output, dt)
    w_hh_t = np.ascontiguousarray(compute_data(weight_hh, dt).T)
    w_hr_t = None if weight_hr is None else np.ascontiguousarray(compute_data(weight_hr, dt).T)
    g_all, c_all = compute_data(gates, dt), compute_data(cells, dt)
    steps, batch = x.shape[:2]
    hidden = c_all.shape[1]
    i, f, gg, o = (g_all[:, k * hidden:(k + 1) * hidden] for k in range(4))
    # Note [Step-independent factors]: what multiplies the incoming gradients at each step
    # depends on the forward's values only, so it is computed for all steps in a few
    # whole-sequence passes, leaving the loop a handful of small ufunc calls.
    tanh_c = np.tanh(c_all)
    projected = tanh_c * o                      # o tanh(c): h before W_hr
    to_o = projected * (1 - o)                  # d o = dh tanh(c) o (1 - o)
    to_c = o * (1 - tanh_c * tanh_c)            # d c += dh o (1 - tanh(c)^2)
    to_ifg = np.empty((steps, 3, hidden, batch), x.dtype)
    np.multiply(gg * i, 1 - i, out=to_ifg[:, 0])                     # d i = dc g i (1 - i)
    c_prev = _previous_states(c_all, _swap(compute_data(cx, dt)), reverse)
    np.multiply(c_prev * f, 1 - f, out=to_ifg[:, 1])                 # d f = dc c_prev f (1 - f)
    np.multiply(i, 1 - gg * gg, out=to_ifg[:, 2])                    # d g = dc i (1 - g^2)
    dh = _state_t(grad_hy, out.shape[1:], dt, x.dtype)
    dc = _state_t(grad_cy, (batch, hidden), dt, x.dtype)
    grad_gates = np.empty_like(g_all)
    grad_states = None if w_hr_t is None else np.empty((steps,) + dh.shape, x.dtype)
    running = _running(lengths, steps, reverse)
    to_o, to_c, to_ifg, f, grad_seq = (_in_order(a, reverse)
                                       for a in (to_o, to_c, to_ifg, f, grad_gates))
    states_seq = None if grad_states is None else _in_order(grad_states, reverse)
    grad_out_seq = None if grad_output is None else \
        _in_order(_swap(compute_data(grad_output, dt)), reverse)
    for s in range(steps - 1, -1, -1):
        dg = grad_seq[s]
        dh_step = dh if grad_out_seq is None else dh + grad_out_seq[s]
        if states_seq is not None:
            states_seq[s] = dh_step
            d_hidden = np.matmul(w_hr_t, dh_step)
        else:
            d_hidden = dh_step
        np.multiply(d_hidden, to_o[s], out=dg[3 * hidden:])
        dc_step = d_hidden * to_c[s]
        dc_step += dc
        np.multiply(dc_step, to_ifg[s], out=dg[:3 * hidden].reshape(3, hidden, batch))
        dc_step *= f[s]                             # d c_prev = dc f
        if running is None:
            dh, dc = np.matmul(w_hh_t, dg), dc_step
        else:   # a masked step passed h and c through unchanged
            dg *= running[s]
            if states_seq is not None:
                states_seq[s] *= running[s]
            dh = np.where(running[s], np.matmul(w_hh_t, dg), dh_step)
            dc = np.where(running[s], dc_step, dc)
    h_prev = _previous_states(out, compute_data(hx, dt), reverse)
    flat = _batch_major(grad_gates)
    grad_input = _input_grad(flat, x, compute_data(weight_ih, dt), input_grad)
    grad_w_ih, grad_w_hh = _over_steps(flat, x), _over_steps(flat, h_prev)
    grad_bias = flat.sum(0) if has_bias else np.empty((0,), x.dtype)
    if w_hr_t is None:
        grad_w_hr = np.empty((0,), x.dtype)
    else:   # h_t = (o tanh(c_t)) W_hr^T
        grad_w_hr = _over_steps(_batch_major(grad_states), _swap(projected))
    return tuple(wrap(a, dt) for a in (grad_input, dh.T, dc.T, grad_w_ih, grad_w_hh, grad_bias,
                                       grad_w_hr))


def gru_layer(input, hx, weight_ih, weight_hh, bias_ih=None, bias_hh=None, lengths=None,
              reverse=False):
    dt = RN.gru_layer.meta(input, hx, weight_ih, weight_hh, bias_ih, bias_hh, lengths,
                           reverse)[0].dtype
    x = compute_data(input, dt)
    w_hh = compute_data(weight_hh, dt)
    b_hh = None if bias_hh is None else compute_data(bias_hh, dt)[:, None]
    gates_in = _project_inputs(x, compute_data(weight_ih, dt),
                               None if bias_ih is None else compute_data(bias_ih, dt))
    steps, batch = x.shape[:2]
    hidden = w_hh.shape[0] // 3
    h = _swap(compute_data(hx, dt))
    output = np.empty((steps, hidden, batch), x.dtype)
    workspace = np.empty((steps, 4 * hidden, batch), x.dtype)
    running = _running(lengths, steps, reverse)
    seq = [_in_order(a, reverse) for a in (gates_in, output, workspace)]
    for s, (g_in, out, ws) in enumerate(zip(*seq)):
        np.matmul(w_hh, h, out=ws[:3 * hidden])     # [r, z, hn] parts of h W_hh^T
        if b_hh is not None:
            ws[:3 * hidden] += b_hh
        r, z = ws[:hidden], ws[hidden:2 * hidden]
        hn, n = ws[2 * hidden:3 * hidden], ws[3 * hidden:]
        ws[:2 * hidden] += g_in[:2 * hidden]
        _sigmoid_(ws[:2 * hidden])
        np.multiply(r, hn, out=n)                    # n = tanh(x_n + r hn)
        n += g_in[2 * hidden:]
        np.tanh(n, out=n)
        np.subtract(h, n, out=out)                   # h' = n + z (h - n)
        out *= z
        out += n
        if running is not None:
            np.copyto(out, h, where=~running[s])
        h = out
    return wrap(_swap(output), dt), wrap(_swap(h), dt), wrap(workspace, dt)


def gru_layer_backward(grad_output, grad_hy, input, hx, weight_ih, weight_hh, output, workspace,
                       lengths, has_bias, reverse, input_grad):
    dt = input.dtype
    x, out = compute_data(input, dt), compute_data(output, dt)
    w_hh_t = np.ascontiguousarray(compute_data(weight_hh, dt).T)
    ws_all = compute_data(workspace, dt)
    steps, batch, hidden = out.shape
    h_prev = _previous_states(out, compute_data(hx, dt), reverse)
    r, z, hn, n = (ws_all[:, k * hidden:(k + 1) * hidden] for k in range(4))
    # Note [Step-independent factors] (above): d (gates) = dh * these, for all steps at once.
    to_in = np.empty((steps, 3, hidden, batch), x.dtype)             # [d r, d z, d n] / dh
    np.multiply(1 - z, 1 - n * n, out=to_in[:, 2])                   # d (x_n + r hn)
    np.multiply((_swap(h_prev) - n) * z, 1 - z, out=to_in[:, 1])     # d z = (h - n) z (1 - z)
    np.multiply(to_in[:, 2] * hn, r * (1 - r), out=to_in[:, 0])      # d r = that hn r (1 - r)
    to_hidden = to_in.copy()
    to_hidden[:, 2] *= r                                             # d hn = that r
    dh = _state_t(grad_hy, (batch, hidden), dt, x.dtype)
    grad_in = np.empty((steps, 3 * hidden, batch), x.dtype)      # d (x W_ih^T + b_ih)
    grad_hidden = np.empty_like(grad_in)                        # d (h W_hh^T + b_hh)
    running = _running(lengths, steps, reverse)
    z, to_in, to_hidden, in_seq, hidden_seq = (
        _in_order(a, reverse) for a in (z, to_in, to_hidden, grad_in, grad_hidden))
    grad_out_seq = None if grad_output is None else \
        _in_order(_swap(compute_data(grad_output, dt)), reverse)
    for s in range(steps - 1, -1, -1):
        gi, gh = in_seq[s], hidden_seq[s]
        dh_step = dh if grad_out_seq is None else dh + grad_out_seq[s]
        np.multiply(dh_step, to_in[s], out=gi.reshape(3, hidden, batch))
        np.multiply(dh_step, to_hidden[s], out=gh.reshape(3, hidden, batch))
        if running is not None:
            gi *= running[s]
            gh *= running[s]
        dh_new = dh_step * z[s]
        dh_new += np.matmul(w_hh_t, gh)
        dh = dh_new if running is None else np.where(running[s], dh_new, dh_step)
    flat_in, flat_hidden = _batch_major(grad_in), _batch_major(grad_hidden)
    grad_input = _input_grad(flat_in, x, compute_data(weight_ih, dt), input_grad)
    grad_w_ih, grad_w_hh = _over_steps(flat_in, x), _over_steps(flat_hidden, h_prev)
    if has_bias:
        grad_b_ih, grad_b_hh = flat_in.sum(0), flat_hidden.sum(0)
    else:
        grad_b_ih = grad_b_hh = np.empty((0,), x.dtype)
    return tuple(wrap(a, dt) for a in (grad_input, dh.T, grad_w_ih, grad_w_hh, grad_b_ih,
                                       grad_b_hh))


KERNELS = {RN.fused_lstm_cell: fused_lstm_cell,
           RN.fused_lstm_cell_backward: fused_lstm_cell_backward,
           RN.fused_gru_cell: fused_gru_cell,
           RN.fused_gru_cell_backward: fused_gru_cell_backward,
           RN.lstm_layer: lstm_layer, RN.lstm_layer_backward: lstm_layer_backward,
           RN.gru_layer: gru_layer, RN.gru_layer_backward: gru_layer_backward}
