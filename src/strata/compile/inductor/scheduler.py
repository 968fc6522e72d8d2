"""The scheduler's rules: which realized node joins which kernel (Inductor's ``scheduler.py``
in small). GraphLowering (graph.py) appends each node to its last ``KernelStep`` when
``accepts`` says so, else starts a new one.

Note [Row fusion]
Each realized node is appended to the last kernel when it iterates the same rows: a kernel has
outer ranges R and inner ranges RR; a node joins it if its ranges are R ++ RR (a pointwise
epilogue, or a horizontally fused sibling), R (a per-row value) or, for a reduction, R with
reduction ranges RR; and if it reads the kernel's own buffers only at the row being computed
(reductions, per-row values) or at the element being computed (other values). So softmax is
one kernel of three passes per row (max, sum of exp, the scaled output), layer_norm one of
three (mean, variance, output). A node that joins writes its buffer
in the same loop; a buffer no one reads later is never allocated (dead-buffer removal), and the
wrapper drops each array after its last use so the allocator reuses its memory.
"""

import math

from .ir import (
    IndexAdd,
    InputBuffer,
    Pointwise,
    RandomDraws,
    Reduction,
    contiguous_stride,
    is_flat_element,
    on_rows,
    store_target,
    use_handler,
)

# how many steps back a pointwise node looks for a draws kernel to join: each node scans them,
# and a node moved far ahead holds its buffer longer
EPILOGUE_LOOKBACK = 4
DRAWS_ROW = 8192    # the longest row of a draws kernel with epilogues (a stack array of draws)


class _LoadRecorder:
    """Runs an inner_fn to list the (buffer, index text) pairs it loads."""

    def __init__(self):
        self.loads = []

    def load(self, name, index):
        self.loads.append((name, index))
        return name

    def __getattr__(self, name):
        return lambda *args: name


def node_reads(node, outer_k):
    """The (buffer, index text) pairs ``node`` loads, with outer index variables i0.. for the
    first ``outer_k`` dims (remembered on the node: its inner_fn never changes)."""
    memo = node.__dict__.setdefault("_reads", {})
    if outer_k not in memo:
        index = tuple(f"i{d}" for d in range(outer_k))
        extra = tuple(f"r{d}" for d in range(len(node.ranges) - outer_k))
        with use_handler(_LoadRecorder()) as rec:
            if isinstance(node, Reduction):
                rindex = tuple(f"r{d}" for d in range(len(node.reduction_ranges)))
                node.inner_fn(index, rindex)
                if isinstance(node, IndexAdd):
                    node.row_fn(index, rindex)
                    node.init_fn(("y",) + index)
            else:
                node.inner_fn(index + extra)
        memo[outer_k] = rec.loads
    return memo[outer_k]


