"""``torch.linalg`` functions written with the others: the ``_ex`` forms (a result and an
``info`` per matrix instead of an error, as LAPACK reports it), ``cond``, ``tensorinv``,
``tensorsolve``, ``vander``, ``vecdot``, ``eigvalsh`` and ``diagonal``. Values, result types
and error messages are PyTorch's."""

import math
from collections import namedtuple

import numpy as np

from ..core import dtype as D
from ..ops import aten
from ..ops import factorizations as LF
from ..ops import lu as LU
from ..ops import meta_rules as R
from ..ops.factorizations import LinAlgError
from . import linalg as FL

linalg_solve_ex = namedtuple("linalg_solve_ex", ["result", "info"])
linalg_inv_ex = namedtuple("linalg_inv_ex", ["inverse", "info"])
linalg_cholesky_ex = namedtuple("linalg_cholesky_ex", ["L", "info"])


def _raise_for(name, info, batched, message):
    """The first failing matrix's error, as PyTorch words it (``message(info)``)."""
    flat = info.reshape(-1).tolist()
    for index, code in enumerate(flat):
        if code:
            where = f"(Batch element {index}): " if batched else ""
            raise LinAlgError(f"{name}: {where}{message(code)}")


def inv_ex(A, *, check_errors=False, out=None):
    factors, pivots, info = LU.linalg_lu_factor_ex(A)
    if check_errors:
        _raise_for("linalg.inv_ex", info, A.ndim > 2, lambda k: (
            f"The diagonal element {k} is zero, the inversion could not be completed because "
            f"the input matrix is singular."))
    n = A.shape[-1]
    eye = aten.eye.m(n, n, dtype=A.dtype, device=A.device).expand_as(A)
    result = linalg_inv_ex(LU.linalg_lu_solve(factors, pivots, eye), info)
    return result if out is None else FL._out(result, out)


def solve_ex(A, B, *, left=True, check_errors=False, out=None):
    if A.dtype is not B.dtype:
        raise RuntimeError(f"linalg.solve: Expected A and B to have the same dtype, but found A "
                           f"of type {R.type_name(A.dtype)} and B of type "
                           f"{R.type_name(B.dtype)} instead")
    factors, pivots, info = LU.linalg_lu_factor_ex(A)
    if check_errors:
        _raise_for("torch.linalg.solve_ex", info, A.ndim > 2,
                   lambda k: "The solver failed because the input matrix is singular.")
    vector = B.ndim == 1 or (B.ndim == A.ndim - 1 and B.shape == A.shape[:-1])
    rhs = B.unsqueeze(-1) if vector else B
    solution = LU.linalg_lu_solve(factors, pivots, rhs, left=left)
    result = linalg_solve_ex(solution.squeeze(-1) if vector else solution, info)
    return result if out is None else FL._out(result, out)


def _cholesky_failure(matrix):
    """(LAPACK's info, the partial lower factor) of one float64 matrix: the order of the first
    leading minor that is not positive-definite, 0 if none."""
    a = np.tril(matrix.copy())
    n = len(a)
    for j in range(n):
        d = a[j, j] - a[j, :j] @ a[j, :j]
        if not d > 0:
            a[j, j] = d
            return j + 1, a
        a[j, j] = math.sqrt(d)
        a[j + 1:, j] = (a[j + 1:, j] - a[j + 1:, :j] @ a[j, :j]) / a[j, j]
    return 0, a


def cholesky_ex(A, *, upper=False, check_errors=False, out=None):
    """The Cholesky factor and ``info``: one factorization when every matrix is
    positive-definite; otherwise each matrix is checked on the host, and a failing one's
    factor holds the columns computed before its failing pivot (PyTorch: undefined there)."""
    try:
        factor = FL.cholesky(A, upper=upper)     # shape and dtype errors are cholesky's
        info = A.new_zeros(A.shape[:-2], dtype=D.int32)
    except LinAlgError:
        factor, info = _failed_cholesky(A, upper)
    if check_errors:
        _raise_for("linalg.cholesky_ex", info, A.ndim > 2, lambda k: (
            f"The factorization could not be completed because the input is not "
            f"positive-definite (the leading minor of order {k} is not positive-definite)."))
    result = linalg_cholesky_ex(factor, info)
    return result if out is None else FL._out(result, out)


def _failed_cholesky(A, upper):
    values = A.detach().cpu().numpy().astype(np.float64)   # real: cholesky refuses complex
    flat = values.reshape(-1, *values.shape[-2:])
    codes, factors = [], []
    for matrix in flat:
        try:
            code, factor = 0, np.linalg.cholesky(matrix)
        except np.linalg.LinAlgError:
            code, factor = _cholesky_failure(matrix)
        codes.append(code)
        factors.append(factor)
    factor = A.new_tensor(np.stack(factors).reshape(values.shape))
    info = A.new_tensor(codes, dtype=D.int32).reshape(A.shape[:-2])
    return (factor.mT if upper else factor), info


def cond(A, p=None, *, out=None):
    """The condition number: the ratio of extreme singular values for p None, 2 or -2, else
    ``norm(A, p) * norm(inv(A), p)``."""
    if p in (None, 2, -2):
        s = FL.svdvals(A)
        big, small = s.amax(-1), s.amin(-1)
        result = big / small if p != -2 else small / big
    else:
        result = FL.matrix_norm(A, p) * FL.matrix_norm(FL.inv(A), p)
    return result if out is None else out.copy_(result)


def tensorinv(A, ind=2, *, out=None):
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    rows, cols = math.prod(A.shape[:ind]), math.prod(A.shape[ind:])
    if rows != cols:
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[ind:]) == "
                           f"prod(self.shape[:ind]), but got {cols} != {rows}")
    result = FL.inv(A.reshape(rows, cols)).reshape(*A.shape[ind:], *A.shape[:ind])
    return result if out is None else out.copy_(result)


def tensorsolve(A, B, dims=None, *, out=None):
    if dims is not None:
        dims = [d % A.ndim for d in dims]
        A = A.permute(*[d for d in range(A.ndim) if d not in dims], *dims)
    rest = A.shape[B.ndim:]
    result = FL.solve(A.reshape(B.numel(), math.prod(rest)), B.reshape(-1)).reshape(rest)
    return result if out is None else out.copy_(result)


def vander(x, *, N=None):
    """Columns x^0, x^1, ..., x^(N-1) (PyTorch's cumulative products)."""
    if x.ndim < 1:
        raise RuntimeError("x must have at least one dimension.")
    n = x.shape[-1] if N is None else N
    if n < 0:
        raise RuntimeError("N must be non-negative.")
    dtype = D.promote_types(x.dtype, D.int64) if not (x.dtype.is_floating_point or
                                                      x.dtype.is_complex) else x.dtype
    ones = x.new_ones((*x.shape, 1), dtype=dtype)
    if n <= 1:
        return ones[..., :n]
    powers = x.unsqueeze(-1).to(dtype).expand(*x.shape, n - 1).cumprod(-1)
    return aten.cat.default([ones, powers], -1)


def vecdot(x, y, *, dim=-1, out=None):
    result = (x.conj() * y).sum(dim)
    return result if out is None else out.copy_(result)


def eigvalsh(A, UPLO="L", *, out=None):
    result = LF.linalg_eigh(A, UPLO)[0]
    return result if out is None else out.copy_(result)


def diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    return A.diagonal(offset, dim1, dim2)
