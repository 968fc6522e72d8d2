"""Proxy tracing (``symbolic_trace``): run ``forward`` on ``Proxy`` objects that record a Graph.

A Proxy stands for a value of the graph being built: Python operators, method calls and calls of
strata functions on it add nodes instead of computing. strata has no ``__torch_function__``, so
while tracing the public functions of ``strata``, ``strata.nn.functional``, ``strata.linalg`` and
``strata.special`` are replaced by wrappers that record a call when a Proxy is among their
arguments (and run normally otherwise). Standard ``nn`` modules are leaves (``call_module``);
user modules are traced through. Parameters and buffers become ``get_attr`` nodes.
"""

import dis
import inspect
import linecache
import operator
import sys
import types

from ..._tensor import Tensor
from ...nn import Module, Sequential
from .graph import Graph
from .graph_module import GraphModule
from .node import MAGIC_METHODS, UNARY_METHODS, Node, map_aggregate

_FX_DIR = __file__.rsplit("/", 1)[0]
_WRAPPED_NAMES = []   # (globals dict, name) registered by ``wrap``


class TraceError(ValueError):
    pass


class Proxy:
    """A value being traced: operations on it record nodes in ``tracer.graph``."""

    def __init__(self, node: Node, tracer=None):
        self.node = node
        self.tracer = tracer if tracer is not None else GraphAppendingTracer(node.graph)

    def __repr__(self):
        return f"Proxy({self.node.name})"

    def __getattr__(self, k):
        if k.startswith("__") and k.endswith("__"):
            raise AttributeError(k)
        return Attribute(self, k)

    def __call__(self, *args, **kwargs):
        return self.tracer.create_proxy("call_method", "__call__", (self,) + args, kwargs)

    def __iter__(self):
        # ``a, b = proxy``: read the caller's UNPACK_SEQUENCE to know how many items to make.
        frame = inspect.currentframe().f_back
        for inst in dis.get_instructions(frame.f_code):
            if inst.offset >= frame.f_lasti:
                if inst.opname == "UNPACK_SEQUENCE":
                    return (self[i] for i in range(inst.argval))
                break
        raise TraceError("Proxy object cannot be iterated. This can be attempted when the "
                         "Proxy is used in a loop or as a *args or **kwargs function argument.")

    def __bool__(self):
        raise TraceError("symbolically traced variables cannot be used as inputs to control "
                         "flow")

    def __len__(self):
        raise RuntimeError("'len' is not supported in symbolic tracing by default. If you want "
                           "this call to be recorded, please call strata.fx.wrap('len') at "
                           "module scope")

    def keys(self):
        return self.tracer.create_proxy("call_method", "keys", (self,), {})


class Attribute(Proxy):
    """``proxy.name``: a method call when called, else a ``getattr`` node (made on first use)."""

    def __init__(self, root: Proxy, attr: str):
        self.root = root
        self.attr = attr
        self.tracer = root.tracer
        self._node = None

    @property
    def node(self):
        if self._node is None:
            self._node = self.tracer.create_proxy(
                "call_function", getattr, (self.root, self.attr), {}).node
        return self._node

    def __call__(self, *args, **kwargs):
        return self.tracer.create_proxy("call_method", self.attr, (self.root,) + args, kwargs)


def _install_magic_methods():
    for name, fmt in MAGIC_METHODS.items():
        fn = getattr(operator, name)

        def forward_op(self, other, fn=fn):
            return self.tracer.create_proxy("call_function", fn, (self, other), {})

        def reflected_op(self, other, fn=fn):
            return self.tracer.create_proxy("call_function", fn, (other, self), {})

        dunder = name.rstrip("_")
        setattr(Proxy, f"__{dunder}__", forward_op)
        if fmt.count("{}") == 2 and name not in ("getitem", "eq", "ne", "lt", "gt", "le", "ge"):
            setattr(Proxy, f"__r{dunder}__", reflected_op)
    for name in UNARY_METHODS:
        fn = getattr(operator, name)
        setattr(Proxy, f"__{name}__",
                lambda self, fn=fn: self.tracer.create_proxy("call_function", fn, (self,), {}))


