"""Pointwise ops beyond the sample database: property tests over random broadcastable shapes and
dtypes, output layouts (TensorIterator's stride rule), in-place semantics (values, version
counter, shape/cast/overlap errors that leave ``self`` untouched) and PyTorch's errors."""

import math

import numpy as np
import pytest
import strata
import torch
from helpers import DTYPE_PAIRS, assert_same, check, check_error, check_meta
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays, mutually_broadcastable_shapes

DTYPES = list(DTYPE_PAIRS)
NUMPY_DTYPES = [d for d in DTYPES if d != "bfloat16"]
INTS = ["uint8", "int8", "int16", "int32", "int64"]
FLOATS = ["float16", "float32", "float64"]


def values(dtype, shape):
    """Finite values of ``dtype`` (integers small, so products and powers stay exact)."""
    if dtype == "bool":
        return arrays(np.bool_, shape)
    if dtype in INTS:
        lo = 0 if dtype == "uint8" else -5
        return arrays(dtype, shape, elements=st.integers(lo, 5))
    return arrays(dtype, shape, elements=st.floats(-4, 4, width=16))


BINARY = {
    "add": lambda m, a, b: m.add(a, b),
    "sub": lambda m, a, b: m.sub(a, b, alpha=2),
    "mul": lambda m, a, b: a * b,
    "div": lambda m, a, b: a / b,
    "maximum": lambda m, a, b: m.maximum(a, b),
    "fmin": lambda m, a, b: m.fmin(a, b),
    "atan2": lambda m, a, b: m.atan2(a, b),
    "copysign": lambda m, a, b: m.copysign(a, b),
    "eq": lambda m, a, b: a == b,
    "lt": lambda m, a, b: a < b,
    "logical_xor": lambda m, a, b: m.logical_xor(a, b),
    "where": lambda m, a, b: m.where(a > b, a, b),
}


@st.composite
def binary_case(draw):
    name = draw(st.sampled_from(sorted(BINARY)))
    d1, d2 = draw(st.sampled_from(NUMPY_DTYPES)), draw(st.sampled_from(NUMPY_DTYPES))
    if name == "sub" and "bool" in (d1, d2):
        d1 = d2 = "float32"
    shapes = draw(mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=4,
                                                max_side=3))
    a = draw(values(d1, shapes.input_shapes[0]))
    b = draw(values(d2, shapes.input_shapes[1]))
    return name, a, b


@given(binary_case())
def test_binary_ops_broadcast_and_promote_like_torch(case):
    name, a, b = case
    check(BINARY[name], a, b, check_stride=True)
    check_meta(BINARY[name], a, b)


@given(st.sampled_from(DTYPES), st.sampled_from(["add", "mul", "div", "lt", "pow"]),
       st.sampled_from([2, -3, 2.5, True, 0.0]), st.booleans())
def test_python_scalars_on_either_side(dtype, op, scalar, reflected):
    fns = {"add": lambda x, s: x + s, "mul": lambda x, s: x * s, "div": lambda x, s: x / s,
           "lt": lambda x, s: x < s, "pow": lambda x, s: x ** s}
    if op == "div" and scalar == 0 and not reflected:
        scalar = 3  # integer tensors / 0 is inf, fine, but keep the case readable
    if op == "pow" and (dtype == "bool" or (isinstance(scalar, int) and scalar < 0)):
        scalar = 2
    fn = fns[op]
    a = np.array([[1, 2, 3], [4, 0, 2]], np.float32)

    def run(m, x):
        x = x.to(getattr(m, dtype))
        return fn(scalar, x) if reflected and op != "pow" else fn(x, scalar)
    check(run, a)


def layouts(m, base, perm, step):
    """The same values in a permuted, sliced (non-contiguous) layout, in either library."""
    t = m.tensor(base).permute(perm)
    return m.ops.aten.slice.Tensor(t, 0, 0, None, step)


