"""Tensors as MPI buffers, reduce ops, and the collective fingerprint check.

MPI moves contiguous host memory. A contiguous CPU tensor is handed to MPI as a NumPy view of its
own storage (no copy); any other tensor (non-contiguous, or on the sim/opencl device) is staged
through a host copy, written back when the caller waits. bfloat16 moves as raw 16-bit words and
is reduced in float32 (MPI has no bfloat16 type); bool reduces with MPI's logical ops.
"""

import enum
import zlib

import numpy as np

from .. import config
from ..autograd.grad_mode import no_grad
from ..core import dtype as D
from ..tensor_new import from_numpy


class RedOpType(enum.Enum):
    SUM = 0
    AVG = 1
    PRODUCT = 2
    MIN = 3
    MAX = 4
    BAND = 5
    BOR = 6
    BXOR = 7
    PREMUL_SUM = 8
    UNUSED = 9


class ReduceOp:
    """``dist.ReduceOp.SUM`` etc. (an enum, as ``torch.distributed.ReduceOp``'s members)."""

    RedOpType = RedOpType
    SUM = RedOpType.SUM
    AVG = RedOpType.AVG
    PRODUCT = RedOpType.PRODUCT
    MIN = RedOpType.MIN
    MAX = RedOpType.MAX
    BAND = RedOpType.BAND
    BOR = RedOpType.BOR
    BXOR = RedOpType.BXOR
    PREMUL_SUM = RedOpType.PREMUL_SUM
    UNUSED = RedOpType.UNUSED


_BITWISE = (RedOpType.BAND, RedOpType.BOR, RedOpType.BXOR)


def check_reduce_op(name, op, dtype):
    """PyTorch's errors for an op the dtype (or MPI) cannot reduce, raised before sending."""
    if not isinstance(op, RedOpType):
        raise TypeError(f"{name}(): incompatible function arguments: op must be a "
                        f"strata.distributed.ReduceOp, got {op!r}")
    if op in (RedOpType.PREMUL_SUM, RedOpType.UNUSED):
        raise RuntimeError(f"Cannot use ReduceOp.{op.name} with MPI")
    if op in _BITWISE and dtype.is_floating_point:
        raise RuntimeError(f"Cannot use ReduceOp.{op.name} with non-integral dtype")
    if op is RedOpType.AVG and not dtype.is_floating_point:
        raise RuntimeError(f"result type Float can't be cast to the desired output type "
                           f"{_TYPE_NAMES.get(dtype.name, dtype.name)}")


_TYPE_NAMES = {"bool": "Bool", "uint8": "Byte", "int8": "Char", "int16": "Short",
               "int32": "Int", "int64": "Long"}


def mpi_op(MPI, op, dtype):
    if dtype is D.bool_:
        return {RedOpType.SUM: MPI.LOR, RedOpType.MAX: MPI.LOR, RedOpType.BOR: MPI.LOR,
                RedOpType.PRODUCT: MPI.LAND, RedOpType.MIN: MPI.LAND,
                RedOpType.BAND: MPI.LAND, RedOpType.BXOR: MPI.LXOR}[op]
    return {RedOpType.SUM: MPI.SUM, RedOpType.AVG: MPI.SUM, RedOpType.PRODUCT: MPI.PROD,
            RedOpType.MIN: MPI.MIN, RedOpType.MAX: MPI.MAX, RedOpType.BAND: MPI.BAND,
            RedOpType.BOR: MPI.BOR, RedOpType.BXOR: MPI.BXOR}[op]


class HostBuffer:
    """A tensor's elements as a flat contiguous NumPy array MPI can read and write.

    ``array`` aliases the tensor when it is a contiguous CPU tensor; otherwise it is a copy and
    ``write_back()`` (run on the caller's thread, in ``Work.wait``) copies it into the tensor."""

    __slots__ = ("tensor", "array", "staged")

    def __init__(self, tensor):
        t = tensor.detach()
        self.tensor = tensor
        self.staged = not (t.device.type == "cpu" and t.is_contiguous())
        host = t.cpu().contiguous() if self.staged else t
        array = host.numpy().reshape(-1)
        self.array = array.copy() if self.staged else array

    @property
    def wire(self):
        """The array as MPI sees it: bfloat16 as raw 16-bit words."""
        return self.array.view(np.uint16) if self.array.dtype == D.bfloat16.np else self.array

    def write_back(self):
        if self.staged:
            with no_grad():
                self.tensor.detach().copy_(from_numpy(self.array).view(self.tensor.shape))


