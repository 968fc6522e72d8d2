"""The OpenCL device's linear algebra beyond matmul: LAPACK's primitives as batched kernels.

strata's linalg ops reduce to a few primitives (ops/factorizations.py, ops/lu.py): the LU
factorization (``getrf``: partial pivoting, the pivot the first largest |entry| as ``idamax``
picks it, so P, L, U and the pivots equal the CPU's), its solve (``getrs``), Cholesky (``potrf``),
Householder QR (``geqrf`` + ``orgqr``, LAPACK's ``dlarfg`` signs), the symmetric eigensolver
and the SVD (those three in opencl_orthogonal.py). ``solve``, ``inv``, ``det`` are built here
from ``getrf`` + ``getrs``; ``slogdet``, ``logdet``, ``solve_triangular``, ``cholesky_solve``,
``matrix_power``... decompose into these.

Note [One work-group per matrix]: each kernel runs one work-group of ``WG`` work-items per
matrix of the batch; the work-items share each step (a pivot search is a tree in local memory, a
rank-1 update is split over the trailing elements) and meet at a barrier between steps. A matrix
that fits in half the device's local memory is copied there first (``CAP`` > 0), worked on and
copied back; a larger one is worked on in global memory (a barrier orders global memory within
a work-group too). Nothing goes through the host except the ``info`` of a factorization whose
failure raises (``inv``, ``solve``, ``cholesky``, ``lu_factor``): reading it is a sync point, as
CUDA's ``linalg_solve`` reads its ``info``.
"""

import math

import numpy as np

from ...core import dtype as D
from ...core.shape import contiguous_strides
from ...ops import factorizations as LF
from ...ops import lu as LU
from . import opencl_linalg_host as linalg_host
from .oclprinter import FP64
from .opencl_checks import host_indices
from .opencl_pointwise import copy_, fill_, runtime_of

# Copies a matrix of ``MN`` elements from ``g`` into local memory when CAP > 0 (Note [One
# work-group per matrix]); ``a`` names the matrix worked on either way.
MATRIX_IN = """#if CAP
    __local T a[CAP];
    for (int e = lid; e < MN; e += WG) a[e] = g[e];
    SYNC;
#else
    __global T* a = g;
#endif
"""
MATRIX_OUT = """#if CAP
    SYNC;
    for (int e = lid; e < MN; e += WG) g[e] = a[e];
#endif
"""
_PRELUDE = """#define SYNC barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE)
#define KERNEL __kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void
"""

# getrf: right-looking LU with partial pivoting, in place on a contiguous (m, n) matrix.
_GETRF = """KERNEL k_getrf(__global T* g, const long g_off, const int m, const int n,
                   __global int* piv, const long piv_off, __global int* info,
                   const long info_off) {
    const long b = get_group_id(0);
    const int lid = get_local_id(0), k = min(m, n);
    const int MN = m * n;
    g += g_off + b * MN;
    piv += piv_off + b * k;
    __local T best[WG];
    __local int best_row[WG];
""" + MATRIX_IN + """
    int zero_at = 0;
    for (int j = 0; j < k; j++) {
        /* idamax: the first largest |entry|; a NaN counts only where it comes first */
        T mine = -2;
        int row = j;
        for (int i = j + lid; i < m; i += WG) {
            T v = fabs(a[i * n + j]);
            if (isnan(v))
                v = i == j ? INFINITY : -1;
            if (v > mine) {
                mine = v;
                row = i;
            }
        }
        best[lid] = mine;
        best_row[lid] = row;
        SYNC;
        for (int s = WG / 2; s > 0; s >>= 1) {
            if (lid < s && (best[lid + s] > best[lid] ||
                            (best[lid + s] == best[lid] && best_row[lid + s] < best_row[lid]))) {
                best[lid] = best[lid + s];
                best_row[lid] = best_row[lid + s];
            }
            SYNC;
        }
        const int p = best_row[0];
        if (p != j)
            for (int c = lid; c < n; c += WG) {
                const T t = a[j * n + c];
                a[j * n + c] = a[p * n + c];
                a[p * n + c] = t;
            }
        if (lid == 0)
            piv[j] = p + 1;
        SYNC;
        const T pivot = a[j * n + j];
        if (pivot == 0 && zero_at == 0)
            zero_at = j + 1;
        if (pivot != 0)   /* a zero pivot has zeros below it: LAPACK leaves them */
            for (int i = j + 1 + lid; i < m; i += WG)
                a[i * n + j] /= pivot;
        SYNC;
        const int w = n - j - 1;
        const int count = (m - j - 1) * w;
        for (int e = lid; e < count; e += WG) {
            const int r = j + 1 + e / w, c = j + 1 + e % w;
            a[r * n + c] -= a[r * n + j] * a[j * n + c];
        }
        SYNC;
    }
""" + MATRIX_OUT + """
    if (lid == 0)
        info[info_off + b] = zero_at;
}
"""

