"""The opencl device's linear algebra (compile/inductor/opencl_linalg.py, opencl_orthogonal.py)
against PyTorch's CPU on the same NumPy inputs: LU with LAPACK's pivots, solves, inverse,
determinants, Cholesky, QR, eigh, SVD, pinv; their errors and their gradients. Shapes are small:
PoCL builds each program once (then loads its cached binary)."""

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import strata
from strata.compile.inductor import opencl_linalg, opencl_orthogonal

pytestmark = pytest.mark.skipif(not strata.opencl.is_available(),
                                reason="needs pyopencl with an OpenCL driver (pip install "
                                       "'strata[opencl]' brings PoCL)")

DTYPES = [np.float32, np.float64]
TOL = {np.float32: 2e-4, np.float64: 1e-10}
SQUARE = [(1, 1), (3, 3), (2, 5, 5), (2, 3, 9, 9), (40, 40)]
RECTANGULAR = [(4, 3), (3, 6), (2, 1, 4), (2, 7, 2)]


def matrices(shape, dtype, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def on_device(a):
    return strata.tensor(a).to("opencl")


def assert_close(got, want, tol):
    assert got.device.type == "opencl"
    np.testing.assert_allclose(got.cpu().numpy(), want.numpy(), rtol=tol, atol=tol)


def spd(a):
    """A symmetric positive-definite batch from ``a``."""
    return a @ np.swapaxes(a, -1, -2) + np.eye(a.shape[-1], dtype=a.dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SQUARE + RECTANGULAR)
def test_lu_has_lapacks_pivots_and_factors(shape, dtype):
    a = matrices(shape, dtype)
    LU, pivots, info = strata.linalg.lu_factor_ex(on_device(a))
    LU_t, pivots_t, info_t = torch.linalg.lu_factor_ex(torch.tensor(a))
    np.testing.assert_array_equal(pivots.cpu().numpy(), pivots_t.numpy())
    np.testing.assert_array_equal(info.cpu().numpy(), info_t.numpy())
    assert pivots.dtype is strata.int32 and info.dtype is strata.int32
    assert_close(LU, LU_t, TOL[dtype])
    for got, want in zip(strata.linalg.lu(on_device(a)), torch.linalg.lu(torch.tensor(a))):
        assert_close(got, want, TOL[dtype])
    for flags in ((True, False), (False, True)):
        got = strata.lu_unpack(LU, pivots, *flags)
        want = torch.lu_unpack(LU_t, pivots_t, *flags)
        for g, w in zip(got, want):
            assert tuple(g.shape) == tuple(w.shape)
            assert_close(g, w, TOL[dtype])


@settings(max_examples=8, deadline=None)
@given(batch=st.lists(st.integers(1, 3), max_size=2), m=st.integers(1, 12),
       n=st.integers(1, 12), seed=st.integers(0, 99), dtype=st.sampled_from(DTYPES))
def test_lu_of_any_shape_matches_torch(batch, m, n, seed, dtype):
    a = matrices((*batch, m, n), dtype, seed)
    LU, pivots, _ = strata.linalg.lu_factor_ex(on_device(a))
    LU_t, pivots_t, _ = torch.linalg.lu_factor_ex(torch.tensor(a))
    np.testing.assert_array_equal(pivots.cpu().numpy(), pivots_t.numpy())
    assert_close(LU, LU_t, TOL[dtype])


@settings(max_examples=8, deadline=None)
@given(batch=st.lists(st.integers(1, 3), max_size=2), n=st.integers(1, 10),
       columns=st.integers(1, 12), seed=st.integers(0, 99), dtype=st.sampled_from(DTYPES))
def test_solve_cholesky_qr_eigh_of_any_shape_match_torch(batch, n, columns, seed, dtype):
    a = matrices((*batch, n, n), dtype, seed)
    b = matrices((*batch, n, columns), dtype, seed + 1)
    tol = TOL[dtype] * 100
    A, A_t = on_device(a), torch.tensor(a)
    assert_close(strata.linalg.solve(A, on_device(b)), torch.linalg.solve(A_t, torch.tensor(b)),
                 tol)
    assert_close(strata.linalg.cholesky(on_device(spd(a))),
                 torch.linalg.cholesky(torch.tensor(spd(a))), tol)
    assert_close(strata.linalg.eigh(on_device(spd(a)))[0],
                 torch.linalg.eigh(torch.tensor(spd(a)))[0], tol)
    for got, want in zip(strata.linalg.qr(on_device(b)), torch.linalg.qr(torch.tensor(b))):
        assert_close(got, want, tol)


def test_lu_of_a_singular_matrix_reports_its_zero_pivot():
    a = np.array([[[1.0, 2.0], [2.0, 4.0]], [[0.0, 0.0], [0.0, 0.0]],
                  [[2.0, 1.0], [1.0, 3.0]]])
    LU, pivots, info = strata.linalg.lu_factor_ex(on_device(a))
    LU_t, pivots_t, info_t = torch.linalg.lu_factor_ex(torch.tensor(a))
    np.testing.assert_array_equal(info.cpu().numpy(), info_t.numpy())
    np.testing.assert_array_equal(pivots.cpu().numpy(), pivots_t.numpy())
    assert_close(LU, LU_t, 0)
    with pytest.raises(RuntimeError) as got:
        strata.linalg.lu_factor(on_device(a))
    with pytest.raises(RuntimeError) as want:
        torch.linalg.lu_factor(torch.tensor(a))
    assert str(got.value) == str(want.value)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SQUARE)
