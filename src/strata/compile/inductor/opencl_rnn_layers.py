"""The OpenCL device's whole-layer LSTM and GRU ops and their backward (Note [Whole-layer RNN
ops] in ops/rnn.py), with the CPU device's arithmetic (backends/cpu/rnn.py).

Every time step's input projection is one GEMM; then the host loops over time, each step one
GEMM (``h W_hh^T``) and one gate kernel (opencl_rnn.py's ``gate_kernel``), all enqueued without
waiting. The backward runs the loop in reverse and ends with one GEMM each for the weight and
input gradients. A packed batch's lengths stay on the device: the gate kernels read them (``t <
lengths[b]``). Half dtypes run on float32 copies and round the results, as on the CPU device.
"""

from ...core.shape import contiguous_strides
from ...ops import rnn as RN
from .ir import ops
from .opencl_pointwise import identity, new_output, pointwise, runtime_of
from .opencl_rnn import (
    GATE_OUTS,
    GRU_TEMPS,
    LSTM_BACKWARD_TEMPS,
    LSTM_GRAD_GATES,
    LSTM_TEMPS,
    WORKSPACE_GATES,
    columns,
    complement,
    feature_major,
    gate_kernel,
    gru_h,
    kept_gradient,
    lstm_grad_c,
    lstm_h,
    masked,
    projected_grad,
    strided_view,
    temp,
    time_step,
    zero_unless_running,
)
from .opencl_rows import matmul, opmath, sum_dim

# Time steps run in processing order (reversed for the reverse direction); arrays are kept in
# time order. The workspaces are feature-major (T, features, batch) as on the CPU; each step
# reads and writes them through transposed (batch, features) views.

def _compute_copy(op_name, t):
    """``t`` itself, or a contiguous float32 copy of a half tensor (layers compute in float32,
    as the CPU device does); a non-contiguous input becomes contiguous (the GEMMs view it as a
    matrix)."""
    if t is None:
        return None
    dtype = opmath(t.dtype)
    return t if dtype is t.dtype and t.is_contiguous() else _copy(op_name, t, dtype)


def _result(op_name, t, dtype, fresh=True):
    """``t`` as a result of ``dtype``: itself when it is a fresh tensor of that dtype, else a
    copy (rounded to a half dtype)."""
    return t if fresh and t.dtype is dtype else _copy(op_name, t, dtype)


def _copy(op_name, t, dtype):
    """A contiguous copy of ``t`` in ``dtype``."""
    shape = tuple(t._shape)
    out = runtime_of(t).empty(shape, contiguous_strides(shape), dtype)
    return pointwise(op_name, identity, [(t, dtype)], out)


def _empty(like, shape, dtype=None):
    return runtime_of(like).empty(shape, contiguous_strides(shape), dtype or like.dtype)


def _zeros(op_name, like, shape):
    return pointwise(op_name, identity, [(0, like.dtype)], _empty(like, shape))


def _transposed(t):
    """A 2-d tensor's transpose, as a view."""
    (rows, cols), (st0, st1) = t._shape, t._get_strides()
    return strided_view(t, (cols, rows), (st1, st0))


def _matrix(t):
    """A contiguous (T, B, F) tensor as its (T * B, F) matrix."""
    steps, batch, features = t._shape
    return strided_view(t, (steps * batch, features), (features, 1))


def _project(op_name, x, weight_ih):
    """``x W_ih^T`` for every time step in one GEMM: (T, B, gates)."""
    steps, batch, _ = x._shape
    out = _empty(x, (steps, batch, weight_ih._shape[0]))
    matmul(op_name, _matrix(x), _transposed(weight_ih), _matrix(out))
    return out


def _order(steps, reverse):
    """The time index of each processing step."""
    return range(steps - 1, -1, -1) if reverse else range(steps)


def _previous_states(op_name, output, h0, reverse):
    """Each step's incoming state in time order, (T, B, F): h0, then the outputs one step
    behind."""
    steps, batch, features = output._shape
    prev = _empty(output, tuple(output._shape))
    block = batch * features
    first, rest_to, rest_from = (steps - 1, 0, 1) if reverse else (0, 1, 0)
    pointwise(op_name, identity, [(h0, prev.dtype)], time_step(prev, first))
    if steps > 1:
        shape = (steps - 1, batch, features)
        strides = contiguous_strides(shape)
        shifted = strided_view(output, shape, strides, rest_from * block)
        pointwise(op_name, identity, [(shifted, prev.dtype)],
                  strided_view(prev, shape, strides, rest_to * block))
    return prev


