"""What one capture produces: the FX graph of tensor ops, its inputs, the guards, and the Python
side effects to replay (Dynamo's ``OutputGraph`` + ``SideEffects``).

Tensor ops run on meta tensors through the dispatcher while they are recorded, so every node has
``meta["val"]`` (shape, dtype, strides) without touching data, and ``meta["stack_trace"]`` names
the user's file and line.
"""

import builtins
import collections
import operator
import types

from ... import _tensor
from ...creation import empty_strided
from ...core import device as device_mod
from ...core import dtype as dtype_mod
from ...dispatch.tls import state as dispatch_state
from ...nn.modules.module import Module
from ..fx import Graph
from . import in_graph
from .builtins import BuiltinVariable, is_supported_builtin
from .callables import (GradModeVariable, PythonObjectVariable, TensorMethodVariable,
                        TorchFunctionVariable, UserFunctionVariable)
from .modules import NNModuleVariable
from .side_effects import SideEffects
from .source import Source, identifier
from .variables import (BaseListVariable, ConstantVariable, ContextExitVariable, DictVariable,
                        ListVariable, NamedTupleVariable, SizeVariable, SymIntVariable,
                        TensorVariable, TupleVariable, Unsupported, VariableTracker)

Tensor = _tensor.Tensor
_CONSTANT_TYPES = (int, float, bool, str, bytes, complex, type(None), type(Ellipsis), slice,
                   range, types.CodeType, dtype_mod.dtype, device_mod.device)
# Methods that read a tensor's data or leave the graph: a graph break, as in Dynamo. The
# in-place view methods too: they change a tensor's own sizes and strides, which the graph's
# functional nodes cannot express (a traced ``y.t_()`` gave wrong values), so they run eagerly.
_BREAKING_METHODS = {"item", "tolist", "numpy", "backward", "data_ptr", "register_hook",
                     "__bool__", "__int__", "__float__", "__index__", "untyped_storage",
                     "cuda", "storage", "retain_grad", "requires_grad_", "__len__",
                     "t_", "transpose_", "swapdims_", "swapaxes_", "squeeze_", "unsqueeze_",
                     "as_strided_", "resize_", "resize_as_", "set_"}
_DATA_ATTRS = {"T", "mT", "H", "mH", "real", "imag", "data"}
_SIZE_METHODS = {"size", "dim", "ndimension", "numel", "nelement", "stride", "is_contiguous",
                 "element_size", "get_device", "is_floating_point", "is_complex"}


