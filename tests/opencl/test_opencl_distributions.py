"""The opencl device's samplers (compile/inductor/opencl_samplers.py, randperm in
opencl_random.py) and its igamma/igammac/special.zeta kernels (opencl_special.py).

Samplers draw other numbers than the CPU (Philox, as CUDA's differ from PyTorch's CPU), so they
are checked statistically: with fixed seeds, the mean and variance of 20000 draws lie within a
few standard errors of the distribution's (bounds from its variance and kurtosis), and the same
seed gives the same draws. The special functions are compared with torch's CPU values.
"""

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import strata
from strata import distributions as SD

pytestmark = pytest.mark.skipif(not strata.opencl.is_available(),
                                reason="needs pyopencl with an OpenCL driver (pip install "
                                       "'strata[opencl]' brings PoCL)")

DRAWS = 20000
DTYPES = ["float32", "float64"]


def _full(value, dtype, n=DRAWS):
    return strata.full((n,), value, dtype=getattr(strata, dtype), device="opencl")


def _assert_moments(samples, mean, variance, excess_kurtosis):
    """Sample mean within 6 standard errors; sample variance within 6 of its own (its variance
    is sigma^4 (2 + excess kurtosis) / n for large n), plus float rounding."""
    x = samples.cpu().numpy().astype(np.float64)
    n = x.size
    assert abs(x.mean() - mean) <= 6 * math.sqrt(variance / n) + 1e-6 * abs(mean)
    spread = 6 * variance * math.sqrt((2 + excess_kurtosis) / n)
    assert abs(x.var() - variance) <= spread + 1e-5 * variance


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("alpha", [0.25, 1.0, 4.5, 80.0])
def test_standard_gamma_moments(dtype, alpha):
    strata.manual_seed(11)
    g = strata._standard_gamma(_full(alpha, dtype))
    assert g.device.type == "opencl" and g.dtype is getattr(strata, dtype)
    _assert_moments(g, alpha, alpha, 6 / alpha)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("rate", [0.4, 3.0, 9.99, 10.0, 250.0])   # 10: PTRS starts there
def test_poisson_moments(dtype, rate):
    strata.manual_seed(12)
    p = strata.poisson(_full(rate, dtype)).cpu().numpy()
    assert (p == np.floor(p)).all() and (p >= 0).all()
    _assert_moments(strata.tensor(p), rate, rate, 1 / rate)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("count,prob", [(6, 0.3), (100, 0.4), (100, 0.93), (1000, 0.011),
                                        (25, 0.5)])
def test_binomial_moments(dtype, count, prob):
    """Both samplers (BTRS where count * min(p, 1-p) >= 10, else inversion), both halves of p."""
    strata.manual_seed(13)
    b = strata.binomial(_full(float(count), dtype), _full(prob, dtype)).cpu().numpy()
    assert (b == np.floor(b)).all() and (b >= 0).all() and (b <= count).all()
    variance = count * prob * (1 - prob)
    _assert_moments(strata.tensor(b), count * prob, variance, (1 - 6 * prob * (1 - prob)) /
                    variance)


def test_binomial_edges_and_broadcasting():
    count = strata.tensor([[0.0], [5.0], [7.0]], device="opencl")
    prob = strata.tensor([0.0, 1.0, float("nan"), 0.5], device="opencl")
    got = strata.binomial(count.expand(3, 4).contiguous(), prob.expand(3, 4).contiguous())
    got = got.cpu().numpy()
    np.testing.assert_array_equal(got[:, :2], [[0, 0], [0, 5], [0, 7]])
    assert got[0, 2] == 0 and np.isnan(got[1:, 2]).all()   # count 0 wins, as ATen's order


def test_dirichlet_rows_sum_to_one_with_the_right_means():
    strata.manual_seed(14)
    concentration = strata.tensor([[0.5, 2.0, 3.5]] * DRAWS, device="opencl")
    d = strata._sample_dirichlet(concentration).cpu().numpy()
    np.testing.assert_allclose(d.sum(-1), 1, rtol=1e-5)
    alpha = np.array([0.5, 2.0, 3.5])
    mean = alpha / alpha.sum()
    variance = mean * (1 - mean) / (alpha.sum() + 1)
    for k in range(3):
        _assert_moments(strata.tensor(d[:, k]), mean[k], variance[k], 6)


