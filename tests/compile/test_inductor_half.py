"""float16 and bfloat16 in inductor's generated C kernels (Note [Half dtypes] in
compile/inductor/half.py): the conversions bit for bit against NumPy and ml_dtypes (every
16-bit pattern, the float32 edges, float64 without double rounding); single ops bit-exact with
eager (both compute in float and round once); fused chains, reductions and their backward
against PyTorch eager within half tolerances, no Fallback left in the graphs."""

import ml_dtypes
import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import strata
from strata.compile.aot import make_fx
from strata.compile.inductor.compile_fx import compile_fx

# NumPy's floating-point warnings never reach the user (Note [Silent IEEE arithmetic])
pytestmark = pytest.mark.filterwarnings("error::RuntimeWarning")

HALVES = {"float16": (np.float16, strata.float16, torch.float16),
          "bfloat16": (ml_dtypes.bfloat16, strata.bfloat16, torch.bfloat16)}
# tolerances of a chain whose eager result rounds after each op (torch.testing's of one op:
# rtol 1e-3 for float16, 1.6e-2 for bfloat16)
CHAIN = {"float16": {"rtol": 1e-2, "atol": 1e-2}, "bfloat16": {"rtol": 5e-2, "atol": 5e-2}}


def _compiled(fn, *tensors):
    run = compile_fx(make_fx(fn)(*tensors), list(tensors))
    assert "Fallback" not in run.ir_post_fusion, run.ir_post_fusion
    return run


def _bits(array):
    return np.asarray(array).view(np.uint16 if array.dtype.itemsize == 2 else np.uint32)


def _convert(array, dtype):
    """``array`` converted to ``dtype`` by a compiled ``_to_copy`` (one generated kernel)."""
    x = strata.tensor(array)
    run = _compiled(lambda t: t.to(dtype), x)
    return run(x)[0].numpy()


def _neighbours(np_half):
    """Every finite value of a half type and the next one away from zero (for the largest,
    where the next binade would start: the tie between them rounds to inf), in float64."""
    patterns = np.arange(1 << 16, dtype=np.uint16)
    with np.errstate(all="ignore"):     # the NaN patterns
        h = patterns.view(np_half).astype(np.float64)
        up = (patterns + np.uint16(1)).view(np_half).astype(np.float64)
    finite = np.isfinite(h)
    h, up = h[finite], up[finite]
    beyond = np.copysign(2.0 ** np.ceil(np.log2(float(ml_dtypes.finfo(np_half).max))), h)
    return h, np.where(np.isfinite(up), up, beyond)


def _float32_edges(np_half):
    """float32 values around every finite value h of a half type: h, the ties between h and the
    next value up and the floats one ulp either side of each tie, plus the specials."""
    h, up = _neighbours(np_half)
    tie = ((h + up) / 2).astype(np.float32)
    h = h.astype(np.float32)
    around = [np.nextafter(tie, np.float32(np.inf)), np.nextafter(tie, np.float32(-np.inf))]
    words = np.array([0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00000, 0x7F800001, 0x7FBFFFFF,
                      0xFFFFFFFF, 0x7FC02000, 0x00000001, 0x80000001, 0x007FFFFF, 0x00400000,
                      0x7F7FFFFF, 0xFF7FFFFF, 0x33000000, 0x33000001, 0x32FFFFFF, 0x387FC000,
                      0x38800000, 0x477FE000, 0x477FEFFF, 0x477FF000, 0x47800000],
                     np.uint32).view(np.float32)
    random = np.random.default_rng(0).integers(0, 1 << 32, 1 << 18, dtype=np.uint32)
    return np.concatenate([h, tie, *around, words, random.view(np.float32)])


@pytest.mark.parametrize("name", HALVES)
def test_every_half_bit_pattern_widens_as_numpy(name):
    np_half = HALVES[name][0]
    patterns = np.arange(1 << 16, dtype=np.uint16).view(np_half)
    got = _convert(patterns, strata.float32)
    np.testing.assert_array_equal(_bits(got), _bits(patterns.astype(np.float32)))


@pytest.mark.parametrize("name", HALVES)
def test_float32_rounds_to_nearest_even_as_numpy(name):
    np_half, dtype, _ = HALVES[name]
    values = _float32_edges(np_half)
    with np.errstate(all="ignore"):
        want = values.astype(np_half)
    got = _convert(values, dtype)
    mismatch = np.flatnonzero(_bits(got) != _bits(want))
    assert not mismatch.size, [(hex(_bits(values)[i]), hex(_bits(got)[i]), hex(_bits(want)[i]))
                               for i in mismatch[:5]]


