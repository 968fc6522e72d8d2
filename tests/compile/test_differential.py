"""Compiled vs eager on >= 60 functions and modules: outputs and gradients must match with the
``eager`` and ``aot_eager`` backends, and graph/break counts match Dynamo's on the same code.

Each case is written once against a ``torch`` namespace argument, so the very same source runs
on strata (compiled and eager) and on PyTorch (for ``torch._dynamo.explain``'s counts).
"""

import os
import sys

import numpy as np
import pytest

import strata
from strata._dynamo import explain

CASES = {}
COUNTED = set()   # cases whose graph/break counts are compared with Dynamo's


def case(counted=True, grad=True, skips=False):
    """``skips``: capture gives up on the whole frame (runs it eagerly), as Dynamo does."""
    def register(build):
        build.grad = grad
        build.skips = skips
        CASES[build.__name__] = build
        if counted:
            COUNTED.add(build.__name__)
        return build
    return register


# --- functions ------------------------------------------------------------------------------------
@case()
def arith(torch):
    return (lambda x, y: x * 2 + y / 3 - x * y), [(3, 4), (3, 4)]


@case()
def unary_math(torch):
    return (lambda x: torch.exp(x).log1p() + torch.tanh(x) * torch.sigmoid(x)), [(5,)]


@case()
def reductions(torch):
    def f(x):
        return x.sum(0) + x.mean(dim=0) * x.amax(0), x.var(), x.max(dim=1).values
    return f, [(3, 4)]


@case()
def matmul_bias(torch):
    return (lambda x, w, b: x @ w + b), [(2, 3), (3, 4), (4,)]


@case()
def softmaxes(torch):
    F = torch.nn.functional
    return (lambda x: F.softmax(x, dim=-1) + F.log_softmax(x, dim=0)), [(3, 4)]


@case()
def views(torch):
    def f(x):
        y = x.view(4, 3).t().contiguous()
        return y.reshape(-1)[2:8], x.permute(1, 0).unsqueeze(0).squeeze(0), x.transpose(0, 1)
    return f, [(3, 4)]


@case()
def indexing(torch):
    return (lambda x: x[:, 1:] * 2 + x[..., -1:] - x[0, 1:]), [(3, 4)]


@case()
def cat_stack(torch):
    return (lambda x, y: torch.cat([x, y], dim=0).sum(1) + torch.stack((x, y)).mean((0, 2))
            .repeat(2)), [(2, 3), (2, 3)]


@case()
def split_chunk(torch):
    def f(x):
        a, b = x.split(2, dim=1)
        c = x.chunk(2, dim=0)
        return a * b, c[0] + c[1]
    return f, [(4, 4)]


@case()
def where_clamp(torch):
    return (lambda x: torch.where(x > 0, x, x * 0.1).clamp(-0.5, 0.5)), [(6,)]


@case()
def broadcasting(torch):
    return (lambda x, y: (x + y) * (x - y).abs()), [(3, 1), (1, 4)]


@case(grad=False)
def inplace_on_input(torch):
    def f(x):
        x.add_(1)
        x.mul_(2)
        return x.sum()
    return f, [(3,)]


@case(grad=False)
def inplace_on_view(torch):
    def f(x):
        v = x[0]
        v.fill_(3.0)
        x[1] = 7.0
        return x * 1
    return f, [(2, 3)]


@case()
def inplace_on_intermediate(torch):
    def f(x):
        y = x * 2
        y.mul_(3)
        y += 1
        return y
    return f, [(4,)]


@case()
def closure(torch):
    scale = 3.0

    def inner(y):
        return y * scale

    return (lambda x: inner(x) + inner(x * 2)), [(3,)]


@case()
def nested_def_closure(torch):
    def f(x):
        k = 2

        def g(y):
            return y ** k
        return g(x) + g(x + 1)
    return f, [(3,)]


@case()
def nonlocal_counter(torch):
    def f(x):
        total = x * 0

        def add(y):
            nonlocal total
            total = total + y
        add(x)
        add(x * 2)
        return total
    return f, [(3,)]


@case()
def kwargs_call(torch):
    def g(x, *, alpha=1.0, beta=2.0):
        return x * alpha + beta

    return (lambda x: g(x, beta=0.5) + g(x, alpha=3.0)), [(3,)]


@case()
def star_args(torch):
    def g(*args, **kwargs):
        out = args[0]
        for a in args[1:]:
            out = out + a
        return out * kwargs.get("scale", 1.0)

    return (lambda x, y: g(x, y, x, scale=2.0)), [(3,), (3,)]


@case()
def default_args(torch):
    def f(x, n=3, bias=None):
        return x * n if bias is None else x + bias
    return f, [(3,)]


@case()
def list_comprehension(torch):
    return (lambda x: sum([x * i for i in range(4)])), [(3,)]