@pytest.mark.parametrize("draw", [
    lambda: strata._standard_gamma(_full(0.7, "float32", 64)),
    lambda: strata.poisson(_full(30.0, "float64", 64)),
    lambda: strata.binomial(_full(50.0, "float32", 64), _full(0.3, "float32", 64)),
    lambda: strata.randperm(50, device="opencl"),
])
def test_samples_are_reproducible_per_seed(draw):
    strata.manual_seed(5)
    first = draw().cpu().numpy()
    strata.manual_seed(5)
    again = draw().cpu().numpy()
    strata.manual_seed(6)
    other = draw().cpu().numpy()
    np.testing.assert_array_equal(first, again)
    assert not np.array_equal(first, other)


def test_a_generator_gives_its_own_reproducible_stream():
    def draw(seed):
        g = strata.Generator().manual_seed(seed)
        return strata.poisson(_full(4.0, "float32", 32), generator=g).cpu().numpy()
    np.testing.assert_array_equal(draw(1), draw(1))
    assert not np.array_equal(draw(1), draw(2))


def test_bad_parameters_raise_as_on_the_cpu():
    for device in ("cpu", "opencl"):
        rate = strata.tensor([1.0, -1.0], device=device)
        with pytest.raises(RuntimeError, match="invalid Poisson rate"):
            strata.poisson(rate)
        count = strata.tensor([float("inf")], device=device)
        with pytest.raises(RuntimeError, match="count must be finite"):
            strata.binomial(count, strata.tensor([0.5], device=device))
    with pytest.raises(NotImplementedError, match="gamma_cpu"):
        strata._standard_gamma(strata.ones(3, dtype=strata.int64, device="opencl"))


def test_a_refused_call_leaves_the_random_stream_untouched():
    """The checks run before any number is drawn: the next draw is the one it would have been."""
    def next_draw(refused):
        strata.manual_seed(9)
        if refused is not None:
            with pytest.raises(RuntimeError):
                refused()
        return strata.poisson(_full(3.0, "float32", 16)).cpu().numpy()
    rate, count = (strata.tensor([v], device="opencl") for v in (-1.0, float("nan")))
    expected = next_draw(None)
    for refused in (lambda: strata.poisson(rate),
                    lambda: strata.binomial(count, strata.tensor([0.5], device="opencl")),
                    lambda: strata.randperm(-3, device="opencl")):
        np.testing.assert_array_equal(next_draw(refused), expected)


@settings(max_examples=15, deadline=None)
@given(shape=st.lists(st.integers(0, 4), max_size=3), dtype=st.sampled_from(DTYPES),
       transposed=st.booleans(), seed=st.integers(0, 2**31))
def test_samplers_give_the_cpus_shapes_and_dtypes(shape, dtype, transposed, seed):
    """Any shape (empty, 0-dim), strided inputs, broadcast binomial operands: the CPU device's
    shape and dtype, and values in each distribution's support."""
    rng = np.random.default_rng(seed)
    values = rng.uniform(0.1, 20, shape).astype(dtype)
    probs = rng.uniform(0, 1, shape[-1:]).astype(dtype)
    results = []
    for device in ("cpu", "opencl"):
        x = strata.tensor(values, device=device)
        x = x.t().contiguous().t() if transposed and x.ndim == 2 else x
        p = strata.tensor(probs, device=device)
        results.append([strata._standard_gamma(x), strata.poisson(x),
                        strata.binomial(x.floor(), p), strata._sample_dirichlet(x)])
    for c, o in zip(*results, strict=True):
        assert (o.device.type, o.dtype, tuple(o.shape)) == ("opencl", c.dtype, tuple(c.shape))
    gamma, poisson, binomial, dirichlet = (t.cpu().numpy() for t in results[1])
    assert (gamma > 0).all() and (poisson >= 0).all() and (poisson == np.floor(poisson)).all()
    assert (binomial >= 0).all() and (binomial <= np.floor(values)).all()
    if dirichlet.size:
        np.testing.assert_allclose(dirichlet.sum(-1), 1, rtol=1e-5)