@pytest.mark.parametrize("name", HALVES)
def test_every_half_bit_pattern_round_trips_through_float(name):
    """float16 -> float32 -> half in one kernel (a rounding conversion inside it) and the
    16-bit copy of a cast between the half types keep every finite value and every NaN."""
    np_half, dtype, _ = HALVES[name]
    patterns = np.arange(1 << 16, dtype=np.uint16).view(np_half)
    x = strata.tensor(patterns)
    run = _compiled(lambda t: (t.to(strata.float32) * 1).to(dtype), x)
    with np.errstate(all="ignore"):
        want = patterns.astype(np.float32).astype(np_half)
    np.testing.assert_array_equal(_bits(run(x)[0].numpy()), _bits(want))


@pytest.mark.parametrize("name", HALVES)
def test_float64_rounds_through_float_as_eager_and_torch(name):
    """A double just past a tie rounds to float first, landing on the tie, then to even: as
    eager's ``cast_into`` and torch's ``c10::Half(float)`` convert (NumPy's direct float64 ->
    float16 would round up)."""
    np_half, dtype, torch_dtype = HALVES[name]
    h, up = _neighbours(np_half)
    tie = (h + up) / 2
    values = np.concatenate([tie + np.abs(tie) * 2.0 ** -40, tie - np.abs(tie) * 2.0 ** -40,
                             tie, np.random.default_rng(1).standard_normal(1 << 16) * 1e3,
                             [np.inf, -np.inf, np.nan, 1e300, -1e-300, 5e-324]])
    got = _bits(_convert(values, dtype))
    np.testing.assert_array_equal(got, _bits(strata.tensor(values).to(dtype).numpy()))
    want = torch.tensor(values).to(torch_dtype).view(torch.int16).numpy().view(np.uint16)
    finite = np.isfinite(values)    # (torch's NaN bits are its own)
    np.testing.assert_array_equal(got[finite], want[finite])


@pytest.mark.parametrize("name", HALVES)
@pytest.mark.parametrize("op", ["add", "mul", "sub", "div", "maximum"])
def test_one_op_is_bit_exact_with_eager(name, op):
    """Eager computes a half op in float and rounds once, as the kernel does."""
    np_half = HALVES[name][0]
    rng = np.random.default_rng(2)
    a = (rng.standard_normal((64, 33)) * 100).astype(np_half)
    b = (rng.standard_normal((64, 33)) * 100).astype(np_half)
    a[0, :4] = [np.inf, -np.inf, np.nan, 0.0]
    b[0, :4] = [np.inf, 1.0, 2.0, -0.0]
    x, y = strata.tensor(a), strata.tensor(b)
    fn = getattr(strata, op)
    run = _compiled(fn, x, y)
    np.testing.assert_array_equal(_bits(run(x, y)[0].numpy()), _bits(fn(x, y).numpy()))


def _inputs(name, *shapes, seed=0):
    np_half, dtype, torch_dtype = HALVES[name]
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal(s).astype(np.float32).astype(np_half).astype(np.float32)
              for s in shapes]
    return ([strata.tensor(a).to(dtype) for a in arrays],
            [torch.tensor(a).to(torch_dtype) for a in arrays])


def _check(name, got, want, reference):
    """``got`` (compiled) against torch eager ``want`` within a chain's tolerance, and at most
    as far from the float64 ``reference`` as eager is, in root-mean-square error (twice it, plus
    an epsilon of the reference's size), as torch's own compiled-half tests compare
    (``torch._dynamo.utils.same`` with ``fp64_ref``)."""
    got = torch.tensor(got.to(strata.float32).numpy())
    torch.testing.assert_close(got, want.float(), **CHAIN[name])

    def rmse(x):
        return float((x.double() - reference).pow(2).mean().sqrt())
    eps = float(torch.finfo(HALVES[name][2]).eps)
    size = float(reference.pow(2).mean().sqrt())
    assert rmse(got) <= 2 * rmse(want) + eps * size, (rmse(got), rmse(want))


CHAINS = {
    "gelu_chain": lambda m, x, y: m.nn.functional.gelu(x * y + 0.5) - m.sigmoid(y) / 3,
    "tanh_exp": lambda m, x, y: m.tanh(x) * m.exp(y.clamp(max=3)) + m.where(x > y, x, -y),
    "silu_relu": lambda m, x, y: m.nn.functional.silu(x).relu() * m.abs(y) - x.neg(),
    "compare_cast": lambda m, x, y: ((x < y).to(x.dtype) + (x >= 0).to(x.dtype)) * m.sqrt(
        y.abs() + 1),
}
REDUCTIONS = {
    "sum": lambda m, x: x.sum(1),
    "mean": lambda m, x: (x * 2).mean(0),
    "amax": lambda m, x: m.amax(x.exp(), 1),
    "softmax": lambda m, x: m.softmax(x, -1),
    "log_softmax": lambda m, x: m.log_softmax(x * 3, 1),
    "layer_norm": lambda m, x: m.nn.functional.layer_norm(x, (x.shape[-1],)),
}


