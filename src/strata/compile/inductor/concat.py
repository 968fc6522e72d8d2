"""Note [Cat slices]: a cat computed in place by the kernels of its inputs.

Inductor's ConcatKernel and NonOwningLayout (``torch/_inductor/ir.py``): the cat's output is
allocated once, and each input's kernel stores its values straight into the input's slice of it
(a strided store: ``buf55[x*384 + 128 + y]``), so the cat itself moves no data. Readers of an
input other than the cat read its slice (a strided view of the cat's output).

How an input gets into its slice:

- an input the graph realizes anyway (read by several nodes, or a reduction's result) is
  planned before the graph is walked (``plan_cat_slots``): when it is lowered, its node is
  made to store into the slice (``land``) instead of a buffer of its own;
- an unrealized formula read only by the cat is computed into its slice when the cat is
  lowered (``concat_kernel``), by a node that fuses with its siblings;
- any other input (a graph input, a GEMM's or an eager kernel's output, a view) is copied into
  its slice by a generated copy kernel, fused with the others.

The values are the inputs' own (a store of the value computed, or a copy): eager's, bit for
bit. Where no input is computed by the graph's kernels, today's rules stand: a cat along an
outer dim is a select formula fused into its readers (lowering_shape.py) and one along the
innermost dim runs eager's copies. Along an outer dim only inputs realized anyway take slices
(a formula read only by the cat stays inlined in the select). Half dtypes keep those rules too.

A kernel never reads a slice that one of its own nodes writes (scheduler.py
``reads_a_slice_written_here``): its rows may be another thread's. It may read slices that
earlier kernels wrote, through the one pointer that writes its own slices (cprinter.py).
"""

from dataclasses import dataclass

from .half import HALF
from .ir import (
    InputBuffer,
    Pointwise,
    RandomDraws,
    Reduction,
    TensorValue,
    contiguous_stride,
    ops,
)
from .lowering import DTYPES, aten, dtype_name

MAX_PIECES = 16     # a cat of more inputs keeps the eager kernel: a select chain per element


@dataclass(frozen=True)
class CatSlot:
    """Where one input of a cat lands: ``cat`` (its fx node) along ``dim``, from ``start``."""
    cat: object
    dim: int
    start: int
    size: tuple


def select_refuses(size, dim, pieces) -> bool:
    """Whether a cat keeps off the select formula (lowering_shape.py): along the innermost dim
    its selects and clamped loads keep the inner loop from vectorising; more than MAX_PIECES
    make a select chain per element."""
    return (dim == len(size) - 1 and size[dim] > 1) or pieces > MAX_PIECES


def _starts(sizes, dim, ndim):
    """Each input's start along ``dim`` (None for a legacy empty 1-D input, which cat skips)."""
    starts, at = [], 0
    for size in sizes:
        if len(size) == 1 and size[0] == 0 and ndim != 1:
            starts.append(None)
            continue
        starts.append(at)
        at += size[dim]
    return starts


def _cat_args(node):
    tensors = node.args[0]
    dim = node.args[1] if len(node.args) > 1 else node.kwargs.get("dim", 0)
    return tensors, dim


def plan_cat_slots(gm, outputs) -> dict:
    """fx node -> CatSlot for each input of a cat that may be computed into its slice: computed
    by the graph (not an input or a constant), read by that cat once, not a graph output (whose
    tensor would be a view), read by no ``as_strided`` (which would see the cat's storage), with
    the cat's dtype, not a half one."""
    slots = {}
    for node in gm.graph.nodes:
        if node.op != "call_function" or node.target is not aten.cat.default or not node.users:
            continue
        val = node.meta.get("val")
        dtype = dtype_name(val.dtype)
        if dtype not in DTYPES or dtype in HALF or 0 in val.shape:
            continue
        tensors, dim = _cat_args(node)
        d = dim % val.ndim
        sizes = [tuple(t.meta["val"].shape) for t in tensors]
        for t, size, start in zip(tensors, sizes, _starts(sizes, d, val.ndim)):
            if start is None or t.op != "call_function" or t in outputs or t in slots or \
                    tensors.count(t) != 1 or not size[d] or \
                    dtype_name(t.meta["val"].dtype) != dtype or \
                    any(u.target is aten.as_strided.default for u in t.users):
                continue
            slots[t] = CatSlot(node, d, start, size)
    return slots


