"""``strata.explain``: the path of one line through every layer, as an indented tree with timings.

    >>> strata.explain("z = x + y")                  # x, y: small tensors made for you
    >>> strata.explain("z = x + y", device="sim")    # ... down to the driver and the device
    >>> strata.explain(lambda a: (a * 2).sum(), w)    # any callable and its arguments
    >>> strata.explain(strata.ops.aten.add.Tensor)    # an op (no arguments): its row in each table

The line runs once with a collecting trace sink installed, inside a "frontend" span for the whole
statement. Each layer's events then nest under the one that caused them: frontend -> dispatch
(key set, chosen kernel, redispatches) -> autograd (node created) -> kernel -> runtime (launch,
copy, alloc; stream and sequence number) -> driver (ioctl, ring slot, doorbell) -> device
(execution, fence) -> sync (reason, mode, time waited). Device work is asynchronous: the device
reports its start/end times when the host next synchronises, so explain() synchronises started
devices after the line (that wait is shown, outside the line) and puts each execution under the
launch that queued it. On the CPU the layers below the kernel are simply absent. A collective
(``strata.distributed``) adds the "comm" layer: its post on the calling thread and, under it,
its run on the process group's worker thread (or, for DDP's buckets, its time in flight as a
nonblocking MPI request).
"""

import ast
import inspect
import linecache
import sys

from ..core import trace
from ..ops.op import OpOverload
from .. import runtime
from .tree import build

LAYERS = ("frontend", "dispatch", "autograd", "kernel", "runtime", "driver", "device", "sync",
          "comm")
_SHOWN_ELSEWHERE = {"kind", "caller", "keyset", "key", "kernel", "shapes", "outputs", "source",
                    "op", "node", "next", "track", "pid", "device", "waited_ns", "stack", "reason",
                    "raised"}


def format_ns(ns) -> str:
    if ns is None:
        return ""
    if ns < 1_000:
        return f"{ns} ns"
    if ns < 1_000_000:
        return f"{ns / 1e3:.1f} us"
    if ns < 1_000_000_000:
        return f"{ns / 1e6:.2f} ms"
    return f"{ns / 1e9:.2f} s"


def _rest(fields, skip=()):
    return " ".join(f"{k}={v}" for k, v in fields.items()
                    if k not in _SHOWN_ELSEWHERE and k not in skip)


def _keyset(text):
    return "{" + text.removeprefix("DispatchKeySet(").removesuffix(")") + "}"


def describe(node) -> str:
    """One event as a line of text (the tree adds the time columns and the indentation)."""
    ev, f = node.event, node.event.fields
    layer = ev.layer
    if layer == "frontend":
        return ev.name if f.get("kind") == "statement" else f"{ev.name} [record_function]"
    if layer == "dispatch":
        caller = f" from {f['caller']}" if f.get("caller") else ""
        return (f"{ev.name} [{f.get('kind')}{caller}]  keyset {_keyset(f.get('keyset', ''))} "
                f"-> {f.get('key')}: {f.get('kernel')}")
    if layer == "autograd":
        if ev.name == "node created":
            following = ", ".join(str(n) for n in f.get("next", ()))
            return f"node created: {f.get('node')} (next functions: {following})"
        if ev.name == "no node":
            return f"no node recorded: {f.get('reason')}"
        if f.get("kind") == "backward":
            return f"backward node {ev.name} ran"
        return f"{ev.name} ({_rest(f)})"
    if layer == "kernel":
        if "raised" in f:
            return f"{ev.name} raised {f['raised']}"
        outputs = ", ".join(f.get("outputs") or ())
        return f"{ev.name} -> {outputs}" if outputs else ev.name
    if layer == "device":
        after = ""
        if node.parent is not None:
            after = f", started {format_ns(ev.start_ns - node.parent.event.start_ns)} after the " \
                    f"launch"
        return f"{ev.name} on {f.get('track', f.get('device'))}  {_rest(f)}{after}"
    if layer == "sync":
        return f"{ev.name}: waited {format_ns(f.get('waited_ns'))}  {_rest(f)}"
    if layer == "comm":
        if f.get("request"):   # a nonblocking MPI request the caller started and tests
            what = ("started as a nonblocking MPI request of group" if f.get("kind") == "post"
                    else "in flight as an MPI request of group")
            return f"{ev.name}: {what} {f.get('group')}  " \
                   f"{_rest(f, ('group', 'work', 'kind', 'request'))}"
        if f.get("kind") == "post":
            return f"{ev.name}: queued to the comm worker of group {f.get('group')}  " \
                   f"{_rest(f, ('group', 'work'))}"
        return f"{ev.name} ran on the comm worker thread, after waiting " \
               f"{format_ns(f.get('queued_ns'))} in its queue  " \
               f"{_rest(f, ('group', 'work', 'queued_ns'))}"
    what = ev.name
    if layer == "runtime" and "op" in f:
        what += f" {f['op']}"
    if layer == "runtime" and "device" in f:
        what += f" on {f['device']}"
    if layer == "driver" and "name" in f:
        return f"{ev.name} {f['name']}  {_rest(f, ('name',))}"
    return f"{what}  {_rest(f)}".rstrip()


