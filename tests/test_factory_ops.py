"""Factory, copy and conversion ops beyond the sample database: every dtype conversion bit for
bit, layouts of copies (preserve/contiguous/channels_last), in-place copies and fills (version
counter, shape and overlap errors), and the errors PyTorch raises for bad arguments."""

import itertools

import ml_dtypes
import numpy as np
import pytest
import strata
import torch
from helpers import DTYPE_PAIRS, check, check_error, check_meta
from hypothesis import given
from hypothesis import strategies as st

DTYPES = list(DTYPE_PAIRS)


def bits(t):
    """The exact stored values of a tensor, as integers (NaN payloads and -0.0 included)."""
    arr = t.detach().cpu()
    if isinstance(arr, torch.Tensor):
        if arr.dtype == torch.bfloat16:
            return arr.view(torch.int16).numpy().tolist()
        arr = arr.numpy()
    else:
        arr = arr.numpy()
        if arr.dtype == ml_dtypes.bfloat16:
            return arr.view(np.int16).tolist()
    return arr.view({1: np.int8, 2: np.int16, 4: np.int32, 8: np.int64}[arr.itemsize]).tolist() \
        if arr.dtype.kind == "f" else arr.tolist()


@pytest.mark.parametrize("src,dst", list(itertools.product(DTYPES, DTYPES)))
def test_every_conversion_is_bit_exact(src, dst):
    """Random doubles (and the awkward ones: ties, overflow, NaN, -0.0) through every pair."""
    rng = np.random.default_rng(0)
    values = np.concatenate([rng.standard_normal(200) * 10.0 ** rng.integers(-8, 6, 200),
                             [0.0, -0.0, 0.5, 1.5, 2.5, 65504.0, 65520.0, 1e10, -1e-10,
                              1.0 + 2 ** -11, 1.0 + 2 ** -11 + 2 ** -40, 1.0 + 2 ** -8,
                              3.0, -3.0, 127.0, 255.0, -128.0]])
    if src in ("bool", "uint8", "int8", "int16", "int32", "int64"):
        values = np.clip(np.trunc(values), -100, 100)  # in range of every integer dtype
    if dst in ("uint8",) and src not in ("bool",):
        values = np.abs(values)
    s = strata.tensor(values).to(getattr(strata, src)).to(getattr(strata, dst))
    t = torch.tensor(values).to(getattr(torch, src)).to(getattr(torch, dst))
    assert bits(s) == bits(t)


@pytest.mark.parametrize("dst", ["float16", "bfloat16"])
def test_double_to_half_rounds_through_float(dst):
    """PyTorch makes a half type from a double via float (two roundings): match that, not
    NumPy's single rounding."""
    x = np.array([1.0 + 2 ** -11 + 2 ** -40, 1.0 + 2 ** -8 + 2 ** -35,
                  -(1.0 + 2 ** -11 + 2 ** -37)])
    s = strata.tensor(x).to(getattr(strata, dst))
    t = torch.tensor(x).to(getattr(torch, dst))
    assert bits(s) == bits(t)
    s2 = strata.zeros(3, dtype=getattr(strata, dst)).copy_(strata.tensor(x))
    assert bits(s2) == bits(t)
    assert bits(strata.full((1,), x[0], dtype=getattr(strata, dst))) == bits(t[:1])


@st.composite
def strided_input(draw):
    shape = draw(st.lists(st.integers(1, 4), min_size=1, max_size=4))
    perm = draw(st.permutations(range(len(shape))))
    steps = [draw(st.integers(1, 2)) for _ in shape]
    return shape, perm, steps


def _make(m, shape, perm, steps):
    big = [s * k for s, k in zip(shape, steps)]
    t = m.arange(int(np.prod(big)), dtype=m.float32).reshape(big)
    for d, k in enumerate(steps):
        t = m.ops.aten.slice.Tensor(t, d, 0, None, k)
    return t.permute(perm)


@given(strided_input(), st.sampled_from([None, "preserve_format", "contiguous_format"]),
       st.sampled_from(["float32", "float64", "int16"]))
