"""Issue 2's and issue 11's workloads: per-op overhead of small ops and big single ops.

Each side of each workload is timed in its own fresh process, strata and PyTorch alternating
(``harness.fresh_process_medians``): in one process torch's OpenMP pool and NumPy's OpenBLAS
pool slow each other.

    python -m benchmarks.ops             # this group alone
    python -m benchmarks --filter ops
"""

import sys

import numpy as np

from .harness import child_main, fresh_pair, median_time, sides

ROUNDS = 3


def _rng():
    """The same inputs in every child."""
    return np.random.default_rng(0)


ONE = np.ones(1, np.float32)
EIGHT = np.ones((8, 8), np.float32)


def _linear(m):
    m.manual_seed(0)
    return m.nn.Linear(4, 2), m.tensor(np.ones((1, 4), np.float32))


def _chain(m, x):
    y = x * 2.0
    y = y + 1.0
    y = y.sin()
    y = y * y
    y = y - 0.5
    y = y.exp()
    y = y / 3.0
    y = y.tanh()
    y = y.abs()
    return y.sqrt()


def _matmul_inputs(m):
    rng = _rng()
    a = rng.standard_normal((1024, 1024), dtype=np.float32)
    b = rng.standard_normal((1024, 1024), dtype=np.float32)
    return m.tensor(a), m.tensor(b)


def _flat(m):
    return (m.tensor(_rng().standard_normal(1 << 19, dtype=np.float32)),)


def _pool_inputs(m):
    x = m.tensor(_rng().standard_normal((32, 32, 26, 26), dtype=np.float32), requires_grad=True)
    return x, m.ones((32, 32, 13, 13))


def _pool_step(m, x, grad):
    m.nn.functional.max_pool2d(x, 2).backward(grad)


def _conv_inputs(m):
    rng = _rng()
    x = m.tensor(rng.standard_normal((32, 32, 13, 13), dtype=np.float32), requires_grad=True)
    conv = m.nn.Conv2d(32, 64, 3)
    return conv, x, m.ones((32, 64, 11, 11))


def _conv_step(m, conv, x, grad):
    conv(x).backward(grad)


# name: (make inputs, fn(m, *inputs), target, median_time keywords)
WORKLOADS = {
    "x + y, 1 element (per-op overhead)":
        (lambda m: (m.tensor(ONE), m.tensor(ONE)), lambda m, x, y: x + y, 1.5, {}),
    "x + y, 1 element, x requires grad":
        (lambda m: (m.tensor(ONE, requires_grad=True), m.tensor(ONE)),
         lambda m, x, y: x + y, 2, {}),
    "x.sum(), 1 element": (lambda m: (m.tensor(ONE),), lambda m, x: x.sum(), 1.5, {}),
    "v[3], 8x8 (integer __getitem__)": (lambda m: (m.tensor(EIGHT),), lambda m, v: v[3], 2, {}),
    "nn.Linear(4, 2) on a 1x4 input": (_linear, lambda m, layer, x: layer(x), 2, {}),
    "x.item(), 0-dim": (lambda m: (m.tensor(np.float32(1.5)),), lambda m, x: x.item(), 2, {}),
    "1024x1024 @ 1024x1024 float32": (_matmul_inputs, lambda m, x, y: x @ y, 1.3,
                                      {"min_time": 0.3}),
    "softmax(4096x1024 float32, dim=-1)":
        (lambda m: (m.tensor(_rng().standard_normal((4096, 1024), dtype=np.float32)),),
         lambda m, x: x.softmax(-1), 1.3, {"min_time": 0.3}),
    # the generated eager kernels of issue 9 §5 (compile/inductor/eager*.py)
    "silu, 0.5M float32": (_flat, lambda m, x: m.nn.functional.silu(x), None, {"min_time": 0.3}),
    "silu_backward, 0.5M float32":
        (_flat, lambda m, x: m.ops.aten.silu_backward(x, x), None, {"min_time": 0.3}),
    "softplus, 0.5M float32":
        (_flat, lambda m, x: m.nn.functional.softplus(x), None, {"min_time": 0.3}),
    "softplus_backward, 0.5M float32":
        (_flat, lambda m, x: m.ops.aten.softplus_backward(x, x, 1, 20), None, {"min_time": 0.3}),
    "max_pool2d 2x2 forward+backward, 32x32x26x26 float32":
        (_pool_inputs, _pool_step, None, {"min_time": 0.3}),
    "conv2d 32->64 3x3 forward+backward, 32x32x13x13 float32":
        (_conv_inputs, _conv_step, None, {"min_time": 0.3}),
    "10 pointwise ops on 4M float32":
        (lambda m: (m.tensor(_rng().standard_normal(4 * 1024 * 1024, dtype=np.float32)),),
         _chain, 1.3, {"min_time": 0.3}),
}


def _measure(m, workload):
    """Child: median seconds per call of ``workload`` on library ``m``."""
    make, fn, _, kw = WORKLOADS[workload]
    args = make(m)
    return median_time(lambda: fn(m, *args), **kw)


def run(strata=None, torch=None, rounds=ROUNDS):
    libraries = sides(strata, torch)
    return [fresh_pair("ops", name, name, target, libraries, rounds=rounds)
            for name, (_, _, target, _) in WORKLOADS.items()]


if __name__ == "__main__":
    if not child_main(_measure):
        import torch

        import strata

        from .harness import machine, table
        print(f"Machine: {machine()}; fresh process per timing")
        print(table(run(strata, torch, rounds=int(sys.argv[1]) if sys.argv[1:] else ROUNDS)))
