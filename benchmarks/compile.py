"""Issue 9's compiled workloads: strata.compile(backend="inductor") against torch eager and
torch.compile, same run, same inputs.

    python -m benchmarks.compile             # this group alone
    python -m benchmarks --filter compile

- an 11-op pointwise chain on 4M float32 (target <= 0.15x torch eager);
- the MLP 784-512-512-10 training step, batch 64, Adam (forward + loss + backward compiled, the
  optimizer step eager on both sides; target <= 0.7x), the tiny GPT step (<= 0.8x) and the CNN
  step (<= 1.0x) of benchmarks/training.py the same way;
- the generated eager kernels: gelu/erf/tanh and the tanh/sigmoid/gelu backward ops on 0.5M
  float32, softmax and layer_norm on 4096x1024 (targets <= 1.0x for those two);
- the cold compile of that step in a fresh cache, and the first call of a fresh process with a
  warm cache (fresh subprocesses; targets 2 s and 0.15 s, "torch" = torch.compile's).
Times alternate the libraries batch by batch (``training.interleaved_medians``); the machine may
be shared, so ratios are what to read.
"""

import os
import subprocess
import sys
import tempfile
import time

import numpy as np

from .harness import Result
from .training import _cnn, _mlp, _transformer, interleaved_medians

CHAIN_SIZE = 1 << 22


def chain(x):
    """11 pointwise ops."""
    y = (x * 1.5 + 0.25).sigmoid()
    y = (y * x - 0.5).abs()
    y = (y + 1.0).log() * 0.5
    return (y.tanh() + x).relu() - 0.1


def _train_step(m, compiled, build=_mlp):
    m.manual_seed(0)
    model, opt, x, y = build(m)
    cross_entropy = m.nn.functional.cross_entropy

    def forward_backward(x, y):
        loss = cross_entropy(model(x), y)
        loss.backward()
        return loss
    fb = m.compile(forward_backward, backend="inductor") if compiled else forward_backward

    def step():
        opt.zero_grad()
        fb(x, y)
        opt.step()
    return step


FIRST_CALL = """
import sys, time
t0 = time.perf_counter()
import {lib} as m
sys.path.insert(0, {root!r})
from benchmarks.compile import _train_step
step = _train_step(m, True)
t1 = time.perf_counter()
step()
print(time.perf_counter() - t1)
"""


def first_call_seconds(library, cache_dir):
    """Seconds of the first compiled step of a fresh process whose cache is ``cache_dir``."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = {**os.environ, "STRATA_CACHE_DIR": cache_dir, "TORCHINDUCTOR_CACHE_DIR": cache_dir,
           "PYTHONPATH": os.path.join(root, "src")}
    done = subprocess.run([sys.executable, "-c", FIRST_CALL.format(lib=library, root=root)],
                          env=env, capture_output=True, text=True, timeout=600, check=False)
    if done.returncode != 0:
        raise RuntimeError(done.stderr)
    return float(done.stdout.split()[-1])


def eager_kernels(strata, torch):
    """The CPU backend's generated eager kernels (compile/inductor/eager.py) against torch."""
    rng = np.random.default_rng(0)
    flat = rng.standard_normal(1 << 19, dtype=np.float32)
    rows = rng.standard_normal((4096, 1024), dtype=np.float32)
    cases = [
        ("gelu, 0.5M float32", flat, lambda m, x: m.nn.functional.gelu(x), None),
        ("erf, 0.5M float32", flat, lambda m, x: m.erf(x), None),
        ("tanh, 0.5M float32", flat, lambda m, x: m.tanh(x), None),
        ("softmax, 4096x1024 float32", rows, lambda m, x: m.softmax(x, -1), 1.0),
        ("layer_norm, 4096x1024 float32", rows,
         lambda m, x: m.nn.functional.layer_norm(x, (1024,)), 1.0),
        ("tanh_backward, 0.5M float32", flat, lambda m, x: m.ops.aten.tanh_backward(x, x), None),
        ("sigmoid_backward, 0.5M float32", flat,
         lambda m, x: m.ops.aten.sigmoid_backward(x, x), None),
        ("gelu_backward, 0.5M float32", flat, lambda m, x: m.ops.aten.gelu_backward(x, x), None),
    ]
    results = []
    for name, a, fn, target in cases:
        xs, xt = strata.tensor(a), torch.tensor(a)
        s, t = interleaved_medians(lambda fn=fn, xs=xs: fn(strata, xs),
                                   lambda fn=fn, xt=xt: fn(torch, xt), min_time=1.0)
        results.append(Result(f"eager {name}", s, t, target))
    return results


def run(strata, torch, *, with_torch_compile=True):
    results = eager_kernels(strata, torch)
    rng = np.random.default_rng(0)
    a = rng.standard_normal(CHAIN_SIZE, dtype=np.float32)
    xs, xt = strata.tensor(a), torch.tensor(a)
    s_chain = strata.compile(chain, backend="inductor")
    s, t = interleaved_medians(lambda: s_chain(xs), lambda: chain(xt))
    results.append(Result("11-op pointwise chain, 4M float32, compiled", s, t, 0.15))
    if with_torch_compile:
        t_chain = torch.compile(chain)
        s, tc = interleaved_medians(lambda: s_chain(xs), lambda: t_chain(xt))
        results.append(Result("11-op pointwise chain vs torch.compile", s, tc))
    s, t = interleaved_medians(_train_step(strata, True), _train_step(torch, False))
    results.append(Result("MLP train step, compiled (torch: eager)", s, t, 0.7))
    if with_torch_compile:
        s, tc = interleaved_medians(_train_step(strata, True), _train_step(torch, True))
        results.append(Result("MLP train step, compiled vs torch.compile", s, tc))
    for name, build, target in (("tiny GPT", _transformer, 0.8), ("CNN", _cnn, 1.0)):
        s, t = interleaved_medians(_train_step(strata, True, build),
                                   _train_step(torch, False, build))
        results.append(Result(f"{name} train step, compiled (torch: eager)", s, t, target))
        if with_torch_compile:
            s, tc = interleaved_medians(_train_step(strata, True, build),
                                        _train_step(torch, True, build))
            results.append(Result(f"{name} train step, compiled vs torch.compile", s, tc))
    firsts = {}
    for library in ("strata",) + (("torch",) if with_torch_compile else ()):
        with tempfile.TemporaryDirectory() as cache:
            firsts[library] = (first_call_seconds(library, cache),
                               first_call_seconds(library, cache))
    nan = (float("nan"), float("nan"))
    for k, what in enumerate(("cold compile, fresh cache (target <= 2 s)",
                              "first call of a fresh process, warm cache (target <= 0.15 s)")):
        results.append(Result(f"MLP train step: {what}; torch = torch.compile",
                              firsts["strata"][k], firsts.get("torch", nan)[k]))
    return results


if __name__ == "__main__":
    import torch

    import strata

    from .harness import machine, table
    started = time.perf_counter()
    rows = run(strata, torch, with_torch_compile="--no-torch-compile" not in sys.argv)
    print(f"Machine: {machine()}; torch threads: {torch.get_num_threads()}; "
          f"{time.perf_counter() - started:.0f} s")
    print(table(rows))
