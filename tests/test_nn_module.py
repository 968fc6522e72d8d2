"""nn.Module semantics against PyTorch: registration, iteration order, state_dict, load errors,
train/eval, _apply/to, hooks, repr; and every layer's forward with PyTorch's weights copied in."""

import copy

import numpy as np
import pytest
import strata
import torch
from helpers import assert_same


def copy_weights(t_module, s_module):
    """Load a torch module's state_dict into the same strata module."""
    state = {k: strata.tensor(v.detach().numpy()) for k, v in t_module.state_dict().items()}
    s_module.load_state_dict(state)


def both(build):
    """The same module built with torch.nn and strata.nn, strata holding torch's weights."""
    torch.manual_seed(0)
    t = build(torch.nn)
    s = build(strata.nn)
    copy_weights(t, s)
    return s, t


class Net:
    @staticmethod
    def build(nn):
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc1 = nn.Linear(4, 8)
                self.act = nn.ReLU()
                self.block = nn.Sequential(nn.Linear(8, 8), nn.Tanh(), nn.Linear(8, 3))
                self.register_buffer("scale", (torch if nn is torch.nn else strata).ones(3))
                self.register_buffer("tmp", (torch if nn is torch.nn else strata).zeros(1),
                                     persistent=False)

            def forward(self, x):
                return self.block(self.act(self.fc1(x))) * self.scale
        return Net()


def test_registration_order_and_names_match_torch():
    s, t = both(Net.build)
    assert [n for n, _ in s.named_parameters()] == [n for n, _ in t.named_parameters()]
    assert [n for n, _ in s.named_buffers()] == [n for n, _ in t.named_buffers()]
    assert [n for n, _ in s.named_modules()] == [n for n, _ in t.named_modules()]
    assert [n for n, _ in s.named_children()] == [n for n, _ in t.named_children()]
    assert list(s.state_dict()) == list(t.state_dict())


def test_forward_matches_torch():
    s, t = both(Net.build)
    x = np.random.default_rng(0).standard_normal((5, 4)).astype(np.float32)
    assert_same(s(strata.tensor(x)), t(torch.tensor(x)))


def test_repr_matches_torch():
    s, t = both(Net.build)
    assert repr(s) == repr(t)
    for build in (lambda nn: nn.Conv2d(3, 8, 3, stride=2, padding=1, bias=False),
                  lambda nn: nn.LayerNorm(16), lambda nn: nn.Embedding(10, 4, padding_idx=0),
                  lambda nn: nn.Dropout(0.2), lambda nn: nn.LSTM(4, 8, num_layers=2),
                  lambda nn: nn.BatchNorm2d(3), lambda nn: nn.GELU(approximate="tanh"),
                  lambda nn: nn.ModuleList([nn.Linear(1, 1)]), lambda nn: nn.MaxPool2d(2)):
        assert repr(build(strata.nn)) == repr(build(torch.nn))


def test_setattr_rules():
    m = strata.nn.Linear(2, 2)
    with pytest.raises(TypeError, match="cannot assign 'torch.FloatTensor' as parameter 'weight'"):
        m.weight = strata.ones(2, 2)
    m.extra = strata.ones(1)                 # a plain tensor is an ordinary attribute
    assert "extra" not in dict(m.named_buffers()) and "extra" not in m.state_dict()
    m.buf = strata.nn.Buffer(strata.ones(1))
    assert "buf" in m.state_dict()
    with pytest.raises(AttributeError, match="'Linear' object has no attribute 'nope'"):
        m.nope

    class Early(strata.nn.Module):
        def __init__(self):
            self.w = strata.nn.Parameter(strata.ones(1))

    with pytest.raises(AttributeError, match="cannot assign parameters before Module.__init__"):
        Early()


