"""Generated records: the autograd kernel of one op, written out once for that op's signature.

Note [Generated records]: ``autograd_kernel`` is one function for every op, so each recorded call
loops over the op's tensor positions (twice: to decide, then for the edges), builds the node's
view of the arguments as a list and turns three lists into tuples. PyTorch generates one autograd
kernel per op from ``derivatives.yaml`` (``VariableType_*.cpp``); strata does the same, lazily:
the first time the dispatcher selects the autograd fallback for an op (``Kernel.specialize``),
``specialize`` writes that op's record as Python source — one block per tensor argument, the
node's arguments as one tuple, the saves the formula asks for, one output's history — and
compiles it. What it records is what ``autograd_kernel`` records (tests/test_record_paths.py
compares the graphs with PyTorch's and every node slot between the two paths); it keeps the same
reporting points, so the tracer, ``explain()`` and the profiler see the same events, and
``print(record_source(op))`` shows the code. Ops it does not cover keep the general kernel:
in-place ops, ops with a ``Tensor[]`` argument or other than one ``Tensor`` result, and ops
without a formula.
"""

import linecache
import weakref

from ..core import trace
from ..core.tensor_impl import AutogradMeta
from ..dispatch import dispatcher as DP
from ..dispatch.tls import _state
from . import anomaly_mode, derivatives
from .graph import AccumulateGrad, SavedVariable, gradient_edge
from .kernel import (
    _FLOATING,
    _NO_EDGE,
    _NOT_SAVED,
    _NOT_TENSOR,
    _REDISPATCH,
    AUTOGRAD_BIT,
    MULTI_OUTPUT,
    _no_grad_view,
    _report_node,
    _unrecorded,
)

RECORDS = {}    # op -> its generated record, once made
_sources = {}   # op -> the record's source


def specialize(op):
    """The op's generated record, or None where the general ``autograd_kernel`` applies. Made
    once per op (the derivative table is fixed at import), whatever clears the dispatch caches."""
    record = RECORDS.get(op)
    if record is not None:
        return record
    deriv = derivatives.lookup(op)
    returns = op.schema.returns
    if not isinstance(deriv, derivatives.Derivative) or not deriv.slots or deriv.has_lists or \
            op.is_inplace or op.tensorlist_positions or len(returns) != 1 or \
            returns[0].type != "Tensor":
        return None
    name = f"record_{op.name.replace('.', '_')}"
    source = _source(op, deriv, name)
    filename = f"<generated record of {op.qualname}>"
    node_class = deriv.node_class(()) if type(deriv.name) is str else None   # else per call
    namespace = {**_GLOBALS, "__name__": __name__, "op": op, "deriv": deriv,
                 "node_class": node_class}
    exec(compile(source, filename, "exec"), namespace)
    # tracebacks and ``inspect.getsource`` (benchmarks/tracer.py) read the generated lines
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    _sources[op] = source
    record = RECORDS[op] = namespace[name]
    record.__qualname__ = f"autograd_kernel[{op.name}]"
    return record


def record_source(op) -> str:
    """The generated record of ``op`` (made when the dispatcher first selected it)."""
    if op not in _sources:
        specialize(op)
    return _sources.get(op, f"# {op.qualname} is recorded by the general autograd_kernel\n")


_GLOBALS = {
    "_state": _state, "trace": trace, "DP": DP, "AutogradMeta": AutogradMeta,
    "SavedVariable": SavedVariable, "AccumulateGrad": AccumulateGrad,
    "weakref_ref": weakref.ref,
    "gradient_edge": gradient_edge, "anomaly_mode": anomaly_mode,
    "_FLOATING": _FLOATING, "_NO_EDGE": _NO_EDGE, "_NOT_SAVED": _NOT_SAVED,
    "_NOT_TENSOR": _NOT_TENSOR, "_REDISPATCH": _REDISPATCH, "AUTOGRAD_BIT": AUTOGRAD_BIT,
    "MULTI_OUTPUT": MULTI_OUTPUT, "_no_grad_view": _no_grad_view, "_report_node": _report_node,
    "_unrecorded": _unrecorded,
}

# The edge of tensor argument {a}, as ``autograd_kernel`` finds it (``gradient_edge``'s common
# cases inline); {s} is what the node keeps for the argument, {m} its metadata.
_EDGE = """\
    ag = getattr({a}, "_ag", _NOT_TENSOR)
    if ag is _NOT_TENSOR:   # an optional tensor left None, or a Python number
        {e}, {m}, {s} = _NO_EDGE, None, {a}
    else:
        {m}, {s} = ({a}._shape, {a}.dtype, {a}.device), _NOT_SAVED
        fn = None if ag is None else ag.grad_fn
        if {a}._base is not None:   # a view: its grad_fn may need remaking first
            vc = {a}._vc
            if fn is None or ag.attr_version != (0 if vc is None else vc.value):
                {e} = gradient_edge({a})
            else:
                {e} = (fn, ag.output_nr)
        elif fn is not None:
            {e} = (fn, ag.output_nr)
        elif ag is None or not ag.requires_grad:
            {e} = _NO_EDGE
        else:   # a leaf: its AccumulateGrad while a graph holds it (``grad_accumulator``)
            ref = ag.grad_accumulator
            acc = None if ref is None else ref()
            if acc is None:
                acc = AccumulateGrad({a})
                ag.grad_accumulator = weakref_ref(acc)
            {e} = (acc, 0)
"""