def test_solve_inv_det_match_torch(shape, dtype):
    a, b = matrices(shape, dtype), matrices(shape[:-1] + (2,), dtype, seed=1)
    tol = TOL[dtype] * 50
    A, A_t = on_device(a), torch.tensor(a)
    for left in (True, False):
        rhs = b if left else np.swapaxes(b, -1, -2)
        assert_close(strata.linalg.solve(A, on_device(rhs), left=left),
                     torch.linalg.solve(A_t, torch.tensor(rhs), left=left), tol)
    vector = b[..., 0]
    assert_close(strata.linalg.solve(A, on_device(vector)),
                 torch.linalg.solve(A_t, torch.tensor(vector)), tol)
    LU, pivots = strata.linalg.lu_factor(A)
    LU_t, pivots_t = torch.linalg.lu_factor(A_t)
    for left in (True, False):
        rhs = b if left else np.swapaxes(b, -1, -2)
        for adjoint in (False, True):
            assert_close(strata.linalg.lu_solve(LU, pivots, on_device(rhs), left=left,
                                                adjoint=adjoint),
                         torch.linalg.lu_solve(LU_t, pivots_t, torch.tensor(rhs), left=left,
                                               adjoint=adjoint), tol)
    assert_close(strata.linalg.inv(A), torch.linalg.inv(A_t), tol)
    assert_close(strata.linalg.det(A), torch.linalg.det(A_t), tol)
    for got, want in zip(strata.linalg.slogdet(A), torch.linalg.slogdet(A_t)):
        assert_close(got, want, tol)
    assert_close(strata.logdet(A), torch.logdet(A_t), tol)


@pytest.mark.parametrize("columns", [1, 3, 9])
def test_lu_solve_of_few_and_many_columns(columns):
    """Fewer columns than rows: the work-group shares each substitution step; as many or
    more: a work-item solves whole columns."""
    a, b = matrices((2, 3, 3), np.float64), matrices((2, 3, columns), np.float64, seed=1)
    LU, pivots = strata.linalg.lu_factor(on_device(a))
    LU_t, pivots_t = torch.linalg.lu_factor(torch.tensor(a))
    for left, adjoint in ((True, False), (True, True), (False, False), (False, True)):
        rhs = b if left else np.swapaxes(b, -1, -2)
        assert_close(strata.linalg.lu_solve(LU, pivots, on_device(rhs), left=left,
                                            adjoint=adjoint),
                     torch.linalg.lu_solve(LU_t, pivots_t, torch.tensor(rhs), left=left,
                                           adjoint=adjoint), 1e-10)


def test_solve_broadcasts_a_single_matrix_over_a_batch_of_right_hand_sides():
    a, b = matrices((4, 4), np.float64), matrices((3, 2, 4, 5), np.float64, seed=1)
    assert_close(strata.linalg.solve(on_device(a), on_device(b)),
                 torch.linalg.solve(torch.tensor(a), torch.tensor(b)), 1e-10)
    a2 = matrices((3, 1, 4, 4), np.float64, seed=2)
    assert_close(strata.linalg.solve(on_device(a2), on_device(b)),
                 torch.linalg.solve(torch.tensor(a2), torch.tensor(b)), 1e-10)


