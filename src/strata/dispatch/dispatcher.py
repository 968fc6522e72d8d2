"""The dispatcher: kernel tables (op x key), resolution, cached selection, call and redispatch.

A call computes its key set — the union of its tensor arguments' key sets, plus the thread-local
include set, minus the exclude set — and runs the kernel of the highest key. A kernel that works
"in the middle" (autograd, ADInplaceOrView, Python modes) is *boxed*: it receives
``(op, keyset_below_me, args)`` and continues with ``redispatch``. Backend kernels are unboxed:
they receive the op's arguments, positionally, in schema order.

Resolution for a runtime key K follows ``OperatorEntry::computeDispatchTableEntryWithDebug``
(``aten/src/ATen/core/dispatch/OperatorEntry.cpp``): a kernel registered to K; else
CompositeExplicitAutograd (backend keys); else CompositeImplicitAutograd (backend keys, and
Autograd<B> when B has no kernel of its own); else the Autograd alias (Autograd<B>); else the
backend fallback of K; else missing. A fallthrough kernel skips its key. The result is cached per
(op, key set); any registration clears the caches it can affect.
"""

import keyword
import linecache
import sys

from .. import config
from ..core import trace
from ..core.device import as_device, backend_of
from ..ops.op import REGISTRY, OpOverload
from . import keys as K
from .tls import _state

FALLTHROUGH = object()   # register this to make a key transparent for an op


# Note [Kernels that call no ops]: a recorded op runs the kernel below autograd with autograd
# excluded (``redispatch_below_autograd``), so that the ops a kernel calls inside are not
# recorded: three thread-local accesses, as much as a tenth of a small recorded op. A backend
# kernel that calls no op through the dispatcher (NumPy work, a meta function, a view over the
# same storage) says so with ``fn.calls_no_ops = True``; the generated records (Note [Generated
# records]) run it without the guard. tests/test_record_paths.py runs every marked kernel's
# samples under a trace and checks that nothing is dispatched inside it.
class Kernel:
    __slots__ = ("fn", "boxed", "fallthrough", "name", "source", "skips_plain_calls",
                 "specialize", "calls_no_ops")

    def __init__(self, fn, boxed, name, source="kernel", skips_plain_calls=False,
                 specialize=None):
        self.fn = fn
        self.boxed = boxed
        self.fallthrough = fn is FALLTHROUGH
        self.name = name
        self.source = source
        self.skips_plain_calls = skips_plain_calls   # Note [Plain calls skip autograd]
        self.specialize = specialize   # a fallback's per-op twin maker (Note [Generated records])
        self.calls_no_ops = not boxed and getattr(fn, "calls_no_ops", False)

    def __repr__(self):
        return "fallthrough" if self.fallthrough else f"{self.name} [{self.source}]"


_tables: dict = {}        # op -> {DispatchKey (runtime or alias) -> Kernel}
_fallbacks: dict = {}     # runtime DispatchKey -> Kernel (boxed or fallthrough)


def _kernel_name(fn):
    if fn is FALLTHROUGH:
        return "fallthrough"
    return f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', repr(fn))}"


# Told ``(op, key, previous kernel or None)`` after a cell's kernel is registered or removed:
# what stands in for kernels without dispatching (the CPU backward lanes) steps aside meanwhile.
kernel_change_listeners = []


def _kernel_changed(op, key, previous):
    _clear_caches(op)
    for listener in kernel_change_listeners:
        listener(op, key, previous)


def register_kernel(op: OpOverload, key, fn, *, boxed: bool = False, allow_override=False):
    """Put ``fn`` in the cell (op, key). ``key`` is a DispatchKey or its name."""
    key = K.key_by_name(key) if isinstance(key, str) else key
    table = _tables.setdefault(op, {})
    if key in table and not allow_override:
        raise RuntimeError(
            f"A kernel for operator {op.qualname} is already registered to dispatch key {key}; "
            f"registering twice for the same (operator, key) is not allowed "
            f"(existing: {table[key]!r})")
    previous = table.get(key)
    table[key] = Kernel(fn, boxed, _kernel_name(fn))
    _kernel_changed(op, key, previous)


