"""``GraphModule``: an ``nn.Module`` whose ``forward`` is Python source generated from a Graph.

The source is registered with ``linecache`` so tracebacks and debuggers show the generated line;
``gm.code`` is that source, ``gm.print_readable()`` prints it with each node's stack trace.
"""

import copy
import linecache
import re

from ...nn import Module
from .graph import Graph

_next_file_id = [0]


def _exec_with_source(src: str, globals_: dict, name: str):
    _next_file_id[0] += 1
    filename = f"<eval_with_key>.{_next_file_id[0]}"
    linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
    exec(compile(src, filename, "exec"), globals_)
    return globals_[name]


def _get_attr_path(obj, target: str):
    for atom in target.split("."):
        obj = getattr(obj, atom)
    return obj


def _set_attr_path(root: Module, target: str, value):
    *prefix, last = target.split(".")
    mod = root
    for atom in prefix:
        sub = getattr(mod, atom, None)
        if sub is None:
            sub = Module()
            setattr(mod, atom, sub)
        mod = sub
    setattr(mod, last, value)


class GraphModule(Module):
    """``GraphModule(root, graph)``: copies from ``root`` (a Module or a dict of name -> value)
    every submodule, parameter, buffer or constant the graph's ``call_module``/``get_attr``
    nodes name, and compiles the graph into ``forward``.

        >>> gm = strata.fx.symbolic_trace(model)
        >>> print(gm.code)
    """

    def __new__(cls, *args, **kwargs):
        # Each instance gets its own class, so ``forward`` can be set on the class (as
        # torch.fx does) without one GraphModule's recompile changing another's.
        if cls.__name__ != "GraphModuleImpl":
            cls = type("GraphModuleImpl", (cls,), {})
        return super().__new__(cls)

    def __init__(self, root, graph: Graph, class_name: str = "GraphModule"):
        super().__init__()
        self.__class__.__name__ = class_name
        if isinstance(root, Module):
            if hasattr(root, "training"):
                self.training = root.training
            for node in graph.nodes:
                if node.op in ("get_attr", "call_module"):
                    _copy_attr(root, self, node.target)
        elif isinstance(root, dict):
            for node in graph.nodes:
                if node.op in ("get_attr", "call_module"):
                    if node.target not in root:
                        raise RuntimeError(f"Node {node} referenced target {node.target} but "
                                           f"that target was not provided in ``root``!")
                    _set_attr_path(self, node.target, root[node.target])
        else:
            raise RuntimeError("Unsupported type " + str(root) + " passed for root!")
        self.meta = {}
        self.graph = graph

    @property
    def graph(self) -> Graph:
        return self._graph

    @graph.setter
    def graph(self, g: Graph):
        object.__setattr__(self, "_graph", g)
        g.owning_module = self
        self.recompile()

    @property
    def code(self) -> str:
        """The Python source of ``forward``, generated from the graph."""
        return self._code

    def recompile(self):
        """Regenerate ``forward`` from ``self.graph``; call it after editing the graph."""
        python_code = self._graph.python_code(root_module="self")
        object.__setattr__(self, "_code", python_code.src)
        forward = _exec_with_source(python_code.src, dict(python_code.globals), "forward")
        type(self).forward = forward
        return python_code

    def print_readable(self, print_output: bool = True) -> str:
        """The module as a class definition, with each node's user line as a comment."""
        lines = [f"class {type(self).__name__}(strata.nn.Module):"]
        stack = {n.name: n.stack_trace for n in self._graph.nodes if n.stack_trace}
        previous = None
        for line in self._graph.python_code("self", verbose=True).src.splitlines():
            trace = stack.get(re.match(r"\s*(\w*)", line).group(1))
            if trace and trace != previous:
                where, *code = trace.strip().splitlines()[-2:]
                code_text = " ".join(c.strip() for c in code)
                lines.append(f"        # {where.strip()}, code: {code_text}")
                previous = trace
            lines.append(f"    {line}")
        text = "\n".join(lines) + "\n"
        if print_output:
            print(text)
        return text

    def __str__(self):
        return f"{super().__str__()}\n\n\n\n{self._code}"

    def __deepcopy__(self, memo):
        state = {k: v for k, v in self.__dict__.items() if k not in ("_graph", "_code")}
        holder = Module()
        holder.__dict__ = copy.deepcopy(state, memo)
        result = GraphModule(holder, copy.deepcopy(self._graph, memo), type(self).__name__)
        result.meta = holder.__dict__.get("meta", {})
        return result

    def __copy__(self):
        result = GraphModule(self, self._graph, type(self).__name__)
        result.meta = dict(self.meta)
        return result


def _copy_attr(from_module: Module, to_module: Module, target: str):
    *prefix, field = target.split(".")
    for item in prefix:
        f = getattr(from_module, item)
        t = getattr(to_module, item, None)
        if f is t:
            return
        if t is None:
            t = Module()
            setattr(to_module, item, t)
        from_module, to_module = f, t
    orig = getattr(from_module, field)
    buffers = from_module.__dict__.get("_buffers", {})
    if field in buffers and isinstance(to_module, Module):   # a buffer stays a buffer
        persistent = field not in from_module._non_persistent_buffers_set
        to_module.register_buffer(field, orig, persistent)
    else:
        setattr(to_module, field, orig)

