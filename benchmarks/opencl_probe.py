"""Where the opencl device's time goes, for a GPU session's one short run (scripts/gpu_check.sh):

    python -m benchmarks.opencl_probe [--quick] [--parts launch,steps,device,gemm]

1. GEMM blockings: GFLOP/s of strata's register-blocked GEMM at 4096^3 for each (output tile,
   outputs per work-item) candidate, to pick the device's default.
2. Launch cost: a bare pyopencl enqueue of a one-element kernel (arguments set once; it makes
   an event per call), strata's own enqueue of it (backends/opencl/driver.py: no event) and
   strata's ``x + y`` on one element, each host-only (no wait: wall and this thread's CPU time)
   and with a wait per call.
3. Training steps: kernel launches per step, host time to enqueue a step (the device may still
   be busy; wall and CPU time) and the device-inclusive step time, for the benchmark's MLP and
   tiny GPT.
4. Per-op profile (``--parts ops``): one tiny GPT step's host CPU time and launches by what the
   model called: each top-level op of the forward (by op name), each backward node (by node
   name, the ops its formula calls included), the optimizer's step, and what is left (the
   engine, modules, Python). Profiling routes every op through the dispatcher's ``call`` (the
   operator fast path is cleared), so each figure is a little above the unprofiled one.
5. Device profile (``--parts device``): the kernels' own time per tiny GPT step by op, from the
   profiler's OpenCL events: whether a step waits on the host or on the device, and on which
   kernels.
"""

import argparse
import ctypes
import time

import numpy as np

from .harness import median_time
from .opencl import mlp_adam, tiny_gpt

BLOCKINGS = ((64, 4), (64, 8), (128, 8), (128, 4))
FLUSH_INTERVALS = (1, 4, 8, 32, 128)


def gemm_blockings(strata, n):
    from strata.compile.inductor import opencl_rows
    default = opencl_rows.GEMM_BLOCKINGS
    rng = np.random.default_rng(0)
    a, b = (strata.tensor(rng.standard_normal((n, n), dtype=np.float32)).to("opencl")
            for _ in range(2))
    want = (a[:64] @ b[:, :64]).cpu().numpy()
    print(f"\n## GEMM {n}^3 by blocking (default {default})")
    print("| blocking | GFLOP/s | max error vs default |")
    print("|---|---|---|")
    for blocking in BLOCKINGS:
        opencl_rows.GEMM_BLOCKINGS = (blocking,)
        try:
            out = a @ b
            err = float(np.abs(out[:64, :64].cpu().numpy() - want).max())
            s = median_time(lambda: a @ b, sync=strata.opencl.synchronize, repeats=5)
            print(f"| {blocking} | {2 * n ** 3 / s / 1e9:.0f} | {err:.2e} |")
        except Exception as exc:            # a blocking the device refuses: say so, go on
            print(f"| {blocking} | failed: {type(exc).__name__}: {str(exc)[:120]} | |")
    opencl_rows.GEMM_BLOCKINGS = default


