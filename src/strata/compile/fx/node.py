"""``Node``: one operation of a ``Graph``, with the six opcodes of ``torch.fx.Node``.

A node's ``args``/``kwargs`` may hold other nodes anywhere inside tuples, lists, dicts and slices;
each node keeps the set of nodes that use it (``users``) so passes can rewrite the graph safely.
"""

import builtins
import operator
import sys

_OPCODES = ("placeholder", "call_method", "call_module", "call_function", "get_attr", "output",
            "root")


class Node:
    """One operation in a ``Graph``. ``op`` is one of:

    - ``placeholder``: a function input. ``target`` is the argument's name; ``args`` holds its
      default value, if any (``args[0]``); ``kwargs`` is empty.
    - ``get_attr``: fetch a parameter, buffer or constant from the module hierarchy. ``target``
      is its fully qualified name (``"layer1.weight"``); ``args``/``kwargs`` are empty.
    - ``call_function``: call a free function (``operator.add``, ``strata.relu``,
      ``strata.ops.aten.mm.default``). ``target`` is the callable; ``args``/``kwargs`` are its
      arguments, following Python's calling convention.
    - ``call_module``: call a submodule's ``forward``. ``target`` is the submodule's fully
      qualified name; ``args``/``kwargs`` are the arguments, not counting ``self``.
    - ``call_method``: call a method on a value. ``target`` is the method name (``"view"``);
      ``args[0]`` is ``self``, the rest and ``kwargs`` are the method's arguments.
    - ``output``: the value the graph returns. ``args[0]`` is the (possibly nested) return value.

    ``meta`` holds what passes learn: ``meta["val"]`` (a meta tensor with the output's shape,
    dtype and strides), ``meta["stack_trace"]`` (the user's source line that made the node).
    """

    def __init__(self, graph, name, op, target, args, kwargs, return_type=None):
        if op not in _OPCODES:
            raise ValueError(f"Node op must be one of {_OPCODES[:-1]}, got {op!r}")
        if op == "call_function" and not callable(target):
            raise ValueError(f"Node [graph = {graph}, name = '{name}'] target {target} has "
                             f"type {type(target)} but a Callable is expected")
        if op in ("placeholder", "call_method", "call_module", "get_attr") \
                and not isinstance(target, str):
            raise ValueError(f"Node [graph = {graph}, name = '{name}'] target {target} has "
                             f"type {type(target)} but a str is expected")
        self.graph = graph
        self.name = name
        self.op = op
        self.target = target
        self._input_nodes = {}    # insertion-ordered set of nodes read by args/kwargs
        self.users = {}           # insertion-ordered set of nodes that read this one
        self.type = return_type
        self._prev = self
        self._next = self
        self._erased = False
        self.meta = {}
        self._args = ()
        self._kwargs = {}
        self._update_args_kwargs(args, kwargs)

    # --- linked list ------------------------------------------------------------------------
    @property
    def next(self):
        return self._next

    @property
    def prev(self):
        return self._prev

    def prepend(self, x: "Node"):
        """Insert ``x`` just before this node (moving it if it is already in the graph)."""
        assert self.graph is x.graph, "Attempting to move a Node into a different Graph"
        if self is x:
            return
        x._remove_from_list()
        p = self._prev
        p._next, x._prev = x, p
        x._next, self._prev = self, x

    def append(self, x: "Node"):
        """Insert ``x`` just after this node."""
        self._next.prepend(x)

    def _remove_from_list(self):
        p, n = self._prev, self._next
        p._next, n._prev = n, p

    # --- arguments --------------------------------------------------------------------------
    @property
    def args(self) -> tuple:
        return self._args

    @args.setter
    def args(self, a):
        self._update_args_kwargs(map_arg(a, _identity), self._kwargs)

    @property
    def kwargs(self) -> dict:
        return self._kwargs

    @kwargs.setter
    def kwargs(self, k):
        self._update_args_kwargs(self._args, map_arg(k, _identity))

    @property
    def all_input_nodes(self) -> list:
        """Every node this one reads, in the order they first appear in args then kwargs."""
        return list(self._input_nodes)

    def update_arg(self, idx: int, arg):
        args = list(self.args)
        args[idx] = arg
        self.args = tuple(args)

    def update_kwarg(self, key: str, arg):
        self.kwargs = {**self.kwargs, key: arg}

    def _update_args_kwargs(self, new_args, new_kwargs):
        for old in self._input_nodes:
            old.users.pop(self, None)
        self._args = tuple(new_args) if not isinstance(new_args, tuple) else new_args
        self._kwargs = dict(new_kwargs)
        self._input_nodes = {}
        map_arg(self._args, self._input_nodes.setdefault)
        map_arg(self._kwargs, self._input_nodes.setdefault)
        for new in self._input_nodes:
            new.users.setdefault(self)

    # --- rewriting --------------------------------------------------------------------------
    def replace_all_uses_with(self, replace_with: "Node", delete_user_cb=lambda user: True, *,
                              propagate_meta=False) -> list:
        """Make every user of this node read ``replace_with`` instead; returns those users."""
        if propagate_meta:
            assert not replace_with.meta, \
                "Called node.replace_all_uses_with(replace_with, propagate_meta=True), but " \
                "replace_with already has .meta keys"
            replace_with.meta.update(self.meta)
        to_process = [u for u in self.users if delete_user_cb(u)]
        for user in to_process:
            user.replace_input_with(self, replace_with)
        return to_process

    def replace_input_with(self, old_input: "Node", new_input: "Node"):
        """Swap every occurrence of ``old_input`` in this node's arguments for ``new_input``."""
        def swap(n):
            return new_input if n is old_input else n
        self._update_args_kwargs(map_arg(self._args, swap), map_arg(self._kwargs, swap))

    def is_impure(self) -> bool:
        """Nodes dead-code elimination must keep: inputs, outputs, in-place/mutating calls."""
        if self.op in ("placeholder", "output"):
            return True
        if self.op == "call_function":
            if self.target in _SIDE_EFFECTFUL:
                return True
            return bool(getattr(self.target, "is_inplace", False)
                        or getattr(self.target, "written_positions", ()))
        if self.op == "call_method":
            return self.target.endswith("_") and not self.target.endswith("__")
        if self.op == "call_module":
            return False
        return False

    @property
    def stack_trace(self):
        """The user's source line(s) that created this node (``meta["stack_trace"]``)."""
        return self.meta.get("stack_trace")

    @stack_trace.setter
    def stack_trace(self, trace):
        self.meta["stack_trace"] = trace

    # --- printing ---------------------------------------------------------------------------
    def format_node(self) -> str:
        """One line as ``Graph.__str__`` prints it: ``%add : [num_users=1] = call_function[..]``."""
        if self.op == "placeholder":
            default = f" [default={self.args[0]!r}]" if self.args else ""
            return f"%{self.name} : [num_users={len(self.users)}] = placeholder[" \
                   f"target={self.target}]{default}"
        if self.op == "get_attr":
            return f"%{self.name} : [num_users={len(self.users)}] = " \
                   f"get_attr[target={self.target}]"
        if self.op == "output":
            return f"return {_format_arg(self.args[0])}"
        return (f"%{self.name} : [num_users={len(self.users)}] = {self.op}["
                f"target={_pretty_target(self.target)}](args = {_format_arg(self.args)}, "
                f"kwargs = {_format_arg(self.kwargs)})")

    def __repr__(self):
        return self.name


