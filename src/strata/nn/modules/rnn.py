"""Recurrent layers: RNN, LSTM, GRU and their cells (``torch/nn/modules/rnn.py``).

An LSTM or GRU layer (one direction) is one op with one autograd node (Note [Whole-layer RNN
ops] in ops/rnn.py); plain RNNs are written with strata ops, which autograd differentiates
through the time loop.
Parameter names, shapes, gate order (LSTM: i, f, g, o; GRU: r, z, n) and the
U(-1/sqrt(hidden), 1/sqrt(hidden)) initialisation are PyTorch's.
"""

import math

from ... import creation
from ...ops.rnn import fused_gru_cell, fused_lstm_cell, gru_layer, lstm_layer
from ...ops.shape import cat, stack
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module

_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}


class RNNBase(Module):
    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True, batch_first=False,
                 dropout=0.0, bidirectional=False, proj_size=0, device=None, dtype=None):
        super().__init__()
        if not 0 <= dropout <= 1 or isinstance(dropout, bool):
            raise ValueError("dropout should be a number in range [0, 1] representing the "
                             "probability of an element being zeroed")
        if hidden_size <= 0:
            raise ValueError("hidden_size must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable "
                             "projections")
        if proj_size >= hidden_size and proj_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if proj_size and mode != "LSTM":
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        self.mode = mode
        self.input_size, self.hidden_size = input_size, hidden_size
        self.num_layers, self.bias = num_layers, bias
        self.batch_first, self.dropout = batch_first, float(dropout)
        self.bidirectional, self.proj_size = bidirectional, proj_size
        gate_size = _GATES[mode] * hidden_size
        real_hidden = proj_size if proj_size > 0 else hidden_size
        self._flat_weights_names = []
        for layer in range(num_layers):
            for direction in range(2 if bidirectional else 1):
                layer_input = input_size if layer == 0 else real_hidden * (2 if bidirectional
                                                                           else 1)
                suffix = "_reverse" if direction == 1 else ""
                shapes = [(f"weight_ih_l{layer}{suffix}", (gate_size, layer_input)),
                          (f"weight_hh_l{layer}{suffix}", (gate_size, real_hidden))]
                if bias:
                    shapes += [(f"bias_ih_l{layer}{suffix}", (gate_size,)),
                               (f"bias_hh_l{layer}{suffix}", (gate_size,))]
                if proj_size > 0:
                    shapes.append((f"weight_hr_l{layer}{suffix}", (proj_size, hidden_size)))
                for name, shape in shapes:
                    setattr(self, name, Parameter(creation.empty(shape, device=device,
                                                                 dtype=dtype)))
                    self._flat_weights_names.append(name)
        self.reset_parameters()

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def flatten_parameters(self):
        """cuDNN packs weights into one buffer; strata's kernels need no packing."""

    @property
    def _flat_weights(self):
        return [getattr(self, n) for n in self._flat_weights_names]

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size != 0:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        return s

    # --- the recurrence ---------------------------------------------------------------------------
    def _weights(self, layer, direction):
        suffix = "_reverse" if direction == 1 else ""
        get = lambda n: getattr(self, f"{n}_l{layer}{suffix}", None)  # noqa: E731
        return (get("weight_ih"), get("weight_hh"), get("bias_ih"), get("bias_hh"),
                get("weight_hr"))

    def _layer(self, x, h, c, w_ih, w_hh, b_ih, b_hh, w_hr, reverse, lengths):
        """One layer and direction over the sequence ``x`` (T, B, features); returns the
        output (T, B, hidden) and the last (h, c). LSTM and GRU layers are one op each (Note
        [Whole-layer RNN ops] in ops/rnn.py); plain RNNs loop here over time steps."""
        if self.mode == "LSTM":
            out, h, c, _, _ = lstm_layer(x, h, c, w_ih, w_hh, b_ih, b_hh, w_hr, lengths, reverse)
            return out, h, c
        if self.mode == "GRU":
            out, h, _ = gru_layer(x, h, w_ih, w_hh, b_ih, b_hh, lengths, reverse)
            return out, h, None
        return self._plain_layer(x, h, w_ih, w_hh, b_ih, b_hh, reverse, lengths)

    def _plain_layer(self, x, h, w_ih, w_hh, b_ih, b_hh, reverse, lengths):
        """Note [Per-step RNN inputs]: each step projects its own input slice of ``unbind``.
        Slicing step t out of the whole sequence tensor would make each step's backward write its
        gradient into a zero tensor of the whole sequence's size: quadratic in its length."""
        inputs = x.unbind(0)
        running = None
        if lengths is not None:   # Note [Packed sequences]
            steps = creation.arange(len(inputs), device=x.device).unsqueeze(1)
            running = (steps < lengths).unsqueeze(-1)   # (T, B, 1)
        outputs = [None] * len(inputs)
        for t in (range(len(inputs) - 1, -1, -1) if reverse else range(len(inputs))):
            # PyTorch's SimpleCell (RNN.cpp): linear_hh(h) + linear_ih(x), biases inside the
            # linears (so under autocast the step, and h, are in the autocast dtype)
            pre = F.linear(h, w_hh, b_hh) + F.linear(inputs[t], w_ih, b_ih)
            h_t = pre.tanh() if self.mode == "RNN_TANH" else pre.relu()
            h = h_t if running is None else h_t.where(running[t], h)
            outputs[t] = h
        return stack(outputs, 0), h, None

    # Note [Packed sequences]: a PackedSequence runs as its padded batch (original order) with
    # each sequence's steps past its length masked: there h (and c) keep their value, so the
    # forward direction ends at the sequence's last step and the reverse one starts there, as
    # PyTorch's packed kernels do. The output is packed again like the input.
    def forward(self, input, hx=None):
        from ..utils.rnn import PackedSequence, pack_padded_sequence, pad_packed_sequence
        if isinstance(input, PackedSequence):
            padded, lengths = pad_packed_sequence(input)
            output, hidden = self._forward_padded(padded, hx, lengths.to(padded.device),
                                                  batch_first=False)
            packed = pack_padded_sequence(output, lengths, enforce_sorted=False)
            return PackedSequence(packed.data, input.batch_sizes, input.sorted_indices,
                                  input.unsorted_indices), hidden
        return self._forward_padded(input, hx, None, self.batch_first)

    def _forward_padded(self, input, hx, lengths, batch_first):
        expected = 3
        batched = input.dim() == expected
        if input.dim() not in (2, 3):
            raise ValueError(f"{type(self).__name__}: Expected input to be 2D or 3D, got "
                             f"{input.dim()}D tensor instead")
        weight = self._flat_weights[0]
        if input.dtype is not weight.dtype:
            raise ValueError(f"RNN input dtype ({input.dtype}) does not match weight dtype "
                             f"({weight.dtype}). Convert input: input.to({weight.dtype}), or "
                             f"convert model: model.to({input.dtype})")
        if input.shape[-1] != self.input_size:
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected "
                               f"{self.input_size}, got {input.shape[-1]}")
        x = input if batched else input.unsqueeze(1 if not batch_first else 0)
        if batch_first:
            x = x.transpose(0, 1)
        if x.shape[0] == 0:
            raise RuntimeError("Expected sequence length to be larger than 0 in RNN")
        batch = x.shape[1]
        num_dirs = 2 if self.bidirectional else 1
        real_hidden = self.proj_size if self.proj_size > 0 else self.hidden_size
        h0, c0 = self._initial_state(hx, batch, num_dirs, real_hidden, x, batched)
        h_n, c_n = [], []
        for layer in range(self.num_layers):
            outs = []
            for direction in range(num_dirs):
                idx = layer * num_dirs + direction
                h, c = h0[idx], (c0[idx] if c0 is not None else None)
                out, h, c = self._layer(x, h, c, *self._weights(layer, direction),
                                        reverse=direction == 1, lengths=lengths)
                outs.append(out)
                h_n.append(h)
                if c is not None:
                    c_n.append(c)
            x = outs[0] if num_dirs == 1 else cat(outs, -1)
            if self.dropout and self.training and layer < self.num_layers - 1:
                x = F.dropout(x, self.dropout, True)
        output = x
        if batch_first:
            output = output.transpose(0, 1)
        h_n = stack(h_n, 0)
        c_n = stack(c_n, 0) if c_n else None
        if not batched:
            output = output.squeeze(1 if not batch_first else 0)
            h_n = h_n.squeeze(1)
            c_n = c_n.squeeze(1) if c_n is not None else None
        if self.mode == "LSTM":
            return output, (h_n, c_n)
        return output, h_n

    def _initial_state(self, hx, batch, num_dirs, real_hidden, x, batched):
        layers = self.num_layers * num_dirs
        zeros = lambda size: creation.zeros(layers, batch, size, dtype=x.dtype,  # noqa: E731
                                            device=x.device)
        if hx is None:
            return zeros(real_hidden), (zeros(self.hidden_size) if self.mode == "LSTM" else None)
        if self.mode == "LSTM":
            if not isinstance(hx, tuple) or len(hx) != 2:
                raise RuntimeError("LSTM expects hx to be a tuple (h_0, c_0)")
            h0, c0 = hx
            if not batched:
                h0, c0 = h0.unsqueeze(1), c0.unsqueeze(1)
            self._check_hidden(h0, (layers, batch, real_hidden), "Expected hidden[0] size")
            self._check_hidden(c0, (layers, batch, self.hidden_size), "Expected hidden[1] size")
            return h0, c0
        h0 = hx if batched else hx.unsqueeze(1)
        self._check_hidden(h0, (layers, batch, real_hidden), "Expected hidden size")
        return h0, None

    @staticmethod
    def _check_hidden(h, expected, msg):
        if tuple(h.shape) != expected:
            raise RuntimeError(f"{msg} {expected}, got {list(h.shape)}")


