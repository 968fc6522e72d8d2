"""The opencl device's host-side linear algebra (compile/inductor/opencl_linalg_host.py):
``linalg.eig``/``eigvals`` and complex ``linalg.solve`` against PyTorch's CPU and the strata CPU
device, their errors and their gradients."""

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import strata

pytestmark = pytest.mark.skipif(not strata.opencl.is_available(),
                                reason="needs pyopencl with an OpenCL driver (pip install "
                                       "'strata[opencl]' brings PoCL)")

DTYPES = [np.float32, np.float64, np.complex64, np.complex128]
TOL = {np.float32: 2e-4, np.float64: 1e-10, np.complex64: 2e-4, np.complex128: 1e-10}


def matrices(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape)
    if np.issubdtype(dtype, np.complexfloating):
        a = a + 1j * rng.standard_normal(shape)
    return a.astype(dtype)


def on_device(a):
    return strata.tensor(a).to("opencl")


def by_value(w):
    """Eigenvalues ordered by (real, imaginary) part: LAPACK builds differ in their order."""
    return np.sort_complex(w)


@settings(max_examples=10, deadline=None)
@given(batch=st.lists(st.integers(0, 3), max_size=2), n=st.integers(0, 7),
       seed=st.integers(0, 99), dtype=st.sampled_from(DTYPES))
def test_eig_matches_the_cpu_device_exactly_and_torch_up_to_order_and_phase(batch, n, seed,
                                                                             dtype):
    a = matrices((*batch, n, n), dtype, seed)
    w, v = strata.linalg.eig(on_device(a))
    assert w.device.type == v.device.type == "opencl"
    w_cpu, v_cpu = strata.linalg.eig(strata.tensor(a))
    np.testing.assert_array_equal(w.cpu().numpy(), w_cpu.numpy())
    np.testing.assert_array_equal(v.cpu().numpy(), v_cpu.numpy())
    w_t, v_t = torch.linalg.eig(torch.tensor(a))
    assert str(w.dtype)[7:] == str(w_t.dtype)[6:] and tuple(v.shape) == tuple(v_t.shape)
    tol = TOL[dtype]
    got_w, got_v = w.cpu().numpy(), v.cpu().numpy()
    for index in np.ndindex(*batch):
        np.testing.assert_allclose(by_value(got_w[index]), by_value(w_t.numpy()[index]),
                                   rtol=tol * 10, atol=tol * 10)
        # A V = V diag(w), unit columns: torch's own tests' check of eigenvectors
        m, vecs = a[index].astype(got_v.dtype), got_v[index]
        np.testing.assert_allclose(m @ vecs, vecs * got_w[index], rtol=tol * 10, atol=tol * 10)
        np.testing.assert_allclose(np.linalg.norm(vecs, axis=0), 1, rtol=tol)
    np.testing.assert_array_equal(strata.linalg.eigvals(on_device(a)).cpu().numpy(),
                                  got_w)


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_eig_gradients_match_torch(dtype):
    """Losses that do not depend on each eigenvector's phase, as torch's gradcheck uses."""
    a = matrices((2, 4, 4), dtype, 3)
    losses = [lambda w, v: w.abs().sum(), lambda w, v: v.abs().sum(),
              lambda w, v: (w.real ** 2).sum() + w.imag.sum()]
    for loss in losses:
        x = on_device(a).requires_grad_()
        loss(*strata.linalg.eig(x)).backward()
        x_t = torch.tensor(a, requires_grad=True)
        loss(*torch.linalg.eig(x_t)).backward()
        assert x.grad.device.type == "opencl"
        np.testing.assert_allclose(x.grad.cpu().numpy(), x_t.grad.numpy(), rtol=1e-9, atol=1e-9)
    x = on_device(a).requires_grad_()
    strata.linalg.eigvals(x).abs().sum().backward()
    x_t = torch.tensor(a, requires_grad=True)
    torch.linalg.eigvals(x_t).abs().sum().backward()
    np.testing.assert_allclose(x.grad.cpu().numpy(), x_t.grad.numpy(), rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("bad", [float("nan"), float("inf")])
def test_eig_of_a_non_finite_matrix_raises_torchs_error(bad):
    a = np.eye(3)
    a[1, 2] = bad
    with pytest.raises(RuntimeError) as want:
        torch.linalg.eig(torch.tensor(a))
    x = on_device(a)
    with pytest.raises(RuntimeError) as got:
        strata.linalg.eig(x)
    assert str(got.value) == str(want.value)
    np.testing.assert_array_equal(x.cpu().numpy(), a)


def test_eig_refuses_what_the_cpu_refuses():
    """The meta function's errors, before anything is read back (torch's wording for a
    non-square matrix; for integers strata's CPU device words it its own way)."""
    a = np.ones((2, 3))
    with pytest.raises(RuntimeError) as want:
        torch.linalg.eig(torch.tensor(a))
    with pytest.raises(RuntimeError) as got:
        strata.linalg.eig(on_device(a))
    assert str(got.value) == str(want.value)
    integers = np.ones((3, 3), np.int64)
    with pytest.raises(RuntimeError) as want:
        strata.linalg.eig(strata.tensor(integers))
    with pytest.raises(RuntimeError) as got:
        strata.linalg.eig(on_device(integers))
    assert str(got.value) == str(want.value)


@settings(max_examples=8, deadline=None)
@given(batch=st.lists(st.integers(1, 3), max_size=2), n=st.integers(1, 6),
       columns=st.integers(1, 3), left=st.booleans(), seed=st.integers(0, 99),
       dtype=st.sampled_from([np.complex64, np.complex128]))
def test_complex_solve_matches_torch(batch, n, columns, left, seed, dtype):
    a = matrices((*batch, n, n), dtype, seed) + 3 * np.eye(n, dtype=dtype)
    b = matrices((*batch, n, columns) if left else (*batch, columns, n), dtype, seed + 1)
    x = strata.linalg.solve(on_device(a), on_device(b), left=left)
    x_t = torch.linalg.solve(torch.tensor(a), torch.tensor(b), left=left)
    assert x.device.type == "opencl" and str(x.dtype)[7:] == str(x_t.dtype)[6:]
    np.testing.assert_allclose(x.cpu().numpy(), x_t.resolve_conj().numpy(), rtol=TOL[dtype],
                               atol=TOL[dtype])


def test_complex_solve_of_a_singular_matrix_raises_torchs_error():
    a = np.zeros((2, 3, 3), np.complex128)
    a[0] = np.eye(3)
    b = np.ones((2, 3, 1), np.complex128)
    with pytest.raises(torch.linalg.LinAlgError) as want:
        torch.linalg.solve(torch.tensor(a), torch.tensor(b))
    with pytest.raises(strata.linalg.LinAlgError) as got:
        strata.linalg.solve(on_device(a), on_device(b))
    assert str(got.value) == str(want.value)
