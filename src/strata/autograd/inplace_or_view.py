"""The ADInplaceOrView key: in-place ops bump the version counter of what they write.

Every other op falls through this key (PyTorch's ADInplaceOrView fallback is a fallthrough too;
Note [ADInplaceOrView key] in ``c10/core/DispatchKey.h``). Autograd reads the counter to detect a
saved tensor that was modified after it was saved.
"""

from ..dispatch import dispatcher as D
from ..dispatch.dispatcher import FALLTHROUGH, register_fallback, register_kernel
from ..dispatch.keys import DispatchKey
from ..ops.op import REGISTRY


def inplace_kernel(op, ks, args):
    result = D.redispatch(op, ks, args)
    for i in op.written_positions:
        args[i]._version_counter().value += 1
    return result


def register():
    register_fallback(DispatchKey.ADInplaceOrView, FALLTHROUGH)
    for op in REGISTRY.values():
        if op.is_inplace and op.decomposition is None:
            register_kernel(op, DispatchKey.ADInplaceOrView, inplace_kernel, boxed=True)
