"""PyTorch functions and methods strata writes at the Python level (frontend/composites.py),
against PyTorch: values, dtypes, in-place identity and errors."""

import math

import numpy as np
import pytest
import torch
from helpers import assert_same

import strata

NAN, INF = math.nan, math.inf
M23 = [[1.0, 2, 3], [4, 5, 6]]

CASES = {
    "positive": lambda m: m.positive(m.tensor([1.5, -2])),
    "float_power_int": lambda m: m.float_power(m.tensor([2, 3]), 2),
    "float_power_tensor": lambda m: m.float_power(m.tensor([2.0]), m.tensor([0.5])),
    "float_power_number_base": lambda m: m.float_power(2, m.tensor([0.5])),
    "float_power_": lambda m: m.tensor([2.0], dtype=m.float64).float_power_(2),
    "isposinf_int": lambda m: m.isposinf(m.tensor([1, 2])),
    "isneginf": lambda m: m.isneginf(m.tensor([INF, -INF, NAN])),
    "isposinf": lambda m: m.tensor([INF, -INF, NAN]).isposinf(),
    "renorm_rows": lambda m: m.renorm(m.tensor(M23), 2, 0, 5),
    "renorm_cols_p1": lambda m: m.renorm(m.tensor(M23), 1, 1, 5),
    "renorm_": lambda m: m.tensor(M23).renorm_(2, 0, 5),
    "inner": lambda m: m.inner(m.tensor(M23), m.tensor(M23[::-1])),
    "inner_scalar": lambda m: m.inner(m.tensor(2.0), m.tensor(M23)),
    "inner_1d": lambda m: m.arange(3.0).inner(m.arange(3.0)),
    "addr": lambda m: m.addr(m.ones(2, 3), m.ones(2), m.arange(3.0), beta=0.5, alpha=2),
    "addr_beta0_nan": lambda m: m.addr(m.full((2, 3), NAN), m.ones(2), m.ones(3), beta=0),
    "addr_": lambda m: m.ones(2, 3).addr_(m.ones(2), m.arange(3.0)),
    "fill_diagonal_": lambda m: m.zeros(3, 3).fill_diagonal_(5),
    "fill_diagonal_wide": lambda m: m.zeros(3, 5).fill_diagonal_(5),
    "fill_diagonal_wrap": lambda m: m.zeros(7, 3).fill_diagonal_(5, wrap=True),
    "fill_diagonal_nowrap": lambda m: m.zeros(7, 3).fill_diagonal_(5),
    "fill_diagonal_3d": lambda m: m.zeros(2, 2, 2).fill_diagonal_(5),
    "fill_diagonal_view_wrap": lambda m: m.zeros(6, 4)[:, 1:].fill_diagonal_(5, wrap=True),
    "adjoint": lambda m: m.adjoint(m.tensor(M23)),
    "cholesky_inverse": lambda m: m.cholesky_inverse(m.tensor([[2.0, 0], [1, 3]])),
    "cholesky_inverse_upper": lambda m: m.tensor([[2.0, 1], [0, 3]]).cholesky_inverse(True),
    "tril_": lambda m: m.ones(3, 3).tril_(-1),
    "triu_": lambda m: m.ones(3, 3).triu_(1),
    "cumsum_": lambda m: m.tensor([1.0, 2, 3]).cumsum_(0),
    "cumprod_": lambda m: m.tensor([1, 2, 3]).cumprod_(0),
    "narrow_copy": lambda m: m.narrow_copy(m.arange(6), 0, 1, 3),
    "split_with_sizes": lambda m: m.split_with_sizes(m.arange(6), [2, 4]),
    "unsafe_chunk": lambda m: m.unsafe_chunk(m.arange(6), 4),
    "xlogy_": lambda m: m.tensor([2.0, 0.0]).xlogy_(3.0),
    "sgn_": lambda m: m.tensor([-2.0, 0, 3]).sgn_(),
    "addmv_": lambda m: m.ones(3).addmv_(m.ones(3, 2), m.arange(2.0), beta=2),
    "addbmm_": lambda m: m.ones(2, 2).addbmm_(m.ones(3, 2, 4), m.ones(3, 4, 2)),
    "baddbmm_": lambda m: m.ones(3, 2, 2).baddbmm_(m.ones(3, 2, 4), m.ones(3, 4, 2), alpha=0.5),
    "diagflat_method": lambda m: m.arange(3.0).diagflat(1),
    "unravel_index": lambda m: m.unravel_index(m.tensor([4, 1, 5, -1, 6, -7]), (2, 3)),
    "unravel_index_int_shape": lambda m: m.unravel_index(m.tensor([[1, 2]]), 4),
    "unravel_index_int32": lambda m: m.unravel_index(m.tensor(3, dtype=m.int32), (2, 4)),
    "chain_matmul": lambda m: m.chain_matmul(m.ones(2, 3), m.arange(12.0).reshape(3, 4),
                                             m.ones(4, 1)),
    "resolve_neg": lambda m: m.resolve_neg(m.arange(3.0)),
    "nonzero_static_pad": lambda m: m.nonzero_static(m.tensor([[0, 1], [2, 0], [3, 4]]), size=5),
    "nonzero_static_cut": lambda m: m.tensor([[0, 1], [2, 0], [3, 4]]).nonzero_static(
        size=2, fill_value=9),
    "index_reduce_mean_": lambda m: m.ones(3).index_reduce_(
        0, m.tensor([0, 0, 2]), m.tensor([2.0, 3.0, 4.0]), "mean"),
    "index_reduce_amax": lambda m: m.ones(3).index_reduce(
        0, m.tensor([0, 0, 2]), m.tensor([2.0, 3.0, 4.0]), "amax", include_self=False),
    "index_reduce_prod_dim1": lambda m: m.index_reduce(
        m.ones(2, 3), 1, m.tensor([0, 0, 2]), m.arange(6.0).reshape(2, 3) + 1, "prod"),
    "torch.conv2d": lambda m: m.conv2d(m.arange(50.0).reshape(1, 2, 5, 5), m.ones(3, 2, 3, 3),
                                       padding=1, stride=2),
    "torch.conv_transpose1d": lambda m: m.conv_transpose1d(m.arange(8.0).reshape(1, 2, 4),
                                                           m.ones(2, 3, 2)),
}


