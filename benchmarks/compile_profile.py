"""Where a compiled training step's time goes: generated kernels, BLAS, the convolution
Externs, eager Fallback steps, the optimizer, and the Python between them.

    python -m benchmarks.compile_profile [MLP|CNN|tiny GPT ...] [--steps N] [--whole]
    python -m benchmarks.compile_profile --amdahl [--threads 2] [MODEL ...]
    python -m benchmarks.compile_profile --phases [MODEL ...]

Each model's step is benchmarks/compile.py's (forward + loss + backward compiled, then
``opt.step()``; ``--whole`` compiles the whole step, ``opt.step()`` included). Times are thread
CPU time (``time.thread_time``: the machine may be shared), summed over the timed steps and
shown per step. The wrapper's helpers are wrapped with timers before the graphs are compiled;
"python" is what the compiled call costs beyond its kernels, GEMMs and Fallbacks (the wrapper's
own lines, allocation, capture's guards, AOT autograd's runtime wrapper). Strata only: run it
in a fresh process per model for numbers that do not share caches.

``--amdahl`` measures how the step would scale over threads without trusting wall time on a
shared machine: every chunk of the CPU pool's parallel loops (``array._Loop.drain``) is timed in
its own thread's CPU time, so each kernel, GEMM and ``opt.step()`` splits into *serial* time (the
caller's thread outside any parallel loop) and *parallel* time (all threads' CPU time inside
one; the native pool is turned off, since its C threads' chunks cannot be timed from Python).
The serial fraction s bounds the step's speedup on n threads by 1 / (s + (1 - s) / n)
(Amdahl); the largest serial items are listed, since they are what to move into parallel loops.

``--phases`` splits the Python of the compiled call by layer: each layer (the compiled frame,
its guards, AOT autograd's runtime wrapper, ``autograd.Function.apply``, the generated
wrappers, the backward engine and the compiled backward's node, the kernels, GEMMs,
convolutions, Check steps and Fallback targets, ``zero_grad`` and ``opt.step()``) is timed in
thread CPU time, and its *own* time excludes the layers timed inside it, so the own times add
up to the step.
"""

import collections
import sys
import threading
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
            spent = time.thread_time() - start
            timers.seconds["kernels (generated C)"] += spent
            timers.calls["kernels (generated C)"] += 1
            timers.seconds[f"kernel {name} ({outer}x{inner})"] += spent
            timers.calls[f"kernel {name} ({outer}x{inner})"] += 1

    cfx.Autotuner = TimedTuner
    cfx._matmul = timers.wrap("GEMM (BLAS)", cfx._matmul)
    cfx._matmul_pair = timers.wrap("GEMM (BLAS)", cfx._matmul_pair)   # two GEMMs per call
    cfx._convolution = timers.wrap("conv (Extern)", cfx._convolution)
    cfx._check_targets = timers.wrap("Check steps", cfx._check_targets)
    cfx.eager_row_check = timers.wrap("Check steps", cfx.eager_row_check)
    cfx._check_index_bounds = timers.wrap("Check steps", cfx._check_index_bounds)

    def exec_timing_targets(code, scope):
        scope["targets"] = {name: timers.wrap(f"Fallback {target}", target)
                            for name, target in scope["targets"].items()}
        exec(code, scope)  # noqa: S102  (the inductor's own wrapper)
    cfx.exec = exec_timing_targets


class _ParallelClock:
    """CPU time spent in the pool's parallel loops: all threads together, and the caller's."""

    def __init__(self):
        self.lock = threading.Lock()
        self.all = self.caller = 0.0
        self.caller_ident = threading.get_ident()

    def install(self):
        from strata.backends.cpu import array
        drain, clock = array._Loop.drain, self

        def timed_drain(loop):
            start = time.thread_time()
            try:
                drain(loop)
            finally:
                spent = time.thread_time() - start
                with clock.lock:
                    clock.all += spent
                    if threading.get_ident() == clock.caller_ident:
                        clock.caller += spent
        array._Loop.drain = timed_drain

    def now(self):
        """(caller's thread CPU time, parallel CPU time of all threads, the caller's share). A
        pool thread may add its last chunk's time just after the loop returned: it then counts
        in the next item, never outside the step's total."""
        with self.lock:
            return time.thread_time(), self.all, self.caller


class _Amdahl:
    """Serial and parallel CPU seconds per item (a kernel, a GEMM, ``opt.step()``)."""

    def __init__(self, clock):
        self.clock = clock
        self.serial = collections.Counter()
        self.parallel = collections.Counter()

    def timed(self, key_of, fn):
        def run(*args, **kwargs):
            before = self.clock.now()
            try:
                return fn(*args, **kwargs)
            finally:
                self.add(key_of(*args), before, self.clock.now())
        return run

    def add(self, key, before, after):
        (t0, all0, caller0), (t1, all1, caller1) = before, after
        self.serial[key] += (t1 - t0) - (caller1 - caller0)
        self.parallel[key] += all1 - all0

    def clear(self):
        self.serial.clear()
        self.parallel.clear()