class RNN(RNNBase):
    def __init__(self, *args, nonlinearity="tanh", **kwargs):
        if "nonlinearity" in kwargs:
            nonlinearity = kwargs.pop("nonlinearity")
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or "
                             "'relu'.")
        self.nonlinearity = nonlinearity
        super().__init__("RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU", *args, **kwargs)


class LSTM(RNNBase):
    def __init__(self, *args, **kwargs):
        super().__init__("LSTM", *args, **kwargs)


class GRU(RNNBase):
    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:   # even 0, as PyTorch's GRU
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)


class RNNCellBase(Module):
    _mode = "RNN_TANH"

    def __init__(self, input_size, hidden_size, bias=True, num_chunks=1, device=None,
                 dtype=None):
        super().__init__()
        self.input_size, self.hidden_size, self.bias = input_size, hidden_size, bias
        self.weight_ih = Parameter(creation.empty((num_chunks * hidden_size, input_size),
                                                  device=device, dtype=dtype))
        self.weight_hh = Parameter(creation.empty((num_chunks * hidden_size, hidden_size),
                                                  device=device, dtype=dtype))
        if bias:
            self.bias_ih = Parameter(creation.empty(num_chunks * hidden_size, device=device,
                                                    dtype=dtype))
            self.bias_hh = Parameter(creation.empty(num_chunks * hidden_size, device=device,
                                                    dtype=dtype))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        stdv = 1.0 / math.sqrt(hidden_size) if hidden_size > 0 else 0
        for w in self.parameters():
            init.uniform_(w, -stdv, stdv)

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        return s

    def _zeros(self, input):
        batch = (input.shape[0],) if input.dim() == 2 else ()
        return creation.zeros(*batch, self.hidden_size, dtype=input.dtype, device=input.device)


class RNNCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None,
                 dtype=None):
        super().__init__(input_size, hidden_size, bias, 1, device, dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        hx = self._zeros(input) if hx is None else hx
        pre = F.linear(input, self.weight_ih, self.bias_ih) + \
            F.linear(hx, self.weight_hh, self.bias_hh)
        return pre.tanh() if self.nonlinearity == "tanh" else pre.relu()


class LSTMCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, 4, device, dtype)

    def forward(self, input, hx=None):
        if hx is None:
            hx = (self._zeros(input), self._zeros(input))
        h, c = hx
        if input.dim() == 1:   # unbatched: the fused cell takes (batch, features)
            h, c = self(input.unsqueeze(0), (h.unsqueeze(0), c.unsqueeze(0)))
            return h.squeeze(0), c.squeeze(0)
        input_gates, hidden_gates = F.linear(input, self.weight_ih), F.linear(h, self.weight_hh)
        if input_gates.dtype is not c.dtype:   # Note [Cells under autocast]
            return _mixed_precision_lstm_cell(input, h, c, self)
        h, c, _ = fused_lstm_cell(input_gates, hidden_gates, c, self.bias_ih, self.bias_hh)
        return h, c


class GRUCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, 3, device, dtype)

    def forward(self, input, hx=None):
        hx = self._zeros(input) if hx is None else hx
        if input.dim() == 1:   # unbatched: the fused cell takes (batch, features)
            return self(input.unsqueeze(0), hx.unsqueeze(0)).squeeze(0)
        input_gates, hidden_gates = F.linear(input, self.weight_ih), F.linear(hx, self.weight_hh)
        if input_gates.dtype is not hx.dtype:   # Note [Cells under autocast]
            return _mixed_precision_gru_cell(input, hx, self)
        return fused_gru_cell(input_gates, hidden_gates, hx, self.bias_ih, self.bias_hh)[0]


# Note [Cells under autocast]: the linears return the autocast dtype while the state stays
# float32; the fused cells need one dtype. PyTorch's CPU cells (RNN.cpp LSTMCell/GRUCell) are
# unfused, so its gates are computed in the autocast dtype and the state update promotes back to
# float32: these two functions are those cells, op for op.
def _mixed_precision_lstm_cell(input, hx, cx, cell):
    gates = F.linear(hx, cell.weight_hh, cell.bias_hh) + \
        F.linear(input, cell.weight_ih, cell.bias_ih)
    in_gate, forget_gate, cell_gate, out_gate = gates.chunk(4, 1)
    cy = forget_gate.sigmoid() * cx + in_gate.sigmoid() * cell_gate.tanh()
    return out_gate.sigmoid() * cy.tanh(), cy


def _mixed_precision_gru_cell(input, hx, cell):
    input_gates = F.linear(input, cell.weight_ih, cell.bias_ih).chunk(3, 1)
    hidden_gates = F.linear(hx, cell.weight_hh, cell.bias_hh).chunk(3, 1)
    reset_gate = (hidden_gates[0] + input_gates[0]).sigmoid()
    update_gate = (hidden_gates[1] + input_gates[1]).sigmoid()
    new_gate = (input_gates[2] + hidden_gates[2] * reset_gate).tanh()
    return (hx - new_gate) * update_gate + new_gate
