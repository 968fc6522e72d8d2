"""Pointwise formulas where ATen's kernels and NumPy's differ, compared bit for bit with torch:
``remainder``'s zero results keep the dividend's sign (ATen's ``remainder_kernel``: fmod moved
into the divisor's sign where it is not 0; ``-3.0 % 1.0`` is -0.0 in PyTorch, 0.0 in NumPy),
eager, compiled, in place and as an operator; ``heaviside`` gives 0 for NaN (NumPy's gives
NaN) and refuses two dtypes, complex tensors and a number for ``values``."""

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


# heaviside (ATen's heaviside_kernel: ``a == 0 ? b : a > 0``, NaN gives 0) and its refusals,
# which the op db's samples (one dtype) leave out.
@pytest.mark.parametrize("a, b, exc", [
    (np.array([1.0, 0.0]), np.array([1], np.int64), RuntimeError),           # two dtypes
    (np.array([1.0, 0.0], np.complex64), np.array([1j], np.complex64), RuntimeError),
    (np.array([1.0, 0.0]), 0.5, TypeError),                                   # no Scalar overload
])
def test_heaviside_refusals_match_torch(a, b, exc):
    for m in (strata, torch):
        x = m.tensor(a)
        values = m.tensor(b) if isinstance(b, np.ndarray) else b
        with pytest.raises(exc, match="heaviside"):
            m.heaviside(x, values)
        with pytest.raises(exc):
            x.heaviside_(values)
        assert np.array_equal(x.numpy(), a)          # untouched


def test_heaviside_values_match_torch():
    a = np.array([-1.0, 0.0, 2.0, np.nan, -0.0, np.inf], np.float32)
    for b in (np.array([0.5], np.float32), np.array(0.25, np.float32)):
        want = torch.heaviside(torch.tensor(a), torch.tensor(b)).numpy()
        got = strata.heaviside(strata.tensor(a), values=strata.tensor(b)).numpy()
        _same_bits(got, want)
    x = strata.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="derivative for aten::heaviside is not implemented"):
        strata.heaviside(x, strata.tensor([0.5])).sum().backward()
