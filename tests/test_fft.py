"""torch.fft, stft/istft, linalg.eig and SparseAdam against PyTorch: values and dtypes over
random shapes, sizes and norms (hypothesis), PyTorch's errors, and gradients (float64, against
torch and finite differences). The op-db samples (tests/op_samples/fft.py) cover each op too."""

import warnings

import numpy as np
import pytest
import torch
from helpers import assert_same, check, check_error
from hypothesis import given, settings
from hypothesis import strategies as st

import strata

NORMS = st.sampled_from([None, "backward", "ortho", "forward"])
ONE_DIM = ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft")
N_DIM = ("fftn", "ifftn", "rfftn", "irfftn", "fft2", "ifft2", "rfft2", "irfft2")
TAKES_REAL_ONLY = ("rfft", "ihfft", "rfftn", "rfft2")


def _signal(shape, complex_, dtype, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape)
    if complex_:
        x = x + 1j * rng.standard_normal(shape)
    return np.asarray(x, {"float32": np.complex64, "float64": np.complex128}[dtype]
                      if complex_ else dtype)


@settings(max_examples=40, deadline=None)
@given(name=st.sampled_from(ONE_DIM), shape=st.lists(st.integers(1, 6), min_size=1, max_size=3),
       n=st.one_of(st.none(), st.integers(2, 9)), norm=NORMS, complex_=st.booleans(),
       dtype=st.sampled_from(["float32", "float64"]), data=st.data())
def test_one_dim_transforms(name, shape, n, norm, complex_, dtype, data):
    if name in TAKES_REAL_ONLY:
        complex_ = False
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    if name in ("irfft", "hfft") and n is None and shape[dim] < 2:
        n = 2
    x = _signal(shape, complex_, dtype, len(shape))
    check(lambda m, x: getattr(m.fft, name)(x, n=n, dim=dim, norm=norm), x,
          rtol=1e-4 if dtype == "float32" else 1e-9, atol=1e-4 if dtype == "float32" else 1e-9)


@settings(max_examples=40, deadline=None)
@given(name=st.sampled_from(N_DIM), shape=st.lists(st.integers(2, 5), min_size=2, max_size=3),
       norm=NORMS, complex_=st.booleans(), use_s=st.booleans(), seed=st.integers(0, 99))
def test_n_dim_transforms(name, shape, norm, complex_, use_s, seed):
    if name in TAKES_REAL_ONLY:
        complex_ = False
    x = _signal(shape, complex_, "float64", seed)
    s = tuple(np.random.default_rng(seed).integers(2, 7, 2)) if use_s else None
    s = None if s is None else tuple(int(v) for v in s)
    check(lambda m, x: getattr(m.fft, name)(x, s=s, norm=norm), x, rtol=1e-9, atol=1e-9)


def test_round_trips_and_helpers():
    x = np.random.default_rng(0).standard_normal((4, 6))
    check(lambda m, x: m.fft.irfft(m.fft.rfft(x), n=6), x)
    check(lambda m, x: m.fft.ifftn(m.fft.fftn(x)), x)
    check(lambda m, x: m.fft.ifftshift(m.fft.fftshift(x)), x)
    for n in (1, 2, 5, 8):
        check(lambda m, n=n: m.fft.fftfreq(n, 0.25))
        check(lambda m, n=n: m.fft.rfftfreq(n, dtype=m.float64))
    check(lambda m: m.fft.fftn(m.tensor(2.5)))


@pytest.mark.parametrize("fn", [
    lambda m, x: m.fft.rfft(x.to(m.cfloat)), lambda m, x: m.fft.ihfft(x.to(m.cfloat)),
    lambda m, x: m.fft.rfftn(x.to(m.cfloat)), lambda m, x: m.fft.fft(x, n=0),
    lambda m, x: m.fft.fft(x, norm="bad"), lambda m, x: m.fft.fft(x, dim=3),
    lambda m, x: m.fft.irfft(m.ones(1, dtype=m.cfloat)), lambda m, x: m.fft.fftn(x, s=(2, 2, 2)),
    lambda m, x: m.fft.fftn(x, dim=(0, 0)), lambda m, x: m.fft.fft(x.half()),
    lambda m, x: m.fft.fft(x.bfloat16()), lambda m, x: m.fft.fft(m.tensor(1.0)),
    lambda m, x: m.fft.fftn(x, s=(2,), dim=(0, 1)),
    lambda m, x: m.fft.fftfreq(4, dtype=m.int64),
])
def test_fft_errors(fn):
    s_err, t_err = check_error(fn, np.ones((3, 4), np.float32))
    assert str(s_err) == str(t_err)


