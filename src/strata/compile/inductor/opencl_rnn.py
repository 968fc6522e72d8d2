"""The OpenCL device's fused recurrent cells (ops/rnn.py: one LSTM or GRU step, forward and
backward) with the CPU device's arithmetic (backends/cpu/rnn.py), and the gate kernels the
whole layers (opencl_rnn_layers.py) share with them.

A cell's gate math is one loop-IR kernel with one work-item per (batch row, hidden unit): it
reads its gates' columns, keeps the activations in registers and writes every output (the
workspace's gate columns, the new states). Half dtypes compute in float and round the stores.
"""

from functools import partial

from ..._tensor import make_tensor
from ...core.shape import contiguous_strides
from ...ops import rnn as RN
from .ir import InputBuffer, Kernel, Pointwise, ops
from .oclprinter import print_kernel
from .opencl_pointwise import (
    kernel_name,
    launch,
    new_output,
    runtime_of,
    tensor_names,
    tensor_values,
)
from .opencl_rows import sum_dim


def gate_kernel(op_name, reads, ints, temps, outs, compute):
    """One work-item per element of the (batch, units) outputs: each ``(name, fn)`` of
    ``temps`` is computed in order and kept in registers (later functions read it with
    ``ops.load(name, "0")``), then ``out[b, j] = fn(B, (b, j))`` for each ``(out, fn)`` of
    ``outs``. ``reads``: {name: tensor}, ``B`` their ``InputBuffer``s; ``ints``: {name: int}
    passed by value. The functions are part of the kernel's key: module-level ones only."""
    out = outs[0][0]
    if not out.numel():
        return
    rt = runtime_of(out)
    tensors = [*reads.items(), *((f"out{n}", t) for n, (t, _) in enumerate(outs))]
    values = list(ints.values())
    for _, t in tensors:
        values += tensor_values(rt, t)
    values += out._shape

    def names():
        listed = list(ints)
        for name, t in tensors:
            listed += tensor_names(name, t.ndim)
        return listed + ["s0", "s1"]
    key = (op_name, tuple(temps), tuple(f for _, f in outs), compute,
           tuple((n, t.ndim, t.dtype.name) for n, t in reads.items()),
           tuple(t.dtype.name for t, _ in outs), tuple(ints))

    def buf(name, t):
        return InputBuffer(name, t.dtype.name, (None,) * t.ndim,
                           tuple(f"{name}_st{d}" for d in range(t.ndim)), f"{name}_off")

    def build():
        B = {name: buf(name, t) for name, t in reads.items()}
        scalars = [InputBuffer(name, "int64", (), ()) for name in ints]
        ranges = ("s0", "s1")
        nodes = [Pointwise(name, compute, ranges, partial(fn, B)) for name, fn in temps]
        layouts = {}
        for n, (t, fn) in enumerate(outs):
            layouts[f"out{n}"] = buf(f"out{n}", t)
            nodes.append(Pointwise(f"out{n}", t.dtype.name, ranges,
                                   partial(_stored, fn, B, t.dtype.name)))
        kernel = Kernel(kernel_name(op_name), [*B.values(), *scalars], nodes,
                        frozenset(name for name, _ in temps))
        return print_kernel(kernel, ranges, layouts, frozenset(ints))
    launch(op_name, key, build, values, [t for _, t in tensors], out.numel(), rt, names=names)


def _stored(fn, B, dtype, index):
    v = fn(B, index)
    return v if v.dtype == dtype else ops.to_dtype(v, dtype)


# --- reading gates ------------------------------------------------------------------------------

def temp(name):
    return ops.load(name, "0")


def column(B, name, index, k):
    """Gate ``k``'s element (b, j) of a (batch, gates * hidden) tensor."""
    b, j = index
    return B[name].load((b, f"({k} * hid + {j})"))


def _bias(B, name, index, k):
    return B[name].load((f"({k} * hid + {index[1]})",))


def _one(v):
    return ops.constant(1, v.dtype)


def complement(v):
    return ops.sub(_one(v), v)


def _running(B, index):
    """Whether row b is still inside its sequence at time t (Note [Packed sequences])."""
    return ops.index_expr(f"t < {B['len'].load((index[0],))}", "bool")


def masked(B, index, value, other):
    """``value`` where the row is running, else ``other`` (no lengths: ``value``)."""
    return value if "len" not in B else ops.where(_running(B, index), value, other)


def zero_unless_running(B, index, value):
    return masked(B, index, value, ops.constant(0, value.dtype))


# --- LSTM ---------------------------------------------------------------------------------------
# Gate pre-activations: a cell adds (input_gates + hidden_gates) + input_bias + hidden_bias; a
# layer step h W_hh^T + (x W_ih^T + (b_ih + b_hh)), each in the CPU device's order.

