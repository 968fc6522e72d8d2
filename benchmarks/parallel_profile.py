"""How much of a training step the CPU pool can split, measured on one thread.

    python -m benchmarks.parallel_profile [CNN|MLP|tiny GPT] [--compiled] [--steps N] [--ops]

A wall-clock timing of two threads says little on a shared machine (another process takes a
core, and both threads wait for it). This measures the structure instead, on the caller's
thread alone (``time.thread_time``): the step runs with the pool set to two threads, but each
top-level ``parallel_for`` runs its chunks one after the other, as two threads would cut them,
each chunk timed. Time outside those regions is serial (Python, dispatch, kernels too small to
split); a region's two-thread time is the makespan of handing its chunks in order to whichever
of two threads is free first, the second thread starting ``WAKE`` seconds late (a sleeping pool
thread takes 30-50 us to start, Note [CPU parallel_for] in backends/cpu/array.py). The model
leaves out what slows real threads further: the GIL held by Python between a chunk's C calls,
and two threads sharing memory bandwidth. ``--ops`` splits the eager step by CPU kernel. The
native pool (backends/cpu/native_pool.py) is turned off: its chunks run in C threads.
"""

import collections
import statistics
import sys
import time

WAKE = 40e-6
THREADS = 2


class _Regions:
    """Patches ``parallel_for`` everywhere strata imported it; sums each region's one-thread
    time and its modelled two-thread time."""

    def __init__(self, array):
        self.array, self.original = array, array.parallel_for
        self.one_thread = self.two_threads = 0.0

    def install(self):
        """After the warm-up steps: the compiler's modules are imported by the first call."""
        for name, module in list(sys.modules.items()):
            if name.startswith("strata") and getattr(module, "parallel_for", None) is \
                    self.original:
                module.parallel_for = self.parallel_for

    def parallel_for(self, begin, end, grain_size, fn):
        array = self.array
        n = end - begin
        chunks = min(array.NUM_THREADS * array.CHUNKS_PER_THREAD, n // max(grain_size, 1))
        if chunks <= 1 or getattr(array._region, "active", False):
            if n > 0:
                fn(begin, end)
            return
        step = -(-n // chunks)
        seconds = []
        array._region.active = True   # nested loops run inline, as on the pool
        try:
            for lo in range(begin, end, step):
                start = time.thread_time()
                fn(lo, min(lo + step, end))
                seconds.append(time.thread_time() - start)
        finally:
            array._region.active = False
        free = [0.0] + [WAKE] * (THREADS - 1)
        for s in seconds:
            free[free.index(min(free))] += s
        self.one_thread += sum(seconds)
        self.two_threads += max(free)


class _Ops:
    """Wraps every CPU kernel to split the step's time by op (outermost kernel only)."""

    def __init__(self, regions):
        from strata.dispatch import dispatcher
        from strata.dispatch.keys import key_by_name
        self.regions, self.depth = regions, 0
        self.seconds, self.serial, self.modelled = (collections.Counter() for _ in range(3))
        cpu = key_by_name("CPU")
        for op, table in dispatcher._tables.items():
            if cpu in table and not table[cpu].fallthrough:
                table[cpu].fn = self._timed(op.name, table[cpu].fn)
        for op in dispatcher._tables:
            dispatcher._clear_caches(op)

    def _timed(self, name, fn):
        def kernel(*args, **kwargs):
            self.depth += 1
            one, two = self.regions.one_thread, self.regions.two_threads
            start = time.thread_time()
            try:
                return fn(*args, **kwargs)
            finally:
                self.depth -= 1
                if not self.depth:
                    total = time.thread_time() - start
                    serial = total - (self.regions.one_thread - one)
                    self.seconds[name] += total
                    self.serial[name] += serial
                    self.modelled[name] += serial + self.regions.two_threads - two
        return kernel


def profile(model, compiled, steps, by_op):
    import strata
    from strata.backends.cpu import array

    from .compile import STEPS, _train_step
    strata.config.native_pool = False   # its C threads' chunks are out of Python's sight
    strata.set_num_threads(THREADS)
    regions = _Regions(array)
    ops = _Ops(regions) if by_op else None
    step = _train_step(strata, compiled, STEPS[model])
    for _ in range(5):
        step()
    regions.install()
    totals, parallel, modelled = [], [], []
    if ops is not None:
        for counter in (ops.seconds, ops.serial, ops.modelled):
            counter.clear()
    for _ in range(steps):
        regions.one_thread = regions.two_threads = 0.0
        start = time.thread_time()
        step()
        totals.append(time.thread_time() - start)
        parallel.append(regions.one_thread)
        modelled.append(totals[-1] - regions.one_thread + regions.two_threads)
    total, split, two = (statistics.median(v) * 1e3 for v in (totals, parallel, modelled))
    print(f"{model}{' compiled' if compiled else ''}: one thread {total:.2f} ms, "
          f"{split:.2f} ms in parallel regions, serial {total - split:.2f} ms "
          f"({(total - split) / total:.0%}); modelled on two threads {two:.2f} ms")
    if ops is not None:
        for name, seconds in ops.seconds.most_common():
            print(f"  {name:40s} {seconds / steps * 1e3:7.3f} ms  serial "
                  f"{ops.serial[name] / steps * 1e3:7.3f}  two threads "
                  f"{ops.modelled[name] / steps * 1e3:7.3f}")


if __name__ == "__main__":
    args = sys.argv[1:]
    count = 30
    if "--steps" in args:
        i = args.index("--steps")
        count = int(args[i + 1])
        del args[i:i + 2]
    flags = {a for a in args if a.startswith("--")}
    for name in [a for a in args if not a.startswith("--")] or ["CNN"]:
        profile(name, "--compiled" in flags, count, "--ops" in flags)
