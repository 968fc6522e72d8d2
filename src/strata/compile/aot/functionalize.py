"""Functionalisation: record a program with mutation and aliasing as a pure dataflow graph.

As ``FunctionalTensorMode`` does, while tracing:

- an in-place op (``x.add_(y)``) is recorded as its out-of-place twin (``add``), and ``x`` is
  tied to the new node, so later reads of ``x`` read the new value;
- a view op is recorded as it is, and the tracker remembers how the view was made from its base
  (the chain of view ops). Writing into a view writes the new value back into the base
  (``as_strided_scatter`` of the view's geometry), and any other view of that base is
  *replayed* from the base's new value the next time it is read;
- ``native_batch_norm`` in training, which updates its running statistics in place, is
  recorded without them plus the running-average arithmetic, as PyTorch's
  ``_native_batch_norm_legit_functional`` does;
- a random op without an explicit generator is recorded as ``seeded_random(op, rng_state,
  offset, ...)``: it draws from an input of the graph (``rng_state``, the default generator's
  state when the graph is called) advanced by the draws of the random ops before it, so the
  graph draws what eager would, and running it twice from the same state (or recomputing an op
  in the backward) gives the same numbers.

What mutation of the *inputs* remains (``x.add_(1)`` on an argument, BatchNorm buffers) is read
from the tracker at the end: ``mutated_inputs`` lists them, and the caller either returns the new
values (AOT: the runtime wrapper copies them back) or adds ``copy_`` nodes (``make_fx``).
"""

import numpy as np

from ... import ops as _ops  # noqa: F401  (the op families register into the namespace)
from ...core import dtype as D
from ...ops.meta_rules import is_non_overlapping_and_dense
from ...ops.op import aten
from ...creation import empty
from ...random import Generator
from ...tensor_new import tensor

NOT_HANDLED = object()
_MASK64 = (1 << 64) - 1


def rng_state_tensor(generator: Generator):
    """A generator's PCG64 state as an int64 tensor of 4 words (state hi/lo, increment hi/lo):
    a tensor, so the ``rng_state`` graph input is one more tensor input to a backend."""
    words = []
    for key in ("state", "inc"):
        value = generator.bit_generator.bit_generator.state["state"][key]
        words += [value >> 64, value & _MASK64]
    return tensor([w - (1 << 64) if w >= 1 << 63 else w for w in words], dtype=D.int64)


def seeded_random(op, rng_state, offset: int, *args, **kwargs):
    """Run the random ``op`` drawing from ``rng_state`` (see ``rng_state_tensor``) advanced by
    ``offset`` draws: how a functionalised graph calls a random op."""
    words = [w & _MASK64 for w in rng_state.tolist()]
    bits = np.random.PCG64()
    bits.state = {"bit_generator": "PCG64", "has_uint32": 0, "uinteger": 0,
                  "state": {"state": words[0] << 64 | words[1], "inc": words[2] << 64 | words[3]}}
    bits.advance(offset)
    generator = Generator()
    generator.bit_generator = np.random.Generator(bits)
    return op(*args, **{**kwargs, "generator": generator})


# Random ops that draw exactly one 64-bit value per output element (float64 uniforms), so the
# offset of the next op is known while tracing.
_ONE_DRAW_PER_ELEMENT = {"bernoulli.p", "bernoulli", "uniform_", "bernoulli_.float",
                         "bernoulli_.Tensor", "exponential_", "geometric_", "cauchy_"}


class RngInputs:
    """The graph's ``rng_state`` placeholder (made at the first random op) and the offset of
    each random op into that stream. Ops are laid out one after another, as eager draws them,
    so the compiled forward draws the same numbers as eager from the same seed; after an op
    whose draw count depends on the values (normal, randint...), later offsets only keep the
    streams apart."""

    def __init__(self):
        self.state_node = None
        self.drawn = 0

    def next_offset(self, mode, func, out_numel):
        """The ``rng_state`` node and this op's offset into the stream."""
        if self.state_node is None:
            first = next(iter(mode.graph.nodes), None)
            with mode.graph.inserting_before(first):
                self.state_node = mode.graph.placeholder("rng_state")
            self.state_node.meta["val"] = _meta_state_words()
        offset = self.drawn
        self.drawn += out_numel if func.name in _ONE_DRAW_PER_ELEMENT else 64 * out_numel + 1024
        return self.state_node, offset


def _meta_state_words():
    """What the ``rng_state`` placeholder holds, as a meta tensor."""
    return empty(4, dtype=D.int64, device="meta")