def deregister_kernel(op: OpOverload, key):
    key = K.key_by_name(key) if isinstance(key, str) else key
    previous = _tables[op].pop(key)
    _kernel_changed(op, key, previous)


def register_fallback(key, fn, *, boxed: bool = True, skips_plain_calls: bool = False,
                      specialize=None):
    """A backend fallback for a runtime key: runs for every op with no kernel of its own there.

    ``skips_plain_calls``: the fallback only redispatches for a *plain* call (Note [Plain calls
    skip autograd]), so the dispatcher may run the kernel below it directly. ``specialize(op)``:
    a boxed kernel doing for ``op`` what ``fn`` does, or None; selection runs it in ``fn``'s
    place (the autograd fallback's generated records, Note [Generated records])."""
    key = K.key_by_name(key) if isinstance(key, str) else key
    if key in _fallbacks:
        raise RuntimeError(f"a fallback is already registered for dispatch key {key}")
    _fallbacks[key] = Kernel(fn, boxed, _kernel_name(fn), source="fallback",
                             skips_plain_calls=skips_plain_calls, specialize=specialize)
    for op in REGISTRY.values():
        _clear_caches(op)


def deregister_fallback(key):
    key = K.key_by_name(key) if isinstance(key, str) else key
    del _fallbacks[key]
    for op in REGISTRY.values():
        _clear_caches(op)


def _clear_caches(op):
    """Forget every kernel selection of ``op`` (a registration or the trace changed)."""
    op._dispatch_cache.clear()
    op._operator_entries.clear()


def _decomposition_kernel(op):
    decomp = op.decomposition
    return Kernel(decomp, False, _kernel_name(decomp), source="CompositeImplicitAutograd")


def resolve_key(op: OpOverload, key):
    """The kernel for one runtime key, by PyTorch's registration priority (None if missing)."""
    table = _tables.get(op, {})
    kernel = table.get(key)
    if kernel is not None:
        return kernel
    is_backend = key.functionality == K.DENSE
    cea = table.get(K.DispatchKey.CompositeExplicitAutograd)
    if is_backend and cea is not None:
        return Kernel(cea.fn, cea.boxed, cea.name, "CompositeExplicitAutograd")
    cia = table.get(K.DispatchKey.CompositeImplicitAutograd)
    if cia is None and op.decomposition is not None:
        cia = _decomposition_kernel(op)
    if cia is not None:
        if is_backend:
            return Kernel(cia.fn, cia.boxed, cia.name, "CompositeImplicitAutograd")
        if key.functionality == K.AUTOGRAD:
            backend_key = K._PER_BACKEND[K.DENSE, key.backend]
            if backend_key not in table and cea is None:
                return Kernel(cia.fn, cia.boxed, cia.name, "CompositeImplicitAutograd")
    if key.functionality == K.AUTOGRAD:
        ag = table.get(K.DispatchKey.Autograd)
        if ag is not None:
            return Kernel(ag.fn, ag.boxed, ag.name, "Autograd")
    return _fallbacks.get(key)


def _select(op: OpOverload, ks: int, args=None):
    """Pick (kernel, key, mask below key) for a key set, skipping fallthroughs; cache it."""
    start = ks
    while True:
        key = K.highest_key(ks)
        if key is None:
            _raise_missing(op, start, None, args)
        kernel = resolve_key(op, key)
        if kernel is None:
            _raise_missing(op, start, key, args)
        if not kernel.fallthrough:
            break
        ks = K.after(ks, key)
    if kernel.specialize is not None:
        fn = kernel.specialize(op)
        if fn is not None:   # the same fallback, by the same name, written for this op
            kernel = Kernel(fn, True, kernel.name, kernel.source, kernel.skips_plain_calls)
    mask = (1 << (K.NB + key.functionality)) - 1
    below = None
    if kernel.skips_plain_calls and not op.tensorlist_positions:
        below_ks = ks & mask
        below_kernel, _, below_mask, _, _ = op._dispatch_cache.get(below_ks) or \
            _select(op, below_ks, args)
        below = below_kernel.fn if not below_kernel.boxed else \
            _boxed_call(below_kernel.fn, op, below_ks & below_mask)
    mixed = bin(start & K.BACKEND_MASK).count("1") > 1 and "cross_device" not in op.tags
    entry = (kernel, key, mask, mixed, below)
    op._dispatch_cache[start] = entry
    if below is not None and not mixed and not trace.active:   # Note [Operator fast path]
        op._operator_entries[start] = (below, kernel.fn, start & mask)
    return entry


