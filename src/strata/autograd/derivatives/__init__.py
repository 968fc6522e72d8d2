"""Derivatives: one formula per primitive op, keyed by the op object, written with strata ops.

A formula receives the node (``ctx``) and the gradient of each output, and returns one gradient
per tensor argument of the op, in schema order (a list for a ``Tensor[]`` argument; ``None``
where none is needed — ``ctx.needs`` says which are). It reads what it saved as attributes:

    @derivative(P.mul, "MulBackward0", save=("self if other", "other if self"))
    def _mul(ctx, grad):
        return (grad * ctx.other if ctx.needs[0] else None,
                grad * ctx.self if ctx.needs[1] else None)

``save`` names schema arguments (or ``result``/``result<k>`` for outputs) to keep for backward,
optionally ``"<name> if <other names>"`` to keep one only when those inputs need a gradient.
Non-tensor arguments are always kept, and every tensor argument's shape and dtype too
(``ctx.sizes("self")``). Because formulas are written with ops, running them in grad mode
(``create_graph=True``) records them, which gives higher derivatives.

Cross-cutting policy lives in one place, the engine's ``validate_outputs``: a gradient for a
broadcast input is summed back to the input's shape, and cast to the input's dtype. In-place ops
(``mul_``) use their out-of-place op's formula; ``self`` then means the value before the write.

The table follows the ops/ family files, one module each, in the same section order.
"""

from importlib import import_module

from ...core import dtype as D
from ...dispatch import dispatcher as DP
from ...ops import complex as CX
from ...ops import factory as F
from ...ops import pointwise as P
from ...ops import reductions as RD
from ...ops import shape as S
from ...ops.op import REGISTRY
from ..graph import SavedVariable

FAMILIES = ("pointwise", "special", "factory", "shape", "reductions", "sorting", "indexing",
            "scatter", "linalg", "factorizations", "nn", "pooling", "activation", "loss",
            "distributions", "rnn", "complex", "fft", "lu", "dropout", "sampling",
            "random_fills")

DERIVATIVES: dict = {}       # op -> Derivative
NON_DIFFERENTIABLE = object()  # lookup result of ops whose outputs never carry a gradient
_NON_DIFFERENTIABLE: set = set()
NOT_SAVED = object()         # a tensor argument the formula did not ask to keep


def _any_needed(needs, slots) -> bool:
    """Does any of these argument slots need its gradient? (A loop: this runs per op call.)"""
    for k in slots:
        if needs[k]:
            return True
    return False


