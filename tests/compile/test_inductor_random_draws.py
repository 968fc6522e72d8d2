"""Dropout's mask and uniform values inside inductor graphs: a generated PCG64 kernel (Note
[Random draws] in compile/inductor/ir.py) draws what eager draws from the same seed, bit for
bit, whatever the thread count (each chunk jumps ahead to its place in the stream)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import strata
from strata.compile.aot.aot_autograd import aot_function
from strata.compile.inductor.compile_fx import compile_fx

pytestmark = pytest.mark.filterwarnings("error::RuntimeWarning")


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


def test_the_mask_and_uniforms_are_kernels_and_normal_stays_eager():
    def f(x):
        return strata.nn.functional.dropout(x, 0.5, training=True) + strata.rand_like(x) + \
            x.clone().normal_()
    x = strata.randn(4, 5)
    graphs = []

    def keep(gm, inputs):
        graphs.append(compile_fx(gm, inputs))
        return graphs[-1]
    aot_function(f, keep)(x)
    post = graphs[0].ir_post_fusion
    assert "bernoulli(0.5)" in post and "uniform(0.0, 1.0)" in post
    assert post.count("Fallback(seeded_random(<OpOverload aten::normal_>))") == 1


@settings(max_examples=10, deadline=None)
@given(shape=st.lists(st.integers(1, 40), min_size=1, max_size=3),
       bounds=st.sampled_from([(0.0, 1.0), (-1, 2), (-3.5, -3.5), (1e-3, 1e30), (-2.0, 0.0)]),
       dtype=st.sampled_from(["float32", "float64"]), seed=st.integers(0, 2 ** 31))
def test_uniform_draws_are_eagers_bit_for_bit(shape, bounds, dtype, seed):
    """``uniform_`` in a graph equals eager's (NumPy's ``Generator.uniform``, rounded to the
    dtype) from the same seed; the stream goes on where eager's does."""
    x = strata.zeros(shape, dtype=getattr(strata, dtype))

    def uniform(x):
        return x.clone().uniform_(*bounds) * 2
    compiled = strata.compile(uniform, backend="inductor")
    for got, want in zip(_draws(compiled, x, seed), _draws(uniform, x, seed)):
        assert got.tobytes() == want.tobytes()


def test_rand_like_and_randn_like_are_eagers_from_the_same_seed():
    """``rand_like`` is ``uniform_`` in eager and in a graph (a kernel there): every call and
    the stream after it are eager's. ``randn_like`` is ``normal_``, eager's kernel in the graph
    at the graph's place of the stream: the first call is eager's, but NumPy's ziggurat draws a
    number of values that depends on the values, so the graph moves the stream on by a bound
    (functionalize.py's ``RngInputs``) and later draws differ from eager's, as torch.compile's
    random numbers differ from eager's (documented in docs/inductor.md)."""
    x = strata.zeros(64)
    compiled = strata.compile(lambda x: strata.rand_like(x), backend="inductor")
    for got, want in zip(_draws(compiled, x, 3), _draws(strata.rand_like, x, 3)):
        assert got.tobytes() == want.tobytes()
    compiled = strata.compile(lambda x: strata.randn_like(x), backend="inductor")
    got, want = _draws(compiled, x, 3), _draws(strata.randn_like, x, 3)
    assert got[0].tobytes() == want[0].tobytes() and got[1].tobytes() != want[1].tobytes()
