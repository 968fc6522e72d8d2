"""The engine: runs the backward graph from some roots (``torch/csrc/autograd/engine.cpp``).

1. Count, for every node reachable from the roots, how many edges lead into it.
2. Keep one input buffer per node that sums the gradients its consumers send.
3. A node whose count drops to zero is ready; the ready queue runs the most recently created
   node first (highest sequence number; AccumulateGrad nodes first of all).
4. Running a node: tensor hooks, retain_grad, node pre-hooks, ``apply``, node post-hooks; then
   each output gradient goes into the buffer of the node its edge points to.

With ``inputs`` (``autograd.grad``), only the nodes on a path to those inputs run, and the
gradient arriving at each input's edge is captured instead of accumulated into ``.grad``.
CPU work runs on the calling thread, as PyTorch does for CPU graph tasks.
"""

import heapq
import sys
import threading
import warnings

import numpy as np

from .._tensor import CPU_KEYSET
from ..core import dtype as D
from ..core import fp_errors, trace
from ..core.tensor_impl import INFERENCE_VERSION
from ..dispatch.tls import _state
from ..ops import pointwise as P
from . import anomaly_mode
from .graph import AccumulateGrad


class _Capture:
    __slots__ = ("index", "input_nr")

    def __init__(self, index, input_nr):
        self.index = index
        self.input_nr = input_nr


def execute(roots, grads, keep_graph, create_graph, inputs=None, accumulate_grad=True):
    """Backpropagate ``grads`` from the edges ``roots``.

    ``inputs``: edges whose gradient to return (``autograd.grad``, accumulate_grad=False), or to
    restrict accumulation to (``backward(inputs=...)``). Returns the captured gradients.
    """
    dependencies = _dependencies(roots)
    needed = captures = None
    captured = []
    if inputs is not None:
        captured = [None] * len(inputs)
        captures = {}
        targets = set()
        for i, (node, input_nr) in enumerate(inputs):
            if node is None:
                continue
            targets.add(node)
            if not accumulate_grad:
                captures.setdefault(node, []).append(_Capture(i, input_nr))
        needed = _needed_nodes(roots, targets, run_targets=accumulate_grad)
    buffers = {}
    for (node, input_nr), grad in zip(roots, grads):
        if node is not None:
            _add_to_buffer(buffers, node, input_nr, grad)
    ready = []
    counter = 0
    for node in buffers:
        if dependencies.get(node, 0) == 0:
            heapq.heappush(ready, (-node._seq, counter, node))
            counter += 1
    prev = _state.grad_enabled
    _state.grad_enabled = create_graph
    # Note [Checkpoint validity]: a backward that computes only some gradients (autograd.grad,
    # backward(inputs=...)) cannot run a reentrant checkpoint, whose inner backward accumulates
    # into every leaf's .grad; PyTorch's CheckpointValidGuard tracks this the same way.
    prev_valid = _checkpoint.valid
    _checkpoint.valid = prev_valid and inputs is None
    span = trace.begin("autograd", "backward", kind="engine", roots=len(roots)) \
        if trace.active else None
    heappush, heappop = heapq.heappush, heapq.heappop
    try:
        while ready:
            node = heappop(ready)[2]
            inputs_ = buffers.pop(node, None) or [None] * (len(node._output_meta) or 1)
            if captures is not None:
                is_needed = node in needed
                if node in captures:
                    hooked = inputs_ if is_needed else _tensor_pre_hooks(node, list(inputs_))
                    for cap in captures[node]:
                        captured[cap.index] = hooked[cap.input_nr]
                if not is_needed:
                    continue
            if trace.active:
                outputs = _call_function_traced(node, inputs_)
            elif node._tensor_hooks is None and node._retain_hooks is None \
                    and not node._pre_hooks and not node._post_hooks \
                    and type(node) is not AccumulateGrad and not anomaly_mode.ever_enabled:
                outputs = node.apply(inputs_)   # Note [Plain node call]
            else:
                outputs = _call_function(node, inputs_)
            if not keep_graph:
                node.release_variables()
            for (nxt, input_nr), grad in zip(node.next_functions, outputs):
                if nxt is None:
                    continue
                if grad is not None:
                    buf = buffers.get(nxt)   # _add_to_buffer's first gradient, inlined
                    if buf is None:
                        buf = buffers[nxt] = [None] * (len(nxt._output_meta) or 1)
                        buf[input_nr] = grad
                    else:
                        _add_to_buffer(buffers, nxt, input_nr, grad)
                left = dependencies[nxt] - 1
                dependencies[nxt] = left
                if left == 0 and (needed is None or nxt in needed or nxt in captures):
                    heappush(ready, (-nxt._seq, counter, nxt))
                    counter += 1
            # the buffers now hold the only engine reference to each gradient, so AccumulateGrad
            # can steal one that no one else holds (graph.py, ``_owned_by_engine``)
            outputs = grad = None
    finally:
        _state.grad_enabled = prev
        _checkpoint.valid = prev_valid
        if span is not None:
            trace.end(span)
    return captured