_SIDE_EFFECTFUL = set()   # call_function targets that dead-code elimination keeps


def _identity(n):
    return n


def _pretty_target(target) -> str:
    if isinstance(target, str):
        return target
    qualname = getattr(target, "qualname", None)    # an OpOverload: "aten::add.Tensor"
    if qualname is not None and hasattr(target, "schema"):
        return f"{target.namespace}.{target.name}"
    public = public_name(target)
    if public is not None:
        return public
    module = getattr(target, "__module__", None)
    name = getattr(target, "__qualname__", getattr(target, "__name__", repr(target)))
    if module in (None, "builtins", "_operator"):
        return name
    return f"{module}.{name}"


_PUBLIC_NAMESPACES = ("strata", "strata.nn.functional", "strata.linalg", "strata.special")


def public_name(target) -> str | None:
    """``"strata.relu"`` for a function reachable from strata's public namespaces, else None."""
    name = getattr(target, "__name__", None)
    if name is None or not getattr(target, "__module__", "").startswith("strata"):
        return None
    for path in _PUBLIC_NAMESPACES:
        ns = sys.modules.get(path)
        if ns is not None and ns.__dict__.get(name) is target:
            return f"{path}.{name}"
    return None


def _format_arg(a) -> str:
    if isinstance(a, Node):
        return f"%{a.name}"
    if isinstance(a, tuple):
        inner = ", ".join(_format_arg(x) for x in a)
        return f"({inner},)" if len(a) == 1 else f"({inner})"
    if isinstance(a, list):
        return "[" + ", ".join(_format_arg(x) for x in a) + "]"
    if isinstance(a, dict):
        return "{" + ", ".join(f"{k}: {_format_arg(v)}" for k, v in a.items()) + "}"
    return repr(a)


