"""The C printer: one ``Kernel`` of the loop IR (ir.py) -> one C function.

Shape of the code (``codegen/cpp.py`` in Inductor, tinygrad's ``renderer/cstyle.py`` for the
printer-per-op table)::

    void kernel(const float* restrict in0, float* restrict out, int64_t x_lo, int64_t x_hi) {
      for (int64_t x = x_lo; x < x_hi; x++) {      // one row of the outer ranges per iteration
        <each node of the kernel in order; a reduction's loop and a pointwise loop over the
         row's inner dims are '#pragma omp simd' loops>
      }
    }

The caller splits ``[0, outer numel)`` over threads (``parallel_for`` of the CPU backend, the
one thread pool of strata): no OpenMP runtime, whose spinning threads stall on a busy machine.

Semantics are eager's: no -ffast-math (see backends/cpu/native.py for the flags); max/min
propagate NaN; integer maths wraps (-fwrapv). Integer division is generated only by a divisor
that cannot be 0 (scatter_reduce's mean over a count >= 1); elsewhere it stays with the eager
kernel, which raises ZeroDivisionError where C would trap.
"""

import itertools
import math
from math import prod as _int_prod

from .cdraws import (
    print_random_draws,
    print_row_draws,
    print_row_draws_start,
)
from .cpreamble import OWN_FLOAT32_MATH, PREAMBLE, VECTOR_MATH
from .csplit import split_row_loops
from .cstages import staged_loop
from .half import HALF, c_load, c_loaded, c_store, c_stored
from .ir import (
    C_BUFFER_TYPES,
    C_TYPES,
    IndexAdd,
    Pointwise,
    RandomDraws,
    Reduction,
    Scan,
    reduction_init,
    store_target,
    use_handler,
)

UNROLL = 16   # a reduction over at most this many elements is printed without a loop
SINGLE = frozenset(("float32", *HALF))      # computed in C's float (Note [Half dtypes])
FLOATING = SINGLE | {"float64"}
def prod(sizes):
    """The product of sizes that are ints or C names of runtime sizes (eager kernels take their
    length as an argument ``n``): an int when every size is known, else a C expression."""
    known = _int_prod(s for s in sizes if isinstance(s, int))
    names = [s for s in sizes if isinstance(s, str)]
    if not names:
        return known
    return " * ".join(names + ([str(known)] if known != 1 else []))


def _size_names(kernel):
    """The runtime sizes and strides (C names) of a kernel: its int64 arguments."""
    names = []
    for node in kernel.nodes:
        for s in (*node.ranges, *getattr(node, "reduction_ranges", ())):
            if isinstance(s, str) and s not in names:
                names.append(s)
    for buffer in kernel.inputs:
        for s in buffer.stride:
            if isinstance(s, str) and s not in names:
                names.append(s)
    return names


class CValue:
    """A C variable holding one value of a kernel's body, with its dtype; a half value may
    also know the C variable of its 16 bits (``bits``: loaded or rounded), which a store of
    it writes as they are."""

    def __init__(self, name, dtype, bits=None):
        self.name, self.dtype, self.bits = name, dtype, bits

    def __str__(self):
        return self.name


def _literal(value, dtype) -> str:
    if dtype == "bool":
        return "true" if value else "false"
    if dtype in HALF:       # a float: scalars meet half values in float (ATen's opmath)
        return _literal(value, "float32")
    if dtype.startswith("float"):
        if math.isnan(value):
            return "NAN"
        if math.isinf(value):
            return "INFINITY" if value > 0 else "-INFINITY"
        text = repr(float(value))
        return text + "f" if dtype == "float32" else text
    return f"((int64_t){int(value)}LL)" if dtype == "int64" else str(int(value))


