"""Derivatives of ``ops/factorizations.py`` and ``factorization_composites.py`` (real inputs),
after PyTorch's ``FunctionsManual.cpp`` (``linalg_solve_jvp``/``svd_backward``/
``linalg_eig_backward``/...)."""

from ...ops import complex as CX
from ...ops import factorization_composites as FC
from ...ops import factorizations as FZ
from ...ops import factory as F
from ...ops import linalg as L
from ...ops import pointwise as P
from ...ops import reductions as RD
from ...ops import shape as S
from . import conj, derivative, has_no_zeros, not_implemented, zeros


def _t(x):
    return S.transpose(x, -2, -1)


def _h(x):
    return conj(_t(x))


def _mm(a, b):
    return L.matmul(a, b)


def _eye_like(x):
    n = x._shape[-1]
    return F.eye(n, dtype=x.dtype, device=x.device)


@derivative(FZ.linalg_inv, "LinalgInvExBackward0", save=("result",))
def _inv(ctx, grad):
    inv_t = _t(ctx.result)
    return P.neg(_mm(inv_t, _mm(grad, inv_t)))


@derivative(FZ.linalg_det, "LinalgDetBackward0", save=("A", "result"))
def _det(ctx, grad):
    """d det(A) = det(A) tr(A^-1 dA): the gradient is g det(A) A^-T; for singular A the SVD
    form g * sign * U diag(prod of the other singular values) V^T (exact at rank n-1, and right
    at any rank: the form traced on meta tensors, which have no values to test)."""
    A, det = ctx.A, ctx.result
    g = S.unsqueeze(S.unsqueeze(P.mul(grad, det), -1), -1)
    if has_no_zeros(det):
        return P.mul(g, _t(FZ.linalg_inv(A)))
    U, s, Vh = FZ.linalg_svd(A, False)
    n = s._shape[-1]
    others = []
    for i in range(n):
        rest = S.cat([S.slice(s, -1, 0, i), S.slice(s, -1, i + 1, n)], -1)
        others.append(S.unsqueeze(RD.prod_dim(rest, -1) if n > 1 else
                                  F.full(rest._shape[:-1], 1, dtype=s.dtype, device=s.device),
                                  -1))
    cofactor_s = S.cat(others, -1)
    sign = FZ.linalg_det(_mm(U, Vh))
    gs = S.unsqueeze(S.unsqueeze(P.mul(grad, sign), -1), -1)
    return P.mul(gs, _mm(P.mul(U, S.unsqueeze(cofactor_s, -2)), Vh))


@derivative(FZ.linalg_solve, "LinalgSolveExBackward0", save=("A", "result"))
def _solve(ctx, grad):
    A, X, left = ctx.A, ctx.result, ctx.left
    vector = X.ndim == 1 or (X.ndim == A.ndim - 1 and X._shape == A._shape[:-1])
    gB = FZ.linalg_solve(_h(A), grad, left=left)
    gA = None
    if ctx.needs[0]:
        if vector:
            gA = P.neg(_mm(S.unsqueeze(gB, -1), S.unsqueeze(conj(X), -2)))
        elif left:
            gA = P.neg(_mm(gB, _h(X)))
        else:
            gA = P.neg(_mm(_h(X), gB))
    return gA, gB if ctx.needs[1] else None


@derivative(FZ.linalg_cholesky, "LinalgCholeskyExBackward0", save=("result",))
def _cholesky(ctx, grad):
    """gA = sym(L^-T Phi(L^T gL) L^-1), Phi = lower triangle with the diagonal halved."""
    Lo = _t(ctx.result) if ctx.upper else ctx.result
    gL = _t(grad) if ctx.upper else grad
    p = _mm(_t(Lo), gL)
    eye = _eye_like(p)
    phi = P.sub(S.tril(p), P.mul(P.mul(p, eye), 0.5))
    Linv = FZ.linalg_inv(Lo)
    gA = _mm(_t(Linv), _mm(phi, Linv))
    return P.mul(P.add(gA, _t(gA)), 0.5)


