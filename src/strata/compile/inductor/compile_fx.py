"""``compile_fx``: an aten-level fx graph -> a callable running generated C kernels.

The graph is lowered and scheduled (graph.py), its kernels printed into one C file and built
through the one build path (backends/cpu/native.py: content-addressed, verified before loading,
so a fresh process with a warm cache only lowers and prints, it never runs the compiler), and a
Python wrapper is generated: it allocates each buffer, splits each kernel's rows over the CPU
backend's threads and calls the eager kernel of each Fallback/Extern step in order. With
``STRATA_COMPILE_DEBUG=1`` the folder of the compiled frame gets ir_pre_fusion.txt,
ir_post_fusion.txt and output_code.py (the wrapper followed by the C source).
"""

import ctypes
import hashlib
import math
import os
import warnings

import ml_dtypes
import numpy as np
from numpy.lib.stride_tricks import as_strided

from ... import config
from ..._tensor import from_array
from ...autograd.grad_mode import no_grad
from ...backends.cpu import native
from ...backends.cpu.array import data
from ...backends.cpu.dense import check_rows as eager_row_check
from ...backends.cpu.indexing import check_bounds
from ...backends.cpu.loss import _targets as eager_target_check
from ...backends.cpu.nn import convolution_arrays, convolution_relu
from ...backends.cpu.pointwise import _check_int_divisor as check_int_divisor
from ...backends.cpu.scatter import check_select_index
from ...core import dtype as D
from ...core.fp_errors import silent_fp
from . import codecache
from .autotune import Autotuner, default_choice
from .cprinter import kernel_arguments, pointer_count
from .eager_pool import max_pool2d_2x2, max_pool2d_backward_masked
from .graph import FLAT, FallbackStep, GraphArgument, GraphLowering, KernelStep, module_attribute
from .ir import InputBuffer, contiguous_stride, store_target
from .lowering import aten
from .plan import Planner
from .products import _matmul, _matmul_pair

_NP = {"float32": np.float32, "float64": np.float64, "int64": np.int64, "int32": np.int32,
       "int16": np.int16, "int8": np.int8, "uint8": np.uint8, "bool": np.bool_,
       "float16": np.float16, "bfloat16": ml_dtypes.bfloat16}


def _np_text(dtype) -> str:
    """The wrapper's text of a dtype's NumPy type (bfloat16 is ml_dtypes')."""
    return f"np.{_NP[dtype].__name__}" if dtype != "bfloat16" else "bfloat16"


def _checked(arr, shape):
    """The kernels have the sizes baked in: another shape must never reach them."""
    if arr.shape != shape:
        raise RuntimeError(f"inductor: this graph was compiled for an input of shape "
                           f"{list(shape)}, got {list(arr.shape)}")
    return arr


