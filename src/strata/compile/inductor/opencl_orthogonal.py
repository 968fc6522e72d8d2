"""The OpenCL device's orthogonal factorizations: Householder QR (``geqrf``, ``linalg_qr``) and
the symmetric eigensolver (``linalg_eigh``), batched as opencl_linalg.py's kernels are (Note
[One work-group per matrix]).

QR follows LAPACK: ``dlarfg``'s reflectors (beta = -sign(alpha) * ||x||, tau = (beta - alpha) /
beta, no reflection where the column below the diagonal is zero), ``dorg2r``'s backward
accumulation of Q, so Q and R equal the CPU's up to rounding, signs included. ``eigh`` is the
cyclic Jacobi method in the parallel (round-robin) order: each step rotates n/2 disjoint pairs at
once, sweeps repeat until a whole sweep finds every off-diagonal entry negligible against its
diagonal pair (relative accuracy, as Demmel and Veselic's criterion), eigenvalues ascending.
Eigenvectors are unique only up to sign: those of LAPACK's ``syevd`` may have the other one.
"""

import numpy as np

from ...core import dtype as D
from ...core.shape import contiguous_strides
from ...ops import factorizations as LF
from .opencl_linalg import (
    MATRIX_IN,
    MATRIX_OUT,
    contiguous_copy,
    identity,
    launch_per_matrix,
    local_capacity,
    source,
)
from .opencl_pointwise import runtime_of

# geqrf: Householder QR in place on a contiguous (m, n) matrix; the column norm is scaled by the
# largest entry first (dnrm2 neither overflows nor underflows)
_GEQRF = """KERNEL k_geqrf(__global T* g, const long g_off, const int m, const int n,
                   __global T* tau, const long tau_off) {
    const long b = get_group_id(0);
    const int lid = get_local_id(0), k = min(m, n);
    const int MN = m * n;
    g += g_off + b * MN;
    tau += tau_off + b * k;
    __local T partial[WG];
""" + MATRIX_IN + """
    for (int j = 0; j < k; j++) {
        const T alpha = a[j * n + j];
        T mine = 0;
        for (int i = j + 1 + lid; i < m; i += WG)
            mine = fmax(mine, fabs(a[i * n + j]));
        partial[lid] = mine;
        SYNC;
        for (int h = WG / 2; h > 0; h >>= 1) {
            if (lid < h)
                partial[lid] = fmax(partial[lid], partial[lid + h]);
            SYNC;
        }
        const T scale = partial[0];
        SYNC;
        mine = 0;
        if (scale > 0)
            for (int i = j + 1 + lid; i < m; i += WG) {
                const T t = a[i * n + j] / scale;
                mine += t * t;
            }
        partial[lid] = mine;
        SYNC;
        for (int h = WG / 2; h > 0; h >>= 1) {
            if (lid < h)
                partial[lid] += partial[lid + h];
            SYNC;
        }
        const T xnorm = scale * sqrt(partial[0]);
        T t = 0;
        if (xnorm != 0) {
            const T beta = -copysign(hypot(alpha, xnorm), alpha);
            t = (beta - alpha) / beta;
            const T inv = 1 / (alpha - beta);
            for (int i = j + 1 + lid; i < m; i += WG)
                a[i * n + j] *= inv;
            SYNC;
            /* H = I - t v v^T (v: 1, then the scaled column) on the columns to the right */
            for (int c = j + 1 + lid; c < n; c += WG) {
                T w = a[j * n + c];
                for (int i = j + 1; i < m; i++)
                    w += a[i * n + j] * a[i * n + c];
                w *= t;
                a[j * n + c] -= w;
                for (int i = j + 1; i < m; i++)
                    a[i * n + c] -= a[i * n + j] * w;
            }
            if (lid == 0)
                a[j * n + j] = beta;
        }
        if (lid == 0)
            tau[j] = t;
        SYNC;
    }
""" + MATRIX_OUT + """
}
"""

