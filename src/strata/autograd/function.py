"""Custom differentiable operations: ``strata.autograd.Function`` (``torch/autograd/function.py``).

    class Exp(Function):
        @staticmethod
        def forward(ctx, x):
            y = x.exp()
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, grad):
            y, = ctx.saved_tensors
            return grad * y

    y = Exp.apply(x)          # y.grad_fn is an ExpBackward node; ctx *is* that node

``forward`` runs with grad mode off. ``backward`` gets one gradient per output and returns one
per forward argument (None for non-tensors). A ``setup_context(ctx, inputs, output)`` static
method, if defined, fills the ctx instead of ``forward``, which then takes no ctx.
"""

import functools

from ..dispatch.tls import _state
from ..ops import factory as F
from .graph import (
    Node, SavedVariable, _alias, _FREED, gradient_edge, requires_grad, set_history,
)
from .kernel import validate_outputs
from .view_history import check_inplace


class FunctionCtx:
    """What ``forward``/``setup_context`` may call on ``ctx``."""

    def save_for_backward(self, *tensors):
        """Keep tensors (inputs or outputs) for backward, with their versions checked there."""
        self.to_save = tensors

    def save_for_forward(self, *tensors):
        self.saved_for_forward = tensors

    def mark_dirty(self, *tensors):
        """Declare the inputs that ``forward`` modified in place (and returns)."""
        self.dirty_tensors = tensors

    def mark_non_differentiable(self, *tensors):
        """Declare outputs that get no gradient (they will not require grad)."""
        self.non_differentiable = tensors

    def set_materialize_grads(self, value: bool):
        """With False, ``backward`` sees None (not zeros) for outputs no gradient reached."""
        self.materialize_grads = value


class BackwardCFunction(FunctionCtx, Node):
    """The node of one ``Function.apply`` call; each Function subclass gets its own subclass,
    named ``<Function>Backward`` as in PyTorch."""

    _forward_cls = None

    def __init__(self):
        Node.__init__(self)
        self.to_save = ()
        self.dirty_tensors = ()
        self.non_differentiable = ()
        self.materialize_grads = True
        self.needs_input_grad = ()
        self._saved = None
        self._released = False
        self._input_meta = ()
        self._arg_slots = ()

    @property
    def saved_tensors(self):
        if self._released:
            raise RuntimeError(_FREED)
        if self._saved is None:
            return tuple(self.to_save)   # still inside forward
        return tuple(v.unpack() if isinstance(v, SavedVariable) else v for v in self._saved)

    saved_variables = saved_tensors

    def release_variables(self):
        self._released = True
        for v in self._saved or ():
            if isinstance(v, SavedVariable):
                v.release()

    def apply(self, grads):
        cls = self._forward_cls
        if self.materialize_grads:
            grads = list(grads)
            for i, g in enumerate(grads):
                if g is None:
                    shape, dtype, device = self._output_meta[i]
                    grads[i] = F.full(shape, 0, dtype=dtype, device=device)
        result = cls.backward(self, *grads)
        if not isinstance(result, tuple):
            result = (result,)
        n_args = len(self._arg_slots)
        if len(result) > n_args and all(r is None for r in result[n_args:]):
            result = result[:n_args]
        if len(result) != n_args:
            raise RuntimeError(f"function {self.name()} returned an incorrect number of "
                               f"gradients (expected {n_args}, got {len(result)})")
        out = []
        for i, (is_tensor, g) in enumerate(zip(self._arg_slots, result)):
            if is_tensor:
                out.append(g)
            elif g is not None:
                raise RuntimeError(f"function {self.name()} returned a gradient different than "
                                   f"None at position {i + 1}, but the corresponding forward "
                                   f"input was not a Variable")
        return validate_outputs(self, out)


class FunctionMeta(type):
    """Gives every Function subclass its own backward node class."""

    def __init__(cls, name, bases, attrs):
        cls._backward_cls = type(name + "Backward", (BackwardCFunction,),
                                 {"_forward_cls": cls})
        super().__init__(name, bases, attrs)