class Derivative:
    """One row of the table: the op, its node's name, the formula, what to save."""

    def __init__(self, op, name, formula, save, outputs):
        self.op = op
        self.name = name
        self.formula = formula
        self.differentiable_outputs = outputs   # None: every floating output
        args = op.schema.arguments
        self.index = op.binder.index
        self.slots = tuple((i, a.is_tensor_list) for i, a in enumerate(args)
                           if a.is_tensor or a.is_tensor_list)
        self.has_lists = any(is_list for _, is_list in self.slots)
        slot_of = {args[pos].name: k for k, (pos, _) in enumerate(self.slots)}
        # the edge of each tensor argument that no Tensor[] precedes (a list's length varies)
        self.edge_of = {}
        for k, (pos, is_list) in enumerate(self.slots):
            if is_list:
                break
            self.edge_of[args[pos].name] = k
        self.input_saves = []    # (position, needed-if slot indices or None, geometry only)
        self.result_saves = []   # (output index, needed-if slot indices or None)
        for spec in save:
            name, _, cond = (s.strip() for s in spec.partition(" if "))
            when = tuple(slot_of[c] for c in cond.split()) if cond else None
            geometry = name.endswith(":geometry")
            name = name.removesuffix(":geometry")
            if name.startswith("result"):
                self.result_saves.append((int(name[6:] or 0), when))
            else:
                self.input_saves.append((self.index[name], when, geometry))
        self.saves = bool(save)
        self.saves_result = bool(self.result_saves)
        self._classes = {}
        self.fixed_node_class = None   # the node class once made, when ``name`` is a string
        self.inplace_view_name = None   # a view op's in-place method's node (``TBackward1``)
        self.cpu_backward = None   # Note [CPU backward lanes] (``register_cpu_backward``)

    def node_class(self, args, name=None):
        """The node class for this call (``MulBackward0``); a few ops name it by arguments.
        ``name`` overrides the row's name (the same formula under another node name)."""
        if name is None:
            name = self.name
            fixed = type(name) is str
        else:
            fixed = False
        if type(name) is not str:
            name = name(*args)
        cls = self._classes.get(name)
        if cls is None:
            from ..kernel import OpNode
            cls = self._classes[name] = type(name, (OpNode,),
                                             {"__slots__": (), **self._saved_properties(OpNode)})
            if fixed:
                self.fixed_node_class = cls
        return cls

    def _saved_properties(self, node_base):
        """Note [Saved values as properties]: ``ctx.mat2`` is a property of the node class, one
        per argument name and saved result. Through ``OpNode.__getattr__`` every read first
        failed the normal look-up, which builds an AttributeError (about 2 us against 0.2 us):
        an RL episode's backward reads 3,000 saved values. A name the node class already has
        (``name``, ``needs``) keeps the class's meaning, as before."""
        props = {}
        for name, pos in self.index.items():
            if not hasattr(node_base, name):
                props[name] = property(_argument_getter(name, pos))
        for k, _ in self.result_saves:
            for name in (f"result{k}", "result") if k == 0 else (f"result{k}",):
                props.setdefault(name, property(_result_getter(name, k)))
        return props

    def save_into(self, out, args, needs, inplace):
        """Put the saved inputs the formula asks for into ``out`` (the arguments' list)."""
        for pos, when, geometry in self.input_saves:
            if when is not None:   # saved only if one of these slots needs its gradient
                for k in when:
                    if needs[k]:
                        break
                else:
                    continue
            a = args[pos]
            if geometry:
                if not isinstance(out[pos], SavedVariable):   # the tensor itself has it all
                    out[pos] = (a._shape, a.stride(), a._offset)
            elif isinstance(a, (list, tuple)):
                out[pos] = [SavedVariable(t) if hasattr(t, "_ag") else t for t in a]
            elif hasattr(a, "_ag"):
                if inplace and pos == 0:
                    a = F.clone(a)   # the formula wants self as it was before the write
                out[pos] = SavedVariable(a)

    def save_results(self, node, outputs, needs):
        results = [None] * len(outputs)
        for k, when in self.result_saves:
            if when is None or _any_needed(needs, when):
                results[k] = SavedVariable(outputs[k], node, k)
        return results

    def _stored(self, node, name):
        """What the node keeps for ``name``: a SavedVariable, a list, a plain value, NOT_SAVED."""
        pos = self.index.get(name)
        if pos is not None:
            return node._args[pos]
        if name.startswith("result") and (name == "result" or name[6:].isdigit()):
            results = node._results
            k = int(name[6:] or 0)
            return results[k] if results and results[k] is not None else NOT_SAVED
        raise AttributeError(f"'{node.name()}' object has no attribute '{name}'")

    def unpack(self, node, name):
        """The value of ``name`` for the formula (saved tensors version-checked)."""
        value = self._stored(node, name)
        if value is NOT_SAVED:
            raise AttributeError(f"{node.name()} did not save '{name}' for backward")
        if isinstance(value, SavedVariable):
            return value.unpack()
        if isinstance(value, list):
            return [v.unpack() if isinstance(v, SavedVariable) else v for v in value]
        return value

    def raw_saved(self, node, name):
        """``grad_fn._raw_saved_<name>``: the SavedVariable itself (to register hooks on)."""
        value = self._stored(node, name)
        if not isinstance(value, SavedVariable):
            raise AttributeError(f"'{node.name()}' object has no attribute '_raw_saved_{name}'")
        return value

    def arg_meta(self, node, name):
        return node._input_meta[self.edge_of[name]]


def _argument_getter(name, pos):
    """``ctx.<name>``: what ``Derivative.unpack`` gives, its common cases inline."""
    def saved_argument(node):
        value = node._args[pos]
        if type(value) is SavedVariable:
            return value.unpack()
        if value is not NOT_SAVED and type(value) is not list:
            return value
        return node._deriv.unpack(node, name)
    return saved_argument


