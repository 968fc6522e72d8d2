"""Random draws of the CPU backend in generated C, split over the pool's threads.

``bernoulli``, ``uniform_`` and float64 ``rand`` draw NumPy's ``Generator.random`` doubles.
The generated kernels of compile/inductor/eager_random.py draw the same doubles from the same
PCG64 stream in C (Note [Random draws] in compile/inductor/ir.py), ``ROW`` of them per row,
each chunk of rows jumping ahead to its place, so the pool's threads share the work. ``fill``
runs one such kernel over the whole rows, advances the generator past them (as the draws
would have), then lets the caller's NumPy formula draw the rest: the last partial row, or all
of it where there is no kernel (``STRATA_NATIVE_KERNELS=0``, no compiler, another dtype, a
small tensor). The values and the generator's state afterwards are NumPy's, bit for bit.
"""

import numpy as np

from . import native, native_pool

LIBRARY = "eager_random"
ROW = 1024            # draws per row of a kernel: its doubles are a stack array (8 KB, in L1)
# From here one thread's C draws are cheaper than NumPy's: reading the generator's state, the
# call and ``advance`` cost ~6 us, and a C draw (8 SIMD lanes, Note [SIMD lanes] in
# compile/inductor/cpreamble.py) saves ~1.3 ns of NumPy's ~3 (bernoulli on (1024, 512), one
# thread: 0.88 ms against 1.60 ms of thread time); a second thread halves the draws from
# 2 * GRAIN_ROWS rows on.
MIN_DRAWS = 8 * ROW
GRAIN_ROWS = 64       # ~150 us of draws a chunk: a smaller one is not worth a thread's wake-up
_MASK64 = (1 << 64) - 1

# the kernels (compile/inductor/eager_random.py) by the dtype of their output
DTYPES = {
    "bernoulli": ("bool", "float16", "bfloat16", "float32", "float64"),   # bernoulli(p)
    "bernoulli_probs": ("float16", "bfloat16", "float32", "float64"),     # bernoulli(probs)
    "uniform": ("float16", "bfloat16", "float32", "float64"),
}


def kernel(op: str, dtype: np.dtype):
    """The name of ``op``'s kernel writing ``dtype`` (a NumPy dtype), or None where it has none."""
    return f"{op}_{dtype.name}" if dtype.name in DTYPES[op] else None


def _state_words(state: dict) -> np.ndarray:
    """The PCG64 state and increment as the kernels read them: 4 words, high word first."""
    s, inc = state["state"]["state"], state["state"]["inc"]
    return np.array([s >> 64, s & _MASK64, inc >> 64, inc & _MASK64], dtype=np.uint64)


def fill(dst, generator, kernel, operand, numpy_rest) -> None:
    """``dst`` (any layout) gets the draws of ``kernel`` in its C order, from the NumPy
    ``generator``; ``operand`` is the kernel's second array (its ``params``, or the
    probabilities in the C order of ``dst``); ``numpy_rest(into, start)`` draws the elements
    ``start:`` of the flat order into ``into`` with NumPy, from where the kernel left the
    generator. ``kernel`` None: NumPy draws all of it."""
    target = dst if dst.flags.c_contiguous else np.empty(dst.shape, dst.dtype)
    flat = target.reshape(-1)
    # one op's draws are one run of the stream, as NumPy's own call holds the lock (an RLock:
    # numpy_rest's draws take it again)
    with generator.bit_generator.lock:
        start = _run(kernel, generator, flat, operand)
        if start < flat.size:
            numpy_rest(flat[start:], start)
    if target is not dst:
        np.copyto(dst, target)


def _run(kernel, generator, flat, operand) -> int:
    """Draw the whole rows of ``flat`` with ``kernel``; how many elements it drew (0: none)."""
    rows = flat.size // ROW
    if kernel is None or flat.size < MIN_DRAWS:
        return 0
    fn = native.function(LIBRARY, kernel)
    if fn is None:
        return 0
    bits = generator.bit_generator
    state = bits.state
    words = _state_words(state)
    pointers = [native.pointer(words), native.pointer(operand), native.pointer(flat)]
    native_pool.parallel_call(fn, pointers + [rows], 0, rows, GRAIN_ROWS)
    bits.advance(rows * ROW)
    # advance clears the buffered half of a float32 draw (and its stale value, which get_state
    # shows); double draws leave both as they were
    if state["has_uint32"] or state["uinteger"]:
        moved = bits.state
        bits.state = {**moved, "has_uint32": state["has_uint32"], "uinteger": state["uinteger"]}
    return rows * ROW
