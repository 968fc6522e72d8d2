"""``strata._dynamo.explain(fn)(*args)``: run ``fn`` compiled with a recording backend and report
what capture did: graphs, graph breaks with their reasons and user source lines, ops per graph,
guards (``torch._dynamo.explain``)."""

from dataclasses import dataclass, field

from .eval_frame import CompileContext


@dataclass
class ExplainOutput:
    graphs: list = field(default_factory=list)
    graph_count: int = 0
    graph_break_count: int = 0
    break_reasons: list = field(default_factory=list)
    op_count: int = 0
    ops_per_graph: list = field(default_factory=list)
    out_guards: list = field(default_factory=list)
    compile_times: str = ""

    def __str__(self):
        lines = [f"Graph Count: {self.graph_count}",
                 f"Graph Break Count: {self.graph_break_count}",
                 f"Op Count: {self.op_count}", "Break Reasons:"]
        for i, reason in enumerate(self.break_reasons):
            lines.append(f"  Break Reason {i + 1}:\n    Reason: {reason}")
        lines.append("Ops per Graph:")
        for i, ops in enumerate(self.ops_per_graph):
            lines.append(f"  Ops {i + 1}:")
            lines += [f"    {op}" for op in ops]
        lines.append("Out Guards:")
        lines += [f"  {g}" for g in self.out_guards]
        return "\n".join(lines)


class _Recorder:
    def __init__(self, out: ExplainOutput):
        self.out = out

    def on_graph(self, fn, gm, example_inputs):
        out = self.out
        out.graphs.append(gm)
        ops = [n.target for n in gm.graph.nodes if n.op in ("call_function", "call_method",
                                                            "call_module")]
        out.ops_per_graph.append(ops)
        out.op_count += len(ops)
        out.graph_count += 1

    def on_compile(self, fn, entry):
        if entry.break_reason:
            self.out.break_reasons.append(entry.break_reason)
        self.out.out_guards.extend(entry.guards.describe())

    def on_skip(self, fn, reason):
        self.out.break_reasons.append(f"skipped frame {fn.__code__.co_name}: {reason}")

    def on_recompile(self, fn, reasons):
        pass

    def on_hit(self, fn, entry):
        pass


def explain(fn, *extra_args, **extra_kwargs):
    """``explain(fn)(*args, **kwargs)`` -> ExplainOutput (the eager backend does the running)."""
    def run(*args, **kwargs):
        from .. import compile as compile_fn
        from ..backends import eager
        compiled = compile_fn(fn, backend=eager)
        ctx: CompileContext = compiled._strata_compile_context if not hasattr(
            compiled, "_orig_mod") else compiled.__dict__["_strata_compile_context"]
        out = ExplainOutput()
        ctx.listeners.append(_Recorder(out))
        compiled(*args, **kwargs)
        # as torch._dynamo.explain counts them: every graph after the first follows a break
        out.graph_break_count = out.graph_count - 1
        return out
    if extra_args or extra_kwargs:
        return run(*extra_args, **extra_kwargs)
    return run
