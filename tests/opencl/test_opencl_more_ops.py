"""Ops that used to raise on opencl, against PyTorch's CPU: integer division (fmod, remainder,
div with a rounding mode), boolean-mask and multi-tensor indexing, nonzero, masked_select,
masked_scatter, take/put_, index_fill/index_copy, digamma, polygamma, erfinv, i0/i1, entr,
scatter_reduce, unique, roll, one_hot, diag, searchsorted, repeat_interleave, bincount,
histc, binary_cross_entropy, median, mode, frexp, tril_indices/triu_indices."""

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import strata

pytestmark = pytest.mark.skipif(not strata.opencl.is_available(),
                                reason="needs pyopencl with an OpenCL driver (pip install "
                                       "'strata[opencl]' brings PoCL)")

INTEGERS = ("int64", "int32", "int16", "int8", "uint8")
DIVISIONS = {
    "fmod": lambda m, a, b: m.fmod(a, b), "remainder": lambda m, a, b: m.remainder(a, b),
    "floor_divide": lambda m, a, b: a // b,
    "trunc": lambda m, a, b: m.div(a, b, rounding_mode="trunc"),
    "floor": lambda m, a, b: m.div(a, b, rounding_mode="floor"),
    "true": lambda m, a, b: m.div(a, b), "number": lambda m, a, b: a % -7,
    "in_place": lambda m, a, b: a.fmod_(b),
}


def integers(dtype, n, seed):
    """Values over the dtype's range, the minimum divided by -1 among them (which traps on the
    hardware and wraps on the CPU)."""
    info = np.iinfo(dtype)
    rng = np.random.default_rng(seed)
    a = rng.integers(info.min, info.max, n, endpoint=True).astype(dtype)
    b = rng.integers(max(info.min, -300), min(info.max, 300), n, endpoint=True).astype(dtype)
    b[b == 0] = 3
    if info.min < 0:
        a[:2], b[:2] = info.min, -1
    return a, b


@settings(max_examples=15, deadline=None)
@given(dtype=st.sampled_from(INTEGERS), name=st.sampled_from(sorted(DIVISIONS)),
       n=st.integers(1, 40), seed=st.integers(0, 2**31 - 1))
def test_integer_division_matches_torch(dtype, name, n, seed):
    a, b = integers(dtype, n, seed)
    want = DIVISIONS[name](torch, torch.from_numpy(a.copy()), torch.from_numpy(b))
    got = DIVISIONS[name](strata, strata.tensor(a).to("opencl"), strata.tensor(b).to("opencl"))
    assert got.device.type == "opencl"
    assert str(got.dtype) == str(want.dtype).replace("torch", "strata")
    np.testing.assert_array_equal(got.cpu().numpy(), want.numpy())


@pytest.mark.parametrize("name", ["fmod", "remainder", "floor_divide", "trunc", "in_place"])
def test_a_zero_divisor_raises_before_anything_changes(name):
    a = strata.tensor([5, -6, 7]).to("opencl")
    b = strata.tensor([2, 0, 1]).to("opencl")
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        DIVISIONS[name](strata, a, b)
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        DIVISIONS[name](torch, torch.tensor([5, -6, 7]), torch.tensor([2, 0, 1]))
    assert a.cpu().tolist() == [5, -6, 7]
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        a % 0