class OutputGraph:
    """The graph being built for one frame, with everything needed to run it and to reuse it:
    its inputs (sources + the real values, the backend's example inputs), the guards, the side
    effects, and an undo log so a graph break can roll back to before the breaking instruction."""

    def __init__(self, guards, root_globals: dict, dynamic_dims: dict, dynamic_ints: set,
                 automatic_dynamic: bool | None):
        self.graph = Graph()
        self.guards = guards
        self.root_globals = root_globals
        self.side_effects = SideEffects(root_globals)
        self.input_sources: list[Source] = []
        self.input_values: list = []          # the real tensors, the backend's example inputs
        self._input_by_id: dict[int, TensorVariable] = {}
        self._source_cache: dict[str, VariableTracker] = {}
        self._undo: list = []
        self.dynamic_dims = dynamic_dims       # source expr -> dims to keep symbolic
        self.dynamic_ints = dynamic_ints       # source exprs of ints that became graph inputs
        self.int_reads: dict = {}              # source expr -> int read (automatic dynamic)
        self.automatic_dynamic = automatic_dynamic
        self.has_dynamic = False
        self._size_nodes: dict = {}
        self.constants: dict[str, object] = {}
        self.op_count = 0
        self.last_grad_mode = None   # what the graph's last grad-mode switch set

    # --- checkpoints (a graph break rolls the frame back to before the breaking instruction) ---
    def on_undo(self, fn):
        self._undo.append(fn)

    def checkpoint(self):
        return len(self._undo), len(self.graph.nodes), self.op_count

    def restore(self, state):
        n_undo, n_nodes, self.op_count = state
        while len(self._undo) > n_undo:
            self._undo.pop()()
        for node in reversed(list(self.graph.nodes)[n_nodes:]):
            self.graph.erase_node(node)

    # --- reading values from outside the frame --------------------------------------------------
    def load_global(self, tx, name):
        f_globals = tx.f_globals
        if name in self.side_effects.globals_written and f_globals is self.root_globals:
            return self.side_effects.globals_written[name]
        if name in f_globals:
            if f_globals is self.root_globals:
                return self.wrap(tx, f_globals[name], Source(f"G[{name!r}]"))
            source = self.global_of(f_globals, name)
            if str(f_globals.get("__name__", "")).startswith("strata."):
                with self.guards.suppressed():
                    return self.wrap(tx, f_globals[name], source)
            return self.wrap(tx, f_globals[name], source)
        if hasattr(builtins, name):
            return self.wrap(tx, getattr(builtins, name), None)
        raise Unsupported(f"name {name!r} is not defined")

    def global_of(self, f_globals, name):
        """A source for a global of another module (an inlined function's module)."""
        key = next((k for k, v in self.constants.items() if v is f_globals),
                   f"___module_{len(self.constants)}")
        self.constants[key] = f_globals
        return Source(f"{key}[{name!r}]")

    def wrap(self, tx, value, source):
        if isinstance(value, VariableTracker):
            return value
        if source is not None:
            cached = self._source_cache.get(source.expr)
            if cached is not None:
                return cached
        result = self._wrap(tx, value, source)
        if source is not None:
            self._source_cache[source.expr] = result
        return result

    def _wrap(self, tx, value, source):
        guards = self.guards
        if isinstance(value, Tensor):
            return self.add_input(value, source)
        if type(value) is int and source is not None:
            self.int_reads[source.expr] = value
            if source.expr in self.dynamic_ints and value not in (0, 1) and \
                    self.automatic_dynamic is not False:
                return self.add_int_input(value, source)
        if isinstance(value, _CONSTANT_TYPES):
            if source is not None:
                guards.add_constant(source, value)
            return ConstantVariable(value, source)
        if isinstance(value, Module):
            if source is None:
                raise Unsupported("a module made inside the compiled frame")
            guards.add_id(source, value)
            return NNModuleVariable(value, source)
        if isinstance(value, (list, tuple)) and type(value) in (list, tuple):
            if source is not None:
                guards.add_len(source, value)
            items = [self.wrap(tx, v, source.item(i) if source is not None else None)
                     for i, v in enumerate(value)]
            return (ListVariable if type(value) is list else TupleVariable)(items, source)
        if type(value) in (dict, collections.OrderedDict):
            if source is not None:
                guards.add_keys(source, list(value))
            return DictVariable({k: self.wrap(tx, v, source.item(k) if source else None)
                                 for k, v in value.items()}, source)
        if isinstance(value, in_graph.GradModeExit):   # a resume function inside `with`
            guards.add_id(source, value)
            return ContextExitVariable(value.restore)
        if in_graph.is_in_graph(value):
            if source is not None and not in_graph.is_module_source(source):
                if isinstance(value, types.MethodType):   # made anew at each attribute read
                    guards.add_id(source.attr("__func__"), value.__func__)
                else:
                    guards.add_id(source, value)
            return TorchFunctionVariable(value, source)
        if is_supported_builtin(value):
            if source is not None and not source.expr.startswith("G["):
                guards.add_id(source, value)
            return BuiltinVariable(value, source)
        if value is in_graph.graph_break:
            return TorchFunctionVariable(value, source)   # calling it breaks (is_breaking_...)
        if isinstance(value, types.FunctionType):
            if source is not None:
                _guard_function(guards, source, value)
            if in_graph.is_disabled(value):
                raise Unsupported(f"call to {value.__qualname__} (strata._dynamo.disable)")
            return UserFunctionVariable(value, source)
        if isinstance(value, types.MethodType):
            obj = self.wrap(tx, value.__self__, source.attr("__self__") if source else None)
            from .callables import UserMethodVariable
            if isinstance(value.__func__, types.FunctionType):
                return UserMethodVariable(value.__func__, obj, source)
        if source is not None:
            guards.add_id(source, value)
        return PythonObjectVariable(value, source)

    def add_input(self, value, source) -> TensorVariable:
        if source is None:
            key = f"___const_tensor_{len(self.constants)}"
            self.constants[key] = value
            source = Source(key)
        known = self._input_by_id.get(id(value))
        if known is not None:
            self.guards.add_expr(f"{source.expr} is {known.source.expr}",
                                 f"{source.expr} is {known.source.expr}")
            return known
        dynamic = self._dynamic_dims_of(value, source)
        self.guards.add_tensor(source, value, dynamic)
        node = self.graph.placeholder(identifier(source))
        example = to_meta(value)
        node.meta["val"] = example
        node.meta["source"] = source.expr
        tv = TensorVariable(node, example, source)
        tv.cls, tv.device, tv.dynamic = type(value), value.device, dynamic
        self._add_input(source, value)
        self._input_by_id[id(value)] = tv
        self.on_undo(lambda: self._input_by_id.pop(id(value), None))
        return tv

    def add_int_input(self, value, source) -> SymIntVariable:
        """An int that changed between calls: a graph input, not a constant (Dynamo's
        automatic dynamic for ints; 0 and 1 stay specialised)."""
        self.guards.add_expr(f"type({source.expr}) is int and {source.expr} not in (0, 1)",
                             f"{source.expr} is an int other than 0 and 1")
        node = self.graph.placeholder(identifier(source))
        node.meta["val"] = value
        node.meta["source"] = source.expr
        self._add_input(source, value)
        self.has_dynamic = True
        return SymIntVariable(node, value, source.expr)

    def _add_input(self, source, value):
        """A graph input; undone with its placeholder when capture backs out of an inlined
        call (a break inside it), so the inputs always match the graph's placeholders."""
        self.input_sources.append(source)
        self.input_values.append(value)

        def undo():
            self.input_sources.pop()
            self.input_values.pop()
        self.on_undo(undo)

    def _dynamic_dims_of(self, value, source) -> frozenset:
        if self.automatic_dynamic is False:
            return frozenset()
        marked = set(value.__dict__.get("_dynamo_dynamic_indices", ()))
        static = set(value.__dict__.get("_dynamo_static_indices", ()))
        dims = set(self.dynamic_dims.get(source.expr, ())) | marked
        if self.automatic_dynamic is True:
            dims |= set(range(value.dim()))
        dims = {d for d in dims - static if value.shape[d] >= 2 or d in marked}
        if dims:
            self.has_dynamic = True
        return frozenset(dims)

    # --- recording ops --------------------------------------------------------------------------
    def call(self, tx, kind, target, args, kwargs):
        """Record ``target(*args, **kwargs)`` (or a method call) after running it on meta."""
        name = target if kind == "call_method" else getattr(target, "__name__", str(target))
        if kind == "call_method":
            if name in _BREAKING_METHODS:
                raise Unsupported(f"Tensor.{name}() (reads the tensor's data or leaves the graph)")
            if name in _SIZE_METHODS:
                return self.size_method(tx, args[0], name, args[1:], kwargs)
        elif in_graph.is_breaking_function(target):
            raise Unsupported(f"call to {name}")
        node_args, ex_args = _unwrap(list(args))
        node_kwargs, ex_kwargs = _unwrap(dict(kwargs))
        try:
            with device_mod.device("meta"):
                if kind == "call_method":
                    out = getattr(ex_args[0], target)(*ex_args[1:], **ex_kwargs)
                else:
                    out = target(*ex_args, **ex_kwargs)
        except Unsupported:
            raise
        except Exception as e:
            error = Unsupported(f"{name} failed on meta tensors while tracing: "
                                f"{type(e).__name__}: {e}")
            # a user error (bad shapes) says nothing about the next call's inputs; a missing
            # meta kernel does
            error.transient = not isinstance(e, NotImplementedError)
            raise error from None
        return self.wrap_result(tx, kind, target, tuple(node_args), node_kwargs, out, args)

    def wrap_result(self, tx, kind, target, node_args, node_kwargs, out, args):
        symint_args = [a for a in args if isinstance(a, SymIntVariable)]
        if isinstance(out, bool) and symint_args:
            return self.specialize_comparison(tx, target, args, out)
        if isinstance(out, (int, float)) and symint_args:
            node = self.graph.create_node(kind, target, node_args, node_kwargs)
            exprs = [_expr(a) for a in args]
            expr = None if None in exprs or target not in _SYMBOLS else \
                f"({exprs[0]} {_SYMBOLS[target]} {exprs[1]})" if len(exprs) == 2 else None
            return SymIntVariable(node, out, expr)
        if isinstance(out, Tensor):
            node = self._record(tx, kind, target, node_args, node_kwargs, out, args)
            existing = next((a for a in args if isinstance(a, TensorVariable)
                             and a.example is out), None)
            if existing is not None:
                return existing
            return self._tensor_variable(node, out, args)
        if isinstance(out, (tuple, list)) and any(isinstance(o, Tensor) for o in out):
            if self.has_dynamic and not hasattr(type(out), "_fields"):
                # split/chunk/unbind: how many tensors may depend on a dynamic size
                raise Unsupported(f"{getattr(target, '__name__', target)} returns a sequence "
                                  "of tensors whose length may depend on a dynamic size")
            node = self._record(tx, kind, target, node_args, node_kwargs, out, args)
            items = []
            for i, o in enumerate(out):
                if isinstance(o, Tensor):
                    item = self.graph.call_function(operator.getitem, (node, i))
                    item.meta["val"] = o
                    items.append(self._tensor_variable(item, o, args))
                else:
                    items.append(self.wrap(tx, o, None))
            if hasattr(type(out), "_fields"):
                return NamedTupleVariable(items, type(out))
            return TupleVariable(items) if isinstance(out, tuple) else ListVariable(items)
        if out is None and (kind == "call_method" or target is operator.setitem):
            self._record(tx, kind, target, node_args, node_kwargs, out, args)
            return ConstantVariable(None)
        if out is None:
            raise Unsupported(f"call to {getattr(target, '__name__', target)} returning None "
                              "(a side effect outside the graph)")
        if self.has_dynamic and type(out) is int:
            raise Unsupported(f"{getattr(target, '__name__', target)} returns an int that may "
                              "depend on a dynamic size")
        return self.wrap(tx, out, None)

    def _record(self, tx, kind, target, node_args, node_kwargs, out, args):
        node = self.graph.create_node(kind, target, node_args, node_kwargs)
        node.meta["val"] = out
        node.meta["stack_trace"] = tx.stack_trace()
        self.op_count += 1
        return node

    def _tensor_variable(self, node, example, args):
        if example.device.type != "meta":
            example = to_meta(example)
            node.meta["val"] = example
        tv = TensorVariable(node, example)
        first = next((a for a in args if isinstance(a, TensorVariable)), None)
        tv.cls = Tensor
        tv.device = first.device if first is not None else device_mod.default_device()
        tv.dynamic = None if self.has_dynamic else frozenset()
        return tv

    def specialize_comparison(self, tx, op, args, out):
        exprs = [_expr(a) for a in args]
        if None in exprs or op not in _SYMBOLS:
            raise Unsupported("a comparison of dynamic sizes of intermediate tensors")
        text = f"({exprs[0]} {_SYMBOLS[op]} {exprs[1]}) == {out}"
        self.guards.add_expr(text, text)
        return ConstantVariable(out)

    def tensor_keyed_item(self, tx, obj, key):
        """``d[t]`` of a dict keyed by tensors read from outside the frame (``optimizer.state``)
        where ``t`` is an input: the real dict is read with the real tensor (a ``defaultdict``
        adds its default, as eager's read would), and the value's source names the key's."""
        if obj.source is None or key.node.op != "placeholder" or key.source is None:
            raise Unsupported("subscript of a dict by a tensor computed in the compiled frame")
        real_key = self.input_values[self.input_sources.index(key.source)]
        try:
            value = obj.value[real_key]
        except KeyError:
            raise Unsupported(f"KeyError: a tensor key of {type(obj.value).__name__}") from None
        return self.wrap(tx, value, Source(f"{obj.source.expr}[{key.source.expr}]"))

    # --- tensor attributes and sizes ------------------------------------------------------------
    def tensor_attr(self, tx, tv, name):
        example = tv.example
        if name == "shape":
            return SizeVariable([self.size_of(tx, tv, d) for d in range(example.dim())])
        if name == "device":
            return ConstantVariable(tv.device)
        if name == "is_cpu":
            return ConstantVariable(tv.device.type == "cpu")
        if name == "grad" and tv.node.op == "placeholder" and tv.source is not None:
            # an input's .grad is an input too (or a guarded None), read through its source
            return self.wrap(tx, self.input_values[self.input_sources.index(tv.source)].grad,
                             tv.source.attr("grad"))
        if name in ("grad", "grad_fn", "_base"):
            raise Unsupported(f"Tensor.{name} of a tensor computed in the compiled frame")
        if name in _DATA_ATTRS:
            return self.call(tx, "call_function", getattr, [tv, ConstantVariable(name)], {})
        try:
            value = getattr(example, name)
        except AttributeError as e:
            raise Unsupported(str(e)) from None
        if callable(value):
            return TensorMethodVariable(tv, name)
        if isinstance(value, Tensor):
            return self.call(tx, "call_function", getattr, [tv, ConstantVariable(name)], {})
        if name == "ndim":
            return ConstantVariable(value)
        return self.wrap(tx, value, None)

    def size_of(self, tx, tv, dim):
        size = tv.example.shape[dim]
        dynamic = tv.dynamic
        if dynamic is not None and dim % max(tv.example.dim(), 1) not in dynamic:
            return ConstantVariable(size)
        key = (id(tv.node), dim)
        if key not in self._size_nodes:
            node = self.graph.call_method("size", (tv.node, dim))
            expr = f"{tv.source.expr}.size({dim})" if tv.source is not None else None
            self._size_nodes[key] = SymIntVariable(node, size, expr)
            self.on_undo(lambda: self._size_nodes.pop(key, None))
        return self._size_nodes[key]

    def size_method(self, tx, tv, name, args, kwargs):
        if name == "size":
            if args:
                return self.size_of(tx, tv, args[0].as_python_constant())
            return SizeVariable([self.size_of(tx, tv, d) for d in range(tv.example.dim())])
        if name in ("numel", "nelement"):
            total = ConstantVariable(1)
            for d in range(tv.example.dim()):
                total = tx.binary_op(operator.mul, total, self.size_of(tx, tv, d))
            return total
        if name == "stride" and tv.dynamic != frozenset():
            raise Unsupported("strides of a tensor with dynamic sizes")
        values = [a.as_python_constant() for a in args]
        result = getattr(tv.example, name)(*values)
        if name == "get_device":
            result = -1 if tv.device.type == "cpu" else (tv.device.index or 0)
        return self.wrap(tx, tuple(result) if isinstance(result, tuple) else result, None)

    # --- global state in the graph --------------------------------------------------------------
    def grad_enabled(self) -> bool:
        return dispatch_state().grad_enabled

    def autocast_edge(self, tx, manager, entering: bool):
        """Enter or leave an autocast block: for real now (the meta ops see it), undoably, and
        as a node for the graph's run."""
        if entering:
            manager.__enter__()
            self.on_undo(lambda: manager.__exit__(None, None, None))
        else:
            manager.__exit__(None, None, None)
            self.on_undo(manager.__enter__)
        target = in_graph.enter_autocast if entering else in_graph.exit_autocast
        node = self.graph.call_function(target, (manager,))
        node.meta["stack_trace"] = tx.stack_trace()

    def set_grad_enabled(self, tx, enabled: bool):
        previous = dispatch_state().grad_enabled
        dispatch_state().grad_enabled = enabled
        self.on_undo(lambda: setattr(dispatch_state(), "grad_enabled", previous))
        node = self.graph.call_function(in_graph.set_grad_enabled, (enabled,))
        node.meta["stack_trace"] = tx.stack_trace()
        last = self.last_grad_mode
        self.on_undo(lambda: setattr(self, "last_grad_mode", last))
        self.last_grad_mode = enabled


