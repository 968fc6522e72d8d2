"""Integer ``pow.Tensor_Tensor`` inside inductor graphs: ATen's powi (by squaring, wrapping as
the CPU's; a negative exponent gives 1 for 1, +-1 for -1, else 0), as eager's and PyTorch's."""

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


@settings(max_examples=10, deadline=None)
@given(base_dtype=st.sampled_from(["int64", "int32", "int16", "int8", "uint8"]),
       exponent_dtype=st.sampled_from(["int64", "int32", "uint8"]),
       size=st.integers(3, 40), seed=st.integers(0, 999))
def test_integer_pow_matches_eager_and_torch(base_dtype, exponent_dtype, size, seed):
    rng = np.random.default_rng(seed)
    signed = not base_dtype.startswith("u")
    base = rng.integers(-6 if signed else 0, 7, size).astype(base_dtype)
    exponent = rng.integers(-3 if exponent_dtype != "uint8" else 0, 70, size)
    exponent = exponent.astype(exponent_dtype)
    base[:3] = [1, -1, 0] if signed else [1, 2, 0]
    exponent[:3] = [-5, -3, 0] if exponent_dtype != "uint8" else [5, 3, 0]

    def fn(x, y):
        return x ** y + 1
    args = (strata.tensor(base), strata.tensor(exponent))
    got = strata.compile(fn, backend="inductor")(*args).numpy()
    np.testing.assert_array_equal(got, fn(*args).numpy())
    want = fn(torch.tensor(base), torch.tensor(exponent)).numpy()
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


def test_integer_pow_is_lowered():
    args = (strata.tensor([2, 3, -1]), strata.tensor([10, -1, 3]))
    run = compile_fx(make_fx(lambda x, y: x ** y)(*args), list(args))
    assert "Fallback" not in run.ir_post_fusion
    np.testing.assert_array_equal(run(*args)[0].numpy(), [1024, 0, -1])
