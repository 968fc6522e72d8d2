"""float16 and bfloat16 on opencl against PyTorch's CPU: 2-byte storage, float compute
(oclprinter's Note [Half dtypes]). Conversions and single-rounding arithmetic must match bit for
bit; transcendental functions, reductions and matrix products within one or two half ulps
(PoCL's float math and summation order are not ATen's).
"""

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import strata

pytestmark = pytest.mark.skipif(not strata.opencl.is_available(),
                                reason="needs pyopencl with an OpenCL driver (pip install "
                                       "'strata[opencl]' brings PoCL)")

HALVES = ("float16", "bfloat16")
# relative tolerance for results rounded once from float math that is not ATen's
TOL = {"float16": 2e-3, "bfloat16": 1.6e-2}


def bits(t):
    """The 16-bit patterns of a half tensor (strata or torch), as uint16."""
    if isinstance(t, torch.Tensor):
        return t.contiguous().view(torch.int16).numpy().view(np.uint16)
    return t.cpu().numpy().view(np.uint16)


def pair(array, dtype):
    """(strata on opencl, torch) tensors of ``dtype`` from a float32 array."""
    return (strata.tensor(array).to("opencl").to(getattr(strata, dtype)),
            torch.from_numpy(array).to(getattr(torch, dtype)))


def same_bits(got, want):
    """Equal 16-bit patterns, any NaN equal to any NaN."""
    got_bits, want_bits = bits(got), bits(want)
    got_nan = np.isnan(got.cpu().float().numpy())
    want_nan = np.isnan(want.float().numpy())
    np.testing.assert_array_equal(got_nan, want_nan)
    np.testing.assert_array_equal(got_bits[~got_nan], want_bits[~want_nan])


def close(got, want, dtype):
    assert str(got.dtype) == str(want.dtype).replace("torch", "strata")
    np.testing.assert_allclose(got.detach().cpu().float().numpy(), want.detach().float().numpy(),
                               rtol=TOL[dtype], atol=TOL[dtype], equal_nan=True)


def every_float32_edge():
    """float32 values where rounding to a half type is hard: halfway cases (both parities),
    just beside them, overflow, subnormals, signed zeros, infinities and NaN."""
    rng = np.random.default_rng(0)
    base = rng.standard_normal(2000).astype(np.float32) * np.float32(2.0) ** rng.integers(
        -30, 20, 2000).astype(np.float32)
    u = base.view(np.uint32)
    halfway16 = (u & ~np.uint32(0x1FFF)) | np.uint32(0x1000)       # float16: 13 dropped bits
    halfway_bf = (u & ~np.uint32(0xFFFF)) | np.uint32(0x8000)      # bfloat16: 16 dropped bits
    near = np.concatenate([halfway16, halfway_bf, halfway16 + 1, halfway_bf - 1]).view(np.float32)
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 65504, 65519.99, 65520, 1e-8,
                        6e-8, 3e38, -3.4e38, 5.96e-8, 2.98e-8], np.float32)
    return np.concatenate([base, near, special])


@pytest.mark.parametrize("dtype", HALVES)
def test_every_bit_pattern_uploads_widens_and_downloads_unchanged(dtype):
    patterns = np.arange(1 << 16, dtype=np.uint16)
    host = strata.tensor(patterns.view(np.int16)).view(getattr(strata, dtype))
    device = host.to("opencl")
    np.testing.assert_array_equal(bits(device.cpu()), patterns)
    widened = device.float().cpu().numpy()
    want = torch.from_numpy(patterns.view(np.int16)).view(getattr(torch, dtype)).float()
    np.testing.assert_array_equal(widened.view(np.uint32), want.numpy().view(np.uint32))


@pytest.mark.parametrize("dtype", HALVES)
@pytest.mark.parametrize("source", ["float32", "float64", "int64"])
def test_casts_round_to_nearest_even_as_torch(dtype, source):
    values = every_float32_edge()
    if source == "int64":
        values = np.nan_to_num(values, nan=0, posinf=0, neginf=0).clip(-2**62, 2**62)
    values = values.astype(source)
    got = strata.tensor(values).to("opencl").to(getattr(strata, dtype))
    same_bits(got, torch.from_numpy(values).to(getattr(torch, dtype)))


def test_casts_between_the_two_half_types_as_torch():
    values = every_float32_edge()
    for a, b in (("float16", "bfloat16"), ("bfloat16", "float16")):
        x, t = pair(values, a)
        same_bits(x.to(getattr(strata, b)), t.to(getattr(torch, b)))