@pytest.mark.parametrize("name", CASES)
def test_matches_torch(name):
    got, want = CASES[name](strata), CASES[name](torch)
    if isinstance(want, tuple):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert_same(g, w)
    else:
        assert_same(got, want, atol=1e-7, rtol=1e-6)


def test_predicates_match_torch():
    for m in (strata, torch):
        assert m.unravel_index(m.tensor(0), ()) == ()
        assert m.is_signed(m.ones(1, dtype=m.uint8)) is False and m.get_device(m.ones(1)) == -1
        assert m.typename(3) == "int"
        assert m.tensor([0.0]).is_nonzero() is False and m.tensor([2]).is_nonzero() is True
        assert m.is_same_size(m.ones(2), m.ones(2)) and not m.ones(2).is_same_size(m.ones(3))


@pytest.mark.parametrize("call, error, message", [
    (lambda m: m.positive(m.tensor([True])), RuntimeError, "on a bool tensor is not supported"),
    (lambda m: m.tensor([2.0]).float_power_(2), RuntimeError,
     ("the base given to float_power_ has dtype Float but the operation's result requires "
      "dtype Double")),
    (lambda m: m.tensor(M23).is_nonzero(), RuntimeError, "more than one value is ambiguous"),
    (lambda m: m.tensor([]).is_nonzero(), RuntimeError, "with no values is ambiguous"),
    (lambda m: m.renorm(m.tensor(M23), -1, 0, 5), RuntimeError, "non-positive-norm"),
    (lambda m: m.renorm(m.tensor(M23), 2, 0, -1), RuntimeError, "maxnorm to be >= 0"),
    (lambda m: m.inner(m.ones(2, 3), m.ones(4, 2)), RuntimeError,
     r"the last dimension must match on both input tensors but got shapes \[2, 3\] and \[4, 2\]"),
    (lambda m: m.addr(m.ones(2, 3, dtype=m.int64), m.ones(2, dtype=m.int64),
                      m.ones(3, dtype=m.int64), beta=0.5), RuntimeError,
     "argument beta must not be a floating point number"),
    (lambda m: m.zeros(3, 3, 2).fill_diagonal_(5), RuntimeError, "must be of equal length"),
    (lambda m: m.nonzero_static(m.ones(2), size=-1), RuntimeError,
     "'size' must be an non-negative integer"),
    (lambda m: m.ones(3).index_reduce(0, m.tensor([0]), m.tensor([2.0]), "sum"), RuntimeError,
     "Expected reduce to be one of prod, mean, amax or amin but got sum"),
    (lambda m: m.tensor([2]).xlogy_(3.0), RuntimeError,
     "result type Float can't be cast to the desired output type Long"),
    (lambda m: m.unravel_index(m.tensor(1.0), (2, 3)), TypeError,
     "expected 'indices' to be integer dtype"),
    (lambda m: m.unravel_index(m.tensor(3), (-1, 4)), ValueError,
     r"'shape' cannot have negative values, but got \(-1, 4\)"),
    (lambda m: m.zeros(3).fill_diagonal_(5), RuntimeError, "dimensions must larger than 1"),
    (lambda m: m.tensor([1, 2]).cumsum_(0, dtype=m.float32), RuntimeError,
     "Bad in-place call: input tensor dtype long int and output tensor dtype float should match"),
])
def test_errors_match_torch(call, error, message):
    for m in (strata, torch):
        with pytest.raises(error, match=message):
            call(m)


def test_in_place_forms_return_self_and_record_autograd():
    x = strata.ones(3, 3, requires_grad=True)
    y = x * 2
    assert y.tril_() is y
    y.sum().backward()
    want = torch.ones(3, 3, requires_grad=True)
    (want * 2).tril_().sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), want.grad.numpy())


def test_index_reduce_gradients_match_torch():
    grads = []
    for m in (strata, torch):
        x = m.tensor([[1.0, 2, 3], [4, 5, 6]], requires_grad=True)
        src = m.tensor([[2.0, 3, 4], [5, 6, 0.5]], requires_grad=True)
        out = x.index_reduce(1, m.tensor([0, 0, 2]), src, "prod")
        (out * m.tensor([[1.0, 2, 3], [4, 5, 6]])).sum().backward()
        grads.append((out, x.grad, src.grad))
    for got, want in zip(*grads):
        assert_same(got, want)
