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
- the MLP step's floor: its eight matrix products alone, with the step's shapes and layouts,
  each side its own BLAS (strata: OpenBLAS through the compiled wrapper's ``_matmul`` and
  ``_matmul_pair`` on its pool; torch: ``torch.mm``), and those GEMMs as a fraction of torch
  eager's whole step: no compiled step gets below that fraction (``mlp_products``);
- the cold compile of that step in a fresh cache, and the first call of a fresh process with a
  warm cache (fresh subprocesses; targets 2 s and 0.15 s, "torch" = torch.compile's).
Each timing runs in a fresh process per library, the libraries alternating round by round
(``harness.fresh_process_medians``); the machine may be shared, so ratios are what to read.
"""

import itertools
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

from .harness import Result, child_main, fresh_pair, fresh_process_medians, median_time, sides
from .training import _cnn, _cnn_sgd, _gpt, _mlp, _transformer

ROUNDS = 3
EAGER_ROUNDS = 2   # eight eager kernels: fewer rounds keep the group short

CHAIN_SIZE = 1 << 22
# calls before timing, either side: compiling, then (strata) the row tiles' tuning and the
# graph program's recording and checked run at the third or fourth call (~70-120 ms once in a
# tiny GPT step; Note [Graph programs]), which a batch of the first calls would count
WARMUP = 6


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
    """Seconds of the first compiled step of a fresh process whose cache is ``cache_dir``.
    Python caches bytecode as it does by default (a ``PYTHONDONTWRITEBYTECODE`` here is
    dropped): the compile stack is imported at the first compiled call, and compiling its
    modules' source again in every process took 60 of strata's ~130 ms. An installed package
    ships its bytecode, as torch's does; the cold run writes it for a source checkout."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = {**os.environ, "STRATA_CACHE_DIR": cache_dir, "TORCHINDUCTOR_CACHE_DIR": cache_dir,
           "PYTHONPATH": os.path.join(root, "src")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    done = subprocess.run([sys.executable, "-c", FIRST_CALL.format(lib=library, root=root)],
                          env=env, capture_output=True, text=True, timeout=600, check=False)
    if done.returncode != 0:
        raise RuntimeError(done.stderr)
    return float(done.stdout.split()[-1])


def _eager_cases():
    rng = np.random.default_rng(0)
    flat = rng.standard_normal(1 << 19, dtype=np.float32)
    rows = rng.standard_normal((4096, 1024), dtype=np.float32)
    return {
        "gelu, 0.5M float32": (flat, lambda m, x: m.nn.functional.gelu(x), None),
        "erf, 0.5M float32": (flat, lambda m, x: m.erf(x), None),
        "tanh, 0.5M float32": (flat, lambda m, x: m.tanh(x), None),
        "softmax, 4096x1024 float32": (rows, lambda m, x: m.softmax(x, -1), 1.0),
        "layer_norm, 4096x1024 float32":
            (rows, lambda m, x: m.nn.functional.layer_norm(x, (1024,)), 1.0),
        "tanh_backward, 0.5M float32": (flat, lambda m, x: m.ops.aten.tanh_backward(x, x), None),
        "sigmoid_backward, 0.5M float32":
            (flat, lambda m, x: m.ops.aten.sigmoid_backward(x, x), None),
        "gelu_backward, 0.5M float32":
            (flat, lambda m, x: m.ops.aten.gelu_backward(x, x), None),
    }


EAGER = list(_eager_cases())


def mlp_products(rng=None, batch=64, sizes=(784, 512, 512, 10)):
    """The matrix products of the MLP step (``_mlp``), call by call as its compiled graphs run
    them (the generated wrappers' Extern lines; ``tests/compile/test_mlp_floor.py`` checks the
    match): forward ``x @ W.T`` per Linear; backward, from the last Linear down, the input's
    gradient ``dY @ W`` side by side with the weight's ``dY.T @ X`` (one ``_matmul_pair``), the
    first Linear's weight gradient alone (the input needs none). Each call is a list of one or
    two ``(a, b, out)`` float32 NumPy triples; transposes are views, as in the step."""
    rng = rng or np.random.default_rng(0)

    def normal(*shape):
        return rng.standard_normal(shape, dtype=np.float32)
    weights = [normal(n_out, n_in) for n_in, n_out in itertools.pairwise(sizes)]
    inputs = [normal(batch, n) for n in sizes[:-1]]      # x, then each hidden activation
    grads = [normal(batch, n) for n in sizes[1:]]       # each Linear's output gradient

    def product(a, b):
        return a, b, np.empty((a.shape[0], b.shape[1]), np.float32)
    forward = [[product(x, w.T)] for x, w in zip(inputs, weights)]
    backward = [[product(g, w), product(g.T, x)]
                for x, w, g in zip(inputs[1:], weights[1:], grads[1:])][::-1]
    return forward + backward + [[product(grads[0].T, inputs[0])]]


def _gemms(m):
    """One pass over ``mlp_products`` with library ``m``'s own BLAS: strata's as the compiled
    step calls it, torch's ``mm`` (the calls of its eager Linear forward and backward)."""
    calls = mlp_products()
    if m.__name__ == "strata":
        from strata.compile.inductor.compile_fx import _matmul, _matmul_pair
        runs = [(_matmul if len(call) == 1 else _matmul_pair,
                 [operand for triple in call for operand in triple]) for call in calls]

        def run():
            for fn, operands in runs:
                fn(*operands)
        return run
    triples = [[m.from_numpy(a) for a in triple] for call in calls for triple in call]

    def run_torch():
        for a, b, out in triples:
            m.mm(a, b, out=out)
    return run_torch


STEPS = {"MLP": _mlp, "tiny GPT": _transformer, "CNN": _cnn,
         # issue 9's own wording: a GELU MLP and masked_fill attention; SGD with momentum
         "tiny GPT (GELU, masked_fill)": _gpt, "CNN (SGD momentum)": _cnn_sgd}


def _measure(m, workload, torch_mode="eager"):
    """Child: median seconds per call of ``workload`` on library ``m``: an eager kernel
    ("eager <case>"), the pointwise "chain", the MLP step's products ("MLP GEMMs") or a train
    step ("MLP", "tiny GPT", "CNN"); strata
    compiled, torch eager or (``torch_mode`` "compile") torch.compile'd."""
    if workload.startswith("eager "):
        a, fn, _ = _eager_cases()[workload[len("eager "):]]
        x = m.tensor(a)
        return median_time(lambda: fn(m, x), min_time=0.3, repeats=5)
    if workload == "MLP GEMMs":
        return median_time(_gemms(m), min_time=0.3, repeats=5)
    compiled = m.__name__ == "strata" or torch_mode == "compile"
    if workload == "chain":
        x = m.tensor(np.random.default_rng(0).standard_normal(CHAIN_SIZE, dtype=np.float32))
        f = ((m.compile(chain, backend="inductor") if m.__name__ == "strata"
              else m.compile(chain)) if compiled else chain)
        return median_time(lambda: f(x), min_time=0.3, repeats=5, warmup=WARMUP)
    return median_time(_train_step(m, compiled, STEPS[workload]), min_time=0.3, repeats=5,
                       warmup=WARMUP)


def eager_kernels(strata=None, torch=None, rounds=None):
    """The CPU backend's generated eager kernels (compile/inductor/eager.py) against torch."""
    libraries = sides(strata, torch)
    cases = _eager_cases()
    return [fresh_pair("compile", f"eager {name}", f"eager {name}", cases[name][2], libraries,
                       rounds=rounds or EAGER_ROUNDS)
            for name in EAGER]


def run(strata=None, torch=None, *, with_torch_compile=True, rounds=None):
    """Each timing in a fresh process per library, strata and PyTorch alternating
    (``harness.fresh_process_medians``); strata's compiled median serves both its rows (vs torch
    eager, vs torch.compile)."""
    rounds = rounds or ROUNDS
    libraries = sides(strata, torch)
    with_torch_compile = with_torch_compile and "torch" in libraries
    results = eager_kernels(strata, torch, min(rounds, EAGER_ROUNDS))

    def compared(workload, name, target, name_vs_compile):
        times = fresh_process_medians("compile", workload, rounds=rounds, libraries=libraries)
        s = times["strata"]
        results.append(Result(name, s, times.get("torch", s), target))
        if with_torch_compile and name_vs_compile:
            tc = fresh_process_medians("compile", workload, rounds=max(1, rounds - 1),
                                       libraries=("torch",),
                                       args=("compile",))["torch"]
            results.append(Result(name_vs_compile, s, tc))
        return times

    compared("chain", "11-op pointwise chain, 4M float32, compiled", 0.15,
             "11-op pointwise chain vs torch.compile")
    for name, target in (("MLP", 0.7), ("tiny GPT", 0.8), ("CNN", 1.0)):
        times = compared(name, f"{name} train step, compiled (torch: eager)", target,
                         f"{name} train step, compiled vs torch.compile")
        if name == "MLP":
            gemms = fresh_process_medians("compile", "MLP GEMMs", rounds=rounds,
                                          libraries=libraries)
            results.append(Result("MLP train step's 8 GEMMs alone, each side its own BLAS",
                                  gemms["strata"], gemms.get("torch", gemms["strata"])))
            results.append(Result("MLP step floor: strata's GEMMs alone / torch eager's whole "
                                  "step", gemms["strata"], times.get("torch", times["strata"])))
    for name, target in (("tiny GPT (GELU, masked_fill)", 0.8), ("CNN (SGD momentum)", 1.0)):
        compared(name, f"{name} train step, compiled (torch: eager)", target, None)
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


if __name__ == "__main__" and not child_main(_measure):
    import torch

    import strata

    from .harness import machine, table
    started = time.perf_counter()
    rows = run(strata, torch, with_torch_compile="--no-torch-compile" not in sys.argv)
    print(f"Machine: {machine()}; torch threads: {torch.get_num_threads()}; "
          f"{time.perf_counter() - started:.0f} s")
    print(table(rows))