def test_load_state_dict_errors_match_torch():
    s, t = both(Net.build)
    sd_t = t.state_dict()
    sd_s = s.state_dict()
    del sd_t["fc1.bias"], sd_s["fc1.bias"]
    sd_t["extra.weight"] = torch.ones(1)
    sd_s["extra.weight"] = strata.ones(1)
    with pytest.raises(RuntimeError) as te:
        t.load_state_dict(sd_t)
    with pytest.raises(RuntimeError) as se:
        s.load_state_dict(sd_s)
    assert str(se.value) == str(te.value)
    res_t = t.load_state_dict(sd_t, strict=False)
    res_s = s.load_state_dict(sd_s, strict=False)
    assert res_s.missing_keys == res_t.missing_keys
    assert res_s.unexpected_keys == res_t.unexpected_keys
    bad_t = {k: v for k, v in t.state_dict().items()}
    bad_t["fc1.weight"] = torch.ones(3)
    bad_s = {k: v for k, v in s.state_dict().items()}
    bad_s["fc1.weight"] = strata.ones(3)
    with pytest.raises(RuntimeError) as te:
        t.load_state_dict(bad_t, strict=False)
    with pytest.raises(RuntimeError) as se:
        s.load_state_dict(bad_s, strict=False)
    assert str(se.value).replace("strata.", "torch.") == str(te.value)


def test_load_state_dict_copies_into_the_same_parameters():
    s, _ = both(Net.build)
    w = s.fc1.weight
    s.load_state_dict({k: v * 0 for k, v in s.state_dict().items()})
    assert s.fc1.weight is w and float(w.abs().sum()) == 0.0


def test_train_eval_and_zero_grad():
    s, _ = both(Net.build)
    s.eval()
    assert not any(m.training for m in s.modules())
    s.train()
    assert all(m.training for m in s.modules())
    for p in s.parameters():
        p.grad = strata.ones_like(p)
    s.zero_grad()
    assert all(p.grad is None for p in s.parameters())


def test_to_keeps_parameter_objects_and_casts_floats_only():
    m = strata.nn.BatchNorm1d(3)
    w = m.weight
    m.double()
    assert m.weight is w and m.weight.dtype is strata.float64
    assert m.num_batches_tracked.dtype is strata.int64
    with pytest.raises(TypeError, match="nn.Module.to only accepts floating point"):
        m.to(strata.int64)
    m.to("meta")
    assert m.weight.device.type == "meta" and m.weight is w


def test_forward_hooks_order_and_replacement():
    calls = []
    m = strata.nn.Linear(2, 2)
    h1 = m.register_forward_pre_hook(lambda mod, args: calls.append("pre") or
                                     (args[0] * 0,))
    m.register_forward_hook(lambda mod, args, out: calls.append("post") or out + 1)
    out = m(strata.ones(1, 2))
    assert calls == ["pre", "post"]
    np.testing.assert_allclose(out.detach().numpy(), (m.bias + 1).detach().numpy()[None])
    h1.remove()
    m(strata.ones(1, 2))
    assert calls == ["pre", "post", "post"]


def test_forward_pre_hook_with_kwargs():
    m = strata.nn.Linear(2, 2)

    def hook(mod, args, kwargs):
        return (args[0] * 2,), kwargs

    m.register_forward_pre_hook(hook, with_kwargs=True)
    x = strata.ones(1, 2)
    np.testing.assert_allclose(m(x).detach().numpy(),
                               strata.nn.functional.linear(x * 2, m.weight, m.bias)
                               .detach().numpy())


def test_deepcopy_and_apply():
    s, _ = both(Net.build)
    c = copy.deepcopy(s)
    assert c.fc1.weight is not s.fc1.weight
    np.testing.assert_array_equal(c.fc1.weight.detach().numpy(), s.fc1.weight.detach().numpy())
    seen = []
    s.apply(lambda mod: seen.append(type(mod).__name__))
    assert seen[-1] == "Net" and seen.count("Linear") == 3


