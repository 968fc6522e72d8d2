"""The one kernel every view op shares, on every backend (CompositeExplicitAutograd).

A view's layout is pure metadata: the op's meta function computes a ``ViewSpec`` (sizes, strides,
offset), and the view is a new tensor over the same storage and version counter. Its ``_base`` is
the root tensor it views, except for reinterpretations autograd does not track as views
(``view(dtype)``: PyTorch reports ``_is_view() == False`` for it).
"""

from ..dispatch import register_kernel
from ..ops import factory as F
from ..ops.op import REGISTRY
from .._tensor import make_view

UNTRACKED = (F.view_dtype,)  # aliases of the same memory that are not autograd views


def view_kernel(op):
    meta = op.meta

    def kernel(self, *args):
        return make_view(self, meta(self, *args))

    def untracked_kernel(self, *args):
        out = make_view(self, meta(self, *args))
        out._base = None
        return out
    out = untracked_kernel if op in UNTRACKED else kernel
    out.__name__ = out.__qualname__ = f"view_kernel[{op.name}]"
    return out


def register():
    for op in REGISTRY.values():
        if op.is_view and op.meta is not None and op.decomposition is None:
            register_kernel(op, "CompositeExplicitAutograd", view_kernel(op))
