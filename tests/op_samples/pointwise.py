"""Sample inputs for the ops of ``ops/pointwise.py``.

Every op gets every dtype PyTorch supports for it (bfloat16 inputs are made inside the sample from
float32 arrays, since NumPy has no bfloat16 that torch.tensor accepts), Python numbers on either
side, 0-dim tensors mixed with dimensioned ones (promotion), broadcasting, empty tensors, NaN/inf,
and its in-place variant. Errors live in tests/test_pointwise.py.
"""

import numpy as np

from op_samples import Sample

FLOATS = ("float16", "bfloat16", "float32", "float64")
INTS = ("uint8", "int8", "int16", "int32", "int64")
ALL = ("bool",) + INTS + FLOATS
NO_BOOL = INTS + FLOATS
SPECIAL = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 0.5, -1.5, 2.0, 1e-3])


def arr(dtype, shape=(2, 3), lo=-3.0, hi=3.0, seed=0):
    """Values of ``dtype`` in [lo, hi) (integers clipped to the dtype; bfloat16 as float32)."""
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return np.asarray(rng.random(shape) < 0.5)
    if dtype in INTS:
        lo, hi = int(np.floor(lo)), int(np.ceil(hi))
        if dtype == "uint8" and lo < 0:
            lo, hi = max(lo, 0), max(hi, 3)
        return rng.integers(lo, hi + 1, shape).astype(dtype)
    return rng.uniform(lo, hi, shape).astype(np.float32 if dtype == "bfloat16" else dtype)


def cast(m, x, dtype):
    """The sample's tensor in ``dtype`` (only bfloat16 needs converting inside the sample)."""
    if dtype == "bfloat16" and isinstance(x, m.Tensor):
        return x.to(m.bfloat16)
    return x


def sample(fn, inputs, dtypes, name, **kw):
    """``fn(m, *tensors)`` with each input converted to its dtype first."""
    def run(m, *xs):
        return fn(m, *(cast(m, x, d) for x, d in zip(xs, dtypes)))
    return Sample(run, tuple(inputs), name=name, **({"check_stride": True} | kw))


# --- unary ---------------------------------------------------------------------------------------
# name -> (dtypes, value range, has in-place variant, in-place dtypes)
UNARY_FLOAT = {  # integer inputs compute in the default float dtype
    "exp": (-3, 3), "exp2": (-3, 3), "expm1": (-3, 3), "log": (0.05, 5), "log2": (0.05, 5),
    "log10": (0.05, 5), "log1p": (-0.9, 5), "sqrt": (0, 5), "rsqrt": (0.05, 5),
    "sin": (-4, 4), "cos": (-4, 4), "tan": (-1.4, 1.4), "asin": (-1, 1), "acos": (-1, 1),
    "atan": (-4, 4), "sinh": (-3, 3), "cosh": (-3, 3), "tanh": (-3, 3), "asinh": (-4, 4),
    "acosh": (1, 5), "atanh": (-0.95, 0.95), "sigmoid": (-6, 6), "reciprocal": (0.2, 4),
}
UNARY_SAME = {  # name -> dtypes (the result keeps the input dtype)
    "abs": NO_BOOL, "neg": NO_BOOL, "sign": ALL, "floor": NO_BOOL, "ceil": NO_BOOL,
    "trunc": NO_BOOL, "frac": FLOATS, "round": NO_BOOL, "relu": NO_BOOL,
    "bitwise_not": ("bool",) + INTS,
}
UNARY_BOOL = ("isnan", "isinf", "isfinite", "signbit", "logical_not")


def _unary_samples(name, dtypes, lo, hi, inplace, float_result=False):
    call = lambda m, x: getattr(m, name)(x)  # noqa: E731
    out = [sample(call, [arr(d, lo=lo, hi=hi)], [d], d) for d in dtypes]
    widest = dtypes[-1]
    out += [
        sample(call, [arr(widest, (), lo, hi)], [widest], "0dim"),
        sample(call, [arr(widest, (0, 3), lo, hi)], [widest], "empty"),
        sample(lambda m, x: getattr(x, name)(), [arr(widest, (3, 4, 5), lo, hi, seed=1)],
               [widest], "method-3d"),
    ]
    if name not in ("bitwise_not",):
        out += [sample(call, [SPECIAL.astype(d)], [d], f"special-{d}")
                for d in ("float32", "float64") if "float32" in dtypes or float_result]
    if float_result:
        out.append(sample(call, [arr("int64", lo=lo, hi=hi)], ["int64"], "int-to-float"))
    samples = {f"aten::{name}": out}
    if inplace:
        in_dtypes = [d for d in dtypes if d in FLOATS] if float_result else dtypes
        samples[f"aten::{name}_"] = [
            sample(lambda m, x: getattr(x, name + "_")(), [arr(d, lo=lo, hi=hi)], [d], d)
            for d in in_dtypes] + [
            sample(lambda m, x: getattr(x, name + "_")(), [arr(in_dtypes[-1], (), lo, hi)],
                   [in_dtypes[-1]], "0dim"),
            # (torch.tensor keeps NumPy's zero strides of an empty array: skip the stride check)
            sample(lambda m, x: getattr(x, name + "_")(), [arr(in_dtypes[-1], (0, 2), lo, hi)],
                   [in_dtypes[-1]], "empty", check_stride=False)]
    return samples