@pytest.mark.parametrize("name", HALVES)
@pytest.mark.parametrize("chain", CHAINS)
def test_compiled_pointwise_chain_matches_torch(name, chain):
    fn = CHAINS[chain]
    (x, y), (tx, ty) = _inputs(name, (16, 40), (16, 40))
    got = _compiled(lambda a, b: fn(strata, a, b), x, y)(x, y)[0]
    _check(name, got, fn(torch, tx, ty), fn(torch, tx.double(), ty.double()))


@pytest.mark.parametrize("name", HALVES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_compiled_reduction_matches_torch(name, reduction):
    fn = REDUCTIONS[reduction]
    (x,), (tx,) = _inputs(name, (12, 96))
    run = _compiled(lambda a: fn(strata, a), x)
    _check(name, run(x)[0], fn(torch, tx), fn(torch, tx.double()))


@pytest.mark.parametrize("name", HALVES)
@pytest.mark.parametrize("reduction", ["sum", "mean", "softmax", "log_softmax", "layer_norm"])
def test_compiled_backward_matches_torch(name, reduction, tmp_path, monkeypatch):
    from strata import config
    monkeypatch.setattr(config, "compile_debug", True)
    monkeypatch.setattr(config, "compile_debug_dir", str(tmp_path))
    fn = REDUCTIONS[reduction]
    shape = tuple(fn(torch, torch.zeros(8, 64)).shape)
    (x, w), (tx, tw) = _inputs(name, (8, 64), shape, seed=3)

    def loss(m, a, weight):
        return (fn(m, a) * weight).sum()
    strata._dynamo.reset()
    x.requires_grad_(True)
    strata.compile(lambda a, weight: loss(strata, a, weight).backward(),
                   backend="inductor")(x, w)
    tx.requires_grad_(True)
    loss(torch, tx, tw).backward()
    reference = tx.detach().double().requires_grad_(True)
    loss(torch, reference, tw.double()).backward()
    _check(name, x.grad, tx.grad, reference.grad)
    texts = [p.read_text() for p in tmp_path.rglob("ir_post_fusion.txt")]
    assert len(texts) >= 2 and not any("Fallback" in t for t in texts), texts


@settings(max_examples=15, deadline=None)
@given(name=st.sampled_from(sorted(HALVES)),
       shape=st.lists(st.integers(1, 9), min_size=1, max_size=3),
       to=st.sampled_from(["float32", "float64", "int64", "bool", "float16", "bfloat16"]))
def test_to_copy_from_half_is_bit_exact_with_eager(name, shape, to):
    (x,), _ = _inputs(name, tuple(shape), seed=len(shape))
    dtype = getattr(strata, to)
    run = _compiled(lambda t: t.to(dtype), x)
    got, want = run(x)[0].numpy(), x.to(dtype).numpy()
    np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))


