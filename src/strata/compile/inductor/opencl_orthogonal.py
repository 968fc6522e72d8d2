"""The OpenCL device's orthogonal factorizations: Householder QR (``geqrf``, ``linalg_qr``), the
symmetric eigensolver (``linalg_eigh``) and the SVD (``linalg_svd``, ``linalg_svdvals``, so
``linalg_pinv``), batched as opencl_linalg.py's kernels are (Note [One work-group per matrix]).

QR follows LAPACK: ``dlarfg``'s reflectors (beta = -sign(alpha) * ||x||, tau = (beta - alpha) /
beta, no reflection where the column below the diagonal is zero), ``dorg2r``'s backward
accumulation of Q, so Q and R equal the CPU's up to rounding, signs included. ``eigh`` is the
cyclic Jacobi method in the parallel (round-robin) order: each step rotates n/2 disjoint pairs at
once, sweeps repeat until a whole sweep finds every off-diagonal entry negligible against its
diagonal pair (relative accuracy, as Demmel and Veselic's criterion), eigenvalues ascending.
Eigenvectors are unique only up to sign: those of LAPACK's ``syevd`` may have the other one.
The SVD is one-sided Jacobi on the columns, with the same pair order and a relative
orthogonality test; singular vectors are unique up to a sign shared by a pair (u_j, v_j).
"""

import math

import numpy as np

from ...core import dtype as D
from ...core.shape import contiguous_strides
from ...ops import factorizations as LF
from ...ops import linalg as L
from ...ops import pointwise as P
from ...ops import reductions as RED
from .opencl_linalg import (
    MATRIX_IN,
    MATRIX_OUT,
    contiguous_copy,
    identity,
    launch_per_matrix,
    local_capacity,
    source,
)
from .opencl_pointwise import fill_, runtime_of

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


# x (at position i) sorts before y (at j): smaller, NaN after every number, ties by position, so
# ranks are a permutation even with NaN (no output slot left unwritten)
_BEFORE = """#define BEFORE(x, y, i, j) ((!isnan(x) && isnan(y)) || (x) < (y) || \\
    (((x) == (y) || (isnan(x) && isnan(y))) && (i) < (j)))
/* the tangent of the Jacobi rotation that zeroes a pair, from cot(2 theta) (the smaller root of
   t^2 + 2 cot t - 1 = 0; for a huge cot, its limit 1 / (2 cot)) */
#define JACOBI_TANGENT(cot) (fabs(cot) > 1e8 ? 0.5 / (cot) : \\
    copysign((T)1, (cot)) / (fabs(cot) + sqrt(1 + (cot) * (cot))))
"""