def test_copies_keep_pytorch_layouts(case, memory_format, dtype):
    """clone / to / empty_like-style copies: dense layouts are kept, others densified in their
    dim order (``infer_dense_strides``), contiguous_format is row-major."""
    shape, perm, steps = case

    def fn(m):
        x = _make(m, shape, perm, steps)
        fmt = None if memory_format is None else getattr(m, memory_format)
        kw = {} if fmt is None else {"memory_format": fmt}
        return (x.clone(**kw), x.to(getattr(m, dtype)), x.contiguous(),
                m.ops.aten._to_copy.default(x, dtype=getattr(m, dtype), **kw))
    s, t = fn(strata), fn(torch)
    for a, b in zip(s, t):
        assert a.stride() == b.stride(), (a.stride(), b.stride())
        np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_channels_last_copies():
    x = np.arange(2 * 3 * 4 * 5, dtype=np.float32).reshape(2, 3, 4, 5)
    check(lambda m, t: (t.clone(memory_format=m.channels_last),
                        t.contiguous(memory_format=m.channels_last),
                        m.empty_like(t, memory_format=m.channels_last).stride(),
                        t.contiguous(memory_format=m.channels_last).clone(),
                        m.cat([t.contiguous(memory_format=m.channels_last)] * 2, 1),
                        t.contiguous(memory_format=m.channels_last) + 1), x, check_stride=True)
    check_error(lambda m, t: t.contiguous(memory_format=m.channels_last), x[0],
                match="required rank 4 tensor to use channels_last format")


def test_to_returns_self_or_a_copy():
    for m in (strata, torch):
        x = m.ones(2, 3)
        assert x.to(m.float32) is x and x.to("cpu") is x
        assert x.to(m.float32, copy=True) is not x
        y = x.to(m.float64)
        assert y is not x and not y._is_view() and y.dtype == m.float64
        assert x.clone().data_ptr() != x.data_ptr()


def test_copy_broadcasts_converts_and_bumps_the_version():
    def fn(m, x, y):
        out = x.clone()
        before = out._version
        r = out.copy_(y)
        return r is out, out, out._version - before
    check(fn, np.zeros((2, 3), np.int32), np.array([1.7, -2.2, 3.9]))
    check(fn, np.zeros((2, 3), np.float16), np.array([[1.5], [2.5]], np.float64))
    check(lambda m, x: x.t().copy_(m.arange(6.0).view(3, 2)), np.zeros((2, 3)))


@pytest.mark.parametrize("fn,match", [
    (lambda m, x: x.copy_(m.ones(2, 3)), r"output with shape \[3\] doesn't match the broadcast "
                                         r"shape \[2, 3\]"),
    (lambda m, x: x.copy_(m.ones(2)), r"The size of tensor a \(3\) must match the size of tensor "
                                      r"b \(2\) at non-singleton dimension 0"),
    (lambda m, x: x[:1].expand(3).copy_(m.ones(3)), "more than one element of the written-to "
                                                    "tensor refers to a single memory location"),
    (lambda m, x: x[1:].copy_(x[:-1]), "some elements of the input tensor and the written-to "
                                       "tensor refer to a single memory location"),
])
def test_copy_errors_leave_self_unchanged(fn, match):
    check_error(fn, np.arange(3.0), match=match)


@pytest.mark.parametrize("dtype,value", [
    ("int8", 300), ("int8", -129), ("uint8", 256), ("uint8", -256), ("int32", float("nan")),
    ("int64", float("inf")), ("int16", 1e6), ("float16", 1e6), ("float16", 70000),
    ("float16", 65519.9), ("bfloat16", 1e39), ("float32", 1e39), ("float32", 2 ** 200),
])
def test_fill_and_full_overflow(dtype, value):
    check_error(lambda m, x: x.to(getattr(m, dtype)).fill_(value), np.zeros(2),
                match="(value cannot be converted to type .* without overflow|too big)")
    check_error(lambda m, x: m.full((2,), value, dtype=getattr(m, dtype)), np.zeros(2),
                match="(without overflow|too big)")


def test_fill_values_that_fit_or_wrap():
    def fn(m, x):
        return (x.to(m.uint8).fill_(-1), x.to(m.int32).fill_(2.9), x.to(m.int32).fill_(-2.9),
                x.to(m.bool).fill_(2), x.to(m.float16).fill_(float("inf")),
                x[0, :1].to(m.float16).fill_(70000),
                x.to(m.bfloat16).fill_(1.0 + 2 ** -8 + 2 ** -30), x.fill_(m.tensor(2.5)),
                x.to(m.float16).fill_(m.tensor(1 / 3, dtype=m.float64)))
    check(fn, np.zeros((2, 2)))


