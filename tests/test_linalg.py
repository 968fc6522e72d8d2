"""Linear algebra against PyTorch: error classes and wording, the meta device's agreement on
errors, ``strata.linalg``'s Python surface (named tuples, ``out=``, overloads), and hypothesis
property tests of ``matmul``'s rank/broadcast rules and ``einsum``."""

import numpy as np
import pytest
from helpers import check, check_error, check_meta
from hypothesis import given
from hypothesis import strategies as st

import strata

RNG = np.random.default_rng(3)


def f32(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def f64(*shape):
    return RNG.standard_normal(shape)


def i64(*shape):
    return RNG.integers(-3, 4, shape)


def same_error(fn, *inputs):
    """Both raise the same exception class with the same message (first line)."""
    s, t = check_error(fn, *inputs)
    assert str(s).splitlines()[0] == str(t).splitlines()[0], f"{s!r} != torch's {t!r}"
    return s


def meta_raises_too(fn, *inputs):
    """The meta device raises the error the CPU raises (validation lives in meta functions)."""
    with pytest.raises(Exception) as cpu:
        fn(strata, *(strata.tensor(x) for x in inputs))
    with pytest.raises(type(cpu.value)) as meta:
        fn(strata, *(strata.tensor(x).to("meta") for x in inputs))
    assert str(meta.value) == str(cpu.value)


PRODUCT_ERRORS = [
    (lambda m, a, b: m.mm(a, b), (f32(2, 3), f64(3, 4))),
    (lambda m, a, b: m.mm(a, b), (i64(2, 3), f32(3, 4))),
    (lambda m, a, b: m.mm(a, b), (f32(2, 3), f32(4, 5))),
    (lambda m, a, b: m.mm(a, b), (f32(3), f32(3, 4))),
    (lambda m, a, b: m.mm(a, b), (f32(2, 3), f32(3))),
    (lambda m, a, b: m.mm(a, b), (i64(2, 3) > 0, i64(3, 4) > 0)),
    (lambda m, a, b: m.bmm(a, b), (f32(2, 3), f32(2, 3, 4))),
    (lambda m, a, b: m.bmm(a, b), (f32(2, 2, 3), f32(3, 4))),
    (lambda m, a, b: m.bmm(a, b), (f32(10, 3, 4), f32(10, 5, 6))),
    (lambda m, a, b: m.bmm(a, b), (f32(10, 3, 4), f32(9, 4, 6))),
    (lambda m, a, b: m.bmm(a, b), (f32(10, 3, 4), f64(10, 4, 6))),
    (lambda m, a, b: m.bmm(a, b), (i64(2, 2, 3) > 0, i64(2, 3, 5) > 0)),
    (lambda m, s, a, b: m.addmm(s, a, b), (f32(2, 4), f32(2, 3), f32(4, 5))),
    (lambda m, s, a, b: m.addmm(s, a, b), (f32(3, 5), f32(2, 3), f32(3, 5))),
    (lambda m, s, a, b: m.addmm(s, a, b), (f64(5), f32(2, 3), f32(3, 5))),
    (lambda m, s, a, b: m.addmm(s, a, b), (f32(5), f64(2, 3), f32(3, 5))),
    (lambda m, s, a, b: m.addmm(s, a, b), (f32(5), f32(3), f32(3, 5))),
    (lambda m, a, b: m.matmul(a, b), (np.ones((), np.float32), f32(2, 3))),
    (lambda m, a, b: a @ b, (f32(2, 3), np.ones((), np.float32))),
    (lambda m, a, b: m.matmul(a, b), (f32(3), f32(4))),
    (lambda m, a, b: m.matmul(a, b), (f32(2, 3), f32(4))),
    (lambda m, a, b: m.matmul(a, b), (f32(3), f32(4, 5))),
    (lambda m, a, b: m.matmul(a, b), (f32(2, 2, 3), f32(2, 4, 5))),
    (lambda m, a, b: m.matmul(a, b), (f32(3, 2, 2, 3), f32(2, 4, 5))),
    (lambda m, a, b: m.matmul(a, b), (f32(2, 2, 3), f32(4, 5))),
    (lambda m, a, b: m.matmul(a, b), (f32(2, 3), f64(3, 5))),
    (lambda m, a, b: m.matmul(a, b), (f32(3), f64(3))),
    (lambda m, a, b: m.matmul(a, b), (f32(2, 2, 3), f64(2, 3, 5))),
    (lambda m, a, v: m.mv(a, v), (f32(2, 3), f32(4))),
    (lambda m, a, v: m.mv(a, v), (f32(3), f32(3))),
    (lambda m, a, v: m.mv(a, v), (f32(2, 3), f32(3, 1))),
    (lambda m, a, v: m.mv(a, v), (f32(2, 3), f64(3))),
    (lambda m, a, v: m.mv(a, v), (f64(2, 3), f32(3))),
    (lambda m, s, a, v: m.addmv(s, a, v), (f32(3), f32(2, 3), f32(3))),
    (lambda m, s, a, v: m.addmv(s, a, v), (f32(2, 1), f32(2, 3), f32(3))),
    (lambda m, s, a, v: m.addmv(s, a, v), (f64(2), f32(2, 3), f32(3))),
    (lambda m, a, b: m.dot(a, b), (f32(3), f32(4))),
    (lambda m, a, b: m.dot(a, b), (f32(3, 1), f32(3))),
    (lambda m, a, b: m.dot(a, b), (f32(3), f64(4))),
    (lambda m, a, b: m.dot(a, b), (i64(3) > 0, i64(3) > 0)),
    (lambda m, a, b: m.vdot(a, b), (f32(3), f32(4))),
    (lambda m, a, b: m.outer(a, b), (f32(3, 1), f32(4))),
    (lambda m, a, b: m.outer(a, b), (f32(3), f32(4, 1))),
    (lambda m, s, a, b: m.baddbmm(s, a, b), (f32(3, 3), f32(2, 3, 5), f32(2, 5, 4))),
    (lambda m, s, a, b: m.baddbmm(s, a, b), (f64(3, 4), f32(2, 3, 5), f32(2, 5, 4))),
    (lambda m, s, a, b: m.baddbmm(s, a, b), (f32(3, 4), f32(2, 3, 5), f32(2, 4, 4))),
    (lambda m, s, a, b: m.addbmm(s, a, b), (f32(3, 4), f32(2, 3, 5), f32(3, 5, 4))),
    (lambda m, s, a, b: m.addbmm(s, a, b), (f32(3, 4), f32(2, 3, 5), f32(2, 4, 4))),
    (lambda m, s, a, b: m.addbmm(s, a, b), (f64(3, 4), f32(2, 3, 5), f32(2, 5, 4))),
    (lambda m, s, a, b: m.addbmm(s, a, b), (f32(3, 3), f32(2, 3, 5), f32(2, 5, 4))),
    (lambda m, a: m.trace(a), (f32(3),)),
    (lambda m, a: m.trace(a), (i64(3, 3) > 0,)),
    (lambda m, a, b: m.linalg.cross(a, b), (f32(4, 4), f32(4, 4))),
    (lambda m, a, b: m.linalg.cross(a, b), (f32(4, 3), f32(2, 3))),
    (lambda m, a, b: m.linalg.cross(a, b), (f32(2, 3), f64(2, 3))),
    (lambda m, a, b: m.linalg.cross(a, b), (f32(2, 3), f32(3))),
    (lambda m, a, b: m.linalg.cross(a, b), (i64(2, 3) > 0, i64(2, 3) > 0)),
    (lambda m, a, b: m.linalg.cross(a, b, dim=2), (f32(2, 3), f32(2, 3))),
    (lambda m, a, b: m.cross(a, b, dim=1), (f32(4, 4), f32(4, 4))),
]


@pytest.mark.parametrize("fn,inputs", PRODUCT_ERRORS)
def test_product_errors(fn, inputs):
    same_error(fn, *inputs)


def test_addmm_bias_with_more_dims():
    check_error(lambda m, s, a, b: m.addmm(s, a, b), f32(1, 2, 5), f32(2, 3), f32(3, 5),
                match=r"the number of sizes provided \(2\) must be greater or equal")


def test_cross_without_dim_warns_and_finds_the_size_3_dim():
    with pytest.warns(UserWarning, match="without specifying the dim"):
        check(lambda m, a, b: m.cross(a, b), f32(3, 4), f32(3, 4))
    with pytest.warns(UserWarning):
        same_error(lambda m, a, b: m.cross(a, b), f32(2, 2), f32(2, 2))


EINSUM_ERRORS = [
    ("ij,jk->ik", (f32(2, 3), f32(4, 5))),
    ("ij,jk->ik", (f32(2, 3),)),
    ("i,i", (f32(2), f32(2), f32(3))),
    ("ij,jk->ik", (f32(2, 3), f64(3, 5))),
    ("i,i->", (i64(2) > 0, i64(2) > 0)),
    ("i,i->j", (f32(2), f32(2))),
    ("ij,i->", (f32(2), f32(2))),
    ("i1,i", (f32(2, 2), f32(2))),
    ("ii->i", (f32(2, 3),)),
    ("ij...,i->", (f32(1), f32(3))),
    ("ij->ii", (f32(2, 2),)),
    ("...i...->i", (f32(2, 2),)),
    ("i->i->i", (f32(2),)),
    ("...i,...i->...", (f32(2, 3), f32(4, 3))),
]


@pytest.mark.parametrize("equation,inputs", EINSUM_ERRORS)
def test_einsum_errors(equation, inputs):
    same_error(lambda m, *xs: m.einsum(equation, *xs), *inputs)


def test_einsum_needs_operands():
    same_error(lambda m: m.einsum("i"))
    same_error(lambda m: m.einsum("i", []))


def test_einsum_output_ellipsis_sums_unlisted_dims():
    check(lambda m, a: m.einsum("...ij->ij", a), f32(2, 3, 4))
    check(lambda m, a: m.einsum("ij->...", a), f32(2, 3))


@pytest.mark.parametrize("dims", [([1], [0, 1]), -1, 3])
def test_tensordot_errors(dims):
    same_error(lambda m, a, b: m.tensordot(a, b, dims=dims), f32(2, 3), f32(3, 5))


def test_tensordot_dtype_and_size_errors():
    same_error(lambda m, a, b: m.tensordot(a, b, dims=1), f32(2, 3), f64(3, 5))
    same_error(lambda m, a, b: m.tensordot(a, b, dims=1), f32(2, 3), f32(4, 5))


def test_tensordot_broadcasts_size_one_contractions():
    check(lambda m, a, b: m.tensordot(a, b, dims=([1], [0])), f32(2, 1), f32(3, 4))


FACTOR_ERRORS = [
    (lambda m, a: m.linalg.inv(a), (f32(2, 3),)),
    (lambda m, a: m.linalg.inv(a), (f32(3),)),
    (lambda m, a: m.linalg.inv(a), (i64(3, 3),)),
    (lambda m, a: m.linalg.inv(a.half()), (f32(3, 3),)),
    (lambda m, a: m.linalg.inv(a), (np.zeros((3, 3), np.float32),)),
    (lambda m, a: m.linalg.inv(a), (np.zeros((2, 3, 3)),)),
    (lambda m, a: m.linalg.inv(a), (np.array([[1.0, 2.0], [2.0, 4.0]]),)),
    (lambda m, a: m.linalg.det(a), (f32(2, 3),)),
    (lambda m, a: m.linalg.det(a), (i64(3, 3),)),
    (lambda m, a: m.linalg.det(a.half()), (f32(3, 3),)),
    (lambda m, a, b: m.linalg.solve(a, b), (f32(3, 3), f32(4))),
    (lambda m, a, b: m.linalg.solve(a, b), (np.zeros((3, 3), np.float32), f32(3))),
    (lambda m, a, b: m.linalg.solve(a, b), (np.zeros((2, 3, 3)), f64(3))),
    (lambda m, a, b: m.linalg.solve(a, b), (f32(3, 3), f64(3))),
    (lambda m, a, b: m.linalg.solve(a, b), (f32(3), f32(3))),
    (lambda m, a, b: m.linalg.solve(a, b), (f32(2, 3), f32(2))),
    (lambda m, a, b: m.linalg.solve(a, b), (f32(2, 3, 3), f32(4, 3))),
    (lambda m, a, b: m.linalg.solve(a, b), (i64(3, 3), i64(3))),
    (lambda m, a: m.linalg.cholesky(a), (-np.eye(3, dtype=np.float32),)),
    (lambda m, a: m.linalg.cholesky(a), (np.diag([1.0, 1.0, -1.0]),)),
    (lambda m, a: m.linalg.cholesky(a), (-np.stack([np.eye(3), np.eye(3)]),)),
    (lambda m, a: m.linalg.cholesky(a), (f32(2, 3),)),
    (lambda m, a: m.linalg.cholesky(a), (i64(3, 3),)),
    (lambda m, a: m.linalg.qr(a), (i64(3, 3),)),
    (lambda m, a: m.linalg.qr(a, mode="foo"), (f32(3, 3),)),
    (lambda m, a: m.linalg.qr(a), (f32(3),)),
    (lambda m, a: m.linalg.svd(a), (i64(3, 3),)),
    (lambda m, a: m.linalg.svd(a.half()), (f32(3, 3),)),
    (lambda m, a: m.linalg.svd(a, driver="gesvd"), (f32(3, 3),)),
    (lambda m, a: m.linalg.svdvals(a), (f32(3),)),
    (lambda m, a: m.linalg.eigh(a), (f32(2, 3),)),
    (lambda m, a: m.linalg.eigh(a, UPLO="X"), (f32(3, 3),)),
    (lambda m, a: m.linalg.pinv(a), (i64(3, 3),)),
    (lambda m, a: m.linalg.pinv(a), (f32(3),)),
    (lambda m, a: m.linalg.matrix_power(a, 2), (f32(2, 3),)),
    (lambda m, a: m.linalg.matrix_power(a, 2), (f32(3),)),
    (lambda m, a: m.linalg.matrix_power(a, -1), (i64(3, 3),)),
    (lambda m, a: m.linalg.matrix_norm(a), (f32(3),)),
    (lambda m, a: m.linalg.matrix_norm(a, ord=3), (f32(3, 3),)),
    (lambda m, a: m.linalg.matrix_norm(a, ord="foo"), (f32(3, 3),)),
    (lambda m, a: m.linalg.matrix_norm(a), (i64(3, 3),)),
    (lambda m, a: m.linalg.matrix_norm(a, dim=(0, 0)), (f32(3, 3),)),
    (lambda m, a: m.linalg.matrix_norm(a, dim=(0,)), (f32(3, 3),)),
    (lambda m, a: m.linalg.matrix_norm(a, dtype=m.long), (f32(3, 3),)),
    (lambda m, a: m.linalg.matrix_norm(a, dtype=m.float), (f64(3, 3),)),
    (lambda m, a: m.linalg.matrix_norm(a.half(), ord=2), (f32(3, 3),)),
    (lambda m, a, b: m.cdist(a, b), (f32(3, 4), f32(3, 5))),
    (lambda m, a, b: m.cdist(a, b), (f32(4), f32(3, 4))),
    (lambda m, a, b: m.cdist(a, b, p=-1), (f32(3, 4), f32(3, 4))),
    (lambda m, a, b: m.cdist(a, b), (i64(3, 4), i64(3, 4))),
]


@pytest.mark.parametrize("fn,inputs", FACTOR_ERRORS)
def test_factorization_errors(fn, inputs):
    same_error(fn, *inputs)


def test_numerical_failures_are_linalg_errors():
    assert issubclass(strata.linalg.LinAlgError, RuntimeError)
    with pytest.raises(strata.linalg.LinAlgError, match="singular"):
        strata.linalg.inv(strata.zeros(2, 2))
    with pytest.raises(RuntimeError, match="positive-definite"):
        strata.linalg.cholesky(-strata.eye(2))


@pytest.mark.parametrize("fn,inputs", [
    (lambda m, a, b: m.mm(a, b), (f32(2, 3), f32(4, 5))),
    (lambda m, a, b: m.bmm(a, b), (f32(10, 3, 4), f32(9, 4, 6))),
    (lambda m, a, b: a @ b, (f32(2, 2, 3), f32(2, 4, 5))),
    (lambda m, a: m.linalg.inv(a), (f32(2, 3),)),
    (lambda m, a, b: m.einsum("ij,jk", a, b), (f32(2, 3), f32(4, 5))),
    (lambda m, a: m.linalg.svd(a), (i64(3, 3),)),
])
def test_meta_device_raises_the_same_errors(fn, inputs):
    meta_raises_too(fn, *inputs)


# --- the Python surface -----------------------------------------------------------------------

def test_named_tuples():
    a = strata.tensor(f64(4, 3))
    u, s, vh = strata.linalg.svd(a, full_matrices=False)
    r = strata.linalg.svd(a)
    assert type(r).__name__ == "linalg_svd" and r._fields == ("U", "S", "Vh")
    assert strata.linalg.qr(a)._fields == ("Q", "R")
    assert strata.linalg.eigh(strata.eye(3))._fields == ("eigenvalues", "eigenvectors")
    np.testing.assert_allclose((u * s.unsqueeze(-2) @ vh).numpy(), a.numpy(), atol=1e-12)


def test_out_arguments():
    a = strata.tensor(f64(3, 3) + 3 * np.eye(3))
    out = strata.empty(3, 3, dtype=strata.float64)
    res = strata.linalg.inv(a, out=out)
    assert res is out and tuple(out.shape) == (3, 3)
    np.testing.assert_allclose(out.numpy(), np.linalg.inv(a.numpy()))
    q, r = strata.empty(3, 3, dtype=strata.float64), strata.empty(3, 3, dtype=strata.float64)
    strata.linalg.qr(a, out=(q, r))
    np.testing.assert_allclose((q @ r).numpy(), a.numpy(), atol=1e-12)
    x = strata.empty(2, 1)
    strata.mm(strata.ones(2, 3), strata.ones(3, 1), out=x)
    assert tuple(x.shape) == (2, 1) and x.tolist() == [[3.0], [3.0]]


def test_tensor_methods_and_aliases():
    check(lambda m, a: (a.det(), a.inverse(), a.matrix_power(2), a.pinverse()),
          f64(3, 3) + 3 * np.eye(3))
    check(lambda m, a, b: (m.linalg.matmul(a, b), b.__rmatmul__(a)), f32(2, 3), f32(3, 2))


@pytest.mark.parametrize("ord,dim", [(None, None), (2, None), (1, 0), ("fro", None),
                                     ("nuc", (0, 1)), (float("inf"), (1, 0)), (3, 1)])
def test_linalg_norm(ord, dim):
    check(lambda m, a: m.linalg.norm(a, ord, dim), f64(3, 4))


def test_cdist_compute_modes():
    for mode in ("use_mm_for_euclid_dist", "donot_use_mm_for_euclid_dist"):
        check(lambda m, a, b, mode=mode: m.cdist(a, b, compute_mode=mode), f64(3, 2), f64(4, 2))
    with pytest.raises(ValueError, match="not a valid value"):
        strata.cdist(strata.ones(2, 2), strata.ones(2, 2), compute_mode="fast")


def test_products_leave_inputs_unchanged_and_use_fresh_memory():
    a, b = strata.tensor(f32(3, 3)), strata.tensor(f32(3, 3))
    before = a.numpy().copy()
    out = strata.addmm(a, a, b, beta=2)
    assert out.data_ptr() != a.data_ptr()
    np.testing.assert_array_equal(a.numpy(), before)


def test_transposed_and_strided_operands():
    check(lambda m, a, b: m.mm(a.t(), b[::2]), f32(5, 3), f32(10, 4))
    check(lambda m, a, b: m.bmm(a.transpose(1, 2), b.transpose(1, 2)), f64(2, 4, 3),
          f64(2, 5, 4))


# --- property tests ---------------------------------------------------------------------------

@st.composite
def matmul_shapes(draw):
    """Operands of every rank matmul accepts, with broadcastable batch dims."""
    n, k, p = (draw(st.integers(1, 4)) for _ in range(3))
    r1, r2 = draw(st.integers(1, 4)), draw(st.integers(1, 4))
    batch = [draw(st.integers(1, 3)) for _ in range(max(r1, r2) - 2)]

    def side(rank, rows, cols):
        if rank == 1:
            return (cols,) if rows is None else (rows,)
        lead = batch[len(batch) - (rank - 2):] if rank > 2 else []
        lead = [1 if draw(st.booleans()) else s for s in lead]
        return tuple(lead) + (rows, cols)

    a = (k,) if r1 == 1 else side(r1, n, k)
    b = (k,) if r2 == 1 else side(r2, k, p)
    return a, b


@given(matmul_shapes(), st.sampled_from(["float32", "float64", "int64"]))
def test_matmul_matches_torch(shapes, dtype):
    a, b = (RNG.integers(-4, 5, s).astype(dtype) for s in shapes)
    check(lambda m, x, y: m.matmul(x, y), a, b, check_stride=True)
    check_meta(lambda m, x, y: m.matmul(x, y), a, b)


@given(st.lists(st.integers(1, 4), min_size=3, max_size=3))
def test_einsum_batched_contraction(sizes):
    b, i, j = sizes
    check(lambda m, x, y: m.einsum("bij,bjk->bki", x, y), f64(b, i, j), f64(b, j, 2))
    check(lambda m, x: m.einsum("bii->b", x), f64(b, i, i))
