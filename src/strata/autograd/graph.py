"""The backward graph: ``Node`` (one backward function), edges, ``AccumulateGrad``, saved tensors.

An edge is a pair ``(node, input_nr)``: "the gradient I produce goes into input ``input_nr`` of
``node``". ``node.next_functions`` holds one edge per differentiable input of the forward op
(``(None, 0)`` where that input needs no gradient), as ``torch/csrc/autograd/function.h``:

    >>> y = x * w                      # x, w leaves that require grad
    >>> y.grad_fn                      # MulBackward0
    >>> y.grad_fn.next_functions       # ((AccumulateGrad, 0), (AccumulateGrad, 0))

A leaf that requires grad reaches the graph through its ``AccumulateGrad`` node, made on first
need and held weakly by the leaf (the graph holds it strongly), so every graph built from one leaf
shares one node while any graph is alive.
"""

import itertools
import sys
import threading
import weakref

from ..core import dtype as D
from ..core.tensor_impl import INFERENCE_VERSION, AutogradMeta
from ..dispatch.tls import _state
from ..ops import factory as F
from ..ops import pointwise as P
from .._tensor import _TYPE_NAMES, make_tensor

_sequence = itertools.count()
_hook_ids = itertools.count()
ACCUMULATE_GRAD_SEQUENCE_NR = 2 ** 64 - 1   # AccumulateGrad runs as soon as it is ready


class RemovableHandle:
    """Returned by every ``register_*hook``: ``handle.remove()`` unregisters the hook. It holds
    its hook table weakly, so a handle does not keep a graph alive."""

    __slots__ = ("id", "_hooks_ref")

    def __init__(self, hooks):
        self.id = next(_hook_ids)
        self._hooks_ref = weakref.ref(hooks)

    def remove(self):
        hooks = self._hooks_ref()
        if hooks is not None:
            hooks.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


class _HookDict(dict):
    """Hooks by handle id, in registration order (a dict subclass, so it can be weakly
    referenced)."""

    __slots__ = ("__weakref__",)


def add_hook(hooks, fn) -> RemovableHandle:
    handle = RemovableHandle(hooks)
    hooks[handle.id] = fn
    return handle


class Node:
    """One backward function. Subclasses implement ``apply(grads) -> grads`` (one gradient in per
    forward output, one out per ``next_functions`` edge); the engine runs the hooks around it."""

    __slots__ = ("next_functions", "_seq", "_pre_hooks", "_post_hooks", "_tensor_hooks",
                 "_retain_hooks", "_output_meta", "_trace", "_metadata", "__weakref__")

    def __init__(self, next_functions=(), output_meta=()):
        self.next_functions = next_functions
        self._seq = next(_sequence)
        self._pre_hooks = None
        self._post_hooks = None
        self._tensor_hooks = None   # output_nr -> {id: hook}, from Tensor.register_hook
        self._retain_hooks = None   # output_nr -> weakref of the tensor that retains its grad
        self._output_meta = output_meta   # per forward output: (shape, dtype, device)
        self._trace = None          # anomaly mode: the forward stack that made this node
        self._metadata = None

    def name(self) -> str:
        return type(self).__name__

    def _sequence_nr(self) -> int:
        return self._seq

    @property
    def metadata(self) -> dict:
        """A dict for the user's own notes about this node."""
        if self._metadata is None:
            self._metadata = {}
        return self._metadata

    def apply(self, grads):
        raise NotImplementedError(f"{self.name()} does not implement apply")

    def release_variables(self):
        """Free saved tensors once the engine is done with this node (retain_graph=False)."""

    def register_hook(self, fn) -> RemovableHandle:
        """``fn(grad_inputs, grad_outputs)`` runs after this node; it may return new
        ``grad_inputs``."""
        if self._post_hooks is None:
            self._post_hooks = _HookDict()
        return add_hook(self._post_hooks, fn)

    def register_prehook(self, fn) -> RemovableHandle:
        """``fn(grad_outputs)`` runs before this node; it may return new ``grad_outputs``."""
        if self._pre_hooks is None:
            self._pre_hooks = _HookDict()
        return add_hook(self._pre_hooks, fn)

    def tensor_hooks(self, output_nr):
        """The hooks ``Tensor.register_hook`` put on output ``output_nr`` (a dict or None)."""
        hooks = self._tensor_hooks
        return None if hooks is None else hooks.get(output_nr)

    def add_tensor_hook(self, output_nr, fn) -> RemovableHandle:
        if self._tensor_hooks is None:
            self._tensor_hooks = {}
        hooks = self._tensor_hooks.get(output_nr)
        if hooks is None:
            hooks = self._tensor_hooks[output_nr] = _HookDict()
        return add_hook(hooks, fn)

    def num_outputs(self) -> int:
        """How many gradients this node receives (its forward op's outputs)."""
        return max(len(self._output_meta), 1)

    def __call__(self, *grads):
        out = self.apply(list(grads))
        return out[0] if len(out) == 1 else tuple(out)

    def __repr__(self):
        return f"<{self.name()} object at {id(self):#x}>"