def _boxed_call(fn, op, ks):
    """A boxed kernel as a function of the op's arguments, for one key set."""
    return lambda *args: fn(op, ks, args)


def _raise_missing(op, ks, key, args=None):
    if args is not None and not ks & K.BACKEND_MASK and op.meta is not None:
        # Nothing to dispatch on (an empty Tensor[]): PyTorch runs the op's composite kernel for
        # the Undefined key, whose argument checks raise ("stack expects a non-empty
        # TensorList"). The meta function has those checks.
        op.meta(*args)
    if not any(_tables.get(op, {})) and op.decomposition is None and not (ks & K.BACKEND_MASK):
        raise RuntimeError(
            f"There were no tensor arguments to this function (e.g., you passed an empty list of "
            f"Tensors), but no fallback function is registered for schema {op.qualname}.")
    available = [str(k) for k in available_keys(op)]
    where = key.name if key is not None else "Undefined"
    raise NotImplementedError(
        f"Could not run '{op.qualname}' with arguments from the '{where}' backend. This could be "
        f"because the operator doesn't exist for this backend. '{op.qualname}' is only available "
        f"for these backends: [{', '.join(available)}].")


def available_keys(op):
    return [k for k in K.RUNTIME_KEYS
            if (kern := resolve_key(op, k)) is not None and not kern.fallthrough]


def compute_keyset(op: OpOverload, args: tuple) -> int:
    ks = 0
    for i in op.tensor_positions:
        ks |= getattr(args[i], "_keyset", 0)
    for i in op.tensorlist_positions:
        for t in args[i]:
            ks |= getattr(t, "_keyset", 0)
    if not ks & K.BACKEND_MASK and op.device_position is not None:
        # BackendSelect: a factory op takes its backend from its device argument.
        ks |= _device_keyset(args[op.device_position])
    s = _state
    return (ks | s.include) & ~s.exclude


_device_keyset_cache = {}


def _device_keyset(device):
    d = as_device(device)
    ks = _device_keyset_cache.get(d.type)
    if ks is None:
        try:
            ks = K.backend_keyset(backend_of(d.type))
        except KeyError:
            raise RuntimeError(f"device type '{d.type}' is not available in strata "
                               f"(no backend is registered for it)") from None
        _device_keyset_cache[d.type] = ks
    return ks


# Note [Plain calls skip autograd]: a call is *plain* when no tensor argument can require grad
# (none has autograd state, ``_ag``, nor is a view of a tensor that has), or when grad mode is
# off and the op makes no view. The autograd fallback records nothing for a plain call and only
# redispatches, so the dispatcher runs the kernel below it at once (the backend kernel, or an
# in-place op's ADInplaceOrView kernel): most calls of an inference or optimizer step, and of a
# backward pass, are plain, and this saves them the autograd frame and a second table look-up.
# The traced ``call`` below never skips, so a trace still shows the autograd key's decision.
#
# Note [Operator fast path]: ``op._operator_entries`` maps a key set whose kernel is the
# autograd fallback (and not a cross-device call) to ``(kernel below it, the fallback, the key
# set below it)``: what ``call`` would run for a plain call and for a recorded one. A Python
# operator (``Tensor.__add__``, ``tensor_operators._binary_operator``) looks its key set up there
# and calls one of the two itself: one dict look-up instead of ``call``'s binding check, loops and
# cache entry. The key set is the full one (thread-local include and exclude sets applied), so a
# mode or an excluded key gets what ``call`` would pick, and a key set without an entry (autograd
# excluded, a mix of devices) goes through ``call``. The map is emptied with the dispatch cache
# (a registration) and whenever a trace starts or stops, and is not filled while one is on:
# traced operators go through ``call``'s traced twin.

