"""Issue 2's workloads: per-op overhead and big single ops."""

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
         lambda m, x, y: x + y, 3)
    pair("x.sum(), 1 element", lambda m: (m.tensor(one),), lambda m, x: x.sum(), 3)
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