def _lstm_c_masked(B, index):
    return masked(B, index, temp("c"), B["cp"].load(index))


def _lstm_h_masked(B, index):
    return masked(B, index, lstm_h(B, index), B["hp"].load(index))


def _projected_masked(B, index):
    return masked(B, index, B["v"].load(index), B["hp"].load(index))


def lstm_layer(input, hx, cx, weight_ih, weight_hh, bias_ih=None, bias_hh=None, weight_hr=None,
               lengths=None, reverse=False):
    op_name = "aten::_lstm_layer"
    specs = RN.lstm_layer.meta(input, hx, cx, weight_ih, weight_hh, bias_ih, bias_hh, weight_hr,
                               lengths, reverse)
    x, hx, cx, w_ih, w_hh, b_ih, b_hh, w_hr = (
        _compute_copy(op_name, t) for t in (input, hx, cx, weight_ih, weight_hh, bias_ih,
                                            bias_hh, weight_hr))
    steps, batch, _ = x._shape
    hidden, out_size = w_hh._shape[0] // 4, hx._shape[1]
    gates_in = _project(op_name, x, w_ih)
    output = _empty(x, (steps, batch, out_size))
    gates, cells = _empty(x, (steps, 4 * hidden, batch)), _empty(x, (steps, hidden, batch))
    hidden_gates = _empty(x, (batch, 4 * hidden))     # reused: the queue runs in order
    projected = None if w_hr is None else _empty(x, (batch, hidden))
    w_hh_t, w_hr_t = _transposed(w_hh), None if w_hr is None else _transposed(w_hr)
    ints = {"hid": hidden} if lengths is None else {"hid": hidden, "t": 0}
    h, c = hx, cx
    for t in _order(steps, reverse):
        matmul(op_name, h, w_hh_t, hidden_gates)
        reads = {"xg": time_step(gates_in, t), "hg": hidden_gates, "cp": c, "hp": h}
        if b_ih is not None:
            reads.update(bi=b_ih, bh=b_hh)
        if lengths is not None:
            reads["len"] = lengths
            ints["t"] = t
        step_gates = feature_major(gates, t)
        outs = [(w, GATE_OUTS[n]) for w, n in zip(columns(step_gates, 4, hidden), "ifgo")]
        outs.append((feature_major(cells, t), _lstm_c_masked))
        out_t = time_step(output, t)
        outs.append((out_t, _lstm_h_masked) if w_hr is None else (projected, lstm_h))
        gate_kernel(op_name, reads, ints, LSTM_TEMPS, outs, x.dtype.name)
        if w_hr is not None:            # h' = (o tanh(c')) W_hr^T
            if lengths is None:
                matmul(op_name, projected, w_hr_t, out_t)
            else:
                product = matmul(op_name, projected, w_hr_t, _empty(x, (batch, out_size)))
                gate_kernel(op_name, {"v": product, "hp": h, "len": lengths}, {"t": t}, (),
                            [(out_t, _projected_masked)], x.dtype.name)
        h, c = out_t, feature_major(cells, t)
    dt = specs[0].dtype
    return (_result(op_name, output, dt), _result(op_name, h, dt, False),
            _result(op_name, c, dt, False), _result(op_name, gates, dt),
            _result(op_name, cells, dt))


def _add(a, b):
    return ops.add(a, b)


def _step_grad(op_name, dh, grad_output, t):
    """The gradient reaching step t's h: the one carried back plus the output's."""
    if grad_output is None:
        return dh
    return pointwise(op_name, _add, [(dh, dh.dtype), (time_step(grad_output, t), dh.dtype)],
                     _empty(dh, tuple(dh._shape)))