def _lstm_pre(B, index, k):
    if "ig" in B:
        v = ops.add(column(B, "ig", index, k), column(B, "hg", index, k))
        if "bi" in B:
            v = ops.add(ops.add(v, _bias(B, "bi", index, k)), _bias(B, "bh", index, k))
        return v
    x = column(B, "xg", index, k)
    if "bi" in B:
        x = ops.add(x, ops.add(_bias(B, "bi", index, k), _bias(B, "bh", index, k)))
    return ops.add(column(B, "hg", index, k), x)


def _lstm_i(B, index):
    return ops.sigmoid(_lstm_pre(B, index, 0))


def _lstm_f(B, index):
    return ops.sigmoid(_lstm_pre(B, index, 1))


def _lstm_g(B, index):
    return ops.tanh(_lstm_pre(B, index, 2))


def _lstm_o(B, index):
    return ops.sigmoid(_lstm_pre(B, index, 3))


def _lstm_c(B, index):
    """c' = f c + i g."""
    c = B["cp"].load(index)
    return ops.add(ops.mul(temp("f"), c), ops.mul(temp("i"), temp("g")))


def lstm_h(B, index):
    """h' = o tanh(c')."""
    return ops.mul(ops.tanh(temp("c")), temp("o"))


LSTM_TEMPS = (("i", _lstm_i), ("f", _lstm_f), ("g", _lstm_g), ("o", _lstm_o), ("c", _lstm_c))


def _gate_out(name):
    def out(B, index):
        return temp(name)
    return out


GATE_OUTS = {name: _gate_out(name)
              for name in ("i", "f", "g", "o", "c", "r", "z", "hn", "n", "gn")}


def columns(t, count, hidden):
    """The ``count`` (batch, hidden) column blocks of a (batch, count * hidden) tensor."""
    return [t[:, k * hidden:(k + 1) * hidden] for k in range(count)]


def strided_view(t, shape, strides, offset=0):
    """A strided view of ``t``'s memory (the layers' time steps and their transposes) made
    directly: these views only feed this file's kernels."""
    return make_tensor(t._storage, t._offset + offset, shape, strides, t.dtype, t.device,
                       t._keyset)


def time_step(t, index):
    """Time step ``index`` of a (T, ...) contiguous tensor, as a view of its 2-d block."""
    shape = tuple(t._shape[1:])
    return strided_view(t, shape, contiguous_strides(shape), index * t._get_strides()[0])


def feature_major(t, index):
    """Step ``index`` of a (T, features, batch) workspace as a (batch, features) view."""
    features, batch = t._shape[1:]
    return strided_view(t, (batch, features), (1, batch), index * features * batch)


def fused_lstm_cell(input_gates, hidden_gates, cx, input_bias=None, hidden_bias=None):
    specs = RN.fused_lstm_cell.meta(input_gates, hidden_gates, cx, input_bias, hidden_bias)
    hy, cy, workspace = (new_output(s, cx) for s in specs)
    hidden = cx._shape[1]
    reads = {"ig": input_gates, "hg": hidden_gates, "cp": cx}
    if input_bias is not None:
        reads.update(bi=input_bias, bh=hidden_bias)
    outs = [(w, GATE_OUTS[n]) for w, n in zip(columns(workspace, 4, hidden), "ifgo")]
    outs += [(cy, GATE_OUTS["c"]), (hy, lstm_h)]
    gate_kernel("aten::_thnn_fused_lstm_cell", reads, {"hid": hidden}, LSTM_TEMPS, outs,
                specs[0].dtype.name)
    return hy, cy, workspace


# The LSTM gates' gradients (backends/cpu/rnn.py's order): with dh the gradient of h' and dc
# that of c', tc = tanh(c'): d o = dh (tc o)(1 - o); dc' = dh (o (1 - tc^2)) + dc;
# d i = dc' (g i)(1 - i); d f = dc' (c f)(1 - f); d g = dc' (i (1 - g^2)); d c = dc' f.

def _workspace_gate(k):
    def gate(B, index):
        return column(B, "ws", index, k)
    return gate


# gate k of a workspace read as (batch, gates * hidden): made once, a function is part of a key
WORKSPACE_GATES = tuple(_workspace_gate(k) for k in range(5))
_WS_TEMPS = tuple((name, WORKSPACE_GATES[k]) for k, name in enumerate("ifgo"))


def _lstm_tc(B, index):
    return ops.tanh(B["cy"].load(index))


