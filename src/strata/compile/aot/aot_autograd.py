"""AOT autograd: a captured graph -> functional aten graphs -> compiled forward and backward.

``aot_module_simplified(gm, example_inputs, fw_compiler, bw_compiler)`` is functorch's entry
point of the same name. It lifts the module's parameters and buffers to inputs and traces the
module with ``ProxyTensorMode`` on meta tensors, functionalised:

- **inference** (grad mode off, or no input requires grad): one graph
  ``(inputs) -> (new values of mutated inputs, outputs)`` for ``fw_compiler``;
- **training**: the *joint* graph ``(primals, tangents) -> (mutated inputs, outputs, grads)``,
  traced by running the forward and then autograd's own backward (``autograd.grad``) under the
  mode, so the backward ops are the derivative formulas' ops. ``partition_fn`` splits it into a
  forward graph (which also returns the values the backward needs) and a backward graph. At run
  time both run inside one ``autograd.Function``.

The runtime wrapper copies the new values of mutated inputs back into them (``copy_`` under
no_grad: BatchNorm running stats, ``x.add_(1)`` on an argument), returns an input itself where
the program returned it, and feeds a fresh seed to graphs with random ops. Every graph made is
also handed to the observers in ``graph_observers`` (the compile debug folder uses this).
"""

import contextlib
import time

from ... import autograd
from ...amp import autocast, autocast_mode
from ...autograd.function import Function
from ...autograd.grad_mode import is_grad_enabled, no_grad
from ...autograd.graph import saved_tensors_hooks
from ...core.tensor_impl import TensorImpl
from ...dispatch.tls import state as dispatch_state
from ...func.functional_call import _reparametrize_module
from ...func.pytree import tree_flatten, tree_unflatten
from ...random import default_generator
from ..fx import Graph, GraphModule, Interpreter, Node
from . import functionalize as FN
from .partitioners import default_partition, saved_bytes
from .proxy_tensor import ProxyTensorMode, current_tracer, keep_saved_tensor, to_meta

graph_observers = []   # callables (stage, graph_module, info: dict): "inference", "joint", ...


def _notify(stage, gm, **info):
    for observer in graph_observers:
        observer(stage, gm, info)


def aot_module_simplified(mod, args, fw_compiler, bw_compiler=None, partition_fn=None,
                          decompositions=None, inference_compiler=None):
    """Compile ``mod`` (a GraphModule from capture) for ``args``; returns ``forward(*args)``.

    ``fw_compiler(gm, example_inputs)`` / ``bw_compiler`` get the aten-level forward and
    backward graphs and return callables; ``partition_fn(joint_gm, joint_inputs,
    num_fwd_outputs=...)`` splits the joint graph (default: ``default_partition``);
    ``decompositions`` maps ops to replacement functions used while tracing. Parameters and
    buffers become graph inputs (tied ones once).
    """
    named = {**dict(mod.named_parameters(remove_duplicate=False)),
             **dict(mod.named_buffers(remove_duplicate=False)),
             **_tensor_attributes(mod)}
    params, position = [], {}     # distinct tensors; name -> index into params
    for name, t in named.items():
        if all(p is not t for p in params):
            params.append(t)
        position[name] = next(i for i, p in enumerate(params) if p is t)

    def flat_fn(*flat_args):
        state, user_args = flat_args[:len(params)], flat_args[len(params):]
        tensors = {name: state[i] for name, i in position.items()}
        with _reparametrize_module(mod, tensors, False, False):
            if isinstance(mod, GraphModule):
                return _StackTraceInterpreter(mod).run(*user_args)
            return mod(*user_args)

    compiled = aot_function(flat_fn, fw_compiler, bw_compiler, partition_fn, decompositions,
                            inference_compiler=inference_compiler)
    compiled.num_fixed_args = len(params)
    compiled.prepare(params + list(args))

    def forward(*runtime_args):
        return compiled(*params, *runtime_args)
    forward.aot = compiled
    return forward


def _tensor_attributes(mod):
    """Plain tensor attributes the graph reads (``get_attr``): inputs too, like parameters."""
    found = {}
    if isinstance(mod, GraphModule):
        for node in mod.graph.find_nodes(op="get_attr"):
            value = mod
            for atom in node.target.split("."):
                value = getattr(value, atom)
            if isinstance(value, TensorImpl):
                found[node.target] = value
    return found


