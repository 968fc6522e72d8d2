"""digamma and polygamma (lgamma's derivatives) beyond the op database: values against PyTorch
over hypothesis-drawn inputs (poles, reflection, the asymptotic range), errors, and the chain
lgamma -> digamma -> polygamma(1) -> polygamma(2) differentiated in float64."""

import numpy as np
import pytest
import strata
import torch
from helpers import assert_same, check, check_error
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

# poles (0, negative integers), both sides of them, digamma's root, the asymptotic switch at 10
EDGES = [0.0, -0.0, -1.0, -2.0, -1e-9, 1e-9, -0.5, 0.5, 1.4616321449683622, 10.0, 9.999, 1e17,
         -1e5 - 0.5, float("inf"), float("-inf"), float("nan")]


def _inputs(dtype):
    return hnp.arrays(dtype, hnp.array_shapes(max_dims=2, max_side=6), elements=st.one_of(
        st.sampled_from(EDGES), st.floats(-30, 30, width=32),
        st.floats(2.0 ** -10, 1e6, width=32)))


@given(x=_inputs(np.float64), n=st.integers(0, 4))
def test_polygamma_float64_matches_torch(x, n):
    # the sum behind polygamma(n >= 2) cancels for large negative x: there both are noise
    x = np.where((n >= 2) & (x < -20), 0.25, x)
    check(lambda m, x: m.polygamma(n, x), x, rtol=1e-12, atol=1e-300)


@given(x=_inputs(np.float32), n=st.integers(0, 3))
def test_polygamma_float32_matches_torch(x, n):
    x = np.where((n >= 2) & (x < -20), 0.25, x).astype(np.float32)
    check(lambda m, x: m.polygamma(n, x), x, rtol=2e-6, atol=1e-30)


@given(x=_inputs(np.float32))
def test_digamma_in_float32_like_aten(x):
    check(lambda m, x: m.digamma(x), x, rtol=2e-6, atol=1e-30)


def test_methods_and_in_place():
    x = np.linspace(0.3, 5, 7)
    check(lambda m, x: x.digamma(), x)
    check(lambda m, x: x.polygamma(2), x)
    check(lambda m, x: x.digamma_(), x)
    check(lambda m, x: x.polygamma_(3), x)
    check(lambda m, x: m.polygamma(1, x[::2]), x)   # a strided input keeps its layout
    check(lambda m, x: m.digamma(x.t()), x.reshape(7, 1) * np.ones(3), check_stride=True)


@pytest.mark.parametrize("fn,x,match", [
    (lambda m, x: m.polygamma(-1, x), np.ones(3), r"polygamma\(n, x\) does not support "
                                                  r"negative n\."),
    (lambda m, x: x.polygamma_(-2), np.ones(3), "does not support negative n"),
    (lambda m, x: x.digamma_(), np.arange(3), "result type Float can't be cast to the desired "
                                              "output type Long"),
    (lambda m, x: x.polygamma_(1), np.arange(3), "result type Float can't be cast"),
    (lambda m, x: x.expand(2, 3).digamma_(), np.ones(3), "unsupported operation: more than one "
                                                         "element of the written-to tensor"),
])
def test_errors(fn, x, match):
    check_error(fn, x, match=match)


@pytest.mark.parametrize("order", [1, 2, 3])
def test_lgamma_derivatives_chain(order):
    """d^k/dx^k lgamma = digamma, polygamma(1, .), polygamma(2, .): k-th derivatives agree."""
    x = np.array([-2.5, -0.3, 0.2, 1.0, 1.5, 3.7, 12.0, 40.0])
    out = []
    for m in (strata, torch):
        leaf = m.tensor(x, requires_grad=True)
        y = m.lgamma(leaf).sum()
        for _ in range(order):
            (y,) = m.autograd.grad(y, leaf, create_graph=True)
            last = y
            y = y.sum()
        out.append(last.detach().numpy())
    np.testing.assert_allclose(out[0], out[1], rtol=1e-12)
    assert strata.lgamma(strata.tensor(x, requires_grad=True)).grad_fn.name() == \
        "LgammaBackward0"


@pytest.mark.parametrize("name", ["spherical_bessel_j0", "modified_bessel_i0",
                                  "modified_bessel_i1"])
@pytest.mark.parametrize("dtype_name", ["float32", "float64"])
def test_bessel_family_matches_torch(name, dtype_name):
    """Values over a sweep and the special values (ATen: NaN at +-inf for modified_bessel,
    0 for spherical_bessel_j0), no gradient, integer inputs as the default float."""
    values = np.concatenate([np.linspace(-60, 60, 4001), [0.0, -0.0, 1e-4, 0.4999, 0.5,
                                                         np.inf, -np.inf, np.nan]])
    got = getattr(strata.special, name)(strata.tensor(values, dtype=getattr(strata, dtype_name),
                                                      requires_grad=True))
    want = getattr(torch.special, name)(torch.tensor(values, dtype=getattr(torch, dtype_name),
                                                     requires_grad=True))
    tol = 2e-6 if dtype_name == "float32" else 1e-13
    assert_same(got, want, atol=tol, rtol=tol)
    assert got.requires_grad is want.requires_grad is False
    assert getattr(strata.special, name)(strata.tensor([1, 2])).dtype is strata.float32
