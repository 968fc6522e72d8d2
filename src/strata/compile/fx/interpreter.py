"""``Interpreter`` runs a GraphModule node by node; ``Transformer`` rebuilds it while doing so.

Subclass and override one method per opcode (``call_function``, ``call_module``, ...) to run a
graph differently (on meta tensors, with logging) or to rewrite it:

    class NegateRelu(Transformer):
        def call_function(self, target, args, kwargs):
            if target is strata.relu:
                return -super().call_function(target, args, kwargs)
            return super().call_function(target, args, kwargs)
"""

import inspect

from .graph import Graph
from .graph_module import GraphModule, _get_attr_path
from .node import Node, map_aggregate, map_arg
from .proxy import GraphAppendingTracer, Proxy


class Interpreter:
    """``Interpreter(gm).run(*args)`` evaluates ``gm.graph`` one node at a time."""

    def __init__(self, module, garbage_collect_values: bool = True, graph: Graph | None = None):
        self.module = module
        self.graph = graph if graph is not None else module.graph
        self.garbage_collect_values = garbage_collect_values
        self.env = {}
        self.user_to_last_uses = {}
        if garbage_collect_values:
            last_use = {}
            for node in self.graph.nodes:
                for inp in node._input_nodes:
                    last_use[inp] = node
            for value, user in last_use.items():
                self.user_to_last_uses.setdefault(user, []).append(value)

    def run(self, *args, initial_env: dict | None = None, enable_io_processing: bool = True):
        """Run the graph on ``args``; returns what its output node returns."""
        self.env = dict(initial_env or {})
        self.args_iter = iter(args)
        for node in self.graph.nodes:
            if node in self.env:
                continue
            try:
                self.env[node] = self.run_node(node)
            except Exception as e:
                e.add_note(f"While executing {node.format_node()}")
                if node.stack_trace:
                    e.add_note(f"Original traceback:\n{node.stack_trace}")
                raise
            if self.garbage_collect_values:
                for to_delete in self.user_to_last_uses.get(node, ()):
                    del self.env[to_delete]
            if node.op == "output":
                return self.env[node]
        return None

    def run_node(self, n: Node):
        args, kwargs = self.fetch_args_kwargs_from_env(n)
        return getattr(self, n.op)(n.target, args, kwargs)

    # --- one method per opcode ----------------------------------------------------------------
    def placeholder(self, target, args, kwargs):
        if target.startswith("*"):
            return list(self.args_iter)
        try:
            return next(self.args_iter)
        except StopIteration:
            if args:
                return args[0]
            raise RuntimeError(f"Expected positional argument for parameter {target}, but "
                               f"one was not passed in!") from None

    def get_attr(self, target, args, kwargs):
        return self.fetch_attr(target)

    def call_function(self, target, args, kwargs):
        return target(*args, **kwargs)

    def call_method(self, target, args, kwargs):
        self_obj, *args_tail = args
        return getattr(self_obj, target)(*args_tail, **kwargs)

    def call_module(self, target, args, kwargs):
        return self.fetch_attr(target)(*args, **kwargs)

    def output(self, target, args, kwargs):
        return args[0]

    # --- helpers ------------------------------------------------------------------------------
    def fetch_attr(self, target: str):
        try:
            return _get_attr_path(self.module, target)
        except AttributeError:
            raise RuntimeError(f"Node referenced nonexistent target {target}") from None

    def fetch_args_kwargs_from_env(self, n: Node):
        return self.map_nodes_to_values(n.args, n), self.map_nodes_to_values(n.kwargs, n)

    def map_nodes_to_values(self, args, n: Node):
        def load(a):
            if a not in self.env:
                raise RuntimeError(f"Node {n} referenced nonexistent value {a}! Run "
                                   f"Graph.lint() to diagnose such issues")
            return self.env[a]
        return map_arg(args, load)


class Transformer(Interpreter):
    """Runs the graph on Proxies of a new graph, so overridden methods can emit other nodes;
    ``transform()`` returns the new GraphModule."""

    def __init__(self, module):
        super().__init__(module, garbage_collect_values=False)
        self.new_graph = Graph()
        self.tracer = GraphAppendingTracer(self.new_graph)
        self.tracer.root = module

    def placeholder(self, target, args, kwargs):
        default = next(iter(args), inspect.Signature.empty)
        return Proxy(self.new_graph.placeholder(target, default_value=default), self.tracer)

    def get_attr(self, target, args, kwargs):
        return Proxy(self.new_graph.get_attr(target), self.tracer)

    def call_module(self, target, args, kwargs):
        return self.tracer.create_proxy("call_module", target, args, kwargs)

    def call_function(self, target, args, kwargs):
        return self.tracer.create_proxy("call_function", target, args, kwargs)

    def call_method(self, target, args, kwargs):
        return self.tracer.create_proxy("call_method", target, args, kwargs)

    def run_node(self, n: Node):
        result = super().run_node(n)
        if isinstance(result, Proxy) and n.op != "output":
            result.node.meta.update(n.meta)
        return result

    def transform(self) -> GraphModule:
        result = self.run()
        self.new_graph.output(map_aggregate(
            result, lambda a: a.node if isinstance(a, Proxy) else a))
        return GraphModule(self.module, self.new_graph)