def test_det_of_singular_and_empty_matrices():
    for a in (np.zeros((2, 3, 3)), np.ones((4, 4)), np.zeros((2, 0, 0))):
        assert_close(strata.linalg.det(on_device(a)), torch.linalg.det(torch.tensor(a)), 0)
        got, want = strata.linalg.slogdet(on_device(a)), torch.linalg.slogdet(torch.tensor(a))
        for g, w in zip(got, want):
            assert_close(g, w, 0)


def _same_error(fn, a, *rest):
    """fn raises on opencl what it raises on torch's CPU, and leaves its input untouched."""
    A = on_device(a)
    with pytest.raises(Exception) as got:
        fn(strata, A, *(on_device(r) for r in rest))
    with pytest.raises(Exception) as want:
        fn(torch, torch.tensor(a), *(torch.tensor(r) for r in rest))
    assert isinstance(got.value, strata.linalg.LinAlgError) == \
        isinstance(want.value, torch.linalg.LinAlgError)
    assert str(got.value) == str(want.value)
    np.testing.assert_array_equal(A.cpu().numpy(), a)


def test_singular_and_not_positive_definite_inputs_raise_torchs_errors():
    singular = np.stack([np.eye(3), [[1.0, 2, 3], [2, 4, 6], [0, 0, 1]]])
    _same_error(lambda m, A: m.linalg.inv(A), singular)
    _same_error(lambda m, A: m.linalg.inv(A), singular[1])
    _same_error(lambda m, A, B: m.linalg.solve(A, B), singular, np.ones((2, 3, 1)))
    _same_error(lambda m, A, B: m.linalg.solve(A, B), singular[1], np.ones((2, 3)))
    indefinite = np.stack([np.eye(3), np.diag([1.0, -1.0, 1.0])])
    _same_error(lambda m, A: m.linalg.cholesky(A), indefinite)
    _same_error(lambda m, A: m.linalg.cholesky(A), np.diag([1.0, 1.0, float("nan")]))
    _same_error(lambda m, A: m.linalg.inv(A), np.ones((2, 3)))


def test_a_right_hand_side_on_the_cpu_is_refused():
    """The dispatcher's device check, before any kernel (no silent upload)."""
    A = on_device(np.eye(3))
    LU, pivots = strata.linalg.lu_factor(A)
    B = strata.ones(3, 1, dtype=strata.float64)
    for fn in (lambda: strata.linalg.solve(A, B), lambda: strata.linalg.lu_solve(LU, pivots, B)):
        with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
            fn()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SQUARE)
def test_cholesky_and_triangular_solves_match_torch(shape, dtype):
    a = spd(matrices(shape, dtype))
    b = matrices(shape[:-1] + (3,), dtype, seed=1)
    tol = TOL[dtype] * 50
    for upper in (False, True):
        assert_close(strata.linalg.cholesky(on_device(a), upper=upper),
                     torch.linalg.cholesky(torch.tensor(a), upper=upper), tol)
    t = np.triu(matrices(shape, dtype, seed=2)) + 4 * np.eye(shape[-1], dtype=dtype)
    for upper, unit in ((True, False), (True, True)):
        assert_close(strata.linalg.solve_triangular(on_device(t), on_device(b), upper=upper,
                                                    unitriangular=unit),
                     torch.linalg.solve_triangular(torch.tensor(t), torch.tensor(b),
                                                   upper=upper, unitriangular=unit), tol)
    lower = np.swapaxes(t, -1, -2)
    assert_close(strata.linalg.solve_triangular(on_device(lower), on_device(np.swapaxes(b, -1, -2)),
                                                upper=False, left=False),
                 torch.linalg.solve_triangular(torch.tensor(lower),
                                               torch.tensor(np.swapaxes(b, -1, -2)),
                                               upper=False, left=False), tol)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SQUARE + RECTANGULAR + [(0, 3), (2, 3, 0)])
def test_qr_and_geqrf_have_lapacks_signs(shape, dtype):
    a = matrices(shape, dtype)
    tol = TOL[dtype] * 10
    for mode in ("reduced", "complete", "r"):
        got, want = strata.linalg.qr(on_device(a), mode=mode), torch.linalg.qr(torch.tensor(a),
                                                                                mode=mode)
        for g, w in zip(got, want):
            assert tuple(g.shape) == tuple(w.shape)
            assert_close(g, w, tol)
    for g, w in zip(strata.geqrf(on_device(a)), torch.geqrf(torch.tensor(a))):
        assert_close(g, w, tol)


