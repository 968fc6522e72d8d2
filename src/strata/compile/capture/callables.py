"""Symbolic values that can be called: user functions (inlined), modules (hooks + forward,
inlined), strata functions (recorded in the graph), builtins (evaluated symbolically).

Which callables go into the graph and which are inlined is Dynamo's rule in small: a function
of the strata namespace (``strata.relu``, ``F.linear``, a Tensor method, an autograd.Function's
``apply``) becomes one ``call_function``/``call_method`` node; any other Python function is
inlined, so the graph sees only the strata calls inside it.
"""

import inspect
import types
import weakref

from ...optim.optimizer import Optimizer
from .source import Source
from .variables import ContextExitVariable, Unsupported, VariableTracker


class UserFunctionVariable(VariableTracker):
    """A plain Python function: calling it inlines its bytecode."""

    def __init__(self, fn, source=None):
        self.fn = fn
        self.source = source

    def python_type(self):
        return types.FunctionType

    def as_python_constant(self):
        return self.fn

    def call(self, tx, args, kwargs):
        return tx.inline_call(self.fn.__code__, self.fn.__globals__, self.bind(tx, args, kwargs),
                              self.closure_cells(tx), self.fn.__name__)

    def bind(self, tx, args, kwargs):
        code = self.fn.__code__
        if not kwargs and len(args) == code.co_argcount and not code.co_kwonlyargcount and \
                not code.co_flags & 0x0C:   # the common case; also comprehensions' ``.0``
            return dict(zip(code.co_varnames, args))
        # the code's own signature: not the ``__wrapped__`` one a functools.wraps wrapper shows
        signature = inspect.signature(self.fn, follow_wrapped=False)
        try:
            bound = signature.bind(*args, **kwargs)
        except TypeError as e:
            raise Unsupported(f"calling {self.fn.__qualname__}: {e}") from None
        bound.apply_defaults()
        out = {}
        params = signature.parameters
        for name, value in bound.arguments.items():
            kind = params[name].kind
            if kind is inspect.Parameter.VAR_POSITIONAL:
                from .variables import TupleVariable
                value = TupleVariable([tx.wrap_constant(v) if not isinstance(v, VariableTracker)
                                       else v for v in value])
            elif kind is inspect.Parameter.VAR_KEYWORD:
                from .variables import DictVariable
                value = DictVariable({k: v if isinstance(v, VariableTracker)
                                      else tx.wrap_constant(v) for k, v in value.items()})
            elif not isinstance(value, VariableTracker):   # a default value
                value = tx.wrap(value, None)
            out[name] = value
        return out

    def closure_cells(self, tx):
        from .variables import CellVariable
        cells = {}
        for i, name in enumerate(self.fn.__code__.co_freevars):
            source = self.source.attr("__closure__").item(i).attr("cell_contents") \
                if self.source is not None else None
            try:
                contents = self.fn.__closure__[i].cell_contents
            except ValueError:
                raise Unsupported(f"free variable {name!r} read before assignment") from None
            cells[name] = CellVariable(tx.wrap(contents, source))
        return cells


class NestedFunctionVariable(UserFunctionVariable):
    """A function made while tracing (MAKE_FUNCTION): a code object plus traced closure cells."""

    def __init__(self, code, f_globals, name, defaults, closure: tuple, kwdefaults=None):
        fn = types.FunctionType(code, f_globals, name, None, tuple(
            types.CellType() for _ in code.co_freevars))
        super().__init__(fn)
        self.defaults, self.kwdefaults, self.cells = defaults, kwdefaults, closure

    def bind(self, tx, args, kwargs):
        if self.defaults is not None:
            self.fn.__defaults__ = tuple(self.defaults.as_python_constant())
        if self.kwdefaults is not None:
            kwdefaults = self.kwdefaults
            self.fn.__kwdefaults__ = {k: v.as_python_constant() for k, v in
                                      kwdefaults.items.items()} \
                if hasattr(kwdefaults, "items") else dict(kwdefaults.as_python_constant())
        return super().bind(tx, args, kwargs)

    def closure_cells(self, tx):
        return dict(zip(self.fn.__code__.co_freevars, self.cells))

    def reconstruct(self, codegen):
        """A new function object with the same code; its closure holds new cells with the
        traced contents, which is the same function only if nothing rebinds those variables
        later (checked: no STORE_DEREF after the break)."""
        if codegen.rebinds_cells_later:
            raise Unsupported("a closure defined in the compiled frame is live at a graph "
                              "break and the frame rebinds closed-over variables after it")
        if any(cell.contents is None for cell in self.cells):
            raise Unsupported("a closure over an unassigned variable is live at a graph break")
        cells = "".join(f"___cell({codegen.value(c.contents)}), " for c in self.cells)
        defaults = codegen.value(self.defaults) if self.defaults is not None else "None"
        function = (f"___function({codegen.constant(self.fn.__code__)}, "
                    f"{codegen.constant(self.fn.__globals__)}, {self.fn.__name__!r}, "
                    f"{defaults}, ({cells}))")
        if self.kwdefaults is not None:
            return f"___with_kwdefaults({function}, {codegen.value(self.kwdefaults)})"
        return function


