"""Layer 10: the profiler — every layer made visible.

* ``profile`` / ``record_function`` / ``schedule``: ``torch.profiler``'s API; a per-op table
  (``prof.key_averages().table()``) and Chrome-trace JSON (``prof.export_chrome_trace``) with
  host and device tracks;
* ``explain(line)``: the path of one line through every layer, as an indented tree with timings
  (``strata.explain``, ``python -m strata explain "z = x + y" --device sim``);
* ``graph.to_dot(tensor)``: the autograd graph as Graphviz DOT text.

All of it consumes the one tracer in ``core.trace``; nothing here runs unless asked.
"""

from . import graph  # noqa: F401
from .events import EventList, FunctionEvent, FunctionEventAvg  # noqa: F401
from .explain import Explanation, explain  # noqa: F401
from .profile import (  # noqa: F401
    ProfilerAction, ProfilerActivity, profile, record_function, schedule, supported_activities,
    tensorboard_trace_handler,
)

__all__ = ["EventList", "Explanation", "FunctionEvent", "FunctionEventAvg", "ProfilerAction",
           "ProfilerActivity", "explain", "profile", "record_function", "schedule",
           "supported_activities", "tensorboard_trace_handler"]
