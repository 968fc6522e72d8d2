"""Note [BLAS provider] (backends/cpu/blas.py): the products strata drives itself run on MKL
where the ``mkl`` wheel is installed, else on NumPy's OpenBLAS; ``STRATA_BLAS`` picks. Each
provider runs in a fresh process (a process loads one), and both agree with PyTorch."""

import importlib.metadata
import os
import subprocess
import sys

import numpy as np
import pytest
import torch

import strata
from strata import config
from strata.backends.cpu import blas

SRC = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src")

# products past the native pool's split threshold (so they reach the provider's GEMM), a
# transposed operand, a batched product, and a convolution through the generated loops
CHILD = r"""
import sys, numpy as np, strata
from strata.backends.cpu import blas
rng = np.random.default_rng(0)
x, w = rng.standard_normal((64, 784), np.float32), rng.standard_normal((512, 784), np.float32)
g = rng.standard_normal((64, 512), np.float32)
q, k = rng.standard_normal((8, 128, 64), np.float32), rng.standard_normal((8, 128, 64), np.float32)
img, kern = rng.standard_normal((8, 3, 28, 28), np.float32), rng.standard_normal((16, 3, 3, 3), np.float32)
t = strata.tensor
outs = {"linear": strata.nn.functional.linear(t(x), t(w)),
        "weight_grad": t(g).T @ t(x),
        "bmm": t(q) @ t(k).transpose(1, 2),
        "conv": strata.nn.functional.conv2d(t(img), t(kern), padding=1)}
again = strata.nn.functional.linear(t(x), t(w))
assert np.array_equal(again.numpy(), outs["linear"].numpy()), "bits moved between calls"
np.savez(sys.argv[1], provider=blas.provider(), **{n: o.numpy() for n, o in outs.items()})
"""


def _mkl_installed():
    try:
        importlib.metadata.version("mkl")
    except importlib.metadata.PackageNotFoundError:
        return False
    return True


def _run(tmp_path, choice):
    out = tmp_path / f"{choice}.npz"
    env = {**os.environ, "STRATA_BLAS": choice, "PYTHONPATH": SRC}
    done = subprocess.run([sys.executable, "-c", CHILD, str(out)], env=env, text=True,
                          capture_output=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    return dict(np.load(out)), done.stderr


@pytest.mark.parametrize("choice", ["openblas", "auto", "mkl"])
def test_each_provider_agrees_with_torch(tmp_path, choice):
    if choice == "mkl" and not _mkl_installed():
        pytest.skip("the mkl wheel is not installed (pip install strata[mkl])")
    got, _ = _run(tmp_path, choice)
    want_provider = "openblas" if choice == "openblas" else (
        "mkl" if _mkl_installed() and (choice == "mkl" or blas._intel_cpu()) else "openblas")
    assert str(got["provider"]) == want_provider
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((64, 784), np.float32), rng.standard_normal((512, 784), np.float32)
    g = rng.standard_normal((64, 512), np.float32)
    q, k = (rng.standard_normal((8, 128, 64), np.float32),
            rng.standard_normal((8, 128, 64), np.float32))
    img, kern = (rng.standard_normal((8, 3, 28, 28), np.float32),
                 rng.standard_normal((16, 3, 3, 3), np.float32))
    t = torch.from_numpy
    want = {"linear": torch.nn.functional.linear(t(x), t(w)), "weight_grad": t(g).T @ t(x),
            "bmm": t(q) @ t(k).transpose(1, 2),
            "conv": torch.nn.functional.conv2d(t(img), t(kern), padding=1)}
    for name, value in want.items():
        assert got[name].dtype == np.float32 and got[name].shape == tuple(value.shape), name
        np.testing.assert_allclose(got[name], value.numpy(), rtol=1e-4, atol=2e-4, err_msg=name)


def test_mkl_without_the_wheel_warns_and_keeps_openblas(monkeypatch):
    monkeypatch.setattr(config, "blas", "mkl")
    monkeypatch.setattr(blas, "_mkl_path", lambda: None)
    blas._mkl.cache_clear()
    blas.gemm.cache_clear()
    try:
        with pytest.warns(UserWarning, match="STRATA_BLAS=mkl"):
            assert blas._mkl() is None
        assert blas.provider() == "openblas"
    finally:
        blas._mkl.cache_clear()
        blas.gemm.cache_clear()


def test_auto_keeps_openblas_off_intel(monkeypatch):
    """``auto`` picks MKL on Intel CPUs only (where it was measured); ``mkl`` insists."""
    monkeypatch.setattr(blas, "_intel_cpu", lambda: False)
    monkeypatch.setattr(config, "blas", "auto")
    blas._mkl.cache_clear()
    blas.gemm.cache_clear()
    try:
        assert blas._mkl() is None and blas.provider() == "openblas"
    finally:
        blas._mkl.cache_clear()
        blas.gemm.cache_clear()


def test_an_unknown_choice_warns_and_means_auto():
    env = {**os.environ, "STRATA_BLAS": "cublas", "PYTHONPATH": SRC}
    done = subprocess.run([sys.executable, "-c", "import strata; print(strata.config.blas)"],
                          env=env, text=True, capture_output=True, timeout=120, check=True)
    assert done.stdout.split()[-1] == "auto"
    assert "STRATA_BLAS should be auto, mkl or openblas, got 'cublas'" in done.stderr


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("layout", ["plain", "a_transposed", "b_transposed", "b_broadcast",
                                    "out_of_step"])
def test_batched_products_agree_with_torch(dtype, layout):
    """Note [Batched GEMM] (native_pool.py): a batch past the split threshold runs as strided
    batch calls where the BLAS has them (MKL), as one call a matrix where it has not or where
    the batch's strides do not step past each matrix (a broadcast operand); all agree."""
    rng = np.random.default_rng(3)
    a = rng.standard_normal((64, 64, 32)).astype(dtype)
    b = rng.standard_normal((64, 32, 48)).astype(dtype)
    sa, sb = strata.tensor(a), strata.tensor(b)
    ta, tb = torch.from_numpy(a), torch.from_numpy(b)
    if layout == "a_transposed":
        sa = strata.tensor(a.transpose(0, 2, 1).copy()).transpose(1, 2)
    elif layout == "b_transposed":
        sb = strata.tensor(b.transpose(0, 2, 1).copy()).transpose(1, 2)
    elif layout == "b_broadcast":
        sb, tb = sb[:1].expand(64, -1, -1), tb[:1].expand(64, -1, -1)
    elif layout == "out_of_step":      # every other matrix of a batch twice as long
        wide = rng.standard_normal((128, 64, 32)).astype(dtype)
        sa, ta = strata.tensor(wide)[::2], torch.from_numpy(wide)[::2]
    got = strata.bmm(sa, sb).numpy()
    want = torch.bmm(ta, tb).numpy()
    assert got.dtype == want.dtype and got.shape == want.shape
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * 10)