_install_magic_methods()


def _user_stack_trace() -> str | None:
    """The innermost frame outside strata's fx package and nn.Module's call path."""
    frame = sys._getframe(2)
    while frame is not None:
        filename = frame.f_code.co_filename
        if not filename.startswith(_FX_DIR) and not filename.endswith("modules/module.py"):
            line = linecache.getline(filename, frame.f_lineno).strip()
            return f'  File "{filename}", line {frame.f_lineno}, in ' \
                   f'{frame.f_code.co_name}\n    {line}'
        frame = frame.f_back
    return None


class Tracer:
    """Turns a module or function into a Graph by running it on Proxies (see module docs)."""

    def __init__(self):
        self.graph = None
        self.root = None
        self.record_stack_traces = True
        self._constants = 0

    # --- what a traced value becomes ----------------------------------------------------------
    def create_node(self, kind, target, args, kwargs, name=None, type_expr=None) -> Node:
        node = self.graph.create_node(kind, target, args, kwargs, name, type_expr)
        if self.record_stack_traces:
            trace = _user_stack_trace()
            if trace:
                node.meta["stack_trace"] = trace
        return node

    def create_proxy(self, kind, target, args, kwargs, name=None, type_expr=None) -> Proxy:
        node = self.create_node(kind, target, self.create_arg(args), self.create_arg(kwargs),
                                name, type_expr)
        return Proxy(node, self)

    def create_arg(self, a):
        """Map a Python value to what a node argument holds (Proxies become their nodes)."""
        if isinstance(a, Proxy):
            return a.node
        if isinstance(a, Tensor):
            path = self._path_of_tensor(a)
            if path is None:
                path = f"_tensor_constant{self._constants}"
                self._constants += 1
                setattr(self.root, path, a)
            return self.create_node("get_attr", path, (), {})
        if isinstance(a, Module):
            raise RuntimeError("Unsupported node type: a Module passed as an argument")
        return map_aggregate(a, lambda x: self.create_arg(x) if isinstance(x, (Proxy, Tensor))
                             else x)

    def _path_of_tensor(self, t):
        for name, p in self.root.named_parameters():
            if p is t:
                return name
        for name, b in self.root.named_buffers():
            if b is t:
                return name
        return None

    def is_leaf_module(self, m: Module, module_qualified_name: str) -> bool:
        """strata's own nn modules are leaves, except containers such as Sequential."""
        return m.__module__.startswith("strata.nn") and not isinstance(m, Sequential)

    def path_of_module(self, mod: Module) -> str:
        for name, sub in self.root.named_modules():
            if sub is mod:
                return name
        raise NameError("module is not installed as a submodule")

    def call_module(self, m: Module, forward, args, kwargs):
        qualname = self.path_of_module(m)
        if not self.is_leaf_module(m, qualname):
            return forward(*args, **kwargs)
        return self.create_proxy("call_module", qualname, args, kwargs)

    def getattr(self, attr: str, attr_val, cache: dict):
        if isinstance(attr_val, Tensor):
            key = id(attr_val)
            if key not in cache:
                path = self._path_of_tensor(attr_val)
                if path is None:
                    return attr_val
                cache[key] = Proxy(self.create_node("get_attr", path, (), {}), self)
            return cache[key]
        return attr_val

    # --- the trace ----------------------------------------------------------------------------
    def trace(self, root, concrete_args: dict | None = None) -> Graph:
        """Trace ``root`` (a Module or a function) into a new Graph."""
        if isinstance(root, Module):
            self.root, fn = root, type(root).forward
            fn_self = [root]
        else:
            self.root, fn, fn_self = Module(), root, []
        self.graph = Graph()
        concrete_args = dict(concrete_args or {})
        params = list(inspect.signature(fn).parameters.values())[len(fn_self):]
        call_args = list(fn_self)
        for p in params:
            if p.name in concrete_args:
                call_args.append(concrete_args[p.name])
                continue
            if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD, p.KEYWORD_ONLY):
                raise NotImplementedError(
                    f"symbolic_trace: parameter '{p.name}' ({p.kind.description}) is not "
                    f"supported; pass concrete_args or use strata.compile")
            default = p.default if p.default is not p.empty else inspect.Signature.empty
            node = self.graph.placeholder(p.name, default_value=default)
            call_args.append(Proxy(node, self))
        with _Patcher(self):
            result = fn(*call_args)
        self.graph.output(self.create_arg(result))
        return self.graph