def test_qr_of_a_column_already_reduced_reflects_nothing():
    a = np.array([[2.0, 1.0], [0.0, 3.0], [0.0, 4.0]])
    for g, w in zip(strata.geqrf(on_device(a)), torch.geqrf(torch.tensor(a))):
        assert_close(g, w, 1e-12)
    for g, w in zip(strata.linalg.qr(on_device(-a)), torch.linalg.qr(torch.tensor(-a))):
        assert_close(g, w, 1e-12)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SQUARE + [(2, 0, 0)])
@pytest.mark.parametrize("uplo", ["L", "U"])
def test_eigh_matches_torch_up_to_the_vectors_signs(shape, dtype, uplo):
    """As torch's own tests compare eigenvectors: by reconstruction and up to sign."""
    a = matrices(shape, dtype)
    tol = TOL[dtype] * 10 * max(1, shape[-1])
    w, v = strata.linalg.eigh(on_device(a), UPLO=uplo)
    w_t, v_t = torch.linalg.eigh(torch.tensor(a), UPLO=uplo)
    assert_close(w, w_t, tol)
    w, v, v_t = w.cpu().numpy(), v.cpu().numpy(), v_t.numpy()
    triangle = np.tril(a) if uplo == "L" else np.triu(a)
    symmetric = triangle + np.swapaxes(triangle, -1, -2) - triangle * np.eye(shape[-1])
    np.testing.assert_allclose(v @ (w[..., None] * np.swapaxes(v, -1, -2)), symmetric,
                               atol=tol)
    np.testing.assert_allclose(np.swapaxes(v, -1, -2) @ v,
                               np.broadcast_to(np.eye(shape[-1]), v.shape), atol=tol)
    sign = np.sign((v * v_t).sum(-2, keepdims=True))
    np.testing.assert_allclose(v * sign, v_t, atol=tol * 10)


def test_eigh_of_repeated_and_zero_eigenvalues():
    for a in (np.eye(4), np.zeros((3, 3)), np.diag([3.0, 1.0, 2.0, 1.0]),
              np.ones((5, 5))):
        w, v = strata.linalg.eigh(on_device(a))
        w_t, _ = torch.linalg.eigh(torch.tensor(a))
        assert_close(w, w_t, 1e-12)
        v = v.cpu().numpy()
        np.testing.assert_allclose(v @ np.diag(w.cpu().numpy()) @ v.T, a, atol=1e-12)


@pytest.fixture
def global_memory_only(monkeypatch):
    """Kernels work on the matrices in global memory, as for matrices too big for local."""
    for module in (opencl_linalg, opencl_orthogonal):
        monkeypatch.setattr(module, "local_capacity", lambda *args: 0)


def test_kernels_agree_without_local_memory(global_memory_only):
    a = matrices((2, 6, 6), np.float64)
    A, A_t = on_device(a), torch.tensor(a)
    LU, pivots, _ = strata.linalg.lu_factor_ex(A)
    LU_t, pivots_t, _ = torch.linalg.lu_factor_ex(A_t)
    np.testing.assert_array_equal(pivots.cpu().numpy(), pivots_t.numpy())
    assert_close(LU, LU_t, 1e-12)
    assert_close(strata.linalg.cholesky(on_device(spd(a))),
                 torch.linalg.cholesky(torch.tensor(spd(a))), 1e-12)
    for g, w in zip(strata.linalg.qr(A, mode="complete"), torch.linalg.qr(A_t, mode="complete")):
        assert_close(g, w, 1e-12)
    assert_close(strata.linalg.eigh(A)[0], torch.linalg.eigh(A_t)[0], 1e-12)
    tall = matrices((2, 7, 4), np.float64, seed=3)
    assert_close(strata.linalg.svdvals(on_device(tall)), torch.linalg.svdvals(torch.tensor(tall)),
                 1e-12)


GRADIENT_CASES = {
    "solve": lambda m, A, B: m.linalg.solve(A, B),
    "inv": lambda m, A, B: m.linalg.inv(A),
    "det": lambda m, A, B: m.linalg.det(A),
    "slogdet": lambda m, A, B: m.linalg.slogdet(A)[1],
    "cholesky": lambda m, A, B: m.linalg.cholesky(A @ A.mT + m.eye(4, dtype=A.dtype,
                                                                   device=A.device)),
    "qr": lambda m, A, B: m.linalg.qr(A)[0] + 2 * m.linalg.qr(A)[1],
    "eigh values": lambda m, A, B: m.linalg.eigh(A + A.mT)[0],
    "eigh vectors": lambda m, A, B: (m.linalg.eigh(A + A.mT)[1] ** 2).sum(-2),
    "lu": lambda m, A, B: sum((i + 1) * x.sum(-1) for i, x in enumerate(m.linalg.lu(A))),
    "lu_solve": lambda m, A, B: m.linalg.lu_solve(*m.linalg.lu_factor(A), B, adjoint=True),
    "solve_triangular": lambda m, A, B: m.linalg.solve_triangular(A, B, upper=True),
    "svd": lambda m, A, B: m.linalg.svd(A)[1] + (m.linalg.svd(A)[0] ** 2).sum(-1),
    "svdvals": lambda m, A, B: m.linalg.svdvals(B),
    "pinv": lambda m, A, B: m.linalg.pinv(B),
}