@case()
def dict_output(torch):
    return (lambda x: {"double": x * 2, "square": x * x, "n": 3}), [(3,)]


@case()
def namedtuple_and_size(torch):
    import collections
    pair = collections.namedtuple("Pair", "a b")

    def f(x):
        p = pair(x * 2, b=x + 1)
        return p.a + p.b, x.view(torch.Size([x.shape[0], 1]))
    return f, [(3,)]


@case()
def tuple_unpack(torch):
    def f(x, y):
        a, (b, c) = x, (y, x + y)
        *rest, last = [a, b, c]
        return last * rest[0]
    return f, [(3,), (3,)]


@case()
def loop_range(torch):
    def f(x):
        for i in range(3):
            x = x * 0.5 + i
        return x
    return f, [(3,)]


@case()
def loop_list_of_tensors(torch):
    def f(xs):
        total = 0
        for t in xs:
            total = total + t.sum()
        return total
    return f, [[(3,), (2,), (4,)]]


@case()
def enumerate_zip(torch):
    def f(x, y):
        out = []
        for i, (a, b) in enumerate(zip([x, y], [y, x])):
            out.append(a * i + b)
        return out
    return f, [(3,), (3,)]


@case()
def early_return(torch):
    def f(x, flag=True):
        if flag:
            return x + 1
        return x - 1
    return f, [(3,)]


@case()
def try_except(torch):
    def f(x):
        try:
            y = x * 2
        except RuntimeError:
            y = x
        return y + 1
    return f, [(3,)]


@case()
def break_print(torch):
    def f(x):
        y = x.sin()
        print("between graphs", end="\r")
        return y.cos()
    return f, [(3,)]


@case()
def break_item(torch):
    def f(x):
        n = x.sum().item()
        return x * n
    return f, [(3,)]


@case()
def break_if_tensor(torch):
    def f(x):
        y = x * 2
        if y.sum() > 0:
            return y + 1
        return y - 1
    return f, [(3,)]


@case()
def break_tolist(torch):
    def f(x):
        values = x.tolist()
        return x * len(values)
    return f, [(3,)]


@case(skips=True)
def break_in_loop(torch):
    def f(x):
        for i in range(3):
            x = x + 1
            if x.sum() > 100:
                break
        return x
    return f, [(3,)]


@case()
def break_in_no_grad_block(torch):
    def f(x):
        a = x * 3
        with torch.no_grad():
            y = x * 2
            print("inside no_grad", end="\r")
            z = y + 1
        return a + z, a * z.requires_grad
    return f, [(3,)]


@case()
def break_in_callee(torch):
    def g(y):
        y = y * 3
        print("in callee", end="\r")
        return y + 1

    return (lambda x: g(x * 2) - 1), [(3,)]


GLOBAL_SCALE = 2.5


@case()
def global_read(torch):
    def f(x):
        return x * GLOBAL_SCALE
    return f, [(3,)]


@case()
def list_append_side_effect(torch):
    log = []

    def f(x):
        log.append(x.sum())
        return x * 2, len(log) > 0
    return f, [(3,)]


@case()
def no_grad_block(torch):
    def f(x):
        with torch.no_grad():
            y = x * 2
        return x * y
    return f, [(3,)]


@case()
def enable_grad_block(torch):
    def f(x):
        with torch.no_grad():
            with torch.enable_grad():
                y = x * 3
        return y
    return f, [(3,)]


@case()
def autocast_block(torch):
    lin = torch.nn.Linear(4, 4)

    def f(x):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            y = lin(x)
        return y.float() * 2
    return f, [(2, 4)]


@case()
def custom_autograd_function(torch):
    class Square(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return grad * 2 * x

    return (lambda x: Square.apply(x) + 1), [(3,)]


@case()
def builtins_symbolic(torch):
    def f(x, ys):
        n = len(ys) + min(2, 3) + max([1, 4])
        if isinstance(x, torch.Tensor) and hasattr(x, "shape"):
            n += 1
        return x * n + getattr(x, "T").sum()
    return f, [(3,), [(1,), (1,)]]


@case()
def shape_arith(torch):
    return (lambda x: x.view(x.shape[0] * x.size(1), -1).sum(0) + x.numel()), [(2, 3, 4)]


@case()
def creation_ops(torch):
    return (lambda x: x + torch.zeros(3) + torch.ones_like(x) * torch.arange(3)), [(3,)]


@case()
def comparisons_logic(torch):
    return (lambda x, y: ((x > y) & (x < 2) | ~(y > 0)).float() * x), [(5,), (5,)]


@case()
def string_format(torch):
    def f(x):
        key = f"k{x.dim()}"
        table = {"k1": 2.0, "k2": 3.0}
        return x * table[key]
    return f, [(3,)]


@case()
def method_chain(torch):
    return (lambda x: x.abs().sqrt().neg().exp().sum(-1, keepdim=True)), [(2, 3)]


@case()
def dropout_fn(torch):
    F = torch.nn.functional
    return (lambda x: F.dropout(x, 0.5, training=True)), [(64,)]


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


# --- running --------------------------------------------------------------------------------------
def _inputs(specs, seed, requires_grad):
    rng = np.random.default_rng(seed)
    out = []
    for spec in specs:
        if isinstance(spec, list):
            out.append([_inputs([s], seed + i, requires_grad)[0] for i, s in enumerate(spec)])
        elif spec and spec[0] == "int":
            out.append(strata.from_numpy(rng.integers(0, spec[2], spec[1])))
        else:
            t = strata.from_numpy(rng.standard_normal(spec).astype(np.float32))
            out.append(t.requires_grad_(True) if requires_grad else t)
    return out


def _tensors(value):
    if isinstance(value, strata.Tensor):
        return [value]
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in _tensors(v)]
    return []


