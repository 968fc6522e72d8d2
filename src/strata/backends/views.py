"""The one kernel every view op shares, on every backend (CompositeExplicitAutograd).

A view's layout is pure metadata: the op's meta function computes a ``ViewSpec`` (sizes, strides,
offset), and the view is a new tensor over the same storage and version counter. Its ``_base`` is
the root tensor it views, except for reinterpretations autograd does not track as views
(``view(dtype)``: PyTorch reports ``_is_view() == False`` for it).
"""

from .._tensor import CPU_KEYSET, make_view
from ..dispatch import register_kernel
from ..ops import factory as F
from ..ops import shape as S
from ..ops.op import REGISTRY

UNTRACKED = (F.view_dtype,)  # aliases of the same memory that are not autograd views

# Note [Views over the base's array]: a CPU view's NumPy array is otherwise built on first need
# from its storage's bytes (``TensorImpl._np``: about 1.5 us, and the base's storage made first).
# For these views of a tensor whose array exists, one NumPy call gives the same memory, shape
# and element order (0.15-0.3 us): a transpose swaps two axes; squeeze and unsqueeze only drop
# or add dims of size 1, which NumPy's reshape does without a copy whatever the strides. Backward
# formulas transpose every matrix gradient (AddmmBackward0, TBackward0) and unsqueeze
# (SqueezeBackward1); the RL loop's observation and log-probability are (un)squeezed; the
# products, gathers and accumulations that read those views then find their array ready.
ARRAY_OF_VIEW = {
    # a 0-d tensor transposes dims 0 and -1 (PyTorch wraps them), which NumPy has not
    S.transpose: lambda arr, shape, dim0, dim1: arr.swapaxes(dim0, dim1) if arr.ndim else arr,
    S.t: lambda arr, shape: arr.T,
    S.squeeze: lambda arr, shape, dim=None: arr.reshape(shape),
    S.unsqueeze: lambda arr, shape, dim: arr.reshape(shape),
}


def view_kernel(op):
    meta = op.meta
    of_array = ARRAY_OF_VIEW.get(op)

    def kernel(self, *args):
        return make_view(self, meta(self, *args))

    def array_view_kernel(self, *args):
        out = make_view(self, meta(self, *args))
        arr = self._array
        if arr is not None and self._keyset == CPU_KEYSET:
            out._array = of_array(arr, out._shape, *args)
        return out

    def untracked_kernel(self, *args):
        out = make_view(self, meta(self, *args))
        out._base = None
        return out
    out = untracked_kernel if op in UNTRACKED else \
        array_view_kernel if of_array is not None else kernel
    out.__name__ = out.__qualname__ = f"view_kernel[{op.name}]"
    out.calls_no_ops = True   # a meta and a tensor (Note [Kernels that call no ops])
    return out


def register():
    for op in REGISTRY.values():
        if op.is_view and op.meta is not None and op.decomposition is None:
            register_kernel(op, "CompositeExplicitAutograd", view_kernel(op))
