"""Thread CPU time of one compiled training step, strata against torch eager, each timing in a
fresh process, the sides interleaved round by round (the machine may be shared: thread CPU
time counts only what the step's own thread ran, not the time it waited for a core). Wall time
is printed too: torch's second thread's work is not in its main thread's CPU time, so for
"strata 1 thread vs torch 2" read the wall row (inflated by the load, on both sides).

    python -m benchmarks.compile_step_time [--rounds 5] [--steps 20] [--before SRC]
                                           [--threads N] [MODEL...]

Sides: strata (this checkout's ``src``; ``--threads`` threads, default 1, so that its thread
CPU time is the whole step's), ``strata before`` (the ``src`` folder of another checkout, with
``--before``; the same threads), torch with 1 and with 2 threads. The
step is benchmarks/compile.py's: forward, loss and backward compiled (torch: eager), then
``opt.step()``. Prints the median over rounds of each process's median step.
"""

import os
import statistics
import subprocess
import sys

CHILD = """
import sys, time, statistics
sys.path.insert(0, {root!r})
import {lib} as m
if {threads}:
    m.set_num_threads({threads})
from benchmarks.compile import STEPS, _train_step
step = _train_step(m, {compiled}, STEPS[{model!r}])
for _ in range(3):
    step()
cpu, wall = [], []
for _ in range({steps}):
    start, start_wall = time.thread_time(), time.perf_counter()
    step()
    cpu.append(time.thread_time() - start)
    wall.append(time.perf_counter() - start_wall)
print(statistics.median(cpu), statistics.median(wall))
"""


def _one(side, model, steps, root, before, strata_threads):
    lib, threads, src = {"strata": ("strata", strata_threads, os.path.join(root, "src")),
                         "strata before": ("strata", strata_threads,
                                           before and os.path.join(before, "src")),
                         "torch 1 thread": ("torch", 1, None),
                         "torch 2 threads": ("torch", 2, None)}[side]
    env = dict(os.environ)
    env["PYTHONPATH"] = src or ""
    code = CHILD.format(root=root, lib=lib, threads=threads, compiled=lib == "strata",
                        model=model, steps=steps)
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, timeout=600, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{side} {model}: {done.stderr[-2000:]}")
    cpu, wall = done.stdout.split()[-2:]
    return float(cpu), float(wall)


def main(argv):
    rounds, steps, before, strata_threads = 5, 20, None, 1
    models = []
    args = iter(argv)
    for a in args:
        if a == "--rounds":
            rounds = int(next(args))
        elif a == "--steps":
            steps = int(next(args))
        elif a == "--before":
            before = next(args)
        elif a == "--threads":
            strata_threads = int(next(args))
        else:
            models.append(a)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    sides = ["strata"] + (["strata before"] if before else []) + \
        ["torch 1 thread", "torch 2 threads"]
    for model in models or ["MLP", "CNN", "tiny GPT"]:
        samples = {s: [] for s in sides}
        for _ in range(rounds):
            for side in sides:
                samples[side].append(_one(side, model, steps, root, before, strata_threads))
        for k, what in enumerate(("thread CPU", "wall")):
            medians = {s: statistics.median(v[k] for v in samples[s]) for s in sides}
            parts = [f"{s} {medians[s] * 1e3:.2f} ms" for s in sides]
            ratios = [f"strata/{s} {medians['strata'] / medians[s]:.2f}x"
                      for s in sides if s != "strata"]
            print(f"{model}, {what} ({rounds} rounds): " + ", ".join(parts) + "; "
                  + ", ".join(ratios), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