# The call below autograd (``redispatch_below_autograd``) and the output's history.
_RUN_AND_HISTORY = """\
    if trace.active:
        _report_node(node, op)
    entry = op._dispatch_cache.get(ks) if DP.redispatch is _REDISPATCH else None
    if entry is not None and entry[0].calls_no_ops:   # Note [Kernels that call no ops]
        out = entry[0].fn(*args)
    else:
        s = _state
        prev = s.exclude
        s.exclude = prev | AUTOGRAD_BIT
        try:
            if entry is not None and not entry[0].boxed:
                out = entry[0].fn(*args)
            else:
                out = DP.redispatch(op, ks, args)
        finally:
            s.exclude = prev
    node._output_meta = ((out._shape, out.dtype, out.device),)
"""


def _source(op, deriv, name):
    """The text of ``op``'s record: straight-line code for its tensor arguments and saves."""
    names = [f"a{i}" for i in range(op.nargs)]
    slots = [pos for pos, _ in deriv.slots]
    kept = list(names)   # the node's view of the arguments, one expression per position
    lines = [f"def {name}(op, ks, args):",
             "    if not _state.grad_enabled:",
             f"        return {'_no_grad_view' if op.is_view else '_unrecorded'}(op, ks, args)",
             f"    {', '.join(names)}, = args"]
    for k, pos in enumerate(slots):
        kept[pos] = f"s{pos}"
        lines.append(_EDGE.format(a=names[pos], e=f"e{k}", m=f"m{k}", s=f"s{pos}"))
    lines.append(f"    if {' and '.join(f'e{k}[0] is None' for k in range(len(slots)))}:")
    lines.append("        return _unrecorded(op, ks, args)   # no input requires grad")
    lines.append(f"    needs = ({''.join(f'e{k}[0] is not None, ' for k in range(len(slots)))})")
    for pos, when, geometry in deriv.input_saves:   # Derivative.save_into, unrolled
        a, s = names[pos], f"s{pos}"
        cond = [f"needs[{k}]" for k in when] if when is not None else []
        if geometry:
            body = f"if type({s}) is not SavedVariable: {s} = ({a}._shape, " \
                   f"{a}._get_strides(), {a}._offset)"
        else:
            body = f"if hasattr({a}, '_ag'): {s} = SavedVariable({a})"
        lines.append(f"    if {' or '.join(cond)}:\n        {body}" if cond else f"    {body}")
    node_class = "node_class" if type(deriv.name) is str else "deriv.node_class(args)"
    lines.append(f"    node = {node_class}(deriv, ({''.join(f'e{k}, ' for k in range(len(slots)))}"
                 f"), ({''.join(f'm{k}, ' for k in range(len(slots)))}), needs, "
                 f"({''.join(f'{v}, ' for v in kept)}))")
    lines.append(_RUN_AND_HISTORY)
    if deriv.saves_result:
        lines.append("    node._results = deriv.save_results(node, (out,), needs)")
    lines.append("    if anomaly_mode.ever_enabled and anomaly_mode._state.enabled:")
    lines.append("        node._trace = anomaly_mode.forward_stack()")
    differentiable = deriv.differentiable_outputs
    if differentiable is not None and not differentiable[0]:
        lines.append("    return out")
        return "\n".join(lines) + "\n"
    lines += ["    if out.dtype.category >= _FLOATING:",
              "        ag = out._ag",
              "        if ag is None:",
              "            ag = out._ag = AutogradMeta(True, node, 0)",
              "        else:",
              "            ag.requires_grad = True",
              "            ag.grad_fn = node",
              "            ag.output_nr = 0"]
    if op.is_view:   # the view's version, and Note [Multi-output views]'s mark of a piece's view
        lines += ["        vc = out._vc",
                  "        ag.attr_version = 0 if vc is None else vc.value",
                  "    source = a0._ag",
                  "    if source is not None and source.creation_meta is not None and \\",
                  "            source.creation_meta == MULTI_OUTPUT and out._ag is not None:",
                  "        out._ag.creation_meta = MULTI_OUTPUT"]
    lines.append("    return out")
    return "\n".join(lines) + "\n"
