"""Complex dtypes against PyTorch: dtype attributes, promotion, creation, printing, conversions,
PyTorch's errors for ops undefined on complex numbers, and gradients with complex leaves (against
torch and against complex-aware finite differences)."""

import numpy as np
import pytest
import torch
from helpers import assert_same, check, check_error, dtype_name
from hypothesis import given, settings
from hypothesis import strategies as st

import strata

REAL = ("bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32",
        "float64")
COMPLEX = ("complex64", "complex128")
Z = np.array([1 + 2j, 3 - 4j, -0.5 + 0.25j], np.complex64)


# --- dtypes and promotion ------------------------------------------------------------------------
def test_dtype_attributes_and_aliases():
    assert strata.cfloat is strata.complex64 and strata.cdouble is strata.complex128
    for name in COMPLEX + REAL:
        s, t = getattr(strata, name), getattr(torch, name)
        assert s.is_complex == t.is_complex
        assert s.is_floating_point == t.is_floating_point
        assert s.itemsize == t.itemsize
        assert dtype_name(s.to_real()) == dtype_name(t.to_real())
        if t.is_floating_point and name != "float16":   # strata has no complex32
            assert dtype_name(s.to_complex()) == dtype_name(t.to_complex())
    assert repr(strata.finfo(strata.cdouble)) == repr(torch.finfo(torch.cdouble)).replace(
        "torch", "strata")
    check_error(lambda m: m.int32.to_complex())


@pytest.mark.parametrize("a", REAL[:-2] + REAL[-2:] + COMPLEX)
@pytest.mark.parametrize("b", COMPLEX)
def test_promote_types(a, b):
    if "float16" in (a, b) and "complex" in a + b and a != "bfloat16" and b != "bfloat16":
        pytest.skip("float16 with complex is complex32 in PyTorch, which strata lacks")
    s = strata.promote_types(getattr(strata, a), getattr(strata, b))
    t = torch.promote_types(getattr(torch, a), getattr(torch, b))
    assert dtype_name(s) == dtype_name(t)
    assert strata.can_cast(getattr(strata, b), getattr(strata, a)) == \
        torch.can_cast(getattr(torch, b), getattr(torch, a))


@pytest.mark.parametrize("make", [
    lambda m: m.ones(2) + 1j, lambda m: m.ones(2, dtype=m.float64) + 1j,
    lambda m: m.tensor([1, 2]) + 1j, lambda m: m.tensor(1j) + m.ones(2),
    lambda m: m.tensor([True]) * 1j,
    lambda m: m.ones(2, dtype=m.cfloat) + m.ones(2, dtype=m.double),
    lambda m: m.tensor(2.0, dtype=m.float64) + m.ones(2, dtype=m.cfloat),
    lambda m: m.zeros(1, dtype=m.result_type(m.ones(2), 1j)),
    lambda m: m.zeros(1, dtype=m.result_type(m.ones(2, dtype=m.int8), 2j)),
])
def test_result_types_follow_torch(make):
    check(make)


def test_default_complex_dtype_follows_the_default_float_dtype():
    try:
        for m in (strata, torch):
            m.set_default_dtype(m.float64)
        check(lambda m: m.tensor([1j, 2]))
        check(lambda m: m.ones(2) * 1j)
    finally:
        for m in (strata, torch):
            m.set_default_dtype(m.float32)


# --- creation, conversion, printing --------------------------------------------------------------
@pytest.mark.parametrize("make", [
    lambda m: m.tensor([1 + 2j, 3]), lambda m: m.tensor([[1j], [2]], dtype=m.cdouble),
    lambda m: m.zeros(2, 3, dtype=m.cfloat), lambda m: m.ones(2, dtype=m.complex128),
    lambda m: m.full((2,), 1 - 1j), lambda m: m.full((2,), 3, dtype=m.cfloat),
    lambda m: m.eye(2, dtype=m.cfloat), lambda m: m.linspace(0, 1, 5, dtype=m.cfloat),
    lambda m: m.from_numpy(Z.copy()), lambda m: m.tensor(Z).to(m.cdouble),
    lambda m: m.tensor([1, 2]).to(m.cdouble), lambda m: m.tensor(Z).new_zeros(2),
    lambda m: m.zeros_like(m.tensor(Z)), lambda m: m.tensor(Z).cdouble(),
    lambda m: m.tensor(Z, dtype=m.cdouble).cfloat(),
])
def test_creation(make):
    check(make)