def test_gamma_edges_are_the_cpus():
    """alpha 0 or NaN: the smallest normal; inf: inf (the CPU device's rule)."""
    alpha = strata.tensor([0.0, float("nan"), float("inf"), -1.0], device="opencl")
    got = strata._standard_gamma(alpha).cpu().numpy()
    tiny = np.finfo(np.float32).tiny
    np.testing.assert_array_equal(got, [tiny, tiny, np.inf, tiny])


@pytest.mark.parametrize("n", [0, 1, 7, 256, 300, 3000])   # padded to powers of two
@pytest.mark.parametrize("dtype", ["int64", "int32", "float32"])
def test_randperm_is_a_permutation(n, dtype):
    strata.manual_seed(n)
    p = strata.randperm(n, dtype=getattr(strata, dtype), device="opencl")
    assert p.device.type == "opencl" and p.dtype is getattr(strata, dtype) and p.shape == (n,)
    np.testing.assert_array_equal(np.sort(p.cpu().numpy()), np.arange(n))


def test_randperm_is_uniform():
    """Each of 4 values leads 1/4 of 800 permutations (within 6 standard deviations)."""
    strata.manual_seed(0)
    firsts = np.array([strata.randperm(4, device="opencl")[0].item() for _ in range(800)])
    counts = np.bincount(firsts, minlength=4)
    assert (np.abs(counts - 200) <= 6 * math.sqrt(800 * 0.25 * 0.75)).all()


def test_randperm_errors_match_the_cpu():
    for device in ("cpu", "opencl"):
        with pytest.raises(RuntimeError, match="negative dimension -1"):
            strata.randperm(-1, device=device)
        with pytest.raises(RuntimeError, match="n cannot be greater than 2049"):
            strata.randperm(5000, dtype=strata.float16, device=device)


@pytest.mark.parametrize("make,mean,variance", [
    (lambda t: SD.Gamma(t([2.0, 0.5]), t([1.0, 3.0])), [2.0, 1 / 6], [2.0, 1 / 18]),
    (lambda t: SD.Beta(t([2.0]), t([5.0])), [2 / 7], [10 / (49 * 8)]),
    (lambda t: SD.Poisson(t([4.0, 30.0])), [4.0, 30.0], [4.0, 30.0]),
    (lambda t: SD.Binomial(10, t([0.3, 0.8])), [3.0, 8.0], [2.1, 1.6]),
    (lambda t: SD.Dirichlet(t([1.0, 2.0, 3.0])), [1 / 6, 1 / 3, 1 / 2],
     [5 / 252, 8 / 252, 9 / 252]),
])
def test_distributions_sample_on_opencl(make, mean, variance):
    strata.manual_seed(21)
    dist = make(lambda v: strata.tensor(v, device="opencl"))
    s = dist.sample((DRAWS,))
    assert s.device.type == "opencl"
    for k in range(len(mean)):
        _assert_moments(s[:, k], mean[k], variance[k], 12)


# --- special functions ------------------------------------------------------------------------

TOL = {"float64": {"rtol": 1e-8, "atol": 1e-12}, "float32": {"rtol": 2e-4, "atol": 1e-6}}


def _both(name, *arrays):
    ours = getattr(strata, name)(*(strata.tensor(a, device="opencl") for a in arrays))
    theirs = getattr(torch, name)(*(torch.tensor(a) for a in arrays))
    return ours.cpu().numpy(), theirs.numpy()


@settings(max_examples=20, deadline=None)
@given(dtype=st.sampled_from(DTYPES), seed=st.integers(0, 2**31),
       shapes=st.sampled_from([((7,), (7,)), ((3, 1), (1, 4)), ((), (5,))]))
def test_igamma_igammac_match_torch(dtype, seed, shapes):
    rng = np.random.default_rng(seed)
    a = rng.uniform(0.01, 25, shapes[0]).astype(dtype)
    x = rng.uniform(0, 40, shapes[1]).astype(dtype)
    for name in ("igamma", "igammac"):
        ours, theirs = _both(name, a, x)
        assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
        np.testing.assert_allclose(ours, theirs, **TOL[dtype])


