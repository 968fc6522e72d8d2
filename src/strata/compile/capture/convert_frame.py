"""Compile one frame: interpret its bytecode, hand the graph to the backend, and generate the
Python function that replaces the frame (Dynamo's ``convert_frame.py`` + the bytecode it
emits; here the replacement is Python source, exec'd once).

The replacement runs the compiled graph on the inputs its sources name, replays the side
effects, and either returns the frame's value or, at a graph break, runs the breaking
instruction in plain Python and tail-calls the resume function with the live stack and locals.
"""

import linecache
import time
import types

from ...amp import autocast_mode
from ...dispatch.tls import state as dispatch_state
from ...nn.modules.module import Module
from ..fx import GraphModule
from ..guards import GuardBuilder
from . import comprehension, in_graph, resume
from .opcodes import call_parts
from .output_graph import OutputGraph
from .source import local_source
from .translator import BREAKABLE, InstructionTranslator
from .variables import (CellVariable, NullVariable, SymIntVariable, TensorVariable,
                        Unsupported)

NULL = NullVariable()


class TorchDynamoException(RuntimeError):
    """The base of the capture stage's errors a user sees (``torch._dynamo.exc``'s)."""


class CaptureError(Unsupported, TorchDynamoException):
    """A graph break under ``fullgraph=True`` (``torch._dynamo.exc.Unsupported``: a
    ``RuntimeError``, so ``except RuntimeError`` catches it as it catches PyTorch's)."""


class CapturedFrame:
    """One cache entry: the guard function, the replacement function and what was seen."""

    def __init__(self, guard_fn, guard_src, guards, run, graph_module, source, break_reason,
                 tensor_shapes, timings):
        self.guard_fn, self.guard_src, self.guards = guard_fn, guard_src, guards
        self.run, self.graph_module, self.source = run, graph_module, source
        self.break_reason, self.tensor_shapes, self.timings = break_reason, tensor_shapes, timings


class FrameCodegen:
    """Turns variables back into Python expressions over L, G and the graph's outputs."""

    def __init__(self, output):
        self.output = output
        self.namespace = dict(output.constants, ___cell=types.CellType,
                              ___function=types.FunctionType,
                              ___with_kwdefaults=_with_kwdefaults)
        self.graph_outputs = []
        self._index = {}
        self.rebinds_cells_later = False   # set at a graph break (closures' cells copied)

    def constant(self, value):
        if type(value) in (int, str, bool, type(None)) or \
                (type(value) is float and value == value and abs(value) != float("inf")):
            return repr(value)
        name = f"___k{len(self.namespace)}"
        self.namespace[name] = value
        return name

    def _graph_output(self, node):
        if node not in self._index:
            self._index[node] = len(self.graph_outputs)
            self.graph_outputs.append(node)
        return f"___outs[{self._index[node]}]"

    def tensor(self, tv: TensorVariable):
        if tv.node.op == "placeholder":
            return tv.source.expr
        return self._graph_output(tv.node)

    def symint(self, sv: SymIntVariable):
        return sv.expr if sv.expr is not None else self._graph_output(sv.node)

    def value(self, variable):
        return variable.reconstruct(self)


def _with_kwdefaults(function, kwdefaults):
    function.__kwdefaults__ = kwdefaults
    return function


def capture(fn, L, ctx, cache):
    """Trace ``fn``'s frame with locals ``L``; returns a ``CapturedFrame``."""
    started = time.perf_counter()
    code, f_globals = fn.__code__, fn.__globals__
    guards = GuardBuilder()
    guards.add_global_state()
    output = OutputGraph(guards, f_globals, cache.dynamic_dims, cache.dynamic_ints,
                         ctx.dynamic)
    tx = InstructionTranslator(code, f_globals, {}, {}, output)
    tls = dispatch_state()
    saved = tls.grad_enabled, tls.include, tls.exclude, list(autocast_mode._dtype)
    try:
        return _capture(fn, L, ctx, tx, output, started)
    finally:
        # a `with` block that a break split (or that capture gave up in) leaves its mode on
        tls.grad_enabled, tls.include, tls.exclude, autocast_mode._dtype[:] = saved


