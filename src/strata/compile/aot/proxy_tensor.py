"""``make_fx``: trace a function at the aten level, through strata's dispatcher, into a Graph.

A dispatch mode (``ProxyTensorMode``) sits on the Python key, below autograd, so it sees exactly
the primitive ops the backends would run: composite ops are already decomposed, and a backward
pass run under the mode shows the ops of autograd's own derivative formulas. For each op the
mode runs the op on meta tensors (shapes, dtypes and strides without data) and records a
``call_function`` node whose target is the ``OpOverload``; tensors are tied to the nodes that
hold their current values. With ``functionalize=True`` mutations and views are rewritten as they
are recorded (see ``functionalize.py``).

    >>> gm = make_fx(lambda x: x.relu() * 2)(strata.randn(3))
    >>> print(gm.code)   # relu = strata.ops.aten.relu.default(arg0_1) ...
"""

import operator

from ...autograd.graph import saved_tensors_hooks
from ...backends.meta import meta_tensor
from ...core.device import device as Device
from ...core.tensor_impl import TensorImpl
from ...dispatch.modes import TorchDispatchMode, pop_mode, push_mode
from ...dispatch.tls import _state
from ...func.pytree import tree_flatten
from ...ops.op import TensorSpec
from ..fx import Graph, GraphModule
from ..fx.node import map_aggregate
from . import functionalize as FN


def _geometry(t):
    return (id(t._storage), t._offset, t._shape, t._get_strides(), t.dtype)


def to_meta(t):
    """A meta tensor with ``t``'s shape, strides, dtype and requires_grad (no data)."""
    m = meta_tensor(TensorSpec(tuple(t._shape), t.dtype, t._get_strides()))
    if t.requires_grad:
        m.requires_grad_(True)
    return m


class ProxyTensorMode(TorchDispatchMode):
    """Records every op it sees into ``graph`` (see the module docstring)."""

    def __init__(self, graph: Graph, decompositions=None, functionalize=False, device="cpu"):
        self.graph = graph
        self.decompositions = dict(decompositions or {})
        self.functionalize = functionalize
        self.device = device          # where the traced program's tensors will really live
        self.values = {}              # id(tensor) -> (tensor, node holding its current value)
        self.by_geometry = {}         # (storage, offset, shape, strides, dtype) -> same pair
        self.constants = {}           # get_attr target -> a real tensor the program read
        self.node_meta = {}           # copied into every recorded node (e.g. stack_trace)
        self.views = FN.ViewTracker()
        self.rng = FN.RngInputs()

    # --- tensors <-> nodes ----------------------------------------------------------------------
    def bind(self, t, node):
        entry = (t, node)
        self.values[id(t)] = entry
        self.by_geometry[_geometry(t)] = entry

    def lookup(self, t):
        entry = self.values.get(id(t))
        if entry is None or entry[0] is not t:
            entry = self.by_geometry.get(_geometry(t))
        return entry

    def node_of(self, t):
        """The node holding ``t``'s current value; a real tensor the graph never saw becomes a
        constant (``get_attr``)."""
        entry = self.lookup(t)
        if entry is None:
            return self._constant(t)
        t_known, node = entry
        if self.functionalize:
            node = self.views.refresh(self, t_known, node)
        return node

    def _constant(self, t):
        if t.device.type == "meta":
            raise RuntimeError("make_fx: a meta tensor that is neither an input nor made by a "
                               "traced op was used; trace with it as an input")
        name = f"_tensor_constant{len(self.constants)}"
        self.constants[name] = t
        with self.graph.inserting_before(self._first_non_placeholder()):
            node = self.graph.get_attr(name)
        node.meta["val"] = to_meta(t)
        self.bind(t, node)   # read again (or written in place), it is this node, not a new one
        return node

    def _first_non_placeholder(self):
        for node in self.graph.nodes:
            if node.op != "placeholder":
                return node
        return None

    def holder(self, like, node):
        """A fresh meta tensor standing for ``node`` (to run more ops on while recording)."""
        m = to_meta(like).detach() if self.device is not None else _empty_like(like)
        self.bind(m, node)
        return m

    # --- recording ------------------------------------------------------------------------------
    def as_args(self, value):
        """Tensors -> their nodes; the meta device (tracing's stand-in) -> the real device."""
        def convert(a):
            if isinstance(a, TensorImpl):
                return self.node_of(a)
            if self.device is not None and isinstance(a, (Device, str)) and str(a) == "meta":
                return self.device
            return a
        return map_aggregate(value, convert)

    def meta_args(self, value):
        """The arguments to run an op on: real tensors the graph does not know become meta."""
        def convert(a):
            if isinstance(a, TensorImpl) and a.device.type != "meta":
                if self.lookup(a) is None:
                    self._constant(a)
                m = to_meta(a).detach()
                self.bind(m, self.node_of(a))
                return m
            return a
        if self.device is None:   # tracing real tensors: run as they are
            return value
        return map_aggregate(value, convert)

    def lift_fresh(self, value):
        """Real tensors a captured call made while tracing on meta (``strata.tensor([...])`` in
        the program) become graph constants read through meta stand-ins (PyTorch lifts them)."""
        if not _state.mode_stack or _state.mode_stack[-1] is not self:
            return value
        pop_mode()
        try:
            return self.meta_args(value)
        finally:
            push_mode(self)

    def record(self, func, args, kwargs, out, target=None):
        """Add the node for ``func(*args, **kwargs) -> out`` and tie ``out``'s tensors to it
        (``target``: what the node calls instead of ``func``; the node is named after ``func``)."""
        node = self.graph.create_node("call_function", target or func,
                                      self.as_args(tuple(args)), self.as_args(dict(kwargs)),
                                      name=func.schema.name)
        node.meta.update(self.node_meta)
        node.meta["val"] = map_aggregate(out, lambda a: to_meta(a).detach()
                                         if isinstance(a, TensorImpl) else a)
        if isinstance(out, (tuple, list)):
            for i, item in enumerate(out):
                if isinstance(item, TensorImpl):
                    item_node = self.graph.call_function(operator.getitem, (node, i))
                    item_node.meta.update(self.node_meta)
                    item_node.meta["val"] = node.meta["val"][i]
                    self.bind(item, item_node)
        elif isinstance(out, TensorImpl):
            self.bind(out, node)
        return node

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        # a composite reaches the tracer only as CompositeExplicitAutograd (one autograd node,
        # e.g. split): its decomposition still leaves primitives in the graph
        decomposition = self.decompositions.get(func) or func.decomposition
        if decomposition is not None:
            with self:
                return decomposition(*args, **kwargs)
        if self.functionalize:
            result = FN.functional_call(self, func, args, kwargs)
            if result is not FN.NOT_HANDLED:
                return result
        return self.run_and_record(func, args, kwargs)

    def run_and_record(self, func, args, kwargs, target=None, record_kwargs=None):
        run_args, run_kwargs = self.meta_args(tuple(args)), self.meta_args(dict(kwargs))
        if self.device is not None and func.device_position is not None:
            run_kwargs = {**run_kwargs, "device": "meta"} if "device" in run_kwargs \
                else run_kwargs
        out = func(*run_args, **run_kwargs)
        self.record(func, run_args, kwargs if record_kwargs is None else record_kwargs, out,
                    target)
        if func.is_view and self.functionalize:
            self.views.on_view(self, func, run_args, kwargs, out)
        return out