def test_mixed_half_and_float32_promote_as_torch():
    (x,), (tx,) = _inputs("bfloat16", (5, 7))
    y = np.random.default_rng(4).standard_normal((5, 7)).astype(np.float32)
    run = _compiled(lambda a, b: a * b + a, x, strata.tensor(y))
    got = run(x, strata.tensor(y))[0]
    want = tx * torch.tensor(y) + tx
    assert got.dtype == strata.float32
    torch.testing.assert_close(torch.tensor(got.numpy()), want, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("name", HALVES)
def test_nan_to_num_and_masked_fill_use_the_half_dtypes_range(name):
    """inf becomes the half type's largest value (not float32's); a fill value rounds as the
    eager kernel stores it."""
    np_half = HALVES[name][0]
    a = np.array([[np.nan, np.inf, -np.inf, 1.5, -0.0, 3.0]], np_half)
    x, mask = strata.tensor(a), strata.tensor(np.array([[True, False, True, False, True, False]]))
    run = _compiled(lambda t: strata.nan_to_num(t) * 1, x)
    np.testing.assert_array_equal(_bits(run(x)[0].numpy()), _bits(strata.nan_to_num(x).numpy()))
    assert float(run(x)[0][0, 1]) == float(ml_dtypes.finfo(np_half).max)
    run = _compiled(lambda t, m: t.masked_fill(m, 0.1) + 0, x, mask)
    np.testing.assert_array_equal(_bits(run(x, mask)[0].numpy()),
                                  _bits(x.masked_fill(mask, 0.1).numpy()))


@pytest.mark.parametrize("name", HALVES)
def test_an_explicit_cast_reads_the_half_value_eager_holds(name):
    """``(x * y).float()``: the product is rounded to the half dtype before it widens (a chain
    of one dtype keeps float; a conversion the program asks for sees eager's tensor)."""
    (x, y), _ = _inputs(name, (32, 17), (32, 17), seed=5)
    run = _compiled(lambda a, b: (a * b).float() * 3 + (a - b).to(strata.float64), x, y)
    want = (x * y).float() * 3 + (x - y).to(strata.float64)
    np.testing.assert_array_equal(run(x, y)[0].numpy(), want.numpy())


@pytest.mark.parametrize("name", HALVES)
def test_data_movement_is_exact_and_index_add_stays_eager(name):
    """cat/flip/permute/tril move the 16 bits as they are; a half ``index_add_`` keeps eager's
    kernel, which adds in float and rounds once (an IndexAdd kernel would round every row)."""
    (a, b, x, src), _ = _inputs(name, (6, 8), (8, 6), (6, 8), (5, 8), seed=6)

    def moved(a, b):
        return strata.cat([a.flip(0), b.permute(1, 0)[:6]], 0).tril() + 0
    run = _compiled(moved, a, b)
    np.testing.assert_array_equal(_bits(run(a, b)[0].numpy()), _bits(moved(a, b).numpy()))
    index = strata.tensor([0, 2, 2, 5, 0])

    def added(x, i, s):
        return (x * 1).index_add_(0, i, s)
    graph = compile_fx(make_fx(added)(x, index, src), [x, index, src])
    assert "Fallback(<OpOverload aten::index_add_" in graph.ir_post_fusion
    np.testing.assert_array_equal(_bits(graph(x, index, src)[0].numpy()),
                                  _bits(added(x, index, src).numpy()))


@pytest.mark.parametrize("name", HALVES)
def test_random_draws_into_half_are_eagers(name):
    """dropout's mask and ``uniform_`` drawn in the kernel (Note [Random draws]): eager's
    numbers, the uniform double rounded to the half dtype as eager rounds it (float16 at
    once, bfloat16 through float)."""
    dtype = HALVES[name][1]
    x = strata.randn(64, 64).to(dtype)
    for fn, arg in ((lambda t: strata.nn.functional.dropout(t, 0.5, True) * 2, x),
                    (lambda t: t.uniform_(-2, 3) + 0, strata.zeros(64, 64, dtype=dtype))):
        strata._dynamo.reset()
        strata.manual_seed(3)
        got = strata.compile(fn, backend="inductor")(arg.clone())
        strata.manual_seed(3)
        want = fn(arg.clone())
        np.testing.assert_array_equal(_bits(got.numpy()), _bits(want.numpy()))


UNARY = ["exp2", "log2", "tan", "atan", "sinh", "floor", "ceil", "round", "trunc", "frac",
         "isnan", "signbit", "nan_to_num", "erf", "sigmoid", "rsqrt"]
BINARY = ["fmod", "remainder", "atan2", "hypot", "copysign", "fmax", "floor_divide", "pow"]


@settings(max_examples=30, deadline=None)
@given(name=st.sampled_from(sorted(HALVES)), op=st.sampled_from(UNARY + BINARY),
       seed=st.integers(0, 2 ** 16))
def test_one_math_op_within_an_ulp_of_eager(name, op, seed):
    """A single op computes in float and rounds once, as eager's NumPy/ml_dtypes kernels do:
    the libm functions (C's, not NumPy's) may differ in float's last bits, so in the half
    result by at most one ulp."""
    np_half = HALVES[name][0]
    rng = np.random.default_rng(seed)
    arrays = [(rng.standard_normal((9, 13)) * 4).astype(np_half) for _ in range(2)]
    arrays[0][0, :5] = [np.nan, np.inf, -np.inf, -0.0, 0.5]
    tensors = [strata.tensor(a) for a in arrays[:1 if op in UNARY else 2]]
    fn = getattr(strata, op)
    run = _compiled(fn, *tensors)
    got, want = run(*tensors)[0].numpy(), fn(*tensors).numpy()
    if got.dtype == np.bool_:
        np.testing.assert_array_equal(got, want)
        return
    got, want = got.astype(np.float64), want.astype(np.float64)
    ulp = float(ml_dtypes.finfo(np_half).eps) * np.maximum(np.abs(want), 2.0 ** -14)
    with np.errstate(invalid="ignore"):      # inf - inf
        near = np.abs(got - want) <= ulp
    same = (got == want) | (np.isnan(got) & np.isnan(want)) | near
    assert same.all(), (got[~same][:4], want[~same][:4])
