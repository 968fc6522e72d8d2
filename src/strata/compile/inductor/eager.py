"""Eager CPU kernels from the compiler's generator (issue 9 §5, DESIGN.md "one code generator,
three users").

The CPU backend's NumPy formulas for the transcendental activations take one pass per NumPy
call (gelu is seven of them, erf a dozen) on one thread. Here each is one loop-IR ``Pointwise``
over a flat run of ``n`` elements, printed to C by cprinter.py (one libmvec-vectorised loop
over a range the caller's threads split) and built through the one build path, backends/cpu/native.py. The CPU backend
cannot import this layer, so this module registers the library with ``native.register_generated``
when strata is imported; ``native.generated_unary`` then picks the C kernel for contiguous
float32/float64 arrays and keeps the NumPy formula for everything else.

The formulas are ATen's (``aten/src/ATen/native/cpu/Activation.cpp``, ``UnaryOpsKernel.cpp``).
"""

import ctypes
import math

from ...backends.cpu import native
from .cprinter import print_module
from .ir import InputBuffer, Kernel, Pointwise, ops

LIBRARY = "eager_pointwise"
DTYPES = ("float32", "float64")


def gelu(x, dtype):
    # x * 0.5 * (1 + erf(x / sqrt(2)))
    inner = ops.erf(ops.mul(x, ops.constant(math.sqrt(0.5), dtype)))
    return ops.mul(ops.mul(x, ops.constant(0.5, dtype)),
                   ops.add(ops.constant(1.0, dtype), inner))


def gelu_tanh(x, dtype):
    # 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3)))
    cube = ops.mul(ops.mul(ops.mul(x, x), x), ops.constant(0.044715, dtype))
    inner = ops.mul(ops.constant(math.sqrt(2.0 / math.pi), dtype), ops.add(x, cube))
    return ops.mul(ops.mul(ops.constant(0.5, dtype), x),
                   ops.add(ops.constant(1.0, dtype), ops.tanh(inner)))


# name -> the formula of one element (the value, its dtype), written with ops.*
FORMULAS = {
    "gelu": gelu,
    "gelu_tanh": gelu_tanh,
    "erf": lambda x, dtype: ops.erf(x),
    "tanh": lambda x, dtype: ops.tanh(x),
    "sigmoid": lambda x, dtype: ops.sigmoid(x),
    "exp": lambda x, dtype: ops.exp(x),
    "log": lambda x, dtype: ops.log(x),
}


def kernel_name(formula: str, dtype: str) -> str:
    return f"{formula}_{dtype}"


def unary_kernel(formula: str, dtype: str) -> Kernel:
    """``out[i] = FORMULAS[formula](in0[i])`` for ``i < n``, as a loop-IR kernel."""
    source = InputBuffer("in0", dtype, ("n",), (1,))
    node = Pointwise("out", dtype, ("n",), lambda index: FORMULAS[formula](source.load(index), dtype))
    return Kernel(kernel_name(formula, dtype), [source], [node])


def source() -> str:
    return print_module([(unary_kernel(f, dt), ("n",)) for f in FORMULAS for dt in DTYPES])


# (in0, out, n, x_lo, x_hi)
_SIGNATURE = (ctypes.c_void_p, ctypes.c_void_p) + (ctypes.c_int64,) * 3
native.register_generated(LIBRARY, source, {
    kernel_name(f, dt): _SIGNATURE for f in FORMULAS for dt in DTYPES})
