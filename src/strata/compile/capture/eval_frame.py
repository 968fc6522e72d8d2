"""The frame hook: a compiled function's calls come here instead of running its frame.

PEP 523 lets Dynamo see every frame from C; a pure-Python framework gets the same effect by
wrapping the compiled callable and every resume function. For each code object there is a cache
of entries (guards, replacement function). A call binds its arguments into ``L``, runs the first
entry whose guards pass, and otherwise captures the frame again, up to the recompile limit;
after that, and for frames capture cannot handle at all, the function runs eagerly.
"""

import inspect
import logging
import platform
import types
import warnings
import weakref

from ... import config
from ...core import trace
from ...nn.modules.module import Module
from . import in_graph, settings, translator
from .convert_frame import CaptureError, capture
from .variables import Unsupported

log = logging.getLogger("strata.compile")
_all_contexts = weakref.WeakSet()
_warned_no_opcode_table = set()   # Python versions already warned about


class CodeCache:
    def __init__(self):
        self.entries = []
        self.dynamic_dims: dict = {}
        self.dynamic_ints: set = set()
        self.eager = False        # capture failed or the recompile limit was hit
        self.compiles = 0


class CompileContext:
    """One ``strata.compile(...)`` call's settings and caches."""

    def __init__(self, backend, fullgraph=False, dynamic=None, backend_name="custom"):
        self.backend = backend
        self.backend_name = backend_name
        self.fullgraph = fullgraph
        self.dynamic = dynamic
        self.caches: dict = {}
        self.listeners = []       # explain() and the debug writer subscribe here
        warn_if_no_opcode_table()
        if config.compile_debug:
            from .debug import DebugWriter
            self.listeners.append(DebugWriter())
        _all_contexts.add(self)

    # --- the hot path ---------------------------------------------------------------------------
    def run(self, fn, args, kwargs=None, L=None):
        """Call ``fn(*args, **kwargs)`` through its compiled frames; ``L``: the frame's locals
        when the caller already has them (OptimizedModule)."""
        code = fn.__code__
        cache = self.caches.get(code)
        if cache is None:
            cache = self.caches[code] = CodeCache()
        if cache.eager:
            return fn(*args, **(kwargs or {}))
        if L is None:
            L = _bind(fn, code, args, kwargs)
        G = fn.__globals__
        if trace.active:
            return self._run_traced(fn, cache, L, G, args, kwargs)
        for entry in cache.entries:
            inputs = entry.guard_fn(L, G)
            if inputs is not None:
                for listener in self.listeners:
                    listener.on_hit(fn, entry)
                return entry.run(L, G, inputs)
        entry = self._compile(fn, cache, L, G)
        if entry is None:
            return fn(*args, **(kwargs or {}))
        return entry.run(L, G, entry.fetch_inputs(L, G))

    def _run_traced(self, fn, cache, L, G, args, kwargs):
        """``run`` reporting to the tracer (``strata.explain``): guard checks, cache hit or
        miss, then the compiled frame's graph ops nested under it."""
        span = trace.begin("compile", f"compiled frame {fn.__code__.co_name}",
                           entries=len(cache.entries))
        try:
            for i, entry in enumerate(cache.entries):
                inputs = entry.guard_fn(L, G)
                trace.instant("compile", "guard check", entry=i, passed=inputs is not None)
                if inputs is not None:
                    trace.instant("compile", "cache hit", entry=i)
                    return entry.run(L, G, inputs)
            trace.instant("compile", "cache miss: capture", function=fn.__code__.co_name)
            entry = self._compile(fn, cache, L, G)
            if entry is None:
                trace.instant("compile", "running eagerly")
                return fn(*args, **(kwargs or {}))
            return entry.run(L, G, entry.fetch_inputs(L, G))
        finally:
            trace.end(span)

    def call(self, fn, args, kwargs):
        """Run a graph break's call: user functions and modules get their own compiled frames."""
        if isinstance(fn, types.FunctionType) and _compilable(fn):
            return self.run(fn, args, kwargs)
        if isinstance(fn, types.MethodType) and isinstance(fn.__func__, types.FunctionType) \
                and _compilable(fn.__func__):
            return self.run(fn.__func__, (fn.__self__, *args), kwargs)
        if isinstance(fn, Module) and not _has_hooks(fn):
            forward = inspect.getattr_static(fn, "forward")
            if isinstance(forward, types.FunctionType) and _compilable(forward):
                return self.run(forward, (fn, *args), kwargs)
        return fn(*args, **kwargs)

    # --- compiling ------------------------------------------------------------------------------
    def _compile(self, fn, cache, L, G):
        code = fn.__code__
        if cache.entries:
            reasons = [e.guards.failure_reason(L, G) for e in cache.entries]
            self._automatic_dynamic(cache, L, G)
            if "recompiles" in config.compile_logs:
                log.warning("Recompiling function %s in %s:%s\n    triggered by the following "
                            "guard failure(s):\n%s", code.co_name, code.co_filename,
                            code.co_firstlineno,
                            "\n".join(f"    - {len(cache.entries) - 1 - i}/{i}: {r}"
                                      for i, r in enumerate(reasons)))
            for listener in self.listeners:
                listener.on_recompile(fn, reasons)
            if len(cache.entries) >= settings.entry_limit():
                warnings.warn(f"strata.compile hit config.recompile_limit "
                              f"({settings.entry_limit()}) for function {code.co_name} "
                              f"({code.co_filename}:{code.co_firstlineno}); last reason: "
                              f"{reasons[-1]}. It runs eagerly from now on.", stacklevel=3)
                cache.eager = True
                return None
        try:
            entry = capture(fn, L, self, cache)
        except CaptureError:
            raise
        except Exception as e:
            if not isinstance(e, Unsupported):   # a bug in capture: say so, run eagerly
                warnings.warn(f"strata.compile: capturing {code.co_name} failed with an "
                              f"internal error ({type(e).__name__}: {e}); it runs eagerly",
                              stacklevel=3)
                e = Unsupported(f"internal error: {type(e).__name__}: {e}")
            if self.fullgraph:
                raise CaptureError(str(e)) from None
            if "graph_breaks" in config.compile_logs:
                log.warning("Skipping frame %s (%s:%s): %s", code.co_name, code.co_filename,
                            code.co_firstlineno, e)
            for listener in self.listeners:
                listener.on_skip(fn, str(e))
            cache.eager = not getattr(e, "transient", False)
            return None
        cache.compiles += 1
        cache.entries.append(entry)
        if entry.break_reason and "graph_breaks" in config.compile_logs:
            log.warning("Graph break in %s: %s", code.co_name, entry.break_reason)
        if "guards" in config.compile_logs:
            log.warning("GUARDS for %s:\n%s", code.co_name, "\n".join(entry.guards.describe()))
        for listener in self.listeners:
            listener.on_compile(fn, entry)
        return entry

    def _automatic_dynamic(self, cache, L, G):
        """Dims whose size changed since the last entry become dynamic on this recompile."""
        if self.dynamic is False or not settings.automatic_dynamic_shapes:
            return
        last = cache.entries[-1]
        namespace = dict(last.guards.namespace, L=L, G=G)
        for expr, shape in last.tensor_shapes.items():
            try:
                value = eval(expr, namespace)
                now = tuple(value.shape)
            except Exception:
                continue
            if len(now) == len(shape):
                changed = {d for d, (a, b) in enumerate(zip(shape, now)) if a != b}
                if changed:
                    cache.dynamic_dims.setdefault(expr, set()).update(changed)
        for expr, value in last.int_reads.items():
            try:
                now = eval(expr, namespace)
            except Exception:
                continue
            if type(now) is int and now != value:
                cache.dynamic_ints.add(expr)

    def compile_graph(self, gm, example_inputs, fn, break_reason):
        if "graph_code" in config.compile_logs:
            log.warning("TRACED GRAPH of %s\n%s", fn.__code__.co_name, gm.print_readable(False))
        for listener in self.listeners:
            listener.on_graph(fn, gm, example_inputs)
        if gm.meta.get("dynamic") and not getattr(self.backend, "shape_generic", False):
            return _PerShape(self, gm, example_inputs)
        return self._call_backend(gm, example_inputs)

    def _call_backend(self, gm, example_inputs):
        compiled = self.backend(gm, example_inputs)
        if not callable(compiled):
            raise TypeError(f"backend {self.backend_name!r} returned {compiled!r}, not a callable")
        return compiled

    def reset(self):
        self.caches.clear()