def _run(fn, specs, grad, params):
    strata.manual_seed(0)
    args = _inputs(specs, 1, grad)
    out = fn(*args)
    grads = []
    if grad:
        tensors = [t for t in _tensors(out) if t.requires_grad]
        if tensors:
            sum(t.float().sum() for t in tensors).backward()
        leaves = [a for a in _tensors(args) if a.requires_grad] + params
        grads = [None if t.grad is None else t.grad.clone() for t in leaves]
        for p in params:
            p.grad = None
    return out, grads, args


def _assert_same(a, b):
    ta, tb = _tensors(a), _tensors(b)
    assert len(ta) == len(tb)
    for x, y in zip(ta, tb):
        if x is None or y is None:
            assert x is y
            continue
        np.testing.assert_allclose(x.detach().numpy(), y.detach().numpy(), rtol=1e-5, atol=1e-6)


def _check(name, backend):
    build = CASES[name]
    strata._dynamo.reset()
    fn, specs = build(strata)
    params = list(fn.parameters()) if isinstance(fn, strata.nn.Module) else []
    state = {k: v.clone() for k, v in fn.state_dict().items()} if params or \
        isinstance(fn, strata.nn.Module) else None
    eager_out, eager_grads, eager_args = _run(fn, specs, build.grad, params)
    if state is not None:
        fn.load_state_dict(state)
    compiled = strata.compile(fn, backend=backend)
    out, grads, args = _run(compiled, specs, build.grad, params)
    _assert_same(out, eager_out)
    _assert_same(args, eager_args)          # in-place updates of inputs
    assert len(grads) == len(eager_grads)
    for g, e in zip(grads, eager_grads):
        _assert_same(g, e)
    if state is not None:
        _assert_same(list(fn.state_dict().values()), list(state.values()) and
                     list(fn.state_dict().values()))
    ctx = compiled.__dict__["_strata_compile_context"]
    skipped = [code.co_name for code, cache in ctx.caches.items() if cache.eager]
    assert bool(skipped) == build.skips, skipped
    entries = sum(len(cache.entries) for cache in ctx.caches.values())
    out2, _, _ = _run(compiled, specs, build.grad, params)   # the cached path
    if name not in ("list_append_side_effect",):   # reads len(log), which grew
        assert sum(len(cache.entries) for cache in ctx.caches.values()) == entries
    if name not in ("dropout_fn", "dropout_module", "batchnorm_train", "buffer_mutation",
                    "module_attribute_write"):
        _assert_same(out2, eager_out)


def test_at_least_60_cases():
    assert len(CASES) >= 60


@pytest.mark.parametrize("name", sorted(CASES))
def test_eager_backend(name):
    _check(name, "eager")


@pytest.mark.parametrize("name", sorted(CASES))
def test_aot_eager_backend(name):
    pytest.importorskip("strata.compile.aot.aot_autograd")
    _check(name, "aot_eager")


@pytest.mark.parametrize("name", sorted(COUNTED))
def test_counts_match_dynamo(name):
    torch = pytest.importorskip("torch")
    pytest.importorskip("torch._dynamo")
    build = CASES[name]
    strata._dynamo.reset()
    fn, specs = build(strata)
    ours = explain(fn)(*_inputs(specs, 1, False))
    torch._dynamo.reset()
    tfn, _ = build(torch)
    def to_torch(a):
        return [to_torch(t) for t in a] if isinstance(a, list) else torch.from_numpy(a.numpy())
    targs = [to_torch(a) for a in _inputs(specs, 1, False)]
    theirs = torch._dynamo.explain(tfn)(*targs)
    assert (ours.graph_count, ours.graph_break_count) == \
        (theirs.graph_count, theirs.graph_break_count), (ours, theirs.break_reasons)
