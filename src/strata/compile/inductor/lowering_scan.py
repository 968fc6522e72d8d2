"""Lowering rows of the scans ``cumsum``, ``cumprod``, ``logcumsumexp``, ``cummax`` and
``cummin``: a Scan kernel (Note [Scans] in ir.py) that walks the scanned dim left to right per
column, as eager's ``ufunc.accumulate`` (backends/cpu/reductions.py ``_scan``), so a float
cumsum is eager's bit for bit. The input is read through its formula, so the scan fuses with
the pointwise ops that make it (a mask's cumsum reads the comparison, not a stored mask).
"""

import math
import operator

from .ir import ops
from .lowering import DTYPES, FLOATS, NoLowering, aten, dtype_name, out_spec, pointwise, register


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


def _full_index(size, d, column, position):
    """The index texts (single C terms) of column ``column``'s element at ``position`` along
    ``d``: the column is the flat index of the other dims' element."""
    inner = math.prod(size[d + 1:])
    left = f"({column}) / {inner}" if inner != 1 else f"({column})"
    before = []
    for k in range(d - 1, -1, -1):
        before.insert(0, f"({left}) % {size[k]}" if k else left)
        left = f"({left}) / {size[k]}"
    after, step = [], 1
    for k in range(len(size) - 1, d, -1):
        after.insert(0, f"(({column}) / {step}) % {size[k]}" if step != 1
                     else f"({column}) % {size[k]}")
        step *= size[k]
    return (*before, position, *after)


def _running(G, dtype, size, dim, scan_type, load, combine):
    """The realized Scan of ``load(full index, position)``'s values along ``dim`` of ``size``,
    each combined into the running value by ``combine(running, value)``."""
    if dtype not in DTYPES or G.device_type != "cpu" or not math.prod(size):
        raise NoLowering(f"{scan_type}: an empty result, or a device printer without scans")
    d = dim % len(size)
    return G.scan(dtype, size, d, scan_type,
                  lambda column, rindex: load(_full_index(size, d, column[0], rindex[0]),
                                              rindex[0]), combine)


def _scan(G, node, a, dim, scan_type, combine):
    """The running ``combine`` of ``a``'s values (converted to the result's dtype first, as
    eager's ``accumulate(dtype=...)``) along ``dim``."""
    dtype, size = out_spec(node)
    if dtype == "bool":
        raise NoLowering(f"{scan_type} of bools into bools")
    if not size:
        return pointwise(G, node, lambda x: x, a)

    def load(index, position):
        value = a.load(index)
        return value if a.dtype == dtype else ops.to_dtype(value, dtype)
    return _running(G, dtype, size, dim, scan_type, load, combine)


@register(aten.cumsum.default)
def _cumsum(G, node, a, dim, dtype=None):
    return _scan(G, node, a, dim, "cumsum", lambda x, y: ops.add(x, y))


@register(aten.cumprod.default)
def _cumprod(G, node, a, dim, dtype=None):
    return _scan(G, node, a, dim, "cumprod", lambda x, y: ops.mul(x, y))


@register(aten.logcumsumexp.default)
def _logcumsumexp(G, node, a, dim):
    dtype = out_spec(node)[0]
    if dtype not in FLOATS:
        raise NoLowering("logcumsumexp dtype")
    return _scan(G, node, a, dim, "logcumsumexp", lambda x, y: _logaddexp(x, y, dtype))


@register(aten.cummax.default, aten.cummin.default)
def _cum_extremum(G, node, a, dim):
    """Eager's ``_cum_extremum``: the running ``np.maximum`` (``np.minimum``), whose NaN sticks
    and whose tie keeps the newer element (-0.0 after 0.0), as MAX_PROP/MIN_PROP; the index is
    the latest position whose element equals the running value or is NaN (PyTorch's >=)."""
    values = node.meta["val"][0]
    dtype, size = dtype_name(values.dtype), tuple(values.shape)
    if not size or a.dtype != dtype:
        raise NoLowering("cummax/cummin of a 0-D tensor")
    op, name = ("cummax", "maximum") if node.target is aten.cummax.default else ("cummin",
                                                                                "minimum")
    running = _running(G, dtype, size, dim, op, lambda i, p: a.load(i),
                       lambda x, y: getattr(ops, name)(x, y))
    if all(user.target is operator.getitem and (user.args[1] == 0 or not user.users)
           for user in node.users):
        return running, None    # the indices are never read: no second scan

    def moved(index, position):
        value = a.load(index)
        hit = ops.eq(value, running.load(index))
        if dtype in FLOATS:
            hit = ops.where(ops.ne(value, value), ops.constant(True, "bool"), hit)
        return ops.where(hit, ops.index_expr(position, "int64"), ops.constant(0, "int64"))
    return running, _running(G, "int64", size, dim, f"{op}_index", moved,
                             lambda x, y: ops.maximum(x, y))
