"""The opencl device beside torch's GPU: strata on ``opencl`` (the NVIDIA OpenCL driver on a
GPU machine, PoCL elsewhere) against PyTorch on CUDA (on the CPU where there is none).

    python -m benchmarks.opencl            # the issue's sizes (run by scripts/gpu_check.sh)
    python -m benchmarks.opencl --quick    # small sizes: checks the script itself on PoCL

Workloads: a 1-element add (launch overhead), an MLP 784-512-512-10 Adam step at batch 64, a
tiny GPT training step, an fp32 GEMM 4096^3 (TF32 off on both sides) and an 11-op pointwise chain
over 4M elements, compiled (strata.compile vs torch.compile). Times are medians of repeated
batches, each batch ended by a device synchronisation, so they are device-inclusive.
"""

import argparse

import numpy as np

from .harness import Result, fmt_time, machine, median_time


def add_one(m, dev):
    x, y = m.ones(1, device=dev), m.ones(1, device=dev)
    return lambda: x + y


def mlp_adam(m, dev, hidden):
    m.manual_seed(0)
    nn = m.nn
    model = nn.Sequential(nn.Linear(784, hidden), nn.ReLU(), nn.Linear(hidden, hidden),
                          nn.ReLU(), nn.Linear(hidden, 10)).to(dev)
    opt = m.optim.Adam(model.parameters(), lr=1e-3)
    rng = np.random.default_rng(0)
    x = m.tensor(rng.standard_normal((64, 784), dtype=np.float32)).to(dev)
    y = m.tensor(rng.integers(0, 10, 64)).to(dev)

    def step():
        opt.zero_grad()
        nn.functional.cross_entropy(model(x), y).backward()
        opt.step()
    return step


def tiny_gpt(m, dev, width, layers=2, context=32, vocab=64, batch=8):
    """A decoder-only transformer step (embeddings, causal attention written out, GELU MLP,
    layer norms, cross entropy, AdamW): only ops the opencl device has kernels for."""
    m.manual_seed(0)
    nn, F = m.nn, m.nn.functional
    heads = 4
    blocks = [nn.ModuleDict({"ln1": nn.LayerNorm(width), "qkv": nn.Linear(width, 3 * width),
                             "proj": nn.Linear(width, width), "ln2": nn.LayerNorm(width),
                             "up": nn.Linear(width, 4 * width),
                             "down": nn.Linear(4 * width, width)})
              for _ in range(layers)]
    model = nn.ModuleDict({"tok": nn.Embedding(vocab, width), "pos": nn.Embedding(context, width),
                           "blocks": nn.ModuleList(blocks), "ln": nn.LayerNorm(width),
                           "head": nn.Linear(width, vocab)}).to(dev)
    mask = np.triu(np.full((context, context), -1e9, np.float32), 1)
    causal = m.tensor(mask).to(dev)
    rng = np.random.default_rng(0)
    tokens = m.tensor(rng.integers(0, vocab, (batch, context + 1))).to(dev)
    inputs, targets = tokens[:, :-1], tokens[:, 1:].contiguous().view(-1)
    positions = m.arange(context, device=dev)
    opt = m.optim.AdamW(model.parameters(), lr=1e-3)
    d = width // heads

    def forward():
        h = model["tok"](inputs) + model["pos"](positions)
        for b in model["blocks"]:
            q, k, v = b["qkv"](b["ln1"](h)).split(width, -1)
            q, k, v = (t.reshape(batch, context, heads, d).transpose(1, 2).contiguous()
                       for t in (q, k, v))
            att = m.softmax(q @ k.transpose(-2, -1).contiguous() * (d ** -0.5) + causal, -1)
            h = h + b["proj"]((att @ v).transpose(1, 2).contiguous().view(batch, context, width))
            h = h + b["down"](F.gelu(b["up"](b["ln2"](h))))
        logits = model["head"](model["ln"](h))
        return F.cross_entropy(logits.view(-1, vocab), targets)

    def step():
        opt.zero_grad()
        forward().backward()
        opt.step()
    return step


def gemm(m, dev, n):
    rng = np.random.default_rng(0)
    a, b = (m.tensor(rng.standard_normal((n, n), dtype=np.float32)).to(dev) for _ in range(2))
    return lambda: a @ b


def chain(x):
    """11 pointwise ops: one fused kernel when compiled."""
    y = x * 1.5 + 0.25
    y = y.sin() * y.cos() - y.exp() * 0.01
    return (y.abs() + 1.0).log().tanh().relu()


def pointwise_chain(m, dev, numel, compile_it):
    x = m.randn(numel).to(dev)
    fn = m.compile(chain) if compile_it else chain
    return lambda: fn(x)


def run(quick, torch_compile):
    import torch

    import strata
    cuda = torch.cuda.is_available()
    tdev = "cuda" if cuda else "cpu"
    if cuda:
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
    sync_s = strata.opencl.synchronize
    sync_t = torch.cuda.synchronize if cuda else (lambda: None)
    hidden, width, n, numel = (64, 32, 256, 1 << 16) if quick else (512, 128, 4096, 1 << 22)
    context, batch = (16, 4) if quick else (64, 16)     # the GPT: ctx 64, batch 16
    rows = [("1-element add", lambda m, d: add_one(m, d)),
            (f"MLP 784-{hidden}-{hidden}-10 Adam step, batch 64",
             lambda m, d: mlp_adam(m, d, hidden)),
            (f"tiny GPT step (2 layers, width {width}, context {context}, batch {batch})",
             lambda m, d: tiny_gpt(m, d, width, context=context, batch=batch)),
            (f"fp32 GEMM {n}^3 (TF32 off)", lambda m, d: gemm(m, d, n))]
    results = []
    for name, make in rows:
        s = median_time(make(strata, "opencl"), sync=sync_s, repeats=5)
        t = median_time(make(torch, tdev), sync=sync_t, repeats=5)
        results.append(Result(name, s, t))
    label = "torch.compile" if torch_compile else "torch eager"
    s = median_time(pointwise_chain(strata, "opencl", numel, True), sync=sync_s, repeats=5)
    t = median_time(pointwise_chain(torch, tdev, numel, torch_compile), sync=sync_t,
                    repeats=5)
    results.append(Result(f"11-op pointwise chain, {numel} elements, compiled ({label})", s, t))
    flops = 2 * n ** 3
    print(f"Machine: {machine()}")
    print(f"strata opencl device: {strata.opencl.get_device_name()}; torch device: "
          f"{torch.cuda.get_device_name() if cuda else 'cpu'}")
    print("| workload | strata (opencl) | torch (" + tdev + ") | strata/torch |")
    print("|---|---|---|---|")
    for r in results:
        print(f"| {r.name} | {fmt_time(r.strata_s)} | {fmt_time(r.torch_s)} | {r.ratio:.2f}x |")
    gemm_row = results[3]
    print(f"\nGEMM: strata {flops / gemm_row.strata_s / 1e9:.1f} GFLOP/s, "
          f"torch {flops / gemm_row.torch_s / 1e9:.1f} GFLOP/s")
    return results


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="small sizes (PoCL, CI)")
    parser.add_argument("--no-torch-compile", action="store_true",
                        help="compare the compiled chain with torch eager")
    args = parser.parse_args()
    run(args.quick, not args.no_torch_compile)


if __name__ == "__main__":
    main()