def test_conversions_to_python_and_numpy():
    s, t = strata.tensor(Z), torch.tensor(Z)
    assert s[0].item() == t[0].item() and isinstance(s[0].item(), complex)
    assert s.tolist() == t.tolist()
    assert complex(s[1]) == complex(t[1])
    np.testing.assert_array_equal(s.numpy(), t.numpy())
    assert s.numpy().dtype == np.complex64
    assert s.type() == t.type() == "torch.ComplexFloatTensor"
    assert float(strata.tensor(2 + 0j)) == float(torch.tensor(2 + 0j))
    check_error(lambda m: float(m.tensor(1 + 1j)))
    assert strata.is_complex(s) and s.is_complex() and not strata.ones(1).is_complex()


@pytest.mark.parametrize("values", [
    [1.5 + 2j, -3 - 4.25j, 0j], [[1 + 1j, 2], [1e10j, 3]], [1 + 2j, float("nan") + 1j],
    [1.123456 + 2j, 3], [1e-5 + 1j, 2.5], [0.1 + 0.2j] * 1200,
])
@pytest.mark.parametrize("dtype", COMPLEX)
def test_printing(values, dtype):
    s = strata.tensor(values, dtype=getattr(strata, dtype))
    t = torch.tensor(values, dtype=getattr(torch, dtype))
    assert repr(s) == repr(t).replace("torch.", "strata.")


def test_scalar_and_grad_printing():
    s = strata.tensor(1 + 1j, requires_grad=True) * 2
    t = torch.tensor(1 + 1j, requires_grad=True) * 2
    assert repr(s) == repr(t).replace("torch.", "strata.")


# --- views and parts -----------------------------------------------------------------------------
def test_real_imag_are_views_sharing_memory():
    for m in (strata, torch):
        z = m.tensor(Z.copy())
        z.real[0] = 10.0
        z.imag[1] = -1.0
        m.view_as_real(z)[2, 0] = 7.0
        assert z[0].item() == 10 + 2j and z[1].item() == 3 - 1j and z[2].item() == 7 + 0.25j
    s, t = strata.tensor(Z), torch.tensor(Z)
    assert s.real.stride() == t.real.stride() and s.imag.storage_offset() == 1
    assert strata.view_as_real(s).stride() == torch.view_as_real(t).stride()


@pytest.mark.parametrize("fn", [
    lambda m: m.tensor([1.0]).imag, lambda m: m.view_as_real(m.ones(2)),
    lambda m: m.view_as_complex(m.ones(3)), lambda m: m.view_as_complex(m.ones(2, 2).t()),
    lambda m: m.view_as_complex(m.ones(2, 2, dtype=m.int64)),
    lambda m: m.complex(m.ones(2), m.ones(2, dtype=m.float64)),
    lambda m: m.complex(m.ones(2, dtype=m.int64), m.ones(2, dtype=m.int64)),
    lambda m: m.polar(m.ones(2), m.ones(2, dtype=m.int64)),
])
def test_view_and_construction_errors(fn):
    check_error(fn)


# --- ops undefined on complex numbers ------------------------------------------------------------
@pytest.mark.parametrize("fn", [
    lambda m, z: z < 1, lambda m, z: z >= z, lambda m, z: z.max(), lambda m, z: z.min(),
    lambda m, z: z.max(0), lambda m, z: z.amax(), lambda m, z: z.argmax(), lambda m, z: z.argmin(),
    lambda m, z: z.sort(), lambda m, z: z.argsort(), lambda m, z: m.topk(z, 1),
    lambda m, z: z.clamp(0, 1), lambda m, z: m.relu(z), lambda m, z: m.maximum(z, z),
    lambda m, z: m.sign(z), lambda m, z: m.floor(z), lambda m, z: z.round(), lambda m, z: z % 2,
    lambda m, z: z // 2, lambda m, z: m.atan2(z, z), lambda m, z: z.abs_(),
    lambda m, z: z.nansum(), lambda m, z: m.zeros(2).fill_(1j), lambda m, z: m.zeros(2).add_(z),
    lambda m, z: m.arange(3, dtype=m.cfloat), lambda m, z: m.sum(z).backward(),
])
def test_errors_match_torch(fn):
    s_err, t_err = check_error(fn, Z)
    assert str(s_err).replace("strata", "torch") == str(t_err)


def test_error_leaves_the_tensor_untouched():
    for m in (strata, torch):
        x = m.zeros(2)
        with pytest.raises(RuntimeError):
            x.add_(m.tensor(Z[:2]))
        assert x.tolist() == [0.0, 0.0]