@given(st.lists(st.integers(1, 4), min_size=2, max_size=4), st.data())
def test_output_strides_follow_tensoriterator(shape, data):
    """Permuted and sliced inputs: the result's strides equal PyTorch's, and the meta device
    predicts them."""
    ndim = len(shape)
    perm_a = data.draw(st.permutations(range(ndim)))
    perm_b = data.draw(st.permutations(range(ndim)))
    step = data.draw(st.integers(1, 2))
    base_shape = [shape[i] for i in np.argsort(perm_a)]
    base_shape[perm_a[0]] *= step
    a = np.random.default_rng(0).standard_normal(base_shape).astype(np.float32)
    b = np.random.default_rng(1).standard_normal([shape[i] for i in np.argsort(perm_b)])
    other_shape = data.draw(st.sampled_from(["same", "row", "scalar"]))

    def fn(m, x, y):
        x = layouts(m, x, perm_a, step)
        y = m.tensor(y).permute(perm_b)
        if other_shape == "row":
            y = y.select(0, 0)
        return x + (2.5 if other_shape == "scalar" else y), x.exp(), m.where(x > 0, x, y)
    assert_same(fn(strata, a, b), fn(torch, a, b), check_stride=True)
    real = fn(strata, a, b)
    meta = fn(strata, strata.tensor(a).to("meta"), strata.tensor(b).to("meta"))
    for r, mt in zip(real, meta):
        assert mt.stride() == r.stride() and mt.dtype is r.dtype


# --- in-place ops ---------------------------------------------------------------------------------

INPLACE = [
    ("add_", lambda x, y: x.add_(y, alpha=2)),
    ("mul_", lambda x, y: x.mul_(y)),
    ("sub_", lambda x, y: x.sub_(y)),
    ("clamp_", lambda x, y: x.clamp_(min=y)),
    ("exp_", lambda x, y: x.exp_()),
    ("lt_", lambda x, y: x.lt_(y)),
    ("pow_", lambda x, y: x.pow_(2)),
    ("addcmul_", lambda x, y: x.addcmul_(y, y, value=0.5)),
    ("lerp_", lambda x, y: x.lerp_(y, 0.25)),
]


@pytest.mark.parametrize("name,fn", INPLACE, ids=[n for n, _ in INPLACE])
def test_inplace_values_version_and_views(name, fn):
    """One bump of the shared version counter per in-place op, seen through views; the result is
    self; the view and its base see the write."""
    a = np.arange(6, dtype=np.float32).reshape(2, 3) / 4
    b = np.linspace(-1, 1, 3, dtype=np.float32)
    for m in (strata, torch):
        base = m.tensor(a)
        view = base.select(0, 1)
        before = base._version
        out = fn(view, m.tensor(b))
        assert out is view
        assert base._version == view._version == before + 1
    check(lambda m, x, y: (lambda base: (fn(base.select(0, 1), y), base)[1])(x.clone()), a, b)


def test_version_counts_each_inplace_op_and_is_shared():
    counts = []
    for m in (strata, torch):
        x = m.zeros(3)
        v = x[1:]
        x.add_(1)
        v.mul_(2)
        x.zero_()
        v.fill_(3)
        x.copy_(m.ones(3))
        x.clamp_(0, 1)
        counts.append((x._version, v._version, x.clone()._version))
    assert counts[0] == counts[1]


@pytest.mark.parametrize("name,fn", [
    ("add_", lambda m, x, y: x.add_(y)),
    ("clamp_", lambda m, x, y: x.clamp_(y)),
    ("where-into", lambda m, x, y: x.copy_(m.where(y > 0, y, y))),
    ("lerp_", lambda m, x, y: x.lerp_(y, 0.5)),
    ("addcdiv_", lambda m, x, y: x.addcdiv_(y, y)),
])
def test_inplace_broadcast_shape_error(name, fn):
    a, b = np.zeros(3, np.float32), np.ones((2, 3), np.float32)
    check_error(fn, a, b, match=r"output with shape \[3\] doesn't match the broadcast shape "
                                r"\[2, 3\]")