LAYERS = [
    ("Linear", lambda nn: nn.Linear(6, 4), (3, 6)),
    ("Linear-nobias", lambda nn: nn.Linear(6, 4, bias=False), (2, 5, 6)),
    ("Conv1d", lambda nn: nn.Conv1d(3, 4, 3, padding=1), (2, 3, 10)),
    ("Conv2d", lambda nn: nn.Conv2d(3, 4, 3, stride=2, padding=1), (2, 3, 9, 9)),
    ("Conv2d-groups", lambda nn: nn.Conv2d(4, 4, 3, groups=2, padding="same"), (1, 4, 6, 6)),
    ("MaxPool2d", lambda nn: nn.MaxPool2d(2), (2, 3, 8, 8)),
    ("AvgPool2d", lambda nn: nn.AvgPool2d(3, 2, 1), (2, 3, 8, 8)),
    ("AdaptiveAvgPool2d", lambda nn: nn.AdaptiveAvgPool2d((2, 3)), (2, 3, 8, 7)),
    ("LayerNorm", lambda nn: nn.LayerNorm(6), (3, 4, 6)),
    ("GroupNorm", lambda nn: nn.GroupNorm(2, 4), (3, 4, 5)),
    ("BatchNorm1d", lambda nn: nn.BatchNorm1d(4), (8, 4)),
    ("BatchNorm2d", lambda nn: nn.BatchNorm2d(3), (4, 3, 5, 5)),
    ("ReLU", lambda nn: nn.ReLU(), (3, 4)),
    ("GELU", lambda nn: nn.GELU(), (3, 4)),
    ("Tanh", lambda nn: nn.Tanh(), (3, 4)),
    ("LeakyReLU", lambda nn: nn.LeakyReLU(0.2), (3, 4)),
    ("Softmax", lambda nn: nn.Softmax(dim=-1), (3, 4)),
    ("Flatten", lambda nn: nn.Flatten(), (2, 3, 4)),
    ("RNN", lambda nn: nn.RNN(4, 5, num_layers=2), (6, 3, 4)),
    ("RNN-relu", lambda nn: nn.RNN(4, 5, nonlinearity="relu", batch_first=True), (3, 6, 4)),
    ("LSTM", lambda nn: nn.LSTM(4, 5, num_layers=2, bidirectional=True), (6, 3, 4)),
    ("LSTM-batch_first", lambda nn: nn.LSTM(4, 5, batch_first=True), (3, 6, 4)),
    ("GRU", lambda nn: nn.GRU(4, 5, bidirectional=True), (6, 3, 4)),
    ("LSTM-unbatched", lambda nn: nn.LSTM(4, 5), (6, 4)),
    ("MultiheadAttention", lambda nn: nn.MultiheadAttention(8, 2), (5, 3, 8)),
    ("TransformerEncoderLayer",
     lambda nn: nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0), (5, 3, 8)),
    ("TransformerEncoder-batch_first",
     lambda nn: nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0,
                                                                 batch_first=True,
                                                                 norm_first=True), 2),
     (3, 5, 8)),
]


@pytest.mark.parametrize("name,build,shape", LAYERS, ids=[x[0] for x in LAYERS])
def test_layer_forward_matches_torch(name, build, shape):
    s, t = both(build)
    x = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
    if name == "MultiheadAttention":
        out_s = s(*(strata.tensor(x),) * 3)
        out_t = t(*(torch.tensor(x),) * 3)
    else:
        out_s, out_t = s(strata.tensor(x)), t(torch.tensor(x))
    assert_same(out_s, out_t, atol=1e-5, rtol=1e-4)
    if name.startswith("BatchNorm"):   # running stats were updated the same way
        assert_same(s.running_mean, t.running_mean, atol=1e-6)
        assert_same(s.running_var, t.running_var, atol=1e-6)
        s.eval(), t.eval()
        assert_same(s(strata.tensor(x)), t(torch.tensor(x)), atol=1e-5, rtol=1e-4)


def test_embedding_forward_and_padding_row():
    s, t = both(lambda nn: nn.Embedding(10, 3, padding_idx=2))
    idx = np.array([[1, 2, 9], [0, 2, 5]])
    assert_same(s(strata.tensor(idx)), t(torch.tensor(idx)))
    assert float(s.weight[2].abs().sum()) == 0.0


def test_transformer_mask_and_decoder():
    s, t = both(lambda nn: nn.Transformer(8, 2, 1, 1, 16, dropout=0.0))
    rng = np.random.default_rng(2)
    src = rng.standard_normal((5, 2, 8)).astype(np.float32)
    tgt = rng.standard_normal((4, 2, 8)).astype(np.float32)
    mask_s = strata.nn.Transformer.generate_square_subsequent_mask(4)
    mask_t = torch.nn.Transformer.generate_square_subsequent_mask(4)
    assert_same(mask_s, mask_t)
    out_s = s(strata.tensor(src), strata.tensor(tgt), tgt_mask=mask_s)
    out_t = t(torch.tensor(src), torch.tensor(tgt), tgt_mask=mask_t)
    assert_same(out_s, out_t, atol=1e-5, rtol=1e-4)