UNARY_SAMPLES = {}
for _name, (_lo, _hi) in UNARY_FLOAT.items():
    UNARY_SAMPLES |= _unary_samples(_name, ALL, _lo, _hi, True, float_result=True)
for _name, _dtypes in UNARY_SAME.items():
    UNARY_SAMPLES |= _unary_samples(_name, _dtypes, -3, 3, True)
for _name in UNARY_BOOL:
    UNARY_SAMPLES |= _unary_samples(_name, ALL, -3, 3, _name == "logical_not")

UNARY_SAMPLES["aten::round"] += [
    sample(lambda m, x: m.round(x, decimals=2), [arr(d, lo=-30, hi=30)], [d], f"decimals-{d}",
           atol=1e-2 if d == "bfloat16" else None)
    for d in FLOATS] + [
    sample(lambda m, x: m.round(x, decimals=-1), [arr("float64", lo=-300, hi=300)], ["float64"],
           "decimals-neg"),
    sample(lambda m, x: m.round(x), [np.array([0.5, 1.5, 2.5, -0.5, -2.5, 3.5], "float32")],
           ["float32"], "half-to-even"),
]
UNARY_SAMPLES["aten::exp_"].append(
    sample(lambda m, x: m.exp_(x), [arr("float32")], ["float32"], "function"))
UNARY_SAMPLES["aten::sqrt_"].append(
    sample(lambda m, x: m.sqrt_(x), [arr("float64", lo=0)], ["float64"], "function"))
UNARY_SAMPLES["aten::round_"].append(
    sample(lambda m, x: x.round_(decimals=1), [arr("float64")], ["float64"], "decimals"))
UNARY_SAMPLES["aten::sign"].append(
    sample(lambda m, x: m.sign(x), [np.array([-0.0, 0.0, np.nan, -3.0], "float32")],
           ["float32"], "zeros-nan"))
UNARY_SAMPLES["aten::abs"].append(
    sample(lambda m, x: m.abs(x), [np.array([-128, 127, 0], "int8")], ["int8"], "int8-min"))

GELU = {
    "aten::gelu": [
        sample(lambda m, x: m.ops.aten.gelu.default(x), [arr(d, lo=-5, hi=5)], [d], d)
        for d in FLOATS] + [
        sample(lambda m, x: m.ops.aten.gelu.default(x, approximate="tanh"),
               [arr(d, lo=-5, hi=5)], [d], f"tanh-{d}") for d in ("float32", "float64")] + [
        sample(lambda m, x: m.ops.aten.gelu.default(x), [SPECIAL], ["float64"], "special"),
        sample(lambda m, x: m.ops.aten.gelu.default(x), [np.linspace(-8, 8, 1001)],
               ["float32"], "large-array"),
    ],
    "aten::gelu_": [
        sample(lambda m, x: m.ops.aten.gelu_.default(x), [arr("float32")], ["float32"], "none"),
        sample(lambda m, x: m.ops.aten.gelu_.default(x, approximate="tanh"), [arr("float64")],
               ["float64"], "tanh"),
    ],
}


