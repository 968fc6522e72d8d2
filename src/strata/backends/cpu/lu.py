"""CPU kernels of ``ops/lu.py``: LAPACK ``getrf``'s partial-pivoting LU on NumPy arrays.

NumPy exposes no ``getrf``, so the factorization is written here, for the whole batch at once:
a right-looking blocked loop. Each panel of ``_PANEL`` columns is factored column by column (pick
the row with the largest |entry|, the first on ties as ``idamax``; swap it up; scale the column
below; rank-1 update of the rest of the panel), then the trailing block gets one triangular solve
for its U rows and one BLAS product for its Schur complement, where the O(n^3) work is.
Results follow LAPACK: L (unit diagonal, not stored) below U, 1-based int32 ``pivots``, and
``info`` the 1-based index of the first exactly-zero pivot (0 when there is none).
"""

import math

import numpy as np

from ...core import dtype as D
from ...ops import lu as LU
from .array import data, wrap

_PANEL = 32   # columns factored one by one before a blocked update of the trailing block


def _largest(column, finite):
    """``idamax`` along the last axis: the first largest |entry|. Reference BLAS keeps an entry
    only when ``|x_i| > max``, so a NaN is skipped unless it comes first; ``finite`` (no NaN or
    inf in the input) skips that care."""
    magnitude = np.abs(column)
    if finite:
        return magnitude.argmax(-1)
    nan = np.isnan(magnitude)
    return np.where(nan[..., 0], 0, np.where(nan, -1.0, magnitude).argmax(-1))


def _factor_panel(a, rows, start, stop, finite):
    """Unblocked LU of columns ``start:stop`` of ``a`` (batch, m, n), in place; whole rows are
    swapped (``rows[:, j]`` gets step j's 0-based pivot row), the rank-1 updates stay inside the
    panel."""
    m = a.shape[-2]
    batch = np.arange(a.shape[0])
    for j in range(start, stop):
        p = _largest(a[:, j:, j], finite) + j
        rows[:, j] = p
        if (p != j).any():
            row_j = a[batch, j].copy()
            a[batch, j] = a[batch, p]
            a[batch, p] = row_j
        if j + 1 < m:
            # a zero pivot has a zero column below it (it is the largest): LAPACK leaves it
            pivot = a[:, j, j, None]
            below = a[:, j + 1:, j]
            np.divide(below, pivot, out=below, where=pivot != 0)
            if j + 1 < stop:
                a[:, j + 1:, j + 1:stop] -= below[:, :, None] * a[:, j, None, j + 1:stop]


def _factor_panel_of_one(a, rows, start, stop, finite):
    """``_factor_panel`` for a single matrix ``a`` (m, n): the same steps with scalar pivots and
    no batch indexing, half the NumPy calls' overhead (the cost of small matrices)."""
    m = a.shape[-2]
    for j in range(start, stop):
        p = j + int(_largest(a[j:, j], finite))
        rows[j] = p
        if p != j:
            a[[j, p]] = a[[p, j]]
        pivot = a[j, j]
        if j + 1 < m and pivot != 0:
            a[j + 1:, j] /= pivot
        if j + 1 < min(m, stop):
            a[j + 1:, j + 1:stop] -= np.multiply.outer(a[j + 1:, j], a[j, j + 1:stop])