_SYMBOLS = {operator.add: "+", operator.sub: "-", operator.mul: "*", operator.floordiv: "//",
            operator.truediv: "/", operator.mod: "%", operator.lt: "<", operator.le: "<=",
            operator.gt: ">", operator.ge: ">=", operator.eq: "==", operator.ne: "!=",
            operator.pow: "**"}


def _expr(v):
    if isinstance(v, SymIntVariable):
        return v.expr
    if isinstance(v, ConstantVariable) and isinstance(v.value, (int, float)):
        return repr(v.value)
    return None


def _unwrap(value):
    """(FX arguments, meta example arguments) of a nest of variables."""
    if isinstance(value, TensorVariable):
        return value.node, value.example
    if isinstance(value, SymIntVariable):
        return value.node, value.value
    if isinstance(value, (BaseListVariable, list, tuple)):
        items = value.items if isinstance(value, BaseListVariable) else value
        pairs = [_unwrap(v) for v in items]
        kind = value.kind if isinstance(value, BaseListVariable) else type(value)
        return kind(p[0] for p in pairs), kind(p[1] for p in pairs)
    if isinstance(value, DictVariable):
        value = value.items
    if isinstance(value, dict):
        pairs = {k: _unwrap(v) for k, v in value.items()}
        return {k: p[0] for k, p in pairs.items()}, {k: p[1] for k, p in pairs.items()}
    if isinstance(value, NNModuleVariable):
        raise Unsupported("a module passed to a strata function")
    if isinstance(value, GradModeVariable):
        raise Unsupported("a grad-mode object passed to a strata function")
    constant = value.as_python_constant()
    return constant, constant