def _svd_backward(grad_U, grad_S, grad_Vh, U, S_, Vh):
    """``svd_backward`` for real inputs and the reduced factorization."""
    m, n = U._shape[-2], Vh._shape[-1]
    if grad_U is None and grad_Vh is None:
        return _mm(P.mul(U, S.unsqueeze(grad_S, -2)), Vh)
    V = _t(Vh)
    s_row, s_col = S.unsqueeze(S_, -2), S.unsqueeze(S_, -1)
    E = P.sub(P.mul(s_row, s_row), P.mul(s_col, s_col))          # E_ij = s_j^2 - s_i^2
    eye = _eye_like(E)
    E = P.add(E, eye)                                            # 1 on the diagonal
    gA = zeros(E._shape, E)
    if grad_U is not None:
        UhgU = _mm(_t(U), grad_U)
        gA = P.add(gA, P.mul(P.sub(UhgU, _t(UhgU)), s_row))
    if grad_Vh is not None:
        gV = _t(grad_Vh)
        VhgV = _mm(Vh, gV)
        gA = P.add(gA, P.mul(s_col, P.sub(VhgV, _t(VhgV))))
    gA = P.div(gA, E)
    gA = P.mul(gA, P.sub(1, eye))
    if grad_S is not None:
        gA = P.add(gA, P.mul(S.unsqueeze(grad_S, -1), eye))
    gA = _mm(U, _mm(gA, Vh))
    if m > n and grad_U is not None:
        proj = P.sub(grad_U, _mm(U, _mm(_t(U), grad_U)))
        gA = P.add(gA, _mm(P.div(proj, s_row), Vh))
    if m < n and grad_Vh is not None:
        gV = _t(grad_Vh)
        proj = P.sub(gV, _mm(V, _mm(Vh, gV)))
        gA = P.add(gA, _mm(U, _t(P.div(proj, s_row))))
    return gA


@derivative(FZ.linalg_svd, "LinalgSvdBackward0", save=("A", "result0", "result1", "result2"))
def _svd(ctx, grad_U, grad_S, grad_Vh):
    U, S_, Vh = ctx.result0, ctx.result1, ctx.result2
    m, n = ctx.A._shape[-2:]
    if ctx.full_matrices and m != n and (grad_U is not None or grad_Vh is not None):
        k = min(m, n)
        U, Vh = S.slice(U, -1, 0, k), S.slice(Vh, -2, 0, k)
        grad_U = S.slice(grad_U, -1, 0, k) if grad_U is not None else None
        grad_Vh = S.slice(grad_Vh, -2, 0, k) if grad_Vh is not None else None
    return _svd_backward(grad_U, grad_S, grad_Vh, U, S_, Vh)


@derivative(FZ.linalg_svdvals, "LinalgSvdBackward0", save=("A",))
def _svdvals(ctx, grad):
    U, _, Vh = FZ.linalg_svd(ctx.A, False)
    return _svd_backward(None, grad, None, U, None, Vh)


@derivative(FZ.linalg_eigh, "LinalgEighBackward0", save=("result0", "result1"))
def _eigh(ctx, grad_L, grad_V):
    """gA = V (diag(gL) + skew(V^T gV) / E) V^T, E_ij = L_j - L_i off the diagonal."""
    Lv, V = ctx.result0, ctx.result1
    eye = _eye_like(V)
    inner = zeros(V._shape, V)
    if grad_V is not None:
        E = P.add(P.sub(S.unsqueeze(Lv, -2), S.unsqueeze(Lv, -1)), eye)
        VhgV = _mm(_t(V), grad_V)
        skew = P.mul(P.sub(VhgV, _t(VhgV)), 0.5)     # project onto the tangent space of O(n)
        inner = P.mul(P.div(skew, E), P.sub(1, eye))
    if grad_L is not None:
        inner = P.add(inner, P.mul(S.unsqueeze(grad_L, -1), eye))
    return _mm(V, _mm(inner, _t(V)))


