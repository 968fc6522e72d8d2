"""The lowering rows of lowering_select.py (``sign``, ``clamp``, ``masked_fill``): generated
kernels, no Fallback, and compiled == eager strata == PyTorch bit for bit (every NaN as one
pattern), NaN, +-Inf and -0.0 included."""

import numpy as np
import pytest
import torch
from hypothesis import Phase, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import strata
from strata.compile.aot import make_fx
from strata.compile.inductor.compile_fx import compile_fx

pytestmark = pytest.mark.filterwarnings("error::RuntimeWarning")

SPECIAL = [np.nan, np.inf, -np.inf, -0.0, 0.0, 1e-40, -1.0, 1.0]
INTS = [np.iinfo(np.int32).min, -1, 0, 1, np.iinfo(np.int32).max]
NO_SHRINK = (Phase.explicit, Phase.reuse, Phase.generate)
CASES = {
    "sign": lambda m, x, mask: m.sign(x),
    "clamp": lambda m, x, mask: m.clamp(x * 3, -1.5, 2),
    "clamp min": lambda m, x, mask: m.clamp(x, min=0.25) + 1,
    "clamp max tensor": lambda m, x, mask: m.clamp(x, max=x * 2 - 3),
    "masked_fill": lambda m, x, mask: x.masked_fill(mask, -0.0) * 2,
}
FLOAT_ONLY = {"masked_fill", "clamp"}     # clamp(x * 3, -1.5, 2): float bounds


def _values(dtype, shape):
    if np.dtype(dtype).kind == "f":
        elements = st.one_of(st.floats(-1e3, 1e3, width=np.finfo(dtype).bits),
                             st.sampled_from(SPECIAL).map(dtype))
    else:
        elements = st.one_of(st.integers(-1000, 1000), st.sampled_from(INTS))
    return hnp.arrays(dtype, shape, elements=elements)


def _bits(a):
    a = np.where(np.isnan(a), np.nan, a) if a.dtype.kind == "f" else a
    return a.tobytes()


@pytest.fixture(scope="module")
def compiled():
    return {name: strata.compile(lambda x, mask, f=f: f(strata, x, mask), backend="inductor")
            for name, f in CASES.items()}


@pytest.mark.parametrize("name", list(CASES))
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.int32])
@settings(max_examples=10, deadline=None, phases=NO_SHRINK)
@given(data=st.data())
def test_compiled_equals_eager_and_torch(compiled, name, dtype, data):
    if name in FLOAT_ONLY and np.dtype(dtype).kind != "f":
        pytest.skip("a float case")
    shape = data.draw(st.sampled_from([(5,), (3, 17)]))
    x = data.draw(_values(dtype, shape))
    mask = data.draw(hnp.arrays(np.bool_, shape))
    got = compiled[name](strata.tensor(x), strata.tensor(mask)).numpy()
    eager = CASES[name](strata, strata.tensor(x), strata.tensor(mask)).numpy()
    want = CASES[name](torch, torch.tensor(x), torch.tensor(mask)).numpy()
    assert got.dtype == eager.dtype == want.dtype
    assert _bits(got) == _bits(eager)
    assert _bits(eager) == _bits(want)


@pytest.mark.parametrize("name", list(CASES))
def test_lowered_without_a_fallback(name):
    run = compile_fx(make_fx(lambda x, mask: CASES[name](strata, x, mask))(
        strata.randn(4, 8), strata.randn(4, 8) > 0), [strata.randn(4, 8), strata.randn(4, 8) > 0])
    assert "Fallback" not in run.ir_post_fusion and "kernel" in run.ir_post_fusion


def test_masked_fill_keeps_the_eager_error_for_a_value_out_of_range():
    x, mask = strata.zeros(4), strata.tensor([True, False, True, False])
    f = strata.compile(lambda x, mask: x.masked_fill(mask, 1e39), backend="inductor")
    with pytest.raises(RuntimeError) as compiled_error:
        f(x, mask)
    with pytest.raises(RuntimeError) as torch_error:
        torch.zeros(4).masked_fill(torch.tensor([True, False, True, False]), 1e39)
    assert str(compiled_error.value) == str(torch_error.value)
    assert x.numpy().tolist() == [0.0] * 4
