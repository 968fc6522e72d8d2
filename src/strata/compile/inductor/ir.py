"""The loop-level IR: what a kernel computes at one index, before any C exists.

As in Inductor (``torch/_inductor/ir.py``), a node does not hold a loop: it holds an
``inner_fn(index)`` written with ``ops.*`` calls (``ops.load``, ``ops.exp``, ``ops.add``...).
What ``ops`` means is decided by whoever runs the function: the C printer makes each call emit one
line of C, ``format_node`` makes it build readable text. A chain of pointwise ops is fused by
calling the producer's ``inner_fn`` inside the consumer's: no buffer is ever written for it.

- ``Pointwise(name, dtype, ranges, inner_fn)``: ``out[index] = inner_fn(index)`` for every index
  in ``ranges``; ``index`` is a tuple of C index expressions, one per dim.
- ``Reduction(name, dtype, ranges, reduction_ranges, reduction_type, inner_fn)``:
  ``out[index] = reduce(inner_fn(index, rindex) for rindex in reduction_ranges)``.
- ``IndexAdd``: a Reduction whose rows land where an index says (Note [Scatter-add]).
- ``Scan``: a running sum/product/logaddexp/max/min along one dim (Note [Scans]).
- ``RandomDraws``: a bernoulli mask or uniform values drawn from the graph's PCG64 stream (Note
  [Random draws]).
- ``InputBuffer(name, dtype, size, stride)``: memory the kernel reads (``ops.load(name, index)``).

Example, gelu as one kernel::

    x = InputBuffer("x", "float32", (4, 8), (8, 1))
    gelu = Pointwise("out", "float32", (4, 8), lambda i: ops.mul(
        ops.mul(x.load(i), ops.constant(0.5, "float32")),
        ops.add(ops.constant(1.0, "float32"),
                ops.erf(ops.mul(x.load(i), ops.constant(0.7071067811865476, "float32"))))))
"""

import ast
import math
import operator
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from .half import HALF, STORAGE_C_TYPE

# dtype name -> the C type of its values (half values are floats: Note [Half dtypes], half.py)
C_TYPES = {
    "float32": "float", "float64": "double", "int64": "int64_t", "int32": "int32_t",
    "int16": "int16_t", "int8": "int8_t", "uint8": "uint8_t", "bool": "bool",
    **{dtype: "float" for dtype in HALF},
}
# dtype name -> the C type of its buffers' elements (a half element is its 16 bits). A bool
# element is read as its byte (NumPy's 0 or 1) and converted to a bool value: gcc does not
# vectorise a loop loading from a ``bool*`` beside floats ("no vectype"), it does through
# ``uint8_t*`` (a causal mask filled over 262K floats: 214 -> ~40 us).
C_BUFFER_TYPES = {**C_TYPES, "bool": "uint8_t", **{dtype: STORAGE_C_TYPE for dtype in HALF}}
# each reduction's starting value in C, by dtype: an integer max/min starts at its own type's
# limit (INT64_MIN stored in an int8_t accumulator would be 0)
_LIMITS = {"int64": ("INT64_MIN", "INT64_MAX"), "int32": ("INT32_MIN", "INT32_MAX"),
           "int16": ("INT16_MIN", "INT16_MAX"), "int8": ("INT8_MIN", "INT8_MAX"),
           "uint8": ("0", "UINT8_MAX"), "bool": ("false", "true"),
           **{d: ("-INFINITY", "INFINITY") for d in ("float32", "float64", *HALF)}}


def reduction_init(reduction_type, dtype) -> str:
    if reduction_type in ("max", "min"):
        return _LIMITS[dtype][reduction_type == "min"]
    return "0" if reduction_type == "sum" else "1"

_handler = threading.local()


class _Ops:
    """``ops.<name>(...)`` calls the method of the handler that is running an ``inner_fn``."""

    def __getattr__(self, name):
        return getattr(_handler.current, name)


ops = _Ops()


class use_handler:
    """``with use_handler(h): inner_fn(index)`` makes ``ops.*`` calls go to ``h``."""

    def __init__(self, handler):
        self.handler = handler

    def __enter__(self):
        self.saved = getattr(_handler, "current", None)
        _handler.current = self.handler
        return self.handler

    def __exit__(self, *exc):
        _handler.current = self.saved


