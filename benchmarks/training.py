"""Issue 3's workloads: one training step (forward, cross_entropy, zero_grad, backward,
optimizer step) of an MLP, a CNN and a small transformer, and the peak memory of each.

    python -m benchmarks.training             # this group alone
    python -m benchmarks --filter training

Each step time is taken in a fresh process per library, strata and PyTorch alternating round by
round (``harness.fresh_process_medians``; in one process torch's OpenMP pool and NumPy's OpenBLAS
pool slow each other), so drift in a shared machine's load lands on both sides; a row is the
median of the per-process medians. The same steps are timed again with one thread each (when
threadpoolctl is installed), which a busy machine disturbs far less. Peak memory is the peak RSS
of a fresh subprocess per library and workload that imports only that library, builds the model
and runs ``MEMORY_STEPS`` steps, so the libraries' import footprints count too.
"""

import numpy as np

from .harness import child_main, fresh_pair, median_time, sides

MEMORY_STEPS = 20
ROUNDS = 3


def _mlp(m):
    nn = m.nn
    model = nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                          nn.Linear(512, 10))
    rng = np.random.default_rng(0)
    x = m.tensor(rng.standard_normal((64, 784), dtype=np.float32))
    y = m.tensor(rng.integers(0, 10, 64))
    return model, m.optim.Adam(model.parameters(), lr=1e-3), x, y


def _cnn(m):
    nn = m.nn
    model = nn.Sequential(nn.Conv2d(1, 32, 3), nn.ReLU(), nn.MaxPool2d(2),
                          nn.Conv2d(32, 64, 3), nn.ReLU(), nn.MaxPool2d(2),
                          nn.Flatten(), nn.Linear(64 * 5 * 5, 10))
    rng = np.random.default_rng(0)
    x = m.tensor(rng.standard_normal((32, 1, 28, 28), dtype=np.float32))
    y = m.tensor(rng.integers(0, 10, 32))
    return model, m.optim.Adam(model.parameters(), lr=1e-3), x, y


