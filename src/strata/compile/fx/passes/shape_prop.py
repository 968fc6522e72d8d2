"""``ShapeProp``: run a GraphModule and record each node's output as ``meta["val"]``.

As ``torch.fx.passes.shape_prop.ShapeProp``: every node's value is kept as a meta tensor of
the same shape, dtype and strides (no data), so later passes can read shapes without running
anything. Run it on meta tensors to propagate shapes without computing.

    >>> ShapeProp(gm).propagate(strata.randn(2, 3))
    >>> [n.meta["val"].shape for n in gm.graph.nodes if n.op != "output"]
"""

from ...._tensor import Tensor
from ....creation import empty_strided
from ..interpreter import Interpreter
from ..node import map_aggregate


def _as_meta(value):
    if isinstance(value, Tensor):
        return empty_strided(tuple(value.shape), value.stride(), dtype=value.dtype,
                             device="meta")
    return value


class ShapeProp(Interpreter):
    def run_node(self, n):
        result = super().run_node(n)
        if n.op != "output":
            n.meta["val"] = map_aggregate(result, _as_meta)
        return result

    def propagate(self, *args):
        """Run the graph on ``args`` (real or meta tensors); returns its output."""
        return self.run(*args)
