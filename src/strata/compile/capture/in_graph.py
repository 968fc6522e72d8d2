"""Which callables become graph nodes, which break the graph, and the graph's own helpers.

A function reachable from strata's public namespaces (``strata``, ``strata.nn.functional``,
``strata.linalg``, ``strata.special``, ``strata.fft``) is an op: it is recorded as one
``call_function`` node. A few of them act outside tensors (seeding, printing, saving) and break
the graph instead.
"""

import types

from ...dispatch.tls import is_compiling  # noqa: F401  (re-exported: strata.compiler)
from ...dispatch.tls import state as dispatch_state
from ...ops.op import OpOverload, OpOverloadPacket

_IN_GRAPH: set | None = None
_BREAKING_NAMES = {"manual_seed", "seed", "initial_seed", "set_printoptions", "save", "load",
                   "set_default_dtype", "set_default_device", "set_num_threads", "compile",
                   "use_deterministic_algorithms", "set_rng_state", "get_rng_state",
                   "is_tensor", "synchronize"}
_MODULE_NAMES = ("strata", "strata.nn.functional", "strata.linalg", "strata.special",
                 "strata.fft", "strata.nn.init")
_BREAKING: set = set()


def set_grad_enabled(mode: bool) -> None:
    """The graph node entering/leaving ``no_grad`` (``torch._C._set_grad_enabled``)."""
    dispatch_state().grad_enabled = mode


def enter_autocast(manager) -> None:
    """Graph node entering an ``autocast`` block (the manager object is the graph's constant)."""
    manager.__enter__()


def exit_autocast(manager) -> None:
    manager.__exit__(None, None, None)


class GradModeExit:
    """The ``__exit__`` of a grad-mode ``with`` block that a graph break split: the resume
    function's copy of the block calls it (also on an exception) to restore the mode."""

    def __init__(self, restore: bool):
        self.restore = restore

    def __call__(self, *exc_info):
        dispatch_state().grad_enabled = self.restore
        return False


def _build():
    import importlib
    found, breaking = set(), set()
    for name in _MODULE_NAMES:
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        for attr, value in vars(module).items():
            if attr.startswith("_") or not callable(value) or isinstance(value, type):
                continue
            if isinstance(value, types.ModuleType):
                continue
            (breaking if attr in _BREAKING_NAMES else found).add(id(value))
    return found, breaking


def is_in_graph(value) -> bool:
    global _IN_GRAPH
    if _IN_GRAPH is None:
        _IN_GRAPH, breaking = _build()
        _BREAKING.update(breaking)
    if id(value) in _IN_GRAPH or isinstance(value, (OpOverload, OpOverloadPacket)):
        return True
    if getattr(value, "__dict__", {}).get("_strata_allow_in_graph", False):
        return True
    from ...autograd.function import Function
    owner = getattr(value, "__self__", None)
    return isinstance(owner, type) and issubclass(owner, Function) and \
        getattr(value, "__name__", "") == "apply"


def is_breaking_function(value) -> bool:
    is_in_graph(value)
    return id(value) in _BREAKING or value is graph_break


def is_module_source(source) -> bool:
    """True for ``G['torch'].relu``-style sources: attributes of a Python module, not guarded."""
    return "." in source.expr and not source.expr.startswith("L[")


def graph_break() -> None:
    """Break the graph here (``torch._dynamo.graph_break``); a no-op when run."""


def allow_in_graph(fn):
    """Record calls to ``fn`` as one graph node instead of inlining it
    (``torch._dynamo.allow_in_graph``); ``fn`` must work on meta tensors."""
    fn.__dict__["_strata_allow_in_graph"] = True
    return fn


def disable(fn):
    """Mark ``fn`` so compiled frames never trace into it (``torch._dynamo.disable``)."""
    fn.__dict__["_strata_dynamo_disable"] = True
    return fn


def is_disabled(fn) -> bool:
    return getattr(fn, "__dict__", {}).get("_strata_dynamo_disable", False)
