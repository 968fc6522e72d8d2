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
import inspect
import textwrap

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
    """(module, name) of the functions on the measured paths that contain reporting points."""
    from strata.autograd import engine, kernel
    return [(kernel, "record"), (engine, "execute")]


class _CompiledOut:
    """Swap in the compiled-out twins of the reporting functions for the ``with`` block."""

    def __enter__(self):
        self.saved = []
        for module, name in _reporting_functions():
            fn = getattr(module, name)
            self.saved.append((module, name, fn))
            setattr(module, name, compiled_out(fn))

    def __exit__(self, *exc):
        for module, name, fn in self.saved:
            setattr(module, name, fn)


def _profiled(m, fn, ops=1000):
    """Seconds per call of ``fn`` while ``m``'s profiler records (a fresh profile per batch)."""
    def run():
        with m.profiler.profile(activities=[m.profiler.ProfilerActivity.CPU]):
            for _ in range(ops):
                fn()
    return median_time(run, repeats=5) / ops


def _off_and_absent(fn, rounds=3):
    """Best median of several alternating rounds each: tracing off, and reporting compiled out
    (alternating keeps a busy machine's drift from landing on one side)."""
    off, absent = [], []
    for _ in range(rounds):
        off.append(median_time(fn))
        with _CompiledOut():
            absent.append(median_time(fn))
    return min(off), min(absent)


def run(strata, torch):
    one = np.ones(1, np.float32)
    workloads = {
        "x + y, 1 element": lambda m: (m.tensor(one), m.tensor(one)),
        "x + y, 1 element, x requires grad":
            lambda m: (m.tensor(one, requires_grad=True), m.tensor(one)),
    }
    results, rows = [], []
    from strata.dispatch import dispatcher
    from strata.ops.op import OpOverload
    for name, make in workloads.items():
        sx, sy = make(strata)
        tx, ty = make(torch)
        s_add = lambda: sx + sy   # noqa: E731
        t_add = lambda: tx + ty   # noqa: E731
        assert OpOverload.__call__ is dispatcher.call   # tracing off: the untraced fast path
        off, absent = _off_and_absent(s_add)
        on = _profiled(strata, s_add)
        t_off = median_time(t_add)
        t_on = _profiled(torch, t_add)
        rows.append((name, off, absent, on))
        results.append(Result(f"{name}, tracer off", off, t_off, None))
        results.append(Result(f"{name}, profiler on", on, t_on, None))
    print("| per-op (strata) | tracing off | reporting compiled out | off/compiled-out "
          "| profiler on | on/off |")
    print("|---|---|---|---|---|---|")
    for name, off, absent, on in rows:
        print(f"| {name} | {fmt_time(off)} | {fmt_time(absent)} | {off / absent:.3f}x "
              f"(target <= {TARGET}x) | {fmt_time(on)} | {on / off:.1f}x |")
    print()
    return results


if __name__ == "__main__":
    import strata
    import torch
    from .harness import machine, table
    print(f"Machine: {machine()}; torch threads: {torch.get_num_threads()}")
    print(table(run(strata, torch)))
