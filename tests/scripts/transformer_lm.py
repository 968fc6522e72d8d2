"""Two small language models on a toy corpus:
1. PyTorch's word_language_model TransformerModel (subclasses nn.Transformer, sequence-first,
   log(tril(ones)) mask, sinusoidal PositionalEncoding buffer), NLLLoss, AdamW +
   CosineAnnealingLR;
2. a GPT-style block over F.scaled_dot_product_attention(is_causal=True), AdamW + OneCycleLR.
Weights are initialised from NumPy so both runs start from the same point; dropout is 0. The
trained word model is saved whole and loaded back weights-only with the classes it needs allowed."""

import inspect
import math
import os
import tempfile

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

corpus = ("the cat sat on the mat . the dog sat on the log . a cat saw a dog . "
          "the dog saw the cat on the mat . ") * 6
words = corpus.split()
vocab = sorted(set(words))
ids = torch.tensor([vocab.index(w) for w in words], dtype=torch.long)
ntokens = len(vocab)


def batchify(data, bsz):
    nbatch = data.size(0) // bsz
    data = data.narrow(0, 0, nbatch * bsz)
    return data.view(bsz, -1).t().contiguous()


def get_batch(source, i, bptt=8):
    seq_len = min(bptt, len(source) - 1 - i)
    return source[i:i + seq_len], source[i + 1:i + 1 + seq_len].view(-1)


def numpy_init(model, seed):
    rng = np.random.default_rng(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if p.dim() > 1:
                p.copy_(torch.from_numpy(rng.normal(0, 0.1, tuple(p.shape)).astype(np.float32)))
            elif "norm" in name and name.endswith("weight"):
                p.fill_(1.0)
            else:
                p.zero_()


class PositionalEncoding(nn.Module):
    def __init__(self, d_model, dropout=0.1, max_len=64):
        super().__init__()
        self.dropout = nn.Dropout(p=dropout)
        pe = torch.zeros(max_len, d_model)
        position = torch.arange(0, max_len, dtype=torch.float).unsqueeze(1)
        div_term = torch.exp(torch.arange(0, d_model, 2).float() * (-math.log(10000.0) / d_model))
        pe[:, 0::2] = torch.sin(position * div_term)
        pe[:, 1::2] = torch.cos(position * div_term)
        pe = pe.unsqueeze(0).transpose(0, 1)
        self.register_buffer("pe", pe)

    def forward(self, x):
        x = x + self.pe[:x.size(0), :]
        return self.dropout(x)


class TransformerModel(nn.Transformer):
    def __init__(self, ntoken, ninp, nhead, nhid, nlayers, dropout=0.5):
        super().__init__(d_model=ninp, nhead=nhead, dim_feedforward=nhid,
                         num_encoder_layers=nlayers, num_decoder_layers=1, dropout=dropout)
        self.model_type = "Transformer"
        self.src_mask = None
        self.pos_encoder = PositionalEncoding(ninp, dropout)
        self.input_emb = nn.Embedding(ntoken, ninp)
        self.ninp = ninp
        self.decoder = nn.Linear(ninp, ntoken)

    def _generate_square_subsequent_mask(self, sz):
        return torch.log(torch.tril(torch.ones(sz, sz)))

    def forward(self, src, has_mask=True):
        if has_mask:
            if self.src_mask is None or self.src_mask.size(0) != len(src):
                self.src_mask = self._generate_square_subsequent_mask(len(src))
        else:
            self.src_mask = None
        src = self.input_emb(src) * math.sqrt(self.ninp)
        src = self.pos_encoder(src)
        output = self.encoder(src, mask=self.src_mask)
        output = self.decoder(output)
        return F.log_softmax(output, dim=-1)


torch.manual_seed(0)
train_data = batchify(ids, 4)
model = TransformerModel(ntokens, 32, 2, 64, 2, dropout=0.0)
numpy_init(model, 0)
criterion = nn.NLLLoss()
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3, betas=(0.9, 0.98), eps=1e-6,
                              weight_decay=0.01)
epochs = 4
steps_per_epoch = len(range(0, train_data.size(0) - 1, 8))
scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=epochs * steps_per_epoch)
for epoch in range(epochs):
    model.train()
    total = 0.0
    for i in range(0, train_data.size(0) - 1, 8):
        data, targets = get_batch(train_data, i)
        optimizer.zero_grad()
        output = model(data)
        loss = criterion(output.view(-1, ntokens), targets)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.25)
        optimizer.step()
        scheduler.step()
        total += loss.item()
    print(f"transformer epoch {epoch} loss {total / steps_per_epoch:.5f} "
          f"lr {scheduler.get_last_lr()[0]:.6f}")
model.eval()
with torch.no_grad():
    data, targets = get_batch(train_data, 0)
    out = model(data)
    print("eval nll", f"{criterion(out.view(-1, ntokens), targets).item():.5f}",
          "next words", [vocab[i] for i in out[-1].argmax(-1).tolist()])


