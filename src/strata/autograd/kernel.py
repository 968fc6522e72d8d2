"""The autograd kernel: one boxed kernel, the backend fallback of every ``Autograd<Backend>`` key.

For each call it decides whether to record (grad mode on and some tensor argument requires grad).
If not, it redispatches at once — that is the path of every op that needs no gradient, so it is
a few attribute reads. If so, it looks up the op's derivative (``derivatives.py``), saves what the
formula needs, runs the op below autograd, and makes the outputs' ``grad_fn`` a node of the op
(``MulBackward0``) whose edges lead to the inputs' nodes. CompositeImplicitAutograd ops never get
here: they are decomposed above this key, so only primitives need a formula — and the
CompositeExplicitAutograd ones that PyTorch records as one node (``split``, ``var_mean``), whose
decomposition runs below this key (``backends/composite.py``).

In-place ops rebase history: the written tensor's ``grad_fn`` becomes the new node. Writing into a
view whose base has history puts a ``CopySlices`` node on the base (Note [View + in-place]);
those rules live in ``view_history.py``.
"""


from ..core import dtype as D
from ..core import trace
from ..core.tensor_impl import AutogradMeta, TensorImpl
from ..dispatch import dispatcher as DP
from ..dispatch.keys import functionality_bit
from ..dispatch.tls import _state
from ..ops import complex as CX
from ..ops import factory as F
from ..ops import shape as S
from . import anomaly_mode, derivatives, graph
from .graph import (
    Node,
    SavedVariable,
    _sequence,
    grad_accumulator,
    gradient_edge,
    requires_grad,
    set_history,
)
from .view_history import MULTI_OUTPUT, NO_GRAD, _rebase_history, check_inplace

AUTOGRAD_BIT = functionality_bit("Autograd")
_DERIVATIVE_OF = derivatives._lookup_cache   # op -> Derivative, filled by ``lookup``
_FLOATING = D.FLOATING
_REDISPATCH = DP._fast["redispatch"]   # the untraced one (a trace swaps DP.redispatch)