RNG = np.random.default_rng(7)
X = RNG.standard_normal((4, 5, 6)).astype(np.float32)
MASK2, MASK1, MASK3 = RNG.random((4, 5)) < 0.5, RNG.random(5) < 0.5, RNG.random((4, 5, 6)) < 0.3
I0, I1, I2 = np.array([0, 3, -1, 2]), np.array([[1], [4]]), np.array([5, 0, 2, 1])
INDEXING = {
    "mask": lambda m, x, t: x[t(MASK2)], "mask_in_the_middle": lambda m, x, t: x[:, t(MASK1)],
    "full_mask": lambda m, x, t: x[t(MASK3)],
    "two_tensors": lambda m, x, t: x[t(I0), t(np.array([4, 0, -2, 1]))],
    "broadcast": lambda m, x, t: x[t(I0[:2]), t(I1)],
    "apart": lambda m, x, t: x[t(I0), :, t(I2)],          # the result's dims go first
    "adjacent_after_a_slice": lambda m, x, t: x[:, t(I1), t(I2[:1])],
    "mask_and_index": lambda m, x, t: x[t(I0[:1]), t(MASK1)],
    "transposed": lambda m, x, t: x.transpose(0, 2)[t(I2), t(I1)],
    "masked_select": lambda m, x, t: m.masked_select(x, t(MASK3)),
    "masked_select_broadcast": lambda m, x, t: m.masked_select(x, t(MASK1[None, :, None])),
    "nonzero": lambda m, x, t: t(MASK3).nonzero(), "argwhere": lambda m, x, t: m.argwhere(x > 1),
    "nonzero_0d": lambda m, x, t: x[0, 0, 0].nonzero(),
    "where_one_argument": lambda m, x, t: m.where(x[0] > 0)[1],
    "put_mask": lambda m, x, t: x.clone().index_put_((t(MASK2),), t(np.ones(6, np.float32))),
    "put_apart_accumulate": lambda m, x, t: x.clone().index_put_(
        (t(np.array([0, 0, 1])), t(np.array([[1], [1]])), t(np.array([2, 2, 3]))),
        t(np.ones((2, 3), np.float32)), accumulate=True),
    "setitem_apart": lambda m, x, t: _set(x.clone(), (t(I0), slice(None), t(I2)), 7.0),
    "masked_scatter": lambda m, x, t: x.clone().masked_scatter_(t(MASK3), x.flip(0) * 2),
    "masked_scatter_broadcast": lambda m, x, t: m.masked_scatter(x, t(MASK1[:, None]),
                                                                 x.flip(0)),
    "masked_scatter_of_a_view": lambda m, x, t: x.clone().transpose(0, 2).masked_scatter_(
        t(MASK3.transpose(2, 1, 0).copy()), x),
    "take": lambda m, x, t: m.take(x, t(np.array([[0, -1], [17, 3]]))),
    "index_fill": lambda m, x, t: x.clone().index_fill_(1, t(np.array([0, -1])), 2.5),
    "index_fill_tensor_of_a_view": lambda m, x, t: x.clone().transpose(0, 2).index_fill_(
        1, t(np.array([3])), m.tensor(0.5)),
    "index_copy": lambda m, x, t: x.clone().index_copy_(1, t(np.array([3, 1])), x[:, :2] + 1),
    "index_copy_0d_source": lambda m, x, t: x[0, 0].clone().index_copy_(
        0, t(np.array(2)), x[0, 0, 0]),
    "index_fill_an_integer_tensor": lambda m, x, t: x.index_fill(-1, t(np.array([2, 1])),
                                                                 t(np.array(-3))),
    "put": lambda m, x, t: x.clone().put_(t(np.array([0, -1, 5])), x[0, 0, :3].clone()),
    "put_accumulate_of_a_view": lambda m, x, t: x.clone().transpose(0, 1).put_(
        t(np.array([1, 1, 30])), x[0, 0, :3].clone(), accumulate=True),
    "setitem_mask_of_a_view": lambda m, x, t: _set(x.clone().transpose(0, 2),
                                                   (slice(None), t(MASK1)), 3.0),
}


def _set(x, key, value):
    x[key] = value
    return x


@pytest.mark.parametrize("name", sorted(INDEXING))
def test_advanced_indexing_matches_torch(name):
    want = INDEXING[name](torch, torch.from_numpy(X), torch.from_numpy)
    got = INDEXING[name](strata, strata.tensor(X).to("opencl"),
                         lambda v: strata.tensor(v).to("opencl"))
    assert got.device.type == "opencl"
    assert tuple(got.shape) == tuple(want.shape) and got.stride() == want.stride()
    np.testing.assert_array_equal(got.cpu().numpy(), want.numpy())


