"""End-to-end training parity: the same model, weights and batches in strata and in PyTorch.

Each test builds one model twice from the same code (``m`` is ``strata`` or ``torch``), copies
PyTorch's initial weights into strata through NumPy (``state_dict`` -> ``load_state_dict``), then
runs 20 optimizer steps on identical batches. Losses and every parameter must match PyTorch's at
every step (float32 within 1e-4; a float64 variant much tighter), and every gradient at step 0.
This exercises the whole stack at once: module call path, autograd through every layer, the
optimizer formulas, grad clipping and the loss functions. Dropout is 0 so no randomness differs.
"""

import numpy as np
import pytest
import torch

import strata

STEPS = 20


def _np(t):
    return t.detach().numpy()


def _copy_weights(t_model, s_model):
    """PyTorch's initial parameters and buffers into the strata model (through NumPy)."""
    state = {k: strata.from_numpy(_np(v).copy()) for k, v in t_model.state_dict().items()}
    result = s_model.load_state_dict(state)
    assert not result.missing_keys and not result.unexpected_keys


def _batches(make, steps=STEPS, seed=0):
    rng = np.random.default_rng(seed)
    return [make(rng) for _ in range(steps)]


def _to(m, batch):
    return tuple(m.from_numpy(np.ascontiguousarray(a)) for a in batch)


def _assert_close(s, t, atol, what):
    np.testing.assert_allclose(_np(s), _np(t), rtol=atol, atol=atol, err_msg=what)


def _run_parity(build, make_optimizer, batches, loss_fn, *, dtype="float32", atol=1e-4,
                clip=None, after_backward=None):
    """Train the torch and strata twins side by side and compare them at every step: the loss
    (and the gradient norm when clipping), every gradient at step 0 (after clipping), every
    parameter after every step."""
    torch.manual_seed(0)
    t_model = build(torch)
    s_model = build(strata)
    if dtype == "float64":
        t_model, s_model = t_model.double(), s_model.double()
    _copy_weights(t_model, s_model)
    t_names = [n for n, _ in t_model.named_parameters()]
    assert [n for n, _ in s_model.named_parameters()] == t_names
    t_opt = make_optimizer(torch, t_model.parameters())
    s_opt = make_optimizer(strata, s_model.parameters())
    for step, batch in enumerate(batches):
        results = []
        for m, model, opt in ((torch, t_model, t_opt), (strata, s_model, s_opt)):
            opt.zero_grad()
            loss = loss_fn(m, model, *_to(m, batch))
            loss.backward()
            norm = m.nn.utils.clip_grad_norm_(model.parameters(), clip) if clip else None
            if after_backward is not None and step == 0:
                after_backward(m, model)
            opt.step()
            results.append((loss, norm))
        (t_loss, t_norm), (s_loss, s_norm) = results
        _assert_close(s_loss, t_loss, atol, f"loss at step {step}")
        if clip:
            _assert_close(s_norm, t_norm, atol, f"gradient norm at step {step}")
        s_params = dict(s_model.named_parameters())
        for name, t_p in t_model.named_parameters():
            s_p = s_params[name]
            if step == 0:
                assert s_p.grad is not None, f"{name}: no gradient in strata"
                _assert_close(s_p.grad, t_p.grad, atol, f"grad of {name} at step 0")
            _assert_close(s_p, t_p, atol, f"{name} after step {step}")
    return t_model, s_model


# --- (a) MLP, Adam ----------------------------------------------------------------------------

def _mlp(m):
    nn = m.nn
    return nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 128), nn.ReLU(),
                         nn.Linear(128, 10))


def _classification_batch(rng, shape=(32, 64), classes=10, dtype=np.float32):
    return rng.standard_normal(shape).astype(dtype), rng.integers(0, classes, shape[0])


def _cross_entropy(m, model, x, y):
    return m.nn.functional.cross_entropy(model(x), y)


def test_mlp_adam():
    _run_parity(_mlp, lambda m, p: m.optim.Adam(p, lr=1e-3), _batches(_classification_batch),
                _cross_entropy)


def test_mlp_float64_sgd_nesterov_tight():
    batches = _batches(lambda rng: _classification_batch(rng, dtype=np.float64))
    _run_parity(_mlp, lambda m, p: m.optim.SGD(p, lr=0.05, momentum=0.9, nesterov=True,
                                                weight_decay=1e-4),
                batches, _cross_entropy, dtype="float64", atol=1e-10)


# --- (b) CNN, SGD with momentum and Adam --------------------------------------------------------

def _cnn(m):
    """Conv2d + ReLU + MaxPool2d twice, then Linear, on 1x8x8 images."""
    nn = m.nn
    return nn.Sequential(
        nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(16 * 2 * 2, 10))


def _image_batch(rng):
    return _classification_batch(rng, shape=(16, 1, 8, 8))