EXACT_BINARY = {"add": lambda m, a, b: a + b, "sub": lambda m, a, b: a - b,
                "mul": lambda m, a, b: a * b, "div": lambda m, a, b: a / b,
                "maximum": lambda m, a, b: m.maximum(a, b), "mul_number": lambda m, a, b: a * 0.1,
                "where": lambda m, a, b: m.where(a > b, a, b), "neg": lambda m, a, b: -a,
                "abs": lambda m, a, b: a.abs(), "lt": lambda m, a, b: a < b}


@pytest.mark.parametrize("dtype", HALVES)
@pytest.mark.parametrize("name", sorted(EXACT_BINARY))
def test_single_rounding_ops_match_torch_bit_for_bit(dtype, name):
    rng = np.random.default_rng(1)
    a, b = (rng.standard_normal((7, 33)).astype(np.float32) * 100 for _ in range(2))
    (x, tx), (y, ty) = pair(a, dtype), pair(b, dtype)
    got, want = EXACT_BINARY[name](strata, x, y), EXACT_BINARY[name](torch, tx, ty)
    assert got.device.type == "opencl"
    if want.dtype == torch.bool:
        np.testing.assert_array_equal(got.cpu().numpy(), want.numpy())
    else:
        same_bits(got, want)


shapes = st.lists(st.integers(1, 5), min_size=1, max_size=3).map(tuple)
MATH = {"exp": lambda m, a: a.exp(), "sigmoid": lambda m, a: a.sigmoid(),
        "tanh": lambda m, a: a.tanh(), "gelu": lambda m, a: m.nn.functional.gelu(a),
        "silu": lambda m, a: m.nn.functional.silu(a), "log1p": lambda m, a: a.abs().log1p(),
        "pow": lambda m, a: a.pow(3), "add_mixed": lambda m, a: a + a.float()}


@settings(max_examples=12, deadline=None)
@given(shape=shapes, dtype=st.sampled_from(HALVES), name=st.sampled_from(sorted(MATH)),
       seed=st.integers(0, 2**31 - 1))
def test_math_matches_torch(shape, dtype, name, seed):
    a = np.random.default_rng(seed).standard_normal(shape).astype(np.float32) * 3
    x, t = pair(a, dtype)
    close(MATH[name](strata, x), MATH[name](torch, t), dtype)


REDUCTIONS = {"sum": lambda m, a: a.sum(), "sum_dim": lambda m, a: a.sum(-1),
              "mean": lambda m, a: a.mean(0), "amax": lambda m, a: a.amax(-1),
              "argmax": lambda m, a: a.argmax(-1), "var": lambda m, a: a.var(-1),
              "cumsum": lambda m, a: a.cumsum(-1), "norm": lambda m, a: a.norm(),
              "softmax": lambda m, a: a.softmax(-1), "log_softmax": lambda m, a: a.log_softmax(0),
              "layer_norm": lambda m, a: m.nn.functional.layer_norm(a, a.shape[-1:])}


@pytest.mark.parametrize("dtype", HALVES)
@pytest.mark.parametrize("name", sorted(REDUCTIONS))
@pytest.mark.parametrize("shape", [(3, 40), (2, 300)])   # one work-item or a work-group per row
def test_reductions_and_rows_accumulate_in_float(dtype, name, shape):
    a = np.random.default_rng(2).standard_normal(shape).astype(np.float32)
    x, t = pair(a, dtype)
    got, want = REDUCTIONS[name](strata, x), REDUCTIONS[name](torch, t)
    if want.dtype == torch.int64:
        np.testing.assert_array_equal(got.cpu().numpy(), want.numpy())
    else:
        close(got, want, dtype)


def test_sum_of_many_halves_does_not_round_its_partial_sums():
    # 4096 ones of 0.1 sum to ~409.6; a float16 accumulator would stall at 256
    x = strata.full((4096,), 0.1, dtype=strata.float16, device="opencl")
    assert abs(float(x.sum().cpu()) - 409.5) < 0.5


