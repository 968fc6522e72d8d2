"""The LU primitives (``linalg_lu_factor_ex``, ``linalg_lu``, ``lu_unpack``) against PyTorch:
the blocked kernel's factors, LAPACK pivots and ``info`` over shapes that cross its panel
boundary, PyTorch's backward formulas (values and float64 gradcheck), meta shapes, errors.
The error wording and the small fixed cases are in test_surface_audit.py."""

import numpy as np
import pytest
import torch
from helpers import assert_same, check, check_meta
from hypothesis import given
from hypothesis import strategies as st

import strata

_TOL = {np.float32: {"atol": 2e-4, "rtol": 2e-4}, np.float64: {"atol": 1e-9, "rtol": 1e-9}}


def _random(shape, seed, dtype=np.float64):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def _weighted_sum(m, *outs):
    """A loss that weighs every entry differently, so that each one's gradient is checked."""
    total = 0
    for k, x in enumerate(outs):
        total = total + (x * m.arange(x.numel(), dtype=x.dtype).reshape(x.shape).cos() *
                         (k + 1)).sum()
    return total


@given(batch=st.sampled_from([(), (3,), (2, 2)]), m=st.integers(0, 40), n=st.integers(0, 40),
       dtype=st.sampled_from([np.float32, np.float64]), seed=st.integers(0, 2**16))
def test_factors_pivots_and_info_match_torch(batch, m, n, dtype, seed):
    a = _random(batch + (m, n), seed, dtype)
    check(lambda lib, x: tuple(lib.linalg.lu_factor_ex(x)), a, **_TOL[dtype])
    check(lambda lib, x: tuple(lib.linalg.lu(x)), a, **_TOL[dtype])


@pytest.mark.parametrize("shape", [(70, 70), (100, 37), (37, 100), (3, 45, 45)],
                         ids=lambda s: "x".join(map(str, s)))
def test_blocked_factorization_values_and_gradients(shape):
    """Past the 32-column panel: the blocked updates, and the gradient through them."""
    a = _random(shape, sum(shape)) + 4 * np.eye(*shape[-2:])
    outs = []
    for m in (strata, torch):
        A = m.tensor(a, requires_grad=True)
        factors, pivots, info = m.linalg.lu_factor_ex(A)
        _weighted_sum(m, factors).backward()
        outs.append((factors.detach(), pivots, info, A.grad))
    assert_same(outs[0], outs[1], atol=1e-8, rtol=1e-8)


@pytest.mark.parametrize("which", ["L", "U", "both"])
@pytest.mark.parametrize("shape", [(4, 4), (3, 5), (5, 3), (2, 4, 2)],
                         ids=lambda s: "x".join(map(str, s)))
def test_linalg_lu_and_lu_unpack_gradients_match_torch(shape, which):
    """``linalg_lu_backward`` with only L's, only U's or both gradients, and through
    ``lu_unpack``'s own formula."""
    a = _random(shape, 3)
    grads = []
    for m in (strata, torch):
        A = m.tensor(a, requires_grad=True)
        _, L, U = m.linalg.lu(A)
        _, L2, U2 = m.lu_unpack(*m.linalg.lu_factor(A))
        parts = {"L": (L, L2), "U": (U, U2), "both": (L, U, L2, U2)}[which]
        _weighted_sum(m, *parts).backward()
        grads.append(A.grad)
    assert_same(grads[0], grads[1], atol=1e-10, rtol=1e-9)


@pytest.mark.parametrize("shape", [(4, 4), (3, 5), (5, 3), (2, 3, 3)],
                         ids=lambda s: "x".join(map(str, s)))
def test_gradcheck_float64(shape):
    A = strata.tensor(_random(shape, 4), requires_grad=True)
    assert strata.autograd.gradcheck(lambda x: strata.linalg.lu_factor_ex(x)[0], (A,))
    assert strata.autograd.gradgradcheck(lambda x: strata.linalg.lu_factor_ex(x)[0], (A,))
    assert strata.autograd.gradcheck(lambda x: strata.linalg.lu(x)[1:], (A,))
    assert strata.autograd.gradgradcheck(lambda x: strata.linalg.lu(x)[1:], (A,))


def test_zero_pivots_give_lapack_info_and_leave_the_input_alone():
    """info is the first exactly-zero pivot per matrix; factorization goes on past it."""
    a = np.stack([np.ones((4, 4)), np.diag([1.0, 0.0, 2.0, 0.0]), np.eye(4),
                  np.triu(np.ones((4, 4)), 2)])
    A = strata.tensor(a)
    check(lambda lib, x: tuple(lib.linalg.lu_factor_ex(x)), a)
    np.testing.assert_array_equal(A.numpy(), a)
    with pytest.raises(RuntimeError, match=r"\(Batch element 0\): U\[2,2\] is zero"):
        strata.linalg.lu_factor_ex(A, check_errors=True)
    np.testing.assert_array_equal(A.numpy(), a)


def test_noncontiguous_input():
    a = _random((6, 6), 5)
    check(lambda lib, x: tuple(lib.linalg.lu_factor_ex(x.mT)), a)
    check(lambda lib, x: tuple(lib.linalg.lu(x[::2, 1:])), a)


@pytest.mark.parametrize("shape", [(4, 4), (2, 3, 5), (5, 3), (0, 2, 2)],
                         ids=lambda s: "x".join(map(str, s)))