class _CheckpointValidity(threading.local):
    valid = True


_checkpoint = _CheckpointValidity()


def is_checkpoint_valid() -> bool:
    """False inside a backward that computes only some gradients (Note [Checkpoint validity])."""
    return _checkpoint.valid


def _dependencies(roots):
    deps = {}
    # one entry per node: two outputs of one node as roots (an LSTM cell's h and c) must not
    # count its edges twice
    stack = list(dict.fromkeys(node for node, _ in roots if node is not None))
    root_nodes = set(stack)   # visited already; every other node is visited when first counted
    while stack:
        node = stack.pop()
        for nxt, _ in node.next_functions:
            count = deps.get(nxt)
            if count is not None:
                deps[nxt] = count + 1
            elif nxt is not None:
                deps[nxt] = 1
                if nxt not in root_nodes:
                    stack.append(nxt)
    return deps


def _needed_nodes(roots, targets, run_targets):
    """Nodes that lie on a path from the roots to a target (``exec_info`` in engine.cpp).
    Targets run only when their gradients accumulate (``backward(inputs=...)``)."""
    needed = set()
    state = {}   # node -> True (leads to a target) / False; absent = unvisited
    for root, _ in roots:
        if root is None or root in state:
            continue
        stack = [(root, iter(root.next_functions))]
        state[root] = False
        while stack:
            node, children = stack[-1]
            advanced = False
            for child, _ in children:
                if child is None:
                    continue
                if child not in state:
                    state[child] = False
                    stack.append((child, iter(child.next_functions)))
                    advanced = True
                    break
                if state[child] or child in targets:
                    state[node] = True
            if advanced:
                continue
            stack.pop()
            if stack and (state[node] or node in targets):
                state[stack[-1][0]] = True
    for node, leads in state.items():
        if leads or (run_targets and node in targets):
            needed.add(node)
    return needed


def _add_to_buffer(buffers, node, input_nr, grad):
    buf = buffers.get(node)
    if buf is None:
        buf = buffers[node] = [None] * (len(node._output_meta) or 1)
    old = buf[input_nr]
    if old is None:
        buf[input_nr] = grad
    elif _can_accumulate_in_place(old, grad):
        _accumulate_in_place(old, grad)
    else:
        buf[input_nr] = P.add(old, grad, 1)


def _can_accumulate_in_place(old, grad) -> bool:
    """Note [In-place gradient accumulation]: as PyTorch's ``InputBuffer::accumulate``, a
    gradient the buffer alone holds (no other reference to the tensor, nor to its memory but
    through its own base) takes the next one in place when no graph is being built: a weight
    used at every step of a recurrence gets one gradient buffer instead of one per step.
    References counted: the buffer's list, the caller's ``old``, this parameter and
    getrefcount's argument; a base's: the view's slot and the argument; the storage's: the
    tensor's slot (and its base's) and the argument."""
    if _state.grad_enabled or old._ag is not None or old._shape != grad._shape \
            or old.dtype is not grad.dtype \
            or old.device is not grad.device and old.device != grad.device \
            or sys.getrefcount(old) > 4:
        return False
    base = old._base
    if base is None:   # a storage never made is held by no one (Note [Lazy storage])
        storage = old._storage_or_none
        return storage is None or sys.getrefcount(storage) <= 2
    return base._base is None and sys.getrefcount(base) <= 2 and \
        sys.getrefcount(old._storage) <= 3


