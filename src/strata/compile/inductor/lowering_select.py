"""Lowering rows of the pointwise ops that choose between values: ``sign``, ``clamp`` and
``masked_fill``, each a formula of comparisons and selects that fuses with its readers (Rprop's
update is one kernel per parameter with them). Each computes what the eager kernel
(backends/cpu/pointwise.py, indexing.py) computes, NaN and -0.0 included.
"""

import math

from .ir import TensorValue, ops
from .lowering import (
    FLOATING,
    INTEGERS,
    NoLowering,
    as_loader,
    aten,
    constant_of,
    out_spec,
    pointwise,
    register,
)

_DTYPES = FLOATING + INTEGERS
FLOAT32_MAX = 3.4028234663852886e38
LARGEST = {"float32": FLOAT32_MAX, "float16": 65504.0, "bfloat16": 3.3895313892515355e38}


@register(aten.sign.default)
def _sign(G, node, a):
    """ATen's ``(0 < x) - (x < 0)``: sign(NaN) and sign(-0.0) are +0; a bool is itself."""
    dtype = out_spec(node)[0]

    def sign(x):
        zero = ops.constant(0, dtype)
        return ops.sub(ops.to_dtype(ops.gt(x, zero), dtype), ops.to_dtype(ops.lt(x, zero), dtype))
    return pointwise(G, node, (lambda x: x) if dtype == "bool" else sign, a)


@register(aten.clamp.Tensor)
def _clamp(G, node, a, min=None, max=None):
    """``minimum(maximum(x, min), max)`` in the result dtype, both NaN-propagating as eager's
    ``np.maximum``/``np.minimum``: a NaN input or bound gives NaN."""
    if out_spec(node)[0] not in _DTYPES:
        raise NoLowering("clamp dtype")
    bounds = [(b, name) for b, name in ((min, "maximum"), (max, "minimum")) if b is not None]

    def clamp(x, *loaded):
        for value, (_, name) in zip(loaded, bounds):
            x = getattr(ops, name)(x, value)
        return x
    return pointwise(G, node, clamp, a, *(b for b, _ in bounds))


@register(aten.masked_fill.Scalar)
def _masked_fill(G, node, a, mask, value):
    """``where(mask, value, self)``, the Python number converted to self's dtype as eager's
    kernel stores it; a tensor value, or one that must be checked against the dtype's range
    (an integer dtype, a finite float beyond the dtype's range), keeps the eager kernel and its
    error."""
    dtype, size = out_spec(node)
    if dtype not in FLOATING or isinstance(value, bool) or not isinstance(value, (int, float)) \
            or (dtype in LARGEST and math.isfinite(value) and abs(value) > LARGEST[dtype]):
        raise NoLowering("masked_fill value")
    mask_load, self_load = as_loader(mask, size, "bool"), as_loader(a, size, dtype)
    fill = constant_of(value, dtype)
    return TensorValue(dtype, size, lambda i: ops.where(mask_load(i), fill(i), self_load(i)))
