"""The pointwise rows of lowering_math.py, ``select``, ``gather`` and the small-integer and
mixed-dtype cases of lowering.py's rows: every fourth op-db sample of these ops compiled with
inductor == eager strata (bit for bit where eager computes the same formula: rounding, tests,
logical and bitwise ops, fmod, copysign, remainder, floor division; within a few ulps for
glibc's transcendental functions against NumPy's), plus hypothesis over shapes and values with
NaN, Inf and -0.0 against eager and PyTorch."""

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

EXACT = ["floor", "ceil", "trunc", "round", "isnan", "isinf", "isfinite", "signbit",
         "logical_not", "logical_and", "logical_or", "logical_xor", "bitwise_not",
         "bitwise_and.Tensor", "bitwise_or.Tensor", "bitwise_xor.Tensor", "fmod.Tensor",
         "copysign.Tensor", "remainder.Tensor", "div.Tensor_mode", "fmax", "fmin",
         "select.int", "gather",
         # rows of lowering.py that now take int8/int16/uint8 and mixed-dtype comparisons
         "add.Tensor", "sub.Tensor", "mul.Tensor", "neg", "abs", "eq.Tensor", "lt.Tensor",
         "ge.Tensor", "amax", "amin", "_to_copy", "arange.start_step",
         "bitwise_left_shift.Tensor", "bitwise_right_shift.Tensor", "frac", "nan_to_num",
         "eye.m"]
LIBM = ["exp2", "log2", "log10", "tan", "asin", "acos", "atan", "sinh", "cosh", "asinh",
        "acosh", "atanh", "erfc", "atan2", "hypot", "lgamma",
        "prod.dim_int"]     # a product in another order
ULPS = 4
# NumPy's own fmax/fmin answer a tie of 0.0 and -0.0 with either sign (its SIMD loop and its
# scalar tail differ), so these are compared by value
ZERO_SIGN_FREE = {"fmax", "fmin"}
SAMPLES = all_samples()
# every fourth sample of each op (its dtypes, broadcasts and bad inputs), to keep this short
CASES = [pytest.param(name, i, id=f"{name}-{i}") for name in EXACT + LIBM
         for i in range(0, len(SAMPLES[f"aten::{name}"]), 4)]


def _run(fn, inputs):
    try:
        return fn(*inputs), None
    except Exception as e:  # noqa: BLE001  (a bad-input sample: the same error both ways)
        return None, e


# lgamma crosses 0 at 1 and 2 and between the negative integers: there the two formulas
# agree within ulps of 1, not of the tiny result; eager's vectorised fdlibm pieces are up to
# 6 ulps from glibc's lgamma (which eager itself calls below 512 elements)
ULPS_OF_ONE = {"lgamma"}
LGAMMA_ULPS = 8


def _assert_close_in_ulps(got, want, smallest=None, ulps=ULPS):
    assert got.dtype == want.dtype and got.shape == want.shape
    if got.dtype.kind != "f":
        assert np.array_equal(got, want)
        return
    same = (got == want) | (np.isnan(got) & np.isnan(want))
    smallest = np.finfo(want.dtype).tiny if smallest is None else smallest
    spacing = np.spacing(np.maximum(np.abs(want), smallest).astype(want.dtype))
    with np.errstate(invalid="ignore"):     # inf - inf where both are the same inf
        close = np.abs(got.astype(np.float64) - want) <= ulps * spacing
    assert (same | close).all(), (got[~(same | close)], want[~(same | close)])


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
        if not isinstance(w, strata.Tensor):
            assert g == w
        elif name in ZERO_SIGN_FREE:
            assert g.dtype == w.dtype
            np.testing.assert_array_equal(g.numpy(), w.numpy())
        elif name in EXACT or w.dtype.is_floating_point is False:
            assert g.dtype == w.dtype and g.numpy().tobytes() == w.numpy().tobytes()
        else:
            one = name in ULPS_OF_ONE
            _assert_close_in_ulps(g.numpy(), w.numpy(), 1.0 if one else None,
                                  LGAMMA_ULPS if one else ULPS)