# --- arithmetic and reductions -------------------------------------------------------------------
@pytest.mark.parametrize("fn", [
    lambda m, z: z + z * 2j - 1, lambda m, z: z / (z + 1), lambda m, z: -z, lambda m, z: z ** 2,
    lambda m, z: z ** 0.5, lambda m, z: 2 ** z, lambda m, z: z.exp(), lambda m, z: z.log(),
    lambda m, z: z.sqrt(), lambda m, z: z.sin(), lambda m, z: z.cos(), lambda m, z: z.tanh(),
    lambda m, z: z.abs(), lambda m, z: z.angle(), lambda m, z: z.sgn(), lambda m, z: z.conj(),
    lambda m, z: z.sum(), lambda m, z: z.mean(), lambda m, z: z.prod(), lambda m, z: z.var(),
    lambda m, z: z.std(), lambda m, z: z.norm(), lambda m, z: m.linalg.vector_norm(z, 1),
    lambda m, z: z.cumsum(0), lambda m, z: z == z.conj(), lambda m, z: z != 1j,
    lambda m, z: m.isfinite(z), lambda m, z: z.isreal(), lambda m, z: m.vdot(z, z),
    lambda m, z: z.reshape(3, 1) @ z.reshape(1, 3), lambda m, z: m.stack([z, z]).view(6),
    lambda m, z: m.cat([z, z])[m.cat([z, z]).real > 0], lambda m, z: z.flip(0).roll(1),
    lambda m, z: m.where(z.real > 0, z, 0), lambda m, z: z.masked_fill(z.imag < 0, 1j),
    lambda m, z: z.to(m.float64), lambda m, z: m.allclose(z, z),
])
@pytest.mark.filterwarnings("ignore:Casting complex values")
def test_ops_match_torch(fn):
    check(fn, Z)


@settings(max_examples=25, deadline=None)
@given(shape=st.lists(st.integers(1, 4), min_size=0, max_size=3),
       dtype=st.sampled_from(COMPLEX), other=st.sampled_from(REAL[1:6] + REAL[8:] + COMPLEX),
       seed=st.integers(0, 2 ** 16))
def test_binary_promotion_and_values(shape, dtype, other, seed):
    """Random shapes and dtypes: add/mul/div of a complex tensor with any numeric dtype."""
    rng = np.random.default_rng(seed)
    z = np.asarray(rng.standard_normal(shape) + 1j * rng.standard_normal(shape), dtype)
    x = np.asarray(rng.uniform(1, 3, shape), other)
    for fn in (lambda m, a, b: a + b, lambda m, a, b: a * b, lambda m, a, b: b / a):
        check(fn, z, x, rtol=1e-4, atol=1e-5)


# --- gradients with complex leaves ---------------------------------------------------------------
GRAD_CASES = {
    "mul": lambda m, z: z * z.conj() * (2 + 1j), "div": lambda m, z: (1 + 2j) / z,
    "exp": lambda m, z: z.exp(), "log": lambda m, z: z.log(), "sqrt": lambda m, z: z.sqrt(),
    "sin": lambda m, z: z.sin(), "cos": lambda m, z: z.cos(), "tanh": lambda m, z: z.tanh(),
    "pow": lambda m, z: z ** 3, "pow-half": lambda m, z: z.pow(0.5), "abs": lambda m, z: z.abs(),
    "angle": lambda m, z: z.angle(), "real": lambda m, z: z.real * 2, "imag": lambda m, z: z.imag,
    "view_as_real": lambda m, z: m.view_as_real(z), "sum": lambda m, z: z.sum(),
    "mean": lambda m, z: z.mean(), "prod": lambda m, z: z.prod(), "sgn": lambda m, z: z.sgn(),
    "matmul": lambda m, z: z.reshape(3, 1) @ z.reshape(1, 3), "neg-sub": lambda m, z: 1 - (-z),
    "reshape-index-cat": lambda m, z: m.cat([z.reshape(1, 3), z[None, ::2].repeat(1, 1)], 1),
    "stack": lambda m, z: m.stack([z, z * 1j]), "var": lambda m, z: z.var(),
    "norm": lambda m, z: z.norm(), "conj_physical": lambda m, z: m.conj_physical(z),
    "fft": lambda m, z: m.fft.fft(z), "ifft": lambda m, z: m.fft.ifft(z, n=5, norm="ortho"),
    "irfft": lambda m, z: m.fft.irfft(z), "hfft": lambda m, z: m.fft.hfft(z, n=4),
    "fftn": lambda m, z: m.fft.fftn(z.reshape(3, 1)),
}
ZD = np.array([1 + 2j, 3 - 1j, 0.5 + 0.5j])