def _capture(fn, L, ctx, tx, output, started):
    code = fn.__code__
    argnames = code.co_varnames[:code.co_argcount + code.co_kwonlyargcount +
                                bool(code.co_flags & 0x04) + bool(code.co_flags & 0x08)]
    for name in argnames:
        tx.locals[name] = output.wrap(tx, L[name], local_source(name))
    for name in code.co_freevars:
        cell = CellVariable(output.wrap(tx, L[name], local_source(name)))
        cell.external = True
        tx.cells[name] = cell
    comprehensions = comprehension.regions(code)   # 3.12+: inlined into this frame
    comprehension_states = {}
    while True:
        inst = tx.instructions[tx.ip]
        state = tx.checkpoint()
        if any(inst.offset == r.start for r in comprehensions):
            comprehension_states[inst.offset] = state
        try:
            done = tx.step()
        except Unsupported as e:
            region = comprehension.enclosing(comprehensions, inst.offset)
            if region is not None and region.start in comprehension_states \
                    and not ctx.fullgraph:
                # graph up to the comprehension; it runs in plain Python, then a resume fn
                tx.restore(comprehension_states[region.start])
                reason = _reason(Unsupported(f"{e} (in a comprehension, which runs in plain "
                                             "Python)"), tx)
                start = tx.instructions[tx.ip]
                return _finish(fn, tx, ctx, started, start, reason, region)
            tx.restore(state)
            reason = _reason(e if inst.opname in BREAKABLE else
                             Unsupported(f"{e} (at {inst.opname}; the rest of the frame runs "
                                         "eagerly)"), tx)
            if ctx.fullgraph:
                raise CaptureError(reason) from None
            if inst.opname not in BREAKABLE and output.op_count == 0:
                raise   # nothing captured before it: the frame runs eagerly
            return _finish(fn, tx, ctx, started, break_at=inst, reason=reason)
        if done:
            return _finish(fn, tx, ctx, started)


def _reason(e, tx):
    return f"{e}\n  from user code:\n{tx.stack_trace()}"


def _finish(fn, tx, ctx, started, break_at=None, reason=None, region=None):
    output = tx.output
    codegen = FrameCodegen(output)
    codegen.namespace["___ctx"] = ctx
    lines = []
    if break_at is None:
        tail = [f"    return {codegen.value(tx.result)}"]
    else:
        tail = _break_code(fn, tx, break_at, codegen, region)
    side_effects = [f"    {line}" for line in output.side_effects.replay_lines(codegen)]
    traced = time.perf_counter()
    gm = None
    if output.op_count:
        output.graph.output(tuple(codegen.graph_outputs))
        output.graph.lint()
        gm = GraphModule(Module(), output.graph)
        gm.meta["dynamic"] = output.has_dynamic
        compiled = ctx.compile_graph(gm, list(output.input_values), fn, reason)
        codegen.namespace["___graph"] = _reporting_user_lines(compiled, gm)
        lines.append("    ___outs = ___graph(*___inputs)")
    elif codegen.graph_outputs:
        raise Unsupported("values computed without ops")
    elif output.last_grad_mode is not None:
        # no ops, only `with no_grad()` edges: switch the mode here, without a graph
        codegen.namespace["___set_grad_enabled"] = in_graph.set_grad_enabled
        lines.append(f"    ___set_grad_enabled({output.last_grad_mode})")
    source = "def ___frame(L, G, ___inputs):\n" + "\n".join(lines + side_effects + tail) + "\n"
    fetch = ("def ___fetch_inputs(L, G):\n    return ("
             + "".join(f"{s.expr}, " for s in output.input_sources) + ")\n")
    namespace = dict(codegen.namespace)
    exec(compile(source + fetch, f"<strata compiled frame {fn.__code__.co_name}>", "exec"),
         namespace)
    output.guards.namespace.update(output.constants)   # other modules' globals, constants
    guard_fn, guard_src = output.guards.build([s.expr for s in output.input_sources])
    shapes = {s.expr: tuple(v.shape) for s, v in zip(output.input_sources, output.input_values)
              if not isinstance(v, int)}
    timings = {"capture_s": traced - started, "backend_s": time.perf_counter() - traced}
    entry = CapturedFrame(guard_fn, guard_src, output.guards, namespace["___frame"], gm, source,
                          reason, shapes, timings)
    # The first run fetches its inputs itself: the guards return them on later calls.
    entry.fetch_inputs = namespace["___fetch_inputs"]
    entry.int_reads = output.int_reads
    return entry