def direct_caller(op: OpOverload):
    """``op`` as a function for a frontend that passes every argument positionally, and whose
    one tensor argument is the first, followed by two or three more (``select``, ``sum``):
    Note [Operator fast path] first, ``call`` otherwise. The arguments are spelled out: a call
    with ``*args`` costs as much again as one without."""
    n_rest = op.nargs - 1
    if op.tensor_positions != (0,) or op.tensorlist_positions or \
            op.device_position is not None or n_rest not in (2, 3):
        raise ValueError(f"{op.qualname}: direct_caller needs one tensor argument, the first, "
                         f"and two or three others")
    entries, state = op._operator_entries, _state

    # Each variant: the entry of ``self``'s key set, then plain (no autograd state on ``self``
    # or its base) or recorded, as ``tensor_operators._fast_operator``; no entry: ``call``.
    if n_rest == 2:
        def direct(self, a, b):
            keys = getattr(self, "_keyset", None)
            if keys is not None:
                entry = entries.get((keys | state.include) & ~state.exclude)
                if entry is not None:
                    if self._ag is None and (self._base is None or self._base._ag is None):
                        return entry[0](self, a, b)
                    return entry[1](op, entry[2], (self, a, b))
            return op(self, a, b)
    else:
        def direct(self, a, b, c):
            keys = getattr(self, "_keyset", None)
            if keys is not None:
                entry = entries.get((keys | state.include) & ~state.exclude)
                if entry is not None:
                    if self._ag is None and (self._base is None or self._base._ag is None):
                        return entry[0](self, a, b, c)
                    return entry[1](op, entry[2], (self, a, b, c))
            return op(self, a, b, c)
    _PASS_THROUGH.add(direct.__code__)
    return direct


_PASS_THROUGH = set()   # code of the functions a traced call looks past for its caller


# Note [Generated callers]: ``call`` is one function for every op, so it checks whether the
# arguments need binding and loops over the op's tensor positions twice (the key set, then
# the plain-call test). ``caller(op, module)`` writes ``call``'s path for one op as source: the
# schema's parameters (names, defaults, keywords as in the schema), the key set read from each
# tensor argument by name, the cached selection, and the same three outcomes (the kernel below
# autograd for a plain call, the boxed kernel, the unboxed one). A key set not selected yet, a
# call across devices, or a trace goes through ``op(...)`` itself, so the tracer and
# ``explain()`` see every call. ``nn.functional.linear`` is ``caller(linear, ...)``.
_CALLER = """\
def {name}({params}):
    ks = ({keys} | state.include) & ~state.exclude
    entry = cache.get(ks)
    if entry is None or entry[3] or trace.active:
        return op({args})
    kernel, below = entry[0], entry[4]
    if below is not None:
        if {plain}:
            return below({args})
        if not state.grad_enabled and not is_view:
            return below({args})
    if kernel.boxed:
        return kernel.fn(op, ks & entry[2], ({args},))
    return kernel.fn({args})
"""


# the generated code's own names, which a parameter must not shadow
_CALLER_NAMES = {"op", "cache", "state", "trace", "is_view", "defaults", "getattr", "ks",
                 "entry", "kernel", "below"}


