"""Lowering rows of the scans ``cumsum``, ``cumprod`` and ``logcumsumexp``: a Scan kernel
(Note [Scans] in ir.py) that walks the scanned dim left to right per column, as eager's
``ufunc.accumulate`` (backends/cpu/reductions.py ``_scan``), so a float cumsum is eager's bit
for bit. The input is read through its formula, so the scan fuses with the pointwise ops that
make it (a mask's cumsum reads the comparison, not a stored mask).
"""

import math

from .ir import ops
from .lowering import DTYPES, FLOATS, NoLowering, aten, out_spec, pointwise, register


def _logaddexp(x, y, dtype):
    """NumPy's ``npy_logaddexp``: ``x + log(2)`` for equal operands (infinities of one sign),
    else the larger plus ``log1p(exp(-|x - y|))``; a NaN difference is the result."""
    difference = ops.sub(x, y)
    zero = ops.constant(0, dtype)
    above = ops.add(x, ops.log1p(ops.exp(ops.neg(difference))))
    below = ops.add(y, ops.log1p(ops.exp(difference)))
    return ops.where(ops.eq(x, y), ops.add(x, ops.constant(math.log(2), dtype)),
                     ops.where(ops.gt(difference, zero), above,
                               ops.where(ops.le(difference, zero), below, difference)))


def _scan(G, node, a, dim, scan_type, combine):
    """The running ``combine`` of ``a``'s values (converted to the result's dtype first, as
    eager's ``accumulate(dtype=...)``) along ``dim``."""
    dtype, size = out_spec(node)
    if dtype not in DTYPES or dtype == "bool" or G.device_type != "cpu" or not math.prod(size):
        raise NoLowering(f"{scan_type}: a bool or empty result, or a device printer without "
                         "scans")
    if not size:
        return pointwise(G, node, lambda x: x, a)
    d = dim % len(size)
    inner = math.prod(size[d + 1:])

    def value(column, rindex):
        x = column[0]
        outer = f"({x}) / {inner}" if inner != 1 else f"({x})"
        # the other dims' indices of column x, then the scanned one
        others, left = [], outer
        for k in range(d - 1, -1, -1):
            others.insert(0, f"({left}) % {size[k]}" if k else left)
            left = f"({left}) / {size[k]}"
        after, step = [], 1
        for k in range(len(size) - 1, d, -1):
            after.insert(0, f"(({x}) / {step}) % {size[k]}" if step != 1
                         else f"({x}) % {size[k]}")
            step *= size[k]
        loaded = a.load((*others, rindex[0], *after))
        return loaded if a.dtype == dtype else ops.to_dtype(loaded, dtype)
    return G.scan(dtype, size, d, scan_type, value, lambda acc, x: combine(acc, x, dtype))


@register(aten.cumsum.default)
def _cumsum(G, node, a, dim, dtype=None):
    return _scan(G, node, a, dim, "cumsum", lambda acc, x, dtype: ops.add(acc, x))


@register(aten.cumprod.default)
def _cumprod(G, node, a, dim, dtype=None):
    return _scan(G, node, a, dim, "cumprod", lambda acc, x, dtype: ops.mul(acc, x))


@register(aten.logcumsumexp.default)
def _logcumsumexp(G, node, a, dim):
    if out_spec(node)[0] not in FLOATS:
        raise NoLowering("logcumsumexp dtype")
    return _scan(G, node, a, dim, "logcumsumexp", _logaddexp)