class CHandler:
    """``ops.*`` for the C printer: each call appends one ``const T tN = ...;`` line.
    ``types`` and ``literal`` are the language's (oclprinter.py's handler is a subclass)."""

    types = C_TYPES
    literal = staticmethod(_literal)

    def __init__(self, buffers: dict, lines: list, indent: str, aliases=None):
        self.buffers, self.lines, self.indent = buffers, lines, indent
        self.aliases = aliases if aliases is not None else {}   # local node -> its C variable
        self.count = 0

    def _emit(self, expr, dtype) -> CValue:
        name = f"t{self.count}"
        self.count += 1
        self.lines.append(f"{self.indent}const {self.types[dtype]} {name} = {expr};")
        return CValue(name, dtype)

    def _math(self, fn, x):
        if x.dtype in SINGLE:
            return self._emit(f"{OWN_FLOAT32_MATH.get(fn, fn + 'f')}({x})", x.dtype)
        return self._emit(f"{fn}({x})", x.dtype)

    def _half(self, bits, dtype):
        """A half value from the C expression of its 16 bits (Note [Half dtypes])."""
        name = f"b{self.count}"
        self.lines.append(f"{self.indent}const {C_BUFFER_TYPES[dtype]} {name} = {bits};")
        value = self._emit(c_load(dtype, name), dtype)
        value.bits = name
        return value

    def load(self, name, index):
        if name in self.aliases:    # a per-row value of this kernel, read at its row
            return CValue(self.aliases[name], self.buffers[name])
        if self.buffers[name] in HALF:
            return self._half(f"{name}[{index}]", self.buffers[name])
        return self._emit(f"{name}[{index}]", self.buffers[name])

    def constant(self, value, dtype):
        return self._emit(self.literal(value, dtype), dtype)

    def index_expr(self, expr, dtype):
        """The value of an index expression (a runtime size such as ``n``) as ``dtype``."""
        if dtype in HALF:
            return self.to_dtype(self.index_expr(expr, "int64"), dtype)
        return self._emit(f"({self.types[dtype]})({expr})", dtype)

    def to_dtype(self, x, dtype):
        """A conversion the graph asks for (Note [Half dtypes]): to a half dtype it rounds, and
        a half value computed in float is first rounded to its own dtype, as eager's tensor
        holds it (``bf16_matmul(...).float()``). The OpenCL subclass keeps its own rule."""
        if x.dtype in HALF and x.dtype != dtype and x.bits is None and self.types is C_TYPES:
            x = self.to_dtype(x, x.dtype)
        if dtype in HALF:
            return self._half(c_stored(dtype, x), dtype)
        return self._emit(f"({self.types[dtype]})({x})", dtype)

    def add(self, a, b):
        return self._emit(f"{a} + {b}", a.dtype)

    def sub(self, a, b):
        return self._emit(f"{a} - {b}", a.dtype)

    def mul(self, a, b):
        return self._emit(f"{a} * {b}", a.dtype)

    def truediv(self, a, b):
        return self._emit(f"{a} / {b}", a.dtype)

    def neg(self, x):
        return self._emit(f"-{x}", x.dtype)

    def reciprocal(self, x):
        return self._emit(f"1 / {x}", x.dtype)

    def maximum(self, a, b):
        return self._emit(f"MAX_PROP({a}, {b})", a.dtype)

    def minimum(self, a, b):
        return self._emit(f"MIN_PROP({a}, {b})", a.dtype)

    def where(self, cond, a, b):
        return self._emit(f"{cond} ? {a} : {b}", a.dtype)

    def abs(self, x):
        if x.dtype in FLOATING:
            return self._math("fabs", x)
        return self._emit(f"{x} < 0 ? -{x} : {x}", x.dtype)

    def sqrt(self, x):
        return self._math("sqrt", x)

    def pow(self, a, b):
        """libm's ``pow``, the function Python's ``float ** float`` calls (an optimizer's bias
        corrections must be eager's doubles); not vectorised (no simd declaration). Integers:
        ``strata_ipow``."""
        if a.dtype not in SINGLE and a.dtype != "float64":
            return self._emit(f"({C_TYPES[a.dtype]})strata_ipow((int64_t){a}, (int64_t){b})",
                              a.dtype)
        return self._emit(f"{'powf' if a.dtype in SINGLE else 'pow'}({a}, {b})", a.dtype)

    def rsqrt(self, x):
        return self._emit(f"1 / {self.sqrt(x)}", x.dtype)

    def sigmoid(self, x):
        e = self._math("exp", self.neg(x))
        return self._emit(f"1 / (1 + {e})", x.dtype)

    def relu(self, x):
        return self._emit(f"{x} < 0 ? 0 : {x}", x.dtype)   # NaN stays NaN

    def libm(self, fn, *args):
        """libm's ``fn`` of floats (``fnf`` in float32): the functions beyond VECTOR_MATH
        (floor, fmod, atan2, asinh...), which gcc inlines or calls per element."""
        suffix = "f" if args[0].dtype in SINGLE else ""
        return self._emit(f"{fn}{suffix}({', '.join(map(str, args))})", args[0].dtype)

    def int_fmod(self, a, b):
        """C's ``%`` of integers (truncated, as ``fmod``), 0 for b = -1 and b = 0, where the
        hardware traps (INT64_MIN % -1 overflows; a Check step has refused a zero divisor).
        One conditional expression: C evaluates only the branch it takes."""
        return self._emit(f"({b} == 0 || {b} == -1) ? 0 : {a} % {b}", a.dtype)

    def int_trunc_divide(self, a, b):
        """C's ``/`` of integers; b = -1 negates with wrap-around (INT64_MIN / -1 is
        INT64_MIN, as NumPy's), b = 0 gives 0 (refused by a Check step)."""
        return self._emit(f"{b} == 0 ? 0 : ({b} == -1 ? -{a} : {a} / {b})", a.dtype)

    def classify(self, macro, x):
        """A math.h classification macro (isnan, isinf, isfinite, signbit) as a bool. A half
        value's sign is read by ``copysignf``: gcc 12 fails with an internal compiler error
        vectorising ``signbit`` of a widened float16 in a loop of 13 (its V2SF remainder)."""
        if macro == "signbit" and x.dtype in HALF:
            return self._emit(f"copysignf(1.0f, {x}) < 0", "bool")
        return self._emit(f"{macro}({x}) != 0", "bool")

    def bitwise(self, operator, a, b=None):
        """``~a`` (``!a`` for a bool), or ``a & b``, ``a | b``, ``a ^ b`` of integers/bools."""
        if b is None:
            return self._emit(f"{'!' if a.dtype == 'bool' else '~'}{a}", a.dtype)
        return self._emit(f"{a} {operator} {b}", a.dtype)

    def __getattr__(self, name):
        if name in VECTOR_MATH:
            return lambda x: self._math(name, x)
        comparisons = {"lt": "<", "le": "<=", "gt": ">", "ge": ">=", "eq": "==", "ne": "!="}
        if name in comparisons:
            return lambda a, b: self._emit(f"{a} {comparisons[name]} {b}", "bool")
        raise AttributeError(f"the C printer has no rule for ops.{name}")


