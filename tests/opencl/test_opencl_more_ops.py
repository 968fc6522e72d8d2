"""Ops that used to raise on opencl, against PyTorch's CPU: integer division (fmod, remainder,
div with a rounding mode), boolean-mask and multi-tensor indexing, nonzero."""

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import strata

pytestmark = pytest.mark.skipif(not strata.opencl.is_available(),
                                reason="needs pyopencl with an OpenCL driver (pip install "
                                       "'strata[opencl]' brings PoCL)")

INTEGERS = ("int64", "int32", "int16", "int8", "uint8")
DIVISIONS = {
    "fmod": lambda m, a, b: m.fmod(a, b), "remainder": lambda m, a, b: m.remainder(a, b),
    "floor_divide": lambda m, a, b: a // b,
    "trunc": lambda m, a, b: m.div(a, b, rounding_mode="trunc"),
    "floor": lambda m, a, b: m.div(a, b, rounding_mode="floor"),
    "true": lambda m, a, b: m.div(a, b), "number": lambda m, a, b: a % -7,
    "in_place": lambda m, a, b: a.fmod_(b),
}


def integers(dtype, n, seed):
    """Values over the dtype's range, the minimum divided by -1 among them (which traps on the
    hardware and wraps on the CPU)."""
    info = np.iinfo(dtype)
    rng = np.random.default_rng(seed)
    a = rng.integers(info.min, info.max, n, endpoint=True).astype(dtype)
    b = rng.integers(max(info.min, -300), min(info.max, 300), n, endpoint=True).astype(dtype)
    b[b == 0] = 3
    if info.min < 0:
        a[:2], b[:2] = info.min, -1
    return a, b


@settings(max_examples=15, deadline=None)
@given(dtype=st.sampled_from(INTEGERS), name=st.sampled_from(sorted(DIVISIONS)),
       n=st.integers(1, 40), seed=st.integers(0, 2**31 - 1))
def test_integer_division_matches_torch(dtype, name, n, seed):
    a, b = integers(dtype, n, seed)
    want = DIVISIONS[name](torch, torch.from_numpy(a.copy()), torch.from_numpy(b))
    got = DIVISIONS[name](strata, strata.tensor(a).to("opencl"), strata.tensor(b).to("opencl"))
    assert got.device.type == "opencl"
    assert str(got.dtype) == str(want.dtype).replace("torch", "strata")
    np.testing.assert_array_equal(got.cpu().numpy(), want.numpy())


@pytest.mark.parametrize("name", ["fmod", "remainder", "floor_divide", "trunc", "in_place"])
def test_a_zero_divisor_raises_before_anything_changes(name):
    a = strata.tensor([5, -6, 7]).to("opencl")
    b = strata.tensor([2, 0, 1]).to("opencl")
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        DIVISIONS[name](strata, a, b)
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        DIVISIONS[name](torch, torch.tensor([5, -6, 7]), torch.tensor([2, 0, 1]))
    assert a.cpu().tolist() == [5, -6, 7]
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        a % 0
