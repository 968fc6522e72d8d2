"""Sparse COO tensors against PyTorch: construction, conversion, sparse @ dense, add."""

import numpy as np
import pytest
import strata
import torch
from helpers import assert_same, check, check_error
from hypothesis import given
from hypothesis import strategies as st

IDX = np.array([[0, 1, 1, 0], [2, 0, 2, 2]])
VAL = np.array([3.0, 4.0, 5.0, 1.0], np.float32)


def build(m):
    return m.sparse_coo_tensor(m.tensor(IDX), m.tensor(VAL), (2, 3))


def test_construction_and_attributes():
    s, t = build(strata), build(torch)
    assert tuple(s.shape) == tuple(t.shape)
    assert s.is_sparse and t.is_sparse
    assert s.layout == "sparse_coo"
    assert s._nnz() == t._nnz()
    assert_same(s.to_dense(), t.to_dense())
    assert_same(s.coalesce().to_dense(), t.coalesce().to_dense())
    assert_same(s.coalesce().indices(), t.coalesce().indices())
    assert_same(s.coalesce().values(), t.coalesce().values())


def test_sparse_times_dense_matches_torch():
    d = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    s, t = build(strata), build(torch)
    assert_same(strata.spmm(s, strata.tensor(d)), torch.spmm(t, torch.tensor(d)))
    assert_same(s @ strata.tensor(d), t @ torch.tensor(d))
    assert_same(s.matmul(strata.tensor(d)), t.matmul(torch.tensor(d)))
    assert_same(strata.sparse.mm(s, strata.tensor(d)), torch.sparse.mm(t, torch.tensor(d)))


def test_add():
    s, t = build(strata), build(torch)
    dense = np.ones((2, 3), np.float32)
    assert_same((s + s).to_dense(), (t + t).to_dense())
    with pytest.raises(RuntimeError, match=r"add\(sparse, dense\) is not supported"):
        s.add(strata.tensor(dense))
    assert_same(strata.tensor(dense) + s, torch.tensor(dense) + t)


def test_transpose_to_and_to_sparse():
    s, t = build(strata), build(torch)
    assert_same(s.t().to_dense(), t.t().to_dense())
    assert_same(s.to(strata.float64).to_dense(), t.to(torch.float64).to_dense())
    assert s.to("cpu") is s
    d = np.array([[0, 1.5], [0, 0]], np.float32)
    assert_same(strata.tensor(d).to_sparse().to_dense(), torch.tensor(d).to_sparse().to_dense())


def test_errors():
    with pytest.raises(RuntimeError, match="same nnz"):
        strata.sparse_coo_tensor(strata.tensor(IDX), strata.tensor(VAL[:3]), (2, 3))
    with pytest.raises(RuntimeError, match="shapes cannot be multiplied"):
        build(strata) @ strata.ones(2, 2)
    with pytest.raises(RuntimeError, match="dtype argument is not supported by sparse_to_dense"):
        build(strata).to_dense(strata.float64)
    with pytest.raises(RuntimeError, match="do not have strides"):
        build(strata).stride()


def test_t_of_sparse_tensors_matches_torch():
    """``t()`` is an op of its own (TBackward0): sparse 1-D and 2-D tensors have a kernel, a 3-D
    one gets PyTorch's error."""
    check(lambda m: m.tensor([[0.0, 1, 0], [2, 0, 3]]).to_sparse().t().to_dense())
    check(lambda m: m.tensor([1.0, 0, 2]).to_sparse().t().to_dense())
    check_error(lambda m: m.zeros(2, 2, 2).to_sparse().t())


# --- torch.sparse.softmax / log_softmax ---------------------------------------------------------
@given(st.integers(1, 12), st.integers(0, 2), st.booleans(), st.booleans())
def test_sparse_softmax_matches_torch(nnz, dim, log, hybrid):
    rng = np.random.default_rng(nnz * 3 + dim)
    shape = (4, 3, 2) if hybrid else (4, 3, 5)
    sparse_dim = 2 if hybrid else 3
    indices = np.stack([rng.integers(0, n, nnz) for n in shape[:sparse_dim]])
    values = rng.standard_normal((nnz, *shape[sparse_dim:]))
    out = []
    for m in (torch, strata):
        x = m.sparse_coo_tensor(m.tensor(indices), m.tensor(values), shape)
        fn = m.sparse.log_softmax if log else m.sparse.softmax
        out.append(fn(x, dim).to_dense().numpy())
    np.testing.assert_allclose(out[1], out[0], rtol=1e-12, atol=1e-12)


def test_sparse_softmax_dtype_and_errors():
    i, v = [[0, 0, 1], [0, 2, 1]], [1.0, 2.0, 3.0]
    for m in (torch, strata):
        x = m.sparse_coo_tensor(m.tensor(i), m.tensor(v), (2, 3))
        assert str(m.sparse.softmax(x, 1, dtype=m.float64).dtype).endswith("float64")
    check_error(lambda m: m.sparse.softmax(m.sparse_coo_tensor(m.tensor(i), m.tensor([1, 2, 3]),
                                                                (2, 3)), 1), match="Long")
    x = strata.sparse_coo_tensor(strata.tensor(i), strata.tensor(v), (2, 3), requires_grad=True)
    with pytest.raises(NotImplementedError, match="no gradient yet"):
        strata.sparse.softmax(x, 1)