def current_tracer():
    """The innermost ProxyTensorMode being traced with, or None."""
    for mode in reversed(_state.mode_stack):
        if isinstance(mode, ProxyTensorMode):
            return mode
    return None


def make_fx(f, decomposition_table=None, tracing_mode: str = "real", *,
            functionalize: bool = False):
    """``make_fx(f)(*args)`` traces ``f`` at the aten level into a GraphModule.

    ``tracing_mode="real"`` runs the ops on the given tensors; ``"fake"`` (or ``"meta"``) runs
    them on meta tensors of the same shapes, so nothing is computed. ``decomposition_table``
    maps ops to Python functions that replace them (``decompositions.py``); ``functionalize``
    removes mutation and aliasing from the graph.
    """
    if tracing_mode not in ("real", "fake", "meta"):
        raise AssertionError(f"tracing_mode must be real/fake/symbolic, got {tracing_mode}")

    def traced(*args):
        leaves, _ = tree_flatten(list(args))
        graph = Graph()
        mode = ProxyTensorMode(graph, decomposition_table, functionalize,
                               device=None if tracing_mode == "real" else _device_of(leaves))
        inputs = []
        for i, leaf in enumerate(leaves):
            if isinstance(leaf, TensorImpl):
                value = leaf if tracing_mode == "real" else to_meta(leaf)
                node = graph.placeholder(f"arg{i}_1")
                node.meta["val"] = to_meta(leaf).detach()
                mode.bind(value, node)
                inputs.append(value)
            else:
                inputs.append(leaf)
        call_args = _rebuild(args, inputs)
        with saved_tensors_hooks(keep_saved_tensor, keep_saved_tensor), mode:
            out = f(*call_args)
        if functionalize:
            FN.write_back_input_mutations(mode, graph, [x for x in inputs
                                                        if isinstance(x, TensorImpl)])
        graph.output(mode.as_args(out))
        root = dict(mode.constants)
        gm = GraphModule(root, graph, "GraphModule")
        graph.lint()
        return gm
    return traced


def _empty_like(t):
    from ...creation import empty_strided
    return empty_strided(tuple(t._shape), t._get_strides(), dtype=t.dtype, device=t.device)


def keep_saved_tensor(t):
    """Saved-tensor hook: keep the traced tensor itself, so backward formulas read the very
    tensors the mode has tied to nodes."""
    return t


def _device_of(leaves):
    for leaf in leaves:
        if isinstance(leaf, TensorImpl):
            return leaf.device
    return "cpu"


def _rebuild(args, flat):
    from ...func.pytree import tree_unflatten
    _, spec = tree_flatten(list(args))
    return tree_unflatten(flat, spec)
