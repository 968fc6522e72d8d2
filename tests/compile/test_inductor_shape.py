"""The copying shape ops (lowering_shape.py: cat, stack, flip, constant_pad_nd, tril, triu, repeat,
detach) and any/all (lowering_norms.py) lowered: every op-db sample compiled == eager strata bit
for bit, hypothesis over shapes, dtypes and values (NaN, Inf, -0.0) against eager and PyTorch,
and no Fallback except a cat or pad of the innermost dim (eager's copies are faster there)."""

import numpy as np
import pytest
import torch
from helpers import to_strata
from hypothesis import given, settings
from hypothesis import strategies as st
from op_samples import all_samples

import strata
from strata.compile.aot import make_fx
from strata.compile.inductor.compile_fx import compile_fx

pytestmark = pytest.mark.filterwarnings("error::UserWarning")   # a capture that fell back

NAMES = ["cat", "stack", "flip", "constant_pad_nd", "any.dims", "all.dims", "detach", "tril",
         "triu", "repeat"]
SAMPLES = all_samples()
CASES = [pytest.param(name, i, id=f"{name}-{i}") for name in NAMES
         for i in range(len(SAMPLES[f"aten::{name}"]))]


def _run(fn, inputs):
    try:
        return fn(*inputs), None
    except Exception as e:  # noqa: BLE001  (a bad-input sample: the same error both ways)
        return None, e


@pytest.mark.parametrize("name,i", CASES)
def test_op_db_sample_compiled_equals_eager(name, i):
    sample = SAMPLES[f"aten::{name}"][i]
    inputs = [to_strata(x) if isinstance(x, np.ndarray) else x for x in sample.inputs]

    def fn(*xs):
        return sample.fn(strata, *xs)
    want, error = _run(fn, inputs)
    strata._dynamo.reset()
    got, got_error = _run(strata.compile(fn, backend="inductor"), inputs)
    if error is not None:
        assert type(got_error) is type(error) and str(got_error) == str(error)
        return
    assert got_error is None, got_error
    got, want = (got if isinstance(got, tuple) else (got,)), (
        want if isinstance(want, tuple) else (want,))
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        assert g.numpy().tobytes() == w.numpy().tobytes()


def _values(rng, shape, dtype):
    if dtype == "bool":
        return rng.random(shape) < 0.5
    x = rng.standard_normal(shape) * 3
    if dtype.startswith("float"):
        flat = x.reshape(-1)
        flat[rng.integers(0, flat.size, 2)] = rng.choice([np.nan, np.inf, -0.0, 0.0], 2)
    return x.astype(dtype)


@settings(max_examples=30, deadline=None)
@given(shape=st.lists(st.integers(1, 5), min_size=1, max_size=3),
       dtype=st.sampled_from(["float32", "float64", "int64", "int32", "int8", "uint8", "bool"]),
       op=st.sampled_from(["cat", "stack", "flip", "pad", "any", "all"]), data=st.data())
def test_compiled_shape_ops_equal_eager_and_torch(shape, dtype, op, data):
    rng = np.random.default_rng(data.draw(st.integers(0, 2 ** 16)))
    d = data.draw(st.integers(0, len(shape) - 1))
    x = _values(rng, shape, dtype)
    other = list(shape)
    other[d] = data.draw(st.integers(1, 4))
    y = _values(rng, other if op == "cat" else shape, dtype)
    pad = data.draw(st.lists(st.integers(-1, 2), min_size=2, max_size=2 * len(shape)))
    pad = pad[:len(pad) // 2 * 2]
    if op == "pad" and any(n + pad[2 * k] + pad[2 * k + 1] < 0
                           for k, n in enumerate(reversed(shape[-(len(pad) // 2):]))):
        return      # a crop larger than the dim: an error (tested by the op-db samples)
    fns = {"cat": lambda m, a, b: m.cat([a, b], d),
           "stack": lambda m, a, b: m.stack([a, b, a], d),
           "flip": lambda m, a, b: a.flip(list(range(d + 1))),
           "pad": lambda m, a, b: m.nn.functional.pad(a, pad, value=0 if dtype == "bool"
                                                      else 3),
           "any": lambda m, a, b: a.any(d), "all": lambda m, a, b: a.all(d)}
    fn = fns[op]
    if op == "pad" and dtype == "bool":
        return      # PyTorch pads a bool tensor with a bool only
    a, b = strata.tensor(x), strata.tensor(y)
    run = compile_fx(make_fx(lambda a, b: fn(strata, a, b))(a, b), [a, b])
    # along the innermost dim a cat or a pad keeps eager's (faster) copies
    innermost = (op == "cat" and d == len(shape) - 1) or (op == "pad" and max(pad[:2]) > 0)
    assert ("Fallback" in run.ir_post_fusion) == innermost, run.ir_post_fusion
    got = run(a, b)[0].numpy()
    eager = fn(strata, a, b).numpy()
    assert got.dtype == eager.dtype and got.tobytes() == eager.tobytes()
    np.testing.assert_array_equal(eager, fn(torch, torch.tensor(x), torch.tensor(y)).numpy())


@pytest.mark.parametrize("shape", [(0, 2, 3), (2, 0, 3), (0,)])
def test_a_reshape_of_an_empty_formula_lowers(shape):
    """An empty value's reshape has no common factoring (it divided by zero while lowering,
    so the graph ran eagerly)."""
    x = strata.zeros(0, 6)
    run = compile_fx(make_fx(lambda a: (a * 2).reshape(shape) + 1)(x), [x])
    assert "Fallback" not in run.ir_post_fusion
    assert tuple(run(x)[0].shape) == shape


@settings(max_examples=20, deadline=None)
@given(shape=st.lists(st.integers(1, 5), min_size=2, max_size=3),
       dtype=st.sampled_from(["float32", "int64", "bool"]), diagonal=st.integers(-3, 3),
       op=st.sampled_from(["tril", "triu", "repeat"]), data=st.data())
def test_compiled_triangles_and_repeat_equal_eager_and_torch(shape, dtype, diagonal, op, data):
    rng = np.random.default_rng(data.draw(st.integers(0, 2 ** 16)))
    x = _values(rng, shape, dtype)
    repeats = data.draw(st.lists(st.integers(1, 3), min_size=len(shape),
                                 max_size=len(shape) + 1))
    fns = {"tril": lambda m, a: a.tril(diagonal), "triu": lambda m, a: a.triu(diagonal),
           "repeat": lambda m, a: a.repeat(*repeats)}
    fn = fns[op]
    a = strata.tensor(x)
    run = compile_fx(make_fx(lambda t: fn(strata, t))(a), [a])
    inner_repeat = op == "repeat" and repeats[-1] > 1 and shape[-1] > 1   # eager's tile
    assert ("Fallback" in run.ir_post_fusion) == inner_repeat, run.ir_post_fusion
    eager = fn(strata, a).numpy()
    assert run(a)[0].numpy().tobytes() == eager.tobytes()
    np.testing.assert_array_equal(eager, fn(torch, torch.tensor(x)).numpy())