@pytest.mark.parametrize("fn", [
    lambda m, x, y: x.add_(y), lambda m, x, y: x.mul_(2.5), lambda m, x, y: x.div_(y),
    lambda m, x, y: x.exp_(), lambda m, x, y: x.pow_(0.5), lambda m, x, y: x.clamp_(max=0.5),
    lambda m, x, y: x.sqrt_(), lambda m, x, y: x.addcmul_(y, y),
])
def test_inplace_cast_error_leaves_self_unchanged(fn):
    a = np.array([1, 2, 3], np.int64)
    b = np.array([0.5, 1.5, 2.5], np.float32)
    versions = []
    for m in (strata, torch):
        x = m.tensor(a)
        with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired "
                                               "output type (Long|long int)"):
            fn(m, x, m.tensor(b))
        versions.append(x._version)
        assert x.tolist() == [1, 2, 3]
    assert versions[0] == versions[1] == 0


def test_bool_result_type_cast_error():
    check_error(lambda m, x: x.add_(2), np.array([True, False]),
                match="result type Long can't be cast to the desired output type Bool")
    check_error(lambda m, x: x.square_(), np.array([True, False]),
                match="result type Long can't be cast to the desired output type Bool")


@pytest.mark.parametrize("fn", [
    lambda m, x: x.expand(3, 2).add_(1),
    lambda m, x: x.expand(3, 2).exp_(),
    lambda m, x: x.expand(3, 2).clamp_(0, 1),
    lambda m, x: x.expand(3, 2).copy_(m.ones(3, 2)),
    lambda m, x: x.expand(3, 2).mul_(m.ones(3, 2)),
])
def test_inplace_on_expanded_tensor_is_refused(fn):
    check_error(fn, np.array([1.0, 2.0], np.float32),
                match="unsupported operation: more than one element of the written-to tensor "
                      "refers to a single memory location")


@pytest.mark.parametrize("fn", [
    lambda m, x: x[1:].add_(x[:-1]),
    lambda m, x: x[:-1].copy_(x[1:]),
    lambda m, x: x[1:].mul_(x[:-1]),
])
def test_inplace_partial_overlap_is_refused(fn):
    check_error(fn, np.arange(5, dtype=np.float32),
                match="some elements of the input tensor and the written-to tensor refer to a "
                      "single memory location")


def test_inplace_full_alias_is_fine():
    check(lambda m, x: x.add_(x), np.arange(5, dtype=np.float32))
    check(lambda m, x: x.mul_(x.view(5)), np.arange(5, dtype=np.float32))


# --- errors PyTorch raises ------------------------------------------------------------------------

@pytest.mark.parametrize("fn", [
    lambda m, x, y: x // y,
    lambda m, x, y: x % y,
    lambda m, x, y: m.fmod(x, y),
    lambda m, x, y: m.div(x, y, rounding_mode="trunc"),
    lambda m, x, y: m.div(x, y, rounding_mode="floor"),
    lambda m, x, y: x.remainder_(y),
    lambda m, x, y: x // 0,
    lambda m, x, y: m.floor_divide(x, 0),
])
@pytest.mark.parametrize("dtype", ["int64", "uint8", "int8"])
def test_integer_division_by_zero(fn, dtype):
    x = np.array([1, 2, 3], dtype)
    y = np.array([1, 0, 2], dtype)
    check_error(fn, x, y, match="ZeroDivisionError")