def caller(op: OpOverload, module: str):
    """``op`` as a Python function of the schema's parameters (Note [Generated callers]), named
    as if ``module`` defined it under the schema's name; ops with a ``Tensor[]`` or a device
    argument are refused (their key set needs ``compute_keyset``)."""
    arguments = op.schema.arguments
    names = [a.name for a in arguments]
    if op.tensorlist_positions or op.device_position is not None or not op.tensor_positions \
            or any(a.kwarg_only for a in arguments) or \
            not all(n.isidentifier() and not keyword.iskeyword(n) and n not in _CALLER_NAMES
                    for n in names):
        raise ValueError(f"{op.qualname}: caller needs positional parameters and tensor "
                         f"arguments only (no Tensor[], no device)")
    params = [f"{a.name}=defaults[{i}]" if a.has_default else a.name
              for i, a in enumerate(arguments)]
    tensors = [names[i] for i in op.tensor_positions]
    plain = " and ".join(f'getattr({t}, "_ag", None) is None and '
                         f'(getattr({t}, "_base", None) is None or {t}._base._ag is None)'
                         for t in tensors)
    name = op.schema.name
    source = _CALLER.format(name=name, params=", ".join(params), args=", ".join(names),
                            keys=" | ".join(f'getattr({t}, "_keyset", 0)' for t in tensors),
                            plain=plain)
    filename = f"<generated caller of {op.qualname}>"
    namespace = {"__name__": module, "op": op, "cache": op._dispatch_cache, "state": _state,
                 "trace": trace, "is_view": op.is_view,
                 "defaults": [a.default for a in arguments]}
    exec(compile(source, filename, "exec"), namespace)
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    return namespace[name]


def call(op: OpOverload, *args, **kwargs):
    """Dispatch one call of ``op``: the fast path every eager op takes."""
    if kwargs or len(args) != op.nargs:
        args = op.binder.bind(args, kwargs)
    ks = 0
    for i in op.tensor_positions:
        ks |= getattr(args[i], "_keyset", 0)
    s = _state
    if op.tensorlist_positions or op.device_position is not None:
        ks = compute_keyset(op, args)
    else:
        ks = (ks | s.include) & ~s.exclude
    entry = op._dispatch_cache.get(ks)
    if entry is None:
        entry = _select(op, ks, args)
    kernel, key, mask, mixed, below = entry
    if mixed:
        check_same_device(op, args)
    if below is not None:
        for i in op.tensor_positions:
            t = args[i]
            if getattr(t, "_ag", None) is not None:
                break
            base = getattr(t, "_base", None)
            if base is not None and base._ag is not None:
                break
        else:
            return below(*args)
        if not s.grad_enabled and not op.is_view:
            return below(*args)
    if kernel.boxed:
        return kernel.fn(op, ks & mask, args)
    return kernel.fn(*args)


def redispatch(op: OpOverload, ks: int, args: tuple):
    """Continue a call below the current key: ``ks`` already has the higher keys masked off."""
    entry = op._dispatch_cache.get(ks)
    if entry is None:
        entry = _select(op, ks)
    kernel, key, mask, mixed, below = entry
    if kernel.boxed:
        return kernel.fn(op, ks & mask, args)
    return kernel.fn(*args)


def check_same_device(op, args):
    """PyTorch's common_device_check: one device per call (zero-dim CPU tensors exempt)."""
    seen = None
    names = op.binder.names
    for i in op.tensor_positions + op.tensorlist_positions:
        items = args[i] if i in op.tensorlist_positions else (args[i],)
        for t in items:
            if not hasattr(t, "_keyset"):
                continue
            if t.device.type == "cpu" and t.ndim == 0:
                continue
            if seen is None:
                seen = t.device
            elif t.device != seen:
                raise RuntimeError(
                    f"Expected all tensors to be on the same device, but got {names[i]} is on "
                    f"{t.device}, different from other tensors on {seen} (when checking argument "
                    f"in method {op.qualname})")


# --- tracing: every call and redispatch reported to core.trace -----------------------------------
# While a trace sink is installed (the profiler, explain(), or show_trace()), the traced twins of
# call/redispatch replace the fast ones; swapping functions keeps the untraced path free.

_BACKEND_FUNCTIONALITIES = (K.DENSE, K.FUNC_INDEX["Sparse"])
_keyset_names = {}   # key set -> its printed form (printing one walks every key)