def test_bad_indices_raise_as_torch_before_writing():
    x = strata.tensor(X).to("opencl")
    with pytest.raises(IndexError, match="index 5 is out of bounds for dimension 1 with size 5"):
        x[strata.tensor(I0).to("opencl"), strata.tensor(I2).to("opencl")] = 1.0
    with pytest.raises(IndexError, match="The shape of the mask \\[5\\] at index 0 does not "
                                         "match the shape of the indexed tensor"):
        x[strata.tensor(MASK1).to("opencl")]
    with pytest.raises(IndexError, match="shape mismatch: indexing tensors could not be "
                                         "broadcast together"):
        x[strata.tensor(I0).to("opencl"), strata.tensor(I2[:3]).to("opencl")]
    np.testing.assert_array_equal(x.cpu().numpy(), X)


def test_flat_and_masked_writes_check_like_torch_before_writing():
    x = strata.tensor(X).to("opencl")
    with pytest.raises(IndexError, match="out of range: tried to access index 120 on a tensor "
                                         "of 120 elements."):
        x.put_(strata.tensor([0, 120]).to("opencl"), strata.ones(2, device="opencl"))
    with pytest.raises(IndexError, match="index_copy_\\(\\): index 4 is out of bounds for "
                                         "dimension 0 with size 4"):
        x.index_copy_(0, strata.tensor([4]).to("opencl"), x[:1])
    with pytest.raises(RuntimeError, match="Number of elements of source < number of ones in "
                                           "mask"):
        x.masked_scatter_(strata.tensor(MASK3).to("opencl"), strata.ones(1, device="opencl"))
    np.testing.assert_array_equal(x.cpu().numpy(), X)


def test_the_backward_of_a_masked_gather_puts_with_accumulate():
    x = strata.tensor(X).to("opencl").requires_grad_()
    t = torch.from_numpy(X).requires_grad_()
    (x[strata.tensor(MASK2).to("opencl")] ** 2).sum().backward()
    (t[torch.from_numpy(MASK2)] ** 2).sum().backward()
    np.testing.assert_allclose(x.grad.cpu().numpy(), t.grad.numpy(), rtol=1e-6)


SPECIAL_POINTS = [0.0, -0.0, -1.0, -3.5, -0.5, np.inf, -np.inf, np.nan, 1e-30, 10.0, 1e20, 0.5,
                  8.0, -8.0, 30.0]
GAMMA_FUNCTIONS = {"digamma": lambda m, a: m.digamma(a),
                   "erfinv": lambda m, a: m.erfinv(a / 8),
                   "erfinv_": lambda m, a: a.clone().erfinv_(),
                   "i0": lambda m, a: m.i0(a), "i0_": lambda m, a: a.clone().i0_(),
                   "i0e": lambda m, a: m.special.i0e(a), "i1": lambda m, a: m.special.i1(a),
                   "i1e": lambda m, a: m.special.i1e(a), "entr": lambda m, a: m.special.entr(a),
                   "trigamma": lambda m, a: m.polygamma(1, a),
                   "polygamma_2": lambda m, a: m.polygamma(2, a),
                   "polygamma_3_method": lambda m, a: a.polygamma(3),
                   "in_place": lambda m, a: a.clone().polygamma_(0)}


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize("name", sorted(GAMMA_FUNCTIONS))
def test_digamma_and_polygamma_match_torch(dtype, name):
    x = np.concatenate([np.random.default_rng(8).standard_normal(200) * 5, SPECIAL_POINTS])
    want = GAMMA_FUNCTIONS[name](torch, torch.from_numpy(x).to(getattr(torch, dtype)))
    got = GAMMA_FUNCTIONS[name](strata, strata.tensor(x).to(getattr(strata, dtype)).to("opencl"))
    assert str(got.dtype) == str(want.dtype).replace("torch", "strata")
    tol = 1e-2 if dtype == "float16" else 1e-4
    np.testing.assert_allclose(got.cpu().numpy().astype(np.float64),
                               want.numpy().astype(np.float64), rtol=tol, atol=tol, equal_nan=True)


