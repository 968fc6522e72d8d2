"""Eager random draws in generated C: ``bernoulli(p)`` (dropout's mask), ``bernoulli(probs)``,
``uniform_(lo, hi)`` (``rand_like``, ``nn.init.uniform_``) and float64/complex128 ``rand``.

NumPy draws ``Generator.random``'s doubles on one thread (~2.4 ns a draw), then compares or
scales them in a second pass. Here each op is one kernel of the compiler's loop IR: a
``RandomDraws`` node (Note [Random draws] in ir.py) gives Generator.random's doubles
themselves (``uniform(0, 1)``: ``0 + 1 * u`` is ``u``), and one ``Pointwise`` epilogue turns
a row of them into the op's output, reading ``p`` or ``(lo, hi - lo)`` from the ``params``
buffer at run time, so one kernel per op and dtype serves every ``p`` (the compiled graphs'
kernels print their ``p`` into the C instead). The printer walks rows of ``ROW`` draws, each
chunk of rows jumping to its place in the stream, so the caller's threads split the rows
(backends/cpu/draws.py runs them, draws the last partial row with NumPy, and advances the
generator past them). The arithmetic is NumPy's: ``u < p`` for bernoulli (as ``random() < p``),
``lo + (hi - lo) * u`` in double then rounded to the dtype for uniform (``Generator.uniform``
then eager's ``cast_into``), so the values are eager's bit for bit.

float32 ``rand`` is not here: NumPy's ``random(dtype=float32)`` draws 24-bit floats from
32-bit halves of the 64-bit outputs, a different stream from the doubles the printer draws.
"""

import ctypes

from ...backends.cpu import native
from ...backends.cpu.draws import DTYPES, LIBRARY, ROW
from .cprinter import pointer_count, print_module
from .ir import InputBuffer, Kernel, Pointwise, RandomDraws, ops


def _uniform_doubles():
    """Generator.random's doubles at the places of the rows ``x_lo`` to ``x_hi`` of the stream
    whose PCG64 state the 4 int64 words of ``state`` hold (functionalize.py's ``rng_state``)."""
    return RandomDraws("u", "float64", ("rows", ROW), "state", 0, "uniform", (0.0, 1.0))


def _kernel(name, epilogue_dtype, epilogue, extra_inputs):
    state = InputBuffer("state", "int64", (4,), (1,))
    out = Pointwise("out", epilogue_dtype, ("rows", ROW), epilogue)
    return Kernel(name, [state, *extra_inputs], [_uniform_doubles(), out], frozenset({"u"}))


def bernoulli_kernel(out_dtype):
    """``out = u < params[0]`` as ``out_dtype`` (0 or 1)."""
    params = InputBuffer("params", "float64", (1,), (1,))
    return _kernel(f"bernoulli_{out_dtype}", out_dtype, lambda i: ops.to_dtype(
        ops.lt(ops.load("u", i), ops.load("params", "0")), out_dtype), [params])


def bernoulli_probs_kernel(dtype):
    """``out = u < probs`` (the probabilities, of the output's dtype, widened to double)."""
    probs = InputBuffer("probs", dtype, ("rows", ROW), (ROW, 1))
    return _kernel(f"bernoulli_probs_{dtype}", dtype, lambda i: ops.to_dtype(
        ops.lt(ops.load("u", i), ops.to_dtype(probs.load(i), "float64")), dtype), [probs])


def uniform_kernel(dtype):
    """``out = params[0] + params[1] * u`` (lo, hi - lo) in double, rounded to ``dtype``."""
    params = InputBuffer("params", "float64", (2,), (1,))
    return _kernel(f"uniform_{dtype}", dtype, lambda i: ops.to_dtype(ops.add(
        ops.load("params", "0"), ops.mul(ops.load("params", "1"), ops.load("u", i))), dtype),
        [params])


def _kernels():
    yield from (bernoulli_kernel(d) for d in DTYPES["bernoulli"])
    yield from (bernoulli_probs_kernel(d) for d in DTYPES["bernoulli_probs"])
    yield from (uniform_kernel(d) for d in DTYPES["uniform"])


def source() -> str:
    return print_module([(k, ("rows",)) for k in _kernels()])


# the pointers (state, params or probs, out), then rows, x_lo, x_hi
native.register_generated(LIBRARY, source, {
    k.name: (ctypes.c_void_p,) * pointer_count(k) + (ctypes.c_int64,) * 3 for k in _kernels()})