class Explanation:
    """What ``explain`` saw: ``events`` (the tracer's), ``roots`` (the tree), ``layers`` (those
    that reported, top to bottom), ``result`` (the line's value) and ``text`` (the printout)."""

    def __init__(self, source, events, roots, result, header, error=None):
        self.source = source
        self.events = events
        self.roots = roots
        self.result = result
        self.error = error
        seen = {ev.layer for ev in events}
        self.layers = [layer for layer in LAYERS if layer in seen]
        self.text = self._render(header)

    def _render(self, header):
        origin = self.roots[0].event.start_ns if self.roots else 0
        rows = []

        def visit(node, level):
            ev = node.event
            instant = ev.layer != "device" and ev.end_ns == ev.start_ns
            took = "" if instant else format_ns(node.duration_ns)
            rows.append((format_ns(ev.start_ns - origin) if ev.start_ns >= origin
                         else "-" + format_ns(origin - ev.start_ns),
                         took, ev.layer, "  " * level + describe(node)))
            for child in node.children:
                visit(child, level + 1)

        for root in self.roots:
            visit(root, 0)
        lines = [header, ""]
        lines.append(f"{'start':>10}  {'took':>10}  {'layer':<9} event")
        for start, took, layer, what in rows:
            lines.append(f"{start:>10}  {took:>10}  {layer:<9} {what}")
        lines.append("")
        lines.append("layers: " + " -> ".join(self.layers))
        if self.error is not None:
            lines.append(f"the line raised {type(self.error).__name__}: {self.error}")
        return "\n".join(lines)

    def __str__(self):
        return self.text

    def __repr__(self):
        return f"<Explanation of {self.source!r}: {len(self.events)} events, " \
               f"layers {' -> '.join(self.layers)}>"


def _label(fn):
    """A readable name for a callable: a lambda's own source text when it can be found."""
    if getattr(fn, "__name__", None) == "<lambda>":
        try:
            lines, _ = inspect.findsource(fn)
            code = fn.__code__
            line = lines[code.co_firstlineno - 1]
            for node in ast.walk(ast.parse(line.strip())):
                if isinstance(node, ast.Lambda):
                    return ast.get_source_segment(line.strip(), node)
        except (OSError, TypeError, SyntaxError, IndexError):
            pass
    return getattr(fn, "qualname", None) or getattr(fn, "__qualname__", repr(fn))


def _inputs(args, device, shape, requires_grad):
    """``x`` and ``y`` for a source line: the caller's tensors, or small ones on ``device``."""
    import strata
    if len(args) > 2:
        raise TypeError(f"explain: a source line takes at most 2 tensors (x, y), got {len(args)}")
    if not args:
        numel = 1
        for n in shape:
            numel *= n
        x = strata.linspace(-1.0, 1.0, numel).reshape(shape)
        y = strata.linspace(0.5, 2.0, numel).reshape(shape)
        if device is not None:
            x, y = x.to(device), y.to(device)
        args = (x, y)
    if requires_grad:
        args[0].requires_grad_()
    return dict(zip(("x", "y"), args))


def _describe_inputs(env):
    return ", ".join(f"{k}: {v.dtype.name}{list(v.shape)} on {v.device}"
                     + (" (requires grad)" if v.requires_grad else "")
                     for k, v in env.items() if hasattr(v, "dtype"))


def _qualified(fn):
    return f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', repr(fn))}"