def test_parameter_is_a_tensor_and_sharing():
    data = strata.ones(3)
    p = strata.nn.Parameter(data)
    assert isinstance(p, strata.Tensor) and p.requires_grad and p.is_leaf
    assert p.data_ptr() == data.data_ptr()
    assert repr(p).startswith("Parameter containing:\n")


def test_module_without_forward_raises_like_torch():
    with pytest.raises(NotImplementedError, match='missing the required "forward" function'):
        strata.nn.Module()(1)


def _hook_calls(m, input_requires_grad):
    calls = []
    lin = m.nn.Linear(3, 2)
    with m.no_grad():
        lin.weight.copy_(m.arange(6, dtype=m.float32).reshape(2, 3))
        lin.bias.fill_(0.5)
    lin.register_full_backward_pre_hook(
        lambda mod, go: calls.append(("pre", [tuple(g.shape) for g in go])))
    lin.register_full_backward_hook(
        lambda mod, gi, go: calls.append(("post", [None if g is None else g.tolist() for g in gi],
                                          [g.tolist() for g in go])))
    x = m.ones(1, 3, requires_grad=input_requires_grad)
    (lin(x) * 2).sum().backward()
    return calls


@pytest.mark.parametrize("input_requires_grad", [True, False])
def test_full_backward_hooks_match_torch(input_requires_grad):
    assert _hook_calls(strata, input_requires_grad) == _hook_calls(torch, input_requires_grad)


def _batchnorm_loads(m):
    net = m.nn.Sequential(m.nn.Linear(2, 3), m.nn.BatchNorm1d(3))
    plain = {k: v for k, v in net.state_dict().items() if "num_batches" not in k}
    partial = net.load_state_dict({"0.weight": m.zeros(3, 2), "extra": m.ones(1)}, strict=False)
    with_version = net.state_dict()
    del with_version["1.num_batches_tracked"]           # a version-2 checkpoint that lacks it
    versioned = net.load_state_dict(with_version, strict=False)
    return (net.load_state_dict(plain), sorted(partial.missing_keys), partial.unexpected_keys,
            versioned.missing_keys, net.state_dict()._metadata["1"]["version"],
            "1.num_batches_tracked" in plain)


def test_batchnorm_checkpoints_without_num_batches_tracked_load_as_in_torch():
    """Before version 2 (or from a plain dict) BatchNorm fills num_batches_tracked in instead
    of calling it missing; the caller's dict is not changed."""
    assert _batchnorm_loads(strata) == _batchnorm_loads(torch)


def test_load_state_dict_override_with_torchs_signature_and_assign():
    """A subclass overriding _load_from_state_dict with PyTorch's eight arguments works, and
    assign=True reaches it through local_metadata as in PyTorch."""
    seen = []

    class Logged(strata.nn.Linear):
        def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict,
                                  missing_keys, unexpected_keys, error_msgs):
            seen.append(local_metadata.get("assign_to_params_buffers", False))
            super()._load_from_state_dict(state_dict, prefix, local_metadata, strict,
                                          missing_keys, unexpected_keys, error_msgs)

    layer = Logged(2, 2)
    weight = strata.ones(2, 2)
    layer.load_state_dict({"weight": weight, "bias": strata.zeros(2)}, assign=True)
    layer.load_state_dict({"weight": weight, "bias": strata.zeros(2)})
    assert seen == [True, False]


def test_module_name_errors_match_torch():
    messages = []
    for m in (strata, torch):
        module = m.nn.Module()
        for register in (lambda: module.add_module("a.b", None),
                         lambda: module.register_buffer("a.b", None)):
            with pytest.raises(KeyError) as error:
                register()
            messages.append(str(error.value))
    assert messages[:2] == messages[2:]
    assert "got: a.b" in messages[0]