# --- binary ---------------------------------------------------------------------------------------
def _binary_samples(name, dtypes, fn, method, *, inplace=None, inplace_dtypes=None, lo=-3, hi=3,
                    other_lo=None, other_hi=None, scalars=(2, 2.5, True), reflected=None,
                    special=True, mixed=True):
    """Samples for ``fn(m, x, y)`` (op ``name``) and for ``x.<method>_(y)`` (op ``inplace``);
    ``reflected(s, x)`` is the Python operator form of ``scalar op tensor``; ``mixed``: also
    operands of two dtypes (an op refusing them, heaviside, is tested on its own)."""
    olo = lo if other_lo is None else other_lo
    ohi = hi if other_hi is None else other_hi

    def x(d, shape=(2, 3), seed=0):
        return arr(d, shape, lo, hi, seed)

    def y(d, shape=(3,), seed=1):
        return arr(d, shape, olo, ohi, seed)

    widest = dtypes[-1]
    out = [sample(fn, [x(d), y(d)], [d, d], d) for d in dtypes]
    out += [
        sample(fn, [x(widest, (2, 1)), y(widest, (1, 3))], [widest, widest], "outer"),
        sample(fn, [x(widest, ()), y(widest, (), 2)], [widest, widest], "0dim"),
        sample(fn, [x(widest, (0, 3)), y(widest)], [widest, widest], "empty"),
        sample(fn, [x(widest, (4, 1, 3), 3), y(widest, (2, 3), 4)], [widest, widest],
               "broadcast-3d"),
        sample(lambda m, a, b: getattr(a, method)(b), [x(widest), y(widest)], [widest, widest],
               "method"),
    ]
    pairs = [("int32", "float16"), ("uint8", "int8"), ("bool", "int16"), ("float16", "bfloat16"),
             ("int64", "float32"), ("float32", "float64"), ("int8", "int32")]
    out += [sample(fn, [x(a), y(b)], [a, b], f"{a}-{b}") for a, b in pairs
            if a in dtypes and b in dtypes and mixed]
    zero_dim = [("float32", "float64"), ("int32", "float64"), ("int8", "int64"),
                ("float16", "float32"), ("uint8", "int64"), ("bool", "float32")]
    out += [sample(fn, [x(a), y(b, ())], [a, b], f"{a}-0dim-{b}") for a, b in zero_dim
            if a in dtypes and b in dtypes and mixed]
    out += [sample(lambda m, a, s=s: fn(m, a, s), [x(d)], [d], f"{d}-scalar-{s!r}")
            for s in scalars for d in dtypes]
    if reflected is not None:
        out += [sample(lambda m, a, s=s: reflected(s, a), [y(d, (2, 3))], [d],
                       f"reflected-{d}-{s!r}") for d in dtypes for s in scalars[:2]]
    if special:
        out.append(sample(fn, [SPECIAL[:, None], SPECIAL[None, :]], ["float64", "float64"],
                          "special"))
    samples = {name: out}
    if inplace is not None:
        in_dtypes = dtypes if inplace_dtypes is None else inplace_dtypes
        call_ = lambda m, a, b: getattr(a, method + "_")(b)  # noqa: E731
        in_widest = in_dtypes[-1]
        samples[inplace] = [sample(call_, [x(d), y(d)], [d, d], d) for d in in_dtypes] + [
            sample(call_, [x(in_widest), y(in_widest, ())], [in_widest] * 2, "0dim-other"),
            sample(call_, [x(in_widest, (0, 3)), y(in_widest)], [in_widest] * 2, "empty",
                   check_stride=False),
        ] + [sample(lambda m, a, s=s: getattr(a, method + "_")(s), [x(in_widest)], [in_widest],
                    f"scalar-{s!r}") for s in scalars[:1]]
        if "float32" in in_dtypes and "int32" in dtypes and mixed:
            samples[inplace].append(sample(call_, [x("float32"), y("int32")],
                                           ["float32", "int32"], "promoted-other"))
    return samples


NONZERO = dict(other_lo=1, other_hi=4)  # integer divisors must not be 0 (an error in PyTorch)
BITS = ("bool",) + INTS

