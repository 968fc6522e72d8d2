"""What the tracer costs: the per-op benchmark (``x + y``, 1 element) with tracing off, with the
reporting compiled out, and with the profiler recording.

    python -m benchmarks.tracer          # this group alone
    python -m benchmarks --filter tracer

"Compiled out" is a build where the reporting points do not exist: every function on the
measured path that checks ``trace.active`` is recompiled with the check replaced by ``False``
(which the compiler deletes with its block) and swapped in for the measurement. The dispatcher
needs no such build: while tracing is off, ``OpOverload.__call__`` *is* the untraced ``call``.
Target: tracing off within 2% of compiled out.
"""

import ast
import contextlib
import inspect
import os
import sys
import textwrap
import time

import numpy as np

from .harness import Result, fmt_time, median_time

TARGET = 1.02


class _StripReporting(ast.NodeTransformer):
    def visit_Attribute(self, node):
        if isinstance(node.value, ast.Name) and node.value.id == "trace" \
                and node.attr == "active":
            return ast.copy_location(ast.Constant(False), node)
        return self.generic_visit(node)


def compiled_out(fn):
    """``fn`` recompiled with every ``trace.active`` check replaced by ``False``."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    tree = ast.fix_missing_locations(_StripReporting().visit(tree))
    namespace = {}
    exec(compile(tree, inspect.getsourcefile(fn), "exec"), fn.__globals__, namespace)
    return namespace[fn.__name__]


def _reporting_functions():
    """The functions on the measured paths that contain reporting points: the general autograd
    kernel, the engine, and the records generated so far (Note [Generated records])."""
    from strata.autograd import engine, kernel, record
    return [kernel.autograd_kernel, engine.execute, *record.RECORDS.values()]


class _CompiledOut:
    """Swap in the compiled-out twins' code for the ``with`` block. The code object is swapped,
    not the module attribute: the dispatcher holds the kernels themselves."""

    def __init__(self):
        self.swaps = []
        for fn in _reporting_functions():
            self.swaps.append((fn, fn.__code__, compiled_out(fn).__code__))

    def __enter__(self):
        for fn, _, twin in self.swaps:
            fn.__code__ = twin

    def __exit__(self, *exc):
        for fn, original, _ in self.swaps:
            fn.__code__ = original


def _profiled(m, fn, ops=1000):
    """Seconds per call of ``fn`` while ``m``'s profiler records (a fresh profile per batch)."""
    def run():
        with m.profiler.profile(activities=[m.profiler.ProfilerActivity.CPU]):
            for _ in range(ops):
                fn()
    return median_time(run, repeats=5) / ops


@contextlib.contextmanager
def _quiet_stderr():
    """torch's profiler backend prints a line to fd 2 at every start and stop."""
    sys.stderr.flush()
    saved = os.dup(2)
    with open(os.devnull, "w") as null:
        os.dup2(null.fileno(), 2)
        try:
            yield
        finally:
            os.dup2(saved, 2)
            os.close(saved)


def _off_and_absent(fn, rounds=150, batch=300):
    """Seconds per call: tracing off (measured twice, to show the noise floor) and reporting
    compiled out. Each is the fastest of many short batches, interleaved, so that a busy machine
    (which only ever adds time) and its drift do not land on one side: a 2% difference is far
    below the spread of medians on a shared machine."""
    median_time(fn, min_time=0.05)   # warm up (and generate the records it runs)
    absent_build = _CompiledOut()
    off = again = absent = float("inf")
    for _ in range(rounds):
        off = min(off, _batch(fn, batch))
        with absent_build:
            absent = min(absent, _batch(fn, batch))
        again = min(again, _batch(fn, batch))
    return off, again, absent


def _batch(fn, n):
    t0 = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - t0) / n


def run(strata, torch):
    one = np.ones(1, np.float32)
    workloads = {
        "x + y, 1 element": lambda m: (m.tensor(one), m.tensor(one)),
        "x + y, 1 element, x requires grad":
            lambda m: (m.tensor(one, requires_grad=True), m.tensor(one)),
    }
    from strata.dispatch import dispatcher
    from strata.ops.op import OpOverload
    # strata's side first: torch's profiler leaves threads and state behind in this process that
    # slowed strata's profiled adds 2-3x when they were measured after it
    rows = []
    for name, make in workloads.items():
        sx, sy = make(strata)
        s_add = lambda: sx + sy   # noqa: E731
        assert OpOverload.__call__ is dispatcher.call   # tracing off: the untraced fast path
        off, again, absent = _off_and_absent(s_add)
        rows.append((name, off, again, absent, _profiled(strata, s_add)))
    results = []
    for name, off, _, _, on in rows:
        tx, ty = workloads[name](torch)
        t_add = lambda: tx + ty   # noqa: E731
        t_off = median_time(t_add)
        with _quiet_stderr():
            t_on = _profiled(torch, t_add)
        results.append(Result(f"{name}, tracer off", off, t_off, None))
        results.append(Result(f"{name}, profiler on", on, t_on, None))
    print("| per-op (strata) | tracing off | reporting compiled out | off/compiled-out "
          "| noise: off/off again | profiler on | on/off |")
    print("|---|---|---|---|---|---|---|")
    for name, off, again, absent, on in rows:
        print(f"| {name} | {fmt_time(off)} | {fmt_time(absent)} | {off / absent:.3f}x "
              f"(target <= {TARGET}x) | {off / again:.3f}x | {fmt_time(on)} | "
              f"{on / off:.1f}x |")
    print()
    return results


if __name__ == "__main__":
    import strata
    import torch
    from .harness import machine, table
    print(f"Machine: {machine()}; torch threads: {torch.get_num_threads()}")
    print(table(run(strata, torch)))