class _ViewInfo:
    __slots__ = ("view", "base", "chain", "version")

    def __init__(self, view, base, chain, version):
        self.view, self.base, self.chain, self.version = view, base, chain, version


class ViewTracker:
    """Which traced tensors are views of which base, and whether their node is stale."""

    def __init__(self):
        self.info = {}       # id(view) -> _ViewInfo
        self.version = {}    # id(base) -> number of writes into it so far

    def on_view(self, mode, func, args, kwargs, out):
        parent = self.info.get(id(args[0]))
        base = parent.base if parent is not None else args[0]
        prefix = parent.chain if parent is not None else ()
        outs = out if isinstance(out, (tuple, list)) else (out,)
        for i, view in enumerate(outs):
            step = (func, args[1:], kwargs, i if isinstance(out, (tuple, list)) else None)
            self.info[id(view)] = _ViewInfo(view, base, prefix + (step,),
                                            self.version.get(id(base), 0))

    def refresh(self, mode, t, node):
        """``t``'s node, replayed from its base if the base was written since it was made."""
        info = self.info.get(id(t))
        if info is None or info.view is not t:
            return node
        current = self.version.get(id(info.base), 0)
        if info.version == current:
            return node
        value = mode.holder(info.base, mode.node_of(info.base))
        with mode:
            for func, rest, kwargs, index in info.chain:
                value = func(value, *rest, **kwargs)
                if index is not None:
                    value = value[index]
        new_node = mode.lookup(value)[1]
        info.version = current
        mode.bind(t, new_node)
        return new_node

    def on_write(self, mode, t, new_node):
        """``t`` now holds ``new_node``'s value: update its base and make other views stale."""
        info = self.info.get(id(t))
        if info is None or info.view is not t:
            mode.bind(t, new_node)
            self.version[id(t)] = self.version.get(id(t), 0) + 1
            return
        base = info.base
        new_base = _scatter_into_base(mode, base, t, new_node)
        mode.bind(base, new_base)
        self.version[id(base)] = self.version.get(id(base), 0) + 1
        info.version = self.version[id(base)]
        mode.bind(t, new_node)


def _scatter_into_base(mode, base, view, src_node):
    """The node computing ``base`` with ``view``'s elements replaced by ``src_node``'s value:
    ``as_strided_scatter`` of the view's geometry, the functional inverse PyTorch's
    functionalization records (one pointwise formula for inductor, no index tensor).

    Note [Offsets of functionalized writes]: as_strided_scatter places the view in self's
    storage, but a graph input or constant may start anywhere in its storage at run time (its
    traced meta starts at 0; guards check sizes and strides, not offsets). A view starting where
    its base starts says so with ``storage_offset=None``; a view elsewhere in the result of an
    op that is not a view (offset 0 in eager too) gives its offset; else the base is cloned
    first (a fresh tensor, offset 0, the same strides when it is dense), which inductor fuses
    into the write."""
    shape, strides = tuple(base.shape), tuple(base.stride())
    offset = view.storage_offset() - base.storage_offset()
    base_node = mode.node_of(base)
    fresh = (base_node.op == "call_function" and not getattr(base_node.target, "is_view", True)
             and base.storage_offset() == 0)
    if offset and not fresh and not is_non_overlapping_and_dense(shape, strides):
        raise NotImplementedError(
            "functionalization: writing in place into a view of an input or constant that is "
            "not dense (a slice with steps, an expanded tensor) is not supported by strata's "
            "AOT autograd; pass a contiguous tensor")
    base_value = mode.holder(base, base_node)
    src_value = mode.holder(view, src_node)
    with mode:
        if offset and not fresh:
            base_value = aten.clone.default(base_value)
        result = aten.as_strided_scatter.default(base_value, src_value, tuple(view.shape),
                                                 tuple(view.stride()), offset or None)
    return mode.lookup(result)[1]


# --- op rules ----------------------------------------------------------------------------------

_OUT_OF_PLACE_NAMES = {"pow_.Tensor": ("pow", "Tensor_Tensor")}


def out_of_place(op):
    """``aten.add_.Tensor`` -> ``aten.add.Tensor``."""
    base, overload = _OUT_OF_PLACE_NAMES.get(
        op.name, (op.schema.name.rstrip("_"), op.schema.overload or "default"))
    try:
        return getattr(getattr(aten, base), overload)
    except AttributeError:
        raise NotImplementedError(f"functionalization: {op.qualname} has no out-of-place "
                                  f"variant that AOT autograd can use") from None