def autograd_kernel(op, ks, args):
    """The Autograd<Backend> fallback: record a node when grad mode is on and some tensor
    argument requires grad, else only redispatch (Note [One-frame record] for the former)."""
    if _state.grad_enabled:
        for i in op.tensor_positions:
            t = args[i]
            if isinstance(t, TensorImpl):
                ag = t._ag   # requires_grad(t), its common case inlined
                if ag is not None and ag.requires_grad or \
                        t._base is not None and requires_grad(t):
                    break
        else:
            if not (op.tensorlist_positions and _a_list_requires_grad(op, args)):
                return _unrecorded(op, ks, args)
    elif op.is_view:
        return _no_grad_view(op, ks, args)
    else:
        return _unrecorded(op, ks, args)
    # Note [One-frame record]: from here on the call is recorded, in the common case (no
    # ``Tensor[]`` argument, non-view inputs) in this one frame: the edges, the node's view of
    # the arguments, the redispatch below autograd and the outputs' history are inlined; only the
    # node's ``__init__``, a leaf's AccumulateGrad (made on first need) and saved tensors add
    # frames. Views and tensor lists take ``_input_edges``.
    deriv = _DERIVATIVE_OF.get(op) or derivatives.lookup(op)
    inplace = op.is_inplace
    if inplace:
        check_inplace(args[0])
    if deriv is derivatives.NON_DIFFERENTIABLE or \
            inplace and args[0].dtype.category < _FLOATING:   # the write cannot carry a grad
        return redispatch_below_autograd(op, ks, args)
    if deriv is None:
        return _record_not_implemented(op, ks, args)
    saved = list(args)   # the node's view of the arguments: tensors dropped unless saved
    if deriv.has_lists:
        edges, metas, needs = _input_edges(deriv, args)
        for pos, is_list in deriv.slots:
            a = saved[pos]
            if is_list:
                saved[pos] = [_NOT_SAVED if hasattr(t, "_ag") else t for t in a]
            elif hasattr(a, "_ag"):
                saved[pos] = _NOT_SAVED
    else:
        edges, metas, needs = [], [], []
        for pos, _ in deriv.slots:   # gradient_edge of each, its common cases inlined
            a = args[pos]
            ag = getattr(a, "_ag", _NOT_TENSOR)
            if ag is _NOT_TENSOR:   # an optional tensor left None
                edge, meta = _NO_EDGE, None
            else:
                saved[pos] = _NOT_SAVED
                meta = (a._shape, a.dtype, a.device)
                fn = None if ag is None else ag.grad_fn
                if a._base is not None:   # a view: its grad_fn may need remaking first
                    vc = a._vc
                    if fn is None or ag.attr_version != (0 if vc is None else vc.value):
                        edge = gradient_edge(a)
                    else:
                        edge = (fn, ag.output_nr)
                elif fn is not None:
                    edge = (fn, ag.output_nr)
                elif ag is None or not ag.requires_grad:
                    edge = _NO_EDGE
                else:   # a leaf: its AccumulateGrad while the graph holds it
                    ref = ag.grad_accumulator
                    acc = None if ref is None else ref()
                    edge = (acc if acc is not None else grad_accumulator(a), 0)
            edges.append(edge)
            metas.append(meta)
            needs.append(edge[0] is not None)
        edges, metas, needs = tuple(edges), tuple(metas), tuple(needs)
    if deriv.input_saves:
        deriv.save_into(saved, args, needs, inplace)
    node = (deriv.fixed_node_class or deriv.node_class(args))(deriv, edges, metas, needs,
                                                              tuple(saved))
    if trace.active:
        _report_node(node, op)
    s = _state   # the redispatch below autograd, inlined (``redispatch_below_autograd``)
    prev = s.exclude
    s.exclude = prev | AUTOGRAD_BIT
    try:
        entry = op._dispatch_cache.get(ks) if DP.redispatch is _REDISPATCH else None
        if entry is not None and not entry[0].boxed:
            out = entry[0].fn(*args)
        else:
            out = DP.redispatch(op, ks, args)
    finally:
        s.exclude = prev
    if isinstance(out, (tuple, list)):
        outputs = out
        # None: an output the op's mask left out (``native_layer_norm_backward``)
        node._output_meta = tuple([(t._shape, t.dtype, t.device) if t is not None else None
                                   for t in outputs])
    else:
        outputs = (out,)
        node._output_meta = ((out._shape, out.dtype, out.device),)
    if deriv.saves_result:
        node._results = deriv.save_results(node, outputs, needs)
    if anomaly_mode.ever_enabled and anomaly_mode._state.enabled:
        node._trace = anomaly_mode.forward_stack()
    if inplace:
        _rebase_history(args[0], node)
        return out
    is_view = op.is_view
    differentiable = deriv.differentiable_outputs
    for k, t in enumerate(outputs):
        if t is not None and t.dtype.category >= _FLOATING and \
                (differentiable is None or differentiable[k]):
            ag = t._ag   # set_history, inlined
            if ag is None:
                ag = t._ag = AutogradMeta(True, node, k)
            else:
                ag.requires_grad = True
                ag.grad_fn = node
                ag.output_nr = k
            if is_view:
                vc = t._vc   # t._version, inlined
                ag.attr_version = 0 if vc is None else vc.value
    if is_view:   # Note [Multi-output views]: mark split's pieces, and views of a piece
        if outputs is out:
            for t in outputs:
                if t._ag is not None:
                    t._ag.creation_meta = MULTI_OUTPUT
        else:
            source = args[0]._ag
            if source is not None and source.creation_meta is not None and \
                    source.creation_meta == MULTI_OUTPUT and out._ag is not None:
                out._ag.creation_meta = MULTI_OUTPUT
    return out