def _factor(a):
    """LU of ``a`` (batch, m, n), a fresh array factored in place: (pivots, info)."""
    count, m, n = a.shape
    k = min(m, n)
    rows = np.zeros((count, k), np.int32)
    finite = bool(np.isfinite(a).all())
    for start in range(0, k, _PANEL):
        stop = min(start + _PANEL, k)
        if count == 1:
            _factor_panel_of_one(a[0], rows[0], start, stop, finite)
        else:
            _factor_panel(a, rows, start, stop, finite)
        if stop < n:   # U12 = L11^-1 A12, then A22 -= L21 U12
            unit_lower = np.tril(a[:, start:stop, start:stop], -1)
            unit_lower[:, np.arange(stop - start), np.arange(stop - start)] = 1
            a[:, start:stop, stop:] = np.linalg.solve(unit_lower, a[:, start:stop, stop:])
            if stop < m:
                a[:, stop:, stop:] -= np.matmul(a[:, stop:, start:stop], a[:, start:stop, stop:])
    rows += 1
    if k == 0:
        return rows, np.zeros(count, np.int32)
    # each step's pivot stays on U's diagonal: info is the first exact zero there
    zero = np.diagonal(a, axis1=-2, axis2=-1)[:, :k] == 0
    return rows, np.where(zero.any(-1), zero.argmax(-1) + 1, 0).astype(np.int32)


def _factor_batch(A):
    """The factorization of tensor ``A`` (..., m, n): arrays LU, pivots, info shaped as ATen's."""
    lu = np.array(data(A), order="C")   # a fresh C-ordered copy, factored in place
    *batch, m, n = lu.shape
    pivots, info = _factor(lu.reshape((math.prod(batch), m, n)))
    batch = tuple(batch)
    return lu, pivots.reshape(batch + (min(m, n),)), info.reshape(batch)


def _row_order(pivots, m):
    """LAPACK's row swaps (1-based, in order) as the order ``perm`` of ``A = P L U``: row r of
    A is row ``perm[r]`` of ``L U``, so ``P[r, c] = (perm[c] == r)``."""
    count = math.prod(pivots.shape[:-1])
    swaps = pivots.reshape((count, pivots.shape[-1])).astype(np.int64) - 1
    if count == 1:   # a Python loop: a fraction of a microsecond per swap, not NumPy calls
        order = list(range(m))
        for i, j in enumerate(swaps[0].tolist()):
            order[i], order[j] = order[j], order[i]
        return np.array(order).reshape(tuple(pivots.shape[:-1]) + (m,))
    perm = np.broadcast_to(np.arange(m), (count, m)).copy()
    rows = np.arange(count)
    for i in range(swaps.shape[-1]):
        at_i = perm[:, i].copy()
        perm[:, i] = perm[rows, swaps[:, i]]
        perm[rows, swaps[:, i]] = at_i
    return perm.reshape(tuple(pivots.shape[:-1]) + (m,))


def _unpack(lu, pivots, unpack_data, unpack_pivots, dtype):
    """P, L, U of ``A = P L U`` from LAPACK's factors; a skipped part is an empty array."""
    *batch, m, n = lu.shape
    k = min(m, n)
    empty = np.zeros((0,), dtype)
    L = U = P = empty
    if unpack_data:
        L = np.tril(lu[..., :, :k], -1)
        L[..., np.arange(k), np.arange(k)] = 1
        U = np.triu(lu[..., :k, :])
    if unpack_pivots:
        perm = _row_order(pivots, m)
        P = (np.arange(m)[:, None] == perm[..., None, :]).astype(dtype)
        P = np.ascontiguousarray(np.broadcast_to(P, tuple(batch) + (m, m)))
    return P, L, U


def linalg_lu_factor_ex(A, pivot=True, check_errors=False):
    LU.linalg_lu_factor_ex.meta(A, pivot, check_errors)
    lu, pivots, info = _factor_batch(A)
    if check_errors and info.any():
        raise RuntimeError(LU.zero_pivot_message("torch.linalg.lu_factor_ex", info, A.ndim > 2))
    return wrap(lu, A.dtype), wrap(pivots, D.int32), wrap(info, D.int32)


def lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True):
    LU.lu_unpack.meta(LU_data, LU_pivots, unpack_data, unpack_pivots)
    dt = LU_data.dtype
    parts = _unpack(data(LU_data), data(LU_pivots), unpack_data, unpack_pivots, dt.np)
    return tuple(wrap(part, dt) for part in parts)


def linalg_lu(A, pivot=True):
    LU.linalg_lu.meta(A, pivot)
    lu, pivots, _ = _factor_batch(A)
    return tuple(wrap(part, A.dtype) for part in _unpack(lu, pivots, True, True, A.dtype.np))


