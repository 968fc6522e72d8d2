"""The one kernel every view op shares, on every backend (CompositeExplicitAutograd).

A view's layout is pure metadata: the op's meta function computes a ``ViewSpec`` (sizes, strides,
offset), and the view is a new tensor over the same storage and version counter. Its ``_base`` is
the root tensor it views, except for reinterpretations autograd does not track as views
(``view(dtype)``: PyTorch reports ``_is_view() == False`` for it).
"""

from .._tensor import make_view
from ..dispatch import register_kernel
from ..ops import factory as F
from ..ops import shape as S
from ..ops.op import REGISTRY

UNTRACKED = (F.view_dtype,)  # aliases of the same memory that are not autograd views
TRANSPOSES = (S.t, S.transpose)


def view_kernel(op):
    meta = op.meta

    def kernel(self, *args):
        return make_view(self, meta(self, *args))

    # Note [Transposed arrays]: a view's NumPy array is made on first need from its storage
    # (``TensorImpl._np``: its strides in bytes, ``np.ndarray`` over the buffer), about 0.5 us.
    # The transpose of a matrix that has its array (every ``linear``'s weight, most backward
    # formulas' operands) gets ``array.T`` at once: ``t()``, or ``transpose`` of two different
    # dims, which for a matrix (the meta has checked them) are an odd distance apart.
    def transpose_kernel(self, *dims):
        out = make_view(self, meta(self, *dims))
        arr = self._array
        if arr is not None and arr.ndim == 2 and (not dims or (dims[0] - dims[1]) % 2):
            out._array = arr.T
        return out

    def untracked_kernel(self, *args):
        out = make_view(self, meta(self, *args))
        out._base = None
        return out
    out = untracked_kernel if op in UNTRACKED else transpose_kernel if op in TRANSPOSES \
        else kernel
    out.__name__ = out.__qualname__ = f"view_kernel[{op.name}]"
    return out


def register():
    for op in REGISTRY.values():
        if op.is_view and op.meta is not None and op.decomposition is None:
            register_kernel(op, "CompositeExplicitAutograd", view_kernel(op))