def _instrument_amdahl(amdahl):
    from strata.compile.inductor import compile_fx as cfx
    cfx.Autotuner.__call__ = amdahl.timed(
        lambda tuner, lib, name, outer, inner, arrays: f"kernel {name} ({outer}x{inner})",
        cfx.Autotuner.__call__)
    cfx._matmul = amdahl.timed(lambda a, b, out: f"GEMM {_product(a, b)}", cfx._matmul)
    cfx._matmul_pair = amdahl.timed(
        lambda a, b, out, c, d, out2: f"GEMM pair {_product(a, b)}, {_product(c, d)}",
        cfx._matmul_pair)
    cfx._convolution = amdahl.timed(_convolution_key, cfx._convolution)

    def exec_timing_targets(code, scope):   # Fallback steps and array Externs (2x2 pools)
        scope["targets"] = {
            name: amdahl.timed(lambda *a, _t=target: f"target {getattr(_t, '__name__', _t)}",
                               target)
            for name, target in scope["targets"].items()}
        exec(code, scope)  # noqa: S102  (the inductor's own wrapper)
    cfx.exec = exec_timing_targets


def _product(a, b):
    return f"{'x'.join(map(str, a.shape))} @ {'x'.join(map(str, b.shape))}"


def _convolution_key(x, w, bias, stride, padding, dilation, transposed, groups, out):
    """``conv`` (or ``conv transposed``) with its operands' shapes: the Extern running eager's
    batch-blocked convolution (backends/cpu/nn.py)."""
    kind = " transposed" if transposed else ""
    return f"conv{kind} {'x'.join(map(str, x.shape))} * {'x'.join(map(str, w.shape))}"


def amdahl_profile(name, steps, threads):
    import strata
    strata.config.native_pool = False   # its C threads' chunks are out of Python's sight
    strata.set_num_threads(threads)
    clock = _ParallelClock()
    clock.install()
    amdahl = _Amdahl(clock)
    _instrument_amdahl(amdahl)
    step = _train_step(strata, True, STEPS[name])
    optimizer = _closure_optimizer(step)
    optimizer.step = amdahl.timed(lambda: "opt.step()", optimizer.step)
    for _ in range(3):
        step()
    amdahl.clear()
    before = clock.now()
    for _ in range(steps):
        step()
    amdahl.add("whole step", before, clock.now())
    return {k: v / steps for k, v in amdahl.serial.items()}, \
        {k: v / steps for k, v in amdahl.parallel.items()}


def amdahl_report(name, threads, serial, parallel):
    s_total, p_total = serial.pop("whole step"), parallel.pop("whole step")
    s = s_total / (s_total + p_total)
    print(f"{name}, {threads} threads: CPU time per step {(s_total + p_total) * 1e3:.2f} ms = "
          f"serial {s_total * 1e3:.2f} + parallel {p_total * 1e3:.2f} (all threads); "
          f"serial fraction {s:.2f}; Amdahl bound on {threads} threads "
          f"{1 / (s + (1 - s) / threads):.2f}x")
    groups = collections.defaultdict(lambda: [0.0, 0.0, 0])
    for key in serial:
        group = groups[key.split(" ")[0]]
        group[0] += serial[key]
        group[1] += parallel[key]
        group[2] += 1
    python = s_total - sum(g[0] for g in groups.values())
    for group, (s_ms, p_ms, n) in sorted(groups.items()):
        print(f"  {group:12s} serial {s_ms * 1e3:7.2f} ms  parallel {p_ms * 1e3:7.2f} ms"
              f"  ({n} distinct)")
    print(f"  {'python etc.':12s} serial {python * 1e3:7.2f} ms")
    print("  largest serial items:")
    for key in sorted(serial, key=lambda k: -serial[k])[:12]:
        print(f"    {serial[key] * 1e3:6.2f} ms serial, {parallel[key] * 1e3:6.2f} ms parallel"
              f"  {key}")


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


class _Layers:
    """Own and inclusive thread CPU time per layer: a stack of the layers running now, each
    layer's time also charged to the layer around it as a child's."""

    def __init__(self):
        self.own, self.inclusive = collections.Counter(), collections.Counter()
        self.calls = collections.Counter()
        self.stack = []
        self.caller = threading.get_ident()

    def wrap(self, key, fn):
        def timed(*args, **kwargs):
            if threading.get_ident() != self.caller:   # a pool thread: not the caller's time
                return fn(*args, **kwargs)
            self.stack.append(0.0)
            start = time.thread_time()
            try:
                return fn(*args, **kwargs)
            finally:
                spent = time.thread_time() - start
                children = self.stack.pop()
                self.own[key] += spent - children
                self.inclusive[key] += spent
                self.calls[key] += 1
                if self.stack:
                    self.stack[-1] += spent
        return timed

    def clear(self):
        for counter in (self.own, self.inclusive, self.calls):
            counter.clear()


