"""What ``Tensor``'s autograd methods do (``backward``, ``register_hook``, ``retain_grad``, ...).

The tensor layer cannot import autograd (it sits above it), so ``_tensor.py`` keeps thin methods
that call these functions through ``install_autograd``.
"""

import weakref

from ..core.tensor_impl import INFERENCE_VERSION, AutogradMeta
from ..dispatch.tls import _state
from .graph import _HookDict, add_hook, gradient_edge, refresh_view_grad_fn, requires_grad

__all__ = ["backward", "detach_", "grad_fn", "register_hook", "register_post_accumulate_grad_hook",
           "requires_grad", "retain_grad", "set_requires_grad"]


def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
    from . import backward as run_backward
    run_backward(self, gradient, retain_graph, create_graph, inputs=inputs)


def grad_fn(self):
    if self._base is not None:
        refresh_view_grad_fn(self)
    ag = self._ag
    return None if ag is None else ag.grad_fn


def set_requires_grad(self, flag):
    ag = self._ag
    if ag is not None and ag.grad_fn is not None or (self._base is not None and
                                                      grad_fn(self) is not None):
        if not flag:
            raise RuntimeError("you can only change requires_grad flags of leaf variables. If "
                               "you want to use a computed variable in a subgraph that doesn't "
                               "require differentiation use var_no_grad = var.detach().")
        return self
    if flag:
        if not self.dtype.is_differentiable:
            raise RuntimeError("only Tensors of floating point and complex dtype can require "
                               "gradients")
        if self._vc is INFERENCE_VERSION and not _state.inference_mode:
            raise RuntimeError("Setting requires_grad=True on inference tensor outside "
                               "InferenceMode is not allowed.")
    if ag is None:
        if not flag:
            return self
        ag = self._ag = AutogradMeta()
    ag.requires_grad = bool(flag)
    return self


def register_hook(self, hook):
    """``hook(grad) -> Tensor or None`` runs when the gradient of this tensor is computed."""
    if not requires_grad(self):
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    node, output_nr = gradient_edge(self)
    ag = self._ag
    if ag.grad_fn is None:   # a leaf: its hooks live on it and its AccumulateGrad reads them
        if ag.hooks is None:
            ag.hooks = _HookDict()
        return add_hook(ag.hooks, hook)
    return node.add_tensor_hook(output_nr, hook)


def register_post_accumulate_grad_hook(self, hook):
    """``hook(tensor)`` runs after a leaf's ``.grad`` has been accumulated."""
    if not requires_grad(self):
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    if grad_fn(self) is not None:
        raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
    ag = self._ag
    if ag.post_accumulate_hooks is None:
        ag.post_accumulate_hooks = _HookDict()
    return add_hook(ag.post_accumulate_hooks, hook)


def retain_grad(self):
    """Make a non-leaf's ``.grad`` filled during backward (a leaf's always is)."""
    if not requires_grad(self):
        raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
    node, output_nr = gradient_edge(self)
    ag = self._ag
    if ag.grad_fn is None or ag.retains_grad:
        return
    if node._retain_hooks is None:
        node._retain_hooks = {}
    node._retain_hooks[output_nr] = weakref.ref(self)
    ag.retains_grad = True


def detach_(self):
    """Detach in place: the tensor becomes a leaf that does not require grad."""
    if self._base is not None and requires_grad(self._base):
        raise RuntimeError("Can't detach views in-place. Use detach() instead. If you are using "
                           "DistributedDataParallel (DDP) for training, and gradient_as_bucket_"
                           "view is set as True, gradients are views of DDP buckets, and hence "
                           "detach_() cannot be called on these gradients. To fix this error, "
                           "please refer to the Optimizer.zero_grad() function in "
                           "torch/optim/optimizer.py as the solution.")
    ag = self._ag
    if ag is not None:
        ag.grad_fn = None
        ag.requires_grad = False
        ag.output_nr = 0
    self._base = None
    return self
