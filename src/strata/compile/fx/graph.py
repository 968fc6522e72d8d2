"""``Graph``: a doubly linked list of ``Node``s that prints as, and compiles to, Python source.

    >>> import operator
    >>> g = Graph()
    >>> x = g.placeholder("x")
    >>> g.output(g.call_function(operator.add, (x, 1)))
    return add
    >>> print(g.python_code("self").src.strip())
    def forward(self, x):
        add = x + 1;  x = None
        return add
"""

import builtins
import inspect
import keyword
import math
import re
from dataclasses import dataclass

from ...core.device import device as Device
from ...core.dtype import dtype as DType
from .node import (BUILTIN_TARGETS, MAGIC_TARGETS, Node, _format_arg, _pretty_target, map_arg,
                   public_name)


@dataclass
class PythonCode:
    """What ``Graph.python_code`` returns: the source of ``forward`` and the globals it reads."""

    src: str
    globals: dict


class _Namespace:
    """Unique, valid Python identifiers for nodes and globals (``add``, ``add_1``, ...)."""

    def __init__(self):
        reserved = {"self", "strata", "inf", "nan", "NoneType"}
        self._used = set(dir(builtins)) | set(keyword.kwlist) | reserved
        self._base_count = {}

    def create_name(self, candidate: str) -> str:
        candidate = re.sub(r"[^0-9a-zA-Z_]+", "_", candidate).strip("_") or "_unnamed"
        if candidate[0].isdigit():
            candidate = f"_{candidate}"
        match = re.fullmatch(r"(.*)_(\d+)", candidate)
        base, num = (match.group(1), int(match.group(2))) if match else (candidate, None)
        if num is None and candidate not in self._used:
            self._used.add(candidate)
            return candidate
        num = max(self._base_count.get(base, 0), num or 1)
        while f"{base}_{num}" in self._used:
            num += 1
        self._base_count[base] = num
        name = f"{base}_{num}"
        self._used.add(name)
        return name


class _InsertPoint:
    def __init__(self, graph, new_insert):
        self.graph = graph
        self.orig, graph._insert = graph._insert, new_insert

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        self.graph._insert = self.orig