class Function(metaclass=FunctionMeta):
    """Base class of custom differentiable operations; call them with ``Fn.apply(*args)``."""

    def __init__(self, *args, **kwargs):
        raise RuntimeError(f"{type(self).__name__}: autograd Functions are called with "
                           f"{type(self).__name__}.apply(...), not instantiated (legacy autograd "
                           f"functions with non-static forward methods are not supported)")

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError("You must implement the forward function for custom "
                                  "autograd.Function.")

    @staticmethod
    def setup_context(ctx, inputs, output):
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("You must implement either the backward or vjp method for "
                                  "your custom autograd.Function to use it with backward "
                                  "mode AD.")

    vjp = backward

    @staticmethod
    def jvp(ctx, *grad_inputs):
        raise NotImplementedError("You must implement the jvp function for custom "
                                  "autograd.Function to use it with forward mode AD.")

    @classmethod
    def apply(cls, *args, **kwargs):
        node = cls._backward_cls()
        is_tensor = tuple(hasattr(a, "_ag") for a in args)
        needs = tuple(t and requires_grad(a) for t, a in zip(is_tensor, args))
        node.needs_input_grad = needs
        record = _state.grad_enabled and any(needs)
        separate_setup = cls.setup_context is not Function.setup_context
        prev = _state.grad_enabled
        _state.grad_enabled = False
        try:
            if separate_setup:
                output = cls.forward(*args, **kwargs)
                cls.setup_context(node, args, output)
            else:
                output = cls.forward(node, *args, **kwargs)
        finally:
            _state.grad_enabled = prev
        if not record:
            node._saved = tuple(node.to_save)
            return output
        node._arg_slots = is_tensor
        edges, metas = [], []
        for t, a in zip(is_tensor, args):
            if t:
                edges.append(gradient_edge(a))
                metas.append((a._shape, a.dtype, a.device))
        node.next_functions = tuple(edges)
        node._input_meta = tuple(metas)
        return _wrap_outputs(node, args, output)


def _wrap_outputs(node, args, output):
    """Give the outputs their history: ``node`` as grad_fn, unless marked non-differentiable;
    an input returned as is becomes a fresh alias (so the input keeps its own history); an input
    marked dirty is rebased onto ``node``."""
    single = not isinstance(output, tuple)
    outputs = (output,) if single else output
    dirty = {id(t) for t in node.dirty_tensors}
    non_diff = {id(t) for t in node.non_differentiable}
    inputs = {id(a) for a in args if hasattr(a, "_ag")}
    for t in node.dirty_tensors:
        check_inplace(t)
    wrapped, metas = [], []
    for k, out in enumerate(outputs):
        if not hasattr(out, "_ag"):
            wrapped.append(out)
            metas.append(None)
            continue
        if id(out) in inputs and id(out) not in dirty:
            out = _alias(out)
        if id(outputs[k]) not in non_diff and out.dtype.is_floating_point:
            set_history(out, node, k)
        wrapped.append(out)
        metas.append((out._shape, out.dtype, out.device))
    node._output_meta = tuple(metas)
    saved = []
    for t in node.to_save:
        if t is None or not hasattr(t, "_ag"):
            saved.append(t)
            continue
        k = next((k for k, o in enumerate(outputs) if o is t), None)
        if k is not None:
            saved.append(SavedVariable(wrapped[k], node if wrapped[k].grad_fn is node else None,
                                       k))
        else:
            saved.append(SavedVariable(t))
    node._saved = tuple(saved)
    node.to_save = ()
    return wrapped[0] if single else tuple(wrapped)


class DelayedError(Node):
    """Stands in for a backward that ran without recording (``@once_differentiable``): using
    it in a further backward raises."""

    __slots__ = ("_message",)

    def __init__(self, message, edges, output_meta):
        super().__init__(edges, output_meta)
        self._message = message

    def apply(self, grads):
        raise RuntimeError(self._message)


def once_differentiable(fn):
    """Decorate a ``backward`` that is not itself differentiable: it runs with grad mode off, and
    a double backward through it raises instead of silently giving wrong results."""
    @functools.wraps(fn)
    def wrapper(ctx, *args):
        prev = _state.grad_enabled
        _state.grad_enabled = False
        try:
            outputs = fn(ctx, *args)
        finally:
            _state.grad_enabled = prev
        if not prev:
            return outputs
        needing = [a for a in args if hasattr(a, "_ag") and requires_grad(a)]
        if not needing:
            return outputs
        single = not isinstance(outputs, tuple)
        outs = (outputs,) if single else outputs
        error = DelayedError("trying to differentiate twice a function that was marked with "
                             "@once_differentiable", tuple(gradient_edge(a) for a in needing),
                             tuple((o._shape, o.dtype, o.device) for o in outs
                                   if hasattr(o, "_ag")))
        wrapped = []
        for k, o in enumerate(outs):
            if hasattr(o, "_ag") and o.dtype.is_floating_point:
                o = _alias(o)
                set_history(o, error, k)
            wrapped.append(o)
        return wrapped[0] if single else tuple(wrapped)
    return wrapper