class AccumulateGrad(Node):
    """The node of a leaf: adds the incoming gradient into ``variable.grad``
    (``torch/csrc/autograd/functions/accumulate_grad.h``)."""

    __slots__ = ("variable",)

    def __init__(self, variable):
        # Node's slots set here, in one frame (a leaf's node is made anew whenever the graph
        # that held it is gone: at every call that records an op of a parameter and drops the
        # result); like PyTorch's, it takes no sequence number from the counter.
        self.next_functions = ()
        self._seq = ACCUMULATE_GRAD_SEQUENCE_NR
        self._pre_hooks = self._post_hooks = self._tensor_hooks = self._retain_hooks = None
        self._output_meta = ((variable._shape, variable.dtype, variable.device),)
        self._trace = self._metadata = None
        self.variable = variable

    def tensor_hooks(self, output_nr):
        return self.variable._ag.hooks   # a leaf's Tensor.register_hook hooks live on the leaf

    def apply(self, grads):
        grad = grads[0]
        if grad is None:
            return ()
        var = self.variable
        ag = var._ag
        accumulate_grad(var, ag, grad)
        hooks = ag.post_accumulate_hooks
        if hooks:
            for hook in tuple(hooks.values()):
                hook(var)
        return ()


def accumulate_grad(var, ag, new):
    """``.grad`` accumulation with PyTorch's rules: the first gradient is stored (stolen when no
    one else holds it and its layout obeys the gradient layout contract, else copied); later ones
    are added in place, or out of place when building a graph (create_graph=True)."""
    old = ag.grad
    if new.is_sparse or (old is not None and old.is_sparse):   # sparse + anything: out of place
        ag.grad = F.clone(new) if old is None else P.add(old, new, 1)
    elif old is None:
        if not _state.grad_enabled and new._ag is None and _owned_by_engine(new) \
                and _obeys_layout_contract(new, var):
            # a view is stolen too, as its detached alias (PyTorch: ``new_grad.detach()``)
            ag.grad = new if new._base is None else _alias(new)
        else:
            ag.grad = _clone_obey_contract(new, var)
    elif not _state.grad_enabled:
        P.add_(old, new, 1)
    else:
        ag.grad = P.add(old, new, 1)


def _owned_by_engine(t) -> bool:
    """PyTorch steals a gradient whose use count shows that only the engine holds it. The
    references a fresh gradient has here: the engine's input buffer, ``AccumulateGrad.apply``'s
    local, ``accumulate_grad``'s and this function's parameters, and getrefcount's argument.
    Anything more (the caller's own gradient, a gradient sent to two leaves, a hook that kept
    it) means someone else can see it, so it is copied."""
    return sys.getrefcount(t) <= 5


def _obeys_layout_contract(grad, var) -> bool:
    if var.is_contiguous() or not _non_overlapping_and_dense(var):
        return grad.is_contiguous()
    return grad.stride() == var.stride()


