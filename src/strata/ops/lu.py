"""Linear algebra, part 3: the LU family (``linalg.lu_factor_ex``, ``linalg.lu``,
``lu_unpack``, ``linalg.lu_solve``) and the determinants that need it (``slogdet``,
``logdet``).

As in ATen, ``linalg_lu_factor_ex``, ``linalg_lu`` and ``lu_unpack`` are primitives: one kernel
call each (LAPACK ``getrf``'s partial pivoting, backends/cpu/lu.py) and PyTorch's backward
formulas (``lu_factor_ex_backward``, ``linalg_lu_backward``, ``lu_unpack_backward``). Results
follow LAPACK: ``LU`` holds L (unit diagonal, not stored) below U, ``pivots`` are 1-based int32
row swaps, ``info`` is the 1-based index of the first exactly-zero pivot (0 when there is none).
``linalg_lu_solve`` is one too (``getrs``: row swaps and two triangular solves); the
determinants decompose into them.
"""

import math

from ..core import dtype as D
from ..core.shape import broadcast_shapes
from . import meta_rules as R
from . import pointwise as P
from . import reductions as Red
from . import shape as S
from .factorizations import check_float, check_matrix, check_square, linalg_det, linalg_qr
from .factory import arange
from .op import TensorSpec, defop, register_decomposition


def check_lu_input(name, A, pivot):
    if A.ndim < 2:
        raise RuntimeError(f"{name}: Expected tensor with 2 or more dimensions. Got size: "
                           f"{list(A.shape)} instead")
    if A.dtype not in (D.float32, D.float64):
        raise NotImplementedError(f"\"lu_cpu\" not implemented for '{R.type_name(A.dtype)}'")
    if not pivot:
        raise RuntimeError("linalg.lu_factor: LU without pivoting is not implemented on the CPU")


def zero_pivot_message(name, info, batched):
    """PyTorch's ``_linalg_check_errors`` wording for the first factorization with info > 0
    (``info``: a tensor or a NumPy array)."""
    flat = info.reshape(-1).tolist()
    bad = next(i for i, value in enumerate(flat) if value != 0)
    where = f"(Batch element {bad}): " if batched else ""
    j = flat[bad]
    return (f"{name}: {where}U[{j},{j}] is zero and using it on lu_solve would result in a "
            f"division by zero. If you still want to perform the factorization, consider "
            f"calling linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)")


def _factor_ex_meta(A, pivot=True, check_errors=False):
    check_lu_input("torch.lu_factor", A, pivot)
    *batch, m, n = A.shape
    batch = tuple(batch)
    return (TensorSpec(tuple(A.shape), A.dtype), TensorSpec(batch + (min(m, n),), D.int32),
            TensorSpec(batch, D.int32))


def _unpacked(shape, dt, unpack_data=True, unpack_pivots=True):
    """Specs of P (m, m), L (m, k), U (k, n) over the batch; a part not asked for is empty."""
    *batch, m, n = shape
    batch, k = tuple(batch), min(m, n)
    empty = TensorSpec((0,), dt)
    permutation = TensorSpec(batch + (m, m), dt) if unpack_pivots else empty
    if not unpack_data:
        return permutation, empty, empty
    return permutation, TensorSpec(batch + (m, k), dt), TensorSpec(batch + (k, n), dt)


def _unpack_meta(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True):
    if LU_pivots.dtype is not D.int32:
        raise RuntimeError("torch.lu_unpack: LU_pivots is expected to be a contiguous tensor of "
                           "torch.int32 dtype.\nNote: this function is intended to be used with "
                           "the output produced by torch.linalg.lu_factor")
    return _unpacked(LU_data.shape, LU_data.dtype, unpack_data, unpack_pivots)


def _lu_meta(A, pivot=True):
    check_lu_input("linalg.lu", A, pivot)
    return _unpacked(A.shape, A.dtype)


linalg_lu_factor_ex = defop("linalg_lu_factor_ex(Tensor A, *, bool pivot=True, "
                            "bool check_errors=False) -> (Tensor LU, Tensor pivots, "
                            "Tensor info)", _factor_ex_meta)
lu_unpack = defop("lu_unpack(Tensor LU_data, Tensor LU_pivots, bool unpack_data=True, "
                  "bool unpack_pivots=True) -> (Tensor P, Tensor L, Tensor U)", _unpack_meta)
linalg_lu = defop("linalg_lu(Tensor A, *, bool pivot=True) -> (Tensor P, Tensor L, Tensor U)",
                  _lu_meta)