def _lstm_dh(B, index):
    """The gradient reaching h': ``dh``, plus the layer output's ``go`` at this step when
    given (0 where a cell's grad_hy is absent)."""
    if "dh" not in B:
        return ops.constant(0, temp("o").dtype)
    dh = B["dh"].load(index)
    return ops.add(dh, B["go"].load(index)) if "go" in B else dh


def _lstm_dc(B, index):
    """dc' = dh (o (1 - tc^2)) + dc."""
    o, tc = temp("o"), temp("tc")
    through_h = ops.mul(temp("dhs"), ops.mul(o, complement(ops.mul(tc, tc))))
    return ops.add(through_h, B["dc"].load(index)) if "dc" in B else through_h


def _lstm_grad_i(B, index):
    i = temp("i")
    return zero_unless_running(B, index, ops.mul(temp("dcs"), ops.mul(ops.mul(temp("g"), i),
                                                                       complement(i))))


def _lstm_grad_f(B, index):
    f = temp("f")
    return zero_unless_running(B, index, ops.mul(temp("dcs"), ops.mul(
        ops.mul(B["cp"].load(index), f), complement(f))))


def _lstm_grad_g(B, index):
    g = temp("g")
    return zero_unless_running(B, index, ops.mul(temp("dcs"), ops.mul(
        temp("i"), complement(ops.mul(g, g)))))


def _lstm_grad_o(B, index):
    o = temp("o")
    return zero_unless_running(B, index, ops.mul(temp("dhs"), ops.mul(
        ops.mul(temp("tc"), o), complement(o))))


def lstm_grad_c(B, index):
    """d c = dc' f; a masked step passes dc through."""
    dc = ops.mul(temp("dcs"), temp("f"))
    return dc if "len" not in B else ops.where(_running(B, index), dc, B["dc"].load(index))


def kept_gradient(B, index):
    """What a masked row passes back to h unchanged: its step gradient (0 where running):
    ``ds`` where a projection made the gates' ``dh`` from it, else their own."""
    g = B["ds"].load(index) if "ds" in B else temp("dhs")
    return ops.where(_running(B, index), ops.constant(0, g.dtype), g)


def projected_grad(B, index):
    """A projected layer's step gradient of h_t, 0 past the row's length."""
    return zero_unless_running(B, index, B["ds"].load(index))


LSTM_BACKWARD_TEMPS = (*_WS_TEMPS, ("tc", _lstm_tc), ("dhs", _lstm_dh), ("dcs", _lstm_dc))
LSTM_GRAD_GATES = (_lstm_grad_i, _lstm_grad_f, _lstm_grad_g, _lstm_grad_o)


def fused_lstm_cell_backward(grad_hy, grad_cy, cx, cy, workspace, has_bias):
    specs = RN.fused_lstm_cell_backward.meta(grad_hy, grad_cy, cx, cy, workspace, has_bias)
    grad_gates, grad_cx = new_output(specs[0], cx), new_output(specs[1], cx)
    hidden = cx._shape[1]
    reads = {"ws": workspace, "cy": cy, "cp": cx}
    if grad_hy is not None:
        reads["dh"] = grad_hy
    if grad_cy is not None:
        reads["dc"] = grad_cy
    outs = list(zip(columns(grad_gates, 4, hidden), LSTM_GRAD_GATES))
    outs.append((grad_cx, lstm_grad_c))
    gate_kernel("aten::_thnn_fused_lstm_cell_backward_impl", reads, {"hid": hidden},
                LSTM_BACKWARD_TEMPS, outs, specs[0].dtype.name)
    return grad_gates, grad_cx, _bias_grad(grad_gates, has_bias, specs[2], cx)


def _bias_grad(grad_gates, has_bias, spec, like):
    return sum_dim(grad_gates, [0]) if has_bias else new_output(spec, like)


# --- GRU ----------------------------------------------------------------------------------------
# A cell's workspace is (batch, 5 * hidden) [r, z, n, h, hn], a layer's (T, 4 * hidden, batch)
# [r, z, hn, n] (ops/rnn.py). Both add the biases as the CPU device does: r and z from
# (input_gates + b_ih) + (hidden_gates + b_hh), n = tanh(r hn + (input_gates_n + b_ih_n)) with
# hn = hidden_gates_n + b_hh_n; h' = (h - n) z + n.

def _gru_input(B, index, k):
    x = column(B, "ig", index, k)
    return ops.add(x, _bias(B, "bi", index, k)) if "bi" in B else x


def _gru_hidden(B, index, k):
    h = column(B, "hg", index, k)
    return ops.add(h, _bias(B, "bh", index, k)) if "bh" in B else h