SPECIAL = [np.nan, np.inf, -np.inf, -0.0, 0.0, 0.5, -0.5, 1.5, -2.5, 1e-40]
UNARY = {name: (lambda m, x, n=name: getattr(m, n)(x)) for name in (
    "floor", "ceil", "trunc", "round", "isnan", "isinf", "isfinite", "signbit", "logical_not",
    "exp2", "log2", "log10", "tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh",
    "atanh", "erfc")}
BINARY = {name: (lambda m, x, y, n=name: getattr(m, n)(x, y)) for name in (
    "fmod", "remainder", "copysign", "atan2", "hypot", "fmax", "fmin", "logical_and",
    "logical_or", "logical_xor")}
BINARY["floor_divide"] = lambda m, x, y: m.div(x, y, rounding_mode="floor")
BINARY["trunc_divide"] = lambda m, x, y: m.div(x, y, rounding_mode="trunc")


def _floats(rng, shape, dtype):
    x = (rng.standard_normal(shape) * 4).astype(dtype)
    flat = x.reshape(-1)
    flat[rng.integers(0, flat.size, max(1, flat.size // 3))] = rng.choice(
        np.array(SPECIAL, dtype), max(1, flat.size // 3))
    return x


@settings(max_examples=30, deadline=None)
@given(name=st.sampled_from(sorted(UNARY) + sorted(BINARY)),
       shape=st.lists(st.integers(1, 7), min_size=1, max_size=3),
       dtype=st.sampled_from(["float32", "float64"]), seed=st.integers(0, 2 ** 16))
def test_compiled_math_equals_eager_and_torch(name, shape, dtype, seed):
    rng = np.random.default_rng(seed)
    args = [_floats(rng, shape, dtype) for _ in range(1 if name in UNARY else 2)]
    fn = UNARY.get(name) or BINARY[name]
    strata._dynamo.reset()
    tensors = [strata.tensor(a) for a in args]
    got = strata.compile(lambda *xs: fn(strata, *xs) * 1, backend="inductor")(*tensors)
    eager = fn(strata, *tensors) * 1
    want = fn(torch, *(torch.tensor(a) for a in args)) * 1
    if name in LIBM:
        _assert_close_in_ulps(got.numpy(), eager.numpy())
    elif name in ZERO_SIGN_FREE:
        np.testing.assert_array_equal(got.numpy(), eager.numpy())
    else:
        assert got.numpy().tobytes() == eager.numpy().tobytes()
    # PyTorch's own (Sleef) functions round differently from NumPy's and glibc's
    np.testing.assert_allclose(eager.numpy(), want.numpy(), rtol=1e-5, atol=1e-6,
                               equal_nan=True)


@settings(max_examples=20, deadline=None)
@given(dtype=st.sampled_from(["int64", "int32", "bool"]),
       name=st.sampled_from(["bitwise_and", "bitwise_or", "bitwise_xor", "logical_and",
                             "logical_xor", "floor", "signbit", "isfinite", "bitwise_not"]),
       shape=st.lists(st.integers(1, 6), min_size=1, max_size=3), seed=st.integers(0, 2 ** 16))
def test_compiled_integer_and_bool_ops_equal_eager_and_torch(dtype, name, shape, seed):
    if dtype == "bool" and name == "floor":
        return      # PyTorch has no bool floor
    rng = np.random.default_rng(seed)
    args = [(rng.integers(-2 ** 31, 2 ** 31, shape) if dtype != "bool"
             else rng.random(shape) < 0.5).astype(dtype) for _ in range(2)]
    unary = name in ("floor", "signbit", "isfinite", "bitwise_not")
    args = args[:1] if unary else args

    def fn(m, *xs):
        return getattr(m, name)(*xs)
    strata._dynamo.reset()
    tensors = [strata.tensor(a) for a in args]
    got = strata.compile(lambda *xs: fn(strata, *xs), backend="inductor")(*tensors)
    eager = fn(strata, *tensors)
    assert got.numpy().tobytes() == eager.numpy().tobytes()
    np.testing.assert_array_equal(eager.numpy(), fn(torch, *map(torch.tensor, args)).numpy())


@pytest.mark.parametrize("name", sorted(UNARY) + sorted(BINARY) + ["select", "gather"])
def test_lowered_without_a_fallback(name):
    x, y = strata.randn(3, 4), strata.randn(3, 4)
    if name == "select":
        fn, args = (lambda x: x.select(1, -2) + 1), (x,)
    elif name == "gather":
        fn, args = (lambda x, i: x.gather(0, i).exp()), (x, strata.tensor([[2, 0, 1, 1]]))
    else:
        op = UNARY.get(name) or BINARY[name]
        fn, args = (lambda *xs: op(strata, *xs)), (x,) if name in UNARY else (x, y)
    run = compile_fx(make_fx(fn)(*args), list(args))
    assert "Fallback" not in run.ir_post_fusion, run.ir_post_fusion


def test_gather_index_out_of_range_raises_eagers_error_first():
    x = strata.arange(6.0).reshape(2, 3)
    compiled = strata.compile(lambda x, i: x.gather(1, i) * 2, backend="inductor")
    message = "index 3 is out of bounds for dimension 1 with size 3"
    with pytest.raises(RuntimeError, match=message):
        compiled(x, strata.tensor([[0, 3]]))
    with pytest.raises(RuntimeError, match=message):
        torch.arange(6.0).reshape(2, 3).gather(1, torch.tensor([[0, 3]]))
    assert compiled(x, strata.tensor([[2, 0]])).tolist() == [[4.0, 0.0]]


@settings(max_examples=20, deadline=None)
@given(op=st.sampled_from(["lt", "le", "gt", "ge", "eq", "ne"]),
       dtypes=st.sampled_from([("int64", "float32"), ("int32", "float64"), ("bool", "int64"),
                               ("float32", "float64"), ("int64", None), ("int32", None)]),
       scalar=st.sampled_from([0.5, -1, 2, float("nan"), float("inf")]),
       seed=st.integers(0, 2 ** 16))
def test_compiled_comparisons_of_mixed_dtypes_equal_eager_and_torch(op, dtypes, scalar, seed):
    """The operands compared in their promoted dtype (an integer tensor against 0.5: float32),
    as eager; a dtype pair with no second tensor compares against the Python number."""
    rng = np.random.default_rng(seed)
    a = (rng.integers(-3, 4, (3, 5)) * 0.5 ** rng.integers(0, 2)).astype(dtypes[0])
    b = scalar if dtypes[1] is None else rng.integers(-3, 4, (5,)).astype(dtypes[1])

    def fn(m, x, y):
        return getattr(m, op)(x, y)
    strata._dynamo.reset()
    tensors = [strata.tensor(v) if isinstance(v, np.ndarray) else v for v in (a, b)]
    got = strata.compile(lambda x, y: fn(strata, x, y), backend="inductor")(*tensors)
    eager = fn(strata, *tensors)
    assert got.numpy().tobytes() == eager.numpy().tobytes()
    want = fn(torch, *(torch.tensor(v) if isinstance(v, np.ndarray) else v for v in (a, b)))
    np.testing.assert_array_equal(eager.numpy(), want.numpy())


def test_mixed_dtype_comparisons_lowered_without_a_fallback():
    x, y = strata.tensor([1, 2, 3]), strata.tensor([1.5, 2.0, -1.0])
    for fn, args in ((lambda a: a > 1.5, (x,)), (lambda a, b: a == b, (x, y))):
        run = compile_fx(make_fx(fn)(*args), list(args))
        assert "Fallback" not in run.ir_post_fusion, run.ir_post_fusion
        assert run(*args)[0].tolist() == fn(*args).tolist()


INTEGER_DIVISIONS = {
    "fmod": lambda m, x, y: m.fmod(x, y),
    "remainder": lambda m, x, y: m.remainder(x, y),
    "floor": lambda m, x, y: m.div(x, y, rounding_mode="floor"),
    "trunc": lambda m, x, y: m.div(x, y, rounding_mode="trunc"),
}


@settings(max_examples=20, deadline=None)
@given(name=st.sampled_from(sorted(INTEGER_DIVISIONS)), dtype=st.sampled_from(["int64", "int32"]),
       shape=st.lists(st.integers(1, 6), min_size=1, max_size=2), seed=st.integers(0, 2 ** 16))
def test_compiled_integer_divisions_equal_eager_and_torch(name, dtype, shape, seed):
    rng = np.random.default_rng(seed)
    low = np.iinfo(dtype).min
    a = rng.integers(-50, 50, shape).astype(dtype)
    b = rng.choice(np.array([-7, -3, -1, 1, 2, 5], dtype), shape)
    a.reshape(-1)[0], b.reshape(-1)[0] = low, -1      # x / -1 wraps, where C would trap
    fn = INTEGER_DIVISIONS[name]
    strata._dynamo.reset()
    tensors = [strata.tensor(a), strata.tensor(b)]
    got = strata.compile(lambda x, y: fn(strata, x, y), backend="inductor")(*tensors)
    eager = fn(strata, *tensors)
    assert got.numpy().tobytes() == eager.numpy().tobytes()
    # PyTorch's CPU kernel traps (SIGFPE) on INT_MIN / -1: compared without that element
    want = fn(torch, torch.tensor(a.reshape(-1)[1:]), torch.tensor(b.reshape(-1)[1:])).numpy()
    np.testing.assert_array_equal(eager.numpy().reshape(-1)[1:], want)


@pytest.mark.parametrize("name", sorted(INTEGER_DIVISIONS))
def test_an_integer_division_by_zero_raises_eagers_error_first(name):
    fn = INTEGER_DIVISIONS[name]
    x, y = strata.tensor([5, 7]), strata.tensor([2, 3])
    run = compile_fx(make_fx(lambda x, y: fn(strata, x, y))(x, y), [x, y])
    assert "Fallback" not in run.ir_post_fusion and "Check" in run.ir_post_fusion
    compiled = strata.compile(lambda x, y: fn(strata, x, y).add_(1), backend="inductor")
    assert compiled(x, y).tolist() == fn(strata, x, y).add(1).tolist()
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        compiled(x, strata.tensor([2, 0]))
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        fn(torch, torch.tensor([5, 7]), torch.tensor([2, 0]))


@settings(max_examples=15, deadline=None)
@given(dtype=st.sampled_from(["int8", "int16", "int32", "int64", "uint8", "bool"]),
       kind=st.sampled_from(["amax", "amin"]), seed=st.integers(0, 2 ** 16))
def test_compiled_integer_max_and_min_start_at_their_own_limits(dtype, kind, seed):
    """An integer max/min starts at its dtype's limit (it started at INT64_MIN, which an int8
    accumulator stores as 0: the max of negative rows was 0)."""
    rng = np.random.default_rng(seed)
    info = np.iinfo(dtype) if dtype != "bool" else None
    x = (rng.integers(info.min, int(info.max) + 1, (4, 9), dtype=dtype) if info
         else rng.random((4, 9)) < 0.5)
    x[0] = info.min if info else False         # a row at the limit
    strata._dynamo.reset()
    got = strata.compile(lambda t: getattr(t, kind)(1), backend="inductor")(strata.tensor(x))
    assert got.numpy().tobytes() == getattr(strata.tensor(x), kind)(1).numpy().tobytes()
    np.testing.assert_array_equal(got.numpy(), getattr(torch.tensor(x), kind)(1).numpy())


@settings(max_examples=20, deadline=None)
@given(start=st.floats(-50, 50), length=st.integers(1, 40), step=st.floats(0.01, 7),
       negative=st.booleans(), dtype=st.sampled_from(["float32", "float64"]))
def test_compiled_float_arange_equals_eager_and_torch(start, length, step, negative, dtype):
    """eager's ``first + i * delta`` in double, rounded to the dtype."""
    step = -step if negative else step
    end = start + length * step
    x = strata.zeros(1, dtype=getattr(strata, dtype))

    def fn(m, a):
        return m.arange(start, end, step, dtype=getattr(m, dtype)) + a
    run = compile_fx(make_fx(lambda a: fn(strata, a))(x), [x])
    assert "Fallback" not in run.ir_post_fusion, run.ir_post_fusion
    got, eager = run(x)[0].numpy(), fn(strata, x).numpy()
    assert got.tobytes() == eager.tobytes()
    want = fn(torch, torch.zeros(1, dtype=getattr(torch, dtype))).numpy()
    assert want.shape == eager.shape
    np.testing.assert_allclose(eager, want, rtol=1e-6, atol=1e-5)


def test_bool_numbers_and_integer_fmax_lowered():
    x, y = strata.tensor([1, 5, -3]), strata.tensor([2, 2, 2])

    def fn(m, a, b):
        return a + True, a * False, a > True, m.fmax(a, b), m.fmin(a, b)
    run = compile_fx(make_fx(lambda a, b: fn(strata, a, b))(x, y), [x, y])
    assert "Fallback" not in run.ir_post_fusion, run.ir_post_fusion
    got = [t.tolist() for t in run(x, y)]
    assert got == [t.tolist() for t in fn(strata, x, y)]
    assert got == [t.tolist() for t in fn(torch, torch.tensor([1, 5, -3]), torch.tensor([2] * 3))]


@settings(max_examples=20, deadline=None)
@given(dtype=st.sampled_from(["int64", "int32", "int16", "int8", "uint8"]),
       left=st.booleans(), shape=st.lists(st.integers(1, 6), min_size=1, max_size=2),
       seed=st.integers(0, 2 ** 16))
def test_compiled_shifts_equal_eager_and_torch(dtype, left, shape, seed):
    """Shifts by a negative amount or by the bit width or more: 0 to the left, the sign to
    the right, as eager and PyTorch (C leaves them undefined: the amount is clamped first)."""
    rng = np.random.default_rng(seed)
    info = np.iinfo(dtype)
    a = rng.integers(info.min, int(info.max) + 1, shape, dtype=dtype)
    b = rng.integers(max(info.min, -3), min(int(info.max), 70) + 1, shape, dtype=dtype)

    def fn(x, y):
        return x << y if left else x >> y
    tensors = [strata.tensor(a), strata.tensor(b)]
    run = compile_fx(make_fx(fn)(*tensors), tensors)
    assert "Fallback" not in run.ir_post_fusion, run.ir_post_fusion
    got, eager = run(*tensors)[0].numpy(), fn(*tensors).numpy()
    assert got.tobytes() == eager.tobytes()
    np.testing.assert_array_equal(eager, fn(torch.tensor(a), torch.tensor(b)).numpy())


def test_frac_nan_to_num_eye_and_prod_lowered_without_a_fallback():
    x = strata.tensor([[1.5, -2.25, float("nan")], [float("inf"), -float("inf"), -0.0]])
    cases = [(lambda m, a: a.frac(), x), (lambda m, a: a.nan_to_num(), x),
             (lambda m, a: a.nan_to_num(1.0, 2.0, -3.0), x),
             (lambda m, a: m.eye(3, 4) + a.sum(), x[:1, :1].clone()),
             (lambda m, a: a.prod(1), strata.tensor([[1, 2, 3], [4, -5, 6]]))]
    for fn, a in cases:
        run = compile_fx(make_fx(lambda t: fn(strata, t))(a), [a])
        assert "Fallback" not in run.ir_post_fusion, run.ir_post_fusion
        eager = fn(strata, a).numpy()
        assert run(a)[0].numpy().tobytes() == eager.tobytes()
        np.testing.assert_array_equal(eager, fn(torch, torch.tensor(a.numpy())).numpy())