class KernelStep:
    def __init__(self, name, outer, inner):
        self.name, self.outer, self.inner = name, tuple(outer), tuple(inner)
        self.nodes, self.reduction_names = [], set()

    @property
    def walks_every_row(self):
        """Whether each chunk of this kernel's columns reads all of its rows: a column
        reduction, scan or index_add (Note [Column chunks] in autotune.py)."""
        return any(getattr(n, "column", False) and not isinstance(n, RandomDraws)
                   for n in self.nodes)

    def accepts(self, node):
        """Note [Row fusion]; a column reduction keeps its kernel to itself (ir.py), or shares
        it with column sums over the same rows (Note [Sibling column sums]); a draws kernel
        takes pointwise epilogues (Note [Random draws]), and once it has rows, the other nodes
        of its rows that read its epilogues, not the draws (a residual's layer_norm)."""
        if self.reads_a_slice_written_here(node):
            return False
        draws = self.nodes[0] if self.nodes and isinstance(self.nodes[0], RandomDraws) else None
        if draws is not None:
            if draws_epilogue(self, node):
                return True
            if not self.inner or any(name == draws.name
                                     for name, _ in node_reads(node, len(self.outer))):
                return False
        if _column_sum(node) and self.nodes and all(map(_column_sum, self.nodes)):
            return (tuple(node.ranges), tuple(node.reduction_ranges)) == \
                (self.outer, self.inner) and not any(
                    name in {n.name for n in self.nodes} for name, _ in node_reads(node, 0))
        if getattr(node, "column", False) or any(getattr(n, "column", False)
                                                 for n in self.nodes if n is not draws):
            return False
        if isinstance(node, Reduction):
            fits = (tuple(node.ranges), tuple(node.reduction_ranges)) == (self.outer, self.inner)
        else:
            fits = tuple(node.ranges) in (self.outer + self.inner, self.outer)
        if not fits:
            return False
        row = tuple(f"i{d}" for d in range(len(self.outer)))
        element = row + tuple(f"r{d}" for d in range(len(self.inner)))
        same_row = index_text(self.outer, row)
        same_element = index_text(self.outer + self.inner, element)
        mine = {n.name: n for n in self.nodes}
        for name, index in node_reads(node, len(self.outer)):
            if name not in mine:
                continue
            if name in self.reduction_names or len(mine[name].ranges) == len(self.outer):
                if index != same_row:
                    return False
            elif index != same_element:
                return False
        return True

    def reads_a_slice_written_here(self, node):
        """Note [Cat slices] (concat.py): whether ``node`` reads a cat output that a node of
        this kernel writes a slice of. Its rows may be another thread's, so it waits for the
        next kernel (a slice of an earlier kernel is complete: that read may join)."""
        written = {store_target(n) for n in self.nodes} - {n.name for n in self.nodes}
        return bool(written) and any(name in written
                                     for name, _ in node_reads(node, len(node.ranges)))

    def add_epilogue(self, node):
        """Note [Random draws] (ir.py): the first epilogue gives the draws' kernel its rows
        (its last dim is a row); every epilogue is computed over those rows."""
        if not self.inner:
            self.outer, self.inner = tuple(node.ranges[:-1]), tuple(node.ranges[-1:])
        self.nodes.append(on_rows(node, self.outer, self.inner))


def draws_epilogue(step, node):
    """Note [Random draws] (ir.py): a pointwise node joins the draws' kernel when it has as
    many elements, the same last dim as the kernel's rows (at most DRAWS_ROW elements: a
    row's draws are a stack array), reads the kernel's buffers (the draws, earlier
    epilogues) and reads them only at the element it computes, in the same flat order."""
    if type(node) is not Pointwise or node.store_into is not None or \
            node.out_view is not None or not node.ranges or \
            not all(isinstance(n, int) for n in node.ranges) or \
            math.prod(node.ranges) != math.prod(step.nodes[0].ranges) or \
            (node.ranges[-1] > DRAWS_ROW if not step.inner else
             (node.ranges[-1],) != step.inner):
        return False
    mine = {n.name for n in step.nodes}
    reads = [index for name, index in node_reads(node, len(node.ranges)) if name in mine]
    return bool(reads) and all(is_flat_element(index, node.ranges) for index in reads)


def _column_sum(node):
    """Note [Sibling column sums]: a layer_norm's weight and bias gradients (or a Linear's bias
    gradient beside another) are column sums over the same rows, usually of the same values:
    one kernel walks the rows once for all of them. Only plain column Reductions qualify (not
    IndexAdd or RandomDraws, which also keep kernels of their own), and none may read another's
    result, which is complete only after the last row."""
    return type(node) is Reduction and node.column


def index_text(size, index):
    return InputBuffer("", "", size, contiguous_stride(size)).index(index)


def without_unit_dims(size, fn, position=0):
    """Note [Unit dims]: ``size`` without its size-1 dims, and ``fn`` taking the shorter index
    (the index tuple at argument ``position``; 0 where a dim was dropped). A size-1 dim adds
    nothing to a loop, but left in it kept a node out of the kernel whose rows it shares: a
    layer_norm's keepdim mean ``[16, 64, 1]`` after its sum over ``[16, 64] x [128]`` (Note
    [Row fusion]) made five kernels of one. The buffer keeps its size: its elements are in
    the same order either way."""
    if 1 not in size:
        return size, fn
    kept = [d for d, n in enumerate(size) if n != 1]

    def widened(*args):
        full = [0] * len(size)
        for d, i in zip(kept, args[position]):
            full[d] = i
        return fn(*args[:position], tuple(full), *args[position + 1:])
    return tuple(size[d] for d in kept), widened