class Graph:
    """The IR: nodes in execution order, ending with one ``output`` node."""

    def __init__(self, owning_module=None):
        self._root = Node(self, "", "root", "", (), {})
        self._len = 0
        self._namespace = _Namespace()
        self._insert = self._root.prepend
        self.owning_module = owning_module

    # --- reading ----------------------------------------------------------------------------
    @property
    def nodes(self):
        """The nodes in order (a live view: safe to erase the node being visited)."""
        return _NodeList(self)

    def find_nodes(self, *, op: str, target=None) -> list:
        return [n for n in self.nodes
                if n.op == op and (target is None or n.target == target)]

    def output_node(self) -> Node:
        return self._root._prev

    # --- building ---------------------------------------------------------------------------
    def create_node(self, op, target, args=None, kwargs=None, name=None, type_expr=None) -> Node:
        """Make a node at the current insertion point (default: the end of the graph)."""
        candidate = name if name is not None else self._target_to_name(target)
        node = Node(self, self._namespace.create_name(candidate), op, target,
                    args or (), kwargs or {}, type_expr)
        self._insert(node)
        self._len += 1
        return node

    def placeholder(self, name: str, type_expr=None, default_value=inspect.Signature.empty):
        args = () if default_value is inspect.Signature.empty else (default_value,)
        return self.create_node("placeholder", name, args=args, type_expr=type_expr)

    def get_attr(self, qualified_name: str, type_expr=None):
        return self.create_node("get_attr", qualified_name, type_expr=type_expr)

    def call_module(self, module_name: str, args=None, kwargs=None, type_expr=None):
        return self.create_node("call_module", module_name, args, kwargs, type_expr=type_expr)

    def call_method(self, method_name: str, args=None, kwargs=None, type_expr=None):
        return self.create_node("call_method", method_name, args, kwargs, type_expr=type_expr)

    def call_function(self, the_function, args=None, kwargs=None, type_expr=None):
        return self.create_node("call_function", the_function, args, kwargs,
                                type_expr=type_expr)

    def output(self, result, type_expr=None):
        return self.create_node("output", "output", (result,), type_expr=type_expr)

    def inserting_before(self, n: Node | None = None):
        """``with g.inserting_before(n):`` new nodes go just before ``n`` (None: the start)."""
        if n is None:
            return self.inserting_after(self._root)
        return _InsertPoint(self, n.prepend)

    def inserting_after(self, n: Node | None = None):
        """``with g.inserting_after(n):`` new nodes go just after ``n`` (None: the end)."""
        if n is None:
            return self.inserting_before(self._root)
        return _InsertPoint(self, n.append)

    def erase_node(self, to_erase: Node):
        """Remove a node that nothing uses any more."""
        if len(to_erase.users) > 0:
            raise RuntimeError(f"Tried to erase Node {to_erase} but it still had "
                               f"{len(to_erase.users)} users in the graph: {to_erase.users}!")
        if to_erase.graph is not self:
            raise RuntimeError(f"Attempting to remove {to_erase} from wrong graph!")
        if to_erase._erased:
            return
        to_erase._remove_from_list()
        to_erase._erased = True
        self._len -= 1
        to_erase._update_args_kwargs((), {})

    def node_copy(self, node: Node, arg_transform=lambda n: n) -> Node:
        """Copy ``node`` (from any graph) here, mapping its input nodes with ``arg_transform``."""
        args = map_arg(node.args, arg_transform)
        kwargs = map_arg(node.kwargs, arg_transform)
        result = self.create_node(node.op, node.target, args, kwargs, node.name, node.type)
        result.meta = dict(node.meta)
        return result

    def graph_copy(self, g: "Graph", val_map: dict):
        """Append copies of ``g``'s nodes (except its output); returns the output's value."""
        for node in g.nodes:
            if node.op == "output":
                return map_arg(node.args[0], lambda n: val_map[n])
            val_map[node] = self.node_copy(node, lambda n: val_map[n])
        return None

    def __deepcopy__(self, memo):
        new = Graph()
        memo[id(self)] = new
        val_map = {}
        result = new.graph_copy(self, val_map)
        out = new.output(result)
        out.meta = dict(self.output_node().meta)
        return new

    def eliminate_dead_code(self) -> bool:
        """Erase nodes whose values nothing uses (keeping impure ones); True if any changed."""
        changed = False
        for node in reversed(list(self.nodes)):
            if not node.users and not node.is_impure():
                self.erase_node(node)
                changed = True
        return changed

    def _target_to_name(self, target) -> str:
        if isinstance(target, str):   # "block.lin" -> "block_lin", as torch.fx names it
            return target.lstrip("*").replace(".", "_") or "_"
        if hasattr(target, "schema"):             # an OpOverload: aten::add.Tensor -> add
            return target.schema.name
        return getattr(target, "__name__", "node").lstrip("_") or "node"

    # --- checking ---------------------------------------------------------------------------
    def lint(self):
        """Check the invariants every pass must keep; raise RuntimeError naming the first break.

        Every input of a node is defined earlier in this graph; users and inputs agree; names are
        unique; the graph ends in one output; get_attr/call_module targets exist in the owning
        module (when there is one).
        """
        seen, names = set(), set()
        outputs = 0
        for node in self.nodes:
            if node.graph is not self:
                raise RuntimeError(f"Node '{node}' does not belong to this Graph!")
            if node.name in names:
                raise RuntimeError(f"Node redefined name {node.name}!")
            names.add(node.name)
            for arg in node._input_nodes:
                if arg.graph is not self:
                    raise RuntimeError(f"Argument '{arg}' of Node '{node}' does not belong "
                                       f"to this Graph, but was used as an argument!")
                if arg not in seen:
                    raise RuntimeError(f"Argument '{arg}' of Node '{node}' was used before it "
                                       f"has been defined! Please check that Nodes in the "
                                       f"graph are topologically ordered\n{self}")
                if node not in arg.users:
                    raise RuntimeError(f"Node '{node}' reads '{arg}' but is not in its users")
            for user in node.users:
                if node not in user._input_nodes:
                    raise RuntimeError(f"'{user}' is a user of '{node}' but does not read it")
            if node.op == "output":
                outputs += 1
            elif outputs:
                raise RuntimeError(f"Node '{node}' comes after the graph's output node")
            if self.owning_module is not None and node.op in ("get_attr", "call_module"):
                self._check_target_exists(node)
            seen.add(node)
        if outputs != 1:
            raise RuntimeError(f"A Graph must have exactly one output node, found {outputs}")

    def _check_target_exists(self, node):
        obj = self.owning_module
        for atom in node.target.split("."):
            if not hasattr(obj, atom):
                kind = "module" if node.op == "call_module" else "attribute"
                raise RuntimeError(f"Node {node.name} target {node.target} references "
                                   f"nonexistent {kind} {atom}")
            obj = getattr(obj, atom)

    # --- printing and code generation -------------------------------------------------------
    def __str__(self):
        lines = ["graph():"] + [f"    {n.format_node()}" for n in self.nodes]
        return "\n".join(lines)

    def print_tabular(self):
        """Print one row per node: opcode, name, target, args, kwargs (as torch.fx does)."""
        rows = [(n.op, n.name, _target_text(n), _format_arg(n.args)[1:-1].rstrip(","),
                 _format_arg(n.kwargs)) for n in self.nodes]
        header = ("opcode", "name", "target", "args", "kwargs")
        widths = [max(len(str(r[i])) for r in rows + [header]) for i in range(5)]
        fmt = "  ".join(f"{{:<{w}}}" for w in widths)
        print(fmt.format(*header).rstrip())
        print("  ".join("-" * w for w in widths))
        for row in rows:
            print(fmt.format(*map(str, row)).rstrip())

    def python_code(self, root_module: str = "self", *, verbose: bool = False) -> PythonCode:
        """Generate ``def forward(<root_module>, ...)`` running the nodes in order; ``verbose``
        annotates each value with its ``meta["val"]`` (``x: "f32[2, 3]"``), as torch.fx's
        readable output does."""
        return _CodeGen(self, root_module, verbose).generate()


