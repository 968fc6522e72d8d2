"""``resize_`` on the OpenCL device: the tensor's layout changes on the host; growing past its
storage allocates a bigger device block and copies the old bytes into its start (one
device-to-device copy, as ``sim`` does), so the prefix survives and the new elements are
uninitialised, as in PyTorch. Other tensors that viewed the old storage keep viewing it
(ops/factory.py's note on ``resize_``)."""

from ..._tensor import make_tensor
from ...core import dtype as D
from ...ops import factory as F
from .opencl_pointwise import runtime_of


def resize_(self, size, memory_format=None):
    shape, strides, nbytes = F.resize_layout(self, size, memory_format)
    old = self._storage
    if nbytes > old.nbytes:
        rt = runtime_of(self)
        grown = rt.empty((nbytes,), (1,), D.uint8)
        if old.nbytes:
            rt.copy_buffer(grown, make_tensor(old, 0, (old.nbytes,), (1,), D.uint8,
                                              self.device, grown._keyset), old.nbytes)
        self._storage = grown._storage
    self._shape, self._strides = shape, strides
    return self


def kernels() -> dict:
    return {F.resize_: resize_}
