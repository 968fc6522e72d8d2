"""Maximum ulp error of the generated kernels' vector math (glibc's libmvec, called from
'#pragma omp simd' loops: Note [Vector math] in compile/inductor/cpreamble.py, and strata's own
float32 erf: Note [float32 erf]) against float64. The bounds are the ones docs/inductor.md lists;
glibc documents at most 4 ulp."""

import math

import numpy as np
import pytest

from strata.backends.cpu import native

_verf = np.vectorize(math.erf)
# name -> (float64 reference, inputs' range, the documented bound in float32 ulp)
FUNCTIONS = {
    "exp": (np.exp, (-87.0, 88.0), 1.5),   # strata_expf: Note [float32 exp]
    "log": (np.log, (1e-30, 1e30), 4),
    "tanh": (np.tanh, (-10.0, 10.0), 4),
    "erf": (_verf, (-5.0, 5.0), 7),
    "sigmoid": (lambda v: 1 / (1 + np.exp(-v)), (-80.0, 80.0), 5),
}


def _inputs(lo, hi):
    rng = np.random.default_rng(0)
    if lo > 0:   # log: spread over the exponents
        return np.exp(rng.uniform(np.log(lo), np.log(hi), 200_000)).astype(np.float32)
    small = rng.standard_normal(50_000) * 1e-3
    return np.concatenate([rng.uniform(lo, hi, 200_000), small]).astype(np.float32)


def max_ulp(name):
    reference, (lo, hi), _ = FUNCTIONS[name]
    x = _inputs(lo, hi)
    y = native.run_unary(name, x)
    assert y is not None, native.status()
    exact = reference(x.astype(np.float64))
    keep = np.abs(exact) > np.finfo(np.float32).tiny     # ulp of normal results
    ulp = np.spacing(np.abs(exact[keep]).astype(np.float32)).astype(np.float64)
    return float((np.abs(y[keep] - exact[keep]) / ulp).max())


@pytest.mark.parametrize("name", FUNCTIONS)
def test_max_ulp_error_within_the_documented_bound(name):
    assert max_ulp(name) <= FUNCTIONS[name][2]


@pytest.mark.parametrize("name", ["exp", "log", "tanh", "erf", "sigmoid"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_special_values_as_libm(name, dtype):
    specials = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 100.0, -100.0, 1e-45] * 200, dtype)
    reference = {"exp": np.exp, "log": np.log, "tanh": np.tanh, "erf": _verf}.get(name)
    with np.errstate(all="ignore"):
        if reference is None:   # sigmoid: exp(-x) overflows to inf in the input's dtype, as ATen
            exact = 1 / (1 + np.exp(-specials))
        else:
            exact = reference(specials.astype(np.float64)).astype(dtype)
    got = native.run_unary(name, specials)
    np.testing.assert_allclose(got, exact, rtol=4e-7, atol=0)
    numbers = ~np.isnan(exact)     # a NaN's sign is not specified
    assert np.array_equal(np.signbit(got[numbers]), np.signbit(exact[numbers]))


def _float32_ulps(got, exact):
    """|got - exact| in ulps of the float32 result (the ulp below 1 for results that round to
    +-1, as an error of one step there is the distance to the largest float below 1)."""
    ulp = np.spacing(np.abs(exact).astype(np.float32)).astype(np.float64)
    ulp = np.where(np.abs(exact.astype(np.float32)) >= 1, 2.0 ** -24, ulp)
    return np.abs(got.astype(np.float64) - exact) / ulp


def test_float32_erf_over_a_dense_sweep_of_every_binade():
    """Every 257th float32 bit pattern from the smallest subnormal to 4.0 (where erf has rounded
    to 1), both signs: ~2M inputs covering every binade, against float64 erf (torch)."""
    torch = pytest.importorskip("torch")
    top = np.array(4.0, np.float32).view(np.int32)
    positive = np.arange(1, top, 257, dtype=np.int32).view(np.float32)
    x = np.concatenate([positive, -positive])
    got = native.run_unary("erf", x)
    assert got is not None, native.status()
    exact = torch.erf(torch.from_numpy(x.astype(np.float64))).numpy()
    keep = np.abs(exact) > np.finfo(np.float32).tiny
    assert _float32_ulps(got[keep], exact[keep]).max() <= FUNCTIONS["erf"][2]
    subnormal_step = np.finfo(np.float32).smallest_subnormal
    assert np.abs(got[~keep] - exact[~keep]).max() <= subnormal_step    # rounded once, +-1 step
    assert np.array_equal(-got[: positive.size], got[positive.size:])     # odd