def phases_profile(name, steps):
    """Per-step own/inclusive seconds and calls of each layer of ``_train_step``'s step."""
    from strata.autograd import engine, function
    from strata.compile.aot import aot_autograd
    from strata.compile.capture import eval_frame
    from strata.compile.inductor import compile_fx as cfx
    layers = _Layers()
    patches = [(eval_frame.CompileContext, "run", "compiled frame (capture's entry)"),
               (aot_autograd._AOTFunction, "__call__", "AOT runtime wrapper"),
               (cfx.CompiledGraph, "__call__", "generated wrapper (its own lines)"),
               (engine, "execute", "backward engine"),
               (function.BackwardCFunction, "apply", "compiled backward's node"),
               (cfx, "_matmul", "GEMMs"), (cfx, "_matmul_pair", "GEMMs"),
               (cfx, "_convolution", "convolutions (eager's kernel)"),
               (cfx, "_check_targets", "Check steps"), (cfx, "eager_row_check", "Check steps"),
               (cfx, "_check_index_bounds", "Check steps"),
               (cfx.Autotuner, "__call__", "generated C kernels")]
    for owner, attribute, key in patches:
        setattr(owner, attribute, layers.wrap(key, getattr(owner, attribute)))

    def exec_timing_targets(code, scope):
        scope["targets"] = {name: layers.wrap("Fallback steps (eager kernels)", target)
                            for name, target in scope["targets"].items()}
        exec(code, scope)  # noqa: S102  (the inductor's own wrapper)
    cfx.exec = exec_timing_targets
    apply = function.Function.__dict__["apply"].__func__
    function.Function.apply = classmethod(layers.wrap("autograd.Function.apply", apply))
    step = _train_step(__import__("strata"), True, STEPS[name])
    optimizer = _closure_optimizer(step)
    optimizer.step = layers.wrap("opt.step()", optimizer.step)
    optimizer.zero_grad = layers.wrap("zero_grad()", optimizer.zero_grad)
    step = layers.wrap("the step's loop (benchmark)", step)
    for _ in range(3):
        step()
    for ctx in list(eval_frame._all_contexts):   # the guards exist once the frames are captured
        for cache in ctx.caches.values():
            for entry in cache.entries:
                entry.guard_fn = layers.wrap("guards", entry.guard_fn)
    layers.clear()
    for _ in range(steps):
        step()
    return ({k: v / steps for k, v in layers.own.items()},
            {k: v / steps for k, v in layers.inclusive.items()},
            {k: v / steps for k, v in layers.calls.items()})


def phases_report(name, own, inclusive, calls):
    total = inclusive["the step's loop (benchmark)"]
    print(f"{name}: {total * 1e3:.2f} ms thread CPU time per step; own time of each layer "
          f"(without the layers timed inside it), then its inclusive time")
    for key in sorted(own, key=lambda k: -own[k]):
        print(f"  {key:36s} own {own[key] * 1e3:7.3f} ms  inclusive "
              f"{inclusive[key] * 1e3:7.3f} ms  {calls[key]:5.1f} calls")


def _closure_optimizer(step):
    for cell in step.__closure__:
        value = cell.cell_contents
        if hasattr(value, "param_groups"):
            return value
    raise RuntimeError("benchmarks.compile._train_step's step holds no optimizer")


KERNELS_SHOWN = 12


def report(name, per_step, seconds, calls):
    print(f"{name}: {per_step * 1e3:.2f} ms thread CPU time per step")
    accounted = 0.0
    fallbacks = {k: v for k, v in seconds.items() if k.startswith("Fallback")}
    for key in ("kernels (generated C)", "GEMM (BLAS)", "conv (Extern)", "Check steps",
                "opt.step()"):
        if key in seconds:
            accounted += seconds[key]
            print(f"  {key:32s} {seconds[key] * 1e3:7.2f} ms  {calls[key]:5.0f} calls")
    for key, value in sorted(fallbacks.items(), key=lambda kv: -kv[1]):
        accounted += value
        print(f"  {key[:60]:60s} {value * 1e3:7.2f} ms  {calls[key]:5.0f} calls")
    print(f"  {'python and the rest':32s} {(per_step - accounted) * 1e3:7.2f} ms")
    kernels = sorted(((k, v) for k, v in seconds.items() if k.startswith("kernel ")),
                     key=lambda kv: -kv[1])
    if kernels:
        print("  the generated kernels that take longest:")
    for key, value in kernels[:KERNELS_SHOWN]:
        print(f"    {key[7:67]:60s} {value * 1e3:7.3f} ms  {calls[key]:5.0f} calls")


if __name__ == "__main__":
    args = sys.argv[1:]
    steps = 20
    if "--steps" in args:
        i = args.index("--steps")
        steps = int(args[i + 1])
        del args[i:i + 2]
    threads = 2
    if "--threads" in args:
        i = args.index("--threads")
        threads = int(args[i + 1])
        del args[i:i + 2]
    whole, amdahl, phases = "--whole" in args, "--amdahl" in args, "--phases" in args
    names = [a for a in args if a not in ("--whole", "--amdahl", "--phases")] or list(STEPS)
    for model in names:
        np.random.seed(0)
        if phases:
            phases_report(model, *phases_profile(model, steps))
        elif amdahl:
            amdahl_report(model, threads, *amdahl_profile(model, steps, threads))
        else:
            report(model + (" (whole step compiled)" if whole else ""),
                   *profile(model, steps, whole))