def _non_overlapping_and_dense(t) -> bool:
    dims = sorted((st, sz) for sz, st in zip(t._shape, t.stride()) if sz != 1)
    expected = 1
    for stride, size in dims:
        if stride != expected:
            return False
        expected *= size
    return True


def _clone_obey_contract(grad, var):
    if not var.is_contiguous() and _non_overlapping_and_dense(var):
        out = F.empty_strided(var._shape, var.stride(), dtype=grad.dtype, device=grad.device)
        return F.copy_(out, grad)
    return F.clone(grad, memory_format="contiguous_format")


# --- the autograd view of a tensor ---------------------------------------------------------------

def requires_grad(t) -> bool:
    """``t.requires_grad``: set on a leaf, implied by history, or inherited from a view's base."""
    ag = t._ag
    if ag is not None and ag.requires_grad:
        return True
    base = t._base
    return base is not None and base._ag is not None and base._ag.requires_grad \
        and t.dtype.category >= D.FLOATING


def grad_accumulator(t) -> AccumulateGrad:
    """The leaf's AccumulateGrad node, made on first need and held weakly by the leaf."""
    ag = t._ag
    ref = ag.grad_accumulator
    node = ref() if ref is not None else None
    if node is None:
        node = AccumulateGrad(t)
        ag.grad_accumulator = weakref.ref(node)
    return node


def gradient_edge(t):
    """Where the gradient of ``t`` goes: ``(grad_fn, output_nr)``, the leaf's AccumulateGrad, or
    ``(None, 0)`` when ``t`` needs no gradient."""
    if t._base is not None:
        refresh_view_grad_fn(t)
    ag = t._ag
    if ag is None:
        return (None, 0)
    fn = ag.grad_fn
    if fn is not None:
        return (fn, ag.output_nr)
    if ag.requires_grad:
        return (grad_accumulator(t), 0)
    return (None, 0)


def refresh_view_grad_fn(view):  # replaced by view_history.py, which makes view nodes
    raise RuntimeError("strata.autograd.kernel is not loaded")


def set_history(t, node, output_nr):
    ag = t._ag
    if ag is None:
        t._ag = AutogradMeta(True, node, output_nr)
    else:
        ag.requires_grad = True
        ag.grad_fn = node
        ag.output_nr = output_nr


# --- saved tensors ------------------------------------------------------------------------------

_FREED = ("Trying to backward through the graph a second time (or directly access saved tensors "
          "after they have already been freed). Saved intermediate values of the graph are freed "
          "when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to "
          "backward through the graph a second time or if you need to access saved tensors after "
          "calling backward.")

_INFERENCE_SAVED = (
    "Inference tensors cannot be saved for backward. Please do not use Tensors created in "
    "inference mode in computation tracked by autograd. To work around this, you can make a "
    "clone to get a normal tensor and use it in autograd, or use `torch.no_grad()` instead of "
    "`torch.inference_mode()`.")


class _HooksState(threading.local):
    def __init__(self):
        self.stack = []   # saved_tensors_hooks: (pack, unpack) pairs, innermost last


saved_hooks = _HooksState()


def _alias(t):
    """A second tensor over ``t``'s memory and version counter, with no autograd history."""
    a = make_tensor(t._storage, t._offset, t._shape, t._get_strides(), t.dtype, t.device,
                    t._keyset, t._version_counter())
    a._array = t._array
    return a