class _StackTraceInterpreter(Interpreter):
    """Runs the captured graph node by node, so each aten node traced while one captured node
    runs gets that node's ``stack_trace`` (the user's line)."""

    def run_node(self, n):
        mode = current_tracer()
        if mode is not None:
            mode.node_meta = {"stack_trace": n.stack_trace} if n.stack_trace else {}
        out = super().run_node(n)
        if mode is not None and n.op == "call_function":
            out = mode.lift_fresh(out)
        return out


def aot_function(fn, fw_compiler, bw_compiler=None, partition_fn=None, decompositions=None, *,
                 inference_compiler=None):
    """Compile ``fn`` (positional tensor arguments) on its first call, as functorch's
    ``aot_function``; later calls reuse the compiled graphs for the same grad mode."""
    return _AOTFunction(fn, fw_compiler, bw_compiler or fw_compiler,
                        partition_fn or default_partition, decompositions,
                        inference_compiler or fw_compiler)


class _AOTFunction:
    """The callable ``aot_function`` returns: traces and compiles per argument signature."""

    def __init__(self, fn, fw_compiler, bw_compiler, partition_fn, decompositions,
                 inference_compiler):
        self.fn = fn
        self.compilers = (fw_compiler, bw_compiler, inference_compiler)
        self.partition_fn = partition_fn
        self.decompositions = decompositions
        self.runtimes = {}         # (training?, what the graphs were specialised to) -> runtime
        self.num_fixed_args = 0    # leading arguments that never change (lifted parameters)

    def prepare(self, args):
        self._runtime(args)

    def _runtime(self, args):
        """The compiled graphs for these arguments. The graphs are specialised to the shapes,
        strides, dtypes, requires_grad flags and Python values they were traced with, so other
        ones compile again."""
        training = is_grad_enabled() and any(
            isinstance(a, TensorImpl) and a.requires_grad for a in args)
        fixed = self.num_fixed_args
        key = (training, _autocast_state(), tuple(a.requires_grad for a in args[:fixed])) + tuple(
            (a._shape, a._get_strides(), a.dtype, a.requires_grad)
            if isinstance(a, TensorImpl) else a for a in args[fixed:])
        runtime = self.runtimes.get(key)
        if runtime is None:
            runtime = self.runtimes[key] = _compile(self, args, training)
        return runtime

    def __call__(self, *args):
        return self._runtime(args)(args)


_NOTHING_TO_TURN_OFF = contextlib.nullcontext()


def _without_autocast():
    """``autocast("cpu", enabled=False)`` around a compiled graph (its casts are in the graph),
    or, where autocast is off already (the usual case), a reusable empty context: making and
    entering the autocast object cost ~3 us per graph call."""
    if dispatch_state().include & autocast_mode._AUTOCAST_BIT:
        return autocast("cpu", enabled=False)
    return _NOTHING_TO_TURN_OFF


def _autocast_state():
    """Autocast on or off, and its dtype: the traced graph holds the casts autocast made, so a
    graph traced in one state is not the graph of another."""
    return bool(dispatch_state().include & autocast_mode._AUTOCAST_BIT), autocast_mode._dtype[-1]


class _Trace:
    """What tracing learned besides the graph: output layout, mutations, aliasing."""

    def __init__(self):
        self.out_spec = None
        self.num_mutated = 0
        self.mutated_indices = []     # input index of each mutated input, in output order
        self.mutated_names = []       # the placeholder of each mutated input, in output order
        self.output_aliases = {}      # flat output index -> (input index, view chain)
        self.num_outputs = 0
        self.grad_input_indices = []  # inputs that get a gradient, in joint output order
        self.inputs_without_grad = set()  # requires_grad inputs the outputs do not depend on
        self.diff_output_indices = []  # flat outputs that take a tangent
        self.uses_rng = False
        self.rng_draws = 0           # 64-bit draws the graph's random ops take from rng_state


