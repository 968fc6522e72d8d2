"""complex64/complex128 on opencl (float2/double2, compile/inductor/opencl_complex.py) against
PyTorch's CPU: views, pointwise math with ATen's formulas (division and abs that do not
overflow), comparisons, type promotion, where, reductions, matrix products, cat/stack/
index_select, errors and gradients."""

import re

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import strata

pytestmark = pytest.mark.skipif(not strata.opencl.is_available(),
                                reason="needs pyopencl with an OpenCL driver (pip install "
                                       "'strata[opencl]' brings PoCL)")

COMPLEX = ("complex64", "complex128")
RTOL = {"complex64": 2e-5, "complex128": 1e-12, "float32": 2e-5, "float64": 1e-12,
        "bool": 0}


def cnormal(shape, dtype, seed):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)


def on_device(a):
    return strata.tensor(a).to("opencl") if isinstance(a, np.ndarray) else a


def on_torch(a):
    return torch.tensor(a) if isinstance(a, np.ndarray) else a


def check(fn, *arrays, rtol=None, atol=0.0):
    """``fn(module, *tensors)`` on opencl equals it on torch's CPU: dtype, shape, values (NaNs
    in the same places)."""
    want = fn(torch, *map(on_torch, arrays))
    got = fn(strata, *map(on_device, arrays))
    assert got.device.type == "opencl"
    assert str(got.dtype) == str(want.dtype).replace("torch", "strata")
    want = want.resolve_conj().detach().numpy()
    got = got.detach().cpu().numpy()
    assert got.shape == want.shape
    tol = RTOL[got.dtype.name] if rtol is None else rtol
    np.testing.assert_allclose(got, want, rtol=tol, atol=atol, equal_nan=True)


UNARY = {
    "neg": lambda m, x: -x, "abs": lambda m, x: m.abs(x), "angle": lambda m, x: m.angle(x),
    "exp": lambda m, x: m.exp(x), "log": lambda m, x: m.log(x), "sqrt": lambda m, x: m.sqrt(x),
    "sin": lambda m, x: m.sin(x), "cos": lambda m, x: m.cos(x), "tanh": lambda m, x: m.tanh(x),
    "sigmoid": lambda m, x: m.sigmoid(x), "reciprocal": lambda m, x: m.reciprocal(x),
    "pow_number": lambda m, x: m.pow(x, 2.5), "square": lambda m, x: x ** 2,
    "pow_complex_number": lambda m, x: m.pow(x, 1 - 0.5j), "conj": lambda m, x: m.conj(x),
    "conj_physical": lambda m, x: m.conj_physical(x), "sgn": lambda m, x: m.sgn(x),
    "isnan": lambda m, x: m.isnan(x), "isfinite": lambda m, x: m.isfinite(x),
    "sum": lambda m, x: x.sum(), "mean": lambda m, x: x.mean(-1), "prod": lambda m, x: x.prod(0),
    "in_place": lambda m, x: x.clone().mul_(2 + 1j).add_(x),
}


@settings(max_examples=30, deadline=None)
@given(name=st.sampled_from(sorted(UNARY)), dtype=st.sampled_from(COMPLEX),
       shape=st.lists(st.integers(1, 5), min_size=1, max_size=3), seed=st.integers(0, 2**16))
def test_unary_ops_match_torch(name, dtype, shape, seed):
    check(UNARY[name], cnormal(shape, dtype, seed), atol=1e-6 if dtype == "complex64" else 0)


BINARY = {
    "add": lambda m, a, b: a + b, "sub": lambda m, a, b: a - b, "mul": lambda m, a, b: a * b,
    "div": lambda m, a, b: a / b, "pow": lambda m, a, b: m.pow(a, b),
    "eq": lambda m, a, b: m.eq(a, b), "ne": lambda m, a, b: a != b,
    "add_alpha": lambda m, a, b: m.add(a, b, alpha=2),
    "sub_alpha": lambda m, a, b: m.sub(a, b, alpha=3),
}
OTHERS = ("complex64", "complex128", "float32", "float64", "int64", "bool")


def values(shape, dtype, seed):
    if dtype in COMPLEX:
        return cnormal(shape, dtype, seed)
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return rng.random(shape) > 0.5
    return (rng.standard_normal(shape) * 3).astype(dtype)


@settings(max_examples=30, deadline=None)
@given(name=st.sampled_from(sorted(BINARY)), dtype=st.sampled_from(COMPLEX),
       other=st.sampled_from(OTHERS), swap=st.booleans(), seed=st.integers(0, 2**16))
