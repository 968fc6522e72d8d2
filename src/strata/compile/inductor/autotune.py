"""``mode="max-autotune"``: each kernel's row tile (rows per chunk of ``parallel_for``, so how
many threads share it) is chosen by timing, once, on the first call's real inputs.

A kernel writes only its own fresh output buffers from its inputs (graphs are functional), so
running it several times while timing gives the same result. The choices go into the graph
cache entry (codecache.py), so a warm process runs the tuned tiles without timing again.
"""

import time

from ...backends.cpu.array import GRAIN_SIZE, NUM_THREADS, parallel_for

REPEATS = 3


def default_grain(outer: int, inner: int) -> int:
    """ATen's rule: a chunk holds at least GRAIN_SIZE elements."""
    return max(1, GRAIN_SIZE // max(inner, 1))


def candidate_grains(outer: int, inner: int) -> list[int]:
    """Rows per chunk to try: the default, then one chunk per 1, 2, 4... threads."""
    grains = [default_grain(outer, inner)]
    chunks = 1
    while chunks <= NUM_THREADS:
        grain = max(1, outer // chunks)
        if grain not in grains:
            grains.append(grain)
        chunks *= 2
    return grains


def run_kernel(fn, outer, grain, arrays):
    """Call the C function ``fn`` over rows ``[0, outer)``, ``grain`` rows per chunk at least."""
    pointers = [a.ctypes.data for a in arrays]
    if outer:
        parallel_for(0, outer, grain, lambda lo, hi: fn(*pointers, lo, hi))


class Autotuner:
    """The wrapper's ``_run_kernel``: runs each kernel with its grain from ``grains``; a kernel
    named in ``pending`` is first timed with each candidate and keeps the fastest."""

    def __init__(self, grains: dict, pending=()):
        self.grains, self.pending = grains, set(pending)
        self.timings = {}     # kernel -> {grain: best seconds}, what the tuning measured

    def __call__(self, fn, name, outer, inner, arrays):
        if name in self.pending:
            self.pending.discard(name)
            self.grains[name] = self._fastest(fn, name, outer, inner, arrays)
        run_kernel(fn, outer, self.grains[name], arrays)

    def _fastest(self, fn, name, outer, inner, arrays):
        best = {}
        for grain in candidate_grains(outer, inner):
            run_kernel(fn, outer, grain, arrays)       # warm up (pages, thread pool)
            seconds = []
            for _ in range(REPEATS):
                start = time.perf_counter()
                run_kernel(fn, outer, grain, arrays)
                seconds.append(time.perf_counter() - start)
            best[grain] = min(seconds)
        self.timings[name] = best
        return min(best, key=best.get)
