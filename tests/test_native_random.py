"""Eager random draws in generated C (compile/inductor/eager_random.py run by
backends/cpu/draws.py): bernoulli(p), bernoulli(probs), uniform_, float64 rand and dropout give
NumPy's ``Generator.random`` values bit for bit, on the C path and with it switched off, and
leave the generator where NumPy's draws leave it; bad input raises torch's error before any
draw."""

import threading

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import strata
from strata import config
from strata.backends.cpu import draws, native
from strata.random import default_generator

from helpers import native_paths

path = native_paths("eager_random", "bernoulli_float32")
ROW = draws.ROW
MIN_DRAWS = 2 * ROW     # the kernels run from here in these tests: small, fast examples
# sizes with whole rows only, a partial last row, and under MIN_DRAWS (NumPy only)
SIZES = st.one_of(st.integers(MIN_DRAWS, 12 * ROW + ROW // 2),
                  st.sampled_from([0, 1, ROW - 1, ROW + 3, 2 * ROW, 5 * ROW + 1]))


@pytest.fixture(autouse=True)
def _small_min_draws(monkeypatch):
    monkeypatch.setattr(draws, "MIN_DRAWS", MIN_DRAWS)


def _numpy_reference(seed, formula):
    """What ``formula(generator)`` gives from a fresh PCG64 of ``seed``, and the state after."""
    g = np.random.Generator(np.random.PCG64(seed))
    return formula(g), g.bit_generator.state


def _state():
    return default_generator.bit_generator.bit_generator.state


def _kernel_calls(monkeypatch):
    """The number of elements the generated kernels drew, counted (the C path really ran)."""
    drawn = []
    run = draws._run

    def counted(*args):
        done = run(*args)
        drawn.append(done)
        return done
    monkeypatch.setattr(draws, "_run", counted)
    return drawn


def _shape(n, rows):
    return (rows, n // rows) if rows > 1 and n % rows == 0 else (n,)


@settings(max_examples=30, deadline=None)
@given(n=SIZES, rows=st.sampled_from([1, 2, 3]), seed=st.integers(0, 2 ** 64 - 1),
       p=st.one_of(st.floats(0, 1), st.sampled_from([0.0, 1.0, 0.5, 0.1, 2 ** -53])),
       dtype=st.sampled_from(["float32", "float64", "bool", "float16", "bfloat16"]))
def test_bernoulli_p_is_numpys_draws(n, rows, seed, p, dtype):
    shape = _shape(n, rows)
    strata.manual_seed(seed)
    out = strata.bernoulli(strata.empty(shape, dtype=getattr(strata, dtype)), p)
    expected, state = _numpy_reference(seed, lambda g: g.random(shape) < p)
    assert out.dtype == getattr(strata, dtype) and tuple(out.shape) == shape
    np.testing.assert_array_equal(out.float().numpy(), expected.astype(np.float32))
    assert _state() == state


@settings(max_examples=25, deadline=None)
@given(n=SIZES, seed=st.integers(0, 2 ** 64 - 1), lo=st.floats(-1e6, 1e6),
       width=st.one_of(st.floats(0, 1e6), st.sampled_from([0.0, 1.0, 1e-300])),
       dtype=st.sampled_from(["float32", "float64", "float16", "bfloat16"]))
def test_uniform_is_numpys_draws(n, seed, lo, width, dtype):
    hi = lo + width
    strata.manual_seed(seed)
    out = strata.empty(n, dtype=getattr(strata, dtype)).uniform_(lo, hi)
    expected, state = _numpy_reference(seed, lambda g: g.uniform(lo, hi, n))
    with np.errstate(over="ignore"):   # beyond float16: inf, as eager's cast
        # eager's cast: a double to a half type by way of float32
        want = expected.astype(np.float32).astype(out.numpy().dtype).astype(np.float32)
    np.testing.assert_array_equal(out.float().numpy(), want)
    assert _state() == state


@settings(max_examples=20, deadline=None)
@given(n=SIZES, seed=st.integers(0, 2 ** 64 - 1),
       dtype=st.sampled_from(["float32", "float64", "float16"]))
def test_bernoulli_probs_is_numpys_draws(n, seed, dtype):
    probs = np.random.default_rng(n).random(n).astype(dtype)
    probs[::7] = 0
    probs[::11] = 1
    strata.manual_seed(seed)
    out = strata.bernoulli(strata.tensor(probs))
    expected, state = _numpy_reference(seed, lambda g: g.random(n) < probs.astype(np.float64))
    np.testing.assert_array_equal(out.numpy(), expected.astype(dtype))
    assert _state() == state


@settings(max_examples=15, deadline=None)
@given(n=SIZES, seed=st.integers(0, 2 ** 64 - 1))
def test_rand_float64_and_rand_like_are_numpys_draws(n, seed):
    strata.manual_seed(seed)
    a = strata.rand(n, dtype=strata.float64)
    b = strata.rand_like(a.float())       # uniform_(0, 1): doubles rounded to float32
    c = strata.rand(n)                    # float32 rand: NumPy's float32 stream, as before
    d = strata.rand(n // 2, dtype=strata.complex128)    # two doubles each

    def formula(g):
        return (g.random(n), g.random(n).astype(np.float32), g.random(n, dtype=np.float32),
                g.random((n // 2, 2)).view(np.complex128)[:, 0])
    expected, state = _numpy_reference(seed, formula)
    for got, want in zip((a, b, c, d), expected):
        np.testing.assert_array_equal(got.numpy(), want)
    assert _state() == state


@pytest.fixture
def native_on(monkeypatch):
    monkeypatch.setattr(config, "native_kernels", True)
    native.reset()
    yield
    native.reset()


def test_the_kernels_draw_and_numpy_only_the_last_partial_row(native_on, monkeypatch):
    drawn = _kernel_calls(monkeypatch)
    strata.bernoulli(strata.empty(5 * ROW + 7), 0.5)
    strata.empty(5 * ROW).uniform_()
    strata.bernoulli(strata.full((6 * ROW,), 0.5))
    strata.rand(4 * ROW, dtype=strata.float64)
    strata.bernoulli(strata.empty(MIN_DRAWS - 1), 0.5)   # under MIN_DRAWS: NumPy
    assert drawn == [5 * ROW, 5 * ROW, 6 * ROW, 4 * ROW, 0]


def test_every_path_draws_the_same(path):
    strata.manual_seed(11)
    x = strata.randn(3, 4 * ROW + 5)
    values = [strata.nn.functional.dropout(x, 0.3), strata.bernoulli(x.sigmoid()),
              strata.empty(2, 3 * ROW).uniform_(-3, 5), strata.rand(5 * ROW, dtype=strata.float64)]
    state = _state()

    def formula(g):
        mask = strata.tensor(g.random((3, 4 * ROW + 5)) < 0.7).float()
        return [x * (mask / 0.7),     # dropout's arithmetic on NumPy's mask
                g.random((3, 4 * ROW + 5)) < x.sigmoid().numpy().astype(np.float64),
                g.uniform(-3, 5, (2, 3 * ROW)).astype(np.float32), g.random(5 * ROW)]
    g = np.random.Generator(np.random.PCG64(11))
    g.standard_normal((3, 4 * ROW + 5), dtype=np.float32)   # randn's draws
    for got, want in zip(values, formula(g)):
        want = want.numpy() if isinstance(want, strata.Tensor) else want
        np.testing.assert_array_equal(got.numpy(), want)
    assert state == g.bit_generator.state


def test_a_buffered_float32_half_survives_the_jump():
    """NumPy's float32 draws take 32-bit halves of a 64-bit output and keep the other half for
    the next one; double draws leave that half alone, and so must the kernels' ``advance``."""
    strata.manual_seed(5)
    first = strata.rand(3)                       # odd: a half stays buffered
    mask = strata.bernoulli(strata.empty(6 * ROW), 0.25)
    after = strata.rand(3)
    g = np.random.Generator(np.random.PCG64(5))
    np.testing.assert_array_equal(first.numpy(), g.random(3, dtype=np.float32))
    np.testing.assert_array_equal(mask.numpy(), g.random(6 * ROW) < 0.25)
    np.testing.assert_array_equal(after.numpy(), g.random(3, dtype=np.float32))
    assert _state() == g.bit_generator.state


def test_explicit_generator_and_other_layouts():
    g = strata.Generator().manual_seed(3)
    strata.manual_seed(0)
    default_before = _state()
    base = strata.zeros(4 * ROW, 6)
    view = base.t()[1:4]                                  # not contiguous: drawn, then copied
    view.uniform_(-1, 1, generator=g)
    channels_last = strata.empty(2, 8, 32, 32).to(memory_format=strata.channels_last)
    mask = strata.bernoulli(channels_last, 0.4, generator=g)
    ref = np.random.Generator(np.random.PCG64(3))
    expected_view = ref.uniform(-1, 1, (3, 4 * ROW)).astype(np.float32)
    expected_mask = ref.random((2, 8, 32, 32)) < 0.4
    np.testing.assert_array_equal(view.numpy(), expected_view)
    np.testing.assert_array_equal(base.numpy()[:, [0, 4, 5]], 0)
    assert mask.stride() == channels_last.stride()
    np.testing.assert_array_equal(mask.numpy(), expected_mask)
    assert g.bit_generator.bit_generator.state == ref.bit_generator.state
    assert _state() == default_before


def test_threads_chunks_jump_to_their_place(native_on):
    """One kernel call over all rows and the same rows in uneven chunks draw the same values,
    as the pool's threads split them."""
    fn = native.function("eager_random", "bernoulli_float64")
    rows = 9
    bits = np.random.PCG64(21)
    words = draws._state_words(bits.state)
    params = np.array([0.37])
    whole, chunked = np.empty(rows * ROW), np.empty(rows * ROW)
    fn(words.ctypes.data, params.ctypes.data, whole.ctypes.data, rows, 0, rows)
    for lo, hi in ((0, 2), (2, 3), (3, 8), (8, 9)):
        fn(words.ctypes.data, params.ctypes.data, chunked.ctypes.data, rows, lo, hi)
    expected = np.random.Generator(bits).random(rows * ROW) < 0.37
    np.testing.assert_array_equal(whole, expected)
    np.testing.assert_array_equal(chunked, expected)


@pytest.mark.parametrize("threads", [1, 3])
def test_the_pool_threads_split_the_rows(native_on, monkeypatch, threads):
    monkeypatch.setattr(draws, "GRAIN_ROWS", 2)
    drawn = _kernel_calls(monkeypatch)
    saved = strata.get_num_threads()
    strata.set_num_threads(threads)
    try:
        strata.manual_seed(8)
        mask = strata.bernoulli(strata.empty(41, ROW + 1), 0.6)    # 41 rows of the kernel
    finally:
        strata.set_num_threads(saved)
    expected, state = _numpy_reference(8, lambda g: g.random((41, ROW + 1)) < 0.6)
    np.testing.assert_array_equal(mask.numpy(), expected)
    assert _state() == state
    assert drawn == [41 * ROW]


BAD_CALLS = {
    "bernoulli p < 0": lambda m: m.bernoulli(m.ones(5 * ROW), -0.1),
    "bernoulli p > 1": lambda m: m.bernoulli(m.ones(5 * ROW), 1.5),
    "bernoulli probs > 1": lambda m: m.bernoulli(m.full((5 * ROW,), 0.5).index_fill(0, m.tensor(
        [4000]), 1.01)),
    "bernoulli probs nan": lambda m: m.bernoulli(m.full((5 * ROW,), float("nan"))),
    "uniform_ from > to": lambda m: m.zeros(5 * ROW).uniform_(2, 1),
    "uniform_ int": lambda m: m.zeros(5 * ROW, dtype=m.int64).uniform_(),
    "dropout p > 1": lambda m: m.nn.functional.dropout(m.ones(5 * ROW), 1.2),
}


@pytest.mark.parametrize("name", BAD_CALLS)
def test_errors_are_torchs_and_nothing_is_drawn(name):
    with pytest.raises(Exception) as expected:
        BAD_CALLS[name](torch)
    strata.manual_seed(9)
    before = _state()
    with pytest.raises(type(expected.value)) as got:
        BAD_CALLS[name](strata)
    assert str(got.value) == str(expected.value)
    assert _state() == before


def test_a_failed_uniform_leaves_the_tensor_untouched():
    x = strata.arange(5 * ROW, dtype=strata.float32)
    with pytest.raises(RuntimeError, match="expects to return a"):
        x.uniform_(3, -3)
    np.testing.assert_array_equal(x.numpy(), np.arange(5 * ROW, dtype=np.float32))


def test_an_infinite_range_is_numpys_overflow_error():
    """hi - lo beyond a double: NumPy's Generator.uniform refuses it (the kernel never runs)."""
    strata.manual_seed(2)
    before = _state()
    with pytest.raises(OverflowError, match="range exceeds valid bounds"):
        strata.empty(5 * ROW, dtype=strata.float64).uniform_(-1e308, 1e308)
    assert _state() == before


def test_threads_drawing_from_one_generator_take_turns():
    """Two Python threads drawing from one generator: each op's draws are one run of the
    stream (NumPy's lock), so together they are the stream's first draws, each mask a block."""
    g = strata.Generator().manual_seed(4)
    masks = {}

    def draw(name):
        masks[name] = [strata.bernoulli(strata.empty(3 * ROW + 5), 0.5, generator=g)
                       for _ in range(20)]
    threads = [threading.Thread(target=draw, args=(name,)) for name in "ab"]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    stream = np.random.Generator(np.random.PCG64(4)).random(40 * (3 * ROW + 5)) < 0.5
    blocks = {stream[i:i + 3 * ROW + 5].tobytes() for i in range(0, stream.size, 3 * ROW + 5)}
    drawn = [m.numpy().astype(bool).tobytes() for name in "ab" for m in masks[name]]
    assert sorted(drawn) == sorted(blocks)