def test_fill_and_zero_bump_version_and_fill_allows_expanded():
    for m in (strata, torch):
        x = m.zeros(3)
        e = x[:1].expand(4)
        e.fill_(7)
        x.zero_()
        x.fill_(1)
        assert x._version == e._version == 3 and x.tolist() == [1, 1, 1]
    check_error(lambda m, x: x.fill_(m.tensor([1.0])), np.zeros(2),
                match="fill_ only supports 0-dimension value tensor but got tensor with 1 "
                      "dimensions.")


@pytest.mark.parametrize("fn,match", [
    (lambda m: m.arange(0, 5, -1), "upper bound and lower bound inconsistent with step sign"),
    (lambda m: m.arange(0, 5, 0), "step must be nonzero"),
    (lambda m: m.arange(0, float("inf")), "unsupported range: 0 -> inf"),
    (lambda m: m.linspace(0, 1, -1), "number of steps must be non-negative"),
    (lambda m: m.linspace(0, 1, 3, dtype=m.bool), "not implemented for 'Bool'"),
    (lambda m: m.eye(-1), "n must be greater or equal to 0, got -1"),
    (lambda m: m.eye(2, -3), "m must be greater or equal to 0, got -3"),
    (lambda m: m.full((-1,), 1), "Trying to create tensor with negative dimension -1"),
    (lambda m: m.empty(2, -3), "Trying to create tensor with negative dimension -3"),
    (lambda m: m.empty_strided((2, 3), (3,)), r"dimensionality of sizes \(2\) must match "
                                              r"dimensionality of strides \(1\)"),
    (lambda m: m.empty_strided((2, 3), (-1, 1)), "Storage size calculation overflowed"),
    (lambda m: m.empty(2, 3, memory_format=m.channels_last), "required rank 4 tensor"),
    (lambda m: m.rand(2, dtype=m.int32), "\"check_uniform_bounds\" not implemented for 'Int'"),
    (lambda m: m.randn(2, dtype=m.int64), "\"normal_kernel_cpu\" not implemented for 'Long'"),
    (lambda m: m.randint(5, 3, (2,)), "random_ expects 'from' to be less than 'to', but got "
                                      "from=5 >= to=3"),
    (lambda m: m.randint(0, 300, (2,), dtype=m.int8), "to - 1 is out of bounds for signed char"),
    (lambda m: m.randint(-1, 3, (2,), dtype=m.uint8), "from is out of bounds for unsigned char"),
    (lambda m: m.randperm(-1), "Trying to create tensor with negative dimension -1"),
    (lambda m: m.randperm(300, dtype=m.int8), "value cannot be converted to type int8_t"),
    (lambda m: m.zeros(3).normal_(0, -1), "normal expects std >= 0.0, but found std -1"),
    (lambda m: m.zeros(3, dtype=m.int64).normal_(), "\"normal_kernel_cpu\" not implemented"),
    (lambda m: m.zeros(3).uniform_(2, 1), r"uniform_ expects to return a \[from, to\) range, "
                                          r"but found from=2 > to=1"),
    (lambda m: m.zeros(3, dtype=m.int64).uniform_(), "\"check_uniform_bounds\" not implemented"),
    (lambda m: m.bernoulli(m.zeros(3), 1.5), r"bernoulli_ expects p to be in \[0, 1\], but got "
                                             r"p=1.5"),
    (lambda m: m.bernoulli(m.ones(3, dtype=m.int64)), "\"bernoulli_tensor_cpu_p_\" not "
                                                      "implemented for 'Long'"),
    (lambda m: m.multinomial(m.ones(2, 2, 2), 1), "prob_dist must be 1 or 2 dim"),
    (lambda m: m.multinomial(m.ones(2), 3), "cannot sample n_sample > prob_dist.size"),
    (lambda m: m.multinomial(m.tensor([1.0, -1.0]), 1), "probability tensor contains either "
                                                        "`inf`, `nan` or element < 0"),
    (lambda m: m.multinomial(m.tensor([1, 2]), 1), "multinomial only supports floating-point "
                                                   "dtypes for input, got: Long"),
    (lambda m: m.zeros(3).expand(2, 3).normal_(), "more than one element of the written-to"),
    (lambda m: m.randperm(3, dtype=m.bool), "\"randperm\" not implemented for 'Bool'"),
    (lambda m: m.randperm(2050, dtype=m.float16), "n cannot be greater than 2049 for Half type."),
    (lambda m: m.bernoulli(m.full((3,), float("nan"))), "Expected p_in >= 0 && p_in <= 1"),
    (lambda m: m.arange(3, dtype=m.bool), "\"arange_cpu\" not implemented for 'Bool'"),
])
def test_factory_and_random_errors(fn, match):
    check_error(lambda m, _: fn(m), np.zeros(1), match=match)


