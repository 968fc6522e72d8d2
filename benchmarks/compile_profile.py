"""Where a compiled training step's time goes: generated kernels, BLAS, eager Fallback steps,
the optimizer, and the Python between them.

    python -m benchmarks.compile_profile [MLP|CNN|tiny GPT ...] [--steps N] [--whole]

Each model's step is benchmarks/compile.py's (forward + loss + backward compiled, then
``opt.step()``; ``--whole`` compiles the whole step, ``opt.step()`` included). Times are thread
CPU time (``time.thread_time``: the machine may be shared), summed over the timed steps and
shown per step. The wrapper's helpers are wrapped with timers before the graphs are compiled;
"python" is what the compiled call costs beyond its kernels, GEMMs and Fallbacks (the wrapper's
own lines, allocation, capture's guards, AOT autograd's runtime wrapper). Strata only: run it
in a fresh process per model for numbers that do not share caches.
"""

import collections
import sys
import time

import numpy as np

from .compile import STEPS, _train_step


class _Timers:
    def __init__(self):
        self.seconds = collections.Counter()
        self.calls = collections.Counter()

    def wrap(self, key, fn):
        def timed(*args, **kwargs):
            start = time.thread_time()
            try:
                return fn(*args, **kwargs)
            finally:
                self.seconds[key] += time.thread_time() - start
                self.calls[key] += 1
        return timed


def _instrument(timers):
    """Time the wrapper's kernel calls, GEMMs, Checks and Fallback targets (per aten op)."""
    from strata.compile.inductor import compile_fx as cfx

    class TimedTuner(cfx.Autotuner):
        def __call__(self, lib, name, outer, inner, arrays):
            start = time.thread_time()
            super().__call__(lib, name, outer, inner, arrays)
            timers.seconds["kernels (generated C)"] += time.thread_time() - start
            timers.calls["kernels (generated C)"] += 1

    cfx.Autotuner = TimedTuner
    cfx._matmul = timers.wrap("GEMM (BLAS)", cfx._matmul)
    cfx._check_targets = timers.wrap("Check steps", cfx._check_targets)
    cfx.eager_row_check = timers.wrap("Check steps", cfx.eager_row_check)
    cfx._check_index_bounds = timers.wrap("Check steps", cfx._check_index_bounds)

    def exec_timing_targets(code, scope):
        scope["targets"] = {name: timers.wrap(f"Fallback {target}", target)
                            for name, target in scope["targets"].items()}
        exec(code, scope)  # noqa: S102  (the inductor's own wrapper)
    cfx.exec = exec_timing_targets


def profile(name, steps, whole):
    import strata
    timers = _Timers()
    _instrument(timers)
    if whole:
        strata.manual_seed(0)
        model, opt, x, y = STEPS[name](strata)

        def plain_step():
            opt.zero_grad()
            loss = strata.nn.functional.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
        # opt.step() is part of the compiled graph (its kernels are counted with the others):
        # a timer around it would put a graph break (time.thread_time) inside the capture
        step = strata.compile(plain_step, backend="inductor")
    else:
        step = _train_step(strata, True, STEPS[name])
        optimizer = _closure_optimizer(step)
        optimizer.step = timers.wrap("opt.step()", optimizer.step)
    for _ in range(3):
        step()
    timers.seconds.clear()
    timers.calls.clear()
    start = time.thread_time()
    for _ in range(steps):
        step()
    total = time.thread_time() - start
    return total / steps, {k: v / steps for k, v in timers.seconds.items()}, \
        {k: v / steps for k, v in timers.calls.items()}


def _closure_optimizer(step):
    for cell in step.__closure__:
        value = cell.cell_contents
        if hasattr(value, "param_groups"):
            return value
    raise RuntimeError("benchmarks.compile._train_step's step holds no optimizer")


def report(name, per_step, seconds, calls):
    print(f"{name}: {per_step * 1e3:.2f} ms thread CPU time per step")
    accounted = 0.0
    fallbacks = {k: v for k, v in seconds.items() if k.startswith("Fallback")}
    for key in ("kernels (generated C)", "GEMM (BLAS)", "Check steps", "opt.step()"):
        if key in seconds:
            accounted += seconds[key]
            print(f"  {key:32s} {seconds[key] * 1e3:7.2f} ms  {calls[key]:5.0f} calls")
    for key, value in sorted(fallbacks.items(), key=lambda kv: -kv[1]):
        accounted += value
        print(f"  {key[:60]:60s} {value * 1e3:7.2f} ms  {calls[key]:5.0f} calls")
    print(f"  {'python and the rest':32s} {(per_step - accounted) * 1e3:7.2f} ms")


if __name__ == "__main__":
    args = sys.argv[1:]
    steps = 20
    if "--steps" in args:
        i = args.index("--steps")
        steps = int(args[i + 1])
        del args[i:i + 2]
    whole = "--whole" in args
    names = [a for a in args if a != "--whole"] or list(STEPS)
    for model in names:
        np.random.seed(0)
        report(model + (" (whole step compiled)" if whole else ""), *profile(model, steps, whole))
