"""GraphLowering and the scheduler: an aten-level fx graph -> kernels + one Python wrapper.

Inductor's ``graph.py`` + ``scheduler.py`` in small. The fx graph is walked in order; each node
goes through its lowering row (lowering.py) or runs its eager kernel (Fallback / Extern). Values
stay unrealized formulas (vertical fusion: every pointwise chain becomes one expression) until a
reader needs memory: a graph output, an eager kernel's argument, a value read by more than one
node, a reduction's result.
The fusion rules (which node joins which kernel) are scheduler.py's.
"""

import math
import operator

from . import (
    lowering_math,  # noqa: F401  (libm functions, rounding, logical and bitwise ops)
    lowering_nn,  # noqa: F401  (registers the rows of the nn family)
    lowering_norms,  # noqa: F401  (linalg_vector_norm, var, any, all)
    lowering_scan,  # noqa: F401  (cumsum, cumprod, logcumsumexp, cummax, cummin)
    lowering_scatter,  # noqa: F401  (gather, index_add_, scatter, scatter_reduce)
    lowering_select,  # noqa: F401  (sign, clamp, masked_fill, index, index_put_, unfold)
    lowering_shape,  # noqa: F401  (cat, stack, flip, constant_pad_nd, detach)
    lowering_views,  # noqa: F401  (view, slice, permute, expand, as_strided, arange)
)
from .concat import land, plan_cat_slots, store_view
from .cprinter import PREAMBLE, ROW_ARRAY_DTYPES, ROW_ARRAY_MAX, UNROLL, print_kernel
from .half import HALF
from .ir import (
    C_TYPES,
    IndexAdd,
    InputBuffer,
    Kernel,
    Pointwise,
    RandomDraws,
    Reduction,
    Scan,
    TensorValue,
    contiguous_index,
    contiguous_stride,
    format_node,
    store_target,
)
from .lowering import EXTERN, LOWERINGS, NoLowering, aten, dtype_name
from .scheduler import (
    EPILOGUE_LOOKBACK,
    SHARED_READS_MAX,
    KernelStep,
    cheap_to_repeat,
    draws_epilogue,
    node_reads,
    without_unit_dims,
)

FLAT = "_flat"   # the suffix of a kernel's flat variant (``GraphLowering.flat_variant``)


class GraphArgument:
    """A non-tensor value known only when the graph runs (the RNG seed input, a generator an
    eager kernel returns): ``name`` is its Python expression in the wrapper."""

    def __init__(self, name):
        self.name = name


class FallbackStep:
    def __init__(self, name, target, args, kwargs, kind):
        self.name, self.target, self.args, self.kwargs, self.kind = (name, target, args, kwargs,
                                                                     kind)


_PERMUTES = {aten.transpose.int, aten.permute.default, aten.t.default}


def _inlines(user) -> bool:
    """Whether ``user`` (an fx node) takes an unrealized value as a formula: a view or a
    pointwise op with a lowering (Note [Cheap shared values] in scheduler.py)."""
    target = user.target
    return user.op == "call_function" and target in LOWERINGS and target not in EXTERN and (
        getattr(target, "is_view", False) or "pointwise" in getattr(target, "tags", ()))