def _result_getter(name, k):
    def saved_result(node):
        results = node._results
        if results and results[k] is not None:
            return results[k].unpack()
        return node._deriv.unpack(node, name)
    return saved_result


def derivative(op, name, save=(), outputs=None):
    """Decorator: register the formula of ``op``, whose node is named ``name`` (a string, or a
    function of the op's arguments for ops PyTorch splits into several overloads). ``outputs``
    flags which outputs carry a gradient when not all floating ones do (PyTorch's
    ``output_differentiability``: a layer norm's saved mean and rstd do not)."""
    def deco(formula):
        if op in DERIVATIVES:
            raise RuntimeError(f"derivative for {op.qualname} is defined twice")
        DERIVATIVES[op] = Derivative(op, name, formula, save, outputs)
        return formula
    return deco


def inplace_view(op, name):
    """Name the node of ``op``'s in-place method (``t_``: ``TBackward1``, as derivatives.yaml's
    own row): the method rewrites its tensor's geometry with ``op``'s result and keeps ``op``'s
    formula (``autograd/inplace_views.py``). ``name`` is a string or a function of the
    arguments, as in ``derivative``."""
    DERIVATIVES[op].inplace_view_name = name


def not_implemented(op, name):
    """derivatives.yaml's ``not_implemented("<op>")`` rows: PyTorch records a node of this name
    whose backward raises, so a gradient never passes through the op silently; strata too."""
    message = f"the derivative for '{op.schema.name.rstrip('_')}' is not implemented."

    def formula(ctx, *grads):
        raise NotImplementedError(message)
    derivative(op, name)(formula)


def register_cpu_backward(op, lane):
    """Note [CPU backward lanes]: ``lane(node, *grads)`` computes ``op``'s formula for CPU
    tensors in a few NumPy calls instead of a dozen dispatched ops, or returns NotImplemented
    for inputs it does not take (then the formula runs). ``OpNode.apply`` calls it only where
    the formula's ops could not be observed: no graph being built (``create_graph``), no trace
    (profiler, ``explain``, tracer), no dispatch mode. The CPU backend registers its lanes
    (it is the layer below; autograd cannot import it). A lane stands for the CPU kernels
    strata ships: while a kernel of an ``aten`` op on the CPU or autograd keys differs from the
    one in place once ``import strata`` finished (``Library.impl``), every lane steps aside and
    the formulas' dispatched ops run (``_track_kernel_change``)."""
    deriv = DERIVATIVES[op]
    if deriv.cpu_backward is not None:
        raise RuntimeError(f"a CPU backward lane for {op.qualname} is registered twice")
    deriv.cpu_backward = _LANES[op] = lane


def watch_cpu_lane_kernels():
    """From now on (``import strata`` has registered every kernel), the lanes step aside while
    a kernel they stand for is not the one in place now."""
    if _track_kernel_change not in DP.kernel_change_listeners:
        DP.kernel_change_listeners.append(_track_kernel_change)


_LANES = {}            # op -> its CPU backward lane, as registered
_LANE_KEYS = ("CPU", "AutogradCPU", "Autograd", "CompositeImplicitAutograd")
_ORIGINAL = {}         # (op, key) -> its kernel function when the lanes were written, while changed


def _track_kernel_change(op, key, previous):
    """Lanes run only while every ``aten`` kernel a formula could reach on the CPU is the one
    they were written against (a kernel put back makes them run again)."""
    if op.namespace != "aten" or key.name not in _LANE_KEYS:
        return
    _ORIGINAL.setdefault((op, key), previous and previous.fn)
    for (cell_op, cell_key), fn in list(_ORIGINAL.items()):
        current = DP._tables.get(cell_op, {}).get(cell_key)
        if (current and current.fn) is fn:
            del _ORIGINAL[cell_op, cell_key]
    for lane_op, lane in _LANES.items():
        DERIVATIVES[lane_op].cpu_backward = None if _ORIGINAL else lane


def non_differentiable(*ops):
    """Ops whose outputs never carry a gradient (``detach``, ``view(dtype)``)."""
    _NON_DIFFERENTIABLE.update(ops)


