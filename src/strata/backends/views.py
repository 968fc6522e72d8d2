"""The one kernel every view op shares, on every backend (CompositeExplicitAutograd).

A view's layout is pure metadata: the op's meta function computes a ``ViewSpec`` (sizes, strides,
offset), and the view is a new tensor over the same storage and version counter.
"""

from ..dispatch import register_kernel
from ..ops.op import REGISTRY
from .._tensor import make_view


def view_kernel(op):
    meta = op.meta

    def kernel(self, *args):
        return make_view(self, meta(self, *args))
    kernel.__name__ = kernel.__qualname__ = f"view_kernel[{op.name}]"
    return kernel


def register():
    for op in REGISTRY.values():
        if op.is_view and op.meta is not None and op.decomposition is None:
            register_kernel(op, "CompositeExplicitAutograd", view_kernel(op))