def reduce_in_place(comm, MPI, array, op, dtype, root=None):
    """All-reduce (root None) or reduce to ``root`` of a flat array, in place; AVG divides."""
    work = array.astype(np.float32) if dtype is D.bfloat16 else array
    mop = mpi_op(MPI, op, dtype)
    if root is None:
        comm.Allreduce(MPI.IN_PLACE, work, op=mop)
    elif comm.Get_rank() == root:
        comm.Reduce(MPI.IN_PLACE, work, op=mop, root=root)
    else:
        comm.Reduce(work, None, op=mop, root=root)
        return
    if op is RedOpType.AVG:
        np.divide(work, comm.Get_size(), out=work, casting="unsafe")
    if work is not array:
        array[...] = work


# --- the fingerprint check ------------------------------------------------------------------

_OPS = ("all_reduce", "broadcast", "all_gather", "all_gather_into_tensor", "reduce_scatter",
        "reduce_scatter_tensor", "reduce", "gather", "scatter", "all_to_all",
        "all_to_all_single", "barrier", "object")
_DTYPES = [None] + list(D.ALL_DTYPES)
_SHOWN_DIMS = 5
_FIELDS = 7 + _SHOWN_DIMS   # seq, op, dtype, root, reduce op, ndim, shape crc, dims...


def fingerprint(seq, op_name, dtype=None, shape=None, root=-1, redop=None):
    """What every rank must agree on for one collective, as int64s (shape None: any shape)."""
    dims = list(shape) if shape is not None else []
    row = [seq, _OPS.index(op_name), _DTYPES.index(dtype), root,
           -1 if redop is None else redop.value, -1 if shape is None else len(dims),
           zlib.crc32(str(dims).encode())]
    row += (dims + [-1] * _SHOWN_DIMS)[:_SHOWN_DIMS]
    return np.array(row, dtype=np.int64)


def _describe(row):
    ndim = int(row[5])
    shape = "any" if ndim < 0 else str([int(d) for d in row[7:7 + min(ndim, _SHOWN_DIMS)]]
                                        + (["..."] if ndim > _SHOWN_DIMS else []))
    dtype = _DTYPES[int(row[2])]
    redop = "" if row[4] < 0 else f", ReduceOp={RedOpType(int(row[4])).name}"
    root = "" if row[3] < 0 else f", root={int(row[3])}"
    return (f"CollectiveFingerPrint(SequenceNumber={int(row[0])}, OpType={_OPS[int(row[1])]}, "
            f"TensorShape={shape}, TensorDtype={dtype}{root}{redop})")


def check_fingerprints(comm, MPI, mine):
    """Allgather every rank's fingerprint; raise the same error on every rank if they differ."""
    if not config.distributed_check_collectives:
        return
    rows = np.empty((comm.Get_size(), len(mine)), dtype=np.int64)
    comm.Allgather(mine, rows)
    for rank, row in enumerate(rows):
        if not np.array_equal(row, rows[0]):
            raise RuntimeError(
                f"Detected mismatch between collectives on ranks. Rank {rank} is running "
                f"collective: {_describe(row)}, but Rank 0 is running collective: "
                f"{_describe(rows[0])}. Collectives differ in the following aspects: "
                f"{_differences(row, rows[0])}")


def _differences(a, b):
    names = ("Sequence number", "Op type", "Tensor dtypes", "Root", "Reduce op", "Tensor shapes",
             "Tensor shapes")
    found = [n for i, n in enumerate(names) if a[i] != b[i]]
    if not np.array_equal(a[7:], b[7:]):
        found.append("Tensor shapes")
    return ", ".join(dict.fromkeys(found))
