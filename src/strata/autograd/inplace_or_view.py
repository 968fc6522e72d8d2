"""The ADInplaceOrView key: in-place ops bump the version counter of what they write.

Every other op falls through this key (PyTorch's ADInplaceOrView fallback is a fallthrough too;
Note [ADInplaceOrView key] in ``c10/core/DispatchKey.h``). Autograd reads the counter to detect a
saved tensor that was modified after it was saved.

Note [Inference tensors]: a tensor made inside ``inference_mode`` carries the shared
``INFERENCE_VERSION`` counter instead of its own (it tracks no version). Writing into one outside
inference mode is refused here, before any data changes; inside the mode there is nothing to bump.
"""

from ..core.tensor_impl import INFERENCE_VERSION
from ..dispatch import dispatcher as D
from ..dispatch.dispatcher import FALLTHROUGH, register_fallback, register_kernel
from ..dispatch.keys import DispatchKey
from ..dispatch.tls import _state
from ..ops.op import REGISTRY


def inplace_kernel(op, ks, args):
    positions = op.written_positions
    if len(positions) == 1:   # one written tensor (every ``foo_``): no list to build
        vc = args[positions[0]]._version_counter()
        if vc is INFERENCE_VERSION and not _state.inference_mode:
            _refuse_inference_write()
        result = _redispatch(op, ks, args)
        if vc is not INFERENCE_VERSION:
            vc.value += 1
        return result
    written = [args[i]._version_counter() for i in positions]
    if INFERENCE_VERSION in written and not _state.inference_mode:
        _refuse_inference_write()
    result = _redispatch(op, ks, args)
    for vc in written:
        if vc is not INFERENCE_VERSION:
            vc.value += 1
    return result


def _redispatch(op, ks, args):
    """``D.redispatch``, with its cached-kernel fast path inlined when no trace is installed
    (the trace swaps ``D.redispatch`` for its reporting twin)."""
    if D.redispatch is _UNTRACED_REDISPATCH:
        entry = op._dispatch_cache.get(ks)
        if entry is not None and not entry[0].boxed:
            return entry[0].fn(*args)
    return D.redispatch(op, ks, args)


def _refuse_inference_write():
    raise RuntimeError("Inplace update to inference tensor outside InferenceMode is not "
                       "allowed.You can make a clone to get a normal tensor before doing "
                       "inplace update.See https://github.com/pytorch/rfcs/pull/17 for more "
                       "details.")


_UNTRACED_REDISPATCH = D._fast["redispatch"]   # not D.redispatch: a trace may be on already


def register():
    register_fallback(DispatchKey.ADInplaceOrView, FALLTHROUGH)
    for op in REGISTRY.values():
        if op.is_inplace and op.decomposition is None:
            register_kernel(op, DispatchKey.ADInplaceOrView, inplace_kernel, boxed=True)