def _index_vars(prefix, ranges, flat, indent):
    """Lines splitting the flat index ``flat`` over ``ranges`` into one variable per dim.

    Each dim divides what the dims before it left (``rest``), and leaves ``rest - dim *
    inner`` to the next, instead of ``(flat / inner) % range`` (the same values): a contiguous
    load's ``r0*676 + r1*26 + r2`` then telescopes back to ``y`` in the C compiler, which it
    did not through ``%`` (nor when each dim's quotient was divided out of ``flat``: gcc folds
    ``y - (y / 26) * 26`` into a ``%`` again). A conv's bias gradient, a sum over 26x26
    planes, ran 13x slower with every element's address divided out."""
    names, lines, rest = [], [], flat
    for d in range(len(ranges)):
        inner = prod(ranges[d + 1:])
        name = f"{prefix}{d}"
        lines.append(f"{indent}const int64_t {name} = "
                     f"{f'{rest} / ({inner})' if inner != 1 else rest};")
        names.append(name)
        if inner != 1:
            lines.append(f"{indent}const int64_t {prefix}_rest{d + 1} = {rest} - {name} * "
                         f"({inner});")
            rest = f"{prefix}_rest{d + 1}"
        else:   # this dim took all of it: the dims after it have size 1
            rest = "0"
    return names, lines


