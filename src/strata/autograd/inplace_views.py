"""In-place view methods: ``t_``, ``transpose_``, ``swapdims_``/``swapaxes_``, ``unsqueeze_``,
``squeeze_``, ``as_strided_``.

PyTorch's kernels rewrite the tensor's sizes and strides, and autograd sets its history to the
in-place row's node (``TBackward1``: ``t``'s formula, named by derivatives.yaml's ``t_`` row).
Here the out-of-place view computes the new geometry, raises PyTorch's errors and records its
node; only then does the tensor adopt the view's geometry and that node, renamed to the in-place
row's class (``derivatives.inplace_view``), so a failed call leaves it untouched. A tensor that
is itself a view keeps its base, and its new node, until its data changes again.
"""

from ..core.tensor_impl import INFERENCE_VERSION
from ..dispatch.tls import _state
from .graph import requires_grad, set_history
from .view_history import check_inplace


def _adopt_view(self, make_view):
    if _state.grad_enabled and requires_grad(self):
        check_inplace(self)
    view = make_view()
    self._shape, self._strides, self._offset = view._shape, view.stride(), view._offset
    self._array = None
    ag = view._ag
    node = None if ag is None else ag.grad_fn
    if node is not None:
        deriv = node._deriv
        # the same slots and formula, another name: the class is all that tells them apart
        node.__class__ = deriv.node_class(node._args, deriv.inplace_view_name)
        set_history(self, node, ag.output_nr)
    counter = self._version_counter()
    if counter is not INFERENCE_VERSION:
        counter.value += 1
    if node is not None and self._base is not None:   # the node is current: no remaking
        self._ag.attr_version = counter.value
    return self


def t_(self):
    def transposed():
        if self.ndim > 2:
            raise RuntimeError(f"t_() expects a tensor with <= 2 dimensions, but self is "
                               f"{self.ndim}D")
        return self.t()
    return _adopt_view(self, transposed)


def transpose_(self, dim0, dim1):
    return _adopt_view(self, lambda: self.transpose(dim0, dim1))


def unsqueeze_(self, dim):
    return _adopt_view(self, lambda: self.unsqueeze(dim))


def squeeze_(self, *dim):
    return _adopt_view(self, lambda: self.squeeze(*dim))


def as_strided_(self, size, stride, storage_offset=None):
    return _adopt_view(self, lambda: self.as_strided(size, stride, storage_offset))


METHODS = {"t_": t_, "transpose_": transpose_, "swapdims_": transpose_, "swapaxes_": transpose_,
           "unsqueeze_": unsqueeze_, "squeeze_": squeeze_, "as_strided_": as_strided_}
