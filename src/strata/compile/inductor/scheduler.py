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
    Pointwise,
    RandomDraws,
    Reduction,
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


class _OpRecorder(_LoadRecorder):
    """Also lists the other ``ops.*`` calls."""

    def __init__(self):
        super().__init__()
        self.calls = []

    def __getattr__(self, name):
        self.calls.append(name)
        return lambda *args: name


# Note [Cheap shared values]: a value read by several nodes is computed once, into a buffer
# (graph.py's ``_realize_shared``), unless it is a short formula of a few loads and plain
# arithmetic: then each reader computes it again where it reads it (Inductor's
# ``TensorBox.mark_reuse``: it realizes a reused CPU value only for heavy ops such as exp, more
# than ``realize_reads_threshold`` = 4 reads, or a large formula). An attention's q, k and v
# are three slices of one ``x @ W + b``: each head-major copy adds its slice of the bias
# itself, and the biased product is never written and read back (1.5 MB each way a layer of
# the tiny GPT).
SHARED_READS_MAX = 4
SHARED_OPS_MAX = 8
CHEAP_OPS = {"add", "sub", "mul", "neg", "constant", "where", "maximum", "minimum"}


def cheap_to_repeat(value) -> bool:
    recorder = _OpRecorder()
    with use_handler(recorder):
        value.load(tuple(f"i{d}" for d in range(len(value.size))))
    return len(recorder.loads) <= SHARED_READS_MAX and len(recorder.calls) <= SHARED_OPS_MAX \
        and set(recorder.calls) <= CHEAP_OPS


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


# Note [Reshaped rows]: a pointwise node over another factoring of a kernel's rows (``[1024,
# 512]`` after a kernel over ``[16, 64] x [512]``: a Linear's output, its bias added over the
# batch's shape, then read through a reshape by GELU) joins that kernel when it has as many
# elements and the same last dim: ``on_rows`` gives it the kernel's rows, and its reads of
# the kernel's buffers, whose index text now differs (``((i0*64 + i1) / 64)*32768 + ...``),
# are checked to be each element's own by evaluating them over the whole grid
# (``is_flat_element``). The tiny GPT's MLP bias add and GELU were two kernels, the 2 MB sum
# written and read back between them.


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
            if (tuple(node.ranges), tuple(node.reduction_ranges)) != (self.outer, self.inner):
                return False
        else:
            node = self.on_my_rows(node)
            if node is None:
                return False
        row = tuple(f"i{d}" for d in range(len(self.outer)))
        element = row + tuple(f"r{d}" for d in range(len(self.inner)))
        mine = {n.name: n for n in self.nodes}
        for name, index in node_reads(node, len(self.outer)):
            if name not in mine:
                continue
            if name in self.reduction_names or len(mine[name].ranges) == len(self.outer):
                if not is_flat_element(index, self.outer, row):
                    return False
            elif not is_flat_element(index, self.outer + self.inner, element):
                return False
        return True

    def on_my_rows(self, node):
        """Note [Reshaped rows]: pointwise ``node`` as this kernel computes it: itself where
        its ranges are the kernel's (or one value a row), else reindexed onto the kernel's
        rows where it has as many elements and the same row; None where it has not."""
        if tuple(node.ranges) in (self.outer + self.inner, self.outer):
            return node
        sizes = (*self.outer, *self.inner, *node.ranges)
        if type(node) is not Pointwise or node.store_into is not None or \
                node.out_view is not None or len(self.inner) != 1 or \
                not all(isinstance(n, int) for n in sizes) or not node.ranges or \
                node.ranges[-1] != self.inner[0] or \
                math.prod(node.ranges) != math.prod(self.outer + self.inner):
            return None
        return on_rows(node, self.outer, self.inner)

    def add(self, node):
        """Appends ``node``, which ``accepts`` said may join (reindexed onto the rows)."""
        if isinstance(node, Reduction):
            self.reduction_names.add(node.name)
        else:
            node = self.on_my_rows(node)
        self.nodes.append(node)

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