# getrs: A X = B from A's LU (adjoint: A^T X = B) on X (n rows, nrhs columns, any strides),
# which holds B on entry. A pivot out of range is skipped rather than read out of bounds.
_GETRS = """KERNEL k_getrs(__global const T* lu, const long lu_off, const long lu_stb,
                   __global const int* piv, const long piv_off, const long piv_stb,
                   __global T* x, const long x_off, const long x_stb, const long x_str,
                   const long x_stc, const int n, const int nrhs, const int adjoint) {
    const long b = get_group_id(0);
    const int lid = get_local_id(0);
    lu += lu_off + b * lu_stb;
    piv += piv_off + b * piv_stb;
    x += x_off + b * x_stb;
#define X(r, c) x[(r) * x_str + (c) * x_stc]
#define LU(r, c) lu[(r) * n + (c)]
    if (nrhs >= n) {       /* columns are independent: a whole solve per column, no barrier */
        for (int c = lid; c < nrhs; c += WG) {
            if (!adjoint) {
                for (int i = 0; i < n; i++) {
                    const int p = piv[i] - 1;
                    if (p != i && p >= 0 && p < n) {
                        const T t = X(i, c);
                        X(i, c) = X(p, c);
                        X(p, c) = t;
                    }
                }
                for (int i = 0; i < n; i++)
                    for (int r = i + 1; r < n; r++)
                        X(r, c) -= LU(r, i) * X(i, c);
                for (int i = n - 1; i >= 0; i--) {
                    X(i, c) /= LU(i, i);
                    for (int r = 0; r < i; r++)
                        X(r, c) -= LU(r, i) * X(i, c);
                }
            } else {
                for (int i = 0; i < n; i++) {
                    X(i, c) /= LU(i, i);
                    for (int r = i + 1; r < n; r++)
                        X(r, c) -= LU(i, r) * X(i, c);
                }
                for (int i = n - 1; i >= 0; i--)
                    for (int r = 0; r < i; r++)
                        X(r, c) -= LU(i, r) * X(i, c);
                for (int i = n - 1; i >= 0; i--) {
                    const int p = piv[i] - 1;
                    if (p != i && p >= 0 && p < n) {
                        const T t = X(i, c);
                        X(i, c) = X(p, c);
                        X(p, c) = t;
                    }
                }
            }
        }
        return;
    }
    if (!adjoint) {
        for (int c = lid; c < nrhs; c += WG)        /* P^T B, a column per work-item */
            for (int i = 0; i < n; i++) {
                const int p = piv[i] - 1;
                if (p != i && p >= 0 && p < n) {
                    const T t = X(i, c);
                    X(i, c) = X(p, c);
                    X(p, c) = t;
                }
            }
        SYNC;
        for (int i = 0; i < n; i++) {               /* L Y = P^T B, L unit lower */
            for (int e = lid; e < (n - i - 1) * nrhs; e += WG) {
                const int r = i + 1 + e / nrhs, c = e % nrhs;
                X(r, c) -= LU(r, i) * X(i, c);
            }
            SYNC;
        }
        for (int i = n - 1; i >= 0; i--) {          /* U X = Y */
            for (int c = lid; c < nrhs; c += WG)
                X(i, c) /= LU(i, i);
            SYNC;
            for (int e = lid; e < i * nrhs; e += WG) {
                const int r = e / nrhs, c = e % nrhs;
                X(r, c) -= LU(r, i) * X(i, c);
            }
            SYNC;
        }
    } else {
        for (int i = 0; i < n; i++) {               /* U^T Z = B */
            for (int c = lid; c < nrhs; c += WG)
                X(i, c) /= LU(i, i);
            SYNC;
            for (int e = lid; e < (n - i - 1) * nrhs; e += WG) {
                const int r = i + 1 + e / nrhs, c = e % nrhs;
                X(r, c) -= LU(i, r) * X(i, c);
            }
            SYNC;
        }
        for (int i = n - 1; i >= 0; i--) {          /* L^T Y = Z */
            for (int e = lid; e < i * nrhs; e += WG) {
                const int r = e / nrhs, c = e % nrhs;
                X(r, c) -= LU(i, r) * X(i, c);
            }
            SYNC;
        }
        for (int c = lid; c < nrhs; c += WG)        /* X = P Y: the swaps in reverse */
            for (int i = n - 1; i >= 0; i--) {
                const int p = piv[i] - 1;
                if (p != i && p >= 0 && p < n) {
                    const T t = X(i, c);
                    X(i, c) = X(p, c);
                    X(p, c) = t;
                }
            }
    }
}
"""