@pytest.mark.parametrize("dtype", HALVES)
@pytest.mark.parametrize("m,k,n", [(5, 7, 3), (70, 33, 66), (64, 64, 64)])  # tiled, blocked
def test_matmul_accumulates_in_float(dtype, m, k, n):
    rng = np.random.default_rng(3)
    a, b, c = (rng.standard_normal(s).astype(np.float32) for s in ((m, k), (k, n), (n,)))
    (x, tx), (y, ty), (z, tz) = pair(a, dtype), pair(b, dtype), pair(c, dtype)
    close(x @ y, tx @ ty, dtype)
    close(strata.addmm(z, x, y, beta=0.5, alpha=2), torch.addmm(tz, tx, ty, beta=0.5, alpha=2),
          dtype)
    close(x.t().contiguous().t() @ y, tx @ ty, dtype)       # strided A: scalar tile loads


@pytest.mark.parametrize("dtype", HALVES)
def test_cross_entropy_and_its_backward(dtype):
    rng = np.random.default_rng(4)
    logits = rng.standard_normal((6, 10)).astype(np.float32)
    target = rng.integers(0, 10, 6)
    x, t = pair(logits, dtype)
    x.requires_grad_(True)
    t.requires_grad_(True)
    loss = strata.nn.functional.cross_entropy(x, strata.tensor(target).to("opencl"))
    want = torch.nn.functional.cross_entropy(t, torch.from_numpy(target))
    close(loss, want.detach(), dtype)
    loss.backward()
    want.backward()
    close(x.grad, t.grad, dtype)


@pytest.mark.parametrize("dtype", HALVES)
def test_factories_indexing_and_scatter_copy_exactly(dtype):
    a = np.random.default_rng(5).standard_normal((6, 5)).astype(np.float32)
    x, t = pair(a, dtype)
    index = np.array([4, 0, 0, 2])
    sd, td = getattr(strata, dtype), getattr(torch, dtype)
    cases = [
        (strata.full((3,), 1.1, dtype=sd, device="opencl"), torch.full((3,), 1.1, dtype=td)),
        (strata.arange(0, 3, 0.3, dtype=sd, device="opencl"), torch.arange(0, 3, 0.3, dtype=td)),
        (x[strata.tensor(index).to("opencl")], t[torch.from_numpy(index)]),
        (x.index_select(1, strata.tensor(index).to("opencl")),
         t.index_select(1, torch.from_numpy(index))),
        (strata.cat([x, x[:2]]), torch.cat([t, t[:2]])),
        (x.t().contiguous(), t.t().contiguous()),
        (x.flip(0), t.flip(0)),
        (strata.zeros_like(x).scatter(0, strata.tensor([[1, 2, 3, 4, 5]]).to("opencl"), x),
         torch.zeros_like(t).scatter(0, torch.tensor([[1, 2, 3, 4, 5]]), t)),
    ]
    for got, want in cases:
        assert got.device.type == "opencl"
        same_bits(got, want)


@pytest.mark.parametrize("dtype", HALVES)
def test_an_mlp_step_trains_in_half_as_on_the_cpu(dtype):
    rng = np.random.default_rng(6)
    data = rng.standard_normal((16, 8)).astype(np.float32)
    losses = {}
    for device in ("cpu", "opencl"):
        strata.manual_seed(0)
        model = strata.nn.Sequential(strata.nn.Linear(8, 16), strata.nn.ReLU(),
                                     strata.nn.Linear(16, 1)).to(getattr(strata, dtype))
        model.to(device)
        opt = strata.optim.SGD(model.parameters(), lr=0.05)
        x = strata.tensor(data).to(device).to(getattr(strata, dtype))
        for _ in range(3):
            opt.zero_grad()
            loss = (model(x) ** 2).mean()
            loss.backward()
            opt.step()
        losses[device] = float(loss.float().cpu())
    assert losses["opencl"] == pytest.approx(losses["cpu"], rel=TOL[dtype] * 4)


@pytest.mark.parametrize("dtype", HALVES)
def test_uniform_numbers_stay_below_the_upper_bound_after_rounding(dtype):
    strata.manual_seed(0)
    u = strata.rand(20000, dtype=getattr(strata, dtype), device="opencl").float().cpu().numpy()
    v = strata.empty(20000, dtype=getattr(strata, dtype), device="opencl").uniform_(-2, 3)
    v = v.float().cpu().numpy()
    assert u.min() >= 0 and u.max() < 1 and abs(u.mean() - 0.5) < 0.02
    assert v.min() >= -2 and v.max() < 3
    n = strata.randn(20000, dtype=getattr(strata, dtype), device="opencl").float().cpu().numpy()
    assert abs(n.mean()) < 0.05 and abs(n.std() - 1) < 0.05