@dataclass(frozen=True)
class InputBuffer:
    """Memory read by a kernel: a graph input or the output of an earlier kernel."""
    name: str
    dtype: str
    size: tuple
    stride: tuple
    offset: int = 0

    def index(self, index) -> str:
        """The C expression of the element offset at ``index`` (stride 0 dims broadcast)."""
        terms = [f"{i}*{s}" if s != 1 else f"{i}" for i, s in zip(index, self.stride)
                 if s != 0 and not (isinstance(i, int) and i == 0)]
        if self.offset:
            terms.append(str(self.offset))
        return " + ".join(terms) or "0"

    def load(self, index):
        return ops.load(self.name, self.index(index))


@dataclass
class Pointwise:
    name: str
    dtype: str
    ranges: tuple
    inner_fn: Callable
    store_into: str = None   # write over an earlier node's buffer of the kernel (in place)
    # Note [Cat slices] (concat.py): no buffer of its own; its element lands at this view of
    # a cat's output (over the node's ranges)
    out_view: InputBuffer = field(default=None, kw_only=True)


@dataclass
class Reduction:
    name: str
    dtype: str
    ranges: tuple
    reduction_ranges: tuple
    reduction_type: str      # "sum", "prod", "max" or "min" (max and min propagate NaN)
    inner_fn: Callable       # (index, rindex) -> value
    # Note [Column reductions]: a sum over leading dims (a bias gradient: rows of a batch added
    # up) reads its input a row at a time, adding each row to every kept element in a SIMD loop,
    # rather than each kept element striding down its column. It gets a kernel of its own.
    column: bool = False
    out_view: InputBuffer = field(default=None, kw_only=True)   # as Pointwise's


@dataclass
class IndexAdd(Reduction):
    """Note [Scatter-add]: ``out = init``, then ``out[row_fn(r), x] += inner_fn((x,), r)`` for
    each source row r in order: ``index_add_`` along dim 0 (an embedding's backward). A
    kernel that stores through an index does not fit Pointwise/Reduction (one value per output
    element), so this is a column reduction (``ranges`` = the output's columns, split over
    threads, so no two threads add into one element) whose destination row is loaded, in the
    order of eager's ``np.add.at``: the same sums, bit for bit. With ``inner`` (a scatter
    along any dim of an N-D tensor) the output is (outer, rows, inner), column x is the
    element (x / inner, x % inner) of the other dims, and the row is loaded per column: an N-D
    index names a row for every column. Only elements of one column meet, in source-row
    order, which is their order in eager's C-order ``np.add.at`` (or assignment)."""
    row_fn: Callable = None     # (column, rindex) -> the int64 output row
    # (row, column) -> the starting value (index_add_'s self); None: the output already holds
    # it (an eager kernel adding into ``self`` in place)
    init_fn: Callable = None
    rows: int = 0
    # how a value meets its element: "sum", "prod", "max"/"min" (NaN wins, a tie keeps the
    # value: ``np.maximum.at``), or "assign" (``out[row, x] = value``: the last write wins)
    combine: str = "sum"
    inner: int = None           # N-D: elements of the dims after the scattered one
    # include_self=False: a first pass over the source rows sets each element they reach to
    # ``start_fn()`` (the reduction's identity), as eager's kernel does, before combining
    start_fn: Callable = None
    # (column,) -> bool: whether the index reaches this column (an index smaller than the
    # output in another dim); the other columns keep ``init``
    mask_fn: Callable = None


@dataclass
class Scan(Reduction):
    """Note [Scans]: along the scanned dim of length ``reduction_ranges[0]``, ``out[o, 0, c] =
    inner_fn((x,), (0,))`` and ``out[o, y, c] = combine_fn(out[o, y - 1, c], inner_fn((x,),
    (y,)))``, left to right as NumPy's ``ufunc.accumulate`` (eager's cumsum, cumprod, logcumsumexp,
    cummax and cummin), so float sums round as eager's, bit for bit. ``ranges`` = (columns,): the
    positions x = (o, c) of the other dims, c among the ``inner`` elements after the scanned dim;
    the columns are split over threads and the kernel is the scan's own (``column``)."""
    combine_fn: Callable = None     # (running value, next value) -> running value
    inner: int = 1


