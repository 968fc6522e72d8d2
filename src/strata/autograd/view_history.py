"""What in-place writes and views do to autograd history: ``check_inplace`` refuses the writes
autograd cannot account for, an in-place op on a view rebases its base's history with a
``CopySlices`` node (Note [View + in-place]), a view's ``grad_fn`` is remade when it goes stale,
and the pieces of ``split``/``unbind`` refuse in-place writes (Note [Multi-output views]).

Separate from ``kernel.py``, which records the node of every other call and uses these rules
when the call writes in place or returns a view.
"""

import re

from ..core import dtype as D
from ..ops import factory as F
from ..ops import shape as S
from . import derivatives, graph
from .graph import Node, gradient_edge, requires_grad, set_history

_FLOATING = D.FLOATING


# --- in-place ops and views ----------------------------------------------------------------------

def check_inplace(self):
    """Refuse in-place writes autograd cannot account for (``check_inplace`` in
    ``torch/csrc/autograd/VariableTypeUtils.h``)."""
    if not requires_grad(self):
        return
    ag = self._ag
    base = self._base
    if base is not None:
        if ag is not None and ag.creation_meta == MULTI_OUTPUT:
            raise multi_output_view_error(self, "is being")
        if ag is not None and ag.creation_meta == NO_GRAD:
            raise RuntimeError(
                "A view was created in no_grad mode and is being modified inplace with grad mode "
                "enabled. Given that this use case is ambiguous and error-prone, it is forbidden. "
                "You can clarify your code by moving both the view and the inplace either both "
                "inside the no_grad block (if you don't want the inplace to be tracked) or both "
                "outside (if you want the inplace to be tracked).")
        bag = base._ag
        if bag is not None and bag.requires_grad and bag.grad_fn is None:
            raise RuntimeError("a view of a leaf Variable that requires grad is being used in an "
                               "in-place operation.")
    elif ag is not None and ag.requires_grad and ag.grad_fn is None:
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place "
                           "operation.")


# Note [Multi-output views]: the pieces of ``split``/``unbind`` share one node, which has no
# way to take a piece's in-place change back to the base (no CopySlices over one output), so
# PyTorch refuses the write, and a use of a piece after its base changed
# (CreationMeta::MULTI_OUTPUT_NODE, ``handle_view_on_rebase`` in torch/csrc/autograd/variable.cpp).
# Views of a piece inherit the mark; the message names the view's own node.
MULTI_OUTPUT = "multi_output"
NO_GRAD = "no_grad"


def multi_output_view_error(view, what):
    ag = view._ag
    op_name = re.sub(r"Backward\d+$", "", type(ag.grad_fn).__name__)
    return RuntimeError(
        f"Output {ag.output_nr} of {op_name} is a view and {what} modified inplace. This view is "
        f"the output of a function that returns multiple views. Such functions do not allow the "
        f"output views to be modified inplace. You should replace the inplace operation by an "
        f"out-of-place one.")


def _rebase_history(self, node):
    """Note [View + in-place]: an in-place op on a view rewrites the *base*'s history with a
    CopySlices node (the base's gradient with the view's region replaced by what ``node``
    computes), then the view's own grad_fn is remade from the base. On a plain tensor the
    tensor's grad_fn simply becomes ``node``."""
    base = self._base
    ag = self._ag
    if base is None or (ag is not None and ag.creation_meta is not None):
        set_history(self, node, 0)
        return
    copy_slices = CopySlices(base, self, node)
    set_history(base, copy_slices, 0)
    _set_view_history(self, base)


def _set_view_history(view, base):
    """The view's grad_fn, remade as an ``as_strided`` of its base's current history."""
    deriv = derivatives.lookup(S.as_strided)
    node = deriv.node_class(())(deriv, (gradient_edge(base),),
                                ((base._shape, base.dtype, base.device),), (True,))
    geometry = (base._shape, base.stride(), base._offset)
    node._args = (geometry, view._shape, view.stride(), view._offset)
    node._output_meta = ((view._shape, view.dtype, view.device),)
    set_history(view, node, 0)
    view._ag.attr_version = view._version


def refresh_view_grad_fn(view):
    """A view's grad_fn goes stale when its data changed in place (through the base or another
    view) or when its base gained history after the view was made; remake it then."""
    ag = view._ag
    if ag is not None and ag.creation_meta is not None:
        if ag.creation_meta == MULTI_OUTPUT and ag.attr_version != view._version:
            raise multi_output_view_error(view, "its base or another view of its base has been")
        return
    base = view._base
    if not requires_grad(base) or view.dtype.category < _FLOATING:
        return
    if ag is not None and ag.grad_fn is not None and ag.attr_version == view._version:
        return
    _set_view_history(view, base)


graph.refresh_view_grad_fn = refresh_view_grad_fn


class CopySlices(Node):
    """The base's node after an in-place op ``fn`` on one of its views: the gradient of the base
    is the incoming gradient with the view's region replaced by ``fn``'s gradient for its input
    (``torch/csrc/autograd/functions/tensor.cpp``)."""

    __slots__ = ("_base_geometry", "_view_geometry", "_fn")

    def __init__(self, base, view, fn):
        super().__init__((gradient_edge(base),) + tuple(fn.next_functions[1:]),
                         ((base._shape, base.dtype, base.device),))
        self._base_geometry = (base._shape, base.stride(), base._offset)
        self._view_geometry = (view._shape, view.stride(), view._offset - base._offset)
        self._fn = fn

    def apply(self, grads):
        grad = grads[0]
        if grad is None:
            return [None] * len(self.next_functions)
        shape, strides, _ = self._base_geometry
        result = F.empty_strided(shape, strides, dtype=grad.dtype, device=grad.device)
        F.copy_(result, grad)
        vshape, vstrides, voffset = self._view_geometry
        grad_slice = S.as_strided(result, vshape, vstrides, voffset)
        fn = self._fn
        res = fn.apply([F.clone(grad_slice)])
        if res[0] is None:
            F.fill_(grad_slice, 0)
        else:
            F.copy_(grad_slice, res[0])
        return [result] + list(res[1:])

    def release_variables(self):
        self._fn.release_variables()