def _trace(fn, args, training, decompositions):
    """Trace ``fn`` into the inference or joint graph (see the module docstring)."""
    graph = Graph()
    device = next((a.device for a in args if isinstance(a, TensorImpl)), "cpu")
    mode = ProxyTensorMode(graph, decompositions, functionalize=True, device=device)
    info = _Trace()
    metas, names = [], []
    for i, a in enumerate(args):
        if isinstance(a, TensorImpl):
            m = to_meta(a)
            if not training:
                m = m.detach()
            node = graph.placeholder(f"primals_{i + 1}")
            names.append(node.name)
            node.meta["val"] = to_meta(a).detach()
            mode.bind(m, node)
            metas.append(m)
        else:
            metas.append(a)
    try:
        with saved_tensors_hooks(keep_saved_tensor, keep_saved_tensor), mode:
            with autograd.set_grad_enabled(training):
                out = fn(*metas)
    except RuntimeError as e:
        if "leaf Variable that requires grad is being used in an in-place" in str(e):
            raise NotImplementedError(
                "AOT autograd: the program writes in place to an input that requires grad; "
                "strata cannot yet carry that write's history back to the input. Write to a "
                "clone, or run this part eagerly") from e
        if "different from other tensors on meta" not in str(e):
            raise
        raise RuntimeError(
            "AOT autograd traces on meta tensors, and the program read a real tensor that is "
            "not one of its arguments (a closure or a global). Pass it as an argument, or "
            "compile the module (aot_module_simplified lifts parameters, buffers and tensor "
            f"attributes to inputs). ({e})") from e
    flat_out, info.out_spec = tree_flatten(out)
    tensor_inputs = [m for m in metas if isinstance(m, TensorImpl)]
    mutated = FN.mutated_inputs(mode, tensor_inputs)
    info.num_mutated = len(mutated)
    info.mutated_indices = [i for i, _, _ in mutated]
    info.mutated_names = [names[i] for i, _, _ in mutated]
    info.num_outputs = len(flat_out)
    info.output_aliases = _output_aliases(mode, metas, flat_out)
    outputs = [node for _, _, node in mutated]
    outputs += [None if k in info.output_aliases else
                mode.node_of(o) if isinstance(o, TensorImpl) else o
                for k, o in enumerate(flat_out)]
    if training:
        outputs += _trace_backward(mode, graph, info, metas, flat_out)
    info.uses_rng = mode.rng.state_node is not None
    info.rng_draws = mode.rng.drawn
    graph.output(tuple(outputs))
    graph.eliminate_dead_code()
    gm = GraphModule(dict(mode.constants), graph, "GraphModule")
    graph.lint()
    return gm, info


def _output_aliases(mode, metas, flat_out):
    """``{output index: (input index, view chain)}`` for outputs that are inputs or views of
    inputs: the runtime returns the input itself or replays the views on it, so the output
    aliases the input as in eager (the graph does not compute it)."""
    input_ids = {id(m): i for i, m in enumerate(metas)}
    aliases = {}
    for k, o in enumerate(flat_out):
        if not isinstance(o, TensorImpl):
            continue
        if id(o) in input_ids:
            aliases[k] = (input_ids[id(o)], ())
            continue
        view = mode.views.info.get(id(o))
        if view is not None and view.view is o and id(view.base) in input_ids and not any(
                isinstance(a, TensorImpl) for _, rest, _, _ in view.chain for a in rest):
            aliases[k] = (input_ids[id(view.base)], view.chain)
    return aliases