def _inner_loop(lines, indent, extra, pragma):
    """Open a flat ``#pragma omp simd`` loop over ``extra`` dims: the index variables."""
    lines.append(f"{indent}{pragma}")
    lines.append(f"{indent}for (int64_t y = 0; y < {prod(extra)}; y++) {{")
    names, index_lines = _index_vars("r", extra, "y", indent + "    ")
    lines.extend(index_lines)
    return names


def _written(kernel):
    """(name, dtype) of each buffer the kernel writes, one pointer argument each: the nodes'
    own (not kept local, not stored over another node), and once each cat output whose
    slices nodes write (Note [Cat slices])."""
    written = {}
    for n in kernel.nodes:
        if n.name not in kernel.local and getattr(n, "store_into", None) is None:
            written.setdefault(store_target(n), n.dtype)
    return list(written.items())


def _read(kernel):
    """The inputs that get a read-only pointer: not those the kernel also writes (a cat output
    whose slices earlier kernels wrote is read through the one pointer that writes others)."""
    written = {name for name, _ in _written(kernel)}
    return [b for b in kernel.inputs if b.name not in written]


def kernel_arguments(kernel) -> list:
    """The buffer names the C function of ``kernel`` takes, in order (before its int64s)."""
    return [b.name for b in _read(kernel)] + [name for name, _ in _written(kernel)]


def pointer_count(kernel) -> int:
    """How many pointer arguments the C function of ``kernel`` takes (before its int64 ones)."""
    return len(kernel_arguments(kernel))


def print_kernel(kernel, outer_ranges) -> str:
    """The C function of ``kernel``; every node's ranges start with ``outer_ranges``."""
    written = _written(kernel)
    buffers = {b.name: b.dtype for b in kernel.inputs}
    buffers.update({n.name: n.dtype for n in kernel.nodes})
    buffers.update(written)
    params = [f"const {C_BUFFER_TYPES[b.dtype]}* restrict {b.name}" for b in _read(kernel)]
    params += [f"{C_BUFFER_TYPES[dtype]}* restrict {name}" for name, dtype in written]
    params += [f"int64_t {name}" for name in _size_names(kernel)]
    params += ["int64_t x_lo", "int64_t x_hi"]
    k = len(outer_ranges)
    lines = [f"void {kernel.name}({', '.join(params)}) {{"]
    draws = kernel.nodes[0] if isinstance(kernel.nodes[0], RandomDraws) else None
    if draws is not None and len(kernel.nodes) > 1:
        row = prod(kernel.nodes[1].ranges[k:])    # its epilogues' last dim
        print_row_draws_start(draws, row, lines)
    elif any(getattr(n, "column", False) for n in kernel.nodes):
        node = kernel.nodes[0]      # a kernel of its own, or of sibling column sums
        if isinstance(node, IndexAdd):
            _print_index_add(node, outer_ranges, buffers, lines)
        elif isinstance(node, RandomDraws):
            print_random_draws(node, lines)
        elif isinstance(node, Scan):
            _print_scan(node, buffers, lines)
        else:
            _print_column_reductions(kernel.nodes, outer_ranges, buffers, lines)
        lines.append("}")
        return "\n".join(lines)
    flat = all(len(n.ranges) == k and (isinstance(n, Pointwise) or _unrolled(n))
               for n in kernel.nodes)
    index, body = _index_vars("i", outer_ranges, "x", " " * 8)
    index_lines = list(body)
    aliases = {}
    open_loop = None    # the inner ranges of the pointwise loop just printed (its "}" last)
    for node in kernel.nodes:
        if node is draws:
            print_row_draws(node, row, body, node.name not in kernel.local)
            aliases[node.name] = f"{node.name}_row[y]"   # read in the epilogues' row loops
            open_loop = None
            continue
        local = node.name in kernel.local
        extra = tuple(node.ranges[k:])
        shares = (draws is None and isinstance(node, Pointwise) and not local and extra
                  and extra == open_loop)
        if shares:
            body.pop()     # Note [Shared row loops]: back inside the previous node's loop
        _print_node(node, index, k, buffers, body, aliases, local, shares)
        open_loop = extra if isinstance(node, Pointwise) and extra else None
    staged = None
    if flat and draws is None and all(isinstance(n, Pointwise) for n in kernel.nodes):
        staged = staged_loop(body[len(index_lines):], index_lines)   # Note [Staged chains]
    if staged is not None:
        lines += staged
    else:
        if flat:    # no inner loop: the outer one is the vector loop
            lines.append("    #pragma omp simd")
        lines += ["    for (int64_t x = x_lo; x < x_hi; x++) {", *split_row_loops(body), "    }"]
    lines.append("}")
    return "\n".join(lines)