@pytest.mark.parametrize("name", GRADIENT_CASES)
def test_gradients_match_torch(name):
    fn = GRADIENT_CASES[name]
    a, b = matrices((2, 4, 4), np.float64), matrices((2, 4, 3), np.float64, seed=1)
    ours = [on_device(x).requires_grad_() for x in (a, b)]
    theirs = [torch.tensor(x, requires_grad=True) for x in (a, b)]
    got, want = fn(strata, *ours), fn(torch, *theirs)
    assert_close(got.detach(), want.detach(), 1e-10)
    g = matrices(tuple(want.shape), np.float64, seed=2)
    got.backward(on_device(g))
    want.backward(torch.tensor(g))
    for s, t in zip(ours, theirs):
        if t.grad is not None:
            assert_close(s.grad, t.grad, 1e-9)


def _orthonormal_columns(x, tol):
    k = x.shape[-1]
    np.testing.assert_allclose(np.swapaxes(x, -1, -2) @ x,
                               np.broadcast_to(np.eye(k), x.shape[:-2] + (k, k)), atol=tol)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SQUARE + RECTANGULAR + [(0, 3), (2, 0, 0), (6, 2)])
@pytest.mark.parametrize("full_matrices", [True, False])
def test_svd_matches_torch_up_to_the_vectors_signs(shape, dtype, full_matrices):
    a = matrices(shape, dtype)
    tol = TOL[dtype] * 10 * max(1, shape[-1])
    U, S, Vh = strata.linalg.svd(on_device(a), full_matrices=full_matrices)
    U_t, S_t, Vh_t = torch.linalg.svd(torch.tensor(a), full_matrices=full_matrices)
    assert (U.shape, Vh.shape) == (U_t.shape, Vh_t.shape)
    assert_close(S, S_t, tol)
    assert_close(strata.linalg.svdvals(on_device(a)), S_t, tol)
    u, s, vh = U.cpu().numpy(), S.cpu().numpy(), Vh.cpu().numpy()
    k = s.shape[-1]
    np.testing.assert_allclose((u[..., :k] * s[..., None, :]) @ vh[..., :k, :], a, atol=tol)
    _orthonormal_columns(u, tol)
    _orthonormal_columns(np.swapaxes(vh, -1, -2), tol)
    sign = np.sign((u[..., :k] * U_t.numpy()[..., :k]).sum(-2, keepdims=True))
    np.testing.assert_allclose(u[..., :k] * sign, U_t.numpy()[..., :k], atol=tol * 10)


def test_svd_of_rank_deficient_matrices_completes_the_vectors():
    for a in (np.zeros((4, 3)), np.ones((3, 5)), np.outer(np.arange(1.0, 5), [1.0, -2.0])):
        U, S, Vh = strata.linalg.svd(on_device(a))
        assert_close(S, torch.linalg.svdvals(torch.tensor(a)), 1e-12)
        u, s, vh = U.cpu().numpy(), S.cpu().numpy(), Vh.cpu().numpy()
        _orthonormal_columns(u, 1e-12)
        _orthonormal_columns(vh.T, 1e-12)
        k = len(s)
        np.testing.assert_allclose((u[:, :k] * s) @ vh[:k], a, atol=1e-12)


@pytest.mark.parametrize("hermitian", [False, True])
def test_pinv_matrix_rank_and_norms_match_torch(hermitian):
    a = matrices((2, 5, 3), np.float64)
    if hermitian:
        a = a[..., :3, :] + np.swapaxes(a[..., :3, :], -1, -2)
    for fn in (lambda m, A: m.linalg.pinv(A, hermitian=hermitian),
               lambda m, A: m.linalg.matrix_rank(A, hermitian=hermitian),
               lambda m, A: m.linalg.matrix_norm(A, 2), lambda m, A: m.linalg.matrix_norm(A, -2),
               lambda m, A: m.linalg.matrix_norm(A, "nuc")):
        assert_close(fn(strata, on_device(a)), fn(torch, torch.tensor(a)), 1e-10)