def test_lgamma_backward_is_digamma_on_the_device():
    x = np.random.default_rng(9).standard_normal(50).astype(np.float32) * 4
    a = strata.tensor(x).to("opencl").requires_grad_()
    a.lgamma().sum().backward()
    t = torch.from_numpy(x).requires_grad_()
    t.lgamma().sum().backward()
    np.testing.assert_allclose(a.grad.cpu().numpy(), t.grad.numpy(), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("dtype", ["float32", "int64", "int32", "float16"])
@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce_matches_torch(dtype, reduce, include_self):
    rng = np.random.default_rng(10)
    x = (rng.standard_normal((4, 6)) * 5).astype(dtype)
    src = (rng.standard_normal((3, 5)) * 5).astype(dtype)
    if dtype == "float32":
        src[0, 0] = np.nan              # propagates into its target, as ATen's
    for dim, index in ((1, rng.integers(0, 6, (3, 5))), (0, rng.integers(0, 4, (3, 2)))):
        want = torch.from_numpy(x).scatter_reduce(dim, torch.from_numpy(index),
                                                  torch.from_numpy(src), reduce,
                                                  include_self=include_self)
        got = strata.tensor(x).to("opencl").scatter_reduce(
            dim, strata.tensor(index).to("opencl"), strata.tensor(src).to("opencl"), reduce,
            include_self=include_self)
        assert got.device.type == "opencl" and str(got.dtype) == f"strata.{dtype}"
        np.testing.assert_allclose(got.cpu().numpy().astype(np.float64),
                                   want.numpy().astype(np.float64), rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("dtype", ["int32", "int16", "int8"])
def test_integer_max_and_min_start_from_their_own_type_limits(dtype):
    # the accumulator once started at LONG_MIN, which is 0 in a narrower integer
    x = np.array([[-5, -3], [-7, -9]], dtype)
    on_device = strata.tensor(x).to("opencl")
    assert on_device.amax(1).cpu().tolist() == [-3, -7]
    assert on_device.amin(1).cpu().tolist() == [-5, -9]
    assert on_device.max().item() == -3


UNIQUE_INPUTS = {"ints": [3, 1, 2, 3, 1, 5], "nan": [np.nan, 1.0, np.nan, 1.0],
                 "matrix": [[2, 1], [1, 3]], "scalar": 5, "bool": [True, False, True],
                 "runs": [1, 1, 2, 2, 1], "empty": np.zeros(0, np.int64),
                 "half": np.round(np.random.default_rng(11).standard_normal(40), 1).astype(
                     np.float16)}
UNIQUE = {"all": lambda m, x: m.unique(x, return_inverse=True, return_counts=True),
          "values": lambda m, x: m.unique(x), "unsorted": lambda m, x: m.unique(x, sorted=False),
          "consecutive": lambda m, x: m.unique_consecutive(x, return_inverse=True,
                                                          return_counts=True)}


@pytest.mark.parametrize("name", sorted(UNIQUE))
@pytest.mark.parametrize("data", sorted(UNIQUE_INPUTS))
def test_unique_matches_torch(name, data):
    array = np.array(UNIQUE_INPUTS[data])
    want = UNIQUE[name](torch, torch.from_numpy(array))
    got = UNIQUE[name](strata, strata.tensor(array).to("opencl"))
    want, got = (v if isinstance(v, tuple) else (v,) for v in (want, got))
    for a, b in zip(got, want, strict=True):
        assert a.device.type == "opencl" and tuple(a.shape) == tuple(b.shape)
        assert str(a.dtype) == str(b.dtype).replace("torch", "strata")
        np.testing.assert_array_equal(a.cpu().numpy(), b.numpy())


@pytest.mark.parametrize("args", [(1,), (-5,), ((1, -4), (0, 2)), (3, -1), ((7,), (1,))])
def test_roll_matches_torch(args):
    want = torch.roll(torch.from_numpy(X).transpose(0, 2), *args)
    got = strata.roll(strata.tensor(X).to("opencl").transpose(0, 2), *args)
    assert got.device.type == "opencl" and tuple(got.shape) == tuple(want.shape)
    np.testing.assert_array_equal(got.cpu().numpy(), want.numpy())


@pytest.mark.parametrize("args", [([0, 2, 1, 2],), ([[0, 3], [4, 1]], 5), (2, 3)])
def test_one_hot_matches_torch(args):
    labels, *rest = args
    want = torch.nn.functional.one_hot(torch.tensor(labels), *rest)
    got = strata.nn.functional.one_hot(strata.tensor(labels).to("opencl"), *rest)
    assert got.device.type == "opencl" and str(got.dtype) == "strata.int64"
    np.testing.assert_array_equal(got.cpu().numpy(), want.numpy())
    with pytest.raises(RuntimeError, match="Class values must be smaller than num_classes."):
        strata.nn.functional.one_hot(strata.tensor([0, 3]).to("opencl"), 3)
    with pytest.raises(RuntimeError, match="Class values must be non-negative."):
        strata.nn.functional.one_hot(strata.tensor([-1, 0]).to("opencl"), 3)


@pytest.mark.parametrize("diagonal", [0, 1, -2, 5])
@pytest.mark.parametrize("shape", [(4,), (3, 4)])
def test_diag_matches_torch(diagonal, shape):
    a = np.arange(1, 1 + int(np.prod(shape)), dtype=np.float32).reshape(shape)
    want = torch.diag(torch.from_numpy(a), diagonal)
    got = strata.diag(strata.tensor(a).to("opencl"), diagonal)
    assert got.device.type == "opencl" and got.stride() == want.stride()
    np.testing.assert_array_equal(got.cpu().numpy(), want.numpy())


SEARCHES = {
    "left": lambda m, s, v: m.searchsorted(s, v),
    "right": lambda m, s, v: m.searchsorted(s, v, right=True),
    "side_int32": lambda m, s, v: m.searchsorted(s, v, side="right", out_int32=True),
    "sorter": lambda m, s, v: m.searchsorted(s, v, sorter=m.argsort(s, stable=True)),
    "bucketize": lambda m, s, v: m.bucketize(v, s[0] if s.ndim > 1 else s),
}
BOUNDARIES = {"sorted": np.sort(RNG.standard_normal(7)).astype(np.float32),
              "nan": np.array([1.0, 2.0, np.nan], np.float32),
              "ties": np.array([1, 2, 2, 2, 5], np.float32),
              "batched": np.sort(RNG.standard_normal((2, 5)), axis=-1).astype(np.float32)}


@pytest.mark.parametrize("search", sorted(SEARCHES))
@pytest.mark.parametrize("boundaries", sorted(BOUNDARIES))
def test_searchsorted_bisects_as_torch(search, boundaries):
    seq = BOUNDARIES[boundaries]
    values = np.concatenate([RNG.standard_normal(6), [np.nan, 2.0, 1.0]]).astype(np.float32)
    if seq.ndim > 1 and search != "bucketize":
        values = values[:8].reshape(2, 4)
    want = SEARCHES[search](torch, torch.from_numpy(seq), torch.from_numpy(values))
    got = SEARCHES[search](strata, strata.tensor(seq).to("opencl"),
                           strata.tensor(values).to("opencl"))
    assert got.device.type == "opencl"
    assert str(got.dtype) == str(want.dtype).replace("torch", "strata")
    np.testing.assert_array_equal(got.cpu().numpy(), want.numpy())


@pytest.mark.parametrize("dtype", ["int64", "int32"])
@pytest.mark.parametrize("counts", [[1, 0, 3], [2, 2], [], [0, 0]])
def test_repeat_interleave_matches_torch(dtype, counts):
    repeats = np.array(counts, dtype)
    want = torch.repeat_interleave(torch.from_numpy(repeats))
    got = strata.repeat_interleave(strata.tensor(repeats).to("opencl"))
    assert got.device.type == "opencl" and str(got.dtype) == f"strata.{dtype}"
    np.testing.assert_array_equal(got.cpu().numpy(), want.numpy())
    rows = strata.repeat_interleave(strata.tensor(X).to("opencl"), strata.tensor(
        [1, 0, 2, 1]).to("opencl"), dim=0)
    np.testing.assert_array_equal(rows.cpu().numpy(), np.repeat(X, [1, 0, 2, 1], axis=0))
    with pytest.raises(RuntimeError, match="repeats can not be negative"):
        strata.repeat_interleave(strata.tensor([1, -1]).to("opencl"))


COUNTING = {
    "bincount": lambda m, x, w: m.bincount(x), "minlength": lambda m, x, w: x.bincount(
        minlength=12), "weights": lambda m, x, w: m.bincount(x, w),
    "histc": lambda m, x, w: m.histc(w), "histc_range": lambda m, x, w: w.histc(4, -0.5, 0.5),
    "histc_edges": lambda m, x, w: m.histc(m.tensor([0.0, 1, 2, 3, 3, 4, -1, float("nan")]),
                                           4, 0, 3),
    "histc_half": lambda m, x, w: w.half().histc(6),
}


@pytest.mark.parametrize("name", sorted(COUNTING))
def test_bincount_and_histc_match_torch(name):
    rng = np.random.default_rng(12)
    x, w = rng.integers(0, 9, 30), rng.standard_normal(30).astype(np.float32)
    want = COUNTING[name](torch, torch.from_numpy(x), torch.from_numpy(w))
    with strata.device("opencl"):
        got = COUNTING[name](strata, strata.tensor(x).to("opencl"),
                             strata.tensor(w).to("opencl"))
    assert got.device.type == "opencl"
    assert str(got.dtype) == str(want.dtype).replace("torch", "strata")
    np.testing.assert_allclose(got.cpu().float().numpy(), want.float().numpy(), rtol=1e-5)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weighted", [False, True])
def test_binary_cross_entropy_and_its_backward_match_torch(reduction, weighted):
    rng = np.random.default_rng(13)
    x = np.concatenate([rng.random(10), [0.0, 1.0]]).astype(np.float32).reshape(3, 4)
    y = np.concatenate([rng.random(10), [1.0, 0.0]]).astype(np.float32).reshape(3, 4)
    w = rng.random(4).astype(np.float32) if weighted else None

    def run(m, on):
        inp = on(x).requires_grad_()
        loss = m.nn.functional.binary_cross_entropy(inp, on(y), None if w is None else on(w),
                                                    reduction=reduction)
        loss.sum().backward()
        return loss.detach(), inp.grad
    got = run(strata, lambda a: strata.tensor(a).to("opencl"))
    want = run(torch, torch.from_numpy)
    for g, t in zip(got, want, strict=True):
        assert g.device.type == "opencl"
        np.testing.assert_allclose(g.cpu().numpy(), t.numpy(), rtol=1e-5, atol=1e-5)
    with pytest.raises(RuntimeError, match="all elements of input should be between 0 and 1"):
        strata.nn.functional.binary_cross_entropy(strata.tensor(x * 2).to("opencl"),
                                                  strata.tensor(y).to("opencl"))


MEDIANS = {"median": lambda m, x: m.median(x), "nanmedian": lambda m, x: m.nanmedian(x),
           "median_dim": lambda m, x: m.median(x, 1),
           "nanmedian_dim": lambda m, x: m.nanmedian(x, 0, keepdim=True),
           "median_ints": lambda m, x: m.median(m.nan_to_num(x).long(), -1)}


@pytest.mark.parametrize("name", sorted(MEDIANS))
def test_median_matches_torch(name):
    x = np.round(np.random.default_rng(14).standard_normal((4, 5)) * 3).astype(np.float32)
    x[1, 2], x[3, :] = np.nan, np.nan
    want = MEDIANS[name](torch, torch.from_numpy(x))
    got = MEDIANS[name](strata, strata.tensor(x).to("opencl"))
    want, got = (v if isinstance(v, tuple) else (v,) for v in (want, got))
    for g, t in zip(got, want, strict=True):
        assert g.device.type == "opencl" and tuple(g.shape) == tuple(t.shape)
        np.testing.assert_array_equal(g.cpu().numpy(), t.numpy())


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_frexp_matches_torch(dtype):
    x = np.concatenate([np.random.default_rng(15).standard_normal(20) * 1e3,
                        [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-40, 6e-8]]).astype(dtype)
    want = torch.frexp(torch.from_numpy(x))
    got = strata.frexp(strata.tensor(x).to("opencl"))
    for g, t in zip(got, want, strict=True):
        assert g.device.type == "opencl"
        assert str(g.dtype) == str(t.dtype).replace("torch", "strata")
        np.testing.assert_array_equal(g.cpu().numpy(), t.numpy())


@pytest.mark.parametrize("args", [(), (0, True), (1,)])
@pytest.mark.parametrize("data", ["ties", "bool", "signed_zero", "uint8"])
def test_mode_matches_torch(args, data):
    x = {"ties": np.array([[1, 3, 3, 2, 2, 5], [4, 4, 1, 1, 0, 0]], np.float32),
         "bool": np.array([[True, False, False], [True, True, False]]),
         "signed_zero": np.array([[-0.0, 0.0, 1.0], [0.0, -0.0, 2.0]]),
         "uint8": np.array([[7, 1, 7, 1], [0, 2, 2, 9]], np.uint8)}[data]
    want = torch.mode(torch.from_numpy(x), *args)
    got = strata.mode(strata.tensor(x).to("opencl"), *args)
    for g, t in zip(got, want, strict=True):
        assert g.device.type == "opencl" and tuple(g.shape) == tuple(t.shape)
        np.testing.assert_array_equal(g.cpu().numpy(), t.numpy())
        if t.dtype.is_floating_point:
            np.testing.assert_array_equal(np.signbit(g.cpu().numpy()), np.signbit(t.numpy()))


def test_one_element_gathers_keep_negative_zero():
    # each was a sum from 0 over its one element, and 0 + -0.0 is +0.0
    x = np.array([[-0.0, 1.0, -0.0], [2.0, -0.0, 3.0]], np.float32)
    cases = [lambda m, t: t.flip(1), lambda m, t: t.roll(1, 1), lambda m, t: t.tril(),
             lambda m, t: t.gather(1, t.new_tensor([[0], [1]]).long() if m is torch else
                                   m.tensor([[0], [1]]).to("opencl")),
             lambda m, t: t.repeat(2, 1)]
    for fn in cases:
        got = fn(strata, strata.tensor(x).to("opencl")).cpu().numpy()
        want = fn(torch, torch.from_numpy(x)).numpy()
        np.testing.assert_array_equal(np.signbit(got), np.signbit(want))


@pytest.mark.parametrize("name", ["tril_indices", "triu_indices"])
@pytest.mark.parametrize("args", [(3, 3), (4, 3, 1), (4, 3, -1), (3, 5, 2), (5, 3, -7), (0, 3),
                                  (3, 3, 5)])
def test_triangle_indices_match_torch(name, args):
    want = getattr(torch, name)(*args)
    got = getattr(strata, name)(*args, device="opencl")
    assert got.device.type == "opencl" and str(got.dtype) == "strata.int64"
    np.testing.assert_array_equal(got.cpu().numpy(), want.numpy())
