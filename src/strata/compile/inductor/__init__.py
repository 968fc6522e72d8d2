"""Inductor: aten graphs -> loop IR -> fused C kernels (see docs/inductor.md).

ir.py (the loop IR), cprinter.py (IR -> C), lowering.py (one row per aten op), graph.py
(lowering walk + row fusion), compile_fx.py (wrapper, build, debug output), eager.py (the CPU
backend's generated eager kernels, registered with backends/cpu/native.py at import).
"""

import functools

from ..backends import register_backend
from . import eager  # noqa: F401  (registers the generated eager kernels)

# what ``strata.compile(options=...)`` may set, and the backend argument each one sets
OPTIONS = {"max_autotune": bool, "triton.cudagraphs": bool}
_ARGUMENT = {"max_autotune": "max_autotune", "triton.cudagraphs": "replay"}
# Graph replay (replay.py, on opencl and sim) is this backend's CUDA graphs, under PyTorch's name.
_MODE_OPTIONS = {"reduce-overhead": {"triton.cudagraphs": True},
                 "max-autotune": {"max_autotune": True, "triton.cudagraphs": True},
                 "max-autotune-no-cudagraphs": {"max_autotune": True}}


@register_backend(name="inductor")
def inductor(gm, example_inputs, *, max_autotune=False, replay=False):
    """The ``inductor`` backend: AOT autograd (primitive decompositions, min-cut partition)
    with ``compile_fx`` as the forward and backward compiler; ``mode`` is strata.compile's."""
    import functools

    from ..aot import aot_module_simplified, min_cut_rematerialization_partition
    from .compile_fx import compile_fx
    compiler = functools.partial(compile_fx, max_autotune=max_autotune, replay=replay)
    return aot_module_simplified(gm, example_inputs, fw_compiler=compiler, bw_compiler=compiler,
                                 partition_fn=min_cut_rematerialization_partition)


def configured(mode=None, options=None):
    """The backend with ``strata.compile``'s ``mode`` or ``options`` applied (PyTorch's
    ``_TorchCompileInductorWrapper``): unknown options and wrong types raise its errors."""
    settings = {name: False for name in OPTIONS}
    settings.update(_MODE_OPTIONS.get(mode, {}))
    for key, value in (options or {}).items():
        name = key.replace("-", "_")
        if name not in OPTIONS:
            raise RuntimeError(f"Unexpected optimization option {key}, known options are "
                               f"{list(OPTIONS)}")
        if type(value) is not OPTIONS[name]:
            raise RuntimeError(f"Unexpected type of attr {key}, got {type(value).__name__} "
                               f"should be {OPTIONS[name].__name__}")
        settings[name] = value
    arguments = {_ARGUMENT[name]: value for name, value in settings.items()}
    return functools.wraps(inductor)(functools.partial(inductor, **arguments))


inductor.configured = configured