def _reporting_user_lines(compiled, gm):
    """Run the compiled graph; an exception raised in it gets a note naming the user's line
    that recorded the failing node (from ``node.meta["stack_trace"]``)."""
    def run_graph(*args):
        try:
            return compiled(*args)
        except Exception as e:
            note = _user_line_note(e, gm)
            if note:
                e.add_note(note)
            raise
    return run_graph


def _user_line_note(e, gm):
    nodes = {n.name: n for n in gm.graph.nodes}
    tb, trace = e.__traceback__, None
    while tb is not None:
        filename = tb.tb_frame.f_code.co_filename
        if filename.startswith("<eval_with_key>"):
            line = linecache.getline(filename, tb.tb_lineno).strip()
            node = nodes.get(line.split(" = ")[0].split(",")[0].strip())
            if node is not None and node.meta.get("stack_trace"):
                trace = node.meta["stack_trace"]
        tb = tb.tb_next
    if trace is None:
        traces = [n.meta["stack_trace"] for n in nodes.values() if n.meta.get("stack_trace")]
        if not traces:
            return None
        trace = traces[-1].rsplit("\n", 1)[-1] + " (the captured region; the exact op is unknown)"
    return f"While executing the compiled graph, from user code:\n{trace}"


def _break_code(fn, tx, inst, codegen, region=None):
    """The lines that run the breaking instruction (or the comprehension ``region`` it is in)
    in plain Python and call the resume fn."""
    code = fn.__code__
    if resume.inside_try(code, inst.offset):
        raise Unsupported("graph break inside a try block")
    codegen.rebinds_cells_later = resume.stores_cells_after(code, inst.offset)
    if region is not None:
        return _comprehension_break_code(fn, tx, region, codegen)
    if inst.opname not in BREAKABLE:
        # Any other instruction (an f-string of a tensor, a tensor attribute write, ...): the
        # graph so far runs compiled, the rest of the frame from this instruction on runs as
        # plain Python (a resume function called directly, not compiled).
        live = _live(tx, code, [inst.offset], codegen)
        exprs = [None if isinstance(v, NullVariable) else codegen.value(v) for v in tx.stack]
        if inst.opname == "UNARY_NOT":   # 3.13's reads only a bool (TO_BOOL was skipped)
            exprs[-1] = f"bool({exprs[-1]})"
        resume_fn = _resume(fn, tx, inst.offset, tx.stack, live, codegen)
        args_text = ", ".join([e for e in exprs if e is not None] + [v for _, v in live])
        return [f"    return {resume_fn}({args_text})"]
    if resume.inside_loop(code, inst.offset):
        # as Dynamo: resuming inside a loop would recompile per iteration
        raise Unsupported("graph break in a for/while loop; the frame runs eagerly")
    stack = tx.stack
    if inst.opname in ("CALL", "CALL_KW"):
        n, callee, pos, kws = call_parts(tx, inst)
        below = stack[:-n]
        after = [tx.instructions[tx.ip + 1].offset]
        call = (f"___ctx.call({codegen.value(callee)}, "
                f"({''.join(codegen.value(a) + ', ' for a in pos)}), "
                f"{{{', '.join(f'{k!r}: {codegen.value(v)}' for k, v in kws.items())}}})")
        slots = below + [None]
        exprs = [None if isinstance(v, NullVariable) else codegen.value(v) for v in below]
        exprs.append("___r")
        live = _live(tx, code, after, codegen)
        resume_fn = _resume(fn, tx, after[0], slots, live, codegen)
        args_text = ", ".join([e for e in exprs if e is not None] + [v for _, v in live])
        return [f"    ___r = {call}", f"    return ___ctx.run({resume_fn}, ({args_text},))"]
    # a conditional jump on a value the graph cannot decide
    cond, below = stack[-1], stack[:-1]
    jump_when = inst.opname.endswith("IF_TRUE")
    targets = {jump_when: inst.argval, not jump_when: tx.instructions[tx.ip + 1].offset}
    live = _live(tx, code, list(targets.values()), codegen)
    exprs = [None if isinstance(v, NullVariable) else codegen.value(v) for v in below]
    args_text = ", ".join([e for e in exprs if e is not None] + [v for _, v in live])
    lines = [f"    if {codegen.value(cond)}:"]
    for branch in (True, False):
        resume_fn = _resume(fn, tx, targets[branch], below, live, codegen)
        indent = "        " if branch else "    "
        lines.append(f"{indent}return ___ctx.run({resume_fn}, ({args_text},))")
    return lines


