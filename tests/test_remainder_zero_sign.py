"""``remainder``'s zero results keep the dividend's sign, as ATen's ``remainder_kernel`` (fmod
moved into the divisor's sign where it is not 0): ``-3.0 % 1.0`` is -0.0 in PyTorch, 0.0 in
NumPy. Eager, compiled and the in-place and operator forms, compared bit for bit with torch."""

import numpy as np
import pytest
import torch

import strata

A = [-3.0, 3.0, -0.0, 0.0, 5.5, -5.5, np.inf, -np.inf, 1.0, -1.0, np.nan, 7.0, -4.0, 4.0]
B = [1.0, -1.0, 2.0, -2.0, -2.0, 2.0, 2.0, 3.0, np.inf, np.inf, 1.0, 0.0, -2.0, 2.0]


def _same_bits(got, want):
    """Equal values with equal signs (a NaN's sign bit carries no meaning: not compared)."""
    assert np.array_equal(got, want, equal_nan=True)
    numbers = ~np.isnan(want)
    assert np.array_equal(np.signbit(got[numbers]), np.signbit(want[numbers]))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("compiled", [False, True])
def test_remainder_zero_sign_matches_torch(dtype, compiled):
    a, b = np.array(A, dtype), np.array(B, dtype)
    want = torch.remainder(torch.tensor(a), torch.tensor(b)).numpy()

    def fn(x, y):
        return strata.remainder(x, y), x % y, x % -1.0

    run = strata.compile(fn, backend="inductor") if compiled else fn
    got = run(strata.tensor(a), strata.tensor(b))
    tx = torch.tensor(a)
    wants = (want, want, (tx % -1.0).numpy())
    for g, w in zip(got, wants):
        _same_bits(g.numpy(), w)


def test_remainder_in_place_and_scalar_zero_sign():
    x = strata.tensor(np.array(A, np.float32))
    x.remainder_(1.0)
    _same_bits(x.numpy(), torch.tensor(np.array(A, np.float32)).remainder_(1.0).numpy())
    _same_bits(strata.remainder(strata.tensor(-3.0), 1.0).numpy(),
               torch.remainder(torch.tensor(-3.0), 1.0).numpy())