def _a_list_requires_grad(op, args):
    for i in op.tensorlist_positions:
        for t in args[i]:
            if t is not None and requires_grad(t):
                return True
    return False


def _unrecorded(op, ks, args):
    """No node to record: redispatch (the cached kernel's fast path inlined when not tracing)."""
    redispatch = DP.redispatch
    if redispatch is _REDISPATCH:
        entry = op._dispatch_cache.get(ks)
        if entry is not None and not entry[0].boxed:
            return entry[0].fn(*args)
    else:   # tracing (the traced redispatch is swapped in): say why no node is recorded
        trace.instant("autograd", "no node", op=op.qualname,
                      reason="no input requires grad" if _state.grad_enabled
                      else "grad mode is off")
    return redispatch(op, ks, args)


def _no_grad_view(op, ks, args):
    """A view made in no_grad mode of a tensor that requires grad is marked, so an in-place op
    on it in grad mode can be refused (PyTorch's CreationMeta::NO_GRAD_MODE)."""
    out = DP.redispatch(op, ks, args)
    if requires_grad(args[0]):
        for view in out if isinstance(out, (tuple, list)) else (out,):   # split's pieces too
            if getattr(view, "_base", None) is not None:
                ag = view._ag = AutogradMeta()
                ag.creation_meta = NO_GRAD
    return out


def redispatch_below_autograd(op, ks, args):
    """Run the op below autograd; ops the kernel calls inside are not recorded either
    (PyTorch's ``AutoDispatchBelowADInplaceOrView`` guard)."""
    s = _state
    prev = s.exclude
    s.exclude = prev | AUTOGRAD_BIT
    try:
        redispatch = DP.redispatch
        if redispatch is _REDISPATCH:   # not tracing: inline its cached-kernel fast path
            entry = op._dispatch_cache.get(ks)
            if entry is not None and not entry[0].boxed:
                return entry[0].fn(*args)
        return redispatch(op, ks, args)
    finally:
        s.exclude = prev


# --- recording -----------------------------------------------------------------------------------

class OpNode(Node):
    """The backward node of one primitive op call. Each op's node class (``MulBackward0``) is a
    subclass made by ``derivatives.derivative``; the formula reads saved values as attributes of
    the node (``ctx.self``, ``ctx.other``, ``ctx.result``), as ``grad_fn._saved_self`` does."""

    __slots__ = ("_deriv", "_args", "_results", "_needs", "_input_meta", "_released")

    def __init__(self, deriv, edges, metas, needs, saved_args=()):
        # Node's slots are set here, not by calling Node.__init__: this runs once per recorded
        # op, in one frame instead of two (tests/test_autograd_record.py checks that every Node
        # slot is set).
        self.next_functions = edges
        self._seq = next(_sequence)
        self._pre_hooks = self._post_hooks = self._tensor_hooks = self._retain_hooks = None
        self._output_meta = ()
        self._trace = self._metadata = None
        self._deriv = deriv
        self._needs = needs
        self._input_meta = metas
        self._args = saved_args
        self._released = False
        self._results = None

    def apply(self, grads):
        deriv = self._deriv
        if self._released and deriv.saves:
            raise RuntimeError(graph._FREED)
        if len(grads) == 1:
            if grads[0] is None:
                return [None] * len(self.next_functions)
        elif all(g is None for g in grads):
            return [None] * len(self.next_functions)
        else:
            grads = _materialize(self, grads)
        lane = deriv.cpu_backward   # Note [CPU backward lanes]: when nothing could see the ops
        if lane is not None and not _state.grad_enabled and not _state.include \
                and not trace.active:
            result = lane(self, *grads)
            if result is not NotImplemented:
                return validate_outputs(self, list(result) if type(result) is tuple
                                        else [result])
        result = deriv.formula(self, *grads)
        if not deriv.has_lists:   # _flatten's common cases inlined (one frame less)
            return validate_outputs(self, list(result) if type(result) is tuple else [result])
        return validate_outputs(self, _flatten(deriv, result))

    @property
    def needs(self):
        """One flag per differentiable (tensor) argument: does its gradient need computing?"""
        return self._needs

    def sizes(self, name):
        """The shape of tensor argument ``name`` (kept for every call, saved or not)."""
        return self._deriv.arg_meta(self, name)[0]

    def __getattr__(self, name):
        """Saved values by argument name (``ctx.self``), and PyTorch's ``_saved_<name>`` /
        ``_raw_saved_<name>`` introspection."""
        deriv = object.__getattribute__(self, "_deriv")
        pos = deriv.index.get(name)   # a saved tensor or plain argument: ``unpack`` inlined
        if pos is not None:
            value = self._args[pos]
            if type(value) is SavedVariable:
                return value.unpack()
            if value is not _NOT_SAVED and type(value) is not list:
                return value
        if name.startswith("_saved_"):
            return deriv.unpack(self, name[7:])
        if name.startswith("_raw_saved_"):
            return deriv.raw_saved(self, name[11:])
        return deriv.unpack(self, name)

    def release_variables(self):
        self._released = True
        if not self._deriv.saves:   # nothing saved (TBackward0): only plain arguments to keep
            return
        for v in self._args:
            if isinstance(v, SavedVariable):
                v.release()
            elif isinstance(v, list):
                for x in v:
                    if isinstance(x, SavedVariable):
                        x.release()
        if self._results:
            for v in self._results:
                if v is not None:
                    v.release()


