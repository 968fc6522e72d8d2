"""Derivatives of ``ops/lu.py``'s primitives (real inputs), after PyTorch's
``FunctionsManual.cpp``: ``linalg_lu_backward``, ``lu_factor_ex_backward``, ``lu_unpack_backward``.

With ``A = P L U``, the square case is gA = P L^-T (tril(L^T gL, -1) + triu(gU U^T)) U^-T; a wide
A (m < n) carries U's extra columns U2 straight through (gA2 = P L^-T gU2), a tall one L's extra
rows L2 (gA2 = P gL2 U^-T). Only the parts of gL below and of gU on/above the diagonal count.
"""

from ...ops import factorization_composites as FC
from ...ops import factory as F
from ...ops import linalg as L_
from ...ops import lu as LU
from ...ops import pointwise as P_
from ...ops import shape as S
from . import derivative, zeros


def _t(x):
    return S.transpose(x, -2, -1)


def _solve(A, B, upper, left=True, unitriangular=False):
    return FC.linalg_solve_triangular(A, B, upper=upper, left=left, unitriangular=unitriangular)


def _plus(a, b):
    """a + b where either may be missing (None)."""
    return b if a is None else a if b is None else P_.add(a, b)


def linalg_lu_backward(grad_L, grad_U, Pm, L, U):
    """The gradient of A from those of L (m, k) and U (k, n); either may be None."""
    m, n = L._shape[-2], U._shape[-1]
    if grad_L is None and grad_U is None:
        return None
    if m == n:
        gA = _plus(S.tril(L_.matmul(_t(L), grad_L), -1) if grad_L is not None else None,
                   S.triu(L_.matmul(grad_U, _t(U))) if grad_U is not None else None)
        gA = _solve(_t(U), gA, upper=False, left=False)
        gA = _solve(_t(L), gA, upper=True, unitriangular=True)
    elif m < n:
        U1 = S.slice(U, -1, 0, m)
        gA = _plus(L_.matmul(_t(L), grad_L) if grad_L is not None else None,
                   P_.neg(L_.matmul(S.triu(grad_U), _t(U))) if grad_U is not None else None)
        gA = _solve(_t(U1), S.tril(gA, -1), upper=False, left=False)
        if grad_U is not None:
            gA = S.cat([P_.add(gA, S.triu(S.slice(grad_U, -1, 0, m))),
                        S.slice(grad_U, -1, m, n)], -1)
        gA = _solve(_t(L), gA, upper=True, unitriangular=True)
        if grad_U is None:
            gA = S.cat([gA, zeros(S.slice(U, -1, m, n)._shape, U)], -1)
    else:
        L1 = S.slice(L, -2, 0, n)
        gA = _plus(L_.matmul(grad_U, _t(U)) if grad_U is not None else None,
                   P_.neg(L_.matmul(_t(L), S.tril(grad_L, -1))) if grad_L is not None else None)
        gA = _solve(_t(L1), S.triu(gA), upper=True, unitriangular=True)
        if grad_L is not None:
            gA = S.cat([P_.add(gA, S.tril(S.slice(grad_L, -2, 0, n), -1)),
                        S.slice(grad_L, -2, n, m)], -2)
        gA = _solve(_t(U), gA, upper=False, left=False)
        if grad_L is None:
            gA = S.cat([gA, zeros(S.slice(L, -2, n, m)._shape, L)], -2)
    return L_.matmul(Pm, gA)


@derivative(LU.linalg_lu_factor_ex, "LinalgLuFactorExBackward0", save=("result0", "result1"))
def _lu_factor_ex(ctx, grad_LU, grad_pivots=None, grad_info=None):
    """``lu_factor_ex_backward``: L's gradient is the first k columns of LU's, U's its first
    k rows."""
    factors, pivots = ctx.result0, ctx.result1
    Pm, L, U = LU.lu_unpack(factors, pivots)
    m, n = factors._shape[-2:]
    k = min(m, n)
    return linalg_lu_backward(S.slice(grad_LU, -1, 0, k), S.slice(grad_LU, -2, 0, k), Pm, L, U)