class GraphAppendingTracer(Tracer):
    """A tracer that only appends to an existing graph (what Proxy arithmetic needs)."""

    def __init__(self, graph: Graph):
        super().__init__()
        self.graph = graph
        self.record_stack_traces = False


def _namespaces():
    import strata
    from ...nn import functional
    from ... import linalg, special
    return (strata, functional, linalg, special)


def _has_proxy(args, kwargs) -> Proxy | None:
    found = []

    def look(x):
        if isinstance(x, Proxy):
            found.append(x)
        return x
    map_aggregate((args, kwargs), look)
    return found[0] if found else None


def _wrap_function(orig):
    def wrapper(*args, **kwargs):
        proxy = _has_proxy(args, kwargs)
        if proxy is not None:
            return proxy.tracer.create_proxy("call_function", orig, args, kwargs)
        return orig(*args, **kwargs)
    wrapper.__wrapped__ = orig
    return wrapper


class _Patcher:
    """Swaps in the tracing hooks (Module call/getattr, strata functions) and restores them."""

    def __init__(self, tracer):
        self.tracer = tracer
        self.saved = []

    def _patch(self, owner, name, new, is_dict=False):
        old = owner[name] if is_dict else owner.__dict__[name]
        self.saved.append((owner, name, old, is_dict))
        if is_dict:
            owner[name] = new
        else:
            setattr(owner, name, new)

    def __enter__(self):
        tracer, cache = self.tracer, {}
        orig_call, orig_getattr = Module.__call__, Module.__getattr__

        def module_call(mod, *args, **kwargs):
            return tracer.call_module(mod, lambda *a, **k: orig_call(mod, *a, **k), args, kwargs)

        def module_getattr(mod, attr):
            return tracer.getattr(attr, orig_getattr(mod, attr), cache)

        self._patch(Module, "__call__", module_call)
        self._patch(Module, "__getattr__", module_getattr)
        for ns in _namespaces():
            for name, value in list(vars(ns).items()):
                if not name.startswith("_") and isinstance(
                        value, (types.FunctionType, types.BuiltinFunctionType)):
                    self._patch(ns, name, _wrap_function(value))
        for globals_, name in _WRAPPED_NAMES:
            if name in globals_:
                self._patch(globals_, name, _wrap_function(globals_[name]), is_dict=True)
        return self

    def __exit__(self, *exc):
        for owner, name, old, is_dict in reversed(self.saved):
            if is_dict:
                owner[name] = old
            else:
                setattr(owner, name, old)


def wrap(fn_or_name):
    """Record calls of a module-level function as one ``call_function`` node instead of tracing
    into it. Call at module scope: ``strata.fx.wrap("my_helper")``."""
    caller_globals = sys._getframe(1).f_globals
    name = fn_or_name if isinstance(fn_or_name, str) else fn_or_name.__name__
    _WRAPPED_NAMES.append((caller_globals, name))
    return fn_or_name


def symbolic_trace(root, concrete_args: dict | None = None) -> GraphModule:
    """Trace a module or function with Proxies into a GraphModule.

        >>> gm = symbolic_trace(lambda x: strata.relu(x) + 1)
        >>> print(gm.code)
    """
    tracer = Tracer()
    graph = tracer.trace(root, concrete_args)
    name = type(root).__name__ if isinstance(root, Module) else root.__name__
    return GraphModule(tracer.root, graph, name)