def test_igamma_domain_edges_match_torch():
    nan, inf = float("nan"), float("inf")
    a = np.array([0, 0, -1, 1, 2, inf, inf, 1, nan, 3, 0.5], dtype=np.float64)
    x = np.array([1, 0, 1, -1, 0, 2, inf, inf, 1, nan, 1e-300], dtype=np.float64)
    for name in ("igamma", "igammac"):
        ours, theirs = _both(name, a, x)
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, equal_nan=True)


def test_igamma_in_place_and_dtypes():
    a = strata.tensor([1.5, 2.5], device="opencl")
    x = strata.tensor([2.0, 1.0], device="opencl")
    want = torch.igammac(torch.tensor([1.5, 2.5]), torch.tensor([2.0, 1.0])).numpy()
    a.igammac_(x)
    np.testing.assert_allclose(a.cpu().numpy(), want, rtol=1e-5)
    half = strata.igamma(a.half(), x.half())         # computed in float, rounded
    want = torch.igamma(torch.tensor(a.cpu().numpy()).half(), torch.tensor([2.0, 1.0]).half())
    assert half.dtype is strata.float16
    np.testing.assert_allclose(half.cpu().float().numpy(), want.float().numpy(), rtol=2e-3)
    integers = strata.tensor([1, 2], device="opencl")
    with pytest.raises(NotImplementedError, match="igamma_cpu"):   # as torch's CPU kernels
        strata.igamma(integers, integers)


@pytest.mark.parametrize("dtype", DTYPES)
def test_zeta_matches_torch(dtype):
    rng = np.random.default_rng(3)
    s = np.concatenate([rng.uniform(1.01, 12, 40), [1, 0.5, 2, 3, 4]]).astype(dtype)
    q = np.concatenate([rng.uniform(0.05, 20, 40), [1, 1, -2, -1.5, 0]]).astype(dtype)
    ours = strata.special.zeta(strata.tensor(s, device="opencl"), strata.tensor(q, device="opencl"))
    theirs = torch.special.zeta(torch.tensor(s), torch.tensor(q))
    np.testing.assert_allclose(ours.cpu().numpy(), theirs.numpy(), equal_nan=True,
                               **({"rtol": 1e-12} if dtype == "float64" else {"rtol": 1e-5}))


@pytest.mark.parametrize("dtype", DTYPES)
def test_standard_gamma_grad_matches_torch(dtype):
    """Every region of ATen's formula: x < 0.8, alpha > 8 near and away from x, the rational
    approximation (float32: the CPU computes in double, the device in float)."""
    rng = np.random.default_rng(4)
    alpha = rng.uniform(0.05, 30, 600).astype(dtype)
    x = rng.uniform(0.001, 50, 600).astype(dtype)
    x[:200] = (alpha[:200] * rng.uniform(0.85, 1.15, 200)).astype(dtype)
    ours = strata._standard_gamma_grad(strata.tensor(alpha, device="opencl"),
                                       strata.tensor(x, device="opencl"))
    theirs = torch._standard_gamma_grad(torch.tensor(alpha), torch.tensor(x))
    np.testing.assert_allclose(ours.cpu().numpy(), theirs.numpy(),
                               rtol=1e-12 if dtype == "float64" else 1e-3)


def test_gamma_rsample_gradient_on_opencl():
    """d(sum of samples)/d(concentration) is the sum of standard_gamma_grad(alpha, x) / rate
    over the drawn samples (torch's formula on the same draws)."""
    concentration = strata.tensor([2.0, 0.5, 12.0], device="opencl", dtype=strata.float64,
                                  requires_grad=True)
    rate = strata.tensor([1.0, 2.0, 0.5], device="opencl", dtype=strata.float64)
    strata.manual_seed(8)
    samples = SD.Gamma(concentration, rate).rsample((50,))
    samples.sum().backward()
    drawn = torch.tensor(samples.detach().cpu().numpy())
    alpha, rate_ = torch.tensor([2.0, 0.5, 12.0], dtype=torch.float64), torch.tensor(
        [1.0, 2.0, 0.5], dtype=torch.float64)
    want = (torch._standard_gamma_grad(alpha.expand(50, 3), drawn * rate_) / rate_).sum(0)
    np.testing.assert_allclose(concentration.grad.cpu().numpy(), want.numpy(), rtol=1e-10)