def test_float32_erf_saturates_to_exactly_one():
    x = np.array([3.8325069, 3.9, 4.0, 10.0, 1e30, np.finfo(np.float32).max] * 200, np.float32)
    assert np.array_equal(native.run_unary("erf", x), np.ones_like(x))
    assert np.array_equal(native.run_unary("erf", -x), -np.ones_like(x))


def test_float32_exp_over_every_binade_and_its_edges():
    """Note [float32 exp]: every 61st float32 bit pattern of both signs from the smallest
    subnormal up to the overflow threshold (and past it), against float64 exp: normal results
    within the documented bound, subnormal ones within one step (rounded once), exactly 0 below
    -104 (-inf included), inf above 88.73 (inf included), NaN for NaN, 1 for +-0."""
    top = np.array(89.0, np.float32).view(np.int32)
    positive = np.arange(1, top, 61, dtype=np.int32).view(np.float32)
    x = np.concatenate([positive, -positive, -np.arange(89.0, 120.0, 0.25, dtype=np.float32)])
    got = native.run_unary("exp", x)
    assert got is not None, native.status()
    exact = np.exp(x.astype(np.float64))
    normal = (exact > np.finfo(np.float32).tiny) & (exact < np.finfo(np.float32).max)
    ulp = np.spacing(exact[normal].astype(np.float32)).astype(np.float64)
    assert (np.abs(got[normal] - exact[normal]) / ulp).max() <= 1.5
    subnormal = exact <= np.finfo(np.float32).tiny
    step = np.finfo(np.float32).smallest_subnormal
    assert np.abs(got[subnormal] - exact[subnormal]).max() <= step
    assert np.all(got[x < -104] == 0)
    assert np.all(np.isinf(got[exact >= 2.0 ** 128]))
    specials = np.array([-np.inf, np.inf, np.nan, 0.0, -0.0] * 400, np.float32)
    got = native.run_unary("exp", specials)
    assert np.array_equal(got, np.exp(specials), equal_nan=True)


# Note [No sincos] (backends/cpu/native.py): sin and cos of one value stay two vector calls
_SIN_COS_KERNEL = """
void sin_cos(const float* restrict a, float* restrict out, int64_t x_lo, int64_t x_hi) {
    #pragma omp simd
    for (int64_t x = x_lo; x < x_hi; x++) {
        const float t = a[x];
        const float s = sinf(t) * cosf(t) - strata_expf(t) * 0.01f;
        out[x] = s < 0 ? 0 : s;
    }
}
"""


def test_sin_and_cos_of_one_value_call_the_vector_functions():
    """gcc would fuse them into one scalar ``sincosf`` call (a 6x slower loop), and a loop with a
    ternary calling functions not known to be ``const`` is not vectorised at all."""
    import ctypes
    import re
    from pathlib import Path

    from strata.compile.inductor.cpreamble import PREAMBLE
    signature = {"sin_cos": [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64]}
    try:
        lib = native.load("test_sin_cos", PREAMBLE + _SIN_COS_KERNEL, signature, tasks=False)
    except native.BuildError as exc:
        pytest.skip(f"no C compiler: {exc}")
    imported = Path(lib._name).read_bytes()
    assert re.search(rb"_ZGV\w+_sinf", imported) and re.search(rb"_ZGV\w+_cosf", imported)
    assert b"sincosf" not in imported
    x = np.linspace(-20, 20, 4099, dtype=np.float32)
    out = np.empty_like(x)
    lib.sin_cos(x.ctypes.data, out.ctypes.data, 0, x.size)
    x64 = x.astype(np.float64)
    exact = np.maximum(np.sin(x64) * np.cos(x64) - np.exp(x64) * 0.01, 0)
    np.testing.assert_allclose(out, exact, rtol=2e-6, atol=2e-6)


@pytest.mark.parametrize("name", ["sin", "cos"])
def test_compiled_sin_and_cos_within_libmvecs_bound(name):
    """libmvec's float32 sin and cos (glibc: at most 4 ulp), through a compiled graph."""
    import strata
    x = np.random.default_rng(0).uniform(-100, 100, 200_000).astype(np.float32)
    fn = strata.compile(lambda t: getattr(t, name)(), backend="inductor")
    got = fn(strata.tensor(x)).numpy()
    exact = getattr(np, name)(x.astype(np.float64))
    keep = np.abs(exact) > 1e-3                # away from the zeros, where an ulp is tiny
    ulp = np.spacing(np.abs(exact[keep]).astype(np.float32)).astype(np.float64)
    assert (np.abs(got[keep] - exact[keep]) / ulp).max() <= 4