# Note [Column accumulators]: a column reduction's running sums are a stack array of a block of
# its chunk's columns, stored into the output once, after the last row. Accumulated in the
# output itself, every row stored into it: two threads whose chunks meet inside one cache
# line (NumPy aligns a small array to 16 bytes, not 64) passed that line between their cores
# at each row: a layer_norm's weight and bias gradients (1024 rows of 128 columns, two
# chunks) took 112 us on two threads, against 27 us on one, and 24 us with the line apart.
COLUMN_BLOCK = 256


def _print_column_reductions(nodes, outer_ranges, buffers, lines):
    """Note [Column reductions] (ir.py): ``acc[x] += value(x, y)`` for each reduced row y, the
    SIMD loop running over a block of this chunk's kept elements x (Note [Column
    accumulators]); sibling sums (Note [Sibling column sums], scheduler.py) add their values
    in the same loop, sharing its loads."""
    assert all(n.dtype not in HALF for n in nodes), \
        "a half sum accumulates in float: not in its output"
    reduction_ranges = nodes[0].reduction_ranges
    lines.append(f"    for (int64_t xb = x_lo; xb < x_hi; xb += {COLUMN_BLOCK}) {{")
    lines.append(f"        const int64_t xe = xb + {COLUMN_BLOCK} < x_hi ? "
                 f"xb + {COLUMN_BLOCK} : x_hi;")
    for node in nodes:
        lines.append(f"        {C_BUFFER_TYPES[node.dtype]} acc_{node.name}[{COLUMN_BLOCK}];")
        lines.append(f"        for (int64_t x = xb; x < xe; x++) acc_{node.name}[x - xb] = 0;")
    lines.append(f"        for (int64_t y = 0; y < {prod(reduction_ranges)}; y++) {{")
    rindex, rindex_lines = _index_vars("r", reduction_ranges, "y", " " * 12)
    lines.extend(rindex_lines)
    lines.append("            #pragma omp simd")
    lines.append("            for (int64_t x = xb; x < xe; x++) {")
    index, index_lines = _index_vars("i", outer_ranges, "x", " " * 16)
    lines.extend(index_lines)
    for node in nodes:
        with use_handler(CHandler(buffers, lines, " " * 16)) as h:
            h.count = len(lines)     # names distinct across the sums
            value = node.inner_fn(tuple(index), tuple(rindex))
        acc = f"acc_{node.name}[x - xb]"
        lines.append(f"                {acc} = {acc} + {value};")
    lines.append("            }")
    lines.append("        }")
    for node in nodes:
        lines.append(f"        for (int64_t x = xb; x < xe; x++) {node.name}[x] = "
                     f"acc_{node.name}[x - xb];")
    lines.append("    }")


COMBINE = {"sum": "{0} + {1}", "prod": "{0} * {1}", "max": "MAX_PROP({0}, {1})",
           "min": "MIN_PROP({0}, {1})", "assign": "{1}"}    # IndexAdd's ``combine``, as C