def cat_buffer(G, cat) -> InputBuffer:
    """The output buffer of the cat ``cat`` (its fx node), allocated at its first slice."""
    buffer = G.cat_buffers.get(cat)
    if buffer is None:
        val = cat.meta["val"]
        size = tuple(val.shape)
        buffer = InputBuffer(G._name(), dtype_name(val.dtype), size, contiguous_stride(size))
        G.buffers[buffer.name] = buffer
        G.cat_buffers[cat] = buffer
    return buffer


def _slice(buffer, dim, start, size) -> InputBuffer:
    return InputBuffer(buffer.name, buffer.dtype, tuple(size), buffer.stride,
                       start * buffer.stride[dim])


def store_view(view, ranges) -> InputBuffer:
    """``view`` over a node's ``ranges`` (its size without the size-1 dims, Note [Unit
    dims]): what the node's index addresses."""
    assert tuple(n for n in view.size if n != 1) == tuple(ranges), (view.size, ranges)
    return InputBuffer(view.name, view.dtype, tuple(ranges),
                       tuple(s for n, s in zip(view.size, view.stride) if n != 1), view.offset)


def land(G, node, value, lowered):
    """The value of the fx node ``node``, an input of a planned cat (``G.cat_slots``), as its
    slice of the cat's output where the graph would realize it anyway; else ``value``.
    ``lowered``: the nodes its lowering scheduled."""
    slot = G.cat_slots[node]
    if not isinstance(value, TensorValue) or tuple(value.size) != slot.size or \
            value.dtype != dtype_name(slot.cat.meta["val"].dtype):
        return value
    numel = 1
    for n in slot.size:
        numel *= n
    if value.buffer is None:
        if len(node.users) > 1 and numel > 1:   # realized anyway: into its slice
            view = _slice(cat_buffer(G, slot.cat), slot.dim, slot.start, slot.size)
            return G.realize_into(value, view)
        return value      # computed by the cat (``concat_kernel``) or inlined in its select
    producer = _fresh_producer(G, value.buffer, lowered)
    if producer is None:
        return value
    buffer = cat_buffer(G, slot.cat)
    step = next((s for s in reversed(G.kernels()) if any(n is producer for n in s.nodes)),
                None)
    if step is None or isinstance(step.nodes[0], RandomDraws) or \
            buffer.name in G._external_reads(step):
        return value      # a draws epilogue, or its kernel reads the cat's output
    view = _slice(buffer, slot.dim, slot.start, slot.size)
    producer.out_view = store_view(view, producer.ranges)
    del G.buffers[producer.name]
    G.kernel_outputs.discard(producer.name)
    return TensorValue.of_buffer(view)


def _fresh_producer(G, buffer, lowered):
    """The node that has just computed the whole of ``buffer`` into memory of its own (the
    last of ``lowered``: read by no node yet), if it can store into a slice instead: a
    pointwise node or a row reduction, its elements in the buffer's row-major order."""
    node = lowered[-1] if lowered else None
    if type(node) not in (Pointwise, Reduction) or node.name != buffer.name or \
            G.buffers.get(buffer.name) is not buffer or buffer.offset or \
            (node.store_into is not None if type(node) is Pointwise else node.column):
        return None
    kept = tuple(n for n in buffer.size if n != 1)
    if tuple(node.ranges) != kept or tuple(
            s for n, s in zip(buffer.size, buffer.stride) if n != 1) != contiguous_stride(kept):
        return None
    return node


def concat_kernel(G, node, tensors, dim):
    """The cat ``node`` of ``tensors`` as its output buffer, each input computed or copied
    into its slice; None where today's rules stand (see the Note)."""
    val = node.meta["val"]
    dtype, size = dtype_name(val.dtype), tuple(val.shape)
    if G.device_type != "cpu" or dtype not in DTYPES or dtype in HALF or 0 in size:
        return None
    d = dim % len(size)
    starts = _starts([t.size for t in tensors], d, len(size))
    computed = any(t.buffer is None for t in tensors)
    if node not in G.cat_buffers and not (select_refuses(size, d, len(tensors)) and computed):
        return None
    buffer = cat_buffer(G, node)
    for t, start in zip(tensors, starts):
        if start is None or not t.size[d]:
            continue
        view = _slice(buffer, d, start, t.size)
        if t.buffer != view:    # not landed: computed or copied into its slice
            load = t.load if t.dtype == dtype else (
                lambda i, t=t: ops.to_dtype(t.load(i), dtype))
            G.realize_into(TensorValue(dtype, tuple(t.size), load), view)
    return TensorValue.of_buffer(buffer)
