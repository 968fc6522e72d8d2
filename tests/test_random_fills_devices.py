"""The random fills (tests/test_random_fills.py) on the other devices and compiled: ``sim``
runs the CPU kernels, ``opencl`` its Philox kernels (PoCL here), and ``strata.compile`` keeps
them in graphs."""

import warnings

import numpy as np
import pytest
import torch
from test_random_fills import N, _check_mean, _raised, _same_error

import strata


@pytest.fixture(autouse=True)
def reseed():
    strata.manual_seed(0)
    yield
    strata.manual_seed(0)


def test_sim_device_runs_them():
    x = strata.zeros(1000, device="sim")
    assert (x.exponential_().cpu() >= 0).all()
    assert set(x.random_(3).cpu().unique().tolist()) == {0.0, 1.0, 2.0}
    probs = strata.full((1000,), 0.5, device="sim")
    assert set(x.bernoulli_(probs).cpu().unique().tolist()) == {0.0, 1.0}
    strata.manual_seed(1)
    a = strata.zeros(8, device="sim").cauchy_().cpu()
    strata.manual_seed(1)
    assert strata.equal(strata.zeros(8, device="sim").cauchy_().cpu(), a)


# --- compiled functions ----------------------------------------------------------------------

def _noisy(x):
    y = x * 1.0
    y.exponential_(2.0)
    z = (x * 0).random_(0, 10)
    w = (x * 0).bernoulli_(0.5)
    return y + z * 10 + w * 1000 + x.new_zeros(x.shape).geometric_(0.5) * 0


@pytest.mark.parametrize("backend", ["eager", "inductor"])
def test_compiled_function_draws_them(backend):
    compiled = strata.compile(_noisy, backend=backend)
    x = strata.zeros(2000)
    strata.manual_seed(5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")            # no capture failure sends it back to eager
        out = compiled(x).numpy().astype(np.float64)
    assert out.shape == (2000,)
    bernoulli = np.floor(out / 1000)         # out = exponential + 10 random_ + 1000 bernoulli_
    integers = np.floor((out - 1000 * bernoulli) / 10)
    exponential = out - 1000 * bernoulli - 10 * integers
    assert set(np.unique(bernoulli)) == {0, 1}
    assert set(np.unique(integers)) == set(range(10))
    assert (exponential >= 0).all() and abs(exponential.mean() - 0.5) < 0.1
    strata.manual_seed(5)
    np.testing.assert_array_equal(compiled(x).numpy(), out)


# --- the opencl device (PoCL in tests): Philox draws, the same transformations ------------------

OPENCL_MOMENTS = {   # a fill, its values' mean and variance
    "exponential_": (lambda t: t.exponential_(2.0), 0.5, 0.25),
    "geometric_": (lambda t: t.geometric_(0.25), 4.0, 0.75 / 0.25 ** 2),
    "log_normal_ (log)": (lambda t: t.log_normal_(0.5, 0.75).log(), 0.5, 0.75 ** 2),
    "cauchy_ (below median + sigma)": (lambda t: t.cauchy_(1.0, 2.0).lt(3.0).float(), 0.75,
                                       0.75 * 0.25),
    "bernoulli_": (lambda t: t.bernoulli_(0.3), 0.3, 0.21),
    "bernoulli_ probs": (lambda t: t.bernoulli_(t.new_full((1,), 0.7)), 0.7, 0.21),
    "random_ from, to": (lambda t: t.random_(-3, 5), 0.5, (64 - 1) / 12),
    "random_": (lambda t: t.random_().div(2 ** 24), 0.5, 1 / 12),
}


@pytest.mark.skipif(not strata.opencl.is_available(), reason="needs pyopencl and a driver")
@pytest.mark.parametrize("name", sorted(OPENCL_MOMENTS))
def test_opencl_fills(name):
    fill, mean, var = OPENCL_MOMENTS[name]
    strata.manual_seed(11)
    values = fill(strata.zeros(N, device="opencl")).cpu().double().numpy()
    _check_mean(values, mean, var, f"opencl {name}")
    strata.manual_seed(11)
    np.testing.assert_array_equal(fill(strata.zeros(N, device="opencl")).cpu().double().numpy(),
                                  values)


@pytest.mark.skipif(not strata.opencl.is_available(), reason="needs pyopencl and a driver")
def test_opencl_random_bounds_per_dtype():
    for dtype, top in (("int8", 127), ("float16", 2 ** 11), ("bool", 1)):
        x = strata.zeros(N, dtype=getattr(strata, dtype), device="opencl").random_()
        values = x.cpu().double().numpy()
        assert values.min() == 0 and values.max() == top
    with pytest.raises(NotImplementedError, match="'OpenCL' backend"):
        strata.zeros(4, dtype=strata.int64, device="opencl").random_(-2 ** 63, None)
    _same_error(_raised(lambda: strata.zeros(4, device="opencl").exponential_(-1)),
                _raised(lambda: torch.zeros(4).exponential_(-1)))


def _fills(x):
    return ((x * 1.0).exponential_(), (x * 1.0).geometric_(0.3), (x * 1.0).cauchy_(),
            (x * 1.0).bernoulli_(0.5), (x * 1.0).bernoulli_(x + 0.5), (x * 1.0).uniform_())


@pytest.mark.parametrize("backend", ["eager", "inductor"])
@pytest.mark.parametrize("n", [5, 40_000])
def test_compiled_fills_draw_eagers_numbers(backend, n):
    """The fills that draw one double per element have a known place in the graph's random
    stream, so a compiled function draws eager's numbers and leaves the generator where eager
    does (40K elements: the C draws of the bernoulli and uniform kernels)."""
    compiled = strata.compile(_fills, backend=backend)
    strata.manual_seed(3)
    got, after = compiled(strata.zeros(n)), strata.rand(3)
    strata.manual_seed(3)
    want, eager_after = _fills(strata.zeros(n)), strata.rand(3)
    for a, b in zip(got, want):
        assert strata.equal(a, b)
    assert strata.equal(after, eager_after)