def _solve_triangular(t, b, upper):
    """T X = B for a triangular T (the other triangle zero), by blocks of ``_PANEL`` rows:
    LAPACK ``gesv`` on each diagonal block (NumPy has no ``trsm``; on a triangle ``gesv`` swaps
    no rows, so it is substitution) and one BLAS product for what the solved blocks contribute."""
    n = t.shape[-1]
    if n <= _PANEL:
        return _solve_block(t, b, upper)
    x = np.empty(b.shape, b.dtype)
    starts = range(0, n, _PANEL)
    for start in reversed(starts) if upper else starts:
        stop = min(start + _PANEL, n)
        rhs = b[..., start:stop, :]
        if upper and stop < n:
            rhs = rhs - np.matmul(t[..., start:stop, stop:], x[..., stop:, :])
        elif not upper and start > 0:
            rhs = rhs - np.matmul(t[..., start:stop, :start], x[..., :start, :])
        x[..., start:stop, :] = _solve_block(t[..., start:stop, start:stop], rhs, upper)
    return x


def _solve_block(t, b, upper):
    """One diagonal block: ``gesv``, or, when a diagonal entry is zero (``gesv`` refuses a
    singular matrix where ``trsm`` divides by it), plain substitution giving trsm's infs and
    NaNs, as PyTorch's ``lu_solve`` does."""
    try:
        return np.linalg.solve(t, b)
    except np.linalg.LinAlgError:
        pass
    x = np.zeros(np.broadcast_shapes(t.shape[:-2], b.shape[:-2]) + b.shape[-2:],
                 np.result_type(t, b))
    n = t.shape[-1]
    for i in reversed(range(n)) if upper else range(n):
        known = slice(i + 1, n) if upper else slice(0, i)
        rest = np.matmul(t[..., i:i + 1, known], x[..., known, :])
        x[..., i:i + 1, :] = (b[..., i:i + 1, :] - rest) / t[..., i:i + 1, i:i + 1]
    return x


def linalg_lu_solve(LU_, pivots, B, left=True, adjoint=False):
    """``getrs``: A X = B is U X = L^-1 P^T B; A^T X = B is X = P L^-T U^-T B; X A = B is
    A^T X^T = B^T."""
    spec = LU.linalg_lu_solve.meta(LU_, pivots, B, left, adjoint)
    batch, n = spec.shape[:-2], LU_.shape[-1]
    lu = np.broadcast_to(data(LU_), batch + (n, n))
    perm = np.broadcast_to(_row_order(data(pivots), n), batch + (n,))
    b = data(B) if left else np.swapaxes(data(B), -1, -2)
    b = np.broadcast_to(b, batch + b.shape[-2:])
    lower = np.tril(lu, -1)
    lower[..., np.arange(n), np.arange(n)] = 1
    upper = np.triu(lu)
    with np.errstate(all="ignore"):   # a singular U gives trsm's infs and NaNs, silently
        if left != adjoint:   # A X = B, or X A = B read as A^T X^T = B^T
            y = np.take_along_axis(b, perm[..., None], -2)
            x = _solve_triangular(upper, _solve_triangular(lower, y, False), True)
        else:
            y = _solve_triangular(np.swapaxes(lower, -1, -2),
                                  _solve_triangular(np.swapaxes(upper, -1, -2), b, False), True)
            x = np.empty_like(y)
            np.put_along_axis(x, np.broadcast_to(perm[..., None], y.shape), y, -2)
    x = x if left else np.swapaxes(x, -1, -2)
    return wrap(np.ascontiguousarray(x), spec.dtype)


KERNELS = {
    LU.linalg_lu_factor_ex: linalg_lu_factor_ex, LU.lu_unpack: lu_unpack, LU.linalg_lu: linalg_lu,
    LU.linalg_lu_solve: linalg_lu_solve,
}