def explain_op(op) -> str:
    """Every fact about one op, from each layer's table: schema, meta, decomposition, derivative,
    Python API, and the kernel each dispatch key runs."""
    import io
    from .. import dispatch
    from ..autograd import derivatives
    deriv = derivatives.lookup(op)
    if deriv is derivatives.NON_DIFFERENTIABLE:
        derivative = "none: not differentiable"
    elif deriv is None:
        derivative = "none: backward through it raises" if op.decomposition is None \
            else "none needed: autograd sees the ops it decomposes into"
    else:
        derivative = f"{deriv.name}, formula {_qualified(deriv.formula)}"
    api = [f"Tensor.{op.method}"] * bool(op.method) + [f"strata.{op.function}"] * bool(op.function)
    table = io.StringIO()
    dispatch.dump(op, file=table)
    lines = [f"explain: {op.qualname}",
             f"  schema:        {op.schema}",
             f"  meta:          {_qualified(op.meta) if op.meta else 'none'}",
             f"  decomposition: "
             f"{_qualified(op.decomposition) if op.decomposition else 'none (a primitive)'}",
             f"  derivative:    {derivative}",
             f"  Python API:    {', '.join(api) or 'none generated'}",
             "  dispatch table (runtime key: what runs there):"]
    lines += ["  " + line for line in table.getvalue().splitlines()[1:]]
    return "\n".join(lines)


class _Sink:
    def __init__(self):
        self.events = []
        self.record = self.events.append


def explain(fn_or_source, *args, device=None, shape=(2, 3), requires_grad=False, file=None):
    """Run one line with every layer reporting, print its path as a tree, and return it as an
    ``Explanation``. Given an op and no arguments, print (and return) its row in every table.

    ``fn_or_source``: a callable (run as ``fn(*args)``) or a line of source. A source line sees
    ``strata`` (also as ``torch``) and tensors ``x``, ``y``: ``args`` if given, else two
    ``float32`` tensors of ``shape`` on ``device``; ``requires_grad=True`` makes ``x`` require
    grad. ``file``: where to print (default stdout; ``False`` to not print).
    """
    import strata
    if isinstance(fn_or_source, OpOverload) and not args:
        text = explain_op(fn_or_source)
        if file is not False:
            print(text, file=file or sys.stdout)
        return text
    if isinstance(fn_or_source, str):
        source = fn_or_source.strip()
        env = _inputs(args, device, tuple(shape), requires_grad)
        header = f"explain: {source}\n  {_describe_inputs(env)}"
        namespace = {"strata": strata, "torch": strata, **env}
        try:
            code, mode = compile(source, "<explain>", "eval"), "eval"
        except SyntaxError:
            code, mode = compile(source, "<explain>", "exec"), "exec"
        linecache.cache["<explain>"] = (len(source), None, [source + "\n"], "<explain>")

        def run():
            value = eval(code, namespace)
            return value if mode == "eval" else {k: v for k, v in namespace.items()
                                                 if k not in ("strata", "torch", "__builtins__")}
    else:
        if not callable(fn_or_source):
            raise TypeError(f"explain: expected a callable or a line of source, got "
                            f"{type(fn_or_source).__name__}")
        if device is not None or requires_grad:
            raise ValueError("explain: device= and requires_grad= apply to a source line; "
                             "for a callable, pass tensors already set up")
        source = _label(fn_or_source)
        header = f"explain: {source}"
        if args:
            header += f"\n  args: {_describe_inputs(dict(enumerate(args)))}"

        def run():
            return fn_or_source(*args)

    # Work queued before the line (making x and y on a device) must not show up in its tree.
    runtime.synchronize_all("explain: settle inputs")
    sink = _Sink()
    trace.add_sink(sink)
    result = error = None
    try:
        span = trace.begin("frontend", source, kind="statement")
        try:
            result = run()
        except Exception as exc:   # shown in the tree, then raised again below
            error = exc
        finally:
            trace.end(span)
        # The device reports execution times when the host synchronises: collect them.
        runtime.synchronize_all("explain: collect device timings")
    finally:
        stop_ns = trace._now()
        trace.remove_sink(sink)
    explanation = Explanation(source, sink.events, build(sink.events, stop_ns), result, header,
                              error)
    if file is not False:
        print(explanation.text, file=file or sys.stdout)
    if error is not None:
        raise error
    return explanation