def test_binary_ops_promote_real_and_complex_as_torch(name, dtype, other, swap, seed):
    a, b = cnormal((3, 4), dtype, seed), values((4,), other, seed + 1)
    if name == "pow" and other in ("int64", "bool"):
        b = b.astype("float32")
    if swap:
        a, b = b, a
    check(BINARY[name], a, b, atol=1e-5)


@pytest.mark.parametrize("number", [2, 0.5, 1.5 - 2j, True])
def test_python_numbers_mix_with_complex_tensors(number):
    check(lambda m, x: x * number + number, cnormal((5,), "complex64", 1))
    check(lambda m, x: x * number, np.arange(4.0, dtype="float32"))
    check(lambda m, x: m.eq(x, number), np.array([number, 1j, 0], "complex64"))


def test_division_and_abs_do_not_overflow():
    """c10::complex's scaled division and hypot: |2e38 + 1e38j| = 2.2e38 fits in a float, its
    square does not; 1e-40 is a subnormal whose square is 0."""
    big = np.array([2e38 + 1e38j, 1e-40 + 1e-40j, 1e30 + 1e30j, -2e38 + 0j], "complex64")
    check(lambda m, x: m.abs(x), big)
    assert np.isfinite(strata.abs(on_device(big)).cpu().numpy()).all()
    check(lambda m, a, b: a / b, np.full(4, 1 + 1j, "complex64"), big)
    check(lambda m, a, b: a / b, big, big[::-1].copy())


def test_special_values_follow_torch():
    z = np.array([0j, -0.0 + 0j, complex(np.inf, 0), complex(-1, 0), complex(0, -0.0),
                  complex(np.nan, 1), complex(1, np.inf), 30 + 1j, -30 + 2j], "complex64")
    check(lambda m, x: m.isnan(x), z)
    check(lambda m, x: m.isfinite(x), z)
    check(lambda m, x: x / m.zeros_like(x), z[:4].copy())
    check(lambda m, x: m.sqrt(x), np.array([-4 + 0j, complex(-4, -0.0), 0j, 4j], "complex64"))
    check(lambda m, x: m.tanh(x), np.array([30 + 1j, -30 + 2j, 0.5 + 0.2j], "complex64"))
    check(lambda m, x: m.log(x), np.array([-1 + 0j, 1j, 2 + 0j], "complex64"))
    check(lambda m, x: m.exp(x), np.array([1 + 0j, 1j, -1e3 + 1j], "complex64"))


def test_views_share_storage_with_the_complex_tensor():
    a = cnormal((3, 4), "complex64", 3)
    x = strata.tensor(a).to("opencl")
    r = strata.view_as_real(x)
    assert (r.shape, r.dtype, r.device.type) == ((3, 4, 2), strata.float32, "opencl")
    np.testing.assert_array_equal(r.cpu().numpy(), a.view("float32").reshape(3, 4, 2))
    x.real.mul_(2)
    x.imag.add_(1)
    np.testing.assert_allclose(x.cpu().numpy(), 2 * a.real + 1j * (a.imag + 1), rtol=1e-6)
    back = strata.view_as_complex(r)
    assert back.data_ptr() == x.data_ptr()
    check(lambda m, t: m.view_as_complex(t[:, ::2]) * 1, np.ones((3, 4, 2), "float32"))
    check(lambda m, t: t.conj().resolve_conj(), a)
    check(lambda m, t: m.complex(t, t * 2), np.arange(4.0, dtype="float32"))
    check(lambda m, r, t: m.polar(r, t), np.arange(4.0), np.linspace(-3, 3, 4))


def test_view_as_complex_refuses_bad_layouts_as_torch():
    x = strata.ones(3, 3, device="opencl")
    with pytest.raises(RuntimeError, match="last dimension of size 2"):
        strata.view_as_complex(x)
    with pytest.raises(RuntimeError, match="only supported for complex tensors"):
        strata.view_as_real(x)


@pytest.mark.parametrize("dtype", COMPLEX)
def test_reductions_over_long_rows_match_torch(dtype):
    """Rows of 256 or more reduce in a work-group tree (complex sum and product)."""
    a = cnormal((3, 600), dtype, 4)
    check(lambda m, x: x.sum(1), a, atol=1e-4)
    check(lambda m, x: x.mean(), a, atol=1e-5)
    unit = np.exp(1j * np.random.default_rng(5).uniform(-np.pi, np.pi, (2, 300))).astype(dtype)
    check(lambda m, x: x.prod(1), unit, rtol=1e-4 if dtype == "complex64" else 1e-10)


@settings(max_examples=12, deadline=None)
@given(m=st.integers(1, 70), k=st.integers(1, 70), n=st.integers(1, 70),
       dtype=st.sampled_from(COMPLEX), seed=st.integers(0, 2**16))