def to_meta(t):
    """A meta tensor with ``t``'s sizes, strides, dtype and requires_grad."""
    meta = empty_strided(tuple(t.shape), tuple(t.stride()), dtype=t.dtype, device="meta")
    if t.requires_grad:
        meta.requires_grad_(True)
    return meta


def _guard_function(guards, source, fn):
    """A closure is made anew on each run of the frame that defines it (a resume function gets
    a new one each call): guard its code and constant defaults, as Dynamo's CLOSURE_MATCH does;
    the cells are guarded where the traced code reads them. Any other function: its identity."""
    defaults = (fn.__defaults__ or ()) + tuple((fn.__kwdefaults__ or {}).values())
    if fn.__closure__ is None or not all(isinstance(d, _CONSTANT_TYPES) for d in defaults):
        guards.add_id(source, fn)
        return
    guards.add_id(source.attr("__code__"), fn.__code__)
    for attr, values in ((source.attr("__defaults__"), fn.__defaults__),
                         (source.attr("__kwdefaults__"), fn.__kwdefaults__)):
        if values is None:
            guards.add_constant(attr, None)
            continue
        if isinstance(values, dict):
            guards.add_keys(attr, list(values))
        else:
            guards.add_len(attr, values)
        for key, value in (values.items() if isinstance(values, dict) else enumerate(values)):
            guards.add_constant(attr.item(key), value)
