"""Compiled pointwise chains with multiply-add patterns equal eager strata and PyTorch eager bit
for bit (a NaN's sign and payload aside: no library promises them): the generated C is built
without FMA contraction (Note [No contraction] in backends/cpu/native.py), so each product is
rounded before the sum, as NumPy and ATen round it. Values include NaN, Inf, -0.0, subnormals
and products that round (where an fma would not)."""

import numpy as np
import pytest
import torch
from hypothesis import Phase, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import strata
from strata.backends.cpu import native
from strata.compile.aot import make_fx
from strata.compile.inductor import codecache

pytestmark = pytest.mark.filterwarnings("error::RuntimeWarning")

# every chain fuses into one kernel; each is a product feeding a sum, the pattern gcc contracts.
# Only correctly rounded operations: exp, log, tanh... are libmvec's in a kernel, NumPy's libm
# in eager, and differ by their ulps (docs/inductor.md's table).
CHAINS = {
    "x*y+z": lambda m, x, y, z: x * y + z,
    "z-x*y": lambda m, x, y, z: z - x * y,
    "x*y+z*x": lambda m, x, y, z: x * y + z * x,
    "scalar mul-add": lambda m, x, y, z: (x * 1.1 + 0.3) * y - z * 0.7,
    "mul-add chain": lambda m, x, y, z: ((x * y + z) * x + y) * z - x,
    "mul-add through exact ops": lambda m, x, y, z: m.abs(x * y + z) * m.abs(z) - m.where(
        x > y, x * z, y) * 0.5,
}
# shrinking a failing array of a hundred floats takes minutes; the failure prints it whole
NO_SHRINK = (Phase.explicit, Phase.reuse, Phase.generate)
SHAPES = [(7,), (3, 33), (2, 5, 17)]   # odd sizes: the SIMD loop's body and its remainder
SPECIAL = [np.nan, np.inf, -np.inf, -0.0, 0.0, 1e-40, -1e-40, 3.4e38, 1.0 + 2.0 ** -23]


def _arrays(shape, dtype):
    finite = st.floats(-1e6, 1e6, width=np.finfo(dtype).bits)
    elements = st.one_of(finite, st.sampled_from(SPECIAL).map(dtype))
    return hnp.arrays(dtype, shape, elements=elements)


def _bits(a):
    """The bit patterns of ``a``, every NaN as one pattern."""
    a = np.where(np.isnan(a), np.nan, a)
    return a.view(np.uint32 if a.dtype == np.float32 else np.uint64)


@pytest.fixture(scope="module")
def compiled():
    # one compiled function per chain; each shape and dtype compiles once and is then reused
    return {name: strata.compile(lambda *xs, f=f: f(strata, *xs), backend="inductor")
            for name, f in CHAINS.items()}


@pytest.mark.parametrize("name", list(CHAINS))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@settings(max_examples=12, deadline=None, phases=NO_SHRINK)
@given(data=st.data())
def test_compiled_mul_add_equals_eager_bit_for_bit(compiled, name, dtype, data):
    shape = data.draw(st.sampled_from(SHAPES))
    arrays = [data.draw(_arrays(shape, dtype)) for _ in range(3)]
    got = compiled[name](*(strata.tensor(a) for a in arrays)).numpy()
    eager = CHAINS[name](strata, *(strata.tensor(a) for a in arrays)).numpy()
    want = CHAINS[name](torch, *(torch.tensor(a) for a in arrays)).numpy()
    np.testing.assert_array_equal(_bits(got), _bits(eager))
    np.testing.assert_array_equal(_bits(eager), _bits(want))


def test_a_product_an_fma_would_not_round_is_rounded():
    """x*x - x*x is 0 when both products round; one fma keeps the first product's rounding
    error (2**-46 here), which a contracted kernel returns."""
    x = np.full(64, 1.0 + 2.0 ** -23, np.float32)
    f = strata.compile(lambda x, y: x * x - y * y, backend="inductor")
    assert np.all(_bits(f(strata.tensor(x), strata.tensor(x.copy())).numpy()) == 0)


def test_contraction_is_off_in_the_build_flags_and_the_graph_cache_key():
    assert "-ffp-contract=off" in native.FLAGS
    gm = make_fx(lambda x: x * 2 + 1)(strata.ones(3))
    key = codecache.graph_key(gm, [strata.ones(3)], {})
    saved = native.FLAGS
    try:
        native.FLAGS = tuple(f for f in saved if f != "-ffp-contract=off")
        assert codecache.graph_key(gm, [strata.ones(3)], {}) != key
    finally:
        native.FLAGS = saved