def launch_cost(strata):
    import pyopencl as cl

    from strata.backends.opencl import runtime
    from strata.backends.opencl.driver import KernelArgs
    rt = runtime.get(0)
    stream = rt.current_stream()
    queue = stream.queue
    buf = cl.Buffer(rt.context, cl.mem_flags.READ_WRITE, 4)
    knl = cl.Program(rt.context, "__kernel void k(__global float* x) { x[0] += 1.0f; }"
                     ).build().k
    knl.set_args(buf)
    direct = KernelArgs(rt.driver, knl)
    direct.set([buf])
    n = 2000

    def timed(fn, wait, queue):
        """(wall seconds, this thread's CPU seconds) per call."""
        fn()
        queue.finish()
        t0, c0 = time.perf_counter(), time.thread_time()
        for _ in range(n):
            fn()
            if wait:
                queue.finish()
        host, cpu = time.perf_counter() - t0, time.thread_time() - c0
        queue.finish()
        return host / n, cpu / n

    raw = lambda: cl.enqueue_nd_range_kernel(queue, knl, (1,), None)
    bare = lambda: rt.driver.enqueue(stream.handle, direct, (1,))
    # the same enqueue on a queue without profiling (strata's streams profile: Event timing)
    plain = cl.CommandQueue(rt.context, rt.cl_device)
    plain_handle = ctypes.c_void_p(plain.int_ptr)
    unprofiled = lambda: rt.driver.enqueue(plain_handle, direct, (1,))

    def set_and_enqueue():                  # one argument set again each call, as a new buffer
        direct.held[0] = None
        direct.set([buf])
        rt.driver.enqueue(stream.handle, direct, (1,))

    # the work-group size given: the driver need not choose one at each enqueue
    sized = lambda: rt.driver.enqueue(stream.handle, direct, (1,), (1,))

    def enqueue_and_flush():
        rt.driver.enqueue(stream.handle, direct, (1,))
        rt.driver.flush(stream.handle)

    x, y = strata.ones(1, device="opencl"), strata.ones(1, device="opencl")
    add = lambda: x + y
    print("\n## Launch cost per call (us)")
    print("| call | host only | host CPU time | with a wait each |")
    print("|---|---|---|---|")
    for name, fn in (("pyopencl enqueue (an event per call), args set once", raw),
                     ("strata's driver enqueue (no event), args set once", bare),
                     ("the same on a queue without profiling", unprofiled),
                     ("strata's driver enqueue, work-group size given", sized),
                     ("strata's enqueue, one buffer argument set each call", set_and_enqueue),
                     ("strata's enqueue and a clFlush each call", enqueue_and_flush),
                     ("strata x + y", add)):
        q = plain if fn is unprofiled else queue
        host, cpu = timed(fn, False, q)
        print(f"| {name} | {host * 1e6:.1f} | {cpu * 1e6:.1f} | "
              f"{timed(fn, True, q)[0] * 1e6:.1f} |")

    # the benchmark's figure (a batch of calls, then one synchronize) by how often a stream
    # flushes (streams.py's Note [Flushing]): whether the device or the host sets the pace
    from strata.backends.opencl import streams
    default = streams.FLUSH_EVERY
    print("\n| x + y, device-inclusive (us), flushing every | " +
          " | ".join(str(k) for k in FLUSH_INTERVALS) + " |")
    print("|---|" + "---|" * len(FLUSH_INTERVALS))
    cells = []
    for every in FLUSH_INTERVALS:
        streams.FLUSH_EVERY = every
        cells.append(f"{median_time(add, sync=strata.opencl.synchronize) * 1e6:.1f}")
    streams.FLUSH_EVERY = default
    print("| |" + " | ".join(cells) + " |")


def steps(strata, quick):
    from strata.backends.opencl import runtime
    count = [0]
    launch = runtime.OpenCLRuntime.launch
    prepared = runtime.OpenCLRuntime.enqueue_prepared     # the pointwise lane's launches

    def counted(self, *args, **kwargs):
        count[0] += 1
        return launch(self, *args, **kwargs)

    def counted_prepared(self, *args, **kwargs):
        count[0] += 1
        return prepared(self, *args, **kwargs)

    sync = strata.opencl.synchronize
    rows = (("MLP 784-512-512-10 Adam, batch 64", lambda: mlp_adam(strata, "opencl",
                                                                 64 if quick else 512)),
            ("tiny GPT (2 layers, d128, ctx 64, batch 16)",
             lambda: tiny_gpt(strata, "opencl", 32 if quick else 128,
                              context=16 if quick else 64, batch=4 if quick else 16)))
    print("\n## Training steps on opencl")
    print("| step | launches | host ms (no wait) | host CPU ms | device-inclusive ms |")
    print("|---|---|---|---|---|")
    for name, make in rows:
        step = make()
        step()
        sync()
        runtime.OpenCLRuntime.launch = counted
        runtime.OpenCLRuntime.enqueue_prepared = counted_prepared
        count[0] = 0
        step()
        runtime.OpenCLRuntime.launch = launch
        runtime.OpenCLRuntime.enqueue_prepared = prepared
        launches = count[0]
        sync()
        t0, c0 = time.perf_counter(), time.thread_time()
        for _ in range(5):
            step()
        host, cpu = (time.perf_counter() - t0) / 5, (time.thread_time() - c0) / 5
        sync()
        full = median_time(step, sync=sync, repeats=5)
        print(f"| {name} | {launches} | {host * 1e3:.2f} | {cpu * 1e3:.2f} | "
              f"{full * 1e3:.2f} |")


class _OpProfile:
    """Host CPU time (``time.thread_time``) and launches of the outermost op or backward node
    running, by name (see the module docstring, part 4)."""

    def __init__(self):
        self.depth = 0
        self.launches = 0
        self.rows = {}          # name -> [calls, seconds, launches]

    def timed(self, name, fn, *args, **kwargs):
        if self.depth:
            return fn(*args, **kwargs)
        self.depth = 1
        launches, t0 = self.launches, time.thread_time()
        try:
            return fn(*args, **kwargs)
        finally:
            row = self.rows.setdefault(name, [0, 0.0, 0])
            row[0] += 1
            row[1] += time.thread_time() - t0
            row[2] += self.launches - launches
            self.depth = 0


