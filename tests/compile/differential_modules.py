"""The differential suite's modules (tests/compile/test_differential.py runs them)."""

import os
import sys

from differential_cases import case


# --- modules --------------------------------------------------------------------------------------
def module_case(counted=True, grad=True):
    return case(counted=counted, grad=grad)


@module_case()
def linear(torch):
    return torch.nn.Linear(4, 3), [(2, 4)]


@module_case()
def mlp_sequential(torch):
    nn = torch.nn
    return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2), nn.Tanh()), [(3, 4)]


class _Tower:
    @staticmethod
    def build(torch):
        nn = torch.nn

        class Tower(nn.Module):
            def __init__(self):
                super().__init__()
                self.blocks = nn.ModuleList([nn.Linear(4, 4) for _ in range(3)])
                self.heads = nn.ModuleDict({"a": nn.Linear(4, 2), "b": nn.Linear(4, 2)})

            def forward(self, x):
                for i, block in enumerate(self.blocks):
                    x = torch.relu(block(x)) + i
                return self.heads["a"](x) + self.heads["b"](x)
        return Tower()


@module_case()
def modulelist_loop(torch):
    return _Tower.build(torch), [(2, 4)]


@module_case()
def cnn(torch):
    nn = torch.nn
    return nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Flatten(), nn.Linear(4 * 4 * 4, 3)), [(2, 1, 8, 8)]


@module_case()
def batchnorm_train(torch):
    return torch.nn.BatchNorm1d(4), [(5, 4)]


@module_case()
def layernorm(torch):
    return torch.nn.LayerNorm(6), [(2, 6)]


@module_case()
def embedding(torch):
    class Emb(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = torch.nn.Embedding(10, 4)

        def forward(self, x):
            return self.emb(torch.arange(3)) * x
    return Emb(), [(3, 4)]


@module_case(counted=False)   # Dynamo graph-breaks on RNN modules on purpose (allow_rnn)
def lstm(torch):
    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lstm = torch.nn.LSTM(4, 5, batch_first=True)

        def forward(self, x):
            out, (h, c) = self.lstm(x)
            return out.sum() + h.sum() + c.sum()
    return Net(), [(2, 3, 4)]


@module_case(counted=False)   # as lstm
def gru(torch):
    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.gru = torch.nn.GRU(3, 4)

        def forward(self, x):
            return self.gru(x)[0]
    return Net(), [(5, 2, 3)]


@module_case()
def transformer_encoder_layer(torch):
    layer = torch.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True)
    return layer, [(2, 5, 8)]


@module_case()
def multihead_attention(torch):
    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.attn = torch.nn.MultiheadAttention(8, 2, batch_first=True)

        def forward(self, x):
            return self.attn(x, x, x, need_weights=False)[0]
    return Net(), [(2, 3, 8)]


@module_case()
def forward_hooks(torch):
    m = torch.nn.Linear(3, 3)
    m.register_forward_pre_hook(lambda mod, args: (args[0] * 2,))
    m.register_forward_hook(lambda mod, args, out: out + 1)
    return m, [(2, 3)]


@module_case()
def module_attribute_write(torch):
    class Counter(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(2, 2)
            self.last_norm = None

        def forward(self, x):
            y = self.lin(x)
            self.last_norm = y.norm()
            return y
    return Counter(), [(3, 2)]


@module_case()
def buffer_mutation(torch):
    class Running(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("total", torch.zeros(3))

        def forward(self, x):
            self.total.add_(x.detach().sum(0))
            return x * 2 + self.total
    return Running(), [(2, 3)]


@module_case()
def dropout_module(torch):
    return torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.Dropout(0.3)), [(8, 4)]


@module_case()
def super_forward(torch):
    class Base(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(3, 3)

        def forward(self, x):
            return self.lin(x)

    class Child(Base):
        def forward(self, x):
            return super().forward(x) * 2
    return Child(), [(2, 3)]


@module_case()
def module_kwargs(torch):
    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(3, 3)

        def forward(self, x, *, residual=True, scale=1.0):
            y = self.lin(x) * scale
            return y + x if residual else y
    return Net(), [(2, 3)]


@module_case()
def gelu_mlp_block(torch):
    nn = torch.nn

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln = nn.LayerNorm(8)
            self.fc1, self.fc2 = nn.Linear(8, 16), nn.Linear(16, 8)

        def forward(self, x):
            return x + self.fc2(nn.functional.gelu(self.fc1(self.ln(x))))
    return Block(), [(2, 4, 8)]


@module_case(counted=False)   # the example imports strata itself
def example_mlp_digits(torch):
    return _example("mlp_digits").MLP(), [(4, 64)]


@module_case(counted=False)   # the example imports strata itself
def example_cnn_digits(torch):
    return _example("cnn_digits").CNN(), [(2, 1, 8, 8)]


@module_case(counted=False)   # the example imports strata itself
def example_char_transformer(torch):
    model = _example("char_transformer").CharTransformer(20, context=8, d_model=16, nhead=2,
                                                         layers=1, dropout=0.0)
    return model, [("int", (2, 8), 20)]


def _example(name):
    root = os.path.join(os.path.dirname(__file__), "..", "..", "examples")
    if root not in sys.path:
        sys.path.insert(0, root)
    return __import__(name)
