"""``compile_fx`` for graphs whose tensors live on ``opencl``: fused OpenCL kernels.

The graph is lowered and fused exactly as for the CPU (graph.py); each fused kernel is printed
by oclprinter.py instead of cprinter.py (one work-item per row of the kernel's outer ranges, a
loop over the rest of the row), and the wrapper's generated Python is the CPU wrapper's with
three lines changed (``OpenCLWrapper``): buffers are device tensors from the caching allocator,
a kernel call is one launch on the current stream, and each input or fallback result is brought
to the layout the kernels were printed for by a device copy. Fallback steps run the opencl
device's eager kernels, so an op without one raises the dispatcher's error naming it.

Layouts are baked into the kernels (a graph is compiled for its example inputs' sizes and
strides); only where each tensor starts in its segment is an argument (``<buffer>_base``).
A fresh process compiling a graph compiled before loads its wrapper and OpenCL sources from
the CPU graphs' disk cache (codecache.py) instead of lowering it again.

``mode="reduce-overhead"`` (or ``"max-autotune"``) replays the graph: see replay.py.
"""

import hashlib
import json
from math import prod

import numpy as np

from ... import config
from ...backends.opencl import runtime as R
from ...core import dtype as D
from ...core.shape import contiguous_strides
from . import codecache
from .compile_fx import Wrapper
from .graph import FallbackStep, GraphLowering
from .ir import InputBuffer
from .oclprinter import print_kernel
from .replay import ReplayedGraph


def graph_device(gm, example_inputs):
    """The device a graph runs on: AOT autograd's examples are meta tensors, so it writes the
    real one in ``gm.meta["device"]``; a graph compiled directly has real examples."""
    found = gm.meta.get("device") if hasattr(gm, "meta") else None
    if found is None:
        found = next((t.device for t in example_inputs if hasattr(t, "_storage")), None)
    return found


def on_opencl(gm, example_inputs) -> bool:
    found = graph_device(gm, example_inputs)
    return found is not None and found.type == "opencl"


def _stored_layout(node):
    """Where a kernel stores a node: contiguous over its ranges (the CPU kernels' rule)."""
    return InputBuffer(node.name, node.dtype, tuple(node.ranges),
                       contiguous_strides(tuple(node.ranges)))


class OpenCLWrapper(Wrapper):
    """The CPU wrapper, whose kernel calls allocate device tensors and launch (see module)."""

    def __init__(self, G):
        super().__init__(G)
        self.sources = {}       # kernel name -> its OpenCL program

    def _kernel_call(self, step, lines):
        kernel = self.G.c_kernel(step, self.needed)
        stored = [n for n in step.nodes if n.name not in kernel.local]
        layouts = {n.name: _stored_layout(n) for n in stored}
        self.sources[step.name], _ = print_kernel(kernel, step.outer, layouts, based=True)
        for node in stored:
            size = self.G.buffers[node.name].size if node.name in self.G.buffers \
                else node.ranges
            lines.append(f"    a_{node.name} = _empty({tuple(size)!r}, {node.dtype!r})")
        tensors = [f"a_{b.name}" for b in kernel.inputs] + [f"a_{n.name}" for n in stored]
        lines.append(f"    _launch({step.name!r}, {prod(step.outer)}, "
                     f"({', '.join(tensors)},))")


def _dtype(name):
    return getattr(D, name if name != "bool" else "bool_")


def _scope(rt, sources):
    """The names the generated wrapper calls, for device tensors."""
    def checked(t, shape):
        if tuple(t.shape) != tuple(shape):
            raise RuntimeError(f"inductor: this graph was compiled for an input of shape "
                               f"{list(shape)}, got {list(t.shape)}")
        return t

    def laid_out(t, strides):
        if all(n == 1 or s == w for n, s, w in zip(t.shape, t.stride(), strides)):
            return t
        out = rt.empty(tuple(t.shape), tuple(strides), t.dtype)
        out.copy_(t)
        return out

    def empty(size, dtype):
        return rt.empty(size, contiguous_strides(size), _dtype(dtype))

    def launch(name, global_size, tensors):
        places = [rt.buffer_of(t) for t in tensors]
        args = [buffer for buffer, _ in places] + [np.int64(base) for _, base in places]
        rt.launch(name, sources[name], name, global_size, args, tensors)

    def input_view(t, laid, dtype, size, stride, offset):
        """compile_fx.py's ``_input_view``: of ``laid``, ``t`` laid out as compiled."""
        return laid.as_strided(size, stride, laid.storage_offset() + offset)

    return {"np": np, "data": lambda t: t, "_checked": checked, "_laid_out": laid_out,
            "_tensor": lambda t, dtype: t, "_empty": empty, "_launch": launch,
            "_input_view": input_view}


def graph_key(gm, example_inputs, constants) -> str:
    """The CPU graph cache's key, made distinct for opencl: AOT autograd hands both devices
    the same meta examples, so the same graph on the CPU would otherwise share the entry."""
    key = codecache.graph_key(gm, example_inputs, constants)
    return "opencl-" + hashlib.sha256(f"opencl\0{key}".encode()).hexdigest()[:24]


def compile_opencl(gm, example_inputs, constants, replay=False):
    """The compiled callable of an aten graph over opencl tensors (see the module docstring).
    Lowering and printing are skipped where the graph cache (codecache.py) has the graph: its
    entry holds the wrapper and the OpenCL sources (whose program binaries the runtime caches
    per device and driver)."""
    from .compile_fx import CompiledGraph
    rt = R.get(graph_device(gm, example_inputs).index or 0)
    key = graph_key(gm, example_inputs, constants)
    cached = None if config.compile_debug else codecache.load(key)
    if cached is not None:
        G = None
        wrapper, sources, _, targets, consts, _, _ = cached
        sources = json.loads(sources)
    else:
        G = GraphLowering(gm, example_inputs).run()
        writer = OpenCLWrapper(G)
        wrapper, sources, consts = writer.source(), writer.sources, writer.constants
        targets = {s.name: s.target for s in G.steps if isinstance(s, FallbackStep)}
        codecache.store(key, wrapper, json.dumps(sources), {}, targets, consts, {}, False)
    scope = {**_scope(rt, sources), "constants": constants, "consts": consts,
             "targets": targets}
    exec(compile(wrapper, f"<inductor opencl wrapper {key}>", "exec"), scope)  # noqa: S102
    output_code = wrapper + '\n"""\n' + "\n".join(sources.values()) + '"""\n'
    call = ReplayedGraph(scope["call"], rt.new_recording) if replay else scope["call"]
    return CompiledGraph(call, G, output_code, (gm, example_inputs))