def op_profile(strata, quick, top=25):
    from strata.autograd import graph, kernel, view_history
    from strata.backends.opencl import runtime
    from strata.ops.op import REGISTRY, OpOverload
    step = tiny_gpt(strata, "opencl", 32 if quick else 128, context=16 if quick else 64,
                    batch=4 if quick else 16)
    for _ in range(2):
        step()
    strata.opencl.synchronize()
    prof = _OpProfile()
    patched = []

    def patch(owner, attr, wrapper_of):
        original = getattr(owner, attr)
        patched.append((owner, attr, original))
        setattr(owner, attr, wrapper_of(original))

    def counting(original):
        def counted(*args, **kwargs):
            prof.launches += 1
            return original(*args, **kwargs)
        return counted

    patch(runtime.OpenCLRuntime, "launch", counting)
    patch(runtime.OpenCLRuntime, "enqueue_prepared", counting)
    patch(OpOverload, "__call__", lambda call: lambda op, *a, **k: prof.timed(
        f"op {op.qualname}", call, op, *a, **k))
    for node_class in (kernel.OpNode, graph.AccumulateGrad, view_history.CopySlices):
        patch(node_class, "apply", lambda apply: lambda node, grads: prof.timed(
            f"backward {node.name()}", apply, node, grads))
    optimizer = type(step.__closure__[step.__code__.co_freevars.index("opt")].cell_contents)
    patch(optimizer, "step", lambda fn: lambda self, *a, **k: prof.timed(
        f"optimizer {type(self).__name__}.step", fn, self, *a, **k))
    for op in REGISTRY.values():        # every op through ``call``: see the docstring
        op._operator_entries.clear()
    steps = 5
    t0 = time.thread_time()
    try:
        for _ in range(steps):
            step()
    finally:
        total = time.thread_time() - t0
        for owner, attr, original in reversed(patched):
            setattr(owner, attr, original)
    strata.opencl.synchronize()
    rows = sorted(prof.rows.items(), key=lambda kv: -kv[1][1])
    counted = sum(r[1] for r in prof.rows.values())
    print(f"\n## Host CPU time of one tiny GPT step by op (profiled: {total / steps * 1e3:.2f} "
          f"ms, {prof.launches / steps:.0f} launches)")
    print("| op or node | calls | launches | host us per call | host us per step | share |")
    print("|---|---|---|---|---|---|")
    for name, (calls, seconds, launches) in rows[:top]:
        print(f"| {name} | {calls / steps:.0f} | {launches / steps:.0f} | "
              f"{seconds / calls * 1e6:.1f} | {seconds / steps * 1e6:.0f} | "
              f"{seconds / total:.1%} |")
    rest = rows[top:]
    print(f"| {len(rest)} others | {sum(r[1][0] for r in rest) / steps:.0f} | "
          f"{sum(r[1][2] for r in rest) / steps:.0f} | | "
          f"{sum(r[1][1] for r in rest) / steps * 1e6:.0f} | "
          f"{sum(r[1][1] for r in rest) / total:.1%} |")
    print(f"| outside ops and nodes (engine, modules, Python) | | | | "
          f"{(total - counted) / steps * 1e6:.0f} | {(total - counted) / total:.1%} |")


def device_profile(strata, quick, top=15):
    """Device time of three tiny GPT steps by op, from the profiler's OpenCL events (the
    queue's profiling counters): which kernels the device spends a step in."""
    from strata.profiler import ProfilerActivity, profile
    step = tiny_gpt(strata, "opencl", 32 if quick else 128, context=16 if quick else 64,
                    batch=4 if quick else 16)
    for _ in range(2):
        step()
    strata.opencl.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.SIM]) as prof:
        for _ in range(3):
            step()
        strata.opencl.synchronize()
    rows = sorted((e for e in prof.key_averages() if e.self_device_time_total > 0),
                  key=lambda e: -e.self_device_time_total)
    total = sum(e.self_device_time_total for e in rows)
    print(f"\n## Device time of one tiny GPT step by op (profiled: {total / 3 / 1e3:.2f} ms of "
          "kernels and copies)")
    print("| op | calls | device us per step | share |")
    print("|---|---|---|---|")
    for e in rows[:top]:
        print(f"| {e.key} | {e.count / 3:.0f} | {e.self_device_time_total / 3:.0f} | "
              f"{e.self_device_time_total / total:.1%} |")


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="small sizes (PoCL)")
    parser.add_argument("--parts", default="launch,steps,device,gemm",
                        help="which parts to run, comma-separated: launch, steps, gemm, ops, "
                             "device (default: all but ops)")
    args = parser.parse_args()
    parts = set(args.parts.split(","))
    import strata
    print("opencl device:", strata.opencl.get_device_name())
    if "launch" in parts:
        launch_cost(strata)
    if "steps" in parts:
        steps(strata, args.quick)
    if "ops" in parts:
        op_profile(strata, args.quick)
    if "device" in parts:
        device_profile(strata, args.quick)
    if "gemm" in parts:
        gemm_blockings(strata, 256 if args.quick else 4096)


if __name__ == "__main__":
    main()