def map_aggregate(a, fn):
    """Apply ``fn`` to every leaf of a nested tuple/list/dict/slice, rebuilding the containers."""
    t = type(a)
    if t in _LEAF_TYPES:
        return fn(a)
    if t is tuple or (isinstance(a, tuple) and not hasattr(a, "_fields")):
        return tuple([map_aggregate(x, fn) for x in a])
    if isinstance(a, tuple):   # a namedtuple keeps its type
        return t(*[map_aggregate(x, fn) for x in a])
    if isinstance(a, list):
        return [map_aggregate(x, fn) for x in a]
    if isinstance(a, dict):
        return {k: map_aggregate(v, fn) for k, v in a.items()}
    if isinstance(a, slice):
        return slice(map_aggregate(a.start, fn), map_aggregate(a.stop, fn),
                     map_aggregate(a.step, fn))
    return fn(a)


_LEAF_TYPES = {int, float, bool, str, type(None), Node}


def map_arg(a, fn):
    """Apply ``fn`` to every ``Node`` inside ``a`` (other leaves are kept as they are)."""
    return map_aggregate(a, lambda x: fn(x) if isinstance(x, Node) else x)


# Python operators the code generator prints as expressions: ``operator.add`` -> ``a + b``.
MAGIC_METHODS = {
    "add": "{} + {}", "sub": "{} - {}", "mul": "{} * {}", "floordiv": "{} // {}",
    "truediv": "{} / {}", "mod": "{} % {}", "pow": "{} ** {}",
    "lshift": "{} << {}", "rshift": "{} >> {}", "and_": "{} & {}", "or_": "{} | {}",
    "xor": "{} ^ {}", "getitem": "{}[{}]", "matmul": "{} @ {}", "eq": "{} == {}",
    "ne": "{} != {}", "lt": "{} < {}", "gt": "{} > {}", "le": "{} <= {}", "ge": "{} >= {}",
}
UNARY_METHODS = {"neg": "-{}", "pos": "+{}", "invert": "~{}"}
MAGIC_TARGETS = {getattr(operator, name): fmt for name, fmt in MAGIC_METHODS.items()}
MAGIC_TARGETS.update({getattr(operator, name): fmt for name, fmt in UNARY_METHODS.items()})
BUILTIN_TARGETS = {getattr(builtins, n) for n in ("getattr", "len", "isinstance", "int",
                                                  "float", "bool", "tuple", "list", "max",
                                                  "min", "abs")}
