"""``mode="max-autotune"``: each kernel's loop order and row tile are chosen by timing, once,
on the first call's real inputs.

The candidates of a kernel over rows R and inner dims RR: its function as scheduled (R rows,
an inner SIMD loop over RR) and, for a pointwise-only kernel, its flat variant (R x RR rows,
one SIMD loop; ``GraphLowering.flat_variant``); each with several row tiles (rows per chunk of
``parallel_for``, so how many threads share it). A kernel writes only its own fresh output
buffers from its inputs (graphs are functional), so running it several times while timing gives
the same result. The choices go into the graph cache entry (codecache.py), so a warm process
runs the tuned kernels without timing again.

Note [Measured row tiles]: in the default mode a kernel's rows are split by its measured cost,
not by its element count. ATen's rule (GRAIN_SIZE elements per chunk, ``default_grain``) suits
a memory-bound loop, but a fused kernel may do tens of operations per element (a GPT's softmax
with its mask, a GELU and its backward, a dropout mask's draws): with the element rule, 101 of
the tiny GPT step's 138 kernels ran on the caller's thread alone, 16 of its 17 ms of kernel
time (``python -m benchmarks.compile_profile --amdahl``). So the first ``MEASURED_CALLS`` calls
of a kernel run it as one chunk and time it in thread CPU time (not delayed by other
processes; the cheapest call counts, since the first one also faults in its fresh buffers);
from then on a kernel that took at least ``SPLIT_SECONDS`` is split into chunks of
``CHUNK_SECONDS`` of work at least (a chunk costs ~2-4 us of a ctypes call; a parallel loop
costs its caller 10-35 us of serial time, measured on a busy 2-core machine), one that took
less keeps one chunk and never pays for the pool. Which thread runs
which rows never changes a kernel's result (every row is written by one chunk), so this choice
is free to depend on timings.

Note [Column chunks]: a column reduction (a layer_norm's weight and bias gradients: 128
columns summed down 1024 rows), a scan or an index_add splits its columns, and every chunk
walks all the rows, loading a cache line of each for its few columns. Cost then grows with the
number of chunks, not the columns each holds: the tiny GPT's two 128-column gradient sums,
measured at ~110 us as one chunk and split into 16-column chunks by the rule above, took 1.7
and 2.2 ms (rows 8 KB apart, each chunk missing the cache on every one of them). Such a kernel
("walks_every_row", its choice's fourth field) that is worth splitting gets one chunk per
thread, each reading its share of every row once.
"""

import math
import time

from ...backends.cpu import array, native_pool
from ...backends.cpu.array import GRAIN_SIZE
from ...backends.cpu.native import address, pointer
from .graph import FLAT

REPEATS = 3
MEASURED_CALLS = 3      # Note [Measured row tiles]: the cheapest of the first calls counts
SPLIT_SECONDS = 80e-6   # a kernel cheaper than this runs as one chunk
CHUNK_SECONDS = 25e-6   # and a chunk of a split kernel holds at least this much work
NATIVE_SPLIT_SECONDS = 20e-6   # the same on the native pool, whose loop costs its caller ~2 us
NATIVE_CHUNK_SECONDS = 8e-6


