"""AOT autograd: aten-level tracing (make_fx), functionalisation, the joint forward+backward
graph, partitioners and the runtime wrapper. See docs/compile_aot.md."""

from ... import config
from .aot_autograd import aot_function, aot_module_simplified, graph_observers
from .debug import DebugFolderWriter
from .decompositions import get_decompositions, primitive_decompositions
from .partitioners import (default_partition, min_cut_rematerialization_partition,
                           saved_bytes)
from .proxy_tensor import make_fx

if config.compile_debug:
    graph_observers.append(DebugFolderWriter(config.compile_debug_dir))


def nop(gm, example_inputs):
    """The identity compiler: run the graph module as it is."""
    return gm


def aot_eager(gm, example_inputs):
    """The ``aot_eager`` backend: AOT autograd with identity compilers."""
    return aot_module_simplified(gm, example_inputs, fw_compiler=nop, bw_compiler=nop)


def aot_eager_decomp_partition(gm, example_inputs):
    """AOT autograd with every decomposition and the min-cut partitioner, no code generation."""
    return aot_module_simplified(gm, example_inputs, fw_compiler=nop, bw_compiler=nop,
                                 partition_fn=min_cut_rematerialization_partition,
                                 decompositions=primitive_decompositions())


__all__ = ["DebugFolderWriter", "aot_eager", "aot_eager_decomp_partition", "aot_function",
           "aot_module_simplified", "default_partition", "get_decompositions", "graph_observers",
           "make_fx", "min_cut_rematerialization_partition", "nop", "primitive_decompositions",
           "saved_bytes"]