def _laid_out(arr, strides):
    """``arr`` with the element strides the kernels were printed for (a copy if it has others)."""
    if arr.ndim and tuple(s // arr.itemsize for s in arr.strides) != tuple(strides) and \
            arr.size > 1:
        order = sorted(range(arr.ndim), key=lambda d: -strides[d])
        out = np.empty([arr.shape[d] for d in order], arr.dtype).transpose(np.argsort(order))
        np.copyto(out, arr)
        return out
    return arr


def _input(tensor, shape, byte_strides, strides):
    """Input ``tensor``'s array, checked against the shape the kernels were printed for and laid
    out with their ``strides``: one comparison where it already is (the usual case)."""
    arr = data(tensor)
    if arr.shape == shape and arr.strides == byte_strides:
        return arr
    return _laid_out(_checked(arr, shape), strides)


def _input_view(tensor, arr, dtype, size, stride, offset):
    """The view ``size``/``stride`` at ``offset`` of input ``tensor``, which the graph was
    compiled to find laid out as ``arr`` (``_input``'s array) is; a view of ``arr``, its
    laid-out copy, where ``tensor`` came with other strides (a forward's saved value realized
    in another layout than its meta's: a bfloat16 weight's transpose, computed contiguous)."""
    if data(tensor) is arr:
        return tensor.as_strided(size, stride, tensor.storage_offset() + offset)
    order = sorted(range(arr.ndim), key=lambda d: -arr.strides[d])
    storage = arr.transpose(order).reshape(-1)    # (``_laid_out``'s copy is dense: no copy)
    return _tensor(storage, dtype).as_strided(size, stride, offset)


class Wrapper:
    """Writes the Python source of the function that runs the steps in order."""

    def __init__(self, G: GraphLowering):
        self.G, self.constants = G, {}
        self.needed = G.needed()
        self._allocated = set()     # buffers the kernels write, once allocated

    def _last_uses(self):
        last = {}
        for i, step in enumerate(self.G.steps):
            for name in (*self._step_reads(step), *self.G.slices_written(step)):
                last[name] = i
        for kind, name in self.G.outputs:
            if kind != "const":
                last[getattr(name, "name", name)] = len(self.G.steps)
        return last

    def _step_reads(self, step):
        return self.G._external_reads(step)

    def _any_layout(self, name):
        """Whether input ``name`` may keep whatever strides it comes with (no kernel reads it)."""
        return False

    def source(self):
        G = self.G
        lines = ["def call(args):", f"    ({', '.join(G.inputs)}{',' if G.inputs else ''}) = args"]
        for name in G.inputs:
            if name in G.buffers:
                lines.append(f"    a_{name} = {self._input(name, G.buffers[name])}")
        for name in G.constants:
            lines.append(f"    {name} = constants[{name!r}]")
            lines.append(f"    a_{name} = _laid_out(data({name}), {G.buffers[name].stride!r})")
        last = self._last_uses()
        for i, step in enumerate(G.steps):
            if isinstance(step, KernelStep):
                self._kernel_call(step, lines)
            else:
                self._fallback_call(step, lines)
            dead = [n for n, j in last.items() if j == i and n not in G.inputs
                    and n not in G.constants]
            if dead:
                lines.append(f"    del {', '.join('a_' + n for n in dead)}")
        outs = []
        for kind, value in G.outputs:
            if kind == "view":
                outs.append(self.view(value))
            elif kind == "const" or value in G.inputs:
                outs.append(repr(value) if kind == "const" else value)
            else:
                outs.append(f"_tensor(a_{value}, {G.buffers[value].dtype!r})")
        lines.append(f"    return [{', '.join(outs)}]")
        return "\n".join(lines) + "\n"

    def _input(self, name, b):
        """Python text of the array of input ``name`` (buffer ``b``), checked and laid out."""
        array = f"_checked(data({name}), {b.size!r})"
        return array if self._any_layout(name) else f"_laid_out({array}, {b.stride!r})"

    def tensor(self, name):
        """Python text of the tensor holding buffer ``name`` (inputs are their own tensors)."""
        if name in self.G.inputs or name in self.G.constants:
            return name
        return f"_tensor(a_{name}, {self.G.buffers[name].dtype!r})"

    def view(self, b):
        """Python text of the strided view ``b`` of a buffer (as_strided: no copy; none at all
        where ``b`` is the whole buffer as laid out: an input's own tensor then, as AOT
        autograd compiles per input layout, where ``as_strided``'s dispatch cost ~8 us per
        call: a Linear's weight saved for its backward)."""
        base = self.tensor(b.name)
        whole = self.G.buffers[b.name]
        if (b.size, b.stride, b.offset) == (whole.size, whole.stride, whole.offset) and \
                b.name not in self.G.constants:
            return base
        if b.name in self.G.inputs and b.name in self.G.buffers:
            return (f"_input_view({base}, a_{b.name}, {whole.dtype!r}, {b.size!r}, "
                    f"{b.stride!r}, {b.offset})")
        offset = (f"{base}.storage_offset() + {b.offset}"
                  if b.name in self.G.inputs or b.name in self.G.constants else b.offset)
        return f"{base}.as_strided({b.size!r}, {b.stride!r}, {offset})"

    def _kernel_call(self, step, lines):
        kernel = self.G.c_kernel(step, self.needed)
        for node in step.nodes:
            name = store_target(node)     # a cat's output: allocated by its first slice's kernel
            if node.name in kernel.local or name in self._allocated:
                continue
            self._allocated.add(name)
            size = self.G.buffers[name].size if name in self.G.buffers else node.ranges
            if node.name in self.G.in_place:     # the new value of a mutated input
                lines.append(f"    a_{node.name} = a_{self.G.in_place[node.name]}")
                continue
            lines.append(f"    a_{name} = np.empty({tuple(size)!r}, {_np_text(node.dtype)})")
        arrays = [f"a_{name}" for name in kernel_arguments(kernel)]
        outer = int(np.prod(step.outer)) if step.outer else 1
        inner = int(np.prod(step.inner)) if step.inner else 1
        lines.append(f"    _run_kernel(lib, {step.name!r}, {outer}, {inner}, "
                     f"({', '.join(arrays)},))")

    def _fallback_call(self, step, lines):
        G = self.G

        def arg(a):
            if isinstance(a, GraphArgument):
                return a.name
            if isinstance(a, InputBuffer):
                return self.view(a)
            if isinstance(a, str) and a in G.buffers:
                return self.tensor(a)
            if isinstance(a, (tuple, list)):
                inner = ", ".join(arg(x) for x in a)
                return f"({inner}{',' if len(a) == 1 else ''})" if isinstance(a, tuple) \
                    else f"[{inner}]"
            if a is None or isinstance(a, (bool, int, float, str)):
                return repr(a)
            key = f"c{len(self.constants)}"     # a dtype, a device...: passed as the object
            self.constants[key] = a
            return f"consts[{key!r}]"
        call = ", ".join([arg(a) for a in step.args]
                         + [f"{k}={arg(v)}" for k, v in step.kwargs.items()])
        lines.append(f"    r_{step.name} = targets[{step.name!r}]({call})  # {step.kind}")
        outputs = [n for n in G.buffers if n == step.name or n.startswith(step.name + "_")]
        for name in outputs:
            index = "" if name == step.name else f"[{name.rsplit('_', 1)[1]}]"
            lines.append(f"    a_{name} = _laid_out(data(r_{step.name}{index}), "
                         f"{G.buffers[name].stride!r})")


class CWrapper(Wrapper):
    """The wrapper of the C kernels: a float mm/bmm Extern is ``np.matmul`` straight into a
    fresh array (BLAS, as the eager kernel), with no tensor, no dispatch and no meta function
    around it; its epilogue (addmm's bias, an activation) is a generated kernel."""

    def __init__(self, G: GraphLowering):
        super().__init__(G)
        self._paired = set()     # products run by ``_matmul_pair`` with the one before them

    def _fallback_call(self, step, lines):
        if step.kind == "Check":    # nll_loss's targets, embedding's indices (lowering_nn.py)
            indices, *bounds = step.args
            array = self._array(indices) or f"data({self.view(indices)})"
            check = _CHECKS[step.target]
            lines.append(f"    {check}({array}, {', '.join(map(repr, bounds))})  # Check")
            return
        convolution = self._convolution_call(step)
        if convolution is not None:
            lines.append(f"    a_{step.name} = {convolution}  # Extern")
            return
        if step.target in ARRAY_EXTERNS:
            self._array_extern_call(step, lines)
            return
        if step in self._paired:    # already run with the product before it
            return
        operands = self._matmul_operands(step)
        if operands is None:
            super()._fallback_call(step, lines)
            return
        partner = self._independent_product_after(step)
        for s in (step,) if partner is None else (step, partner):
            out = self.G.buffers[s.name]
            lines.append(f"    a_{s.name} = np.empty({out.size!r}, {_np_text(out.dtype)})")
        if partner is None:
            lines.append(f"    _matmul({operands[0]}, {operands[1]}, a_{step.name})  # Extern")
            return
        self._paired.add(partner)
        second = self._matmul_operands(partner)
        lines.append(f"    _matmul_pair({operands[0]}, {operands[1]}, a_{step.name}, "
                     f"{second[0]}, {second[1]}, a_{partner.name})  # Extern x2")

    def _independent_product_after(self, step):
        """The float mm/bmm Extern right after ``step`` when it does not read ``step``'s output
        (a Linear's backward: ``dX = dY @ W`` then ``dW = dY.T @ X``), else None: the two run
        side by side (``_matmul_pair``)."""
        steps = self.G.steps
        i = steps.index(step)
        if i + 1 == len(steps):
            return None
        after = steps[i + 1]
        if not isinstance(after, FallbackStep) or after.kind == "Check" or \
                self._matmul_operands(after) is None or step.name in self._step_reads(after):
            return None
        return after

    def _array_extern_call(self, step, lines):
        """An Extern whose target takes and returns arrays (``ARRAY_EXTERNS``, the lowering
        passing whole or contiguous buffers): outputs ``step`` and ``step_1``..."""
        outputs = [n for n in self.G.buffers if n == step.name or n.startswith(step.name + "_")]
        args = [self._array(a) if isinstance(a, InputBuffer) or a in self.G.buffers
                else repr(a) for a in step.args]
        if None in args:    # (lowering_nn.py's ``_contiguous`` gives it whole buffers)
            raise RuntimeError(f"inductor: {step.target.__name__} needs arrays of its buffers")
        lines.append(f"    {', '.join('a_' + n for n in outputs)} = "
                     f"targets[{step.name!r}]({', '.join(args)})  # Extern")

    def _convolution_call(self, step):
        """The call text of eager's convolution over a float Extern's arrays (no tensor, no
        dispatch, no meta function: lowering_nn.py ``_eager_convolution``), or None."""
        if step.target is not aten.convolution.default:
            return None
        x, w, bias, stride, padding, dilation, transposed, _, groups = step.args
        out = self.G.buffers[step.name]
        if bias is not None or out.dtype not in ("float32", "float64"):
            return None
        arrays = []
        for a in (x, w):
            b = self.G.buffers.get(a) if isinstance(a, str) else a
            if not isinstance(b, InputBuffer) or b.dtype != out.dtype:
                return None
            arrays.append(self._array(b))
        if None in arrays:
            return None
        return (f"_convolution({arrays[0]}, {arrays[1]}, None, {tuple(stride)!r}, "
                f"{tuple(padding)!r}, {tuple(dilation)!r}, {transposed!r}, {groups!r}, "
                f"{tuple(out.size[2:])!r})")

    def view(self, b):
        """A contiguous view of a whole contiguous buffer is a NumPy reshape: no dispatch."""
        whole = self.G.buffers[b.name]
        if (b.size, b.stride, b.offset) == (whole.size, whole.stride, whole.offset):
            return super().view(b)
        if b.offset == 0 and b.name not in self.G.inputs and b.name not in self.G.constants \
                and _dense(whole) and _dense(b) and math.prod(b.size) == math.prod(whole.size):
            return f"_tensor(a_{b.name}.reshape({b.size!r}), {b.dtype!r})"
        return super().view(b)

    def _input(self, name, b):
        """One call that takes the array as it comes when it already has the buffer's shape and
        strides (``_input``)."""
        if self._any_layout(name):
            return super()._input(name, b)
        item = _strata_dtype(b.dtype).itemsize
        return (f"_input({name}, {b.size!r}, {tuple(s * item for s in b.stride)!r}, "
                f"{b.stride!r})")

    def _any_layout(self, name):
        """An input read only whole by float mm/bmm Externs (a saved, transposed activation of a
        backward) keeps its own strides: BLAS reads either unit-stride layout (``_blas_ready``
        copies any other, as eager's bmm does), where ``_laid_out`` would copy it on every call
        when the forward's view has other strides than the meta's (six 0.5 MB copies per tiny
        GPT step)."""
        G = self.G
        if any(getattr(value, "name", value) == name for _, value in G.outputs):
            return False
        readers = [step for step in G.steps if name in self._step_reads(step)]
        return bool(readers) and all(
            isinstance(step, FallbackStep) and self._matmul_operands(step) is not None
            and all(a == name or getattr(a, "name", None) != name or a is G.buffers[name]
                    for a in step.args)
            for step in readers)

    def _matmul_operands(self, step):
        """The array texts of a float mm/bmm's operands, or None for the eager kernel."""
        if step.target not in (aten.mm.default, aten.bmm.default) or step.kwargs:
            return None
        out = self.G.buffers.get(step.name)
        if out is None or out.dtype not in ("float32", "float64") or \
                out.stride != contiguous_stride(out.size):
            return None
        texts = []
        for a in step.args:
            b = self.G.buffers.get(a) if isinstance(a, str) else a
            if not isinstance(b, InputBuffer) or b.dtype != out.dtype:
                return None
            texts.append(self._array(b))
        return None if None in texts else texts

    def _array(self, b):
        """The array text of buffer ``b`` (a name or an InputBuffer view), or None."""
        b = self.G.buffers[b] if isinstance(b, str) else b
        whole = self.G.buffers[b.name]
        if b is whole:
            return f"a_{b.name}"
        if b.offset == 0 or whole.stride == contiguous_stride(whole.size):
            return f"_strided(a_{b.name}, {b.size!r}, {b.stride!r}, {b.offset})"
        return None


def _dense(b):
    """Whether ``b`` is row-major over its elements (strides of size-1 dims do not count)."""
    return all(s == c for n, s, c in zip(b.size, b.stride, contiguous_stride(b.size)) if n != 1)


def _strided(arr, size, stride, offset):
    """The view of ``arr``'s memory with these element strides from element ``offset``. A
    contiguous ``arr`` lends its buffer to ``np.ndarray`` (0.3 us, which also checks that the
    view stays inside it), where ``as_strided`` builds it through ``__array_interface__``
    (4 us; a tiny GPT step makes 47 such views). A view reaching past ``arr`` (an input's
    ``as_strided`` into the rest of its storage) takes ``as_strided``, as any other ``arr``."""
    item = arr.itemsize
    if arr.flags.c_contiguous:
        try:
            return np.ndarray(size, arr.dtype, arr, offset * item, [s * item for s in stride])
        except (TypeError, ValueError):    # the view reaches past the buffer
            pass
    if offset:
        arr = arr.reshape(-1)[offset:]
    return as_strided(arr, size, [s * item for s in stride])


def _check_targets(target, classes, ignore_index):
    """Eager's IndexError for the first target outside [0, classes) that is not ignored. Targets
    all inside (every training step) cost one min and one max; only others take eager's check,
    which skips ``ignore_index`` and words the error (5 NumPy passes: ~30 us a call inside an
    MLP step, for 64 targets)."""
    if target.size and (target.min() < 0 or target.max() >= classes):
        eager_target_check(target, ignore_index, classes)


def _check_index_bounds(index, dim, size):
    """Eager index_add_'s and scatter's RuntimeError for the first index outside [0, size)."""
    check_bounds(index.reshape(-1), dim, size, RuntimeError, wrap_negative=False)


_CHECKS = {aten.nll_loss_forward.default: "_check_targets",
           aten.embedding.default: "_check_indices",
           aten.index_add_.default: "_check_index_bounds",
           aten.scatter.src: "_check_index_bounds",
           aten.gather.default: "_check_index_bounds",
           aten.index.Tensor: "_check_bounds", aten.index_put_.default: "_check_bounds",
           aten.index_select.default: "_check_select_index",
           aten.remainder.Tensor: "_check_int_divisor",
           aten.fmod.Tensor: "_check_int_divisor",
           aten.div.Tensor_mode: "_check_int_divisor"}


_convolution = silent_fp(convolution_arrays)   # as around the eager kernel
# Externs whose targets take the buffers' arrays (no tensor, no dispatch): lowering_nn.py's
ARRAY_EXTERNS = frozenset({max_pool2d_2x2, max_pool2d_backward_masked, convolution_relu})


def _flatten(x):
    if isinstance(x, (tuple, list)):
        for a in x:
            yield from _flatten(a)
    else:
        yield x


def _strata_dtype(name):
    return getattr(D, name if name != "bool" else "bool_")


def _tensor(arr, dtype):
    if not arr.flags.c_contiguous:    # (ascontiguousarray would also make a 0-d array 1-d)
        arr = np.ascontiguousarray(arr)
    return from_array(arr, _strata_dtype(dtype))


def _signatures(G, variants):
    sig, needed = {}, G.needed()
    for step in G.kernels():
        pointers = pointer_count(G.c_kernel(step, needed))
        sig[step.name] = (ctypes.c_void_p,) * pointers + (ctypes.c_int64,) * 2
        if variants and G.flat_variant(step, needed) is not None:
            sig[step.name + FLAT] = sig[step.name]
    return sig


def _default_choices(G):
    return {s.name: default_choice(s.name, int(np.prod(s.outer)) if s.outer else 1,
                                   int(np.prod(s.inner)) if s.inner else 1, s.walks_every_row)
            for s in G.kernels()}


def compile_fx(gm, example_inputs, *, max_autotune=False, replay=False):
    """The compiled callable of an aten-level graph (the fw/bw compiler of AOT autograd).
    ``max_autotune``: time each kernel's loop orders and row tiles at the first call
    (autotune.py). Graphs over opencl tensors get OpenCL kernels (opencl_graph.py), replayed if
    ``replay`` (replay.py); graphs over sim tensors run their eager kernels, replayed likewise."""
    constants = {n.name: module_attribute(gm, n.target) for n in gm.graph.nodes
                 if n.op == "get_attr"}
    from . import opencl_graph
    if opencl_graph.on_opencl(gm, example_inputs):
        return opencl_graph.compile_opencl(gm, example_inputs, constants, replay)
    device = opencl_graph.graph_device(gm, example_inputs)
    if device is not None and device.type == "sim":    # no code generator: its eager kernels
        from ...backends.sim import runtime as sim_runtime
        from .replay import ReplayedGraph
        run = _outputs_as_list(gm)
        call = (ReplayedGraph(lambda args: run(*args), sim_runtime.get().new_recording)
                if replay else lambda args: run(*args))
        compiled = CompiledGraph(call, None, "", (gm, example_inputs))
        compiled.from_cache = False
        return compiled
    key = codecache.graph_key(gm, example_inputs, constants, max_autotune)
    cached = None if config.compile_debug else codecache.load(key)
    if cached is not None:
        G = None
        wrapper, source, pointers, targets, consts, choices, tuned = cached
        signatures = {name: (ctypes.c_void_p,) * n + (ctypes.c_int64,) * 2
                      for name, n in pointers.items()}
    else:
        G = GraphLowering(gm, example_inputs, "cpu").run()
        source = G.c_source(variants=max_autotune)
        writer = CWrapper(G)
        wrapper, consts = writer.source(), writer.constants
        signatures = _signatures(G, max_autotune)
        targets = {s.name: s.target for s in G.steps if isinstance(s, FallbackStep)}
        choices, tuned = _default_choices(G), False
        codecache.store(key, wrapper, source, signatures, targets, consts, choices, tuned)
        if config.compile_debug:
            _write_debug(G, wrapper, source)
    tuner = Autotuner(choices, pending=choices if max_autotune and not tuned else (),
                      unmeasured=() if tuned else choices)    # Note [Measured row tiles]
    if tuner.pending:
        def remember_tuning():
            codecache.store(key, wrapper, source, signatures, targets, consts, choices, True)
    else:
        remember_tuning = None
    lib = None
    if signatures:
        digest = hashlib.sha256(source.encode()).hexdigest()[:12]
        try:
            lib = native.load(f"graph_{digest}", source, signatures)
        except native.BuildError as e:
            warnings.warn(f"strata.compile: inductor could not build its kernels, so this graph "
                          f"runs its aten ops one by one ({e})", RuntimeWarning, stacklevel=2)
            return _outputs_as_list(gm)
    scope = {"np": np, "data": data, "_laid_out": _laid_out, "_checked": _checked, "_input": _input,
             "_input_view": _input_view,
             "_run_kernel": tuner, "_matmul": _matmul, "_matmul_pair": _matmul_pair,
             "_convolution": _convolution, "_strided": _strided,
             "_check_targets": _check_targets, "_check_indices": eager_row_check,
             "_check_index_bounds": _check_index_bounds,
             "_check_int_divisor": check_int_divisor,
             "_check_bounds": check_bounds, "_check_select_index": check_select_index,
             "_tensor": _tensor, "lib": lib, "bfloat16": ml_dtypes.bfloat16,
             "constants": constants, "consts": consts,
             "targets": targets}
    code = compile(wrapper, f"<inductor wrapper {key}>", "exec")
    exec(code, scope)  # noqa: S102  (the wrapper generated above)
    planner = Planner(wrapper, scope, tuner)
    return CompiledGraph(scope["call"], G, wrapper + "\n" + source, (gm, example_inputs),
                         tuner, remember_tuning, planner)


def _outputs_as_list(gm):
    """``gm`` answering a list of outputs, as a CompiledGraph does."""
    def run(*args):
        out = gm(*args)
        return list(out) if isinstance(out, (tuple, list)) else [out]
    return run


class CompiledGraph:
    """What ``compile_fx`` returns: call it with the graph's inputs. ``output_code``,
    ``ir_pre_fusion`` and ``ir_post_fusion`` show what was generated."""

    def __init__(self, call, G, output_code, graph_and_inputs, autotuner=None,
                 after_tuning=None, planner=None):
        self._call, self._graph, self.output_code = call, G, output_code
        self.planner = planner      # Note [Graph programs] (plan.py); None: the wrapper alone
        self.from_cache = G is None     # lowering was skipped
        self._graph_and_inputs = graph_and_inputs
        self.autotuner = autotuner   # its ``choices`` (autotune.py); None on opencl and sim
        self._after_tuning = after_tuning

    def _lowered(self):
        if self._graph is None:     # from the cache: lower again, only to show the IR
            self._graph = GraphLowering(*self._graph_and_inputs, "cpu").run()
        return self._graph

    def __call__(self, *args):
        with no_grad():
            result = self._call(args) if self.planner is None else \
                self.planner(self._call, args)
        if self._after_tuning is not None:    # the first call timed the kernels: cache that
            self._after_tuning, store = None, self._after_tuning
            store()
        return result

    @property
    def ir_pre_fusion(self):
        return self._lowered().pre_fusion_text()

    @property
    def ir_post_fusion(self):
        return self._lowered().post_fusion_text()


def _write_debug(G, wrapper, source):
    folder = os.path.join(config.compile_debug_dir, "inductor", f"graph_{os.getpid()}_{id(G)}")
    os.makedirs(folder, exist_ok=True)
    for name, text in (("ir_pre_fusion.txt", G.pre_fusion_text()),
                       ("ir_post_fusion.txt", G.post_fusion_text()),
                       ("output_code.py", wrapper + '\n"""\n' + source + '"""\n')):
        with open(os.path.join(folder, name), "w") as f:
            f.write(text)