@pytest.mark.parametrize("fn", [
    lambda m, x: m.fft.rfft(x, n=7, norm="ortho"), lambda m, x: m.fft.irfft(m.fft.rfft(x), n=5),
    lambda m, x: m.fft.hfft(m.fft.fft(x)), lambda m, x: m.fft.rfftn(x.reshape(2, 3)),
    lambda m, x: m.fft.irfft2(m.fft.rfft2(x.reshape(3, 2)), s=(3, 2)),
    lambda m, x: m.fft.ifft(x, n=4, norm="forward"), lambda m, x: m.fft.fftshift(x, 0),
])
def test_gradients_vs_torch_and_finite_differences(fn):
    x0 = np.random.default_rng(1).standard_normal(6)
    grads = []
    for m in (strata, torch):
        x = m.tensor(x0, requires_grad=True)
        out = fn(m, x).resolve_conj()
        parts = m.view_as_real(out) if out.is_complex() else out
        w = m.tensor(np.random.default_rng(2).standard_normal(tuple(parts.shape)))
        (parts * w).sum().backward()
        grads.append(x.grad)
    assert_same(grads[0], grads[1], rtol=1e-9, atol=1e-12)
    x = strata.tensor(x0, requires_grad=True)
    assert strata.autograd.gradcheck(lambda x: fn(strata, x), (x,))


# --- stft / istft --------------------------------------------------------------------------------
def _quiet(fn):
    def run(m, *args):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn(m, *args)
    return run


@settings(max_examples=25, deadline=None)
@given(n_fft=st.integers(4, 12), hop=st.integers(1, 4), win=st.integers(1, 12),
       center=st.booleans(), normalized=st.booleans(), batched=st.booleans(),
       pad_mode=st.sampled_from(["reflect", "constant", "replicate", "circular"]))
def test_stft_matches_torch(n_fft, hop, win, center, normalized, batched, pad_mode):
    win = min(win, n_fft)
    x = np.random.default_rng(n_fft).standard_normal((2, 30) if batched else (30,))
    window = np.hanning(win + 2)[1:-1]
    check(_quiet(lambda m, x, w: m.stft(x, n_fft, hop, win, w, center, pad_mode, normalized,
                                        return_complex=True)), x, window, rtol=1e-9, atol=1e-9)


@settings(max_examples=20, deadline=None)
@given(n_fft=st.integers(4, 12), hop_fraction=st.sampled_from([2, 4]), center=st.booleans(),
       normalized=st.booleans(), length=st.one_of(st.none(), st.integers(20, 40)))