class CausalSelfAttention(nn.Module):
    def __init__(self, n_embd, n_head):
        super().__init__()
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.c_proj = nn.Linear(n_embd, n_embd)
        self.n_head, self.n_embd = n_head, n_embd

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=None, dropout_p=0.0,
                                           is_causal=True)
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.c_proj(y)


class Block(nn.Module):
    def __init__(self, n_embd, n_head):
        super().__init__()
        self.ln_1 = nn.LayerNorm(n_embd)
        self.attn = CausalSelfAttention(n_embd, n_head)
        self.ln_2 = nn.LayerNorm(n_embd)
        self.mlp = nn.ModuleDict(dict(c_fc=nn.Linear(n_embd, 4 * n_embd), act=nn.GELU(),
                                      c_proj=nn.Linear(4 * n_embd, n_embd)))

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        m = self.mlp
        return x + m.c_proj(m.act(m.c_fc(self.ln_2(x))))


class GPT(nn.Module):
    def __init__(self, vocab_size, block_size=8, n_embd=32, n_head=4, n_layer=2):
        super().__init__()
        self.block_size = block_size
        self.wte = nn.Embedding(vocab_size, n_embd)
        self.wpe = nn.Embedding(block_size, n_embd)
        self.h = nn.ModuleList([Block(n_embd, n_head) for _ in range(n_layer)])
        self.ln_f = nn.LayerNorm(n_embd)
        self.lm_head = nn.Linear(n_embd, vocab_size, bias=False)

    def forward(self, idx, targets=None):
        b, t = idx.size()
        pos = torch.arange(0, t, dtype=torch.long, device=idx.device)
        x = self.wte(idx) + self.wpe(pos)
        for block in self.h:
            x = block(x)
        logits = self.lm_head(self.ln_f(x))
        loss = None
        if targets is not None:
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1),
                                   ignore_index=-1)
        return logits, loss


def configure_optimizers(model, weight_decay, learning_rate, betas, device_type):
    """nanoGPT's: decay 2-D weights only, and use the fused kernel when the library has one."""
    params = {pn: p for pn, p in model.named_parameters() if p.requires_grad}
    decay = [p for p in params.values() if p.dim() >= 2]
    no_decay = [p for p in params.values() if p.dim() < 2]
    groups = [{"params": decay, "weight_decay": weight_decay},
              {"params": no_decay, "weight_decay": 0.0}]
    print("decayed tensors", len(decay), sum(p.numel() for p in decay),
          "non-decayed tensors", len(no_decay), sum(p.numel() for p in no_decay))
    fused_available = "fused" in inspect.signature(torch.optim.AdamW).parameters
    extra_args = dict(fused=True) if fused_available and device_type == "cuda" else dict()
    return torch.optim.AdamW(groups, lr=learning_rate, betas=betas, **extra_args)


gpt = GPT(ntokens)
numpy_init(gpt, 1)
opt = configure_optimizers(gpt, 0.1, 1e-3, (0.9, 0.95), "cpu")
steps = 30
sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=5e-3, total_steps=steps)
starts = np.random.default_rng(0).integers(0, len(ids) - 9, (steps, 8))
for it in range(steps):
    x = torch.stack([ids[s:s + 8] for s in starts[it]])
    y = torch.stack([ids[s + 1:s + 9] for s in starts[it]])
    y[:, 0] = -1   # ignored position
    for micro in range(2):   # gradient accumulation over two micro-batches
        _, loss = gpt(x[micro * 4:(micro + 1) * 4], y[micro * 4:(micro + 1) * 4])
        (loss / 2).backward()
    torch.nn.utils.clip_grad_norm_(gpt.parameters(), 1.0)
    opt.step()
    opt.zero_grad(set_to_none=True)
    sched.step()
    if it % 10 == 0 or it == steps - 1:
        print(f"gpt step {it} loss {loss.item():.5f} lr {sched.get_last_lr()[0]:.6f}")

path = os.path.join(tempfile.mkdtemp(), "model.pt")
torch.save(model, path)
allowed = [TransformerModel, PositionalEncoding, nn.Transformer, nn.modules.sparse.Embedding,
           nn.modules.transformer.TransformerEncoder, nn.TransformerDecoder,
           nn.modules.transformer.TransformerEncoderLayer, nn.TransformerDecoderLayer,
           nn.modules.activation.MultiheadAttention, nn.modules.linear.Linear,
           nn.modules.linear.NonDynamicallyQuantizableLinear, nn.modules.dropout.Dropout,
           nn.modules.normalization.LayerNorm, nn.modules.container.ModuleList, F.relu]
with torch.serialization.safe_globals(allowed):
    reloaded = torch.load(path, weights_only=True)
reloaded.eval()
with torch.no_grad():
    data, _ = get_batch(train_data, 8)
    diff = (reloaded(data) - model(data)).abs().max()
print("reloaded", type(reloaded).__name__, "max difference", diff.item())