def test_float_division_by_zero_is_ieee():
    check(lambda m, x, y: (x / y, x // y, x % y, m.fmod(x, y)),
          np.array([1.0, -1.0, 0.0], np.float32), np.zeros(3, np.float32))
    check(lambda m, x: x / 0, np.array([1, 0, -2]))


@pytest.mark.parametrize("fn", [
    lambda m, x: x ** -1, lambda m, x: m.pow(x, -2), lambda m, x: x.pow_(-1),
    lambda m, x: x.square().pow(-3),
])
def test_integer_to_negative_integer_power(fn):
    check_error(fn, np.array([1, 2, 3]), match="Integers to negative integer powers are not "
                                               "allowed.")


def test_negative_integer_powers_with_tensor_exponents_are_computed():
    check(lambda m, x, y: (x ** y, 2 ** y, m.pow(x, y.abs())),
          np.array([1, 2, -1, -1, 3, 0]), np.array([-1, -2, -3, -2, 0, 2]))


@pytest.mark.parametrize("fn,match", [
    (lambda m, x: x - x, "with two bool tensors is not supported"),
    (lambda m, x: x - 1, "with a bool tensor is not supported"),
    (lambda m, x: 1.5 - x, "with a bool tensor is not supported"),
    (lambda m, x: m.rsub(x, x), "with two bool tensors"),
    (lambda m, x: x.float() - x, "with a bool tensor is not supported"),
    (lambda m, x: -x, "Negation, the `-` operator, on a bool tensor is not supported"),
    (lambda m, x: x.neg_(), "Negation, the `-` operator, on a bool tensor"),
])
def test_bool_subtraction_and_negation(fn, match):
    check_error(fn, np.array([True, False]), match=match)


@pytest.mark.parametrize("dtype", FLOATS + ["bfloat16"])
@pytest.mark.parametrize("fn", [
    lambda m, x: x & x, lambda m, x: x | 1, lambda m, x: x ^ True, lambda m, x: m.bitwise_not(x),
    lambda m, x: m.bitwise_left_shift(x, 1), lambda m, x: x.bitwise_and_(x),
])
def test_bitwise_ops_on_floats(dtype, fn):
    check_error(lambda m, x: fn(m, x.to(getattr(m, dtype))), np.array([1.0, 2.0]),
                match="not implemented for")


def test_invert_operator_on_floats_is_a_type_error():
    check_error(lambda m, x: ~x, np.array([1.0]), match="only implemented on integer and "
                                                        "Boolean-type tensors")
    check(lambda m, x, y: (~x, ~y), np.array([1, -2]), np.array([True, False]))


@pytest.mark.parametrize("fn,x", [
    (lambda m, x: m.abs(x), np.array([True])),
    (lambda m, x: m.floor(x), np.array([True])),
    (lambda m, x: m.round(x), np.array([True])),
    (lambda m, x: m.round(x, decimals=1), np.array([1, 2])),
    (lambda m, x: m.frac(x), np.array([1, 2])),
    (lambda m, x: m.hypot(x, x), np.array([1, 2])),
    (lambda m, x: m.remainder(x, x), np.array([True])),
    (lambda m, x: m.pow(x, x), np.array([True])),
    (lambda m, x: m.bitwise_left_shift(x, x), np.array([True])),
    (lambda m, x: m.clamp(x, x, x), np.array([True])),
    (lambda m, x: m.clamp(x, False, True), np.array([True])),
    (lambda m, x: m.lerp(x, x, 0.5), np.array([1, 2])),
    (lambda m, x: m.lerp(x, x, x), np.array([1, 2])),
    (lambda m, x: m.addcmul(x, x, x), np.array([True])),
    (lambda m, x: m.ops.aten.gelu.default(x), np.array([1, 2])),
    (lambda m, x: m.ops.aten.silu.default(x), np.array([1, 2])),
    (lambda m, x: m.div(x, x, rounding_mode="floor"), np.array([True])),
])
def test_dtypes_without_a_kernel(fn, x):
    check_error(fn, x, match="not implemented for")


@pytest.mark.parametrize("fn,x,match", [
    (lambda m, x: m.relu(x), np.array([True]), "Boolean inputs not supported for relu"),
    (lambda m, x: m.addcdiv(x, x, x), np.array([1, 2]), "Integer division with addcdiv is no "
                                                        "longer supported"),
    (lambda m, x: m.add(x, x, alpha=0.5), np.array([1, 2]), "For integral input tensors, "
                                                            "argument alpha must not be a "
                                                            "floating point number."),
    (lambda m, x: m.add(x, x, alpha=True), np.array([1.0]), "Boolean alpha only supported for "
                                                           "Boolean results."),
    (lambda m, x: m.div(x, x, rounding_mode="up"), np.array([1.0]),
     "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found 'up'"),
    (lambda m, x: m.ops.aten.gelu.default(x, approximate="fast"), np.array([1.0]),
     "approximate argument must be either none or tanh."),
    (lambda m, x: m.clamp(x), np.array([1.0]), "At least one of 'min' or 'max' must not be None"),
    (lambda m, x: m.where(x, x, x), np.array([1.0], np.float32),
     "where expected condition to be a boolean tensor, but got a tensor with dtype Float"),
    (lambda m, x: m.lerp(x, x.double(), 0.5), np.array([1.0], np.float32),
     "expected dtype float for `end` but got dtype double"),
    (lambda m, x: m.lerp(x, x, x.double()), np.array([1.0], np.float32),
     "expected dtype float for `weight` but got dtype double"),
    (lambda m, x: x + x[:2], np.zeros(3), "The size of tensor a \\(3\\) must match the size of "
                                          "tensor b \\(2\\) at non-singleton dimension 0"),
    (lambda m, x: m.where(x > 0, x, x[:2]), np.zeros(3), "must match the size"),
])
def test_argument_errors(fn, x, match):
    check_error(fn, x, match=match)


def test_where_uint8_condition_warns_and_works():
    cond = np.array([1, 0, 1], np.uint8)
    with pytest.warns(UserWarning, match="where received a uint8 condition tensor"):
        check(lambda m, c: m.where(c, 1.0, 2.0), cond)


def test_python_number_operands_wrap_like_pytorch():
    """A Python int outside the tensor's dtype is cast to it (two's complement), not compared or
    computed as a wider number (NumPy would)."""
    u8 = np.array([0, 1, 200, 255], np.uint8)
    check(lambda m, x: (x - 1, x + 300, x * -1, x < -1, x == 255 + 256, x // 7), u8)
    i8 = np.array([-128, -1, 0, 127], np.int8)
    check(lambda m, x: (x + 200, x > 300, x & 0x1FF), i8)


def test_numpy_scalars_and_0dim_promotion():
    x = np.array([1, 2, 3], np.int32)
    check(lambda m, t: (t + np.float64(1.5), t * np.int64(2)), x)
    check(lambda m, t, s: (t + s, t * s, m.maximum(t, s)), x, np.array(2.5))
    check(lambda m, t, s: (t + s, t.float() + s), x, np.array(2, np.int64))


@pytest.mark.parametrize("mode", ["trunc", "floor"])
def test_div_rounding_modes_signs(mode):
    a = np.array([-7, 7, -7, 7, -6, 0, 9], np.int64)
    b = np.array([2, -2, -2, 2, 3, -5, 4], np.int64)
    check(lambda m, x, y: (m.div(x, y, rounding_mode=mode), x.div(y, rounding_mode=mode)), a, b)
    f = np.array([-7.5, 7.5, -7.0, 7.0, 1.0, -1.0, 0.0, np.inf, -np.inf, np.nan], np.float64)
    g = np.array([2.0, -2.0, -2.0, 2.0, 0.0, 0.0, 0.0, 2.0, np.inf, 1.0], np.float64)
    check(lambda m, x, y: m.div(x, y, rounding_mode=mode), f, g)


def test_remainder_and_fmod_signs():
    a = np.array([-7, 7, -7, 7, 0], np.int32)
    b = np.array([3, -3, -3, 3, 5], np.int32)
    check(lambda m, x, y: (x % y, m.fmod(x, y), m.remainder(x, 2.5)), a, b)
    f = np.array([-7.5, 7.5, 5.0, -0.0, np.inf, 3.0], np.float64)
    g = np.array([2.0, -2.0, np.inf, 2.0, 2.0, -np.inf], np.float64)
    check(lambda m, x, y: (x % y, m.fmod(x, y)), f, g)


def test_floor_divide_on_floats_with_inf_and_nan():
    f = np.array([np.inf, -np.inf, np.nan, 1.0, 1.0, -1.0, 5.0, -5.0, 0.0], np.float32)
    g = np.array([2.0, 2.0, 1.0, np.inf, -np.inf, np.inf, 0.5, 0.3, -3.0], np.float32)
    check(lambda m, x, y: (x // y, m.floor_divide(x, y)), f, g)


def test_round_decimals():
    x = np.array([1.2345, -2.5, 0.5, 1.5, 2.675, 12345.6, -0.05, np.nan], np.float64)
    check(lambda m, t: [m.round(t, decimals=d) for d in (-2, -1, 0, 1, 2, 3)], x)
    check(lambda m, t: m.round(t.float(), decimals=2), x)


def test_clamp_with_tensor_bounds_and_promotion():
    x = np.array([[-2.0, 0.5, 3.0], [1.0, np.nan, -0.5]], np.float32)
    lo = np.array([0.0, 1.0, -1.0], np.float64)
    hi = np.array([[1.0], [0.0]], np.float32)
    check(lambda m, t, a, b: (m.clamp(t, a, b), m.clamp(t, min=a), m.clamp(t, max=b),
                              t.clamp(b, a)), x, lo, hi)
    check(lambda m, t, a: m.clamp(t.int(), a), x, lo)


def test_special_functions_accuracy_and_both_code_paths():
    """erf/erfc/lgamma/erfinv against the C library (math) and PyTorch, on inputs small enough
    for the per-element path and large enough for the vectorised one."""
    rng = np.random.default_rng(0)
    for n in (7, 5000):
        x = np.concatenate([rng.normal(0, 3, n), [0.0, -0.0, 30.0, -30.0, np.inf, np.nan]])
        for name, ref in (("erf", math.erf), ("erfc", math.erfc)):
            got = getattr(strata, name)(strata.tensor(x)).numpy()
            want = np.array([ref(v) for v in x])
            np.testing.assert_allclose(got, want, rtol=1e-15, atol=1e-300, equal_nan=True)
        g = np.concatenate([rng.uniform(-20, 20, n), [0.0, -1.0, -2.0, 1.0, 2.0, 1e-9, 1e300]])
        check(lambda m, t: m.lgamma(t), g, atol=1e-12, rtol=1e-12)
        y = np.concatenate([rng.uniform(-0.999, 0.999, n), [-1.0, 1.0, 0.0, 2.0]])
        check(lambda m, t: (m.erfinv(t), m.erfinv(t.float())), y, rtol=1e-9)


@pytest.mark.parametrize("dtype", FLOATS + ["bfloat16"])
def test_gelu_and_silu_accuracy(dtype):
    x = np.linspace(-10, 10, 2001)
    check(lambda m, t: (m.ops.aten.gelu.default(t.to(getattr(m, dtype))),
                        m.ops.aten.gelu.default(t.to(getattr(m, dtype)), approximate="tanh"),
                        m.ops.aten.silu.default(t.to(getattr(m, dtype)))), x,
          atol=2e-2 if dtype in ("float16", "bfloat16") else None)


def test_out_argument():
    a, b = np.arange(6.0).reshape(2, 3), np.ones(3)

    def fn(m, x, y):
        out = m.empty(2, 3, dtype=m.float64)
        r = m.add(x, y, out=out)
        m.div(x, y, rounding_mode="floor", out=out)
        return r is out, out
    check(fn, a, b)


def test_numpy_style_aliases():
    a = np.array([[-1.5, 0.25], [2.0, -0.5]], np.float32)
    b = np.array([0.5, -2.0], np.float32)
    check(lambda m, x, y: (m.absolute(x), m.negative(x), m.arctan2(x, y), m.multiply(x, y),
                           m.subtract(x, y, alpha=2), m.divide(x, y), m.clip(x, -1, 1),
                           m.greater(x, y), m.less_equal(x, y), m.not_equal(x, y),
                           m.fix(x), m.arcsin(x.clamp(-1, 1)), x.arctan2(y), x.absolute(),
                           x.clone().multiply_(y), x.clone().divide_(y, rounding_mode="floor"),
                           x.clone().true_divide_(y)), a, b)


# --- the CPU kernels' fast paths: in place through out=, large operands in parallel chunks -------

def _big(dtype="float32", n=None, seed=0):
    from strata.backends.cpu.elementwise import LARGE
    rng = np.random.default_rng(seed)
    return rng.uniform(0.1, 3.0, n or 7 * (LARGE // 7 + 1)).astype(dtype)   # odd, > LARGE


@pytest.mark.parametrize("name", ["exp", "sin", "sqrt", "rsqrt", "sigmoid", "reciprocal", "relu",
                                  "neg", "abs", "tanh"])
def test_large_unary_matches_torch(name):
    check(lambda m, x: (getattr(x, name)(), getattr(x.clone(), name + "_")()), _big())
    check(lambda m, x: getattr((-x).reshape(-1, 7), name)(), _big())


def test_large_binary_scalars_and_broadcasts():
    a, b = _big(), _big(seed=1)
    check(lambda m, x, y: (x + y, m.add(x, y, alpha=0.5), m.sub(x, y, alpha=-2), x * 3,
                           2.5 - x, x / y, m.maximum(x, y), x ** 2, x + m.tensor(1.5)), a, b)
    rows = _big(n=(1 << 16) * 6).reshape(-1, 6)   # broadcast: the unchunked path
    check(lambda m, x, y: (x + y, x.t() * 2), rows, _big(n=6, seed=2))


def test_large_noncontiguous_and_half():
    a = _big(n=(1 << 19) * 2)
    check(lambda m, x: (x[::2].exp(), x.reshape(2, -1).t() * 2), a)
    check(lambda m, x: (x.half().exp(), x.half() + x.half(), x.double().sin()), a,
          atol=1e-3)


def test_large_inplace_matches_torch_and_bumps_version():
    a, b = _big(), _big(seed=1)

    def fn(m, x, y):
        v0 = x._version
        x.add_(y, alpha=3).mul_(0.5).sqrt_().sub_(1.25)
        x[: x.shape[0] // 2].exp_()   # contiguous view
        x[::3].mul_(2)                # strided view: one NumPy call
        return x, x._version - v0
    check(fn, a, b)


def test_large_result_is_placed_apart_from_its_input():
    """Note [4K aliasing]: a big result never starts within 256 bytes (mod 4 KiB) after its
    input, whatever the heap did."""
    x = strata.tensor(_big())
    for y in (x.exp(), x * 2, x.sigmoid()):
        delta = (y.data_ptr() - x.data_ptr()) % 4096
        assert 256 <= delta <= 4096 - 256
        assert y.is_contiguous() and y.storage_offset() == 0


def test_inplace_writes_self_without_reallocating():
    """In-place kernels compute straight into self's memory (no copy back from a temporary):
    self keeps its storage, aliases (x.add_(x)) and views of self work."""
    a = np.arange(12, dtype=np.float32).reshape(3, 4)

    def fn(m, x):
        ptr = x.data_ptr()
        x.add_(x, alpha=2)
        x[:, 1:3].mul_(x[:, 1:3].sigmoid())
        x.t().sub_(m.ones(4, 1), alpha=0.5)
        x.relu_().rsqrt_()
        return x, x.data_ptr() == ptr
    check(fn, a)
    check(lambda m, x: x.half().add_(m.tensor(x), alpha=3), a)        # computes in float32
    check(lambda m, x: x.div_(m.tensor(2.0, dtype=m.float64)), a)     # promoted compute dtype
    check(lambda m, x: x.long().mul_(2).add_(m.ones(4, dtype=m.uint8), alpha=3), a)


def test_inplace_error_leaves_self_unchanged():
    a = np.arange(6, dtype=np.int64).reshape(2, 3)
    check_error(lambda m, x: x.add_(0.5), a)
    check_error(lambda m, x: x.mul_(m.ones(4, 2, 3, dtype=m.int64)), a)
    check_error(lambda m, x: x.add_(1, alpha=0.5), a)


@pytest.mark.parametrize("dtype", DTYPES)
def test_large_where_selects_bits_exactly(dtype):
    """Big selections pick bits through integer masks: every dtype, NaN payloads, -0.0 and inf
    come through unchanged, scalars on either side, broadcasts, a 0-dim condition."""
    from strata.backends.cpu.pointwise import BITWISE_WHERE_MIN
    rng = np.random.default_rng(0)
    n = BITWISE_WHERE_MIN + 13
    cond = rng.random((n,)) < 0.5
    a = rng.standard_normal((n,)) * 4
    if dtype in FLOATS:
        a[:4] = [np.nan, np.inf, -0.0, -np.inf]
    elif dtype == "bfloat16":   # (the float -> bfloat16 cast of NaN gives another payload)
        a[:3] = [np.inf, -0.0, -np.inf]
    a = a.astype(np.float32 if dtype == "bfloat16" else dtype)

    def fn(m, c, x):
        if dtype == "bfloat16":
            x = x.bfloat16()
        rows = x[: n // 13 * 13].reshape(13, -1)
        return (m.where(c, x, 0), m.where(c, 0, x), m.where(c, x, x.flip(0)),
                m.where(c, x, -0.0 if dtype in FLOATS else 1), m.where(c[:1].reshape(()), x, x),
                m.where(c[: rows.shape[1]], rows, rows[:1]), m.where(c, x.float(), 2.5))
    s_out, t_out = check(fn, cond, a)
    for s, t in zip(s_out, t_out):   # bit for bit (NaN and -0.0 too)
        s_bits = s.view(strata.int16).numpy() if s.dtype is strata.bfloat16 else s.numpy()
        t_bits = t.view(torch.int16).numpy() if t.dtype is torch.bfloat16 else t.numpy()
        assert s_bits.tobytes() == t_bits.tobytes()


@pytest.mark.parametrize("weight", [0.5, "tensor"])
def test_lerp_of_integers_is_refused_as_torch(weight):
    """ATen's dtype dispatch error (``lerp_kernel_scalar``/``_tensor``), the same type and
    words, before anything is computed."""
    messages = []
    for lib in (strata, torch):
        a, b = lib.tensor([1, 2]), lib.tensor([3, 4])
        w = lib.tensor([1, 1]) if weight == "tensor" else weight
        with pytest.raises(NotImplementedError) as got:
            lib.lerp(a, b, w)
        messages.append(str(got.value))
    assert messages[0] == messages[1]


@pytest.mark.parametrize("name,call", [
    ("_unique2", lambda x: strata.unique(x)),
    ("bincount", lambda x: strata.bincount(x)),
    ("unique_consecutive", lambda x: strata.unique_consecutive(x)),
])
def test_value_dependent_shapes_refuse_meta_tensors_by_name(name, call):
    """An op whose output shape depends on its input's values validates, then refuses a meta
    input with a NotImplementedError naming the op (the meta device has no values)."""
    x = strata.tensor([1, 2, 2, 0]).to("meta")
    with pytest.raises(NotImplementedError, match=f"aten::{name}: attempted to run this "
                                                  "operator with Meta tensors"):
        call(x)


@pytest.mark.parametrize("name", ["addcmul", "addcdiv"])
def test_addcmul_and_addcdiv_refuse_bool_as_torch(name):
    """ATen has no bool kernel for addcmul (NotImplementedError naming it) and refuses integer
    division in addcdiv: the same exception type and words, and the input unchanged."""
    got, want = [], []
    for m, out in ((strata, got), (torch, want)):
        t = m.tensor([True, False])
        try:
            getattr(m, name)(t, t, t)
        except Exception as e:      # noqa: BLE001 (the error is what is compared)
            out.append((type(e).__name__, str(e)))
        assert t.tolist() == [True, False]
    assert got == want and got