def test_istft_inverts_stft_like_torch(n_fft, hop_fraction, center, normalized, length):
    hop = max(1, n_fft // hop_fraction)
    x = np.random.default_rng(n_fft).standard_normal(32)
    window = np.hanning(n_fft + 1)[:-1] + 0.1

    def round_trip(m, x, w):
        spec = m.stft(x, n_fft, hop, window=w, center=center, normalized=normalized,
                      return_complex=True)
        return m.istft(spec, n_fft, hop, window=w, center=center, normalized=normalized,
                       length=length)
    check(_quiet(round_trip), x, window, rtol=1e-9, atol=1e-9)


def test_stft_istft_gradients():
    x0 = np.random.default_rng(3).standard_normal(24)
    w0 = np.hanning(9)[:-1]
    grads = []
    for m in (strata, torch):
        x = m.tensor(x0, requires_grad=True)
        w = m.tensor(w0, requires_grad=True)
        spec = m.stft(x, 8, 2, window=w, return_complex=True)
        y = m.istft(spec * (1 + 0.5j), 8, 2, window=w, length=24)
        (spec.abs().sum() + (y * y).sum()).backward()
        grads.append((x.grad, w.grad))
    assert_same(grads[0], grads[1], rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("fn", [
    lambda m, x: m.stft(x, 8), lambda m, x: m.stft(x, 64, center=False, return_complex=True),
    lambda m, x: m.stft(x, 8, hop_length=0, return_complex=True),
    lambda m, x: m.stft(x, 8, win_length=9, return_complex=True),
    lambda m, x: m.stft(x, 8, window=m.ones(5), return_complex=True),
    lambda m, x: m.stft(x.reshape(1, 2, 20), 8, return_complex=True),
    lambda m, x: m.stft(x, 8, return_complex=True, pad_mode="bad"),
    lambda m, x: m.stft(x.to(m.cfloat), 8, return_complex=True, onesided=True),
    lambda m, x: m.istft(m.stft(x, 8, return_complex=True).abs(), 8),
    lambda m, x: m.istft(m.stft(x, 8, return_complex=True), 8, window=m.zeros(8)),
    lambda m, x: m.istft(m.stft(x, 8, return_complex=True), 6),
    lambda m, x: m.istft(m.stft(x, 8, return_complex=True), 8, hop_length=9),
])
def test_stft_errors(fn):
    s_err, t_err = check_error(_quiet(fn), np.ones(40, np.float32))
    tail = str(t_err).split(" : ")[-1].split(") window")[-1]
    assert tail.strip(": ").split("\n")[0] in str(s_err)


def test_stft_warns_like_torch():
    """(PyTorch warns once per process, so only strata's warnings are checked.)"""
    with pytest.warns(UserWarning, match="A window was not provided"):
        strata.stft(strata.ones(20), 8, return_complex=True)
    with pytest.warns(UserWarning, match="return_complex=False is deprecated") as record:
        out = strata.stft(strata.ones(20), 8, window=strata.ones(8), return_complex=False)
    assert tuple(out.shape) == (5, 11, 2)
    assert record[0].filename == __file__   # points at the caller's line


# --- linalg.eig ----------------------------------------------------------------------------------
def _invariants(m, A):
    L, V = m.linalg.eig(A)
    return L.sum(-1), L.prod(-1), L.abs().sort(-1).values, (V.abs() ** 2).sum(-2)


@settings(max_examples=15, deadline=None)
@given(n=st.integers(1, 5), batch=st.lists(st.integers(1, 3), max_size=2),
       complex_=st.booleans(), seed=st.integers(0, 99))
def test_eig_matches_torch(n, batch, complex_, seed):
    A = _signal(tuple(batch) + (n, n), complex_, "float64", seed)
    check(_invariants, A, rtol=1e-8, atol=1e-8)
    s_L, s_V = strata.linalg.eig(strata.tensor(A))
    residual = strata.tensor(A).to(s_V.dtype) @ s_V - s_V * s_L.unsqueeze(-2)
    assert residual.abs().max().item() < 1e-8


def test_eig_gradients():
    A0 = np.random.default_rng(4).standard_normal((3, 3))
    grads = []
    for m in (strata, torch):
        A = m.tensor(A0, requires_grad=True)
        L, V = m.linalg.eig(A)
        loss = L.abs().sum() + (V.abs() ** 2 * m.arange(3.0)).sum() + m.linalg.eigvals(A).real.sum()
        loss.backward()
        grads.append(A.grad)
    assert_same(grads[0], grads[1], rtol=1e-8, atol=1e-10)
    A = strata.tensor(A0, requires_grad=True)
    assert strata.autograd.gradcheck(lambda A: strata.linalg.eigvals(A), (A,))


@pytest.mark.parametrize("fn", [
    lambda m, A: m.linalg.eig(A[:, :2].T), lambda m, A: m.linalg.eig(A * float("nan")),
    lambda m, A: m.linalg.eig(A.half()),
    lambda m, A: m.linalg.eig(m.tensor([[0.0, -1], [1, 0]], requires_grad=True))[1]
    .sum().abs().backward(),
])
def test_eig_errors(fn):
    s_err, t_err = check_error(fn, np.eye(3) + 0.5)
    assert str(s_err) == str(t_err)


# --- SparseAdam ----------------------------------------------------------------------------------
def _sparse_adam_run(m, steps=3, **kwargs):
    W = np.random.default_rng(0).standard_normal((6, 3)).astype(np.float32)
    emb = m.nn.Embedding(6, 3, sparse=True, padding_idx=5)
    with m.no_grad():
        emb.weight.copy_(m.tensor(W))
    opt = m.optim.SparseAdam(emb.parameters(), **kwargs)
    grads = []
    for i in range(steps):
        opt.zero_grad()
        (emb(m.tensor([[1, 2, 1], [4, 5, i]])) ** 2).sum().backward()
        grads.append(emb.weight.grad.to_dense())
        opt.step()
    return [emb.weight.detach(), opt.state[emb.weight]["exp_avg"],
            opt.state[emb.weight]["exp_avg_sq"]] + grads


@pytest.mark.parametrize("kwargs", [{}, {"lr": 0.1, "betas": (0.5, 0.9)},
                                    {"maximize": True, "eps": 1e-3}])
def test_sparse_adam_matches_torch(kwargs):
    check(lambda m: _sparse_adam_run(m, **kwargs))
    s = strata.nn.Embedding(4, 2, sparse=True)
    s(strata.tensor([1, 1])).sum().backward()
    assert s.weight.grad.is_sparse


@pytest.mark.parametrize("fn", [
    lambda m: m.optim.SparseAdam(m.nn.Linear(2, 2).parameters(), lr=0),
    lambda m: m.optim.SparseAdam(m.nn.Linear(2, 2).parameters(), eps=0),
    lambda m: m.optim.SparseAdam(m.nn.Linear(2, 2).parameters(), betas=(1.0, 0.9)),
    lambda m: m.optim.SparseAdam([m.zeros(2, dtype=m.cfloat, requires_grad=True)]),
])
def test_sparse_adam_argument_errors(fn):
    s_err, t_err = check_error(fn)
    assert str(s_err) == str(t_err)


def test_sparse_adam_refuses_dense_gradients_before_updating():
    for m in (strata, torch):
        lin = m.nn.Linear(2, 2)
        before = lin.weight.detach().clone()
        opt = m.optim.SparseAdam(lin.parameters())
        lin(m.ones(1, 2)).sum().backward()
        with pytest.raises(RuntimeError, match="SparseAdam does not support dense gradients, "
                                               "please consider Adam instead"):
            opt.step()
        assert m.equal(lin.weight, before)