def _run_traced(kind, op, ks, entry, args, caller=None):
    kernel, key, mask, mixed, below = entry
    keyset = _keyset_names.get(ks)
    if keyset is None:
        keyset = _keyset_names[ks] = repr(K.DispatchKeySet(ks))
    # ``kernel`` is the Kernel itself: sinks print it when they need to (it is immutable).
    span = trace.begin("dispatch", op.qualname, kind=kind, key=key.name, keyset=keyset,
                       kernel=kernel)
    if caller is not None:
        span.fields["caller"] = caller
        span.fields["shapes"] = _input_shapes(args)
    try:
        if kernel.boxed:
            return kernel.fn(op, ks & mask, args)
        if key.functionality not in _BACKEND_FUNCTIONALITIES \
                or kernel.source == "CompositeImplicitAutograd":
            return kernel.fn(*args)   # a decomposition: the ops it calls report themselves
        # The backend kernel proper: its own "kernel" span, ended with what it produced.
        inner = trace.begin("kernel", kernel.name, key=key.name, source=kernel.source)
        try:
            out = kernel.fn(*args)
        except BaseException as exc:
            trace.end(inner, raised=type(exc).__name__)
            raise
        trace.end(inner, outputs=_describe_outputs(out))
        return out
    finally:
        trace.end(span)


def _input_shapes(args):
    """Each argument's shape (a tuple; a list of them for a tensor list; () for non-tensors):
    PyTorch's profiler "Input Shapes". Tuples of ints keep the garbage collector off them."""
    shapes = []
    for a in args:
        shape = getattr(a, "_shape", None)
        if shape is None:
            shape = [t._shape for t in a] \
                if type(a) in (list, tuple) and a and hasattr(a[0], "_shape") else ()
        shapes.append(shape)
    return tuple(shapes)


def _describe_outputs(out):
    """``["float32[2, 3]", ...]`` for a kernel's result (None and non-tensors as their repr)."""
    items = out if isinstance(out, (tuple, list)) else (out,)
    return [f"{t.dtype.name}{list(t._shape)}" if hasattr(t, "_shape") else repr(t)
            for t in items]


def _call_traced(op, *args, **kwargs):
    if kwargs or len(args) != op.nargs:
        args = op.binder.bind(args, kwargs)
    ks = compute_keyset(op, args)
    entry = op._dispatch_cache.get(ks) or _select(op, ks, args)
    if entry[3]:
        check_same_device(op, args)
    # The Python function that made the call (``Tensor.__add__``): the frontend's entry point;
    # a call (not a redispatch) also records its input shapes, for the profiler.
    caller = sys._getframe(1)
    if caller.f_code in _PASS_THROUGH:   # a frontend's ``direct_caller``: name its own caller
        caller = caller.f_back
    return _run_traced("call", op, ks, entry, args, caller.f_code.co_qualname)


def _redispatch_traced(op, ks, args):
    entry = op._dispatch_cache.get(ks) or _select(op, ks)
    return _run_traced("redispatch", op, ks, entry, args)


_fast = {"call": call, "redispatch": redispatch}


def _on_trace_change(enabled: bool):
    global redispatch
    # Python operators and direct callers call what ``call`` would pick past it (Note [Operator
    # fast path]): while a trace is on they must not, and afterwards selections fill it anew.
    for op in REGISTRY.values():
        _clear_caches(op)
    if enabled:
        OpOverload.__call__ = _call_traced
        redispatch = _redispatch_traced
    else:
        OpOverload.__call__ = _fast["call"]
        redispatch = _fast["redispatch"]


class PrintSink:
    """Prints dispatch events as they start, indented by depth (``STRATA_SHOW_DISPATCH_TRACE``)."""

    def __init__(self, file=None):
        self.file = file

    def record(self, ev):
        if ev.layer == "dispatch":
            f = ev.fields
            print(f"{'  ' * ev.depth}[{f['kind']}] op=[{ev.name}], key=[{f['key']}] "
                  f"keyset={f['keyset']} kernel={f['kernel']}", file=self.file or sys.stdout)


OpOverload.__call__ = call
trace.on_change(_on_trace_change)
if config.show_dispatch_trace:
    trace.add_sink(PrintSink())
