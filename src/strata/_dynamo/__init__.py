"""``strata._dynamo``: the capture stage's public names, where ``torch._dynamo`` has them.

A re-export package: the code lives in ``strata/compile/`` (see docs/compile.md).
"""

import sys

from ..compile import OptimizedModule, disable, reset  # noqa: F401
from ..compile.backends import list_backends, lookup_backend, register_backend  # noqa: F401
from ..compile.capture.explain import ExplainOutput, explain  # noqa: F401
from ..compile.capture.in_graph import allow_in_graph, graph_break, is_compiling  # noqa: F401
from ..compile.capture.marks import mark_dynamic, mark_static, maybe_mark_dynamic  # noqa: F401
from ..compile.capture import settings as config
from . import exc  # noqa: F401

# ``import strata._dynamo.config`` finds the settings module itself, so assignments stick.
sys.modules[__name__ + ".config"] = config

def optimize(backend="inductor", *, nopython=False, dynamic=None, disable=False):
    """The older spelling of ``strata.compile`` (``torch._dynamo.optimize("eager")(fn)``)."""
    from ..compile import compile as compile_fn
    return lambda fn: compile_fn(fn, backend=backend, fullgraph=nopython, dynamic=dynamic,
                                 disable=disable)


__all__ = ["OptimizedModule", "disable", "reset", "list_backends", "lookup_backend",
           "optimize", "graph_break", "allow_in_graph", "is_compiling",
           "register_backend", "explain", "ExplainOutput", "mark_dynamic", "mark_static",
           "maybe_mark_dynamic", "config", "exc"]