def _transformer(m, vocab=65, context=64, batch=16, d_model=128, nhead=4, layers=2):
    nn = m.nn

    class CharTransformer(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(vocab, d_model)
            self.pos = nn.Embedding(context, d_model)
            layer = nn.TransformerEncoderLayer(d_model, nhead, 4 * d_model, 0.1,
                                               batch_first=True, norm_first=True)
            self.blocks = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
            self.norm = nn.LayerNorm(d_model)
            self.head = nn.Linear(d_model, vocab)
            self.register_buffer("mask", nn.Transformer.generate_square_subsequent_mask(context))
            self.register_buffer("positions", m.arange(context))

        def forward(self, idx):
            x = self.embed(idx) + self.pos(self.positions)
            x = self.blocks(x, mask=self.mask, is_causal=True)
            return self.head(self.norm(x)).reshape(-1, vocab)

    model = CharTransformer()
    rng = np.random.default_rng(0)
    tokens = rng.integers(0, vocab, (batch, context + 1))
    x = m.tensor(tokens[:, :-1])
    y = m.tensor(tokens[:, 1:].reshape(-1))
    return model, m.optim.AdamW(model.parameters(), lr=1e-3), x, y


def _gpt(m, vocab=65, context=64, batch=16, d_model=128, nhead=4, layers=2):
    """Issue 9's tiny GPT as a user writes it (nanoGPT's shape): causal self-attention with
    ``masked_fill`` of a ``tril`` buffer, a GELU MLP, pre-norm blocks, AdamW; no dropout."""
    nn, F = m.nn, m.nn.functional

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
            self.qkv, self.proj = nn.Linear(d_model, 3 * d_model), nn.Linear(d_model, d_model)
            self.up, self.down = nn.Linear(d_model, 4 * d_model), nn.Linear(4 * d_model, d_model)
            self.register_buffer("tril", m.tril(m.ones(context, context)))

        def forward(self, x):
            B, T, C = x.shape
            q, k, v = self.qkv(self.ln1(x)).split(C, dim=2)
            q, k, v = (t.view(B, T, nhead, C // nhead).transpose(1, 2) for t in (q, k, v))
            att = (q @ k.transpose(-2, -1)) * (1.0 / (C // nhead) ** 0.5)
            att = att.masked_fill(self.tril[:T, :T] == 0, float("-inf")).softmax(dim=-1)
            y = (att @ v).transpose(1, 2).contiguous().view(B, T, C)
            x = x + self.proj(y)
            return x + self.down(F.gelu(self.up(self.ln2(x))))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.tok, self.pos = nn.Embedding(vocab, d_model), nn.Embedding(context, d_model)
            self.blocks = nn.Sequential(*(Block() for _ in range(layers)))
            self.ln, self.head = nn.LayerNorm(d_model), nn.Linear(d_model, vocab)

        def forward(self, idx):
            x = self.tok(idx) + self.pos(m.arange(idx.shape[1]))
            return self.head(self.ln(self.blocks(x))).view(-1, vocab)

    model = GPT()
    tokens = np.random.default_rng(0).integers(0, vocab, (batch, context + 1))
    x, y = m.tensor(tokens[:, :-1]), m.tensor(tokens[:, 1:].reshape(-1))
    return model, m.optim.AdamW(model.parameters(), lr=1e-3), x, y


def _cnn_sgd(m):
    """Issue 9's CNN step: ``_cnn``'s model with SGD and momentum."""
    model, _, x, y = _cnn(m)
    return model, m.optim.SGD(model.parameters(), lr=0.01, momentum=0.9), x, y


WORKLOADS = {
    "MLP 784-512-512-10, batch 64, Adam": (_mlp, 1.5),
    "CNN 2 conv + linear, batch 32, 1x28x28, Adam": (_cnn, 2.0),
    "transformer 2 layers d128 4 heads, ctx 64, batch 16, AdamW": (_transformer, 2.0),
    # issue 9's eager targets, on its own wording of the workloads
    "tiny GPT: GELU MLP, masked_fill attention, AdamW": (_gpt, 1.3),
    "CNN 2 conv + linear, batch 32, SGD momentum": (_cnn_sgd, 1.3),
}
MEMORY_TARGET = 1.5


def make_step(m, build):
    """A function running one full training step of ``build``'s workload on library ``m``."""
    m.manual_seed(0)
    model, opt, x, y = build(m)
    cross_entropy = m.nn.functional.cross_entropy

    def step():
        loss = cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return step


def _step_time(m, workload, threads=None):
    """Child: median seconds per training step of ``workload`` on ``m`` (``threads`` = "1":
    one thread, BLAS included, when threadpoolctl is installed)."""
    if threads == "1":
        from threadpoolctl import threadpool_limits
        threadpool_limits(1)
        m.set_num_threads(1)
    return median_time(make_step(m, WORKLOADS[workload][0]), min_time=0.3, repeats=5)


def _peak_rss_kib(m, workload, steps=MEMORY_STEPS):
    """Child: peak RSS (KiB) after importing ``m`` and running ``steps`` steps of ``workload``.
    Its own ``VmHWM`` (the high-water mark of its address space): Linux carries ``ru_maxrss``
    across ``exec``, so a child forked from a big process would start with that one's peak."""
    step = make_step(m, WORKLOADS[workload][0])
    for _ in range(steps):
        step()
    with open("/proc/self/status") as f:
        hwm = next(line for line in f if line.startswith("VmHWM:"))
    return int(hwm.split()[1])


def _measure(m, workload, what="step"):
    if what == "rss":
        return _peak_rss_kib(m, workload)
    return _step_time(m, workload, "1" if what == "1thread" else None)


def _has_threadpoolctl():
    try:
        import threadpoolctl  # noqa: F401
    except ImportError:
        return False
    return True


def run(strata=None, torch=None, rounds=ROUNDS):
    libraries = sides(strata, torch)
    results = [fresh_pair("training", f"{name}: step", name, target, libraries, rounds=rounds)
               for name, (_, target) in WORKLOADS.items()]
    if _has_threadpoolctl():
        results += [fresh_pair("training", f"{name}: step, 1 thread each", name, None, libraries,
                               rounds=max(1, rounds - 1), args=("1thread",))
                    for name in WORKLOADS]
    results += [fresh_pair("training", f"{name}: peak RSS, {MEMORY_STEPS} steps", name,
                           MEMORY_TARGET, libraries, rounds=1, args=("rss",), unit="MiB",
                           scale=1 / 1024)
                for name in WORKLOADS]
    return results


if __name__ == "__main__":
    if not child_main(_measure):
        import torch

        import strata

        from .harness import machine, table
        print(f"Machine: {machine()}; torch threads: {torch.get_num_threads()}")
        print(table(run(strata, torch)))