def _comprehension_break_code(fn, tx, region, codegen):
    code = fn.__code__
    if resume.inside_loop(code, region.start):
        raise Unsupported("graph break in a for/while loop; the frame runs eagerly")
    names = comprehension.arguments(code, region)
    if any(tx.locals.get(name) is None for name in names):
        raise Unsupported("a comprehension reading an unbound local")
    function = comprehension.comprehension_function(code, fn.__globals__, fn.__closure__,
                                                    region, names)
    comp_name = f"___comprehension{len(codegen.namespace)}"
    codegen.namespace[comp_name] = function
    iterator, below = tx.stack[-1], tx.stack[:-1]
    call_args = ", ".join([codegen.value(iterator)] +
                          [codegen.value(tx.locals[name]) for name in names])
    # after its END_FOR the frame holds [below..., saved loop variables..., result]; a
    # variable unbound before the comprehension was saved as NULL
    saved = [tx.locals.get(name, NULL) for name in region.saved_layout]
    slots = below + saved + [None]
    exprs = [None if isinstance(v, NullVariable) else codegen.value(v) for v in below + saved]
    exprs.append("___r")
    live = _live(tx, code, [region.after], codegen)
    resume_fn = _resume(fn, tx, region.after, slots, live, codegen)
    args_text = ", ".join([e for e in exprs if e is not None] + [v for _, v in live])
    return [f"    ___r = {comp_name}({call_args})",
            f"    return ___ctx.run({resume_fn}, ({args_text},))"]


def _live(tx, code, offsets, codegen):
    names = resume.live_locals(code, offsets)
    live = []
    for name in code.co_varnames + code.co_cellvars:
        if name not in names or any(n == name for n, _ in live):
            continue
        if name in tx.cells and name in code.co_cellvars:
            value = tx.cells[name].contents
        else:
            value = tx.locals.get(name)
        if value is not None:
            live.append((name, codegen.value(value)))
    return live


def _resume(fn, tx, offset, slots, live, codegen):
    null_slots = tuple(isinstance(v, NullVariable) for v in slots)
    new_fn = resume.resume_function(fn.__code__, fn.__globals__, fn.__closure__, offset,
                                    null_slots, tuple(n for n, _ in live))
    name = f"___resume{len(codegen.namespace)}"
    codegen.namespace[name] = new_fn
    return name