@dataclass
class RandomDraws:
    """Note [Random draws]: over the flat output, ``out[x] = u(x) < p`` (``bernoulli``, params
    ``(p,)``) or ``lo + (hi - lo) * u(x)`` rounded to the dtype (``uniform``, params
    ``(lo, hi)``), where u(x) is the float64 NumPy's ``Generator.random`` draws at place
    ``offset + x`` of the PCG64 stream whose state the int64 buffer ``state`` holds
    (compile/aot/functionalize.py's ``rng_state``): what eager's ``bernoulli(p)`` and
    ``uniform_(lo, hi)`` (NumPy's ``Generator.uniform``) draw from that generator, bit for
    bit. PCG64 is a 128-bit LCG, so a chunk of rows jumps to its first place in O(log n) steps
    and the chunks may run on several threads.

    Epilogues: a pointwise node that reads the draws only at the element being drawn (the same
    flat order, also through a reshape) joins their kernel (scheduler.py's ``draws_epilogue``),
    and so do nodes reading it and earlier epilogues that way (dropout's scale, then its
    product with the activations). The kernel then walks the rows of the first epilogue's last
    dim: each row's draws go to a stack array, in the four lanes, then every epilogue runs as a
    SIMD loop over the row reading the array, not memory; then nodes of those rows that read
    the epilogues, not the draws, join by Note [Row fusion] (a residual's layer_norm
    statistics after dropout's sum). The draws' buffer is written only if
    something outside the kernel reads it (the backward saves dropout's scaled mask, not the
    raw one). The values are the same arithmetic on the same draws: eager's, bit for bit."""
    name: str
    dtype: str
    ranges: tuple            # (numel,): the output, flat
    state: str               # the buffer of the 4 state words
    offset: int
    distribution: str        # "bernoulli" or "uniform"
    params: tuple
    column: bool = True      # a kernel of its own with its epilogues (Note [Row fusion])

    def inner_fn(self, index):
        """What the kernel reads (for the scheduler): the state words."""
        return ops.load(self.state, "0")


@dataclass
class Kernel:
    """What the C printer turns into one C function: ``inputs`` it reads, and ``nodes`` sharing
    the outer ``ranges``, computed in order for each outer index (a reduction's result is written
    before a later node of the same row reads it). ``local`` names the per-row values (reductions,
    pointwise values over the outer ranges only) no one reads outside the kernel: they stay C
    variables and get no buffer."""
    name: str
    inputs: list
    nodes: list
    local: frozenset = frozenset()


class _TextHandler:
    """Runs an ``inner_fn`` into readable text: ``exp(load(x, i0*8 + i1))``."""

    def __getattr__(self, name):
        def op(*args):
            return f"{name}({', '.join(map(str, args))})"
        return op


def store_target(node) -> str:
    """The buffer ``node``'s values land in: its own, or the cat output whose slice it writes
    (Note [Cat slices])."""
    view = getattr(node, "out_view", None)
    return node.name if view is None else view.name


def format_node(node) -> str:
    """The node as text, for ir_pre_fusion.txt / ir_post_fusion.txt and ``print``."""
    text = _node_text(node)
    view = getattr(node, "out_view", None)
    if view is None:
        return text
    index = tuple(f"i{d}" for d in range(len(node.ranges)))
    return f"{text}\n    stored into {view.name}[{view.index(index)}] (a slice of a cat)"


def _node_text(node) -> str:
    index = tuple(f"i{d}" for d in range(len(node.ranges)))
    with use_handler(_TextHandler()):
        if isinstance(node, RandomDraws):
            params = ", ".join(map(repr, node.params))
            return (f"{node.name} = RandomDraws({node.dtype}, ranges={list(node.ranges)})\n"
                    f"    [{index[0]}] <- {node.distribution}({params}) of "
                    f"uniform(pcg64({node.state}), {node.offset} + {index[0]})")
        if isinstance(node, IndexAdd):
            rindex = tuple(f"r{d}" for d in range(len(node.reduction_ranges)))
            return (f"{node.name} = IndexAdd({node.dtype}, rows={node.rows}, columns="
                    f"{list(node.ranges)}, source_rows={list(node.reduction_ranges)})\n"
                    f"    [y, {index[0]}] <- {node.init_fn(('y', index[0]))}\n"
                    f"    for [{', '.join(rindex)}]: [{node.row_fn(index, rindex)}, {index[0]}] "
                    f"{node.combine}= {node.inner_fn(index, rindex)}"
                    + (f"\n    where {node.mask_fn(index)}" if node.mask_fn else "")
                    + (f"\n    reached elements start at {node.start_fn()}"
                       if node.start_fn else ""))
        if isinstance(node, Scan):
            return (f"{node.name} = Scan({node.reduction_type}, {node.dtype}, columns="
                    f"{list(node.ranges)}, length={node.reduction_ranges[0]}, inner="
                    f"{node.inner})\n    [{index[0]}, r0] <- {node.reduction_type}("
                    f"[{index[0]}, r0 - 1], {node.inner_fn(index, ('r0',))})")
        if isinstance(node, Reduction):
            rindex = tuple(f"r{d}" for d in range(len(node.reduction_ranges)))
            body = node.inner_fn(index, rindex)
            return (f"{node.name} = Reduction({node.reduction_type}, {node.dtype}, ranges="
                    f"{list(node.ranges)}, reduction_ranges={list(node.reduction_ranges)})\n"
                    f"    [{', '.join(index)}] <- {node.reduction_type} over "
                    f"[{', '.join(rindex)}] of {body}")
        body = node.inner_fn(index)
        return (f"{node.name} = Pointwise({node.dtype}, ranges={list(node.ranges)})\n"
                f"    [{', '.join(index)}] <- {body}")