def _gru_r(B, index):
    return ops.sigmoid(ops.add(_gru_input(B, index, 0), _gru_hidden(B, index, 0)))


def _gru_z(B, index):
    return ops.sigmoid(ops.add(_gru_input(B, index, 1), _gru_hidden(B, index, 1)))


def _gru_hn(B, index):
    return _gru_hidden(B, index, 2)


def _gru_n(B, index):
    return ops.tanh(ops.add(ops.mul(temp("r"), temp("hn")), _gru_input(B, index, 2)))


def gru_h(B, index):
    """h' = (h - n) z + n, or h past the row's length."""
    h, n = B["hp"].load(index), temp("n")
    return masked(B, index, ops.add(ops.mul(ops.sub(h, n), temp("z")), n), h)


def _previous_h(B, index):
    return B["hp"].load(index)


GRU_TEMPS = (("r", _gru_r), ("z", _gru_z), ("hn", _gru_hn), ("n", _gru_n))


def fused_gru_cell(input_gates, hidden_gates, hx, input_bias=None, hidden_bias=None):
    specs = RN.fused_gru_cell.meta(input_gates, hidden_gates, hx, input_bias, hidden_bias)
    hy, workspace = new_output(specs[0], hx), new_output(specs[1], hx)
    hidden = hx._shape[1]
    reads = {"ig": input_gates, "hg": hidden_gates, "hp": hx}
    if input_bias is not None:
        reads.update(bi=input_bias, bh=hidden_bias)
    r, z, n, h, hn = columns(workspace, 5, hidden)
    outs = [(r, GATE_OUTS["r"]), (z, GATE_OUTS["z"]), (n, GATE_OUTS["n"]), (h, _previous_h),
            (hn, GATE_OUTS["hn"]), (hy, gru_h)]
    gate_kernel("aten::_thnn_fused_gru_cell", reads, {"hid": hidden}, GRU_TEMPS, outs,
                specs[0].dtype.name)
    return hy, workspace


# The cell's backward, in backends/cpu/rnn.py's order (g = grad_hy):
# d z = (((h - n) g) z)(1 - z); d n' = ((1 - z) g)(1 - n^2) (n' = x_n + r hn);
# d r = ((d n' hn) r)(1 - r); d hn = d n' r; d h = g z.

def _cell_grad_n(B, index):
    z, n = temp("z"), temp("n")
    return ops.mul(ops.mul(complement(z), B["dh"].load(index)), complement(ops.mul(n, n)))


def _cell_grad_r(B, index):
    r = temp("r")
    return ops.mul(ops.mul(ops.mul(temp("gn"), temp("hn")), r), complement(r))


def _cell_grad_z(B, index):
    z = temp("z")
    return ops.mul(ops.mul(ops.mul(ops.sub(temp("h"), temp("n")), B["dh"].load(index)), z),
                   complement(z))


def _cell_grad_hn(B, index):
    return ops.mul(temp("gn"), temp("r"))


def _cell_grad_h(B, index):
    return ops.mul(B["dh"].load(index), temp("z"))


_GRU_CELL_BACKWARD_TEMPS = (*zip(("r", "z", "n", "h", "hn"), WORKSPACE_GATES),
                            ("gn", _cell_grad_n))


def fused_gru_cell_backward(grad_hy, workspace, has_bias):
    specs = RN.fused_gru_cell_backward.meta(grad_hy, workspace, has_bias)
    grad_input, grad_hidden, grad_hx = (new_output(s, grad_hy) for s in specs[:3])
    hidden = grad_hy._shape[1]
    gi, gh = columns(grad_input, 3, hidden), columns(grad_hidden, 3, hidden)
    outs = [(gi[0], _cell_grad_r), (gi[1], _cell_grad_z), (gi[2], GATE_OUTS["gn"]),
            (gh[0], _cell_grad_r), (gh[1], _cell_grad_z), (gh[2], _cell_grad_hn),
            (grad_hx, _cell_grad_h)]
    gate_kernel("aten::_thnn_fused_gru_cell_backward", {"ws": workspace, "dh": grad_hy},
                {"hid": hidden}, _GRU_CELL_BACKWARD_TEMPS, outs, specs[0].dtype.name)
    return (grad_input, grad_hidden, grad_hx, _bias_grad(grad_input, has_bias, specs[3], grad_hy),
            _bias_grad(grad_hidden, has_bias, specs[4], grad_hy))


def kernels() -> dict:
    return {RN.fused_lstm_cell: fused_lstm_cell,
            RN.fused_lstm_cell_backward: fused_lstm_cell_backward,
            RN.fused_gru_cell: fused_gru_cell, RN.fused_gru_cell_backward: fused_gru_cell_backward}