def lstm_layer_backward(grad_output, grad_hy, grad_cy, input, hx, cx, weight_ih, weight_hh,
                        weight_hr, output, gates, cells, lengths, has_bias, reverse, input_grad):
    op_name = "aten::_lstm_layer_backward"
    specs = RN.lstm_layer_backward.meta(grad_output, grad_hy, grad_cy, input, hx, cx, weight_ih,
                                        weight_hh, weight_hr, output, gates, cells, lengths,
                                        has_bias, reverse, input_grad)
    grad_output, grad_hy, grad_cy, x, hx, cx, w_ih, w_hh, w_hr, output, gates, cells = (
        _compute_copy(op_name, t) for t in (grad_output, grad_hy, grad_cy, input, hx, cx,
                                            weight_ih, weight_hh, weight_hr, output, gates,
                                            cells))
    steps, batch, _ = x._shape
    hidden, out_size = cells._shape[1], hx._shape[1]
    dh = grad_hy if grad_hy is not None else _zeros(op_name, x, (batch, out_size))
    dc = grad_cy if grad_cy is not None else _zeros(op_name, x, (batch, hidden))
    grad_gates = _empty(x, (steps, batch, 4 * hidden))
    states = None if w_hr is None else _empty(x, (steps, batch, out_size))
    ints = {"hid": hidden} if lengths is None else {"hid": hidden, "t": 0}
    order = list(_order(steps, reverse))
    for s in range(steps - 1, -1, -1):
        t = order[s]
        c_prev = cx if s == 0 else feature_major(cells, order[s - 1])
        reads = {"ws": feature_major(gates, t), "cy": feature_major(cells, t), "cp": c_prev,
                 "dh": dh, "dc": dc}
        if w_hr is None:        # the gate kernel adds the output's gradient itself
            if grad_output is not None:
                reads["go"] = time_step(grad_output, t)
        else:                   # the step's gradient of h_t, then through W_hr
            step_grad = _step_grad(op_name, dh, grad_output, t)
            reads["dh"] = matmul(op_name, step_grad, w_hr, _empty(x, (batch, hidden)))
        step_gates = time_step(grad_gates, t)
        outs = list(zip(columns(step_gates, 4, hidden), LSTM_GRAD_GATES))
        dc = _empty(x, (batch, hidden))
        outs.append((dc, lstm_grad_c))
        kept = None
        if lengths is not None:
            reads["len"] = lengths
            ints["t"] = t
            kept = _empty(x, (batch, out_size))
            if w_hr is None:
                outs.append((kept, kept_gradient))
        gate_kernel(op_name, reads, ints, LSTM_BACKWARD_TEMPS, outs, x.dtype.name)
        if w_hr is not None:
            _projected_step(op_name, step_grad, lengths, t, kept, time_step(states, t))
        dh = matmul(op_name, step_gates, w_hh, _empty(x, (batch, out_size)), kept)
    flat = _matrix(grad_gates)
    grads = _layer_weight_grads(op_name, flat, x, w_ih, _previous_states(op_name, output, hx,
                                                                         reverse), input_grad)
    grad_bias = sum_dim(flat, [0]) if has_bias else None
    grad_w_hr = None
    if w_hr is not None:              # h_t = (o tanh(c_t)) W_hr^T
        projected = pointwise(op_name, _tanh_times,
                              [(_time_batch(cells, 0, hidden), x.dtype),
                               (_time_batch(gates, 3 * hidden, hidden), x.dtype)],
                              _empty(x, (steps, batch, hidden)))
        grad_w_hr = matmul(op_name, _transposed(_matrix(states)), _matrix(projected),
                           _empty(x, tuple(w_hr._shape)))
    values = (grads[0], dh, dc, grads[1], grads[2], grad_bias, grad_w_hr)
    return tuple(_finished(op_name, v, spec, input) for v, spec in zip(values, specs))


def _projected_step(op_name, step_grad, lengths, t, kept, state):
    """A projected layer's step: ``state`` (its gradient of h_t, 0 past a row's length) and
    ``kept`` (what a finished row passes back unchanged), both (batch, proj). Their own kernel,
    not outputs of the gate kernel: its work-items span (batch, hidden), and with proj < hidden
    the extra columns stored into the next row's elements, in whatever order the device ran
    them (wrong W_hr gradients on the NVIDIA H200, and on PoCL for the forward direction)."""
    if lengths is None:
        pointwise(op_name, identity, [(step_grad, state.dtype)], state)
        return
    gate_kernel(op_name, {"ds": step_grad, "len": lengths}, {"t": t}, (),
                [(kept, kept_gradient), (state, projected_grad)], state.dtype.name)