class NotImplementedNode(Node):
    """The node of an op with no derivative formula: backward through it raises
    (PyTorch's ``NotImplemented`` node)."""

    __slots__ = ("_op",)

    def name(self):
        return "NotImplemented"

    def apply(self, grads):
        op = self._op
        raise NotImplementedError(f"derivative for {op.namespace}::{op.schema.name} is not "
                                  f"implemented")


NotImplementedNode.__name__ = NotImplementedNode.__qualname__ = "NotImplemented"


def _materialize(node, grads):
    """A multi-output node gets zeros for the differentiable outputs no gradient reached (the
    formula never reads the others: a fused cell's workspace, a norm's saved statistics)."""
    out = list(grads)
    differentiable = node._deriv.differentiable_outputs
    for i, g in enumerate(out):
        if g is None and (differentiable is None or differentiable[i]) and \
                node._output_meta[i] is not None:
            shape, dtype, device = node._output_meta[i]
            if dtype.category >= _FLOATING:
                out[i] = F.full(shape, 0, dtype=dtype, device=device)
    return out


def _flatten(deriv, result):
    """The formula returns one entry per tensor argument (a list for ``Tensor[]``); the engine
    wants one gradient per edge."""
    if not isinstance(result, tuple):
        result = (result,)
    if not deriv.has_lists:
        return list(result)
    out = []
    for (_, is_list), g in zip(deriv.slots, result):
        if is_list:
            out.extend(g)
        else:
            out.append(g)
    return out


def validate_outputs(node, grads):
    """Make each gradient fit its input: drop it if the input needs none, sum a broadcast
    gradient back to the input's shape, cast to the input's dtype and device
    (``validate_outputs`` in ``torch/csrc/autograd/engine.cpp``)."""
    edges = node.next_functions
    if len(grads) != len(edges):
        raise RuntimeError(f"function {node.name()} returned an incorrect number of gradients "
                           f"(expected {len(edges)}, got {len(grads)})")
    metas = node._input_meta
    for i, g in enumerate(grads):
        if g is None:
            continue
        if edges[i][0] is None:
            grads[i] = None
            continue
        meta = metas[i]
        if (g._shape, g.dtype, g.device) == meta:   # the common case: it fits already
            continue
        shape, dtype, device = meta
        if g._shape != shape:
            if not derivatives.is_expandable_to(shape, g._shape):
                raise RuntimeError(
                    f"Function {node.name()} returned an invalid gradient at index {i} - got "
                    f"[{', '.join(map(str, g._shape))}] but expected shape compatible with "
                    f"[{', '.join(map(str, shape))}]")
            g = derivatives.sum_to(g, shape)
        if g.dtype is not dtype or g.device is not device and g.device != device:
            if g.dtype.is_complex and not dtype.is_complex:   # a real input's gradient
                g = CX.real(g)
            g = F._to_copy(g, dtype=dtype, device=device)
        grads[i] = g
    return grads