def functional_call(mode, func, args, kwargs):
    """Record ``func`` without mutation; NOT_HANDLED when the plain recording is right."""
    if func.is_inplace:
        return _inplace(mode, func, args, kwargs)
    if func is aten.native_batch_norm.default and args[5] and args[3] is not None:
        return _batch_norm_training(mode, args, kwargs)
    if _is_unseeded_random(kwargs):
        return _random(mode, func, args, kwargs)
    return NOT_HANDLED


def _is_unseeded_random(kwargs):
    return "generator" in kwargs and kwargs["generator"] is None


def _random(mode, func, args, kwargs):
    """Record a random op as ``seeded_random(op, rng_state, offset, ...)``."""
    out = func(*mode.meta_args(tuple(args)), **mode.meta_args(dict(kwargs)))
    state, offset = mode.rng.next_offset(mode, func, out.numel())
    mode.record(func, (func, state, offset) + tuple(args), kwargs, out, target=seeded_random)
    return out


def _inplace(mode, func, args, kwargs):
    self = args[0]
    value = mode.holder(self, mode.node_of(self))
    if func is aten.copy_.default:
        with mode:
            new = aten._to_copy.default(args[1].expand(list(self.shape)), dtype=self.dtype)
    elif func is aten.fill_.Scalar:
        with mode:
            new = aten.full.default(list(self.shape), args[1], dtype=self.dtype,
                                    device=mode.device or self.device)
    elif not _is_unseeded_random(kwargs) and out_of_place(func).decomposition is None:
        with mode:
            new = out_of_place(func)(value, *args[1:], **kwargs)
            if new.dtype != self.dtype:
                new = aten._to_copy.default(new, dtype=self.dtype)
    else:
        # A random in-place op (uniform_), or one whose out-of-place twin is itself "clone, then
        # the in-place op" (index_add): record the in-place op on a clone, a write into a value
        # nothing else can see.
        with mode:
            new = aten.clone.default(value)
        clone_args = (new,) + tuple(args[1:])
        if _is_unseeded_random(kwargs):
            _random(mode, func, clone_args, kwargs)
        else:
            mode.run_and_record(func, clone_args, kwargs)
    new_node = mode.lookup(new)[1]
    run_args = mode.meta_args(tuple(args))
    func(*run_args, **kwargs)           # keep the meta tensor's version counter honest
    mode.views.on_write(mode, self, new_node)
    return self


def _batch_norm_training(mode, args, kwargs):
    x, weight, bias, running_mean, running_var, _, momentum, eps = args
    out = mode.run_and_record(aten.native_batch_norm.default,
                              (x, weight, bias, None, None, True, momentum, eps), kwargs)
    dims = [0] + list(range(2, x.ndim))
    n = x.numel() // x.shape[1]
    mean = mode.holder(running_mean, mode.node_of(running_mean))
    var = mode.holder(running_var, mode.node_of(running_var))
    with mode:
        batch_var = aten.var.correction(x, dims, correction=1 if n > 1 else 0)
        new_mean = aten.add.Tensor(aten.mul.Tensor(mean, 1 - momentum),
                                   aten.mul.Tensor(out[1], momentum))
        new_var = aten.add.Tensor(aten.mul.Tensor(var, 1 - momentum),
                                  aten.mul.Tensor(batch_var, momentum))
    mode.views.on_write(mode, running_mean, mode.lookup(new_mean)[1])
    mode.views.on_write(mode, running_var, mode.lookup(new_var)[1])
    return out


def mutated_inputs(mode, inputs):
    """``[(index, input, node of its final value)]`` for each input the program wrote to."""
    result = []
    for i, t in enumerate(inputs):
        current = mode.node_of(t)
        if current.op != "placeholder":
            result.append((i, t, current))
    for name, t in mode.constants.items():
        if mode.node_of(t).op != "get_attr":
            raise RuntimeError(
                f"functionalization: the program writes in place to a tensor of shape "
                f"{list(t.shape)} that is neither an input nor a buffer ({name}); make it a "
                f"buffer (register_buffer) or pass it as an argument")
    return result


def write_back_input_mutations(mode, graph, inputs):
    """End the graph with ``copy_(input, new_value)`` for each mutated input (``make_fx``)."""
    placeholders = [n for n in graph.nodes if n.op == "placeholder" and n.target != "rng_state"]
    for i, _t, node in mutated_inputs(mode, inputs):
        graph.call_function(aten.copy_.default, (placeholders[i], node))
