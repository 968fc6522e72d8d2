"""The FFTs on opencl (compile/inductor/opencl_fft.py: Stockham radix-4/2/3/5/7 passes,
Bluestein's chirp-z for lengths with another prime factor) against PyTorch's CPU (pocketfft):
every length, dim, norm mode and the torch.fft functions over the three primitives, within a
tolerance scaled by log2(n) * eps; gradients; stft/istft."""

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import strata

pytestmark = pytest.mark.skipif(not strata.opencl.is_available(),
                                reason="needs pyopencl with an OpenCL driver (pip install "
                                       "'strata[opencl]' brings PoCL)")

EPS = {"complex64": np.finfo(np.float32).eps, "complex128": np.finfo(np.float64).eps,
       "float32": np.finfo(np.float32).eps, "float64": np.finfo(np.float64).eps}
NORMS = (None, "backward", "ortho", "forward")


def signal(shape, dtype, seed):
    rng = np.random.default_rng(seed)
    if dtype.startswith("complex"):
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def passes(points):
    """The rounding steps a transform of ``points`` goes through: log2(points) for lengths of
    the Stockham radices (2, 3, 5, 7); Bluestein's chirp-z (any other prime factor) runs three
    transforms of m >= 2 * points - 1 points and three chirp products. (PoCL stayed inside
    log2(points) there too; NVIDIA's driver, contracting to FMAs, gave 4.5e-12 for 1022 points
    in float64 against that bound's 3.0e-12.)"""
    rest = points
    for p in (2, 3, 5, 7):
        while rest % p == 0:
            rest //= p
    if rest == 1:
        return max(math.log2(max(points, 2)), 1)
    return 3 * math.log2(1 << (2 * points - 2).bit_length()) + 3


def assert_close_fft(got, want, points):
    """|got - want| <= 8 * passes(points) * eps * max|want| (an FFT's error bound grows with
    the number of passes)."""
    assert got.device.type == "opencl"
    assert str(got.dtype) == str(want.dtype).replace("torch", "strata")
    got, want = got.detach().cpu().numpy(), want.resolve_conj().detach().numpy()
    assert got.shape == want.shape
    eps = EPS[got.dtype.name]
    bound = 8 * passes(points) * eps * max(np.abs(want).max(initial=0), 1)
    assert np.abs(got - want).max(initial=0) <= bound, (np.abs(got - want).max(), bound)


def run_both(fn, x):
    return fn(strata, strata.tensor(x).to("opencl")), fn(torch, torch.tensor(x))


LENGTHS = st.one_of(st.integers(1, 70), st.sampled_from([128, 256, 343, 1000, 1001, 1024, 1125]))


@settings(max_examples=30, deadline=None)
@given(n=LENGTHS, batch=st.lists(st.integers(1, 3), max_size=2), data=st.data(),
       dtype=st.sampled_from(["complex64", "complex128"]), norm=st.sampled_from(NORMS),
       inverse=st.booleans(), seed=st.integers(0, 2**16))
def test_fft_and_ifft_of_any_length_and_dim(n, batch, data, dtype, norm, inverse, seed):
    shape = list(batch)
    dim = data.draw(st.integers(0, len(shape)))
    shape.insert(dim, n)
    x = signal(shape, dtype, seed)
    name = "ifft" if inverse else "fft"
    got, want = run_both(lambda m, t: getattr(m.fft, name)(t, dim=dim, norm=norm), x)
    assert_close_fft(got, want, n)


@settings(max_examples=20, deadline=None)
@given(n=st.one_of(st.integers(2, 40), st.sampled_from([64, 100, 512])),
       rows=st.integers(1, 3), dtype=st.sampled_from(["float32", "float64"]),
       norm=st.sampled_from(NORMS), size=st.one_of(st.none(), st.integers(1, 40)),
       seed=st.integers(0, 2**16))
def test_real_transforms(n, rows, dtype, norm, size, seed):
    """rfft (r2c, onesided), irfft and hfft (c2r, with the output length n or the default)."""
    x = signal((rows, n), dtype, seed)
    got, want = run_both(lambda m, t: m.fft.rfft(t, n=size, norm=norm), x)
    assert_close_fft(got, want, size or n)
    z = signal((rows, n), "complex64" if dtype == "float32" else "complex128", seed)
    for name in ("irfft", "hfft"):
        got, want = run_both(lambda m, t, name=name: getattr(m.fft, name)(t, n=size, norm=norm),
                             z)
        assert_close_fft(got, want, size or 2 * (n - 1))