def _real_loss(m, out, seed=0):
    """A real loss: the dot product of (real, imag) with a fixed random cotangent."""
    parts = m.view_as_real(out) if out.is_complex() else out
    weights = np.random.default_rng(seed).standard_normal(tuple(parts.shape))
    return (parts * m.tensor(weights, dtype=parts.dtype)).sum()


@pytest.mark.parametrize("name", GRAD_CASES)
def test_complex_gradient_matches_torch(name):
    fn = GRAD_CASES[name]
    grads = []
    for m in (strata, torch):
        z = m.tensor(ZD, requires_grad=True)
        _real_loss(m, fn(m, z)).backward()
        grads.append(z.grad)
    assert_same(grads[0], grads[1], rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("name", GRAD_CASES)
def test_complex_gradcheck(name):
    fn = GRAD_CASES[name]
    z = strata.tensor(ZD, requires_grad=True)
    assert strata.autograd.gradcheck(lambda z: fn(strata, z), (z,))


def test_gradcheck_catches_a_wrong_complex_formula():
    """A formula without the conjugate (grad * z instead of grad * conj(z)) fails the check."""
    class WrongSquare(strata.autograd.Function):
        @staticmethod
        def forward(ctx, z):
            ctx.save_for_backward(z)
            return z * z

        @staticmethod
        def backward(ctx, grad):
            (z,) = ctx.saved_tensors
            return grad * 2 * z

    z = strata.tensor(ZD, requires_grad=True)
    assert not strata.autograd.gradcheck(WrongSquare.apply, (z,), raise_exception=False)


def test_gradient_of_a_real_input_through_complex_ops_is_real():
    for m in (strata, torch):
        x = m.tensor([1.0, -2.0, 0.5], dtype=m.float64, requires_grad=True)
        ((x * (1 + 2j)).exp().abs().sum()).backward()
        assert dtype_name(x.grad.dtype) == "float64"
    check(lambda m: m.complex(m.tensor([1.0, 2.0]), m.tensor([3.0, 4.0])).requires_grad_())
    check_error(lambda m: m.tensor(ZD, requires_grad=True).sum().backward())


def test_random_complex_tensors():
    """randn draws each part with variance 1/2 (E|z|^2 = 1), rand each part in [0, 1), and
    normal_(mean, std) each part around mean with std / sqrt(2), as PyTorch."""
    strata.manual_seed(0)
    z = strata.randn(40000, dtype=strata.cfloat)
    assert z.dtype is strata.complex64 and tuple(z.shape) == (40000,)
    assert abs((z.abs() ** 2).mean().item() - 1) < 0.03
    u = strata.rand(2, 3, dtype=strata.cdouble)
    assert u.dtype is strata.complex128 and 0 <= u.real.min().item() and u.imag.max().item() < 1
    w = strata.empty(40000, dtype=strata.cdouble).normal_(1.0, 2.0)
    for part in (w.real, w.imag):
        assert abs(part.mean().item() - 1) < 0.05 and abs(part.std().item() - 2 ** 0.5) < 0.05


def test_checkpoints_with_complex_tensors(tmp_path):
    """.pt files carry complex storages both ways between strata and PyTorch; safetensors has no
    complex dtype, so saving one there is a clear error."""
    s_path, t_path = tmp_path / "s.pt", tmp_path / "t.pt"
    strata.save({"z": strata.tensor(Z), "w": strata.tensor(Z).cdouble()}, s_path)
    loaded = torch.load(s_path)
    assert_same(strata.load(s_path)["w"], loaded["w"])
    torch.save({"z": torch.tensor(Z)}, t_path)
    assert_same(strata.load(t_path)["z"], loaded["z"])
    with pytest.raises(TypeError, match="safetensors has no complex dtypes"):
        strata.save({"z": strata.tensor(Z)}, tmp_path / "z.safetensors")


def test_assigning_real_and_imag():
    for m in (strata, torch):
        z = m.tensor(Z.copy())
        z.real = m.tensor([1.0, 2.0, 3.0])
        z.imag = 0.5
        assert z.tolist() == [1 + 0.5j, 2 + 0.5j, 3 + 0.5j]
    check_error(lambda m: setattr(m.ones(2), "imag", 1.0))


def test_sgn_of_real_and_bool_tensors_matches_torch():
    """``sgn`` of a real tensor is ``sign``; of a bool tensor, the values themselves (as torch)."""
    check(lambda m: m.tensor([True, False]).sgn())
    check(lambda m: m.tensor([-2, 0, 3]).sgn())
    check(lambda m: m.tensor([-0.5, 0.0, float("nan")]).sgn())