class SavedVariable:
    """A tensor saved for backward, with the version it had when saved
    (``torch/csrc/autograd/saved_variable.cpp``).

    Note [Saved tensor versions]: unpacking compares the tensor's version counter with the saved
    version, so a saved tensor changed in place since (``y = x.exp(); y.add_(1)``) raises instead
    of giving a wrong gradient. A saved *output* keeps a history-free alias of the data plus a
    weak reference to its node, to avoid the cycle output -> node -> output; unpacking it while
    building a graph (create_graph) rebuilds a tensor whose grad_fn is that node.
    """

    __slots__ = ("_data", "_version", "_node", "_output_nr", "_packed", "_unpack", "_released")

    def __init__(self, t, node=None, output_nr=0):
        """``node`` is given when ``t`` is an output of that node (saved as an output)."""
        vc = t._vc
        if vc is INFERENCE_VERSION:
            raise RuntimeError(_INFERENCE_SAVED)
        self._released = False
        self._output_nr = output_nr
        self._node = None if node is None else weakref.ref(node)
        self._version = 0 if vc is None else vc.value
        hooks = saved_hooks.stack
        if hooks:
            pack, self._unpack = hooks[-1]
            self._packed = pack(t)
            self._data = None
        else:
            self._unpack = None
            self._data = t if node is None else _alias(t)

    def unpack(self, saved_for=None):
        """The tensor, checked against in-place changes since it was saved."""
        if self._released:
            raise RuntimeError(_FREED)
        if self._unpack is not None:
            data = self._unpack(self._packed)
        else:
            data = self._data
            current = data._version
            if current != self._version:
                raise RuntimeError(self._version_error(data, current, saved_for))
        if self._node is None or not _state.grad_enabled:
            return data
        node = self._node()
        out = _alias(data)
        if node is not None:
            set_history(out, node, self._output_nr)
        return out

    def _version_error(self, data, current, saved_for):
        from .anomaly_mode import is_anomaly_enabled
        type_name = f"torch.{_TYPE_NAMES.get(data.dtype, 'Tensor')}"
        shape = "[" + ", ".join(map(str, data._shape)) + "]"
        if self._node is not None:
            fn, nr = self._node(), self._output_nr
        else:   # the tensor's current history (a view's grad_fn is remade after writes)
            fn, nr = data.grad_fn, data.output_nr
        where = f", which is output {nr} of {_short_name(fn)}," if fn is not None else ""
        if is_anomaly_enabled():
            hint = ("Hint: the backtrace further above shows the operation that failed to "
                    "compute its gradient. The variable in question was changed in there or "
                    "anywhere later. Good luck!")
        else:
            hint = ("Hint: enable anomaly detection to find the operation that failed to compute "
                    "its gradient, with torch.autograd.set_detect_anomaly(True, "
                    "check_nan=False).")
        return (f"one of the variables needed for gradient computation has been modified by an "
                f"inplace operation: [{type_name} {shape}]{where} is at version {current}; "
                f"expected version {self._version} instead. {hint}")

    def release(self):
        self._released = True
        self._data = None
        self._packed = None

    def register_hooks(self, pack, unpack):
        """Per-tensor saved hooks (``grad_fn._raw_saved_self.register_hooks(pack, unpack)``)."""
        if self._released:
            raise RuntimeError(_FREED)
        if self._unpack is not None:
            raise RuntimeError("Calling register_hooks on a saved tensor whose hooks have already "
                               "been set.")
        data = self._data
        self._unpack = unpack
        self._packed = pack(data)
        self._data = None


def _short_name(node) -> str:
    """PyTorch's version error names the node without its ``Backward<n>`` suffix."""
    name = node.name()
    head, sep, tail = name.rpartition("Backward")
    return head if sep and (not tail or tail.isdigit()) else name


class saved_tensors_hooks:
    """``with saved_tensors_hooks(pack, unpack):`` every tensor saved for backward inside is
    stored as ``pack(tensor)`` and given back as ``unpack(packed)`` (thread-local)."""

    def __init__(self, pack_hook, unpack_hook):
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self):
        saved_hooks.stack.append((self.pack_hook, self.unpack_hook))

    def __exit__(self, *exc):
        saved_hooks.stack.pop()


class save_on_cpu(saved_tensors_hooks):
    """Keep saved tensors in CPU memory and move them back to their device on unpack."""

    def __init__(self, pin_memory=False, device_type="cuda"):
        def pack(t):
            return (t.device, t.cpu())

        def unpack(packed):
            device, t = packed
            return t.to(device)

        super().__init__(pack, unpack)