def test_meta_shapes(shape):
    a = _random(shape, 6)
    check_meta(lambda m, x: tuple(m.linalg.lu_factor_ex(x)), a)
    check_meta(lambda m, x: tuple(m.linalg.lu(x)), a)
    factors, pivots = torch.linalg.lu_factor(torch.tensor(a))
    for data, pivot in ((True, True), (False, True), (True, False)):
        check_meta(lambda m, x, p, data=data, pivot=pivot: tuple(m.lu_unpack(x, p, data, pivot)),
                   factors.numpy(), pivots.numpy())


@pytest.mark.parametrize("shape", [(5, 5), (40, 33), (33, 40)], ids=lambda s: "x".join(map(str, s)))
def test_batched_and_single_matrix_paths_agree_bitwise(shape):
    """A single matrix takes the kernel's scalar-pivot loop, a batch the batched one: the same
    steps, so the same bits."""
    a = _random((3,) + shape, 8)
    a[1, :, 2] = 0   # a zero pivot in one member of the batch only
    batched = strata.linalg.lu_factor_ex(strata.tensor(a))
    for i in range(3):
        single = strata.linalg.lu_factor_ex(strata.tensor(a[i]))
        for s, b in zip(single, batched):
            np.testing.assert_array_equal(s.numpy(), b[i].numpy())


@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("adjoint", [True, False])
@pytest.mark.parametrize("shapes", [((4, 4), (4, 2)), ((2, 3, 3), (3, 5)), ((3, 3), (2, 3, 3))],
                         ids=["plain", "batched-LU", "batched-B"])
def test_lu_solve_values_and_gradients_of_the_factors(shapes, left, adjoint):
    """``linalg_lu_solve``'s own rows: ``linalg_lu_solve_LU`` for the packed factors (a leaf
    here, so every entry's gradient shows), the adjoint solve for B; batches broadcast."""
    lu_shape, b_shape = shapes
    a = _random(lu_shape, 9) + 3 * np.eye(lu_shape[-1])
    b = _random(b_shape, 10)
    b = b if left else np.swapaxes(b, -1, -2).copy()
    factors, pivots = (x.numpy() for x in torch.linalg.lu_factor(torch.tensor(a)))
    outs = []
    for m in (strata, torch):
        LU, B = m.tensor(factors, requires_grad=True), m.tensor(b, requires_grad=True)
        X = m.linalg.lu_solve(LU, m.tensor(pivots), B, left=left, adjoint=adjoint)
        _weighted_sum(m, X).backward()
        outs.append((X.detach(), LU.grad, B.grad))
    assert_same(outs[0], outs[1], atol=1e-10, rtol=1e-9)


@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("adjoint", [True, False])
def test_lu_solve_gradcheck_float64(left, adjoint):
    a = _random((2, 3, 3), 11) + 3 * np.eye(3)
    factors, pivots = strata.linalg.lu_factor(strata.tensor(a))
    LU = factors.detach().requires_grad_(True)
    B = strata.tensor(_random((3, 3), 12), requires_grad=True)

    def solve(LU, B):
        return strata.linalg.lu_solve(LU, pivots, B, left=left, adjoint=adjoint)
    assert strata.autograd.gradcheck(solve, (LU, B))
    assert strata.autograd.gradgradcheck(solve, (LU, B))


def test_lu_solve_meta_shape():
    factors, pivots = (x.numpy() for x in torch.linalg.lu_factor(torch.tensor(_random((3, 3), 13))))
    check_meta(lambda m, f, p, b: m.linalg.lu_solve(f, p, b), factors, pivots,
               _random((2, 3, 4), 14))


def test_permutation_of_one_matrix_and_of_a_batch_agree():
    """``lu_unpack``'s P: one matrix's row order is built in Python, a batch's with NumPy."""
    a = _random((4, 6, 6), 15)
    factors, pivots = strata.linalg.lu_factor(strata.tensor(a))
    batched = strata.lu_unpack(factors, pivots).P
    for i in range(4):
        single = strata.lu_unpack(factors[i], pivots[i]).P
        np.testing.assert_array_equal(single.numpy(), batched[i].numpy())
    check(lambda m, f, p: m.lu_unpack(f, p).P, factors.numpy(), pivots.numpy())


@pytest.mark.parametrize("batched", [False, True])
def test_nan_and_inf_pivots_follow_blas_idamax(batched):
    """A NaN is never the largest entry unless it comes first in its column (reference BLAS's
    ``idamax``); inf is the largest."""
    cases = [[[np.nan, 2, 3], [4, 1, 0], [5, 1, 2]], [[1, 2, 3], [4, np.nan, 0], [5, 1, 2]],
             [[1, 2, 3], [np.nan, 1, 0], [5, 1, 2]], [[1, 2, 3], [np.inf, 1, 0], [5, 1, 2]]]
    for case in cases:
        a = np.array(case, dtype=np.float64)
        a = np.stack([a, np.eye(3)]) if batched else a
        check(lambda m, x: tuple(m.linalg.lu_factor_ex(x)), a)


@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("adjoint", [True, False])
def test_lu_solve_past_the_block_size(left, adjoint):
    """Above 32 rows the triangular solves go by blocks."""
    a = _random((2, 70, 70), 16) + 8 * np.eye(70)
    b = _random((2, 70, 3) if left else (2, 3, 70), 17)
    factors, pivots = (x.numpy() for x in torch.linalg.lu_factor(torch.tensor(a)))
    check(lambda m, f, p, x: m.linalg.lu_solve(f, p, x, left=left, adjoint=adjoint),
          factors, pivots, b, atol=1e-10, rtol=1e-9)