def _target_text(node) -> str:
    return _pretty_target(node.target)


class _NodeList:
    def __init__(self, graph):
        self._graph = graph

    def __len__(self):
        return self._graph._len

    def __iter__(self):
        root = self._graph._root
        cur = root._next
        while cur is not root:
            nxt = cur._next
            if not cur._erased:
                yield cur
            cur = nxt

    def __reversed__(self):
        root = self._graph._root
        cur = root._prev
        while cur is not root:
            prv = cur._prev
            if not cur._erased:
                yield cur
            cur = prv


class _CodeGen:
    """Turns a graph into Python source. Values are freed (``x = None``) after their last use,
    so a generated forward holds no more memory than eager code would."""

    def __init__(self, graph, root_module, verbose=False):
        self.graph = graph
        self.root = root_module
        self.verbose = verbose
        self.globals = {"inf": math.inf, "nan": math.nan, "NoneType": type(None)}
        self.global_names = {}   # id(obj) -> its name in globals
        self.namespace = _Namespace()

    def add_global(self, hint: str, obj) -> str:
        name = self.global_names.get(id(obj))
        if name is None:
            name = self.namespace.create_name(hint)
            self.global_names[id(obj)] = name
            self.globals[name] = obj
        return name

    def arg(self, a) -> str:
        if isinstance(a, Node):
            return a.name
        if isinstance(a, tuple):
            inner = ", ".join(self.arg(x) for x in a)
            if hasattr(a, "_fields"):
                return f"{self.add_global(type(a).__name__, type(a))}({inner})"
            return f"({inner},)" if len(a) == 1 else f"({inner})"
        if isinstance(a, list):
            return "[" + ", ".join(self.arg(x) for x in a) + "]"
        if isinstance(a, dict):
            return "{" + ", ".join(f"{k!r}: {self.arg(v)}" for k, v in a.items()) + "}"
        if isinstance(a, slice):
            return f"slice({self.arg(a.start)}, {self.arg(a.stop)}, {self.arg(a.step)})"
        if isinstance(a, float) and not math.isfinite(a):
            return "nan" if math.isnan(a) else ("inf" if a > 0 else "-inf")
        if a is None or a is Ellipsis or type(a) in (bool, int, float, str, complex):
            return repr(a)
        if hasattr(a, "schema") and hasattr(a, "namespace"):   # an OpOverload as an argument
            return self.target_expr(a)
        if isinstance(a, DType):
            self.globals["strata"] = _strata_module()
            return f"strata.{a.name}"
        if isinstance(a, Device):
            self.globals["strata"] = _strata_module()
            return f"strata.device({str(a)!r})"
        return self.add_global(_hint_for(a), a)

    def call_args(self, args, kwargs) -> str:
        parts = [self.arg(a) for a in args]
        parts += [f"{k} = {self.arg(v)}" for k, v in kwargs.items()]
        return ", ".join(parts)

    def target_expr(self, target) -> str:
        if hasattr(target, "schema") and hasattr(target, "namespace"):   # an OpOverload
            overload = target.schema.overload or "default"
            self.globals["strata"] = _strata_module()   # a reserved name, never a node's
            # getattr for an overload named by a keyword (``random_.from``)
            return _attr_path("strata.ops", f"{target.namespace}.{target.schema.name}.{overload}")
        if target in BUILTIN_TARGETS:
            return target.__name__
        public = public_name(target)
        if public is not None:
            self.globals["strata"] = _strata_module()
            return public
        return self.add_global(_hint_for(target), target)

    def generate(self) -> PythonCode:
        nodes = list(self.graph.nodes)
        for n in nodes:
            self.namespace._used.add(n.name)
        last_use = {}
        for n in nodes:
            for inp in n._input_nodes:
                last_use[inp] = n
        frees = {}
        for value, user in last_use.items():
            frees.setdefault(user, []).append(value.name)
        params, body = [self.root], []
        for n in nodes:
            line = self.emit(n, params)
            if self.verbose and n.op != "output":
                annotation = _annotation(n.meta.get("val"))
                if n.op == "placeholder" and annotation:
                    name, _, default = params[-1].partition(" = ")
                    params[-1] = f"{name}: {annotation}" + (f" = {default}" if default else "")
                elif line is not None and annotation:
                    line = line.replace(f"{n.name} = ", f"{n.name}: {annotation} = ", 1)
            if line is None:
                continue
            dead = [name for name in frees.get(n, ()) if n.op != "output"]
            if not n.users and n.op not in ("output",):
                dead.append(n.name)
            if dead:
                line += ";  " + " = ".join(dead) + " = None"
            body.append(line)
        src = f"def forward({', '.join(params)}):\n" + "".join(f"    {b}\n" for b in body)
        if not body:
            src += "    pass\n"
        return PythonCode(src, self.globals)

    def emit(self, n, params):
        if n.op == "placeholder":
            name = n.target if n.target.startswith("*") else n.name
            params.append(f"{name} = {self.arg(n.args[0])}" if n.args else name)
            if n.target.startswith("*") and n.target.lstrip("*") != n.name:
                return f"{n.name} = {n.target.lstrip('*')}"
            return None
        if n.op == "get_attr":
            return f"{n.name} = {_attr_path(self.root, n.target)}"
        if n.op == "call_module":
            return f"{n.name} = {_attr_path(self.root, n.target)}(" \
                   f"{self.call_args(n.args, n.kwargs)})"
        if n.op == "call_method":
            return f"{n.name} = {self.arg(n.args[0])}.{n.target}(" \
                   f"{self.call_args(n.args[1:], n.kwargs)})"
        if n.op == "output":
            return f"return {self.arg(n.args[0])}"
        fmt = MAGIC_TARGETS.get(n.target)
        if fmt is not None and not n.kwargs and len(n.args) == fmt.count("{}"):
            return f"{n.name} = " + fmt.format(*(self.arg(a) for a in n.args))
        if n.target is getattr and len(n.args) == 2 and isinstance(n.args[1], str) \
                and n.args[1].isidentifier():
            return f"{n.name} = {self.arg(n.args[0])}.{n.args[1]}"
        return f"{n.name} = {self.target_expr(n.target)}({self.call_args(n.args, n.kwargs)})"