class _PerShape:
    """A graph with dynamic dims, for a backend that specialises on sizes (AOT traces at the
    example's sizes): the frame's guards stay size-generic, and the backend's compiled function
    is cached per tuple of input sizes underneath (see docs/compile.md, dynamic shapes)."""

    def __init__(self, ctx, gm, example_inputs):
        self.ctx, self.gm = ctx, gm
        self.compiled = {self._key(example_inputs): ctx._call_backend(gm, example_inputs)}

    @staticmethod
    def _key(inputs):
        return tuple(t if isinstance(t, int) else tuple(t.shape) for t in inputs)

    def __call__(self, *inputs):
        key = self._key(inputs)
        compiled = self.compiled.get(key)
        if compiled is None:
            compiled = self.compiled[key] = self.ctx._call_backend(self.gm, list(inputs))
        return compiled(*inputs)


def warn_if_no_opcode_table():
    """Once per process: this Python has no opcode table, so nothing is captured."""
    version = platform.python_version()
    if translator.OPCODES or version in _warned_no_opcode_table:
        return
    _warned_no_opcode_table.add(version)
    warnings.warn(f"strata.compile cannot capture on Python {version}: capture reads the "
                  f"bytecode of CPython {', '.join(translator.CAPTURED_VERSIONS)} only, so "
                  "compiled functions run eagerly (no graphs, no speed-up)", UserWarning,
                  stacklevel=4)