def test_factories_run_on_the_meta_device():
    def fn(m, like):
        dev = like.device
        return (m.empty(2, 3, device=dev), m.full((2,), 7, device=dev),
                m.arange(0, 1, 0.1, device=dev), m.linspace(0, 1, 5, device=dev),
                m.eye(3, 2, device=dev), m.rand(4, device=dev), m.randint(0, 3, (5,), device=dev),
                m.empty_strided((2, 3), (1, 2), device=dev), m.zeros(3, device=dev).normal_(),
                m.empty(1, 2, 3, 4, memory_format=m.channels_last, device=dev))
    check_meta(fn, np.zeros(()))


def test_random_ops_respect_seed_and_generator():
    g1, g2 = strata.Generator().manual_seed(3), strata.Generator().manual_seed(3)
    assert strata.rand(5, generator=g1).tolist() == strata.rand(5, generator=g2).tolist()
    strata.manual_seed(7)
    a = (strata.randn(4), strata.randint(0, 9, (4,)), strata.randperm(6),
         strata.zeros(3).uniform_())
    strata.manual_seed(7)
    b = (strata.randn(4), strata.randint(0, 9, (4,)), strata.randperm(6),
         strata.zeros(3).uniform_())
    assert all(x.tolist() == y.tolist() for x, y in zip(a, b))
    assert sorted(strata.randperm(50).tolist()) == list(range(50))
    draws = strata.randint(-3, 3, (1000,), dtype=strata.int8)
    assert draws.dtype is strata.int8 and -3 <= draws.min().item() and draws.max().item() < 3
    assert strata.multinomial(strata.tensor([0.5, 0.0, 0.0]), 2).tolist() == [0, 1]
    u = strata.empty(10000, dtype=strata.float64).uniform_(2, 5).numpy()
    assert 2 <= u.min() and u.max() < 5 and abs(u.mean() - 3.5) < 0.05


def test_view_dtype_reinterprets_bytes():
    x = np.arange(12, dtype=np.float32).reshape(3, 4) / 3
    check(lambda m, t: (t.view(m.int32), t.view(m.int16), t.view(m.uint8).view(m.float32),
                        t.view(m.float64), t[:, 2:].view(m.int64), t.t().contiguous().view(
                            m.bfloat16)), x, check_stride=True)
    check_error(lambda m, t: t[:, 1:3].view(m.float64), x,
                match=r"self.storage_offset\(\) must be divisible by 2 to view Float as Double")
    check_error(lambda m, t: t.t()[:, :2].view(m.float64), x, match=r"self.stride\(-1\) must be 1")
    check_error(lambda m, t: t[:, ::2].contiguous().t().view(m.float64), x,
                match="must be")


def test_resize_and_out_arguments():
    def fn(m, x):
        out = m.empty(0, dtype=x.dtype)
        r = m.add(x, 1, out=out)
        grown = x.clone()
        version = grown._version
        grown.resize_(3, 4)
        same = m.empty(2, 4, dtype=x.dtype)
        ptr = same.data_ptr()
        m.mul(x, 2, out=same)
        return (r is out, out, grown.shape, grown.stride(), grown._version - version,
                grown.view(-1)[:8], same.data_ptr() == ptr, same)
    check(fn, np.arange(8.0).reshape(2, 4))
    check_meta(lambda m, x: x.resize_(3, 5), np.zeros((2, 2)))
    check_error(lambda m, x: x.resize_(2, -1), np.zeros(2), match="negative dimension -1")