_DTYPE_ABBREVIATIONS = {"float32": "f32", "float64": "f64", "float16": "f16", "bfloat16": "bf16",
                        "int64": "i64", "int32": "i32", "int16": "i16", "int8": "i8",
                        "uint8": "u8", "bool": "b8", "complex64": "c64", "complex128": "c128"}


def _annotation(val) -> str | None:
    """``"f32[2, 3]"`` for a tensor value (a tuple of them for a multi-output node)."""
    if isinstance(val, (tuple, list)):
        parts = [_annotation(v) for v in val]
        return f'"{", ".join(p.strip(chr(34)) if p else "?" for p in parts)}"' \
            if any(parts) else None
    dtype, shape = getattr(val, "dtype", None), getattr(val, "shape", None)
    if dtype is None or shape is None:
        return None
    name = getattr(dtype, "name", str(dtype))
    return f'"{_DTYPE_ABBREVIATIONS.get(name, name)}[{", ".join(map(str, shape))}]"'


def _attr_path(root: str, target: str) -> str:
    out = root
    for atom in target.split("."):
        out = f"{out}.{atom}" if atom.isidentifier() and not keyword.iskeyword(atom) \
            else f"getattr({out}, {atom!r})"
    return out


def _hint_for(obj) -> str:
    if isinstance(obj, type) or callable(obj):
        name = getattr(obj, "__name__", None)
        if name:
            return name
    text = repr(obj)
    return text.rsplit(".", 1)[-1] if re.fullmatch(r"[\w.]+", text) else type(obj).__name__


def _strata_module():
    import strata
    return strata