@derivative(FZ.linalg_qr, "LinalgQrBackward0", save=("A", "result0", "result1"))
def _qr(ctx, grad_Q, grad_R):
    """Reduced QR (``linalg_qr_backward``). Square or tall: gA = (gQ + Q copyltu(M)) R^-T with
    M = R gR^T - gQ^T Q. Wide (m < n): A = [X | Y] with X = Q R_X square, Y = Q R_Y, so
    gY = Q gR_Y and X gets the square formula with gQ + Y gR_Y^T."""
    Q, R = ctx.result0, ctx.result1
    m, n = ctx.A._shape[-2:]
    if ctx.mode == "complete" and m > n:
        raise NotImplementedError("linalg_qr backward: the complete QR of a tall matrix is not "
                                  "differentiable (as in PyTorch)")
    gQ = grad_Q if grad_Q is not None else zeros(Q._shape, Q)
    gR = grad_R if grad_R is not None else zeros(R._shape, R)
    if m >= n:
        return _qr_square(gQ, gR, Q, R)
    gR_y = S.slice(gR, -1, m, n)
    Y = S.slice(ctx.A, -1, m, n)
    gX = _qr_square(P.add(gQ, _mm(Y, _t(gR_y))), S.slice(gR, -1, 0, m), Q, S.slice(R, -1, 0, m))
    return S.cat([gX, _mm(Q, gR_y)], -1)


def _qr_square(gQ, gR, Q, R):
    M = P.sub(_mm(R, _t(gR)), _mm(_t(gQ), Q))
    low = S.tril(M, -1)
    M = P.add(P.add(low, _t(low)), P.mul(M, _eye_like(M)))
    return _mm(P.add(gQ, _mm(Q, M)), _t(FZ.linalg_inv(R)))


@derivative(FZ.linalg_pinv, "LinalgPinvBackward0", save=("self", "result"))
def _pinv(ctx, grad):
    return pinv_backward(grad, ctx.result, ctx.self)


def pinv_backward(grad, pinv, A):
    """``pinv_backward``: the derivative of the pseudo-inverse at constant rank, arranged so
    that the products are of the smaller of the matrix dims."""
    pinv_t, grad_t = _t(pinv), _t(grad)
    if A._shape[-2] <= A._shape[-1]:
        K = _mm(grad_t, pinv)
        K_pinv_t = _mm(K, pinv_t)
        return P.add(P.sub(K_pinv_t, _t(_mm(pinv, K))),
                     P.sub(_mm(_mm(pinv_t, pinv), P.sub(grad_t, _mm(K, A))),
                           _mm(_mm(A, pinv), K_pinv_t)))
    K = _mm(pinv, grad_t)
    pinv_t_K = _mm(pinv_t, K)
    return P.add(P.sub(_mm(_mm(P.sub(grad_t, _mm(A, K)), pinv), pinv_t), _t(_mm(K, pinv))),
                 P.sub(pinv_t_K, _mm(_mm(pinv_t_K, pinv), A)))


@derivative(FZ.linalg_eig, "LinalgEigBackward0", save=("result0", "result1"))
def _eig(ctx, grad_L, grad_V):
    """``linalg_eig_backward``: gA = V^-H (diag(gL) + (V^H gV - V^H V Re(diag(V^H gV))) / E*) V^H,
    E_ij = L_j - L_i off the diagonal. Eigenvectors are only defined up to a phase each, so a
    loss that depends on it has no gradient (PyTorch's check, with its tolerance)."""
    Lv, V = ctx.result0, ctx.result1
    Vh = _h(V)
    if grad_V is None:   # eigvals: gA = V^-H diag(gL) V^H
        return FZ.linalg_solve(Vh, P.mul(S.unsqueeze(grad_L, -1), Vh))
    VhgV = _mm(Vh, grad_V)
    diagonal = S.diagonal(VhgV, 0, -2, -1)
    if RD.amax(P.abs(CX.imag(diagonal))).item() > 1e-2:
        raise RuntimeError("linalg_eig_backward: The eigenvectors in the complex case are "
                           "specified up to multiplication by e^{i phi}. The specified loss "
                           "function depends on this quantity, so it is ill-defined.")
    VhgV = P.sub(VhgV, _mm(Vh, P.mul(V, S.unsqueeze(CX.real(diagonal), -2))))
    Lconj = conj(Lv)
    eye = _eye_like(V)
    E = P.add(P.mul(P.sub(S.unsqueeze(Lconj, -2), S.unsqueeze(Lconj, -1)), P.sub(1, eye)), eye)
    gA = P.div(VhgV, E)
    if grad_L is not None:
        gA = P.add(gA, P.mul(S.unsqueeze(grad_L, -1), eye))
    return FZ.linalg_solve(Vh, _mm(gA, Vh))