# syevj: parallel cyclic Jacobi on a contiguous copy ``g`` of A (symmetrised from the triangle
# ``lower`` names), rotations accumulated in ``v`` (scratch, both in local memory when they fit);
# then the eigenvalues ranked ascending and the vectors' columns written in that order
_SYEVJ = _BEFORE + """KERNEL k_syevj(__global T* g, const long g_off,
                   __global T* gv, const long gv_off,
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
                        const T t = JACOBI_TANGENT(theta);
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
    for (int i = lid; i < n; i += WG) {    /* rank: ascending, NaN last, ties by position */
        const T value = a[i * n + i];
        int rank = 0;
        for (int j = 0; j < n; j++)
            rank += BEFORE(a[j * n + j], value, j, i);
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


# gesvj: one-sided Jacobi (Hestenes) on a contiguous (r, c) copy ``g`` of A or A^T, r >= c:
# column pairs rotated until orthogonal (|p.q| <= eps ||p|| ||q|| for every pair in a sweep),
# rotations accumulated in ``gv`` (c, c). Singular values: the columns' norms, ranked
# descending; the left vectors: the columns over their norms, written through strides (so A^T's
# land transposed), completed to an orthonormal set by Gram-Schmidt on unit vectors where a
# value is zero or ``left_cols`` > c; the right vectors: V's columns, through strides.
_GESVJ = _BEFORE + """KERNEL k_gesvj(__global T* g, const long g_off,
                   __global T* gv, const long gv_off,
                   __global T* sv, const long sv_off, __global T* left, const long left_off,
                   const long left_stb, const long left_str, const long left_stc,
                   __global T* right, const long right_off, const long right_stb,
                   const long right_str, const long right_stc, const int r, const int c,
                   const int left_cols, const int vectors) {
    const long b = get_group_id(0);
    const int lid = get_local_id(0);
    const int MN = r * c;
    g += g_off + b * MN;
    gv += gv_off + b * c * c;
    sv += sv_off + b * c;
    left += left_off + b * left_stb;
    right += right_off + b * right_stb;
    __local T rot_c[PAIRS], rot_s[PAIRS];
    __local int rot_p[PAIRS], rot_q[PAIRS];
    __local int rotated;
    __local T norms[PAIRS * 2];
    __local int rank_of[PAIRS * 2];
#define LEFT(i, j) left[(i) * left_str + (j) * left_stc]
""" + MATRIX_IN + """
    __global T* v = gv;
    for (int e = lid; e < c * c && vectors; e += WG)
        v[e] = e / c == e % c ? 1 : 0;
    const int players = c + (c & 1), pairs = players / 2;
    for (int sweep = 0; sweep < SWEEPS; sweep++) {
        if (lid == 0)
            rotated = 0;
        SYNC;
        for (int step = 0; step < players - 1; step++) {
            for (int k = lid; k < pairs; k += WG) {
                int p = k == 0 ? step : (step + k) % (players - 1);
                int q = k == 0 ? players - 1 : (step - k + players - 1) % (players - 1);
                if (p > q) {
                    const int t = p; p = q; q = t;
                }
                T cs = 1, sn = 0;
                if (q < c) {
                    T alpha = 0, beta = 0, gamma = 0;
                    for (int i = 0; i < r; i++) {
                        const T x = a[i * c + p], y = a[i * c + q];
                        alpha += x * x;
                        beta += y * y;
                        gamma += x * y;
                    }
                    if (fabs(gamma) > EPS * sqrt(alpha) * sqrt(beta) && fabs(gamma) > TINY) {
                        const T zeta = (beta - alpha) / (2 * gamma);
                        const T t = JACOBI_TANGENT(zeta);
                        cs = 1 / sqrt(1 + t * t);
                        sn = t * cs;
                        rotated = 1;
                    }
                }
                rot_p[k] = p;
                rot_q[k] = q;
                rot_c[k] = cs;
                rot_s[k] = sn;
            }
            SYNC;
            for (int e = lid; e < pairs * (r + c); e += WG) {
                const int k = e / (r + c), i = e % (r + c);
                const T sn = rot_s[k];
                if (sn != 0) {
                    const int p = rot_p[k], q = rot_q[k];
                    const T cs = rot_c[k];
                    if (i < r) {
                        const T x = a[i * c + p], y = a[i * c + q];
                        a[i * c + p] = cs * x - sn * y;
                        a[i * c + q] = sn * x + cs * y;
                    } else if (vectors) {
                        const int j = i - r;
                        const T x = v[j * c + p], y = v[j * c + q];
                        v[j * c + p] = cs * x - sn * y;
                        v[j * c + q] = sn * x + cs * y;
                    }
                }
            }
            SYNC;
        }
        const int done = !rotated;
        SYNC;
        if (done)
            break;
    }
    for (int j = lid; j < c; j += WG) {
        T norm = 0;
        for (int i = 0; i < r; i++)
            norm += a[i * c + j] * a[i * c + j];
        norms[j] = sqrt(norm);
    }
    if (lid == 0)
        rotated = 0;     /* now: whether a value is NaN, which makes the whole result NaN */
    SYNC;
    for (int j = lid; j < c; j += WG)
        if (isnan(norms[j]))
            rotated = 1;
    SYNC;
    const int bad = rotated;
    for (int j = lid; j < c && bad; j += WG)
        norms[j] = NAN;
    SYNC;
    for (int j = lid; j < c; j += WG) {    /* rank: descending, ties by position */
        int rank = 0;
        for (int i = 0; i < c; i++)
            rank += BEFORE(-norms[i], -norms[j], i, j);
        rank_of[j] = rank;
        sv[rank] = norms[j];
    }
    SYNC;
    if (!vectors)
        return;
    for (int e = lid; e < r * c; e += WG) {
        const int i = e / c, j = e % c;
        if (rank_of[j] < left_cols && (norms[j] > 0 || bad))
            LEFT(i, rank_of[j]) = bad ? NAN : a[e] / norms[j];
    }
    for (int e = lid; e < c * c; e += WG)
        right[(e / c) * right_str + rank_of[e % c] * right_stc] = bad ? NAN : v[e];
    for (int e = lid; e < r * (left_cols - c) && bad; e += WG)
        LEFT(e / (left_cols - c), c + e % (left_cols - c)) = NAN;
    SYNC;
    if (lid == 0 && !bad) {    /* complete the left vectors: Gram-Schmidt (twice) on e_0, ... */
        int first = 0;
        while (first < c && sv[first] > 0)
            first++;
        int candidate = 0;
        for (int col = first; col < left_cols; col++)
            for (; candidate < r; candidate++) {
                for (int i = 0; i < r; i++)
                    LEFT(i, col) = i == candidate ? 1 : 0;
                for (int pass = 0; pass < 2; pass++)
                    for (int k = 0; k < col; k++) {
                        T d = 0;
                        for (int i = 0; i < r; i++)
                            d += LEFT(i, k) * LEFT(i, col);
                        for (int i = 0; i < r; i++)
                            LEFT(i, col) -= d * LEFT(i, k);
                    }
                T norm = 0;
                for (int i = 0; i < r; i++)
                    norm += LEFT(i, col) * LEFT(i, col);
                if (norm > 0.25) {
                    norm = sqrt(norm);
                    for (int i = 0; i < r; i++)
                        LEFT(i, col) /= norm;
                    candidate++;
                    break;
                }
            }
    }
}
"""


def _svd(A, left_full, vectors):
    """(S, U, Vh) of ``A`` by ``gesvj`` on A (m >= n) or A^T (U and Vh swap roles and are
    written transposed); U has ``left_full`` rows' worth of columns when asked."""
    rt = runtime_of(A)
    *batch, m, n = A._shape
    batch, k = tuple(batch), min(m, n)
    tall = m >= n
    work = contiguous_copy(A if tall else A.transpose(-2, -1))
    r, c = (m, n) if tall else (n, m)
    left_cols = r if left_full else c
    S = rt.empty(batch + (k,), contiguous_strides(batch + (k,)), A.dtype)
    u_shape = batch + ((m, m if left_full else k) if tall else (m, m))
    vh_shape = batch + ((n, n) if tall else (n if left_full else k, n))
    U = rt.empty(u_shape, contiguous_strides(u_shape), A.dtype) if vectors else S
    Vh = rt.empty(vh_shape, contiguous_strides(vh_shape), A.dtype) if vectors else S
    count = math.prod(batch)
    if not count or not k:
        return S, U, Vh
    scratch = rt.empty((count * c * c,), (1,), A.dtype)
    # left vectors: U (m, left_cols) for A, Vh^T for A^T; right vectors: Vh^T, or U
    left, right = (U, Vh) if tall else (Vh, U)
    left_strides = (left_cols, 1) if tall else (1, r)
    right_strides = (1, c) if tall else (c, 1)
    eps, tiny = _EPSILON[A.dtype]
    pairs = 1 << ((c + 1) // 2 - 1).bit_length()
    defines = f"#define PAIRS {pairs}\n#define SWEEPS {_SWEEPS}\n#define EPS {eps}\n" \
              f"#define TINY {tiny}\n"
    launch_per_matrix("aten::linalg_svd", defines + _GESVJ, "k_gesvj", A.dtype, count, r,
                      [*rt.buffer_of(work), *rt.buffer_of(scratch), *rt.buffer_of(S),
                       *rt.buffer_of(left), r * left_cols, *left_strides, *rt.buffer_of(right),
                       c * c, *right_strides, np.int32(r), np.int32(c), np.int32(left_cols),
                       np.int32(vectors)], [work, scratch, S, left, right],
                      local_capacity(rt, r * c, A.dtype))
    return S, U, Vh


def linalg_svd(A, full_matrices=True, driver=None):
    LF.linalg_svd.meta(A, full_matrices, driver)
    S, U, Vh = _svd(A, full_matrices, True)
    if not S.numel():     # an empty matrix's singular vectors: identities
        U, Vh = (identity(runtime_of(A), tuple(t._shape), A.dtype, "aten::linalg_svd")
                 for t in (U, Vh))
    return U, S, Vh


def linalg_svdvals(A, driver=None):
    LF.linalg_svdvals.meta(A, driver)
    return _svd(A, False, False)[0]


def linalg_pinv(self, atol=None, rtol=None, hermitian=False):
    """The CPU kernel's rule on the device: invert the singular values (|eigenvalues| when
    hermitian) above max(atol, rtol * the largest), zero the others."""
    spec = LF.linalg_pinv.meta(self, atol, rtol, hermitian)
    if not self.numel():
        out = runtime_of(self).empty(tuple(spec.shape), contiguous_strides(tuple(spec.shape)),
                                     self.dtype)
        return fill_(out, 0)
    atol, rtol = LF.pinv_tolerances(self.dtype, self._shape[-2], self._shape[-1], atol, rtol)
    if hermitian:
        values, vectors = linalg_eigh(self)
        size = P.abs(values)
        left, right = vectors, vectors.transpose(-2, -1)
    else:
        values, left, right = _svd(self, False, True)
        size, left, right = values, right.transpose(-2, -1), left.transpose(-2, -1)
    largest = RED.amax(size, [-1], True)
    keep = P.gt(size, P.maximum(P.mul(largest, rtol), P.add(P.mul(largest, 0), atol)))
    scale = P.where(keep, P.reciprocal(values), P.mul(values, 0))
    return L.matmul(P.mul(left, scale.unsqueeze(-2)), right).contiguous()


def kernels() -> dict:
    """{op: OpenCL kernel} of the orthogonal factorizations."""
    return {LF.geqrf: geqrf, LF.linalg_qr: linalg_qr, LF.linalg_eigh: linalg_eigh,
            LF.linalg_svd: linalg_svd, LF.linalg_svdvals: linalg_svdvals,
            LF.linalg_pinv: linalg_pinv}