class UserMethodVariable(UserFunctionVariable):
    """``obj.method``: the function with ``self`` bound to a symbolic value."""

    def __init__(self, fn, obj, source=None):
        super().__init__(fn, source)
        self.obj = obj

    def call(self, tx, args, kwargs):
        return super().call(tx, [self.obj, *args], kwargs)

    def reconstruct(self, codegen):
        return f"{codegen.value(self.obj)}.{self.fn.__name__}"


class TorchFunctionVariable(VariableTracker):
    """A strata function (``strata.add``, ``F.relu``, ``MyFn.apply``): one node in the graph."""

    def __init__(self, fn, source=None):
        self.fn = fn
        self.source = source

    def as_python_constant(self):
        return self.fn

    def call(self, tx, args, kwargs):
        return tx.output.call(tx, "call_function", self.fn, args, kwargs)

    def reconstruct(self, codegen):
        return self.source.expr if self.source is not None else codegen.constant(self.fn)


class TensorMethodVariable(VariableTracker):
    """``x.view`` before it is called: calling records a ``call_method`` node."""

    def __init__(self, tensor, name):
        self.tensor, self.name = tensor, name

    def call(self, tx, args, kwargs):
        return tx.output.call(tx, "call_method", self.name, [self.tensor, *args], kwargs)

    def reconstruct(self, codegen):
        return f"{codegen.value(self.tensor)}.{self.name}"


class GradModeVariable(VariableTracker):
    """``strata.no_grad()`` / ``enable_grad()`` / ``set_grad_enabled(b)`` as a context manager:
    entering flips grad mode while tracing and records the flip in the graph."""

    def __init__(self, enabled: bool):
        self.enabled = enabled

    def enter(self, tx):
        previous = tx.output.grad_enabled()
        tx.output.set_grad_enabled(tx, self.enabled)
        return ContextExitVariable(previous)


class AutocastVariable(VariableTracker):
    """``strata.autocast(...)`` as a context manager: entering and leaving are graph nodes, and
    the block's ops run on meta tensors under it (so their dtypes are autocast's)."""

    def __init__(self, manager):
        self.manager = manager

    def enter(self, tx):
        tx.output.autocast_edge(tx, self.manager, entering=True)
        return AutocastExitVariable(self.manager)


class AutocastExitVariable(VariableTracker):
    def __init__(self, manager):
        self.manager = manager

    def call(self, tx, args, kwargs):
        from .variables import ConstantVariable
        tx.output.autocast_edge(tx, self.manager, entering=False)
        return ConstantVariable(None)

    def reconstruct(self, codegen):
        raise Unsupported("graph break inside an autocast block")


def _is_cpu_optimizer(value):
    """An optimizer of CPU parameters. On another device the state is still made by the first
    graph: the OpenCL wrapper passes device buffers only to its kernels, so the CPU ``step``
    counter eager makes (as PyTorch) could not be an argument there."""
    return isinstance(value, Optimizer) and all(
        p.device.type == "cpu" for group in value.param_groups for p in group["params"])


def _state_made():
    """What a traced ``_init_missing_state()`` call does: nothing, capture made the state."""


class PythonObjectVariable(VariableTracker):
    """Any other object read from outside the frame: its attributes are read through sources;
    calling it is a graph break."""

    def __init__(self, value, source=None):
        self.value = value
        self.source = source

    def python_type(self):
        return type(self.value)

    def as_python_constant(self):
        return self.value

    def truth(self, tx):
        cls = type(self.value)
        if hasattr(cls, "__bool__") or hasattr(cls, "__len__"):
            raise Unsupported(f"truth value of {cls.__name__}")
        return True

    def getattr(self, tx, name):
        overlay = tx.output.side_effects.read_attr(self.value, name)
        if overlay is not None:
            return overlay
        if name == "_init_missing_state" and _is_cpu_optimizer(self.value):
            # Dynamo's OptimizerVariable runs ``_init_group`` eagerly while tracing: the state
            # exists before the update is traced, so the first compiled step is the
            # steady-state graph (Note [Traced optimizer step] in optim/optimizer.py)
            self.value._init_missing_state()
            return UserFunctionVariable(_state_made)
        static = None
        if not isinstance(self.value, (types.ModuleType, type)) and \
                name not in getattr(self.value, "__dict__", {}):
            static = inspect.getattr_static(type(self.value), name, None)
        if isinstance(static, types.FunctionType):
            return UserMethodVariable(static, self)
        if isinstance(static, property):
            return UserFunctionVariable(static.fget).call(tx, [self], {})
        try:
            value = getattr(self.value, name)
        except AttributeError as e:
            raise Unsupported(str(e)) from None
        return tx.wrap(value, self.source.attr(name) if self.source is not None else None)

    def reconstruct(self, codegen):
        return self.source.expr if self.source is not None else codegen.constant(self.value)

    def call(self, tx, args, kwargs):
        value = self.value
        if isinstance(value, type):
            return tx.construct(value, args, kwargs)
        if type(value) is weakref.ref and self.source is not None and not args and not kwargs:
            # a weak reference (an LR scheduler's wrapper of ``opt.step``): its referent, read
            # again through the reference at each call
            return tx.wrap(value(), Source(f"{self.source.expr}()"))
        raise Unsupported(f"call to {getattr(value, '__qualname__', type(value).__name__)}")