# the determinant from the LU: the diagonal's product, negated per row swap (a work-item per
# matrix)
_DET = """__kernel void k_lu_det(__global const T* lu, const long lu_off, __global const int* piv,
                       const long piv_off, __global T* out, const long out_off, const int n,
                       const long count) {
    const long b = get_global_id(0);
    if (b >= count)
        return;
    lu += lu_off + b * n * n;
    piv += piv_off + b * n;
    T d = 1;
    for (int i = 0; i < n; i++) {
        d *= lu[i * n + i];
        if (piv[i] != i + 1)
            d = -d;
    }
    out[out_off + b] = d;
}
"""

# P (m, m), L (m, k), U (k, n) of A = P L U from the LU and its pivots; ``perm`` is scratch
_UNPACK = """KERNEL k_lu_unpack(__global const T* lu, const long lu_off, __global const int* piv,
                       const long piv_off, __global int* perm, const long perm_off,
                       __global T* P, const long p_off,
                       __global T* L, const long l_off, __global T* U, const long u_off,
                       const int m, const int n, const int unpack_data,
                       const int unpack_pivots) {
    const long b = get_group_id(0);
    const int lid = get_local_id(0), k = min(m, n);
    lu += lu_off + b * m * n;
    piv += piv_off + b * k;
    perm += perm_off + b * m;
    P += p_off + b * m * m;
    if (unpack_pivots && lid == 0) {
        for (int i = 0; i < m; i++)
            perm[i] = i;
        for (int i = 0; i < k; i++) {
            const int p = piv[i] - 1;
            if (p >= 0 && p < m) {
                const int t = perm[i];
                perm[i] = perm[p];
                perm[p] = t;
            }
        }
    }
    SYNC;   /* outside any branch: every work-item reaches it (PoCL once read a stale perm) */
    if (unpack_pivots)
        for (int e = lid; e < m * m; e += WG)
            P[e] = perm[e % m] == e / m ? 1 : 0;
    if (unpack_data) {
        L += l_off + b * m * k;
        U += u_off + b * k * n;
        for (int e = lid; e < m * k; e += WG) {
            const int r = e / k, c = e % k;
            L[e] = r > c ? lu[r * n + c] : (r == c ? 1 : 0);
        }
        for (int e = lid; e < k * n; e += WG) {
            const int r = e / n, c = e % n;
            U[e] = c >= r ? lu[r * n + c] : 0;
        }
    }
}
"""

# the first ``cols`` columns of the identity of order ``rows``, for every matrix of a batch
_IDENTITY = """__kernel void k_identity(__global T* x, const long x_off, const long rows,
                         const long cols, const long numel) {
    const long e = get_global_id(0);
    if (e < numel)
        x[x_off + e] = (e % (rows * cols)) / cols == e % cols ? 1 : 0;
}
"""


def identity(rt, shape, dtype, op_name):
    """A new contiguous tensor of ``shape`` (..., rows, cols) holding identity columns."""
    x = rt.empty(tuple(shape), contiguous_strides(tuple(shape)), dtype)
    if x.numel():
        rt.launch(op_name, source(_IDENTITY, dtype), "k_identity", x.numel(),
                  [*rt.buffer_of(x), shape[-2], shape[-1], x.numel()], [x])
    return x