@pytest.mark.parametrize("name, kwargs", [
    ("fft2", {}), ("ifft2", {"norm": "ortho"}), ("fftn", {"dim": (0, 2)}),
    ("ifftn", {"s": (5, 8), "dim": (1, 2)}), ("rfftn", {}), ("rfft2", {"norm": "forward"}),
    ("irfftn", {"s": (4, 6, 9)}), ("irfft2", {}), ("hfft", {"dim": 1}), ("ihfft", {}),
    ("fftshift", {}), ("ifftshift", {"dim": 1}), ("rfftn", {"dim": (0, 1)}),
    ("rfft2", {"s": (5, 8), "norm": "ortho"}), ("rfft", {"dim": 0})])
def test_multi_dim_functions_match_torch(name, kwargs):
    real = name in ("rfft", "rfftn", "rfft2", "ihfft")     # even last dims: a half-length transform
    x = signal((4, 6, 7), "float64" if real else "complex128", 11)
    got, want = run_both(lambda m, t: getattr(m.fft, name)(t, **kwargs), x)
    assert_close_fft(got, want, 4 * 6 * 9)


def test_radices_cover_smooth_lengths_only():
    from strata.compile.inductor.opencl_fft import radices
    assert radices(1024) == [4] * 5 and radices(2048) == [4] * 5 + [2]
    assert radices(1000) == [4, 2, 5, 5, 5] and radices(1) == []
    assert radices(22) is None and radices(1009) is None


def test_long_transforms_stay_accurate():
    """2^14 points (7 radix-4 passes) and a prime length (Bluestein through 2^12 points)."""
    for n in (1 << 14, 1543):
        x = signal((n,), "complex64", n)
        got, want = run_both(lambda m, t: m.fft.fft(t), x)
        assert_close_fft(got, want, n)


def test_primitives_directly():
    x = signal((3, 5), "float64", 12)
    got, want = run_both(lambda m, t: m._fft_r2c(t, [0, 1], 2, False), x)
    assert_close_fft(got, want, 15)
    z = signal((2, 4), "complex128", 13)
    got, want = run_both(lambda m, t: m._fft_c2r(t, [1], 1, 7), z)
    assert_close_fft(got, want, 7)
    got, want = run_both(lambda m, t: m._fft_c2c(t[:, ::2], [0, 1], 0, False), z)
    assert_close_fft(got, want, 4)


def test_bad_input_raises_as_torch():
    x = strata.ones(4, device="opencl")
    for fn in (lambda m, t: m.fft.fft(t, n=0), lambda m, t: m.fft.fft(t, norm="sideways"),
               lambda m, t: m.fft.fft(t, dim=3), lambda m, t: m.fft.rfft(t.to(m.complex64))):
        with pytest.raises(Exception) as want:
            fn(torch, torch.ones(4))
        with pytest.raises(type(want.value)) as got:
            fn(strata, x)
        assert str(want.value).split("(")[0][:20] in str(got.value)
    np.testing.assert_array_equal(x.cpu().numpy(), np.ones(4, "float32"))


def test_gradients_match_torch():
    x = signal((3, 6), "float64", 14)
    z = signal((4, 5), "complex128", 15)

    def grads(m, on):
        t, c = on(x).requires_grad_(), on(z).requires_grad_()
        y = m.fft.rfft(t, norm="ortho")
        loss = (m.fft.irfft(y * y, n=7) ** 2).sum() + m.fft.fft2(t).abs().sum()
        out = m.fft.ifftn(c, norm="forward")
        loss = loss + (out.real ** 2 + out.imag.sin()).sum() + m.fft.hfft(c).sum()
        loss.backward()
        return t.grad, c.grad

    for got, want in zip(grads(strata, lambda a: strata.tensor(a).to("opencl")),
                         grads(torch, torch.tensor)):
        assert got.device.type == "opencl"
        np.testing.assert_allclose(got.cpu().numpy(), want.resolve_conj().numpy(), rtol=1e-9,
                                   atol=1e-11)


@pytest.mark.parametrize("center, pad_mode", [(False, "reflect"), (True, "constant")])
def test_stft_and_istft_round_trip(center, pad_mode):
    """(center with the default reflect padding needs ``reflection_pad1d`` on opencl.)"""
    sig = signal((2, 64), "float32", 16)
    window = (np.hanning(16) + 0.1).astype("float32")

    def spectrum(m, t):
        w = m.tensor(window).to(t.device)
        return m.stft(t, 16, hop_length=4, window=w, center=center, pad_mode=pad_mode,
                      return_complex=True)

    got, want = run_both(spectrum, sig)
    assert_close_fft(got, want, 16)

    def round_trip(m, t):
        w = m.tensor(window).to(t.device)
        return m.istft(spectrum(m, t), 16, hop_length=4, window=w, center=center)

    got, want = run_both(round_trip, sig)
    assert_close_fft(got, want, 16)
