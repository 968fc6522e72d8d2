"""Linear algebra, part 3: the LU family (``linalg.lu_factor_ex``, ``linalg.lu``,
``lu_unpack``, ``linalg.lu_solve``) and the determinants that need it (``slogdet``,
``logdet``), as decompositions.

The factorization is LAPACK ``getrf``'s partial pivoting written with tensor ops, one column
per step: pick the row with the largest |entry| (the first one on ties, as ``idamax``), swap it
up, divide the column below by the pivot and update the trailing block. Autograd then
differentiates the steps themselves, which is the derivative of LU for the pivots it chose.
Results follow LAPACK: ``LU`` holds L (unit diagonal, not stored) below U, ``pivots`` are
1-based int32 row swaps, ``info`` is the 1-based index of the first exactly-zero pivot (0 when
there is none). The price is about 35 op calls per column: fine for the small matrices
programs factor, slow for large ones (256 x 256: ~0.7 s, PyTorch ~0.1 s, shared machine); a
LAPACK kernel would need ``getrf`` (SciPy) and LU's backward formula as a primitive's rows.
"""

import math

from ..core import dtype as D
from . import meta_rules as R
from . import pointwise as P
from . import reductions as Red
from . import shape as S
from .factorizations import check_float, check_matrix, check_square, linalg_det, linalg_qr
from .factorizations import linalg_solve_triangular as solve_triangular
from .factory import _to_copy, arange, eye, full
from .linalg import matmul
from .op import defop, register_decomposition
from .scatter import gather

linalg_lu_factor_ex = defop("linalg_lu_factor_ex(Tensor A, *, bool pivot=True, "
                            "bool check_errors=False) -> (Tensor LU, Tensor pivots, "
                            "Tensor info)")
lu_unpack = defop("lu_unpack(Tensor LU_data, Tensor LU_pivots, bool unpack_data=True, "
                  "bool unpack_pivots=True) -> (Tensor P, Tensor L, Tensor U)")
linalg_lu = defop("linalg_lu(Tensor A, *, bool pivot=True) -> (Tensor P, Tensor L, Tensor U)")
linalg_slogdet = defop("linalg_slogdet(Tensor A) -> (Tensor sign, Tensor logabsdet)")
logdet = defop("logdet(Tensor self) -> Tensor", method=True, function=True)
linalg_lu_solve = defop("linalg_lu_solve(Tensor LU, Tensor pivots, Tensor B, *, bool left=True, "
                        "bool adjoint=False) -> Tensor")


def check_lu_input(name, A, pivot):
    if A.ndim < 2:
        raise RuntimeError(f"{name}: Expected tensor with 2 or more dimensions. Got size: "
                           f"{list(A.shape)} instead")
    if A.dtype not in (D.float32, D.float64):
        raise NotImplementedError(f"\"lu_cpu\" not implemented for '{R.type_name(A.dtype)}'")
    if not pivot:
        raise RuntimeError("linalg.lu_factor: LU without pivoting is not implemented on the CPU")


def zero_pivot_message(name, info, batched):
    """PyTorch's ``_linalg_check_errors`` wording for the first factorization with info > 0."""
    flat = info.reshape(-1)
    bad = int(P.ne(flat, 0).int().argmax().item())
    where = f"(Batch element {bad}): " if batched else ""
    j = int(flat[bad].item())
    return (f"{name}: {where}U[{j},{j}] is zero and using it on lu_solve would result in a "
            f"division by zero. If you still want to perform the factorization, consider "
            f"calling linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)")


def _swap(values, rows, i, j):
    """``values`` (..., m) with entries ``i`` (an int) and ``j`` (a tensor (..., 1)) swapped."""
    at_i = S.unsqueeze(S.select(values, -1, i), -1)
    at_j = gather(values, -1, j)
    return P.where(P.eq(rows, i), at_j, P.where(P.eq(rows, j), at_i, values))