# orgqr: Q (m, qc) = H_0 ... H_{k-1} applied to the identity's first qc columns, from the last
# reflector back (dorg2r): H_j only touches rows and columns j and after
_ORGQR = """KERNEL k_orgqr(__global const T* v, const long v_off, __global const T* tau,
                   const long tau_off, __global T* g, const long g_off, const int m,
                   const int n, const int qc) {
    const long b = get_group_id(0);
    const int lid = get_local_id(0), k = min(m, n);
    const int MN = m * qc;
    v += v_off + b * m * n;
    tau += tau_off + b * k;
    g += g_off + b * MN;
#if CAP
    __local T a[CAP];
#else
    __global T* a = g;
#endif
    for (int e = lid; e < MN; e += WG)
        a[e] = e / qc == e % qc ? 1 : 0;
    SYNC;
    for (int j = k - 1; j >= 0; j--) {
        const T t = tau[j];
        if (t != 0)
            for (int c = j + lid; c < qc; c += WG) {
                T w = a[j * qc + c];
                for (int i = j + 1; i < m; i++)
                    w += v[i * n + j] * a[i * qc + c];
                w *= t;
                a[j * qc + c] -= w;
                for (int i = j + 1; i < m; i++)
                    a[i * qc + c] -= v[i * n + j] * w;
            }
        SYNC;
    }
""" + MATRIX_OUT + """
}
"""

# R: the first ``rows`` rows of the factored matrix, zero below the diagonal
_TRIU_ROWS = """__kernel void k_triu_rows(__global const T* src, const long src_off, const long m,
                          const long n, __global T* out, const long out_off, const long rows,
                          const long numel) {
    const long e = get_global_id(0);
    if (e >= numel)
        return;
    const long b = e / (rows * n), r = (e / n) % rows, c = e % n;
    out[out_off + e] = c >= r ? src[src_off + b * m * n + r * n + c] : 0;
}
"""


def _geqrf(A):
    """(the factored matrix: R on and above the diagonal, the reflectors below; tau)."""
    rt = runtime_of(A)
    *batch, m, n = A._shape
    batch = tuple(batch)
    factored = contiguous_copy(A)
    tau = rt.empty(batch + (min(m, n),), contiguous_strides(batch + (min(m, n),)), A.dtype)
    if tau.numel():
        launch_per_matrix("aten::geqrf", _GEQRF, "k_geqrf", A.dtype, int(np.prod(batch)),
                          max(m, n), [*rt.buffer_of(factored), np.int32(m), np.int32(n),
                                      *rt.buffer_of(tau)], [factored, tau],
                          local_capacity(rt, m * n, A.dtype))
    return factored, tau


def geqrf(self):
    LF.geqrf.meta(self)
    return _geqrf(self)


def linalg_qr(A, mode="reduced"):
    q_spec, r_spec = LF.linalg_qr.meta(A, mode)
    rt = runtime_of(A)
    *batch, m, n = A._shape
    count = int(np.prod(batch))
    factored, tau = _geqrf(A)
    r_shape = tuple(r_spec.shape)
    R = rt.empty(r_shape, contiguous_strides(r_shape), A.dtype)
    if R.numel():
        rt.launch("aten::linalg_qr", source(_TRIU_ROWS, A.dtype), "k_triu_rows", R.numel(),
                  [*rt.buffer_of(factored), m, n, *rt.buffer_of(R), r_shape[-2], R.numel()],
                  [factored, R])
    if mode == "r":
        return rt.empty((0,), (1,), A.dtype), R
    q_shape = tuple(q_spec.shape)
    if not tau.numel():     # no reflector: Q is the identity's first columns
        return identity(rt, q_shape, A.dtype, "aten::linalg_qr"), R
    Q = rt.empty(q_shape, contiguous_strides(q_shape), A.dtype)
    qc = q_shape[-1]
    launch_per_matrix("aten::linalg_qr", _ORGQR, "k_orgqr", A.dtype, count, max(m, qc),
                      [*rt.buffer_of(factored), *rt.buffer_of(tau), *rt.buffer_of(Q),
                       np.int32(m), np.int32(n), np.int32(qc)], [factored, tau, Q],
                      local_capacity(rt, m * qc, A.dtype))
    return Q, R


def kernels() -> dict:
    """{op: OpenCL kernel} of the orthogonal factorizations."""
    return {LF.geqrf: geqrf, LF.linalg_qr: linalg_qr}