def _trace_backward(mode, graph, info, metas, flat_out):
    """Add tangent inputs and autograd's backward of the outputs to the graph."""
    diff = [k for k, o in enumerate(flat_out) if isinstance(o, TensorImpl) and o.requires_grad
            and k not in info.output_aliases]
    tensor_inputs = [m for m in metas if isinstance(m, TensorImpl)]
    grad_inputs = [i for i, m in enumerate(tensor_inputs) if m.requires_grad]
    info.diff_output_indices, info.grad_input_indices = diff, grad_inputs
    last_placeholder = [n for n in graph.nodes if n.op == "placeholder"][-1]
    tangents = []
    with graph.inserting_after(last_placeholder):
        for j, k in reversed(list(enumerate(diff))):
            node = graph.placeholder(f"tangents_{j + 1}")
            # Tangents are traced contiguous, and made contiguous at run time, as PyTorch does.
            tangent = to_meta(flat_out[k]).detach().contiguous()
            node.meta["val"] = tangent
            mode.bind(tangent, node)
            tangents.insert(0, tangent)
    if not diff or not grad_inputs:
        return [None] * len(grad_inputs)
    # The backward runs where eager's would: outside autocast (the forward's casts are in the
    # graph, so each derivative sees the dtypes autocast chose).
    with saved_tensors_hooks(keep_saved_tensor, keep_saved_tensor), mode, \
            autocast("cpu", enabled=False):
        grads = autograd.grad([flat_out[k] for k in diff], [tensor_inputs[i] for i in grad_inputs],
                              tangents, allow_unused=True)
    info.inputs_without_grad = {i for i, g in zip(grad_inputs, grads) if g is None}
    return [mode.node_of(g) if g is not None else None for g in grads]


def _compile(aot, args, training):
    fw_compiler, bw_compiler, inference_compiler = aot.compilers
    start = time.perf_counter()
    gm, info = _trace(aot.fn, list(args), training, aot.decompositions)
    if training and not info.diff_output_indices:
        # No output takes a gradient (a traced optimizer step): nothing to differentiate, so
        # the graph runs as an inference graph, which writes its mutations in place.
        training = False
        gm, info = _trace(aot.fn, list(args), training, aot.decompositions)
    traced = time.perf_counter()
    example = [n.meta["val"] for n in gm.graph.nodes if n.op == "placeholder"]
    # the examples are meta tensors: the device the graph runs on travels beside them
    gm.meta["device"] = next((a.device for a in args if isinstance(a, TensorImpl)), None)
    # Note [Input mutations]: the first outputs are the new values of mutated inputs, in the
    # order of these placeholders; inductor writes them in place where it can.
    gm.meta["num_mutated"] = info.num_mutated
    gm.meta["mutated_inputs"] = info.mutated_names
    if not training:
        _notify("inference", gm, seconds=traced - start)
        return _InferenceRuntime(inference_compiler(gm, example), info)
    _notify("joint", gm, seconds=traced - start)
    num_fwd_outputs = info.num_mutated + info.num_outputs
    fw_gm, bw_gm = aot.partition_fn(gm, example, num_fwd_outputs=num_fwd_outputs)
    fw_gm.meta["device"] = bw_gm.meta["device"] = gm.meta["device"]
    fw_gm.meta["num_mutated"] = info.num_mutated
    fw_gm.meta["mutated_inputs"] = info.mutated_names
    partitioned = time.perf_counter()
    saved = saved_bytes(bw_gm)
    _notify("forward", fw_gm, seconds=partitioned - traced, saved_bytes=saved)
    _notify("backward", bw_gm, saved_bytes=saved)
    fw_example = [n.meta.get("val", 0) for n in fw_gm.graph.nodes if n.op == "placeholder"]
    fw_outputs = gm.graph.output_node().args[0][:num_fwd_outputs]
    tensor_positions = [p for p, o in enumerate(fw_outputs)
                        if isinstance(o, Node) and isinstance(o.meta.get("val"), TensorImpl)]
    return _TrainingRuntime(fw_compiler(fw_gm, fw_example), bw_gm, bw_compiler, info,
                            num_fwd_outputs, tensor_positions)


def _contiguous(t):
    """``t.contiguous()`` without its dispatch where ``t`` already is (a loss's implicit 1.0)."""
    return t if t.is_contiguous() else t.contiguous()


def _rng_snapshot():
    """The default generator's state now: the ``rng_state`` input of graphs with random ops."""
    return FN.rng_state_tensor(default_generator)


def _advance_default_generator(info):
    """Move the default generator past what the graph drew, as eager would have."""
    default_generator.bit_generator.bit_generator.advance(info.rng_draws)


class _InferenceRuntime:
    def __init__(self, compiled, info):
        self.compiled, self.info = compiled, info

    def __call__(self, args):
        info = self.info
        graph_args = [a for a in args if isinstance(a, TensorImpl)]
        if info.uses_rng:
            graph_args.insert(0, _rng_snapshot())
        with no_grad(), _without_autocast():
            results = list(self.compiled(*graph_args))
        if info.uses_rng:
            _advance_default_generator(info)
        return _epilogue(info, args, results[:info.num_mutated], results[info.num_mutated:])