_lookup_cache: dict = {}


def lookup(op):
    """The Derivative of ``op`` (an in-place op uses its out-of-place op's row), the marker
    NON_DIFFERENTIABLE, or None when the op has no formula."""
    try:
        return _lookup_cache[op]
    except KeyError:
        pass
    if op in _NON_DIFFERENTIABLE:
        found = NON_DIFFERENTIABLE
    else:
        found = DERIVATIVES.get(op)
        if found is None and op.is_inplace:
            functional = out_of_place(op)
            found = NON_DIFFERENTIABLE if functional in _NON_DIFFERENTIABLE else \
                DERIVATIVES.get(functional)
    _lookup_cache[op] = found
    return found


def out_of_place(op):
    """``add_.Tensor`` -> ``add.Tensor``: PyTorch's naming convention for in-place variants
    (same overload name, or else the overload with the same argument names, as ``pow_.Tensor``
    -> ``pow.Tensor_Tensor``)."""
    base = op.schema.name
    if not base.endswith("_"):
        return None
    overload = f".{op.schema.overload}" if op.schema.overload else ""
    found = REGISTRY.get(f"{op.namespace}::{base[:-1]}{overload}")
    if found is not None:
        return found
    names = op.binder.names
    return next((other for other in REGISTRY.values()
                 if other.namespace == op.namespace and other.schema.name == base[:-1]
                 and other.binder.names == names), None)


# --- helpers shared by the family formulas -------------------------------------------------------

def is_expandable_to(shape, desired) -> bool:
    """``shape`` broadcasts to ``desired`` (so a gradient of ``desired`` sums back to it)."""
    if len(shape) > len(desired):
        return False
    for s, d in zip(reversed(shape), reversed(desired)):
        if s != d and s != 1:
            return False
    return True


def sum_to(grad, shape):
    """Sum a broadcast gradient back down to ``shape`` (``at::sum_to``)."""
    gshape = grad._shape
    shape = tuple(shape)
    if gshape == shape:
        return grad
    lead = len(gshape) - len(shape)
    inner = [lead + i for i, s in enumerate(shape) if s == 1 and gshape[lead + i] != 1]
    if lead and not inner:   # only leading dims (a bias): summing them away gives ``shape``
        return RD.sum(grad, list(range(lead)), False, None)   # every argument: no binding
    if inner:
        grad = RD.sum(grad, list(range(lead)) + inner, True)
    return S.view(grad, shape) if lead else grad


def zeros(shape, like):
    # every argument given (dtype, layout, device, pin_memory): the dispatcher binds nothing
    return F.full(tuple(shape), 0, like.dtype, None, like.device, None)


def zeros_for(ctx, name, like):
    """A zero gradient for tensor argument ``name`` (PyTorch returns zeros, not None, there)."""
    return F.full(tuple(ctx.sizes(name)), 0, like.dtype, None, like.device, None)


def has_no_zeros(x) -> bool:
    """Whether ``x`` certainly holds no zero: the test of the backward formulas with a fast
    form for that case (prod, cumprod, det). A meta tensor (AOT autograd tracing the backward)
    has no values, so it answers False and the zero-safe form is traced, as PyTorch's formulas
    take their composite-compliant branch for tensor subclasses."""
    return x.device.type != "meta" and RD.sum(P.eq(x, 0)).item() == 0


def is_float(x) -> bool:
    return hasattr(x, "_ag") and x.dtype.category >= D.FLOATING


def is_tensor(x) -> bool:
    return hasattr(x, "_ag")


def conj(x):
    """Note [Complex gradients]: PyTorch's gradient of a real loss L at complex z is
    dL/dRe(z) + i dL/dIm(z), the conjugate Wirtinger derivative, so a holomorphic f's formula
    multiplies by conj(f'(z)). A real tensor or number is its own conjugate (nothing is
    recorded)."""
    if not hasattr(x, "_ag"):   # a Python number (int, float and complex all conjugate)
        return x.conjugate()
    return CX.conj_physical(x) if x.dtype.is_complex else x


for _family in FAMILIES:
    import_module(f"{__name__}.{_family}")
