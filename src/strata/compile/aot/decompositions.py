"""Decomposition tables for tracing: ``{op: python function over other ops}``.

CompositeImplicitAutograd ops never reach the tracer (the dispatcher decomposes them above
autograd); CompositeExplicitAutograd ones (one node in autograd, e.g. ``split``) are decomposed by
the tracer itself (``proxy_tensor.py``). These tables go further: ops that have a
decomposition *and* a fast kernel of their own (an explicit override) are replaced by the
decomposition too, so the graph holds primitives only.
"""

from ... import ops as _ops  # noqa: F401  (the op families register into the registry)
from ...ops.op import REGISTRY, OpOverload, OpOverloadPacket


def get_decompositions(ops) -> dict:
    """The table for the given ops (overloads or packets, which mean all their overloads)."""
    table = {}
    for op in ops:
        overloads = [getattr(op, name) for name in op.overloads()] \
            if isinstance(op, OpOverloadPacket) else [op]
        for overload in overloads:
            if not isinstance(overload, OpOverload) or overload.decomposition is None:
                raise RuntimeError(f"get_decompositions: {overload} has no decomposition")
            table[overload] = overload.decomposition
    return table


def primitive_decompositions() -> dict:
    """Every op that has a decomposition: tracing with it leaves only primitive ops."""
    return {op: op.decomposition for op in REGISTRY.values() if op.decomposition is not None}