# Note [Direct buffer accumulation]: the in-place accumulation of Note [In-place gradient
# accumulation] writes into a tensor only the engine's buffer holds, so no one can observe how
# the sum is made. For two dense CPU tensors of one float dtype, outside any trace or dispatch
# mode, it is one ``np.add(old, grad, out=old)`` (the ufunc ``add_``'s CPU kernel runs, with the
# same silent IEEE state) instead of a dispatcher call through ADInplaceOrView and the kernel's
# checks: 800 such sums in an RL episode's backward. Anything else (another device, half
# precision, a strided buffer, a trace that should show the ``add_``) takes ``add_``.
_DIRECT_DTYPES = frozenset((D.float32, D.float64))
_set_fp_state, _reset_fp_state, _IGNORE_FP = fp_errors.state.set, fp_errors.state.reset, \
    fp_errors.IGNORE


def _accumulate_in_place(old, grad):
    vc = old._vc
    if trace.active or _state.include or old._keyset != CPU_KEYSET \
            or grad._keyset != CPU_KEYSET or old.dtype not in _DIRECT_DTYPES \
            or vc is INFERENCE_VERSION:
        P.add_(old, grad, 1)
        return
    out = old._array
    if out is None:
        out = old._np()
    if not (out.flags.c_contiguous or out.flags.f_contiguous):   # not dense: add_ decides
        P.add_(old, grad, 1)
        return
    other = grad._array
    if other is None:
        other = grad._np()
    token = _set_fp_state(_IGNORE_FP)
    try:
        np.add(out, other, out=out)
    finally:
        _reset_fp_state(token)
    if vc is not None:
        vc.value += 1


def _tensor_pre_hooks(node, grads):
    """Tensor hooks (``register_hook``) may replace a gradient; then retain_grad stores it."""
    if node._tensor_hooks is not None or isinstance(node, AccumulateGrad):
        for nr in range(len(grads)):
            hooks = node.tensor_hooks(nr)
            if hooks:
                for hook in tuple(hooks.values()):
                    if grads[nr] is None:
                        break
                    new = hook(grads[nr])
                    if new is not None:
                        grads[nr] = new
    retain = node._retain_hooks
    if retain is not None:
        for nr, ref in retain.items():
            t = ref()
            if t is not None and grads[nr] is not None:
                _retain(t, grads[nr])
    return grads


def _retain(t, grad):
    from ..ops import factory as F
    ag = t._ag
    if ag.grad is None:
        ag.grad = F.clone(grad, memory_format="contiguous_format")
    else:
        ag.grad = P.add(ag.grad, grad, 1)


def _call_function_traced(node, grads):
    span = trace.begin("autograd", node.name(), kind="backward", seq=node._seq)
    try:
        return _call_function(node, grads)
    finally:
        trace.end(span)


# Note [Plain node call]: most nodes of a backward pass have no hooks (tensor, retain_grad,
# pre or post), run with anomaly mode never turned on, and are not a leaf's AccumulateGrad
# (whose tensor hooks live on the leaf): the engine calls their ``apply`` directly, skipping
# ``_call_function``'s frames, which only look for those, reading the same slots.

def _call_function(node, grads):
    """A node's hooks, backward and anomaly NaN check; anything failing there warns with the
    forward call's stack (anomaly mode) before it propagates, as PyTorch's engine does."""
    try:
        return _evaluate_function(node, grads)
    except Exception:
        if node._trace is not None:
            warnings.warn(f"Error detected in {node.name()}. Traceback of forward call that "
                          f"caused the error:\n{''.join(node._trace)}", stacklevel=3)
        raise


def _evaluate_function(node, grads):
    grads = _tensor_pre_hooks(node, grads)
    if node._pre_hooks:
        for hook in tuple(node._pre_hooks.values()):
            new = hook(tuple(grads))
            if new is not None:
                grads = list(new)
    outputs = node.apply(grads)
    if node._post_hooks:
        for hook in tuple(node._post_hooks.values()):
            new = hook(tuple(outputs), tuple(grads))
            if new is not None:
                outputs = list(new)
    if anomaly_mode.ever_enabled and anomaly_mode._state.enabled \
            and anomaly_mode._state.check_nan:
        anomaly_mode.check_nan(node, outputs)
    return outputs