def _input_edges(deriv, args):
    """Edges, per-edge metadata and needs-grad flags for the op's tensor arguments."""
    edges, metas, needs = [], [], []
    for pos, is_list in deriv.slots:
        a = args[pos]
        if not is_list and getattr(a, "_base", True) is None:   # a tensor, not a view
            ag = a._ag
            if ag is None:
                edge = _NO_EDGE
            elif ag.grad_fn is not None:
                edge = (ag.grad_fn, ag.output_nr)
            else:
                edge = gradient_edge(a)
            edges.append(edge)
            metas.append((a._shape, a.dtype, a.device))
            needs.append(edge[0] is not None)
        elif is_list:
            flags = []
            for t in a:
                edge, meta = _edge_of(t)
                edges.append(edge)
                metas.append(meta)
                flags.append(edge[0] is not None)
            needs.append(any(flags))
        else:
            edge, meta = _edge_of(a)
            edges.append(edge)
            metas.append(meta)
            needs.append(edge[0] is not None)
    return tuple(edges), tuple(metas), tuple(needs)


_NO_EDGE = (None, 0)
_NOT_SAVED = derivatives.NOT_SAVED
_NOT_TENSOR = object()


def _edge_of(t):
    if t is None or not hasattr(t, "_ag"):
        return _NO_EDGE, None
    return gradient_edge(t), (t._shape, t.dtype, t.device)


def _record_not_implemented(op, ks, args):
    """An op with float outputs but no formula still gets a node; backward through it raises."""
    edges = []
    for i in sorted(op.tensor_positions + op.tensorlist_positions):
        items = args[i] if i in op.tensorlist_positions else (args[i],)
        for t in items:
            edges.append(_edge_of(t)[0])
    out = redispatch_below_autograd(op, ks, args)
    outputs = out if isinstance(out, (tuple, list)) else (out,)
    if not any(t.dtype.category >= _FLOATING for t in outputs):
        return out
    node = NotImplementedNode(tuple(edges), tuple((t._shape, t.dtype, t.device)
                                                  for t in outputs))
    node._op = op
    if trace.active:
        _report_node(node, op)
    if op.is_inplace:
        _rebase_history(args[0], node)
        return out
    for k, t in enumerate(outputs):
        if t.dtype.category >= _FLOATING:
            set_history(t, node, k)
    return out


def _report_node(node, op):
    """Tell the tracer a backward node was recorded, and where its edges lead."""
    trace.instant("autograd", "node created", node=node.name(), seq=node._seq, op=op.qualname,
                  next=[None if n is None else n.name() for n, _ in node.next_functions])


# --- ops whose autograd kernel is written by hand (PyTorch's VariableTypeManual.cpp) -------------

def detach_kernel(op, ks, args):
    """``detach``: a tensor over the same memory and version counter with no history and no
    base, i.e. not a differentiable view."""
    out = DP.redispatch(op, ks, args)
    out._base = None
    return out


def resize_kernel(op, ks, args):
    """``resize_`` would change a tensor autograd tracks under its feet: refused, in any mode."""
    if requires_grad(args[0]):
        raise RuntimeError("cannot resize variables that require grad")
    return DP.redispatch(op, ks, args)


MANUAL_KERNELS = {S.detach: detach_kernel, F.resize_: resize_kernel}
