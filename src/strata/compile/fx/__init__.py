"""strata.fx: the graph IR of the compiler, with torch.fx's API (Graph, Node, GraphModule,
Interpreter, Transformer, symbolic_trace). See docs/compile_aot.md."""

from .graph import Graph, PythonCode
from .graph_module import GraphModule
from .interpreter import Interpreter, Transformer
from .node import Node, map_aggregate, map_arg
from .proxy import Attribute, Proxy, TraceError, Tracer, symbolic_trace, wrap

__all__ = ["Attribute", "Graph", "GraphModule", "Interpreter", "Node", "Proxy", "PythonCode",
           "TraceError", "Tracer", "Transformer", "map_aggregate", "map_arg", "symbolic_trace",
           "wrap"]
