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


# syevj: parallel cyclic Jacobi on a contiguous copy ``g`` of A (symmetrised from the triangle
# ``lower`` names), rotations accumulated in ``v`` (scratch, both in local memory when they fit);
# then the eigenvalues ranked ascending and the vectors' columns written in that order
_SYEVJ = """KERNEL k_syevj(__global T* g, const long g_off, __global T* gv, const long gv_off,
                   __global T* w, const long w_off, __global T* vecs, const long vecs_off,
                   const int n, const int lower) {
    const long b = get_group_id(0);
    const int lid = get_local_id(0);
    const int MN = n * n;
    g += g_off + b * MN;
    gv += gv_off + b * MN;
    w += w_off + b * n;
    vecs += vecs_off + b * MN;
    __local T rot_c[PAIRS], rot_s[PAIRS];
    __local int rot_p[PAIRS], rot_q[PAIRS];
    __local int rotated;
""" + MATRIX_IN + """
#if CAP
    __local T v[CAP];
#else
    __global T* v = gv;
#endif
    for (int e = lid; e < MN; e += WG) {
        const int r = e / n, c = e % n;
        if (lower ? r < c : r > c)
            a[e] = a[c * n + r];
        v[e] = r == c ? 1 : 0;
    }
    const int players = n + (n & 1), pairs = players / 2;
    for (int sweep = 0; sweep < SWEEPS; sweep++) {
        if (lid == 0)
            rotated = 0;
        SYNC;
        for (int step = 0; step < players - 1; step++) {
            for (int k = lid; k < pairs; k += WG) {    /* the circle method's pairs */
                int p = k == 0 ? step : (step + k) % (players - 1);
                int q = k == 0 ? players - 1 : (step - k + players - 1) % (players - 1);
                if (p > q) {
                    const int t = p; p = q; q = t;
                }
                T c = 1, s = 0;
                if (q < n) {
                    const T apq = a[p * n + q], app = a[p * n + p], aqq = a[q * n + q];
                    if (fabs(apq) > EPS * sqrt(fabs(app)) * sqrt(fabs(aqq)) &&
                            fabs(apq) > TINY) {
                        const T theta = (aqq - app) / (2 * apq);
                        const T t = fabs(theta) > 1e8 ? 0.5 / theta :
                            copysign((T)1, theta) / (fabs(theta) + sqrt(1 + theta * theta));
                        c = 1 / sqrt(1 + t * t);
                        s = t * c;
                        rotated = 1;
                    }
                }
                rot_p[k] = p;
                rot_q[k] = q;
                rot_c[k] = c;
                rot_s[k] = s;
            }
            SYNC;
            for (int e = lid; e < pairs * n; e += WG) {    /* rows: J^T A */
                const int k = e / n, j = e % n;
                const T s = rot_s[k];
                if (s != 0) {
                    const int p = rot_p[k], q = rot_q[k];
                    const T c = rot_c[k], ap = a[p * n + j], aq = a[q * n + j];
                    a[p * n + j] = c * ap - s * aq;
                    a[q * n + j] = s * ap + c * aq;
                }
            }
            SYNC;
            for (int e = lid; e < pairs * n; e += WG) {    /* columns: (J^T A) J and V J */
                const int k = e / n, i = e % n;
                const T s = rot_s[k];
                if (s != 0) {
                    const int p = rot_p[k], q = rot_q[k];
                    const T c = rot_c[k], ap = a[i * n + p], aq = a[i * n + q];
                    a[i * n + p] = c * ap - s * aq;
                    a[i * n + q] = s * ap + c * aq;
                    const T vp = v[i * n + p], vq = v[i * n + q];
                    v[i * n + p] = c * vp - s * vq;
                    v[i * n + q] = s * vp + c * vq;
                }
            }
            SYNC;
            for (int k = lid; k < pairs; k += WG)    /* the rotation's zeros, exactly */
                if (rot_s[k] != 0) {
                    a[rot_p[k] * n + rot_q[k]] = 0;
                    a[rot_q[k] * n + rot_p[k]] = 0;
                }
            SYNC;
        }
        const int done = !rotated;
        SYNC;
        if (done)
            break;
    }
    for (int i = lid; i < n; i += WG) {    /* rank: the ascending order, ties by position */
        const T value = a[i * n + i];
        int rank = 0;
        for (int j = 0; j < n; j++) {
            const T other = a[j * n + j];
            rank += other < value || (other == value && j < i);
        }
        w[rank] = value;
        for (int r = 0; r < n; r++)
            vecs[r * n + rank] = v[r * n + i];
    }
}
"""
_SWEEPS = 60       # Jacobi converges quadratically: 6-10 sweeps in practice
_EPSILON = {D.float32: ("1.1920929e-07f", "1.1754944e-38f"), D.float64: ("2.220446049250313e-16",
                                                                        "2.2250738585072014e-308")}


def linalg_eigh(self, UPLO="L"):
    w_spec, v_spec = LF.linalg_eigh.meta(self, UPLO)
    rt = runtime_of(self)
    n = self._shape[-1]
    shapes = tuple(w_spec.shape), tuple(v_spec.shape)
    w, vecs = (rt.empty(shape, contiguous_strides(shape), self.dtype) for shape in shapes)
    if not w.numel():
        return w, vecs
    work = contiguous_copy(self)
    scratch = rt.empty(shapes[1], contiguous_strides(shapes[1]), self.dtype)
    cap = local_capacity(rt, 2 * n * n, self.dtype) // 2
    eps, tiny = _EPSILON[self.dtype]
    pairs = 1 << ((n + 1) // 2 - 1).bit_length()
    defines = f"#define PAIRS {pairs}\n#define SWEEPS {_SWEEPS}\n#define EPS {eps}\n" \
              f"#define TINY {tiny}\n"
    launch_per_matrix("aten::linalg_eigh", defines + _SYEVJ, "k_syevj", self.dtype,
                      w.numel() // n, n, [*rt.buffer_of(work), *rt.buffer_of(scratch),
                                         *rt.buffer_of(w), *rt.buffer_of(vecs), np.int32(n),
                                         np.int32(UPLO == "L")], [work, scratch, w, vecs], cap)
    return w, vecs


def kernels() -> dict:
    """{op: OpenCL kernel} of the orthogonal factorizations."""
    return {LF.geqrf: geqrf, LF.linalg_qr: linalg_qr, LF.linalg_eigh: linalg_eigh}