def _tanh_times(c, o):
    return ops.mul(ops.tanh(c), o)


def _time_batch(t, start, count):
    """Features [start, start + count) of a (T, features, B) workspace as a (T, B, count)
    view."""
    steps, features, batch = t._shape
    return strided_view(t, (steps, batch, count), (features * batch, 1, batch), start * batch)


def _layer_weight_grads(op_name, flat, x, w_ih, prev, input_grad):
    """(input gradient or None, W_ih's, W_hh's) from the (T * B, gates) gate gradients."""
    grad_input = None
    if input_grad:
        grad_input = _empty(x, tuple(x._shape))
        matmul(op_name, flat, w_ih, _matrix(grad_input))
    flat_t = _transposed(flat)
    grad_w_ih = matmul(op_name, flat_t, _matrix(x), _empty(x, (flat._shape[1], x._shape[2])))
    grad_w_hh = matmul(op_name, flat_t, _matrix(prev),
                       _empty(x, (flat._shape[1], prev._shape[2])))
    return grad_input, grad_w_ih, grad_w_hh


def _finished(op_name, value, spec, like):
    """A result of ``spec``: ``value`` in its dtype, or the empty tensor the spec asks for."""
    if value is None:
        return new_output(spec, like)
    return _result(op_name, value, spec.dtype, tuple(value._shape) == tuple(spec.shape) and
                   value.is_contiguous())


def gru_layer(input, hx, weight_ih, weight_hh, bias_ih=None, bias_hh=None, lengths=None,
              reverse=False):
    op_name = "aten::_gru_layer"
    specs = RN.gru_layer.meta(input, hx, weight_ih, weight_hh, bias_ih, bias_hh, lengths,
                              reverse)
    x, hx, w_ih, w_hh, b_ih, b_hh = (_compute_copy(op_name, t) for t in (
        input, hx, weight_ih, weight_hh, bias_ih, bias_hh))
    steps, batch, _ = x._shape
    hidden = w_hh._shape[0] // 3
    gates_in = _project(op_name, x, w_ih)
    output = _empty(x, (steps, batch, hidden))
    workspace = _empty(x, (steps, 4 * hidden, batch))
    hidden_gates = _empty(x, (batch, 3 * hidden))
    w_hh_t = _transposed(w_hh)
    ints = {"hid": hidden} if lengths is None else {"hid": hidden, "t": 0}
    h = hx
    for t in _order(steps, reverse):
        matmul(op_name, h, w_hh_t, hidden_gates)
        reads = {"ig": time_step(gates_in, t), "hg": hidden_gates, "hp": h}
        if b_ih is not None:
            reads.update(bi=b_ih, bh=b_hh)
        if lengths is not None:
            reads["len"] = lengths
            ints["t"] = t
        out_t = time_step(output, t)
        step_gates = columns(feature_major(workspace, t), 4, hidden)
        outs = [(w, GATE_OUTS[n]) for w, n in zip(step_gates, ("r", "z", "hn", "n"))]
        outs.append((out_t, gru_h))
        gate_kernel(op_name, reads, ints, GRU_TEMPS, outs, x.dtype.name)
        h = out_t
    dt = specs[0].dtype
    return (_result(op_name, output, dt), _result(op_name, h, dt, False),
            _result(op_name, workspace, dt))


# A layer step's gradients (backends/cpu/rnn.py's order), ds the step's incoming gradient:
# t2 = (1 - z)(1 - n^2); d n' = ds t2; d z = ds (((h - n) z)(1 - z));
# d r = ds ((t2 hn)(r (1 - r))); d hn = ds (t2 r); h's share: ds z, plus d(hidden gates) W_hh.

def _layer_t2(B, index):
    n = temp("n")
    return ops.mul(complement(temp("z")), complement(ops.mul(n, n)))


def _layer_ds(B, index):
    """The step's incoming gradient: the one carried back, plus the output's at this step."""
    dh = B["dh"].load(index)
    return ops.add(dh, B["go"].load(index)) if "go" in B else dh