def _print_index_add(node, outer_ranges, buffers, lines):
    """Note [Scatter-add] (ir.py): this chunk's columns x of every output row start at
    ``init``; then, source row by source row in order, ``out[row, x] = combine(out[row, x],
    value(x, y))`` in a SIMD loop over x (one row's columns are distinct elements)."""
    (columns,) = outer_ranges
    inner, out = node.inner, node.name
    if inner is None:
        def place(row):
            return f"({row}) * {columns} + x"
    else:
        def place(row):
            return f"(x / {inner}) * {node.rows * inner} + ({row}) * {inner} + x % {inner}"
    # each combination rounds to the dtype, as eager's ``np.add.at`` on a half array does
    if node.init_fn is not None:          # else the output is updated in place (eager's)
        lines.append(f"    for (int64_t y = 0; y < {node.rows}; y++) {{")
        lines.append("        #pragma omp simd")
        lines.append("        for (int64_t x = x_lo; x < x_hi; x++) {")
        with use_handler(CHandler(buffers, lines, " " * 12)):
            value = node.init_fn(("y", "x"))
        first = f"{out}[{place('y')}]"
        lines.append(f"            {c_store(node.dtype, first, value)}")
        lines.append("        }")
        lines.append("    }")
    if inner is not None:     # the row depends on the column: loaded in the SIMD loop
        if node.start_fn is not None:
            _index_add_pass(node, place, buffers, lines, start=True)
        _index_add_pass(node, place, buffers, lines)
        return
    assert node.start_fn is None and node.mask_fn is None, "rows of a 2-D output: no mask"
    lines.append(f"    for (int64_t y = 0; y < {prod(node.reduction_ranges)}; y++) {{")
    rindex, rindex_lines = _index_vars("r", node.reduction_ranges, "y", " " * 8)
    lines.extend(rindex_lines)
    with use_handler(CHandler(buffers, lines, " " * 8)) as h:
        row = node.row_fn(("x",), tuple(rindex))
        count = h.count
    lines.append(f"        {C_BUFFER_TYPES[node.dtype]}* out_row = "
                 f"{node.name} + ({row}) * {columns};")
    lines.append("        #pragma omp simd")
    lines.append("        for (int64_t x = x_lo; x < x_hi; x++) {")
    with use_handler(CHandler(buffers, lines, " " * 12)) as h:
        h.count = count     # names distinct from the row's
        value = node.inner_fn(("x",), tuple(rindex))
    combined = COMBINE[node.combine].format(c_loaded(node.dtype, "out_row[x]"), value)
    lines.append(f"            {c_store(node.dtype, 'out_row[x]', combined)}")
    lines.append("        }")
    lines.append("    }")


def _index_add_pass(node, place, buffers, lines, start=False):
    """One pass of an N-D IndexAdd over the source rows: each value combined into the element
    its column's index names (``start``: the element set to ``start_fn()`` instead); columns
    outside ``mask_fn`` are skipped."""
    out = node.name
    lines.append(f"    for (int64_t y = 0; y < {prod(node.reduction_ranges)}; y++) {{")
    rindex, rindex_lines = _index_vars("r", node.reduction_ranges, "y", " " * 8)
    lines.extend(rindex_lines)
    lines.append("        #pragma omp simd")
    lines.append("        for (int64_t x = x_lo; x < x_hi; x++) {")
    with use_handler(CHandler(buffers, lines, " " * 12)):
        reached = node.mask_fn(("x",)) if node.mask_fn is not None else None
        row = node.row_fn(("x",), tuple(rindex))
        value = node.start_fn() if start else node.inner_fn(("x",), tuple(rindex))
    combined = value if start else COMBINE[node.combine].format(
        c_loaded(node.dtype, f"{out}[at]"), value)
    lines.append(f"            const int64_t at = {place(row)};")
    store = c_store(node.dtype, f"{out}[at]", combined)
    lines.append(f"            if ({reached}) {store}" if reached is not None
                 else f"            {store}")
    lines.append("        }")
    lines.append("    }")


