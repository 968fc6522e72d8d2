"""Issue 2's and issue 11's workloads: per-op overhead of small ops and big single ops."""

import numpy as np

from .harness import Result, median_time


def run(strata, torch):
    rng = np.random.default_rng(0)
    results = []

    def pair(name, make, fn, target, **kw):
        s_args, t_args = make(strata), make(torch)
        results.append(Result(name, median_time(lambda: fn(strata, *s_args), **kw),
                              median_time(lambda: fn(torch, *t_args), **kw), target))

    one = np.ones(1, np.float32)
    pair("x + y, 1 element (per-op overhead)", lambda m: (m.tensor(one), m.tensor(one)),
         lambda m, x, y: x + y, 1.5)
    pair("x + y, 1 element, x requires grad",
         lambda m: (m.tensor(one, requires_grad=True), m.tensor(one)), lambda m, x, y: x + y, 2)
    pair("x.sum(), 1 element", lambda m: (m.tensor(one),), lambda m, x: x.sum(), 1.5)
    eight = np.ones((8, 8), np.float32)
    pair("v[3], 8x8 (integer __getitem__)", lambda m: (m.tensor(eight),), lambda m, v: v[3], 2)

    def linear(m):
        m.manual_seed(0)
        return m.nn.Linear(4, 2), m.tensor(np.ones((1, 4), np.float32))
    pair("nn.Linear(4, 2) on a 1x4 input", linear, lambda m, layer, x: layer(x), 2)
    pair("x.item(), 0-dim", lambda m: (m.tensor(np.float32(1.5)),), lambda m, x: x.item(), 2)
    a = rng.standard_normal((1024, 1024), dtype=np.float32)
    b = rng.standard_normal((1024, 1024), dtype=np.float32)
    pair("1024x1024 @ 1024x1024 float32", lambda m: (m.tensor(a), m.tensor(b)),
         lambda m, x, y: x @ y, 1.3, min_time=1.0)
    s = rng.standard_normal((4096, 1024), dtype=np.float32)
    pair("softmax(4096x1024 float32, dim=-1)", lambda m: (m.tensor(s),),
         lambda m, x: x.softmax(-1), 1.3, min_time=1.0)
    v = rng.standard_normal(4 * 1024 * 1024, dtype=np.float32)

    def chain(m, x):
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

    pair("10 pointwise ops on 4M float32", lambda m: (m.tensor(v),), chain, 1.3, min_time=1.0)
    return results