linalg_slogdet = defop("linalg_slogdet(Tensor A) -> (Tensor sign, Tensor logabsdet)")
logdet = defop("logdet(Tensor self) -> Tensor", method=True, function=True)
def _check_lu_solve(LU, pivots, B, left):
    name = "linalg.lu_solve"
    if LU.dtype.category != D.FLOATING:
        raise RuntimeError(f"torch.{name}: Expected a floating point or complex tensor as input. "
                           f"Got {R.type_name(LU.dtype)}")
    if LU.dtype is not B.dtype:
        raise RuntimeError(f"{name}: Expected LU and B to have the same dtype, but found LU of "
                           f"type {R.type_name(LU.dtype)} and B of type {R.type_name(B.dtype)} "
                           f"instead")
    if pivots.dtype is not D.int32:
        raise RuntimeError(f"{name}: pivots should be a Tensor of scalar type torch.int32")
    check_square(f"torch.{name}", LU)
    if B.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor B must have at least 2 dimensions.")
    n = LU.shape[-1]
    if (B.shape[-2] if left else B.shape[-1]) != n:
        raise RuntimeError(f"{name}: Incompatible shapes of A and B for the equation "
                           f"{'AX = B' if left else 'XA = B'} ({n}x{n} and "
                           f"{B.shape[-2]}x{B.shape[-1]})")
    if pivots.shape[-1:] != LU.shape[-1:]:
        raise RuntimeError(f"{name}: Number of pivots per batch should be same as the "
                           f"dimension of the matrix")
    if tuple(pivots.shape) != tuple(LU.shape[:-1]):
        raise RuntimeError(f"{name}: Expected LU.shape[:-1] and pivots.shape to be the same, "
                           f"but got pivots with shape {list(pivots.shape)} instead")


def _lu_solve_meta(LU, pivots, B, left=True, adjoint=False):
    _check_lu_solve(LU, pivots, B, left)
    batch = broadcast_shapes(tuple(LU.shape[:-2]), tuple(B.shape[:-2]))
    return TensorSpec(batch + tuple(B.shape[-2:]), B.dtype)


# A primitive, as in ATen (LAPACK getrs: the row swaps, then two triangular solves), so that
# autograd uses PyTorch's formulas for LU's and B's gradients.
linalg_lu_solve = defop("linalg_lu_solve(Tensor LU, Tensor pivots, Tensor B, *, bool left=True, "
                        "bool adjoint=False) -> Tensor", _lu_solve_meta)


@register_decomposition(linalg_slogdet)
def _slogdet(A):
    """log|det A| = sum log|diag R| of a QR factorization (one LAPACK call; no overflow) and
    sign(det A) = det(Q) (+-1) times the signs of diag R. A matrix that QR finds numerically
    singular goes through LU instead, as ATen's slogdet does: its exactly-zero pivot gives
    (0, -inf) where QR leaves a rounding residue."""
    check_matrix("linalg.slogdet", A)
    check_square("linalg.slogdet", A)
    check_float("linalg.slogdet", A, "lu_cpu")
    Q, R_ = linalg_qr(A)
    diag = S.diagonal(R_, 0, -2, -1)
    magnitude = P.abs(diag)
    if A.numel() and not A.is_meta:   # a value-dependent choice: meta tensors take QR's
        cutoff = A.shape[-1] * D.finfo(A.dtype).eps * float(magnitude.max())
        if bool(P.le(magnitude, cutoff).any()):
            return _slogdet_from_lu(A)
    sign = P.mul(P.sign(linalg_det(Q)), Red.prod_dim(P.sign(diag), -1))
    return sign, Red.sum(P.log(magnitude), [-1], False)


def _slogdet_from_lu(A):
    """sign(det P) (-1 per row swap) times the signs of diag U, and sum log|diag U|."""
    LU, pivots, _ = linalg_lu_factor_ex(A)
    diag = S.diagonal(LU, 0, -2, -1)
    swaps = Red.sum(P.ne(pivots, arange(1, A.shape[-1] + 1, device=A.device)), [-1], False)
    sign = Red.prod_dim(P.sign(diag), -1)
    sign = P.where(P.eq(P.remainder(swaps, 2), 1), P.neg(sign), sign)
    return sign, Red.sum(P.log(P.abs(diag)), [-1], False)


@register_decomposition(logdet)
def _logdet(self):
    """log det: nan for a negative determinant, -inf for a singular matrix."""
    sign, logabsdet = linalg_slogdet(self)
    return P.where(P.lt(sign, 0), math.nan, logabsdet)