def contiguous_stride(size) -> tuple:
    stride, step = [], 1
    for s in reversed(size):
        stride.append(step)
        step *= s
    return tuple(reversed(stride))


def contiguous_index(size, index) -> str:
    """The C expression of ``index``'s place in a row-major ``size``."""
    return InputBuffer("", "", tuple(size), contiguous_stride(size)).index(index)


def on_rows(node, outer, inner):
    """``node`` over ``outer + inner``, the same elements in the same order: a reshaped
    reader's outer index comes from the row number (``[1024, 512]`` over rows ``[16, 64]``:
    ``i0*64 + i1``), once per row."""
    if tuple(node.ranges) == outer + inner:
        return node
    sizes = node.ranges[:-1]

    def inner_fn(index):
        row = f"({contiguous_index(outer, index[:len(outer)])})"
        split = []
        for d in range(len(sizes)):
            stride = math.prod(sizes[d + 1:])
            part = f"{row} / {stride}" if stride != 1 else row
            split.append(part if d == 0 else f"({part}) % {sizes[d]}")
        return node.inner_fn(tuple(split) + tuple(index[len(outer):]))
    return Pointwise(node.name, node.dtype, outer + inner, inner_fn)


def is_flat_element(index, ranges, element=None):
    """Whether the index text is element ``element``'s (default (i0, i1, ...)) place in
    row-major ``ranges`` at every element: as text, or (a reshape's view reads
    ``(i0 / 64)*32768 + i0 % 64*512 + i1`` of a [1024, 512] range) evaluated over the whole
    grid. Only sums, products, quotients and remainders of the index variables and integers
    are evaluated (C's ``/`` and ``%`` of non-negative integers are Python's ``//`` and
    ``%``); any other text is not the element."""
    element = element or tuple(f"i{d}" for d in range(len(ranges)))
    if index == contiguous_index(ranges, element):
        return True
    if not all(isinstance(n, int) for n in ranges):     # a runtime size: the text alone
        return False
    grid = dict(zip(element, np.ogrid[tuple(slice(0, n) for n in ranges)]))
    operators = {ast.Add: operator.add, ast.Mult: operator.mul, ast.Div: operator.floordiv,
                 ast.Mod: operator.mod}

    def value(tree):
        if isinstance(tree, ast.BinOp) and type(tree.op) in operators:
            return operators[type(tree.op)](value(tree.left), value(tree.right))
        if isinstance(tree, ast.Name) and tree.id in grid:
            return grid[tree.id]
        if isinstance(tree, ast.Constant) and type(tree.value) is int and tree.value > 0:
            return tree.value
        raise ValueError(index)
    try:
        places = value(ast.parse(index, mode="eval").body)
    except (SyntaxError, ValueError):
        return False
    return np.array_equal(np.broadcast_to(places, ranges),
                          np.arange(math.prod(ranges)).reshape(ranges))


@dataclass
class TensorValue:
    """A tensor of the graph being lowered (Inductor's TensorBox): ``load(index)`` emits its value
    at ``index``. Unrealized (``buffer`` None) it is a formula inlined into every reader, which is
    how chains of pointwise ops fuse; realized, it reads ``buffer``. ``permuted`` = (base value,
    dims) when it is a permute of the unrealized ``base`` (Note [Permuted Extern operands])."""
    dtype: str
    size: tuple
    load: Callable
    buffer: InputBuffer = None
    permuted: tuple = None

    @classmethod
    def of_buffer(cls, buffer: InputBuffer):
        return cls(buffer.dtype, tuple(buffer.size), buffer.load, buffer)
