"""cumsum, cumprod, logcumsumexp, cummax and cummin inside inductor graphs: a Scan kernel (Note
[Scans] in compile/inductor/ir.py) walking the scanned dim left to right per column, as eager's
``ufunc.accumulate``: float sums are eager's bit for bit, and close to PyTorch's."""

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import strata
from strata.compile.aot import make_fx
from strata.compile.inductor.compile_fx import compile_fx

# a graph that fails to capture or build runs eagerly with a warning: that must fail the test
pytestmark = [pytest.mark.filterwarnings("error::RuntimeWarning"),
              pytest.mark.filterwarnings("error::UserWarning")]


def _both(fn, *arrays):
    """``fn(strata, *tensors)`` compiled and eager, and ``fn(torch, *tensors)``."""
    args = [strata.tensor(a) for a in arrays]
    got = strata.compile(lambda *a: fn(strata, *a), backend="inductor")(*args)
    eager = fn(strata, *args)
    want = fn(torch, *[torch.tensor(a) for a in arrays])
    return got, eager, want


def _values(rng, shape, dtype):
    x = rng.standard_normal(shape) * 10.0 ** rng.integers(-2, 3, shape)
    if dtype == "bool":
        return x > 0
    if dtype.startswith("int"):
        return (x * 10).astype(dtype)
    x = x.astype(dtype)
    if x.size > 3:      # IEEE specials travel through the running sums as eager's do
        x.flat[:3] = [-0.0, np.inf, np.nan] if rng.integers(2) else [-0.0, 1e30, -1e30]
    return x


@settings(max_examples=15, deadline=None)
@given(shape=st.lists(st.integers(1, 9), min_size=0, max_size=3), dim=st.integers(-3, 2),
       name=st.sampled_from(["cumsum", "cumprod"]),
       dtype=st.sampled_from(["float32", "float64", "int32", "int64", "bool"]),
       out_dtype=st.sampled_from([None, "float64", "int64"]), seed=st.integers(0, 999))
def test_cumsum_cumprod_are_eagers_bit_for_bit_and_torchs(shape, dim, name, dtype, out_dtype,
                                                         seed):
    dim = dim % max(len(shape), 1)
    x = _values(np.random.default_rng(seed), shape, dtype)

    def fn(m, x):
        kwargs = {"dtype": getattr(m, out_dtype)} if out_dtype else {}
        return getattr(x * 1 if dtype != "bool" else x, name)(dim, **kwargs) + 0
    got, eager, want = _both(fn, x)
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    np.testing.assert_array_equal(got.numpy(), eager.numpy())
    if got.dtype.is_floating_point:
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=2e-5, atol=1e-5)
    else:
        np.testing.assert_array_equal(got.numpy(), want.numpy())


@settings(max_examples=10, deadline=None)
@given(shape=st.lists(st.integers(1, 9), min_size=1, max_size=3), dim=st.integers(0, 2),
       dtype=st.sampled_from(["float32", "float64"]), seed=st.integers(0, 999))
def test_logcumsumexp_is_close_to_eager_and_torch(shape, dim, dtype, seed):
    """NumPy's logaddexp step by step; exp and log1p are libm's (or libmvec's in a SIMD loop,
    within 4 ulp), so close rather than bit-equal."""
    dim = dim % len(shape)
    x = _values(np.random.default_rng(seed), shape, dtype)
    if x.size > 3:
        x.flat[:2] = [-np.inf, -np.inf]
    got, eager, want = _both(lambda m, x: (x * 1).logcumsumexp(dim) - 1, x)
    tolerance = 1e-5 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(got.numpy(), eager.numpy(), rtol=tolerance, atol=tolerance)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=tolerance, atol=tolerance)


@settings(max_examples=12, deadline=None)
@given(shape=st.lists(st.integers(1, 8), min_size=1, max_size=3), dim=st.integers(0, 2),
       name=st.sampled_from(["cummax", "cummin"]),
       dtype=st.sampled_from(["float32", "float64", "int32", "int64", "bool", "uint8"]),
       seed=st.integers(0, 999))
def test_cummax_cummin_are_eagers_and_torchs(shape, dim, name, dtype, seed):
    """Ties move the index to the newer element (PyTorch's >=), and -0.0 after 0.0 is the
    running value (NumPy's maximum keeps its second operand on a tie); NaN sticks."""
    dim = dim % len(shape)
    rng = np.random.default_rng(seed)
    x = rng.integers(-2, 3, shape).astype(dtype)     # small integers: many ties
    if dtype.startswith("float"):
        x.flat[::3] = -0.0
        x.flat[rng.integers(x.size)] = np.nan if rng.integers(2) else 0.0
    got, eager, want = _both(lambda m, x: tuple(getattr(x, name)(dim)), x)
    for g, e, w in zip(got, eager, want):
        np.testing.assert_array_equal(g.numpy(), e.numpy())
        np.testing.assert_array_equal(np.signbit(g.numpy()), np.signbit(e.numpy()))
        np.testing.assert_array_equal(g.numpy(), w.numpy())


def test_gradients_match_eager_and_torch():
    """cumsum's backward is a reversed cumsum: Scan kernels again."""
    x = np.random.default_rng(5).standard_normal((4, 6)).astype(np.float32)
    grads = []
    for m, compiled in ((strata, True), (strata, False), (torch, False)):
        xt = m.tensor(x, requires_grad=True)

        def step(x):
            out = x.cumsum(1) * x.cumsum(0) + x.logcumsumexp(1) + x.cummax(0)[0]
            (out * out).sum().backward()
        (strata.compile(step, backend="inductor") if compiled else step)(xt)
        grads.append(xt.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(grads[0], grads[2], rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("fn", [
    lambda x: (x > 0).cumsum(1) * 2, lambda x: (x * 2).cumsum(0).abs(),
    lambda x: x.cumprod(-1), lambda x: x.logcumsumexp(0) + x,
    lambda x: x.cummin(1)[0] + 1,
])
def test_one_scan_kernel_fused_with_its_input_no_fallback(fn):
    x = strata.randn(5, 7)
    run = compile_fx(make_fx(fn)(x), [x])
    post = run.ir_post_fusion
    assert "Fallback" not in post and post.count("Scan(") == 1
    np.testing.assert_allclose(run(x)[0].numpy(), fn(x).numpy(), rtol=1e-6, atol=1e-6)
