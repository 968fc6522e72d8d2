"""The Meta backend: every op's meta function, run as a kernel. Tensors have shapes, dtypes and
strides but no data, so whole programs run to find shapes ("would this fit?") and the tests check
each op's meta against its real result.
"""

from ...core.device import device
from ...core.storage import Storage
from ...dispatch import register_kernel
from ...dispatch.keys import backend_keyset
from ...ops import factory as F
from ...ops.op import REGISTRY, TensorSpec
from ...ops.meta_rules import contiguous_strides
from ..._tensor import make_tensor

META = device("meta")
META_KEYSET = backend_keyset("Meta")


def meta_tensor(spec: TensorSpec):
    strides = spec.strides if spec.strides is not None else contiguous_strides(spec.shape)
    extent = 1 + sum((n - 1) * s for n, s in zip(spec.shape, strides)) if all(spec.shape) else 0
    storage = Storage(extent * spec.dtype.itemsize, META)
    return make_tensor(storage, 0, spec.shape, strides, spec.dtype, META, META_KEYSET)


def _wrap(result):
    if isinstance(result, TensorSpec):
        return meta_tensor(result)
    if isinstance(result, (tuple, list)):
        return type(result)(_wrap(r) for r in result)
    return result  # an in-place op returns self


def meta_kernel(op):
    meta = op.meta

    def kernel(*args):
        return _wrap(meta(*args))
    kernel.__name__ = kernel.__qualname__ = f"meta_kernel[{op.name}]"
    return kernel


def copy_(self, src, non_blocking=False):
    """Runs for any copy that involves a meta tensor (Meta is the highest backend)."""
    if self.device.type != "meta":
        raise NotImplementedError("Cannot copy out of meta tensor; no data!")
    return _wrap(F.copy_.meta(self, src, non_blocking))


def register():
    for op in REGISTRY.values():
        if op.meta is not None and not op.is_view and op.decomposition is None:
            register_kernel(op, "Meta", copy_ if op is F.copy_ else meta_kernel(op))