def test_matrix_products_match_torch(m, k, n, dtype, seed):
    a, b, c = (cnormal(s, dtype, seed + i) for i, s in enumerate(((m, k), (k, n), (m, n))))
    atol = 1e-4 if dtype == "complex64" else 1e-11
    check(lambda t, x, y: t.mm(x, y), a, b, atol=atol)
    check(lambda t, x, y, z: t.addmm(z, x, y, beta=0.5 - 1j, alpha=2j), a, b, c, atol=atol)
    check(lambda t, x, y: t.matmul(x.unsqueeze(0).expand(2, m, k), y), a, b, atol=atol)
    check(lambda t, x, y: t.bmm(x.unsqueeze(0), y.unsqueeze(0)), a, b, atol=atol)


@pytest.mark.parametrize("dtype", COMPLEX)
def test_register_blocked_gemm_of_complex_matrices(dtype):
    """Outputs of 128 x 128 and more take the register-blocked GEMM with complex multiply-adds
    (a transposed B: strided tile loads)."""
    a, b, c = (cnormal(s, dtype, i) for i, s in enumerate(((130, 70), (129, 70), (130, 129))))
    atol = 1e-4 if dtype == "complex64" else 1e-11
    check(lambda t, x, y, z: t.addmm(z, x, y.t(), beta=0.5 - 1j, alpha=2j), a, b, c, atol=atol)


def test_matmul_of_real_and_complex_raises_as_torch():
    a, b = cnormal((2, 3), "complex64", 6), np.ones((3, 2), "float32")
    with pytest.raises(RuntimeError) as want:
        torch.mm(torch.tensor(a), torch.tensor(b))
    with pytest.raises(type(want.value), match=r"c10::complex<float> != float"):
        strata.mm(on_device(a), on_device(b))


def test_shape_ops_and_where():
    a, b = cnormal((2, 3), "complex128", 7), cnormal((2, 4), "complex128", 8)
    check(lambda m, x, y: m.cat([x, y], 1), a, b)
    check(lambda m, x, y: m.stack([x, x * 2], 1), a, b)
    check(lambda m, x, i: m.index_select(x, 1, i), b, np.array([3, 0, 0, 2]))
    cond = np.array([[True, False, True], [False, False, True]])
    check(lambda m, c, x: m.where(c, x, 0.5), cond, a)
    check(lambda m, c, x, y: m.where(c, x, y), cond, a, np.ones((2, 3), "float32"))
    check(lambda m, x: m.roll(x, 1, 1), a)
    check(lambda m, x: x.t().contiguous(), a)
    check(lambda m, x: x.to(m.complex64), a)


def test_unsupported_comparisons_raise_before_launching():
    x = strata.tensor(cnormal((3,), "complex64", 9)).to("opencl")
    for fn in (lambda m, t: m.lt(t, 1), lambda m, t: m.amax(t), lambda m, t: t.max()):
        with pytest.raises(Exception) as want:
            fn(torch, torch.tensor(x.cpu().numpy()))
        with pytest.raises(type(want.value)):
            fn(strata, x)


def test_gradients_through_complex_ops_match_torch():
    a, b = cnormal((3, 4), "complex128", 10), cnormal((4, 2), "complex128", 11)

    def grads(m, on):
        x, y = on(a).requires_grad_(), on(b).requires_grad_()
        z = m.mm(x, y)
        loss = (z.abs() + m.angle(z)).sum() + (m.exp(x) / (x * x + 1)).real.sum()
        loss.backward()
        return x.grad, y.grad
    for got, want in zip(grads(strata, on_device), grads(torch, on_torch)):
        assert got.device.type == "opencl"
        np.testing.assert_allclose(got.cpu().numpy(), want.resolve_conj().numpy(), rtol=1e-10)


def test_bad_in_place_ops_raise_as_torch_and_leave_self_untouched():
    real = np.arange(4.0, dtype="float32")
    z = cnormal((3,), "complex64", 12)
    for self, other in ((real, np.array([1j], "complex64")), (z, cnormal((4,), "complex64", 13))):
        with pytest.raises(RuntimeError) as want:
            torch.tensor(self).add_(torch.tensor(other))
        target = on_device(self)
        with pytest.raises(RuntimeError, match=re.escape(str(want.value)[:30])):
            target.add_(on_device(other))
        np.testing.assert_array_equal(target.cpu().numpy(), self)


def test_compiled_graphs_fuse_complex_ops():
    a = cnormal((2, 3), "complex64", 14)

    def f(m, x):
        return (x * x).exp().sum(-1) + x.abs().sum()
    compiled = strata.compile(lambda x: f(strata, x))
    got = compiled(on_device(a))
    np.testing.assert_allclose(got.cpu().numpy(), f(torch, torch.tensor(a)).numpy(), rtol=1e-5)