class GraphLowering:
    """``device_type``: "cpu" when the C wrapper will run the graph (rows that need its checks
    lower only then); None when unknown (the OpenCL wrapper shares this lowering)."""

    def __init__(self, gm, example_inputs, device_type=None):
        self.gm, self.example_inputs, self.device_type = gm, example_inputs, device_type
        self.steps, self.buffers = [], {}     # name -> InputBuffer of every realized tensor
        self.kernel_outputs = set()   # buffers a kernel writes: fresh arrays of their own
        self.inputs, self.constants, self.outputs = [], {}, []
        self.in_place = {}      # kernel buffer -> the input it is written over (its memory)
        # Note [Cat slices] (concat.py): fx node -> CatSlot of the cat inputs that may store into
        # their slices (planned when ``run`` starts, C graphs only); cat fx node -> its buffer
        self.cat_slots, self.cat_buffers = {}, {}
        self._scalar_kernel = None      # the kernel of one-element values (see ``_schedule``)
        self.pre_fusion = []
        self.count = 0
        self._needed = None     # computed once ``run`` is done

    def _name(self, prefix="buf"):
        self.count += 1
        return f"{prefix}{self.count - 1}"

    # --- realizing ---------------------------------------------------------------------------

    def _schedule(self, node):
        self.pre_fusion.append(node)
        home = self._scalar_kernel
        if isinstance(node, Pointwise) and not node.ranges and home is not None and all(
                name in self.inputs or name in self.constants or
                any(n.name == name for n in home.nodes) for name, _ in node_reads(node, 0)):
            # A one-element value made from inputs and other such values (an optimizer's
            # bias corrections, one per parameter) joins the first kernel of them: one call.
            home.nodes.append(node)
            return
        last = self.steps[-1] if self.steps else None
        if isinstance(last, KernelStep) and last.accepts(node):
            if isinstance(last.nodes[0], RandomDraws) and draws_epilogue(last, node):
                last.add_epilogue(node)
                return
            last.add(node)
            return
        draws = self._earlier_draws_kernel(node)
        if draws is not None:
            draws.add_epilogue(node)
            return
        sibling = self._earlier_sibling_kernel(node)
        if sibling is not None:
            sibling.add(node)
            return
        if isinstance(node, Reduction):
            step = KernelStep(self._name("kernel"), node.ranges, node.reduction_ranges)
            step.reduction_names.add(node.name)
        elif len(node.ranges) <= 1:
            step = KernelStep(self._name("kernel"), node.ranges, ())
        else:
            step = KernelStep(self._name("kernel"), node.ranges[:-1], node.ranges[-1:])
        step.nodes.append(node)
        self.steps.append(step)
        if isinstance(node, Pointwise) and not node.ranges and home is None:
            self._scalar_kernel = step

    def _earlier_draws_kernel(self, node):
        """A draws kernel a few steps back that ``node`` may join as an epilogue (Note [Random
        draws]): dropout's product with attention weights comes after the V projection's copy.
        The steps it passes must write nothing it reads, and be no Check (whose kernel reads
        indices only after the Check has raised for a bad one)."""
        window = self.steps[-EPILOGUE_LOOKBACK:]
        at = next((k for k in reversed(range(len(window))) if isinstance(window[k], KernelStep)
                   and isinstance(window[k].nodes[0], RandomDraws)), None)
        if at is None or not isinstance(node, Pointwise):
            return None
        read = {name for name, _ in node_reads(node, len(node.ranges))}
        if any(isinstance(step, FallbackStep) and step.kind == "Check" or
               read & self._written_by(step) for step in window[at + 1:]):
            return None
        return window[at] if draws_epilogue(window[at], node) else None

    def _earlier_sibling_kernel(self, node):
        """Note [Sibling kernels]: a kernel a few steps back that ``node``, a pointwise node
        of its rows, may join because it reads what that kernel reads. A GELU MLP's backward
        recomputes gelu(h) for the second Linear's weight gradient, and two steps later
        takes gelu's derivative at the same h: one kernel computes erf(h / sqrt(2)) once
        for both (gcc merges the two same expressions), and reads h once. The steps it passes
        must write nothing it reads (its inputs exist where it moves to), and be no Check."""
        if not isinstance(node, Pointwise):
            return None
        read = {name for name, _ in node_reads(node, len(node.ranges))}
        window = self.steps[-EPILOGUE_LOOKBACK:]
        for at in reversed(range(len(window) - 1)):
            step = window[at + 1]
            if isinstance(step, FallbackStep) and step.kind == "Check" or \
                    read & self._written_by(step):
                return None
            candidate = window[at]
            if not isinstance(candidate, KernelStep) or isinstance(candidate.nodes[0],
                                                                    RandomDraws):
                continue
            if read & set(self._external_reads(candidate)) and candidate.accepts(node):
                return candidate
        return None

    def _written_by(self, step):
        if isinstance(step, KernelStep):
            return {name for n in step.nodes for name in (n.name, store_target(n))}
        return {name for name in self.buffers
                if name == step.name or name.startswith(step.name + "_")}

    def realize(self, value: TensorValue) -> TensorValue:
        if value.buffer is not None:
            return value
        name = self._name()
        ranges, load = without_unit_dims(tuple(value.size), value.load)
        self._schedule(Pointwise(name, value.dtype, ranges, load))
        buffer = InputBuffer(name, value.dtype, tuple(value.size), contiguous_stride(value.size))
        self.buffers[name] = buffer
        self.kernel_outputs.add(name)
        return TensorValue.of_buffer(buffer)

    def realize_into(self, value: TensorValue, view: InputBuffer) -> TensorValue:
        """Note [Cat slices] (concat.py): ``value`` computed by a node that stores it into
        ``view``, a slice of a cat's output, instead of a buffer of its own; read from there."""
        ranges, load = without_unit_dims(tuple(value.size), value.load)
        self._schedule(Pointwise(self._name(), value.dtype, ranges, load,
                                 out_view=store_view(view, ranges)))
        return TensorValue.of_buffer(view)

    def reduction(self, dtype, ranges, reduction_ranges, reduction_type, inner_fn, out_size,
                  column=False):
        name = self._name()
        node_ranges, node_reduction_ranges = tuple(ranges), tuple(reduction_ranges)
        if not column:
            node_ranges, inner_fn = without_unit_dims(node_ranges, inner_fn)
            node_reduction_ranges, inner_fn = without_unit_dims(node_reduction_ranges, inner_fn,
                                                                 position=1)
        self._schedule(Reduction(name, dtype, node_ranges, node_reduction_ranges,
                                 reduction_type, inner_fn, column))
        # contiguous over the kept dims; the reduced (keepdim) dims broadcast. A size-1 kept
        # dim is indistinguishable from a reduced one here, and needs no stride either: every
        # other dim's stride is its contiguous stride in ``out_size`` (size-1 dims move none)
        stride = contiguous_stride(ranges)
        if len(out_size) != len(ranges):
            stride = tuple(0 if n == 1 else s
                           for n, s in zip(out_size, contiguous_stride(out_size)))
        buffer = InputBuffer(name, dtype, tuple(out_size), stride)
        self.buffers[name] = buffer
        self.kernel_outputs.add(name)
        return TensorValue.of_buffer(buffer)

    def index_add(self, dtype, size, source_rows, inner_fn, row_fn, init_fn, combine="sum",
                  dim=None, start_fn=None, mask_fn=None):
        """Note [Scatter-add] (ir.py): a fresh buffer of ``size`` (rows, or rows x columns)
        holding ``init_fn``'s values combined with (``combine``: IndexAdd's) each source row at
        the row ``row_fn`` names; ``dim``: rows along that dim of an N-D ``size``. Not for a
        half dtype: eager's half ``index_add_`` adds in float and rounds once at the end, where
        this kernel's output, its accumulator, would round at every row."""
        if dtype in HALF:
            raise NoLowering("a scatter-add into a half buffer")
        name = self._name()
        rows = size[0 if dim is None else dim]
        columns = _numel_of(size) // rows
        inner = None if dim is None else _numel_of(size[dim + 1:])
        self._schedule(IndexAdd(name, dtype, (columns,), (source_rows,), "sum", inner_fn,
                                True, row_fn, init_fn, rows, combine, inner, start_fn, mask_fn))
        buffer = InputBuffer(name, dtype, tuple(size), contiguous_stride(size))
        self.buffers[name] = buffer
        self.kernel_outputs.add(name)
        return TensorValue.of_buffer(buffer)

    def scan(self, dtype, size, dim, scan_type, inner_fn, combine_fn):
        """Note [Scans] (ir.py): a fresh buffer of ``size`` holding the running
        ``combine_fn`` of ``inner_fn``'s values along ``dim``."""
        name = self._name()
        length, inner = size[dim], _numel_of(size[dim + 1:])
        self._schedule(Scan(name, dtype, (_numel_of(size) // length,), (length,), scan_type,
                            inner_fn, True, combine_fn, inner))
        buffer = InputBuffer(name, dtype, tuple(size), contiguous_stride(size))
        self.buffers[name] = buffer
        self.kernel_outputs.add(name)
        return TensorValue.of_buffer(buffer)

    def random_draws(self, dtype, size, state, offset, distribution, params):
        """Note [Random draws] (ir.py): a fresh buffer of ``distribution`` draws from the
        stream of the state buffer ``state``, from its place ``offset`` on."""
        name = self._name()
        self._schedule(RandomDraws(name, dtype, (_numel_of(size),), state, offset,
                                   distribution, params))
        buffer = InputBuffer(name, dtype, tuple(size), contiguous_stride(size))
        self.buffers[name] = buffer
        self.kernel_outputs.add(name)
        return TensorValue.of_buffer(buffer)

    # --- walking the graph ---------------------------------------------------------------------

    def _input(self, name, val):
        buffer = InputBuffer(name, dtype_name(val.dtype), tuple(val.shape), tuple(val.stride()))
        self.buffers[name] = buffer
        return TensorValue.of_buffer(buffer)

    def run(self):
        env = {}
        examples = iter(self.example_inputs)
        outs = self.gm.graph.output_node().args[0]
        num_mutated = self.gm.meta.get("num_mutated", 0)
        # the new value of a mutated input is realized where it is computed, so it joins the
        # kernel of the values it is made from (an optimizer's update: one kernel per parameter)
        new_values = set(outs[:num_mutated]) if isinstance(outs, (tuple, list)) else set()
        if self.device_type == "cpu":
            self.cat_slots = plan_cat_slots(
                self.gm, set(outs) if isinstance(outs, (tuple, list)) else {outs})
        for node in self.gm.graph.nodes:
            if node.op == "placeholder":
                example = next(examples)
                self.inputs.append(node.name)
                env[node] = (self._input(node.name, example) if hasattr(example, "stride")
                             else GraphArgument(node.name))
            elif node.op == "get_attr":
                tensor = module_attribute(self.gm, node.target)
                self.constants[node.name] = tensor
                env[node] = self._input(node.name, tensor)
            elif node.op == "call_function":
                if not node.users:
                    continue    # dead: nothing reads it (the graph is functional)
                env[node] = self._call(node, env)
                if node in new_values and isinstance(env[node], TensorValue):
                    env[node] = self.realize(env[node])
            elif node.op == "output":
                for out in outs if isinstance(outs, (tuple, list)) else (outs,):
                    value = env[out] if out is not None else None
                    self.outputs.append(self._output(value))
        # only the C wrapper (compile_fx.py) aliases an output's array to its input's
        for k, target in enumerate(self.gm.meta.get("mutated_inputs", ())
                                   if self.device_type == "cpu" else ()):
            kind, name = self.outputs[k]
            if kind == "buffer" and self._writable_in_place(k, name, target):
                self.in_place[name] = target
                self.outputs[k] = ("buffer", target)
        return self

    def _writable_in_place(self, k, name, target):
        """Note [Input mutations] (aot_autograd.py): can the kernel node ``name`` that computes
        output ``k``, the new value of input ``target``, write it over the input's memory
        instead of a fresh buffer (no copy back, no allocation)? Yes when it is a pointwise node
        of the same size, dtype and row-major layout, every read of the input's old value is
        at the element being written and comes no later (no later step or node of its kernel,
        and no other output, reads it)."""
        source = self.buffers.get(target)
        if target not in self.inputs or source is None or name not in self.kernel_outputs:
            return False
        buffer = self.buffers[name]
        if (source.dtype, source.size, source.stride, source.offset) != (
                buffer.dtype, buffer.size, contiguous_stride(buffer.size), 0):
            return False
        if any(j != k and kind != "const" and getattr(value, "name", value) in (target, name)
               for j, (kind, value) in enumerate(self.outputs)):
            return False
        at = next((s for s, step in enumerate(self.steps) if isinstance(step, KernelStep)
                   and any(n.name == name for n in step.nodes)), None)
        if at is None or any(target in self._external_reads(step)
                             for step in self.steps[at + 1:]):
            return False
        step = self.steps[at]
        outer_k = len(step.outer)
        for node in step.nodes:
            reads = [index for read, index in node_reads(node, outer_k) if read == target]
            if node.name == name and not isinstance(node, Pointwise):
                return False
            if reads:
                element = tuple(f"i{d}" for d in range(outer_k)) + tuple(
                    f"r{d}" for d in range(len(node.ranges) - outer_k))
                if not isinstance(node, Pointwise) or tuple(node.ranges) != buffer.size or \
                        any(index != contiguous_index(buffer.size, element) for index in reads):
                    return False
            if node.name == name:
                return True
        return False

    def is_view(self, buffer):
        return buffer is not self.buffers[buffer.name]

    def _output(self, value):
        if not isinstance(value, TensorValue):
            return ("const", value)
        buffer = self.realize(value).buffer
        return ("view", buffer) if self.is_view(buffer) else ("buffer", buffer.name)

    def _call(self, node, env):
        args = _map(node.args, env)
        kwargs = {k: _map(v, env) for k, v in node.kwargs.items()}
        if node.target is operator.getitem:
            return args[0][args[1]]
        rule = LOWERINGS.get(node.target)
        if rule is not None and node.target not in EXTERN and _c_types_only(
                node, args, half=self.device_type == "cpu"):
            scheduled = len(self.pre_fusion)
            try:
                value = rule(self, node, *args, **kwargs)
            except NoLowering:
                value = None
            if value is not None:
                if node in self.cat_slots:
                    value = land(self, node, value, self.pre_fusion[scheduled:])
                if isinstance(value, TensorValue) and len(node.users) > 1 and _numel(value) > 1:
                    value = self._realize_shared(value, node)
                return value
        return self._fallback(node, args, kwargs)

    def _realize_shared(self, value, node):
        """A value read more than once is computed once. A permute read only by matmuls, views
        and the graph's output (an attention's k^T, also saved for the backward) is computed in
        its base's layout and read as a strided view (Note [Permuted Extern operands])."""
        if value.buffer is None and value.permuted is not None and all(
                user.op == "output" or user.target in EXTERN or user.target in _PERMUTES
                for user in node.users):
            return TensorValue.of_buffer(self._real(value, True))
        if value.buffer is None and len(node.users) <= SHARED_READS_MAX and all(
                map(_inlines, node.users)) and cheap_to_repeat(value):
            return value     # Note [Cheap shared values] (scheduler.py)
        return self.realize(value)

    def _fallback(self, node, args, kwargs):
        """Run the node's eager kernel on realized arguments (Extern for the BLAS ops)."""
        extern = node.target in EXTERN

        def real(v):
            return self._real(v, extern) if isinstance(v, TensorValue) else v
        step = FallbackStep(self._name(), node.target, _map_values(args, real),
                            {k: _map_values(v, real) for k, v in kwargs.items()},
                            "Extern" if node.target in EXTERN else "Fallback")
        self.steps.append(step)
        self.pre_fusion.append(step)
        val = node.meta["val"]
        if isinstance(val, (tuple, list)):
            return tuple(self._fallback_output(f"{step.name}_{i}", v) if hasattr(v, "stride")
                         else GraphArgument(f"r_{step.name}[{i}]") for i, v in enumerate(val))
        if not hasattr(val, "stride"):
            return GraphArgument(f"r_{step.name}")
        return self._fallback_output(step.name, val)

    def extern(self, target, args, dtype, size):
        """An Extern step ``target(*args)`` (the eager BLAS kernel) whose result is a fresh
        contiguous buffer: how a lowering row puts a matmul under its pointwise epilogue."""
        step = FallbackStep(self._name(), target, tuple(
            self._real(a, True) if isinstance(a, TensorValue) else a for a in args), {}, "Extern")
        self.steps.append(step)
        self.pre_fusion.append(step)
        buffer = InputBuffer(step.name, dtype, tuple(size), contiguous_stride(size))
        self.buffers[step.name] = buffer
        return TensorValue.of_buffer(buffer)

    def check(self, target, *args):
        """A step that validates its arguments before the kernels that follow (a C kernel cannot
        raise); ``target`` names it in the cache and the debug output."""
        step = FallbackStep(self._name(), target, tuple(
            self._real(a) if isinstance(a, TensorValue) else a for a in args), {}, "Check")
        self.steps.append(step)
        self.pre_fusion.append(step)

    def _real(self, value, extern=False):
        """A fallback's argument for ``value``: a buffer name, or an InputBuffer view.

        Note [Permuted Extern operands]: a matmul operand that is a permute of an unrealized
        formula (the attention backward's ``bmm(permute(softmax * mask), grad)``) is computed
        in the formula's own layout and handed to BLAS as a transposed view, which it reads as
        it is (Inductor realizes a view's base the same way, ``ExternKernel.realize_input``);
        computed in the permuted layout, each row's loads stride across rows and the kernel
        does not vectorise. The same formula at each element, so the same values."""
        if extern and value.buffer is None and value.permuted is not None:
            base, dims = value.permuted
            b = self.realize(base).buffer
            return InputBuffer(b.name, b.dtype, tuple(b.size[d] for d in dims),
                               tuple(b.stride[d] for d in dims), b.offset)
        buffer = self.realize(value).buffer
        return buffer if self.is_view(buffer) else buffer.name

    def _fallback_output(self, name, val):
        buffer = InputBuffer(name, dtype_name(val.dtype), tuple(val.shape), tuple(val.stride()))
        self.buffers[name] = buffer
        return TensorValue.of_buffer(buffer)

    # --- output ------------------------------------------------------------------------------

    def kernels(self):
        return [s for s in self.steps if isinstance(s, KernelStep)]

    def _external_reads(self, step):
        """Names of buffers ``step`` reads that it does not write, in order."""
        if isinstance(step, FallbackStep):
            return [a.name if isinstance(a, InputBuffer) else a
                    for a in _flatten((step.args, tuple(step.kwargs.values())))
                    if isinstance(a, InputBuffer) or (isinstance(a, str) and a in self.buffers)]
        mine = {n.name for n in step.nodes}
        read = []
        for node in step.nodes:
            for name, _ in node_reads(node, len(step.outer)):
                if name not in mine and name not in read:
                    read.append(name)
        return read

    def slices_written(self, step):
        """Names of the cat outputs ``step`` writes slices of (Note [Cat slices])."""
        return [n.out_view.name for n in getattr(step, "nodes", ())
                if getattr(n, "out_view", None) is not None]

    def needed(self):
        """Every buffer read by some step or returned (once the graph is lowered)."""
        if self._needed is None:
            names = {getattr(v, "name", v) for kind, v in self.outputs if kind != "const"}
            names.update(self.in_place)     # outputs written over their inputs
            for step in self.steps:
                names.update(self._external_reads(step))
            self._needed = names
        return self._needed

    def c_kernel(self, step, needed=None):
        """The loop-IR Kernel of a step; its per-row values no one else reads stay local."""
        needed = self.needed() if needed is None else needed
        local = frozenset(n.name for n in step.nodes if n.name not in needed and
                          store_target(n) == n.name and (
            isinstance(n, RandomDraws) and len(step.nodes) > 1 or    # a row of draws
            self._row_array(step, n) or
            not getattr(n, "column", False) and (
                isinstance(n, Reduction) or len(n.ranges) == len(step.outer))))
        return Kernel(step.name, [self.buffers[n] for n in self._external_reads(step)],
                      step.nodes, local)
    def _row_array(self, step, node):
        """Note [Row arrays] (cprinter.py): whether ``node``, which no later step reads, may
        keep its row in a stack array of the C kernel."""
        inner = step.inner
        return self.device_type == "cpu" and type(node) is Pointwise and \
            node.out_view is None and node.dtype in ROW_ARRAY_DTYPES and \
            len(node.ranges) == len(step.outer) + len(inner) and \
            not isinstance(step.nodes[0], RandomDraws) and \
            any(isinstance(n, Reduction) for n in step.nodes) and \
            all(isinstance(n, int) for n in inner) and UNROLL < math.prod(inner) <= ROW_ARRAY_MAX

    def pre_fusion_text(self):
        """Every node as it was lowered, in order (printed only when asked: formatting runs
        every inner_fn again)."""
        return "\n".join(_step_text(n) if isinstance(n, FallbackStep)
                         else format_node(n) for n in self.pre_fusion) + "\n"

    def post_fusion_text(self):
        lines = []
        for step in self.steps:
            if isinstance(step, KernelStep):
                lines.append(f"{step.name}: rows {list(step.outer)} x {list(step.inner)}, "
                             f"{len(step.nodes)} node(s) fused")
                lines.extend("  " + format_node(n).replace("\n", "\n  ") for n in step.nodes)
            else:
                lines.append(_step_text(step))
        return "\n".join(lines) + "\n"

    def flat_variant(self, step, needed=None):
        """A pointwise kernel over rows R and inner dims RR, printed with every dim as a row: one
        SIMD loop over R x RR elements, no per-row inner loop (a loop order max-autotune tries);
        None for kernels with reductions or per-row values."""
        if not step.inner or any(isinstance(n, Reduction) or
                                 len(n.ranges) != len(step.outer) + len(step.inner)
                                 for n in step.nodes):
            return None
        kernel = self.c_kernel(step, needed)
        return Kernel(step.name + FLAT, kernel.inputs, kernel.nodes, kernel.local)

    def c_source(self, variants=False):
        """The C file of every kernel; with ``variants``, also their flat variants."""
        needed = self.needed()
        printed = []
        for step in self.kernels():
            printed.append(print_kernel(self.c_kernel(step, needed), step.outer))
            flat = self.flat_variant(step, needed) if variants else None
            if flat is not None:
                printed.append(print_kernel(flat, step.outer + step.inner))
        return PREAMBLE + "\n\n".join(printed) + "\n"


def _step_text(step):
    """``buf3 = Fallback(<OpOverload aten::sort.stable>)``; a random op drawn from the graph's
    stream names the op too: ``Fallback(seeded_random(<OpOverload aten::normal_>))``."""
    target = step.target
    if getattr(target, "__name__", None) == "seeded_random" and step.args:
        return f"{step.name} = {step.kind}(seeded_random({step.args[0]}))"
    return f"{step.name} = {step.kind}({target})"


def _c_types_only(node, args, half):
    """Whether every tensor the node reads or makes has a C type (complex ones do not: such
    nodes run their eager kernels). Half ones are 16 bits computed in float (half.py) where
    ``half`` (the C graphs; OpenCL graphs keep their half ops on the device's eager kernels)."""
    val = node.meta.get("val")
    made = val if isinstance(val, (tuple, list)) else (val,)
    dtypes = [v.dtype.name for v in made if hasattr(v, "dtype")]
    dtypes += [a.dtype for a in _flatten(args) if isinstance(a, TensorValue)]
    return all(d in C_TYPES and (half or d not in HALF) for d in dtypes)


def module_attribute(gm, target):
    obj = gm
    for part in target.split("."):
        obj = getattr(obj, part)
    return obj


def _numel(value):
    return _numel_of(value.size)


def _numel_of(size):
    n = 1
    for s in size:
        n *= s
    return n


def _map(arg, env):
    if isinstance(arg, (tuple, list)):
        return type(arg)(_map(a, env) for a in arg)
    return env[arg] if hasattr(arg, "op") and hasattr(arg, "users") else arg


def _flatten(x):
    if isinstance(x, (tuple, list)):
        for a in x:
            yield from _flatten(a)
    else:
        yield x


def _map_values(arg, fn):
    if isinstance(arg, (tuple, list)):
        return type(arg)(_map_values(a, fn) for a in arg)
    return fn(arg)