def _epilogue(info, args, new_values, outputs):
    """Write mutated inputs back and restore outputs that are inputs; rebuild the pytree."""
    tensor_args = [a for a in args if isinstance(a, TensorImpl)]
    with no_grad():
        for i, value in zip(info.mutated_indices, new_values):
            if value is tensor_args[i]:     # the compiled graph wrote it in place
                value._version_counter().value += 1     # as copy_ would
            else:
                tensor_args[i].copy_(value)
    for k, (i, chain) in info.output_aliases.items():
        value = args[i]
        for func, rest, kwargs, index in chain:
            value = func(value, *rest, **kwargs)
            if index is not None:
                value = value[index]
        outputs[k] = value
    return tree_unflatten(outputs, info.out_spec)


class _TrainingRuntime:
    """Runs the compiled forward and backward inside one autograd.Function. The Function
    returns only the forward's tensor outputs; constants and outputs that alias inputs are
    put back around it (``_epilogue``)."""

    def __init__(self, compiled_fw, bw_gm, bw_compiler, info, num_fwd_outputs,
                 tensor_positions):
        self.info = info
        runtime = self

        class CompiledFunction(Function):
            @staticmethod
            def forward(ctx, seed, all_outputs, *tensor_args):
                fw_args = ([seed] if info.uses_rng else []) + list(tensor_args)
                with _without_autocast():
                    results = list(compiled_fw(*fw_args))
                outs, saved = results[:num_fwd_outputs], results[num_fwd_outputs:]
                all_outputs.extend(outs)
                tensors = [s for s in saved if isinstance(s, TensorImpl)]
                ctx.save_for_backward(*tensors)
                ctx.saved_layout = [None if isinstance(s, TensorImpl) else s for s in saved]
                ctx.mark_non_differentiable(*[
                    outs[p] for p in tensor_positions if p < info.num_mutated
                    or p - info.num_mutated not in info.diff_output_indices])
                return tuple(outs[p] for p in tensor_positions)

            @staticmethod
            def backward(ctx, *grad_outputs):
                saved_tensors = iter(ctx.saved_tensors)
                saved = [next(saved_tensors) if s is None else s for s in ctx.saved_layout]
                grads_by_position = dict(zip(tensor_positions, grad_outputs))
                tangents = [_contiguous(grads_by_position[info.num_mutated + k])
                            for k in info.diff_output_indices]
                with _without_autocast():
                    grads = runtime.backward_fn()(*saved, *tangents)
                result = [None] * (2 + runtime.num_inputs)
                for k, i in enumerate(info.grad_input_indices):
                    result[2 + i] = grads[k]
                return tuple(result)

        self.function = CompiledFunction
        self.tensor_positions = tensor_positions
        self.bw_gm, self.bw_compiler, self._compiled_bw = bw_gm, bw_compiler, None
        self.num_inputs = 0

    def backward_fn(self):
        """The backward graph is compiled at the first backward, as PyTorch does."""
        if self._compiled_bw is None:
            example = [n.meta.get("val", 0) for n in self.bw_gm.graph.nodes
                       if n.op == "placeholder"]
            self._compiled_bw = self.bw_compiler(self.bw_gm, example)
        return self._compiled_bw

    def __call__(self, args):
        info = self.info
        tensor_args = [a for a in args if isinstance(a, TensorImpl)]
        # An input no gradient reaches gets no edge: backward must not wake its history.
        tensor_args = [a.detach() if i in info.inputs_without_grad else a
                       for i, a in enumerate(tensor_args)]
        self.num_inputs = len(tensor_args)
        seed = _rng_snapshot() if info.uses_rng else None
        results = []
        tensors = self.function.apply(seed, results, *tensor_args)
        if not isinstance(tensors, tuple):
            tensors = (tensors,)
        for p, t in zip(self.tensor_positions, tensors):
            results[p] = t      # the Function's outputs carry the autograd history
        if info.uses_rng:
            _advance_default_generator(info)
        return _epilogue(info, args, results[:info.num_mutated], results[info.num_mutated:])
