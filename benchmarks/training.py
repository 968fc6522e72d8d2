"""Issue 3's workloads: one training step (forward, cross_entropy, zero_grad, backward,
optimizer step) of an MLP, a CNN and a small transformer, and the peak memory of each.

    python -m benchmarks.training             # this group alone
    python -m benchmarks --filter training

Step times alternate strata and PyTorch batch by batch, so drift in a shared machine's load
lands on both sides; each is the median of its batches. The same steps are timed again with one
thread each (when threadpoolctl is installed), which a busy machine disturbs far less. Peak
memory is the peak RSS of a fresh subprocess per library and workload that imports the library,
builds the model and runs ``MEMORY_STEPS`` steps, so the libraries' import footprints count
too. The child reports its own ``VmHWM`` (the high-water mark of its address space): Linux
carries ``ru_maxrss`` across ``exec``, so a child forked from this big process would start with
this process's peak.
"""

import contextlib
import os
import statistics
import subprocess
import sys
import time

import numpy as np

from .harness import Result

MEMORY_STEPS = 20


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


WORKLOADS = {
    "MLP 784-512-512-10, batch 64, Adam": (_mlp, 1.5),
    "CNN 2 conv + linear, batch 32, 1x28x28, Adam": (_cnn, 2.0),
    "transformer 2 layers d128 4 heads, ctx 64, batch 16, AdamW": (_transformer, 2.0),
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


def interleaved_medians(fn_a, fn_b, *, min_time=2.0, rounds=9, warmup=2):
    """Median seconds per call of ``fn_a`` and ``fn_b``, measured in alternating batches."""
    for _ in range(warmup):
        fn_a()
        fn_b()
    t0 = time.perf_counter()
    fn_a()
    fn_b()
    n = max(1, round(min_time / rounds / max(time.perf_counter() - t0, 1e-9)))
    a, b = [], []
    for _ in range(rounds):
        for fn, samples in ((fn_a, a), (fn_b, b)):
            t0 = time.perf_counter()
            for _ in range(n):
                fn()
            samples.append((time.perf_counter() - t0) / n)
    return statistics.median(a), statistics.median(b)


def peak_rss_kib(library, workload, steps=MEMORY_STEPS):
    """Peak RSS (KiB) of a fresh Python running ``steps`` steps of ``workload`` on ``library``."""
    cmd = [sys.executable, "-m", "benchmarks.training", "--child", library, workload, str(steps)]
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = subprocess.run(cmd, cwd=root, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise RuntimeError(f"memory child for {library} / {workload} failed "
                           f"(exit {out.returncode}):\n{out.stderr}")
    return int(out.stdout.split()[-1])


def _one_thread_each(strata, torch):
    """A context in which both libraries compute on one thread (BLAS included), or None without
    threadpoolctl. On a shared machine, 2-thread timings swing with the other load (a thread
    whose partner is descheduled waits for it); one thread each compares the libraries' work."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        return None

    @contextlib.contextmanager
    def limited():
        before = strata.get_num_threads(), torch.get_num_threads()
        with threadpool_limits(1):
            strata.set_num_threads(1)
            torch.set_num_threads(1)
            try:
                yield
            finally:
                strata.set_num_threads(before[0])
                torch.set_num_threads(before[1])
    return limited()


def run(strata, torch):
    results = []
    for name, (build, target) in WORKLOADS.items():
        s_time, t_time = interleaved_medians(make_step(strata, build), make_step(torch, build))
        results.append(Result(f"{name}: step", s_time, t_time, target))
    single = _one_thread_each(strata, torch)
    if single is not None:
        with single:
            for name, (build, _) in WORKLOADS.items():
                s_time, t_time = interleaved_medians(make_step(strata, build),
                                                     make_step(torch, build))
                results.append(Result(f"{name}: step, 1 thread each", s_time, t_time))
    for name in WORKLOADS:
        s_rss = peak_rss_kib("strata", name) / 1024
        t_rss = peak_rss_kib("torch", name) / 1024
        results.append(Result(f"{name}: peak RSS, {MEMORY_STEPS} steps", s_rss, t_rss,
                              MEMORY_TARGET, unit="MiB"))
    return results


def _child(library, workload, steps):
    import importlib
    m = importlib.import_module(library)
    step = make_step(m, WORKLOADS[workload][0])
    for _ in range(steps):
        step()
    with open("/proc/self/status") as f:
        hwm = next(line for line in f if line.startswith("VmHWM:"))
    print(hwm.split()[1])   # KiB


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        _child(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    else:
        import strata
        import torch

        from .harness import machine, table
        print(f"Machine: {machine()}; torch threads: {torch.get_num_threads()}")
        print(table(run(strata, torch)))