# potrf: left-looking Cholesky on the triangle ``upper`` names, in place (L^T is the upper
# triangle read as rows); the other triangle is zeroed. info: the order of the first leading
# minor that is not positive-definite (its pivot <= 0 or NaN, LAPACK's test).
_POTRF = """KERNEL k_potrf(__global T* g, const long g_off, const int n, __global int* info,
                   const long info_off, const int upper) {
    const long b = get_group_id(0);
    const int lid = get_local_id(0);
    const int MN = n * n;
    g += g_off + b * MN;
    __local T partial[WG];
""" + MATRIX_IN + """
#define AT(i, j) a[upper ? (j) * n + (i) : (i) * n + (j)]
    int failed_at = 0;
    for (int j = 0; j < n; j++) {
        T s = 0;
        for (int k = lid; k < j; k += WG)
            s += AT(j, k) * AT(j, k);
        partial[lid] = s;
        SYNC;
        for (int h = WG / 2; h > 0; h >>= 1) {
            if (lid < h)
                partial[lid] += partial[lid + h];
            SYNC;
        }
        const T d = AT(j, j) - partial[0];
        if (!(d > 0)) {
            failed_at = j + 1;
            break;
        }
        const T root = sqrt(d);
        for (int i = j + 1 + lid; i < n; i += WG) {
            T t = AT(i, j);
            for (int k = 0; k < j; k++)
                t -= AT(i, k) * AT(j, k);
            AT(i, j) = t / root;
        }
        SYNC;
        if (lid == 0)
            AT(j, j) = root;
    }
    SYNC;
    for (int e = lid; e < MN; e += WG) {
        const int r = e / n, c = e % n;
        if (upper ? r > c : c > r)
            a[e] = 0;
    }
""" + MATRIX_OUT + """
    if (lid == 0)
        info[info_off + b] = failed_at;
}
"""

_sources = {}


def source(body, dtype, group=1, cap=0):
    """The OpenCL C of ``body`` for ``dtype`` (float32/float64), ``group`` work-items per
    matrix and a local copy of ``cap`` elements (0: none), built once."""
    key = (body, dtype, group, cap)
    text = _sources.get(key)
    if text is None:
        t = "double" if dtype is D.float64 else "float"
        text = _sources[key] = ((FP64 if dtype is D.float64 else "") +
                                f"#define T {t}\n#define WG {group}\n#define CAP {cap}\n" +
                                _PRELUDE + body)
    return text


def group_size(rt, n):
    """Work-items per matrix: a power of two from 32 (a warp) to 256, about ``n``."""
    return min(rt.cl_device.max_work_group_size, max(32, min(256, 1 << max(n - 1, 0)
                                                              .bit_length())))


def local_capacity(rt, elements, dtype):
    """The local copy's size in elements for a matrix of ``elements``: a power of two, at least
    ``_SMALLEST_COPY`` (so few programs), or 0 where it does not fit in half the local
    memory."""
    if not elements:
        return 0
    cap = max(_SMALLEST_COPY, 1 << (elements - 1).bit_length())
    return cap if cap * dtype.itemsize <= rt.cl_device.local_mem_size // 2 else 0


_SMALLEST_COPY = 1024


def launch_per_matrix(op_name, body, name, dtype, count, n, args, tensors, cap=0):
    """One work-group per matrix of a batch of ``count`` (Note [One work-group per matrix])."""
    rt = runtime_of(tensors[0])
    group = group_size(rt, n)
    rt.launch(op_name, source(body, dtype, group, cap), name, (count * group,), args, tensors,
              (group,))


def contiguous_copy(x, shape=None):
    """A fresh contiguous device tensor holding ``x`` (broadcast to ``shape``)."""
    shape = tuple(x._shape) if shape is None else tuple(shape)
    out = runtime_of(x).empty(shape, contiguous_strides(shape), x.dtype)
    if out.numel():
        copy_(out, x)
    return out


def host_info(info):
    """The ``info`` values on the host (a sync point), flat."""
    return host_indices(info).reshape(-1) if info.numel() else np.zeros(0, np.int32)


def batch_prefix(batch_shape, index):
    """PyTorch names the failing matrix of a batch: "(Batch element 3): "."""
    return f"(Batch element {index}): " if batch_shape else ""


# --- LU: getrf, getrs and what is built on them ---------------------------------------------------

def getrf(A):
    """(LU, pivots, info) of ``A`` (..., m, n), as LAPACK's getrf returns them."""
    rt = runtime_of(A)
    *batch, m, n = A._shape
    batch, k = tuple(batch), min(m, n)
    lu = contiguous_copy(A)
    pivots = rt.empty(batch + (k,), contiguous_strides(batch + (k,)), D.int32)
    info = rt.empty(batch, contiguous_strides(batch), D.int32)
    if not A.numel():
        for t in (pivots, info):
            if t.numel():
                fill_(t, 0)
        return lu, pivots, info
    cap = local_capacity(rt, m * n, A.dtype)
    launch_per_matrix("aten::linalg_lu_factor_ex", _GETRF, "k_getrf", A.dtype,
                      math.prod(batch), max(m, n),
                      [*rt.buffer_of(lu), np.int32(m), np.int32(n), *rt.buffer_of(pivots),
                       *rt.buffer_of(info)], [lu, pivots, info], cap)
    return lu, pivots, info