def _bind(fn, code, args, kwargs):
    """The frame's arguments (and closure contents) as a dict, like ``frame.f_locals``."""
    n = code.co_argcount
    flags = code.co_flags
    if not kwargs and len(args) == n and not flags & 0x0C and not code.co_kwonlyargcount:
        L = dict(zip(code.co_varnames, args))
    elif flags & 0x04 and len(args) >= n and not code.co_kwonlyargcount and \
            (flags & 0x08 or not kwargs):   # f(a, *args, **kwargs), as OptimizedModule's entry
        L = dict(zip(code.co_varnames, args[:n]))
        L[code.co_varnames[n]] = args[n:]
        if flags & 0x08:
            L[code.co_varnames[n + 1]] = kwargs or {}
    else:
        bound = inspect.signature(fn, follow_wrapped=False).bind(*args, **(kwargs or {}))
        bound.apply_defaults()
        L = dict(bound.arguments)
    if code.co_freevars:
        for name, cell in zip(code.co_freevars, fn.__closure__):
            try:
                L[name] = cell.cell_contents
            except ValueError:
                pass
    return L


def _compilable(fn) -> bool:
    """User code only: not strata's own functions, not disabled ones, not generators, not a
    3.11 comprehension called at a graph break (it runs in plain Python, as 3.12's inlined
    ones do: comprehension.py)."""
    module = fn.__module__ if isinstance(fn.__module__, str) else ""
    return not module.startswith("strata.") and not in_graph.is_disabled(fn) and \
        not fn.__code__.co_flags & 0x3A0 and fn.__code__.co_name not in _COMPREHENSIONS


_COMPREHENSIONS = ("<listcomp>", "<dictcomp>", "<setcomp>")


def _has_hooks(module) -> bool:
    return bool(module._forward_hooks or module._forward_pre_hooks or module._backward_hooks
                or module._backward_pre_hooks)


def reset_all():
    from . import comprehension, resume
    for ctx in list(_all_contexts):
        ctx.reset()
    resume.clear()
    comprehension.clear()