def _layer_grad_r(B, index):
    r = temp("r")
    return zero_unless_running(B, index, ops.mul(temp("ds"), ops.mul(
        ops.mul(temp("t2"), temp("hn")), ops.mul(r, complement(r)))))


def _layer_grad_z(B, index):
    z = temp("z")
    to_z = ops.mul(ops.mul(ops.sub(B["hp"].load(index), temp("n")), z), complement(z))
    return zero_unless_running(B, index, ops.mul(temp("ds"), to_z))


def _layer_grad_n(B, index):
    return zero_unless_running(B, index, ops.mul(temp("ds"), temp("t2")))


def _layer_grad_hn(B, index):
    return zero_unless_running(B, index, ops.mul(temp("ds"), ops.mul(temp("t2"),
                                                                       temp("r"))))


def _layer_grad_h(B, index):
    """ds z, or ds itself past the row's length (the hidden gates' gradient is 0 there)."""
    ds = temp("ds")
    return masked(B, index, ops.mul(ds, temp("z")), ds)


_GRU_LAYER_BACKWARD_TEMPS = (*zip(("r", "z", "hn", "n"), WORKSPACE_GATES),
                             ("ds", _layer_ds), ("t2", _layer_t2))


def gru_layer_backward(grad_output, grad_hy, input, hx, weight_ih, weight_hh, output, workspace,
                       lengths, has_bias, reverse, input_grad):
    op_name = "aten::_gru_layer_backward"
    specs = RN.gru_layer_backward.meta(grad_output, grad_hy, input, hx, weight_ih, weight_hh,
                                       output, workspace, lengths, has_bias, reverse,
                                       input_grad)
    grad_output, grad_hy, x, hx, w_ih, w_hh, output, workspace = (
        _compute_copy(op_name, t) for t in (grad_output, grad_hy, input, hx, weight_ih,
                                            weight_hh, output, workspace))
    steps, batch, _ = x._shape
    hidden = hx._shape[1]
    prev = _previous_states(op_name, output, hx, reverse)
    dh = grad_hy if grad_hy is not None else _zeros(op_name, x, (batch, hidden))
    grad_in, grad_hidden = (_empty(x, (steps, batch, 3 * hidden)) for _ in range(2))
    ints = {"hid": hidden} if lengths is None else {"hid": hidden, "t": 0}
    for t in reversed(list(_order(steps, reverse))):
        reads = {"ws": feature_major(workspace, t), "hp": time_step(prev, t), "dh": dh}
        if grad_output is not None:
            reads["go"] = time_step(grad_output, t)
        if lengths is not None:
            reads["len"] = lengths
            ints["t"] = t
        step_in, step_hidden = time_step(grad_in, t), time_step(grad_hidden, t)
        gi, gh = columns(step_in, 3, hidden), columns(step_hidden, 3, hidden)
        carried = _empty(x, (batch, hidden))
        outs = [(gi[0], _layer_grad_r), (gi[1], _layer_grad_z), (gi[2], _layer_grad_n),
                (gh[0], _layer_grad_r), (gh[1], _layer_grad_z), (gh[2], _layer_grad_hn),
                (carried, _layer_grad_h)]
        gate_kernel(op_name, reads, ints, _GRU_LAYER_BACKWARD_TEMPS, outs, x.dtype.name)
        dh = matmul(op_name, step_hidden, w_hh, _empty(x, (batch, hidden)), carried)
    flat_in, flat_hidden = _matrix(grad_in), _matrix(grad_hidden)
    grad_input, grad_w_ih, _ = _layer_weight_grads(op_name, flat_in, x, w_ih, prev, input_grad)
    grad_w_hh = matmul(op_name, _transposed(flat_hidden), _matrix(prev),
                       _empty(x, tuple(w_hh._shape)))
    biases = (sum_dim(flat_in, [0]), sum_dim(flat_hidden, [0])) if has_bias else (None, None)
    values = (grad_input, dh, grad_w_ih, grad_w_hh, *biases)
    return tuple(_finished(op_name, v, spec, input) for v, spec in zip(values, specs))



def kernels() -> dict:
    return {RN.lstm_layer: lstm_layer, RN.lstm_layer_backward: lstm_layer_backward,
            RN.gru_layer: gru_layer, RN.gru_layer_backward: gru_layer_backward}
