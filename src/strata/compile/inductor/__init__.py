"""Inductor: aten graphs -> loop IR -> fused C kernels (see docs/inductor.md).

ir.py (the loop IR), cprinter.py (IR -> C), lowering.py (one row per aten op), graph.py
(lowering walk + row fusion), compile_fx.py (wrapper, build, debug output), eager.py (the CPU
backend's generated eager kernels, registered with backends/cpu/native.py at import).
"""

from ..backends import register_backend
from . import eager  # noqa: F401  (registers the generated eager kernels)

# the modes that replay graphs (CUDA graphs in PyTorch; here on opencl and sim: replay.py)
REPLAY_MODES = ("reduce-overhead", "max-autotune")


@register_backend(name="inductor")
def inductor(gm, example_inputs, mode=None):
    """The ``inductor`` backend: AOT autograd (primitive decompositions, min-cut partition)
    with ``compile_fx`` as the forward and backward compiler; ``mode`` is strata.compile's."""
    import functools

    from ..aot import aot_module_simplified, min_cut_rematerialization_partition
    from .compile_fx import compile_fx
    compiler = functools.partial(compile_fx, replay=mode in REPLAY_MODES)
    return aot_module_simplified(gm, example_inputs, fw_compiler=compiler,
                                 bw_compiler=compiler,
                                 partition_fn=min_cut_rematerialization_partition)