@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_solve_matches_torch_on_both_devices(upper):
    a = spd(matrices((2, 1, 4, 4), np.float64))
    factor = np.linalg.cholesky(a)
    factor = np.swapaxes(factor, -1, -2) if upper else factor
    b = matrices((3, 4, 2), np.float64, seed=1)
    want = torch.cholesky_solve(torch.tensor(b), torch.tensor(factor), upper)
    for device in ("cpu", "opencl"):
        B = strata.tensor(b).to(device).requires_grad_()
        F = strata.tensor(factor).to(device).requires_grad_()
        got = strata.cholesky_solve(B, F, upper)
        np.testing.assert_allclose(got.detach().cpu().numpy(), want.numpy(), atol=1e-10)
        B_t, F_t = torch.tensor(b, requires_grad=True), torch.tensor(factor, requires_grad=True)
        g = matrices(tuple(want.shape), np.float64, seed=2)
        torch.cholesky_solve(B_t, F_t, upper).backward(torch.tensor(g))
        got.backward(strata.tensor(g).to(device))
        np.testing.assert_allclose(B.grad.cpu().numpy(), B_t.grad.numpy(), atol=1e-10)
        # the factor's other triangle is never read: ATen's formula still gives it a gradient
        triangle = np.triu if upper else np.tril
        np.testing.assert_allclose(triangle(F.grad.cpu().numpy()), triangle(F_t.grad.numpy()),
                                   atol=1e-10)


@pytest.mark.parametrize("args", [((3,), (3, 3)), ((3, 2), (3,)), ((3, 2), (3, 4)),
                                  ((4, 2), (3, 3)), ((2, 3, 2), (3, 3, 3))])
def test_cholesky_solve_errors_match_torch(args):
    b_shape, u_shape = args
    with pytest.raises(RuntimeError) as want:
        torch.cholesky_solve(torch.ones(b_shape), torch.ones(u_shape))
    with pytest.raises(RuntimeError) as got:
        strata.cholesky_solve(strata.ones(b_shape).to("opencl"),
                              strata.ones(u_shape).to("opencl"))
    assert str(got.value) == str(want.value)
    with pytest.raises(RuntimeError, match="same dtype"):
        strata.cholesky_solve(strata.ones(3, 2), strata.eye(3, dtype=strata.float64))
    with pytest.raises(NotImplementedError, match="cholesky_solve_cpu"):
        strata.cholesky_solve(strata.ones(3, 2, dtype=strata.int64),
                              strata.eye(3, dtype=strata.int64))


def test_a_nan_stays_in_its_own_matrix():
    """As the CPU device: an SVD of a matrix holding NaN is all NaN, its batch-mates are
    unaffected; eigh keeps every diagonal value (NaN sorted last), no slot left unwritten."""
    a = np.stack([np.eye(3), np.diag([3.0, 1.0, 2.0])])
    a[0, 1, 1] = np.nan
    for got, want in zip(strata.linalg.svd(on_device(a)), strata.linalg.svd(strata.tensor(a))):
        np.testing.assert_array_equal(np.isnan(got.cpu().numpy()), np.isnan(want.numpy()))
    np.testing.assert_allclose(strata.linalg.svdvals(on_device(a)).cpu().numpy()[1], [3, 2, 1])
    w = strata.linalg.eigh(on_device(a))[0].cpu().numpy()
    np.testing.assert_array_equal(w, [[1.0, 1.0, np.nan], [1.0, 2.0, 3.0]])


def test_lu_pivots_with_nan_follow_the_cpu_devices_idamax():
    """A NaN is a pivot only where it comes first in its column (reference BLAS idamax)."""
    rng = np.random.default_rng(0)
    a = rng.standard_normal((6, 5, 5))
    a[rng.random(a.shape) < 0.2] = np.nan
    cpu = strata.linalg.lu_factor_ex(strata.tensor(a))
    device = strata.linalg.lu_factor_ex(on_device(a))
    np.testing.assert_array_equal(device.pivots.cpu().numpy(), cpu.pivots.numpy())
    np.testing.assert_allclose(device.LU.cpu().numpy(), cpu.LU.numpy(), atol=1e-12,
                               equal_nan=True)