def test_cnn_sgd_momentum():
    _run_parity(_cnn, lambda m, p: m.optim.SGD(p, lr=0.05, momentum=0.9),
                _batches(_image_batch), _cross_entropy)


def test_cnn_28x28_adam_with_batchnorm():
    def build(m):
        nn = m.nn
        return nn.Sequential(
            # no conv bias before BatchNorm: its true gradient is 0, and Adam would turn the
            # float rounding noise of that 0 into full-size steps that differ between libraries
            nn.Conv2d(1, 4, 5, stride=2, bias=False), nn.BatchNorm2d(4), nn.ReLU(), nn.MaxPool2d(2),
            nn.Flatten(), nn.Linear(4 * 6 * 6, 10))

    batches = _batches(lambda rng: _classification_batch(rng, shape=(8, 1, 28, 28)))
    t_model, s_model = _run_parity(build, lambda m, p: m.optim.Adam(p, lr=1e-3), batches,
                                   _cross_entropy)
    # the running statistics are buffers updated by the forward pass: they must agree too
    s_buffers = dict(s_model.named_buffers())
    for name, t_b in t_model.named_buffers():
        if t_b.dtype == torch.int64:
            assert s_buffers[name].item() == t_b.item() == STEPS
        else:
            _assert_close(s_buffers[name], t_b, 1e-4, name)


# --- (c) a small transformer LM: causal mask, AdamW, grad clipping ------------------------------

VOCAB, CONTEXT, D_MODEL = 20, 16, 32
# The attention key bias has a true gradient of 0 (it shifts every score of a query by the same
# amount, which softmax ignores), so both libraries compute rounding noise of ~1e-10 there. With
# Adam's default eps=1e-8 that noise becomes steps of ~lr/20 that differ between the libraries;
# eps=1e-6 keeps them ~1e-6 while barely changing the updates of the other parameters (|g|~1e-3).
ADAM_EPS = 1e-6