def default_grain(outer: int, inner: int) -> int:
    """ATen's rule: a chunk holds at least GRAIN_SIZE elements."""
    return max(1, GRAIN_SIZE // max(inner, 1))


def default_choice(name: str, outer: int, inner: int, walks_every_row: bool = False) -> list:
    """[C function, rows, rows per chunk, walks every row] of a kernel as the scheduler made
    it (the last: Note [Column chunks])."""
    return [name, outer, default_grain(outer, inner), walks_every_row]


def measured_grain(rows: int, seconds: float, native: bool = False,
                   walks_every_row: bool = False) -> int:
    """Rows per chunk of a kernel that took ``seconds`` over ``rows`` rows on one thread (Note
    [Measured row tiles]); ``native``: it runs on the native pool, where a loop costs less;
    ``walks_every_row``: each chunk reads every row (Note [Column chunks])."""
    split, chunk = (NATIVE_SPLIT_SECONDS, NATIVE_CHUNK_SECONDS) if native else \
        (SPLIT_SECONDS, CHUNK_SECONDS)
    if seconds < split:
        return max(rows, 1)
    grain = max(1, math.ceil(rows * chunk / seconds))
    return max(grain, -(-rows // array.NUM_THREADS)) if walks_every_row else grain


def candidate_grains(outer: int, inner: int) -> list[int]:
    """Rows per chunk to try: the default, then one chunk per 1, 2, 4... threads."""
    grains = [default_grain(outer, inner)]
    chunks = 1
    while chunks <= array.NUM_THREADS:     # read now: set_num_threads may have changed it
        grain = max(1, outer // chunks)
        if grain not in grains:
            grains.append(grain)
        chunks *= 2
    return grains


def candidates(lib, name: str, outer: int, inner: int) -> list[tuple]:
    """Every (C function, rows, rows per chunk) to time for kernel ``name``."""
    shapes = [(name, outer, inner)]
    if hasattr(lib, name + FLAT):
        shapes.append((name + FLAT, outer * inner, 1))
    return [(fn, rows, grain) for fn, rows, width in shapes
            for grain in candidate_grains(rows, width)]


def run_kernel(fn, rows, grain, arrays):
    """Call the C function ``fn`` over rows ``[0, rows)``, ``grain`` rows per chunk at least.
    The arrays' addresses come from ``native.address`` (0.2 us, where ``a.ctypes.data`` costs
    ~1 us: a tiny GPT step passes ~490 arrays to its 139 kernels)."""
    one_chunk = rows <= grain or array.NUM_THREADS == 1
    recorder = native_pool.recording.recorder
    if recorder is not None:    # Note [Graph programs] (plan.py)
        step = None if one_chunk else native_pool.chunk_step(rows, grain, native_pool.VECTOR_ROWS)
        recorder.task(fn, arrays, rows, step or rows)
    if one_chunk:    # no pool, no closure
        if rows:
            fn(*[address(a) for a in arrays], 0, rows)
    else:
        native_pool.parallel_call(fn, [pointer(a) for a in arrays], 0, rows, grain,
                                  native_pool.VECTOR_ROWS)


class Autotuner:
    """The wrapper's ``_run_kernel``: runs each kernel as ``choices`` says; a kernel named in
    ``pending`` is first timed with each candidate and keeps the fastest; one named in
    ``unmeasured`` first runs as one timed chunk (Note [Measured row tiles])."""

    def __init__(self, choices: dict, pending=(), unmeasured=()):
        self.choices, self.pending = choices, set(pending)
        self.timings = {}     # kernel -> {candidate: best seconds}, what the tuning measured
        self.unmeasured = {name: [] for name in unmeasured if name not in self.pending}

    def __call__(self, lib, name, outer, inner, arrays):
        if name in self.pending:
            self.pending.discard(name)
            self.choices[name][:3] = self._fastest(lib, name, outer, inner, arrays)
        fn, rows, grain, _ = self.choices[name]
        if name in self.unmeasured:
            self._measure(getattr(lib, fn), name, rows, arrays)
            return
        run_kernel(getattr(lib, fn), rows, grain, arrays)

    def _measure(self, kernel, name, rows, arrays):
        start = time.thread_time()
        run_kernel(kernel, rows, rows, arrays)
        # (two threads calling one graph may measure a kernel at once: the first to reach
        # MEASURED_CALLS samples decides)
        samples = self.unmeasured.get(name)
        if samples is None:
            return
        samples.append(time.thread_time() - start)
        if len(samples) >= MEASURED_CALLS and self.unmeasured.pop(name, None) is not None:
            native = getattr(kernel, "strata_task", None) is not None and \
                native_pool.library() is not None
            self.choices[name][2] = measured_grain(rows, min(samples), native,
                                                   self.choices[name][3])

    def _fastest(self, lib, name, outer, inner, arrays):
        best = {}
        for fn, rows, grain in candidates(lib, name, outer, inner):
            kernel = getattr(lib, fn)
            run_kernel(kernel, rows, grain, arrays)       # warm up (pages, thread pool)
            seconds = []
            for _ in range(REPEATS):
                start = time.perf_counter()
                run_kernel(kernel, rows, grain, arrays)
                seconds.append(time.perf_counter() - start)
            best[fn, rows, grain] = min(seconds)
        self.timings[name] = best
        return min(best, key=best.get)