@derivative(LU.linalg_lu, "LinalgLuBackward0", save=("result0", "result1", "result2"),
            outputs=(False, True, True))
def _lu(ctx, grad_P, grad_L, grad_U):
    return linalg_lu_backward(grad_L, grad_U, ctx.result0, ctx.result1, ctx.result2)


@derivative(LU.lu_unpack, "LuUnpackBackward0", outputs=(False, True, True))
def _lu_unpack(ctx, grad_P, grad_L, grad_U):
    """``lu_unpack_backward``: L reads LU strictly below the diagonal, U on and above it."""
    if grad_L is None and grad_U is None:
        return None, None
    m, n = ctx.sizes("LU_data")[-2:]
    k = min(m, n)
    like = grad_L if grad_L is not None else grad_U
    gLU = None
    if grad_L is not None:
        gLU = S.tril(grad_L, -1)
        if n > k:
            gLU = S.cat([gLU, zeros(tuple(grad_L._shape[:-1]) + (n - k,), like)], -1)
    if grad_U is not None:
        upper = S.triu(grad_U)
        if m > k:
            upper = S.cat([upper, zeros(tuple(grad_U._shape[:-2]) + (m - k, n), like)], -2)
        gLU = _plus(gLU, upper)
    return gLU, None


def _lu_solve_LU(gX, factors, pivots, X, left, adjoint):
    """``linalg_lu_solve_LU``: the gradient of the packed factors, the adjoint of the solve's
    JVP in L and U (see FunctionsManual.cpp)."""
    Pm, L, U = LU.lu_unpack(factors, pivots)
    if left != adjoint:   # gR = U^-T op(-gX) op(X)^T, gLU = tril(L^-T gR U^T, -1) + triu(gR)
        product = L_.matmul(gX, _t(X)) if left else L_.matmul(_t(gX), X)
        gR = _solve(_t(U), P_.neg(product), upper=False)
        gL = _solve(_t(L), L_.matmul(gR, _t(U)), upper=True, unitriangular=True)
        return P_.add(S.tril(gL, -1), S.triu(gR))
    # gR = -P^T op(X) op(gX)^T P L^-T, gLU = tril(gR, -1) + triu(L^T gR U^-T)
    product = L_.matmul(X, _t(gX)) if left else L_.matmul(_t(X), gX)
    gR = P_.neg(L_.matmul(L_.matmul(_t(Pm), product), Pm))
    gR = _solve(_t(L), gR, upper=True, left=False, unitriangular=True)
    gU = _solve(_t(U), L_.matmul(_t(L), gR), upper=False, left=False)
    return P_.add(S.tril(gR, -1), S.triu(gU))


@derivative(LU.linalg_lu_solve, "LinalgLuSolveBackward0", save=("LU", "pivots", "result"))
def _lu_solve(ctx, grad):
    """B's gradient is the adjoint solve; LU's ``linalg_lu_solve_LU``."""
    gLU = gB = None
    if ctx.needs[0]:
        gLU = _lu_solve_LU(grad, ctx.LU, ctx.pivots, ctx.result, ctx.left, ctx.adjoint)
    if ctx.needs[2]:
        gB = LU.linalg_lu_solve(ctx.LU, ctx.pivots, grad, left=ctx.left, adjoint=not ctx.adjoint)
    return gLU, None, gB


# slogdet is a composite with a row of its own (CompositeExplicitAutograd in backends/composite.py)
@derivative(LU.linalg_slogdet, "LinalgSlogdetBackward0", save=("A",))
def _slogdet(ctx, _grad_sign, grad_logabsdet):
    """``slogdet_backward`` (real A, whose sign has no gradient): g A^-T, solved with A's LU
    factors against g I (a singular A gives inf/NaN, as ATen's)."""
    A = ctx.A
    LU_, pivots, _ = LU.linalg_lu_factor_ex(A)
    eye = F.eye(A._shape[-1], dtype=A.dtype, device=A.device)
    g = S.unsqueeze(S.unsqueeze(grad_logabsdet, -1), -1)
    return LU.linalg_lu_solve(LU_, pivots, P_.mul(g, eye), adjoint=True)