@register_decomposition(linalg_lu_factor_ex)
def _lu_factor_ex(A, pivot=True, check_errors=False):
    check_lu_input("torch.lu_factor", A, pivot)
    *batch, m, n = A.shape
    k = min(m, n)
    rows = arange(0, m, device=A.device)
    LU, chosen = A, []   # chosen: each step's pivot row
    for j in range(k):
        column = S.select(S.slice(LU, -2, j, m), -1, j)
        p = P.add(Red.argmax(P.abs(column), -1, True), j)
        chosen.append(p)
        order = _swap(S.expand(rows, tuple(batch) + (m,)), rows, j, p)
        LU = gather(LU, -2, S.expand(S.unsqueeze(order, -1), tuple(LU.shape)))
        top, below = S.slice(LU, -2, 0, j + 1), S.slice(LU, -2, j + 1, m)
        pivot_row = S.select(LU, -2, j)
        pivot_value = S.unsqueeze(S.select(pivot_row, -1, j), -1)
        # a zero pivot has a zero column below it (it is the largest): leave that column alone
        factors = P.div(S.select(below, -1, j), P.where(P.eq(pivot_value, 0), 1.0, pivot_value))
        trailing = P.sub(S.slice(below, -1, j + 1, n),
                         P.mul(S.unsqueeze(factors, -1),
                               S.unsqueeze(S.slice(pivot_row, -1, j + 1, n), -2)))
        below = S.cat([S.slice(below, -1, 0, j), S.unsqueeze(factors, -1), trailing], -1)
        LU = S.cat([top, below], -2)
    if k == 0:
        LU = _to_copy(A)
        pivots = full(tuple(batch) + (0,), 0, dtype=D.int32, device=A.device)
        info = full(tuple(batch), 0, dtype=D.int32, device=A.device)
    else:
        pivots = _to_copy(P.add(S.cat(chosen, -1), 1), dtype=D.int32)
        zero = P.eq(S.diagonal(LU, 0, -2, -1), 0)
        first = P.add(Red.argmax(_to_copy(zero, dtype=D.int32), -1, False), 1)
        info = _to_copy(P.where(Red.any(zero, [-1], False), first, 0), dtype=D.int32)
    if check_errors and info.numel() and bool(P.ne(info, 0).any()):
        raise RuntimeError(zero_pivot_message("torch.linalg.lu_factor_ex", info, A.ndim > 2))
    return LU, pivots, info


def _permutation(pivots, m, dtype, device):
    """The matrix P of ``A = P L U`` from LAPACK's row swaps: row r of A is row ``perm[r]``
    of ``L U``, so ``P[r, c] = (perm[c] == r)``."""
    rows = arange(0, m, device=device)
    perm = S.expand(rows, tuple(pivots.shape[:-1]) + (m,))
    for i in range(pivots.shape[-1]):
        target = S.unsqueeze(P.sub(_to_copy(S.select(pivots, -1, i), dtype=D.int64), 1), -1)
        perm = _swap(perm, rows, i, target)
    return _to_copy(P.eq(S.unsqueeze(rows, -1), S.unsqueeze(perm, -2)), dtype=dtype)


@register_decomposition(lu_unpack)
def _lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True):
    if LU_pivots.dtype is not D.int32:
        raise RuntimeError("torch.lu_unpack: LU_pivots is expected to be a contiguous tensor of "
                           "torch.int32 dtype.\nNote: this function is intended to be used with "
                           "the output produced by torch.linalg.lu_factor")
    *batch, m, n = LU_data.shape
    k = min(m, n)
    empty = full((0,), 0, dtype=LU_data.dtype, device=LU_data.device)
    L = U = Pm = empty
    if unpack_data:
        unit = eye(m, k, dtype=LU_data.dtype, device=LU_data.device)
        L = P.add(S.tril(S.slice(LU_data, -1, 0, k), -1), unit)
        U = S.triu(S.slice(LU_data, -2, 0, k))
    if unpack_pivots:
        Pm = _permutation(LU_pivots, m, LU_data.dtype, LU_data.device)
        Pm = S.expand(Pm, tuple(batch) + (m, m)) if tuple(Pm.shape[:-2]) != tuple(batch) else Pm
    return Pm, L, U


@register_decomposition(linalg_lu)
def _lu(A, pivot=True):
    check_lu_input("linalg.lu", A, pivot)
    LU, pivots, _ = linalg_lu_factor_ex(A)
    return lu_unpack(LU, pivots)


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


@register_decomposition(linalg_lu_solve)
def _lu_solve(LU, pivots, B, left=True, adjoint=False):
    """Two triangular solves and a permutation; ``X A = B`` is ``A^T X^T = B^T``."""
    _check_lu_solve(LU, pivots, B, left)
    if not left:
        return S.transpose(linalg_lu_solve(LU, pivots, S.transpose(B, -2, -1),
                                           adjoint=not adjoint), -2, -1)
    Pm, L, U = lu_unpack(LU, pivots)
    if adjoint:   # A^T = U^T L^T P^T
        y = solve_triangular(S.transpose(U, -2, -1), B, upper=False)
        y = solve_triangular(S.transpose(L, -2, -1), y, upper=True, unitriangular=True)
        return matmul(Pm, y)
    y = solve_triangular(L, matmul(S.transpose(Pm, -2, -1), B), upper=False, unitriangular=True)
    return solve_triangular(U, y, upper=True)


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