def _print_scan(node, buffers, lines):
    """Note [Scans] (ir.py): the first value of each of this chunk's columns, then each next
    position combined with the previous one. A scan along the last dim keeps its running
    value in a register, row by row; along another dim the positions go in order and a SIMD
    loop runs over the columns (each reading its previous position back)."""
    (length,), inner, out = node.reduction_ranges, node.inner, node.name
    if inner == 1:
        lines.append("    for (int64_t x = x_lo; x < x_hi; x++) {")
        with use_handler(CHandler(buffers, lines, " " * 8)) as h:
            lines.append(f"        {C_TYPES[node.dtype]} acc = {node.inner_fn(('x',), ('0',))};")
            lines += [f"        {out}[x * {length}] = acc;",
                      f"        for (int64_t y = 1; y < {length}; y++) {{"]
            h.indent = " " * 12
            value = node.combine_fn(CValue("acc", node.dtype), node.inner_fn(("x",), ("y",)))
        lines += [f"            acc = {value};", f"            {out}[x * {length} + y] = acc;",
                  "        }", "    }"]
        return

    def place(y):
        return f"(x / {inner}) * {length * inner} + ({y}) * {inner} + x % {inner}"
    lines += ["    #pragma omp simd", "    for (int64_t x = x_lo; x < x_hi; x++) {"]
    with use_handler(CHandler(buffers, lines, " " * 8)):
        lines.append(f"        {out}[{place(0)}] = {node.inner_fn(('x',), ('0',))};")
    lines += ["    }", f"    for (int64_t y = 1; y < {length}; y++) {{", "        #pragma omp simd",
              "        for (int64_t x = x_lo; x < x_hi; x++) {"]
    with use_handler(CHandler(buffers, lines, " " * 12)):
        previous = CValue(f"{out}[{place('y - 1')}]", node.dtype)
        value = node.combine_fn(previous, node.inner_fn(("x",), ("y",)))
    lines += [f"            {out}[{place('y')}] = {value};", "        }", "    }"]


def _unrolled(node):
    """Whether a reduction is printed as straight-line code (a small window, a pooling's)."""
    return isinstance(node, Reduction) and not node.column and all(
        isinstance(r, int) for r in node.reduction_ranges) and \
        _int_prod(node.reduction_ranges) <= UNROLL


# Note [Row arrays]: a value of every element of a row that only later passes over the same
# row read (a softmax's exp(x - max), summed, then scaled; its masked scores, read by all
# three passes) is kept in a stack array of one row, ``<name>_row[y]``, instead of a buffer
# written to memory and read back: the tiny GPT's attention softmax computed exp twice an
# element and wrote its masked scores (1 MB) only to read them again. Only float rows of a
# kernel with a row reduction, longer than an unrolled window (whose passes have no ``y``)
# and at most ROW_ARRAY_MAX elements (the stack of a pool thread); C only (graph.py's
# ``_row_array``).
ROW_ARRAY_DTYPES = ("float32", "float64")
ROW_ARRAY_MAX = 8192


# Note [Row arrays]: a value of every element of a row that only later passes over the same
# row read (a softmax's exp(x - max), summed, then scaled; its masked scores, read by all
# three passes) is kept in a stack array of one row, ``<name>_row[y]``, instead of a buffer
# written to memory and read back: the tiny GPT's attention softmax computed exp twice an
# element and wrote its masked scores (1 MB) only to read them again. Only float rows of a
# kernel with a row reduction, longer than an unrolled window (whose passes have no ``y``)
# and at most ROW_ARRAY_MAX elements (the stack of a pool thread); C only (graph.py's
# ``_row_array``).
ROW_ARRAY_DTYPES = ("float32", "float64")
ROW_ARRAY_MAX = 8192


# Note [Shared row loops]: consecutive pointwise nodes over the same inner dims of a row are
# printed in one loop, each element's statements one after the other: a node reads another's
# value only at its own element (Note [Row fusion]), which the loop has just stored. Their
# common loads are then one load, and a formula both compute is computed once (gcc merges the
# same expression): a GELU MLP's backward recomputes gelu(h) and takes gelu's derivative at h
# in one kernel (Note [Sibling kernels] in graph.py), one erf an element for both.