def batched(t, rank, batch):
    """(``t``, its batch stride) for a contiguous factor read by every matrix of ``batch``
    (``rank``: its matrix dims): itself where its batch is ``batch`` or one matrix, else a
    broadcast copy."""
    own, per = tuple(t._shape[:-rank]), math.prod(t._shape[-rank:])
    if own == tuple(batch):
        return t, per
    if math.prod(own) == 1:
        return t, 0
    return contiguous_copy(t, tuple(batch) + tuple(t._shape[-rank:])), per


def getrs(lu, pivots, B, batch, left=True, adjoint=False):
    """X of A X = B (``left``; else X A = B; ``adjoint``: A^T) from A's contiguous LU and
    pivots, over ``batch``: B copied into X, then the row swaps and two triangular solves."""
    rt = runtime_of(lu)
    shape = tuple(batch) + tuple(B._shape[-2:])
    x = contiguous_copy(B, shape)
    if not x.numel():
        return x
    rows, cols = shape[-2:]
    n = lu._shape[-1]
    # X A = B is A^T X^T = B^T: the kernel walks X^T (the same memory, strides swapped)
    strides = (cols, 1) if left else (1, cols)
    nrhs = cols if left else rows
    lu, lu_stb = batched(lu, 2, batch)
    pivots, piv_stb = batched(pivots, 1, batch)
    launch_per_matrix("aten::linalg_lu_solve", _GETRS, "k_getrs", lu.dtype, math.prod(batch),
                      max(n, nrhs),
                      [*rt.buffer_of(lu), lu_stb, *rt.buffer_of(pivots), piv_stb,
                       *rt.buffer_of(x), rows * cols, *strides, np.int32(n), np.int32(nrhs),
                       np.int32(adjoint != (not left))], [lu, pivots, x])
    return x


def raise_first_failure(info, batch, message):
    """``LinAlgError(message(batch index, info value))`` for the first matrix of ``batch``
    whose ``info`` is not 0 (read on the host: a sync point)."""
    flat = host_info(info if tuple(info._shape) == tuple(batch) else contiguous_copy(info, batch))
    bad = np.flatnonzero(flat)
    if bad.size:
        i = int(bad[0])
        raise LF.LinAlgError(message(batch_prefix(batch, i), int(flat[i])))


def linalg_lu_factor_ex(A, pivot=True, check_errors=False):
    LU.linalg_lu_factor_ex.meta(A, pivot, check_errors)
    lu, pivots, info = getrf(A)
    if check_errors:
        flat = host_info(info)
        if flat.any():
            raise RuntimeError(LU.zero_pivot_message("torch.linalg.lu_factor_ex", flat,
                                                     A.ndim > 2))
    return lu, pivots, info


def _unpack(lu, pivots, unpack_data, unpack_pivots, specs):
    rt = runtime_of(lu)
    parts = [rt.empty(tuple(s.shape), contiguous_strides(tuple(s.shape)), s.dtype) for s in specs]
    *batch, m, n = lu._shape
    count = math.prod(batch)
    if not count or not (unpack_data and m * n or unpack_pivots and m):
        return tuple(parts)
    lu = lu if lu.is_contiguous() else contiguous_copy(lu)
    pivots = pivots if pivots.is_contiguous() else contiguous_copy(pivots)
    perm = rt.empty((count * m,), (1,), D.int32)
    # a part not asked for (or empty) gets a buffer it never reads, as OpenCL wants one
    spare = rt.buffer_of(lu) if lu.numel() else rt.buffer_of(perm)

    def buffer(t):
        return rt.buffer_of(t) if t.numel() else spare
    launch_per_matrix("aten::lu_unpack", _UNPACK, "k_lu_unpack", lu.dtype, count, max(m, n),
                      [*buffer(lu), *buffer(pivots), *buffer(perm), *buffer(parts[0]),
                       *buffer(parts[1]), *buffer(parts[2]), np.int32(m), np.int32(n),
                       np.int32(bool(unpack_data and m * n)), np.int32(bool(unpack_pivots))],
                      [lu, pivots, perm, *parts])
    return tuple(parts)


def lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True):
    specs = LU.lu_unpack.meta(LU_data, LU_pivots, unpack_data, unpack_pivots)
    return _unpack(LU_data, LU_pivots, unpack_data, unpack_pivots, specs)


def linalg_lu(A, pivot=True):
    specs = LU.linalg_lu.meta(A, pivot)
    lu, pivots, _ = getrf(A)
    return _unpack(lu, pivots, True, True, specs)


def linalg_lu_solve(LU_, pivots, B, left=True, adjoint=False):
    spec = LU.linalg_lu_solve.meta(LU_, pivots, B, left, adjoint)
    lu = LU_ if LU_.is_contiguous() else contiguous_copy(LU_)
    pivots = pivots if pivots.is_contiguous() else contiguous_copy(pivots)
    return getrs(lu, pivots, B, tuple(spec.shape[:-2]), left, adjoint)


def linalg_solve(A, B, left=True):
    spec = LF.linalg_solve.meta(A, B, left)
    if spec.dtype.is_complex:           # the LU kernels are real-only (opencl_linalg_host.py)
        return linalg_host.linalg_solve(A, B, left)
    vector = LF.solve_is_vector(A, B)
    batch = tuple(spec.shape[:-1] if vector else spec.shape[:-2])
    lu, pivots, info = getrf(A)
    raise_first_failure(info, batch, lambda where, _: (
        f"torch.linalg.solve: {where}The solver failed because the input matrix is singular."))
    if not vector:
        return getrs(lu, pivots, B, batch, left)
    rhs = B.unsqueeze(-1) if left else B.unsqueeze(-2)
    return getrs(lu, pivots, rhs, batch, left).squeeze(-1 if left else -2)


def linalg_inv(A):
    LF.linalg_inv.meta(A)
    batch, n = tuple(A._shape[:-2]), A._shape[-1]
    lu, pivots, info = getrf(A)
    raise_first_failure(info, batch, lambda where, j: (
        f"linalg.inv: {where}The diagonal element {j} is zero, the inversion could not be "
        f"completed because the input matrix is singular."))
    eye = identity(runtime_of(A), (n, n), A.dtype, "aten::linalg_inv")
    return getrs(lu, pivots, eye, batch)


def linalg_det(A):
    spec = LF.linalg_det.meta(A)
    rt = runtime_of(A)
    out = rt.empty(tuple(spec.shape), contiguous_strides(tuple(spec.shape)), spec.dtype)
    count, n = out.numel(), A._shape[-1]
    if not count:
        return out
    if not n:
        return fill_(out, 1)
    lu, pivots, _ = getrf(A)
    rt.launch("aten::linalg_det", source(_DET, A.dtype), "k_lu_det", count,
              [*rt.buffer_of(lu), *rt.buffer_of(pivots), *rt.buffer_of(out), np.int32(n), count],
              [lu, pivots, out])
    return out


# --- Cholesky -------------------------------------------------------------------------------------

def linalg_cholesky(self, upper=False):
    LF.linalg_cholesky.meta(self, upper)
    rt = runtime_of(self)
    batch, n = tuple(self._shape[:-2]), self._shape[-1]
    out = contiguous_copy(self)
    if not out.numel():
        return out
    info = rt.empty(batch, contiguous_strides(batch), D.int32)
    launch_per_matrix("aten::linalg_cholesky", _POTRF, "k_potrf", self.dtype, math.prod(batch),
                      n, [*rt.buffer_of(out), np.int32(n), *rt.buffer_of(info),
                          np.int32(upper)], [out, info], local_capacity(rt, n * n, self.dtype))
    raise_first_failure(info, batch, lambda where, order: (
        f"linalg.cholesky: {where}The factorization could not be completed because the input "
        f"is not positive-definite (the leading minor of order {order} is not "
        f"positive-definite)."))
    return out


def kernels() -> dict:
    """{op: OpenCL kernel} of the linear algebra primitives."""
    return {LU.linalg_lu_factor_ex: linalg_lu_factor_ex, LU.lu_unpack: lu_unpack,
            LU.linalg_lu: linalg_lu, LU.linalg_lu_solve: linalg_lu_solve,
            LF.linalg_solve: linalg_solve, LF.linalg_inv: linalg_inv, LF.linalg_det: linalg_det,
            LF.linalg_cholesky: linalg_cholesky}