BINARY_SAMPLES = {}
for _args, _kw in [
    (("aten::add.Tensor", ALL, lambda m, a, b: m.add(a, b), "add"),
     dict(inplace="aten::add_.Tensor", reflected=lambda s, a: s + a)),
    (("aten::sub.Tensor", NO_BOOL, lambda m, a, b: m.sub(a, b), "sub"),
     dict(inplace="aten::sub_.Tensor", reflected=lambda s, a: s - a, scalars=(2, 2.5))),
    (("aten::mul.Tensor", ALL, lambda m, a, b: m.mul(a, b), "mul"),
     dict(inplace="aten::mul_.Tensor", reflected=lambda s, a: s * a)),
    (("aten::div.Tensor", ALL, lambda m, a, b: m.div(a, b), "div"),
     dict(inplace="aten::div_.Tensor", inplace_dtypes=FLOATS, reflected=lambda s, a: s / a,
          **NONZERO)),
    (("aten::remainder.Tensor", NO_BOOL, lambda m, a, b: m.remainder(a, b), "remainder"),
     dict(inplace="aten::remainder_.Tensor", reflected=lambda s, a: s % a, lo=-7, hi=7,
          **NONZERO)),
    (("aten::fmod.Tensor", NO_BOOL, lambda m, a, b: m.fmod(a, b), "fmod"),
     dict(inplace="aten::fmod_.Tensor", lo=-7, hi=7, scalars=(2, 2.5), **NONZERO)),
    (("aten::pow.Tensor_Tensor", NO_BOOL, lambda m, a, b: m.pow(a, b), "pow"),
     dict(inplace="aten::pow_.Tensor", reflected=lambda s, a: s ** a, lo=0, hi=3, other_lo=0,
          other_hi=3, scalars=(2, 0.5, 3, 0, 1))),
    (("aten::atan2", ALL, lambda m, a, b: m.atan2(a, b), "atan2"),
     dict(inplace="aten::atan2_", inplace_dtypes=FLOATS, scalars=())),
    (("aten::maximum", ALL, lambda m, a, b: m.maximum(a, b), "maximum"), dict(scalars=())),
    (("aten::minimum", ALL, lambda m, a, b: m.minimum(a, b), "minimum"), dict(scalars=())),
    (("aten::fmax", ALL, lambda m, a, b: m.fmax(a, b), "fmax"), dict(scalars=())),
    (("aten::fmin", ALL, lambda m, a, b: m.fmin(a, b), "fmin"), dict(scalars=())),
    (("aten::hypot", FLOATS, lambda m, a, b: m.hypot(a, b), "hypot"),
     dict(inplace="aten::hypot_", scalars=())),
    (("aten::heaviside", ALL, lambda m, a, b: m.heaviside(a, b), "heaviside"),
     dict(inplace="aten::heaviside_", scalars=(), mixed=False)),
    (("aten::copysign.Tensor", ALL, lambda m, a, b: m.copysign(a, b), "copysign"),
     dict(inplace="aten::copysign_.Tensor", inplace_dtypes=FLOATS, scalars=(-1.0, 2))),
    (("aten::bitwise_and.Tensor", BITS, lambda m, a, b: m.bitwise_and(a, b), "bitwise_and"),
     dict(inplace="aten::bitwise_and_.Tensor", reflected=lambda s, a: s & a, scalars=(5, True),
          special=False)),
    (("aten::bitwise_or.Tensor", BITS, lambda m, a, b: m.bitwise_or(a, b), "bitwise_or"),
     dict(inplace="aten::bitwise_or_.Tensor", reflected=lambda s, a: s | a, scalars=(5, True),
          special=False)),
    (("aten::bitwise_xor.Tensor", BITS, lambda m, a, b: m.bitwise_xor(a, b), "bitwise_xor"),
     dict(inplace="aten::bitwise_xor_.Tensor", reflected=lambda s, a: s ^ a, scalars=(5, True),
          special=False)),
    (("aten::bitwise_left_shift.Tensor", INTS, lambda m, a, b: m.bitwise_left_shift(a, b),
      "bitwise_left_shift"),
     dict(inplace="aten::bitwise_left_shift_.Tensor", lo=-9, hi=9, other_lo=0, other_hi=9,
          scalars=(3,), special=False)),
    (("aten::bitwise_right_shift.Tensor", INTS, lambda m, a, b: m.bitwise_right_shift(a, b),
      "bitwise_right_shift"),
     dict(inplace="aten::bitwise_right_shift_.Tensor", lo=-100, hi=100, other_lo=0, other_hi=9,
          scalars=(3,), special=False)),
    (("aten::eq.Tensor", ALL, lambda m, a, b: m.eq(a, b), "eq"),
     dict(inplace="aten::eq_.Tensor", lo=0, hi=3, reflected=lambda s, a: s == a)),
    (("aten::ne.Tensor", ALL, lambda m, a, b: m.ne(a, b), "ne"),
     dict(inplace="aten::ne_.Tensor", lo=0, hi=3, reflected=lambda s, a: s != a)),
    (("aten::lt.Tensor", ALL, lambda m, a, b: m.lt(a, b), "lt"),
     dict(inplace="aten::lt_.Tensor", reflected=lambda s, a: s < a)),
    (("aten::le.Tensor", ALL, lambda m, a, b: m.le(a, b), "le"),
     dict(inplace="aten::le_.Tensor", lo=0, hi=3, reflected=lambda s, a: s <= a)),
    (("aten::gt.Tensor", ALL, lambda m, a, b: m.gt(a, b), "gt"),
     dict(inplace="aten::gt_.Tensor", reflected=lambda s, a: s > a)),
    (("aten::ge.Tensor", ALL, lambda m, a, b: m.ge(a, b), "ge"),
     dict(inplace="aten::ge_.Tensor", lo=0, hi=3, reflected=lambda s, a: s >= a)),
    (("aten::logical_and", ALL, lambda m, a, b: m.logical_and(a, b), "logical_and"),
     dict(inplace="aten::logical_and_", scalars=())),
    (("aten::logical_or", ALL, lambda m, a, b: m.logical_or(a, b), "logical_or"),
     dict(inplace="aten::logical_or_", scalars=())),
    (("aten::logical_xor", ALL, lambda m, a, b: m.logical_xor(a, b), "logical_xor"),
     dict(inplace="aten::logical_xor_", scalars=())),
]:
    BINARY_SAMPLES |= _binary_samples(*_args, **_kw)

# signs of the remainder/fmod results follow the divisor/dividend respectively
for _q, _f in (("aten::remainder.Tensor", lambda m, a, b: m.remainder(a, b)),
               ("aten::fmod.Tensor", lambda m, a, b: m.fmod(a, b))):
    BINARY_SAMPLES[_q] += [
        sample(_f, [arr(d, lo=-7, hi=7), arr(d, (3,), -3, -1, 2)], [d, d], f"negative-divisor-{d}")
        for d in ("int8", "int64", "float32", "float64")]


# --- division with rounding modes ----------------------------------------------------------------
def _div(mode):
    return lambda m, a, b: m.div(a, b, rounding_mode=mode)


def _divisor(d, seed=1):
    """Non-zero divisors of both signs (positive for uint8)."""
    signs = np.array([1, -1, 1]) if d != "uint8" else np.ones(3, int)
    return (arr(d, (3,), 1, 4, seed) * signs).astype(np.float32 if d == "bfloat16" else d)


