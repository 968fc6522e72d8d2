"""Timing harness: medians of repeated runs, the ratio strata/torch, and the machine it ran on.

Never used by tests: speed is measured here and reported in README, never asserted.
"""

import os
import platform
import statistics
import time
from dataclasses import dataclass


@dataclass
class Result:
    name: str
    strata_s: float
    torch_s: float
    target: float | None = None
    unit: str = "time"

    @property
    def ratio(self) -> float:
        return self.strata_s / self.torch_s


def median_time(fn, *, min_time=0.2, repeats=7, warmup=2, sync=None) -> float:
    """Median seconds per call of ``fn`` over ``repeats`` batches sized to last ``min_time``;
    ``sync()`` (a device's synchronize) closes each batch, so asynchronous work is counted."""
    sync = sync or (lambda: None)
    for _ in range(warmup):
        fn()
    sync()
    n = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        sync()
        dt = time.perf_counter() - t0
        if dt >= min_time / repeats or n >= 1 << 20:
            break
        n *= 2
    samples = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        sync()
        samples.append((time.perf_counter() - t0) / n)
    return statistics.median(samples)


def fmt_time(s: float) -> str:
    if s < 1e-3:
        return f"{s * 1e6:.2f} us"
    if s < 1:
        return f"{s * 1e3:.2f} ms"
    return f"{s:.2f} s"


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    import numpy
    try:
        import torch
        torch_version = f"torch {torch.__version__}"
    except ModuleNotFoundError:
        torch_version = "no torch"
    return (f"{cpu}, {os.cpu_count()} cores, Python {platform.python_version()}, "
            f"NumPy {numpy.__version__}, {torch_version}")


def table(results, compared=True) -> str:
    """The markdown table; ``compared=False`` (no torch installed) shows strata's column only."""
    lines = ["| workload | strata | torch | strata/torch | target |",
             "|---|---|---|---|---|"] if compared else ["| workload | strata |", "|---|---|"]
    for r in results:
        if r.unit == "time":
            s, t = fmt_time(r.strata_s), fmt_time(r.torch_s)
        else:
            s, t = f"{r.strata_s:.0f} {r.unit}", f"{r.torch_s:.0f} {r.unit}"
        target = f"<= {r.target:g}x" if r.target else ""
        lines.append(f"| {r.name} | {s} | {t} | {r.ratio:.2f}x | {target} |" if compared
                     else f"| {r.name} | {s} |")
    return "\n".join(lines)


def fresh_process_medians(module, workload, *, rounds=5, libraries=("strata", "torch"), args=()):
    """Median seconds per step of ``workload`` for each library, each timing in a fresh Python
    (``python -m benchmarks.<module> --time <library> <workload> [args...]``), the libraries
    alternating round by round so a shared machine's drifting load lands on all of them. A child
    prints the median of its own timed steps (or any one number: a peak RSS); the result is the
    median over rounds."""
    import subprocess
    import sys
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    samples = {lib: [] for lib in libraries}
    for _ in range(rounds):
        for lib in libraries:
            cmd = [sys.executable, "-m", f"benchmarks.{module}", "--time", lib, workload,
                   *map(str, args)]
            out = subprocess.run(cmd, cwd=root, capture_output=True, text=True, check=False)
            if out.returncode != 0:
                raise RuntimeError(f"{module} child for {lib} / {workload} failed "
                                   f"(exit {out.returncode}):\n{out.stderr}")
            samples[lib].append(float(out.stdout.split()[-1]))
    return {lib: statistics.median(times) for lib, times in samples.items()}


def sides(strata, torch):
    """The libraries a group's children time: ``("strata",)`` when torch is not installed
    (``benchmarks/__main__.py`` then passes strata for torch, and the torch column is hidden)."""
    return ("strata",) if torch is None or torch is strata else ("strata", "torch")


def fresh_pair(module, name, workload, target, libraries, *, rounds=3, args=(), unit="time",
               scale=1.0):
    """A Result for ``workload`` timed by ``fresh_process_medians``; without torch the torch
    column repeats strata's (it is not shown)."""
    times = fresh_process_medians(module, workload, rounds=rounds, libraries=libraries, args=args)
    s = times["strata"] * scale
    return Result(name, s, times.get("torch", times["strata"]) * scale, target, unit)


def child_main(measure):
    """The ``--time <library> <workload> [args...]`` entry of a group's module: import only
    ``library`` (so neither library's thread pools share the process with the other's) and
    print ``measure(module, workload, *args)``. Returns False when argv is not a child's."""
    import importlib
    import sys
    if sys.argv[1:2] != ["--time"]:
        return False
    m = importlib.import_module(sys.argv[2])
    print(measure(m, sys.argv[3], *sys.argv[4:]))
    return True