def _transformer_lm(m):
    nn = m.nn

    class LM(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(VOCAB, D_MODEL)
            self.pos = nn.Embedding(CONTEXT, D_MODEL)
            layer = nn.TransformerEncoderLayer(D_MODEL, 2, 64, dropout=0.0, batch_first=True)
            self.blocks = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
            self.head = nn.Linear(D_MODEL, VOCAB)
            self.register_buffer("mask", nn.Transformer.generate_square_subsequent_mask(CONTEXT))

        def forward(self, idx):
            x = self.embed(idx) + self.pos(m.arange(idx.shape[1]))
            return self.head(self.blocks(x, mask=self.mask, is_causal=True))

    return LM()


def _token_batch(rng):
    x = rng.integers(0, VOCAB, (8, CONTEXT + 1))
    return x[:, :-1], x[:, 1:]


def _lm_loss(m, model, x, y):
    return m.nn.functional.cross_entropy(model(x).reshape(-1, VOCAB), y.reshape(-1))


@pytest.mark.parametrize("dtype, atol", [("float32", 1e-4), ("float64", 1e-9)])
def test_transformer_lm_adamw_clip(dtype, atol):
    _run_parity(_transformer_lm,
                lambda m, p: m.optim.AdamW(p, lr=3e-3, weight_decay=0.01, eps=ADAM_EPS),
                _batches(_token_batch), _lm_loss, clip=0.5, dtype=dtype, atol=atol)


def test_transformer_norm_first_with_sdpa_block():
    """norm_first layers plus a hand-written causal attention block over F.sdpa."""
    def build(m):
        nn, F = m.nn, m.nn.functional

        class Block(nn.Module):
            def __init__(self):
                super().__init__()
                self.qkv = nn.Linear(D_MODEL, 3 * D_MODEL)
                self.proj = nn.Linear(D_MODEL, D_MODEL)
                self.norm = nn.LayerNorm(D_MODEL)

            def forward(self, x):
                b, t, c = x.shape
                q, k, v = self.qkv(self.norm(x)).split(c, dim=2)
                q, k, v = (z.view(b, t, 4, c // 4).transpose(1, 2) for z in (q, k, v))
                y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
                return x + self.proj(y.transpose(1, 2).contiguous().view(b, t, c))

        class LM(nn.Module):
            def __init__(self):
                super().__init__()
                self.embed = nn.Embedding(VOCAB, D_MODEL)
                self.block = Block()
                layer = nn.TransformerEncoderLayer(D_MODEL, 2, 64, dropout=0.0,
                                                   activation="gelu", batch_first=True,
                                                   norm_first=True)
                self.enc = nn.TransformerEncoder(layer, 1, enable_nested_tensor=False)
                self.head = nn.Linear(D_MODEL, VOCAB)

            def forward(self, idx):
                mask = nn.Transformer.generate_square_subsequent_mask(idx.shape[1])
                x = self.enc(self.block(self.embed(idx)), mask=mask, is_causal=True)
                return self.head(x)

        return LM()

    _run_parity(build, lambda m, p: m.optim.AdamW(p, lr=3e-3, betas=(0.9, 0.95),
                                                  eps=ADAM_EPS),
                _batches(_token_batch), _lm_loss, clip=1.0)


# --- (d) recurrent sequence models ---------------------------------------------------------------

def _recurrent(kind, **kwargs):
    def build(m):
        nn = m.nn

        class SeqModel(nn.Module):
            def __init__(self):
                super().__init__()
                self.rnn = getattr(nn, kind)(6, 16, batch_first=True, **kwargs)
                self.out = nn.Linear(16 * (2 if kwargs.get("bidirectional") else 1), 1)

            def forward(self, x):
                y, _ = self.rnn(x)
                return self.out(y[:, -1])

        return SeqModel()

    return build


def _sequence_batch(rng):
    x = rng.standard_normal((8, 10, 6)).astype(np.float32)
    return x, np.tanh(x.sum(axis=(1, 2), keepdims=False))[:, None].astype(np.float32)


def _mse(m, model, x, y):
    return m.nn.functional.mse_loss(model(x), y)


@pytest.mark.parametrize("kind, kwargs", [
    ("LSTM", dict(num_layers=2)),
    ("GRU", dict(bidirectional=True)),
    ("RNN", dict(nonlinearity="relu")),
])
def test_recurrent_adam(kind, kwargs):
    _run_parity(_recurrent(kind, **kwargs), lambda m, p: m.optim.Adam(p, lr=5e-3),
                _batches(_sequence_batch), _mse)


def test_lstm_cell_rmsprop_smooth_l1():
    def build(m):
        nn = m.nn

        class CellModel(nn.Module):
            def __init__(self):
                super().__init__()
                self.cell = nn.LSTMCell(6, 12)
                self.out = nn.Linear(12, 1)

            def forward(self, x):
                h = c = m.zeros(x.shape[0], 12)
                for t in range(x.shape[1]):
                    h, c = self.cell(x[:, t], (h, c))
                return self.out(h)

        return CellModel()

    def loss_fn(m, model, x, y):
        return m.nn.functional.smooth_l1_loss(model(x), y)

    _run_parity(build, lambda m, p: m.optim.RMSprop(p, lr=1e-3), _batches(_sequence_batch),
                loss_fn)


# --- (e) Embedding + LayerNorm + cross_entropy with ignore_index ------------------------------

PAD = 0


def _tagger(m):
    nn = m.nn

    class Tagger(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(VOCAB, D_MODEL, padding_idx=PAD)
            self.norm = nn.LayerNorm(D_MODEL)
            self.hidden = nn.Linear(D_MODEL, D_MODEL)
            self.head = nn.Linear(D_MODEL, 5)

        def forward(self, idx):
            return self.head(nn.functional.gelu(self.hidden(self.norm(self.embed(idx)))))

    return Tagger()


def _tag_batch(rng):
    x = rng.integers(1, VOCAB, (8, 12))
    lengths = rng.integers(4, 13, 8)
    x[np.arange(12)[None, :] >= lengths[:, None]] = PAD
    y = np.where(x == PAD, -100, x % 5)
    return x, y


def test_embedding_layernorm_ignore_index():
    def loss_fn(m, model, x, y):
        return m.nn.functional.cross_entropy(model(x).reshape(-1, 5), y.reshape(-1),
                                             ignore_index=-100)

    def padding_grad_is_zero(m, model):
        assert not model.embed.weight.grad[PAD].abs().sum().item()

    _run_parity(_tagger, lambda m, p: m.optim.Adam(p, lr=1e-2, weight_decay=1e-3),
                _batches(_tag_batch), loss_fn, after_backward=padding_grad_is_zero)


def test_label_smoothing_and_nll_adagrad():
    def loss_fn(m, model, x, y):
        F = m.nn.functional
        logits = model(x).reshape(-1, 5)
        smooth = F.cross_entropy(logits, y.reshape(-1), label_smoothing=0.1, ignore_index=-100)
        nll = F.nll_loss(F.log_softmax(logits, dim=-1), y.reshape(-1), ignore_index=-100)
        return smooth + 0.5 * nll

    _run_parity(_tagger, lambda m, p: m.optim.Adagrad(p, lr=0.05), _batches(_tag_batch),
                loss_fn)


# --- the schedulers and optimizer state across a checkpoint ------------------------------------

def test_onecycle_schedule_and_state_dict_resume(tmp_path):
    """Train 10 steps, checkpoint model+optimizer+scheduler, resume in a fresh strata twin."""
    batches = _batches(_classification_batch)

    def make(m, params):
        opt = m.optim.AdamW(params, lr=1e-3)
        return opt, m.optim.lr_scheduler.OneCycleLR(opt, max_lr=1e-2, total_steps=STEPS)

    torch.manual_seed(0)
    t_model, s_model = _mlp(torch), _mlp(strata)
    _copy_weights(t_model, s_model)
    (t_opt, t_sched), (s_opt, s_sched) = make(torch, t_model.parameters()), \
        make(strata, s_model.parameters())

    def step(m, model, opt, sched, batch):
        opt.zero_grad()
        loss = _cross_entropy(m, model, *_to(m, batch))
        loss.backward()
        opt.step()
        sched.step()
        return loss

    for i, batch in enumerate(batches):
        if i == STEPS // 2:
            path = tmp_path / "ckpt.pt"
            strata.save({"model": s_model.state_dict(), "opt": s_opt.state_dict(),
                         "sched": s_sched.state_dict()}, path)
            state = strata.load(path)
            s_model = _mlp(strata)
            s_model.load_state_dict(state["model"])
            s_opt, s_sched = make(strata, s_model.parameters())
            s_opt.load_state_dict(state["opt"])
            s_sched.load_state_dict(state["sched"])
        t_loss = step(torch, t_model, t_opt, t_sched, batch)
        s_loss = step(strata, s_model, s_opt, s_sched, batch)
        _assert_close(s_loss, t_loss, 1e-4, f"loss at step {i}")
        assert s_sched.get_last_lr() == pytest.approx(t_sched.get_last_lr(), rel=1e-12)
    for (name, s_p), t_p in zip(s_model.named_parameters(), t_model.parameters()):
        _assert_close(s_p, t_p, 1e-4, name)


# --- more layers real programs combine ---------------------------------------------------------

def test_weight_tied_lm_with_key_padding_mask():
    """GPT-style weight tying (the head shares the embedding matrix) and nn.MultiheadAttention
    with a causal attn_mask plus a key_padding_mask."""
    def build(m):
        nn = m.nn

        class TiedLM(nn.Module):
            def __init__(self):
                super().__init__()
                self.embed = nn.Embedding(VOCAB, D_MODEL)
                # no projection biases: the key bias's zero gradient is pure rounding noise
                # (see ADAM_EPS), which plain Adam over 20 steps turns into visible drift
                self.attn = nn.MultiheadAttention(D_MODEL, 4, bias=False, batch_first=True)
                self.norm = nn.LayerNorm(D_MODEL)
                self.head = nn.Linear(D_MODEL, VOCAB, bias=False)
                self.head.weight = self.embed.weight

            def forward(self, idx):
                x = self.embed(idx)
                t = idx.shape[1]
                causal = m.triu(m.ones(t, t, dtype=m.bool), diagonal=1)
                y, _ = self.attn(x, x, x, attn_mask=causal, key_padding_mask=idx == PAD,
                                 need_weights=False)
                return self.head(self.norm(x + y))

        return TiedLM()

    def batch(rng):
        x, y = _token_batch(rng)
        x[:, :2] = np.maximum(x[:, :2], 1)   # no row fully masked at its first positions
        return x, y

    t_model, s_model = _run_parity(build, lambda m, p: m.optim.Adam(p, lr=3e-3),
                                   _batches(batch), _lm_loss)
    assert s_model.head.weight is s_model.embed.weight
    assert len(list(s_model.parameters())) == len(list(t_model.parameters()))


def test_text_cnn_conv1d_batchnorm_avgpool_sgd_nesterov():
    def build(m):
        nn = m.nn

        class TextCNN(nn.Module):
            def __init__(self):
                super().__init__()
                self.embed = nn.Embedding(VOCAB, 16)
                self.conv = nn.Conv1d(16, 24, 3, padding=1, bias=False)
                self.bn = nn.BatchNorm1d(24)
                self.pool = nn.AvgPool1d(2)
                self.drop = nn.Dropout(0.0)
                self.out = nn.Linear(24 * 8, 5)

            def forward(self, idx):
                x = self.embed(idx).transpose(1, 2)
                x = self.pool(nn.functional.relu(self.bn(self.conv(x))))
                return self.out(self.drop(x.flatten(1)))

        return TextCNN()

    def batch(rng):
        return rng.integers(0, VOCAB, (16, 16)), rng.integers(0, 5, 16)

    t_model, s_model = _run_parity(
        build, lambda m, p: m.optim.SGD(p, lr=0.05, momentum=0.9, nesterov=True,
                                        weight_decay=1e-3),
        _batches(batch), _cross_entropy)
    t_model.eval()
    s_model.eval()
    x = _batches(batch, steps=1, seed=1)[0][0]
    _assert_close(s_model(strata.from_numpy(x)), t_model(torch.from_numpy(x)), 1e-4, "eval")