DIV_MODE = {"aten::div.Tensor_mode": [
    sample(_div(mode), [arr(d, lo=-9, hi=9), _divisor(d)],
           [d, d], f"{mode}-{d}") for mode in ("trunc", "floor") for d in NO_BOOL] + [
    sample(_div(mode), [SPECIAL[:, None], SPECIAL[None, :]], ["float64", "float64"],
           f"{mode}-special") for mode in ("trunc", "floor")] + [
    sample(lambda m, a: m.div(a, 2.5, rounding_mode="floor"), [arr("int32")], ["int32"],
           "int-float-scalar"),
    sample(lambda m, a: m.div(a, -2, rounding_mode="trunc"), [arr("int16", lo=-9, hi=9)],
           ["int16"], "int-scalar"),
    sample(lambda m, a, b: m.div(a, b, rounding_mode=None), [arr("int64"), arr("int64", lo=1)],
           ["int64", "int64"], "none-mode"),
    sample(lambda m, a, b: a // b, [arr("int64", lo=-9, hi=9), arr("int64", (3,), -3, -1, 1)],
           ["int64", "int64"], "floordiv-operator"),
    sample(lambda m, a: 7 // a, [arr("float32", lo=0.5)], ["float32"], "reflected-floordiv"),
    sample(lambda m, a, b: a.div(b, rounding_mode="floor"), [arr("float32", (2, 1)),
                                                            arr("float64", (), 1, 3)],
           ["float32", "float64"], "0dim-method"),
    sample(lambda m, a, b: m.divide(a, b, rounding_mode="trunc"), [arr("float64", (0, 2)),
                                                                  arr("float64", (2,), 1, 3)],
           ["float64", "float64"], "empty-divide"),
], "aten::div_.Tensor_mode": [
    sample(lambda m, a, b, mode=mode: a.div_(b, rounding_mode=mode),
           [arr(d, lo=-9, hi=9), _divisor(d)],
           [d, d], f"{mode}-{d}") for mode in ("trunc", "floor") for d in NO_BOOL] + [
    sample(lambda m, a: a.__ifloordiv__(-2), [arr("int32", lo=-9, hi=9)], ["int32"],
           "ifloordiv"),
]}

# --- ternary and composite ops -------------------------------------------------------------------
WHERE = {"aten::where.self": [
    sample(lambda m, c, a, b: m.where(c, a, b), [arr("bool", (2, 3)), arr(d), arr(d, seed=2)],
           ["bool", d, d], d) for d in ALL] + [
    sample(lambda m, c, a, b: m.where(c, a, b), [arr("bool", (2, 1)), arr("float16", (3,)),
                                                 arr("int64", (2, 3))],
           ["bool", "float16", "int64"], "broadcast-promote"),
    sample(lambda m, c, a: m.where(c, a, 2.5), [arr("bool"), arr("int32")], ["bool", "int32"],
           "float-scalar-int"),
    sample(lambda m, c, a: m.where(c, a, 2.5), [arr("bool"), arr("float16")],
           ["bool", "float16"], "float-scalar-half"),
    sample(lambda m, c: m.where(c, 1, 2.5), [arr("bool")], ["bool"], "two-scalars"),
    sample(lambda m, c: m.where(c, 1, 2), [arr("bool")], ["bool"], "two-int-scalars"),
    sample(lambda m, c, a, b: m.where(c, a, b), [arr("bool"), arr("float16"),
                                                 arr("float64", ())],
           ["bool", "float16", "float64"], "0dim-other"),
    sample(lambda m, c, a, b: m.where(c, a, b), [arr("bool", ()), arr("float32", ()),
                                                 arr("float32", (0, 3))],
           ["bool", "float32", "float32"], "0dim-cond-empty"),
    sample(lambda m, c, a, b: a.where(c, b), [arr("bool", (3, 1)), arr("float64", (3, 4)),
                                              arr("float64", (4,))],
           ["bool", "float64", "float64"], "method"),
]}

CLAMP = {"aten::clamp.Tensor": [
    sample(lambda m, a: m.clamp(a, -1, 2), [arr(d)], [d], d) for d in NO_BOOL] + [
    sample(lambda m, a: m.clamp(a, min=0.5), [arr("int64")], ["int64"], "int-float-min"),
    sample(lambda m, a: m.clamp(a, max=-0.5), [arr("float16")], ["float16"], "max-only"),
    sample(lambda m, a: m.clamp(a, 2, -1), [arr("float32")], ["float32"], "min-above-max"),
    sample(lambda m, a: m.clamp(a, float("nan"), 1), [arr("float64")], ["float64"], "nan-min"),
    sample(lambda m, a: m.clamp(a, -1, 1), [SPECIAL], ["float64"], "special"),
    sample(lambda m, a, lo, hi: m.clamp(a, lo, hi), [arr("float32"), arr("float32", (3,), -2, 0),
                                                     arr("float32", (2, 1), 0, 2)],
           ["float32"] * 3, "tensor-bounds"),
    sample(lambda m, a, lo: m.clamp(a, lo), [arr("float32", (3,)), arr("float64", (2, 1))],
           ["float32", "float64"], "broadcast-min"),
    sample(lambda m, a, hi: a.clamp(max=hi), [arr("int32"), arr("float32", ())],
           ["int32", "float32"], "0dim-max-promotes"),
    sample(lambda m, a, hi: a.clip(max=hi), [arr("bfloat16"), arr("bfloat16", (3,))],
           ["bfloat16", "bfloat16"], "clip"),
    sample(lambda m, a: m.clamp(a, 0, 1), [arr("bool")], ["bool"], "bool-int-bounds"),
    sample(lambda m, a: m.clamp(a, 0, 1), [arr("float32", (0, 2))], ["float32"], "empty"),
], "aten::clamp_.Tensor": [
    sample(lambda m, a: a.clamp_(-1, 2), [arr(d)], [d], d) for d in NO_BOOL] + [
    sample(lambda m, a, lo: a.clamp_(min=lo), [arr("float32"), arr("float32", (3,))],
           ["float32", "float32"], "tensor-min"),
    sample(lambda m, a: m.clamp_(a, max=0), [arr("int16")], ["int16"], "function"),
], "aten::clamp_min.Tensor": [
    sample(lambda m, a: m.clamp_min(a, 0.5), [arr(d)], [d], d) for d in NO_BOOL] + [
    sample(lambda m, a, b: a.clamp_min(b), [arr("float32"), arr("float32", (3,))],
           ["float32"] * 2, "tensor"),
], "aten::clamp_max.Tensor": [
    sample(lambda m, a: m.clamp_max(a, 1), [arr(d)], [d], d) for d in NO_BOOL] + [
    sample(lambda m, a, b: a.clamp_max(b), [arr("float64"), arr("float64", (2, 1))],
           ["float64"] * 2, "tensor"),
], "aten::clamp_min_.Tensor": [
    sample(lambda m, a: a.clamp_min_(0), [arr(d)], [d], d) for d in ("int32", "float32")],
   "aten::clamp_max_.Tensor": [
    sample(lambda m, a: a.clamp_max_(0), [arr(d)], [d], d) for d in ("int32", "float64")],
}

NAN_TO_NUM = {"aten::nan_to_num": [
    sample(lambda m, a: m.nan_to_num(a), [SPECIAL.astype(d) if d != "bfloat16" else SPECIAL],
           [d], d) for d in FLOATS] + [
    sample(lambda m, a: m.nan_to_num(a, nan=2.0, posinf=1e3, neginf=-7), [SPECIAL],
           ["float32"], "args"),
    sample(lambda m, a: a.nan_to_num(posinf=0.5), [SPECIAL], ["float64"], "method"),
    sample(lambda m, a: m.nan_to_num(a), [arr("int32")], ["int32"], "int"),
    sample(lambda m, a: m.nan_to_num(a), [arr("bool")], ["bool"], "bool"),
    sample(lambda m, a: m.nan_to_num(a), [np.array(np.nan)], ["float64"], "0dim"),
], "aten::nan_to_num_": [
    sample(lambda m, a: a.nan_to_num_(), [SPECIAL.astype(d) if d != "bfloat16" else SPECIAL],
           [d], d) for d in FLOATS] + [
    sample(lambda m, a: m.nan_to_num_(a, nan=-1.0), [SPECIAL], ["float64"], "function"),
]}


def _each(fn, dtypes, shape=(2, 3), lo=-3, hi=3):
    return [sample(fn, [arr(d, shape, lo, hi)], [d], d) for d in dtypes]


COMPOSITES = {
    "aten::square": _each(lambda m, a: m.square(a), ALL) + [
        sample(lambda m, a: a.square(), [SPECIAL], ["float64"], "special")],
    "aten::square_": _each(lambda m, a: a.square_(), NO_BOOL),
    "aten::silu": _each(lambda m, a: m.ops.aten.silu.default(a), FLOATS, lo=-6, hi=6) + [
        sample(lambda m, a: m.ops.aten.silu.default(a), [SPECIAL], ["float64"], "special")],
    "aten::silu_": _each(lambda m, a: m.ops.aten.silu_.default(a), ("float32", "float64")),
    "aten::floor_divide": [
        sample(lambda m, a, b: m.floor_divide(a, b), [arr(d, lo=-9, hi=9),
                                                      _divisor(d)], [d, d], d)
        for d in NO_BOOL] + [
        sample(lambda m, a: a.floor_divide(2.5), [arr("int64")], ["int64"], "float-scalar")],
    "aten::floor_divide_.Tensor": [
        sample(lambda m, a, b: a.floor_divide_(b), [arr(d, lo=-9, hi=9), arr(d, (3,), 1, 3, 1)],
               [d, d], d) for d in ("int32", "float32")],
    "aten::true_divide.Tensor": [
        sample(lambda m, a, b: m.true_divide(a, b), [arr(d), arr(d, (3,), 1, 3, 1)], [d, d], d)
        for d in ("bool", "int32", "float16", "float64")] + [
        sample(lambda m, a: a.true_divide(4), [arr("int64")], ["int64"], "scalar")],
    "aten::rsub.Tensor": [
        sample(lambda m, a, b: m.rsub(a, b), [arr(d), arr(d, (3,))], [d, d], d)
        for d in NO_BOOL] + [
        sample(lambda m, a: m.rsub(a, 5, alpha=2), [arr("int32")], ["int32"], "alpha-scalar"),
        sample(lambda m, a, b: m.rsub(a, b, alpha=0.5), [arr("float32"), arr("int64", ())],
               ["float32", "int64"], "float-alpha")],
    "aten::lerp.Tensor": [
        sample(lambda m, a, b, w=w: m.lerp(a, b, w), [arr(d), arr(d, (3,), seed=1)], [d, d],
               f"{d}-{w}") for d in FLOATS for w in (0.25, 0.75, 1.0, -0.5)] + [
        sample(lambda m, a, b, w: m.lerp(a, b, w), [arr(d), arr(d, (3,)), arr(d, (2, 1), -1, 2)],
               [d] * 3, f"tensor-weight-{d}") for d in FLOATS] + [
        sample(lambda m, a, b, w: a.lerp(b, w), [arr("float32", ()), arr("float32", (0, 2)),
                                                 arr("float32", ())], ["float32"] * 3, "empty")],
    "aten::lerp_.Tensor": [
        sample(lambda m, a, b: a.lerp_(b, 0.3), [arr(d), arr(d, (3,))], [d, d], d)
        for d in FLOATS] + [
        sample(lambda m, a, b, w: a.lerp_(b, w), [arr("float64"), arr("float64", (3,)),
                                                  arr("float64", (2, 1))], ["float64"] * 3,
               "tensor-weight")],
    "aten::addcmul": [
        sample(lambda m, a, b, c: m.addcmul(a, b, c, value=0.5), [arr(d), arr(d, (3,)),
                                                                  arr(d, (2, 1))], [d] * 3, d)
        for d in NO_BOOL] + [
        sample(lambda m, a, b, c: a.addcmul(b, c), [arr("float32"), arr("int64", (3,)),
                                                    arr("float64", ())],
               ["float32", "int64", "float64"], "promote"),
        sample(lambda m, a, b, c: m.addcmul(a, b, c, value=True), [arr("float32"),
                                                                   arr("float32"),
                                                                   arr("float32")],
               ["float32"] * 3, "bool-value")],
    "aten::addcmul_": [
        sample(lambda m, a, b, c: a.addcmul_(b, c, value=-2), [arr(d), arr(d, (3,)),
                                                               arr(d, (2, 1))], [d] * 3, d)
        for d in ("int32", "float16", "float32", "float64")],
    "aten::addcdiv": [
        sample(lambda m, a, b, c: m.addcdiv(a, b, c, value=0.5), [arr(d), arr(d, (3,)),
                                                                  arr(d, (2, 1), 1, 3)],
               [d] * 3, d) for d in FLOATS] + [
        sample(lambda m, a, b, c: a.addcdiv(b, c), [arr("float32"), arr("int64", (3,)),
                                                    arr("float64", (), 1, 2)],
               ["float32", "int64", "float64"], "promote")],
    "aten::addcdiv_": [
        sample(lambda m, a, b, c: a.addcdiv_(b, c, value=-0.1), [arr(d), arr(d, (3,)),
                                                                 arr(d, (2, 1), 1, 3)],
               [d] * 3, d) for d in ("float32", "float64")],
}

SAMPLES = (UNARY_SAMPLES | GELU | BINARY_SAMPLES | DIV_MODE | WHERE | CLAMP | NAN_TO_NUM |
           COMPOSITES)


def _closeness_samples():
    import numpy as np

    from op_samples import Sample
    a = np.array([1.0, 2.0, np.nan, np.inf, -np.inf, 0.0], np.float32)
    b = np.array([1.0 + 1e-6, 2.1, np.nan, np.inf, np.inf, 1e-9], np.float32)
    ints = np.array([1, 2, 3]), np.array([1, 5, 3])
    return {
        "aten::isclose": [Sample(lambda m, x, y: m.isclose(x, y), (a, b)),
                          Sample(lambda m, x, y: x.isclose(y, equal_nan=True), (a, b)),
                          Sample(lambda m, x, y: m.isclose(x, y, rtol=0.1, atol=0.0), (a, b)),
                          Sample(lambda m, x, y: m.isclose(x, y), ints)],
        "aten::allclose": [Sample(lambda m, x, y: m.allclose(x, y), (a, b), meta=False),
                           Sample(lambda m, x, y: x.allclose(x), (a[:2], b[:2]), meta=False),
                           Sample(lambda m, x, y: m.allclose(x, y, atol=0.2), (a[:2], b[:2]),
                                  meta=False)],
        "aten::equal": [Sample(lambda m, x, y: m.equal(x, y), ints, meta=False),
                        Sample(lambda m, x, y: m.equal(x, x), ints, meta=False),
                        Sample(lambda m, x, y: x.equal(x[:2]), ints, meta=False)],
    }


SAMPLES.update(_closeness_samples())


# --- logaddexp, ldexp, frexp ---------------------------------------------------------------------
def _two(name, fn, d, lo=-3, hi=3, **kw):
    """``fn(m, x, y)`` on a (2, 3) and a broadcast (3,) input of dtype ``d``."""
    return sample(fn, [arr(d, lo=lo, hi=hi), arr(d, (3,), lo, hi, seed=1)], [d, d], f"{name}-{d}",
                  **kw)


def _loose(d):
    """Composites round at every step in half precision (PyTorch rounds once)."""
    return {"float16": {"atol": 4e-3, "rtol": 4e-3}, "bfloat16": {"atol": 3e-2, "rtol": 3e-2}}.get(
        d, {})


def _logaddexp_samples(name):
    return [_two(name, lambda m, a, b: getattr(m, name)(a, b), d, **_loose(d)) for d in FLOATS] + [
        Sample(lambda m, a, b: getattr(a, name)(b), (SPECIAL[:, None], SPECIAL[None, :]),
               name="nan_inf"),
        Sample(lambda m, a, b: getattr(m, name)(a, b), (arr("int64"), arr("float32", (3,))),
               name="int_float"),
        Sample(lambda m, a, b: getattr(m, name)(a, b), (arr("float32", (0, 3)),
                                                        arr("float64", ())), name="empty"),
        Sample(lambda m, a, b: getattr(m, name)(a, b), (arr("float32") * 40,
                                                        arr("float32", seed=3) * 40), name="large"),
    ]


def _ldexp_samples():
    # Non-negative integer exponents: for negative ones PyTorch's gradient is 0 (it computes
    # 2 ** other in integers); strata's is the true 2 ** other (tests/test_ops_more.py).
    exps = arr("int64", (3,), 0, 6, seed=2)
    return {
        "aten::ldexp.Tensor": [
            sample(lambda m, a, b: m.ldexp(a, b), [arr(d), exps], [d, "int64"], f"int-exp-{d}")
            for d in FLOATS] + [
            sample(lambda m, a, b: m.ldexp(a, b), [arr(d), exps], [d, "int64"], f"int-{d}")
            for d in ("bool", "uint8", "int32", "int64")] + [
            Sample(lambda m, a, b: a.ldexp(b), (SPECIAL, np.full(9, 3, np.int32)), name="nan_inf"),
            Sample(lambda m, a, b: m.ldexp(a, b), (arr("int32"), arr("int64", (3,), -4, -1)),
                   name="negative-exp"),
            Sample(lambda m, a, b: m.ldexp(a, b), (arr("float32"), arr("float64", (3,))),
                   name="float_exp"),
            Sample(lambda m, a, b: m.ldexp(a, b), (arr("int32", (0,)), arr("int64", (1,))),
                   name="empty"),
        ],
        "aten::ldexp_": [
            sample(lambda m, a, b: a.ldexp_(b), [arr(d), exps], [d, "int64"], f"inplace-{d}")
            for d in FLOATS] + [
            Sample(lambda m, a, b: m.ldexp_(a, b), (arr("float16"), arr("float64", (3,))),
                   name="downcast"),
        ],
    }


def _frexp_samples():
    values = np.concatenate([SPECIAL, [1e-40, -3e38, 6e-8, 1024.0]])
    return {"aten::frexp.Tensor": [
        sample(lambda m, x: tuple(m.frexp(x)), [arr(d, lo=-1e4, hi=1e4)], [d], d)
        for d in FLOATS] + [
        Sample(lambda m, x: tuple(x.frexp()), (values.astype(np.float32),), name="special32"),
        Sample(lambda m, x: tuple(x.frexp()), (values,), name="special64"),
        Sample(lambda m, x: tuple(m.frexp(x)), (arr("float32", (0, 2)),), name="empty"),
    ]}


SAMPLES.update({"aten::logaddexp": _logaddexp_samples("logaddexp"),
                "aten::logaddexp2": _logaddexp_samples("logaddexp2")})
SAMPLES.update(_ldexp_samples())
SAMPLES.update(_frexp_samples())


# --- deg2rad, rad2deg -----------------------------------------------------------------------------
def _angle_samples(name):
    return {
        f"aten::{name}": [
            sample(lambda m, x: getattr(m, name)(x), [arr(d, lo=-400, hi=400)], [d], d)
            for d in ALL] + [
            Sample(lambda m, x: getattr(x, name)(), (SPECIAL,), name="nan_inf"),
            Sample(lambda m, x: getattr(m, name)(x), (arr("float32", (0, 2)),), name="empty"),
        ],
        f"aten::{name}_": [
            sample(lambda m, x: getattr(x, f"{name}_")(), [arr(d, lo=-400, hi=400)], [d],
                   f"inplace-{d}") for d in FLOATS],
    }


SAMPLES.update(_angle_samples("deg2rad"))
SAMPLES.update(_angle_samples("rad2deg"))
