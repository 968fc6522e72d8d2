"""Dropout's mask inside inductor graphs: a generated PCG64 kernel (Note [Random draws] in
compile/inductor/ir.py) draws what eager draws from the same seed, bit for bit, whatever the
thread count (each chunk jumps ahead to its place in the stream)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import strata
from strata.compile.aot.aot_autograd import aot_function
from strata.compile.inductor.compile_fx import compile_fx

pytestmark = pytest.mark.filterwarnings("error::RuntimeWarning")


@pytest.fixture
def two_threads():
    before = strata.get_num_threads()
    strata.set_num_threads(2)
    yield
    strata.set_num_threads(before)


def _draws(fn, x, seed, calls=2):
    strata.manual_seed(seed)
    return [fn(x).numpy() for _ in range(calls)] + [strata.rand(3).numpy()]


@settings(max_examples=12, deadline=None)
@given(shape=st.lists(st.integers(1, 40), min_size=1, max_size=3),
       p=st.sampled_from([0.0, 0.1, 0.5, 0.9, 1.0]),
       dtype=st.sampled_from(["float32", "float64"]), seed=st.integers(0, 2 ** 31))
def test_dropout_masks_are_eagers_bit_for_bit(shape, p, dtype, seed):
    x = strata.tensor(np.random.default_rng(0).standard_normal(shape).astype(dtype))

    def dropout(x):
        return strata.nn.functional.dropout(x, p, training=True)
    compiled = strata.compile(dropout, backend="inductor")
    for got, want in zip(_draws(compiled, x, seed), _draws(dropout, x, seed)):
        np.testing.assert_array_equal(got, want)


def test_chunks_on_several_threads_draw_the_same_stream(two_threads):
    """A mask long enough to be split over the pool's threads, drawn twice (the second call's
    stream starts where the first's ended)."""
    x = strata.randn(700, 300)

    def dropout(x):
        return strata.nn.functional.dropout(x, 0.25, training=True)
    compiled = strata.compile(dropout, backend="inductor")
    for got, want in zip(_draws(compiled, x, 1), _draws(dropout, x, 1)):
        np.testing.assert_array_equal(got, want)


def test_the_mask_is_a_kernel_and_other_random_ops_stay_eager():
    def f(x):
        return strata.nn.functional.dropout(x, 0.5, training=True) + strata.rand_like(x)
    x = strata.randn(4, 5)
    graphs = []

    def keep(gm, inputs):
        graphs.append(compile_fx(gm, inputs))
        return graphs[-1]
    aot_function(f, keep)(x)
    post = graphs[0].ir_post_fusion
    assert "BernoulliDraws(" in post and "Fallback(<function seeded_random" in post
