"""Layer 3: the dispatcher — keys, kernel tables, call/redispatch, modes, the Library API.

Introspection:

    >>> strata.dispatch.dump("add.Tensor")        # prints key -> kernel / fallthrough / missing
    >>> strata.dispatch.keyset(x, y)              # the key set a call on x, y would use
    >>> with strata.dispatch.show_trace(): z = x + y
"""

import sys
from contextlib import contextmanager

from ..core import trace
from ..ops.op import REGISTRY
from . import dispatcher, keys
from .dispatcher import FALLTHROUGH, register_fallback, register_kernel, resolve_key
from .keys import DispatchKey, DispatchKeySet
from .modes import TorchDispatchMode
from .tls import state

__all__ = ["DispatchKey", "DispatchKeySet", "FALLTHROUGH", "TorchDispatchMode", "dump", "keyset",
           "register_fallback", "register_kernel", "show_trace", "state"]


def _op(name):
    if not isinstance(name, str):
        return name
    qual = name if "::" in name else f"aten::{name}"
    op = REGISTRY.get(qual) or REGISTRY.get(qual + ".default")
    if op is None:
        raise KeyError(f"no operator named {qual}")
    return op


def dump(op, file=None) -> str:
    """Print (and return) the dispatch table of one op: each runtime key and what runs there."""
    op = _op(op)
    lines = [f"{op.qualname}: {op.schema}"]
    for key in reversed(keys.RUNTIME_KEYS):
        kernel = resolve_key(op, key)
        cell = "missing" if kernel is None else repr(kernel)
        lines.append(f"  {key.name:<22} {cell}")
    text = "\n".join(lines)
    print(text, file=file or sys.stdout)
    return text


def keyset(*tensors) -> DispatchKeySet:
    """The key set a call with these tensor arguments would dispatch on (TLS included)."""
    ks = 0
    for t in tensors:
        ks |= getattr(t, "_keyset", 0)
    s = state()
    return DispatchKeySet((ks | s.include) & ~s.exclude)


@contextmanager
def show_trace(file=None):
    """Print every dispatch and redispatch while the block runs."""
    sink = dispatcher.PrintSink(file)
    trace.add_sink(sink)
    try:
        yield
    finally:
        trace.remove_sink(sink)