def _print_node(node, index, k, buffers, lines, aliases, local, shares=False):
    """``shares``: ``node`` goes inside the pointwise loop ``lines`` has just closed (its
    closing brace taken off), Note [Shared row loops]."""
    indent = " " * 8
    if isinstance(node, Reduction):
        assert tuple(node.ranges[:k]) == tuple(node.ranges) or len(node.ranges) == k
        kind = "f" if node.dtype in FLOATING else "i"
        acc = f"acc_{node.name}"
        lines.append(f"{indent}{C_TYPES[node.dtype]} {acc} = "
                     f"{reduction_init(node.reduction_type, node.dtype)};")
        floating_extreme = node.reduction_type in ("max", "min") and kind == "f"
        if floating_extreme:   # OpenMP's max/min ignore NaN: a flag carries it (ATen's rule)
            lines.append(f"{indent}int nan_{acc} = 0;")
        simd = {"sum": f"#pragma omp simd reduction(+:{acc})",
                "prod": f"#pragma omp simd reduction(*:{acc})",
                "max": f"#pragma omp simd reduction(max:{acc})",
                "min": f"#pragma omp simd reduction(min:{acc})"}[node.reduction_type]
        if floating_extreme:
            simd += f" reduction(|:nan_{acc})"
        unrolled = _unrolled(node)
        if unrolled:    # a small window (a pooling's): straight-line code, no loop set-up
            body, offsets = indent, list(itertools.product(*map(range, node.reduction_ranges)))
        else:
            body, offsets = indent + "    ", [_inner_loop(lines, indent, node.reduction_ranges,
                                                           simd)]
        for rindex in offsets:
            with use_handler(CHandler(buffers, lines, body, aliases)) as h:
                h.count = len(lines)     # unique names across the nodes of one kernel
                value = node.inner_fn(tuple(index), tuple(rindex))
            update = {"sum": f"{acc} + {value}", "prod": f"{acc} * {value}",
                      "max": f"{value} > {acc} ? {value} : {acc}",
                      "min": f"{value} < {acc} ? {value} : {acc}"}
            lines.append(f"{body}{acc} = {update[node.reduction_type]};")
            if floating_extreme:
                lines.append(f"{body}nan_{acc} |= {value} != {value};")
        if not unrolled:
            lines.append(f"{indent}}}")
        if floating_extreme:
            lines.append(f"{indent}if (nan_{acc}) {acc} = NAN;")
        if local:
            aliases[node.name] = acc
            return
        element = _view_element(node, index) or f"{node.name}[x]"
        lines.append(f"{indent}{c_store(node.dtype, element, CValue(acc, node.dtype))}")
        return
    extra = tuple(node.ranges[k:])
    if shares:
        rindex = [f"r{d}" for d in range(len(extra))]    # _inner_loop's names
    else:
        if local and extra:     # Note [Row arrays]
            lines.append(f"{indent}{C_TYPES[node.dtype]} {node.name}_row[{prod(extra)}];")
        rindex = _inner_loop(lines, indent, extra, "#pragma omp simd") if extra else []
    body = indent + ("    " if extra else "")
    with use_handler(CHandler(buffers, lines, body, aliases)) as h:
        h.count = len(lines)
        value = node.inner_fn(tuple(index) + tuple(rindex))
    if local and not extra:
        aliases[node.name] = str(value)
        return
    store = f"x * ({prod(extra)}) + y" if extra else "x"
    element = f"{node.name}_row[y]" if local else \
        _view_element(node, tuple(index) + tuple(rindex)) or \
        f"{node.store_into or node.name}[{store}]"
    lines.append(f"{body}{c_store(node.dtype, element, value)}")
    if local:
        aliases[node.name] = element
    if extra:
        lines.append(f"{indent}}}")


def _view_element(node, index):
    """The C element a node writing a slice of a cat's output stores ``index`` at (Note [Cat
    slices]), or None for a node writing its own buffer."""
    view = node.out_view
    return None if view is None else f"{view.name}[{view.index(index)}]"


def print_module(kernels) -> str:
    """A whole C file: the preamble, then each ``(kernel, outer_ranges)``."""
    return PREAMBLE + "\n\n".join(print_kernel(k, r) for k, r in kernels) + "\n"