# --- composites with rows of their own (CompositeExplicitAutograd in backends/composite.py) -----
derivative(FZ.cholesky, "CholeskyBackward0", save=("result",))(_cholesky)


@derivative(FC.linalg_solve_triangular, "LinalgSolveTriangularBackward0",
            save=("self", "result if self"))
def _solve_triangular(ctx, grad):
    """``linalg_solve_triangular_backward``: gB solves the adjoint system; gA = -gB X^H (or
    -X^H gB on the right), kept to A's triangle (its diagonal too unless unitriangular)."""
    upper, left, unit = ctx.upper, ctx.left, ctx.unitriangular
    gB = FC.linalg_solve_triangular(_h(ctx.self), grad, upper=not upper, left=left,
                                    unitriangular=unit)
    gA = None
    if ctx.needs[0]:
        X = ctx.result
        gA = P.neg(_mm(gB, _h(X)) if left else _mm(_h(X), gB))
        gA = S.triu(gA, 1 if unit else 0) if upper else S.tril(gA, -1 if unit else 0)
    return gA, gB if ctx.needs[1] else None


@derivative(FC.linalg_matrix_exp, "LinalgMatrixExpBackward0", save=("self",))
def _matrix_exp(ctx, grad):
    """The upper-right block of exp([[A^H, G], [0, A^H]]) (``linalg_matrix_exp_differential``
    with adjoint): the Fréchet derivative of exp at A^H in the direction G."""
    Ah = _h(ctx.self)
    n = Ah._shape[-1]
    top = S.cat([Ah, grad], -1)
    bottom = S.cat([zeros(Ah._shape, grad), Ah], -1)
    block = FC.linalg_matrix_exp(S.cat([top, bottom], -2))
    return S.slice(S.slice(block, -2, 0, n), -1, n, 2 * n)


@derivative(FC.linalg_lstsq, "LinalgLstsqBackward0", save=("self", "b", "result0", "result1"),
            outputs=(True, True, False, False))
def _lstsq(ctx, grad_X, grad_residuals, _g_rank=None, _g_values=None):
    """``linalg_lstsq_backward``: X = pinv(A) B, so gA = pinv_backward(gX B^H) and
    gB = pinv(A)^H gX; the residuals |AX - B|^2 are stationary in X at the solution, so their
    gradient is 2 (AX - B) g X^H for A and -2 (AX - B) g for B (g per column)."""
    A, B, X, residuals = ctx.self, ctx.b, ctx.result0, ctx.result1
    vector = B.ndim == A.ndim - 1
    if vector:
        B, X = S.unsqueeze(B, -1), S.unsqueeze(X, -1)
        grad_X = None if grad_X is None else S.unsqueeze(grad_X, -1)
    gA = gB = None
    if grad_X is not None:
        pinv = FZ.linalg_pinv(A)
        if ctx.needs[0]:
            gA = pinv_backward(_mm(grad_X, _h(B)), pinv, A)
        if ctx.needs[1]:
            gB = _mm(_h(pinv), grad_X)
    if grad_residuals is not None and residuals.numel():
        g = S.unsqueeze(grad_residuals, -2)   # residuals are (..., k) for B's k columns
        weighted = P.mul(P.mul(P.sub(_mm(A, X), B), g), 2)   # 2 (AX - B) per column
        if ctx.needs[0]:
            gA = _plus(gA, _mm(weighted, _h(X)))
        if ctx.needs[1]:
            gB = _plus(gB, P.neg(weighted))
    if vector and gB is not None:
        gB = S.squeeze(gB, [-1])
    return gA, gB


def _plus(a, b):
    return b if a is None else P.add(a, b)


not_implemented(FZ.geqrf, "GeqrfBackward0")   # as derivatives.yaml: backward refuses
