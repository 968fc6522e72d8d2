"""Note [Split row loops] (csplit.py): a row read through a reshape that merges dims (heads
back into the model dim) runs as blocks of SIMD loops; arithmetic and strata's own exp give
the one (scalar) loop's bits, libmvec's tanh its values within libmvec's ulps, both torch's
to rounding; loops the rule does not apply to keep their text."""

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import strata
from strata.compile.aot import make_fx
from strata.compile.inductor import codecache, csplit
from strata.compile.inductor.compile_fx import compile_fx


def _merge_heads(m, q, k, tanh=True):
    """attention's ``[B, H, T, D] -> [B, T, H*D]``, then pointwise math on the row."""
    b, h, t, d = q.shape
    merged = q.transpose(1, 2).reshape(b, t, h * d) * 2.0
    return (merged.tanh() if tanh else merged) + k.transpose(1, 2).reshape(b, t, h * d).exp()


def _compiled(fn, *args):
    return compile_fx(make_fx(fn)(*args), list(args))


@settings(max_examples=12, deadline=None)
@given(heads=st.integers(1, 4), head_dim=st.sampled_from([8, 16, 20, 32, 48]),
       tokens=st.integers(1, 9), seed=st.integers(0, 2**16), tanh=st.booleans())
def test_merged_heads_match_the_one_loop_and_torch(heads, head_dim, tokens, seed, tanh):
    rng = np.random.default_rng(seed)
    q, k = ((rng.standard_normal((2, heads, tokens, head_dim)) * 3).astype(np.float32)
            for _ in range(2))
    q.flat[:3] = [np.nan, -np.inf, -0.0]
    args = [strata.tensor(q), strata.tensor(k)]
    fn = lambda q, k: _merge_heads(strata, q, k, tanh)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(codecache, "load", lambda key: None)     # print the kernels anew
        patch.setattr(codecache, "store", lambda *args: None)
        split = _compiled(fn, *args)
        patch.setattr(csplit, "SPLIT_MIN_BLOCK", 10**9)     # nothing splits: the one loop
        one_loop = _compiled(fn, *args)
    if heads > 1 and tokens > 1 and head_dim % csplit.SPLIT_MIN_BLOCK == 0:
        assert "y_lo" in split.output_code
    assert "y_lo" not in one_loop.output_code
    got, scalar = split(*args)[0].numpy(), one_loop(*args)[0].numpy()
    if tanh:    # libmvec's vector tanh where the one loop called scalar tanhf: ulps apart
        np.testing.assert_allclose(got, scalar, rtol=5e-7, atol=1e-7)
    else:
        np.testing.assert_array_equal(got, scalar)
    want = _merge_heads(torch, torch.tensor(q), torch.tensor(k), tanh).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def _loop(pragma, body, row=128):
    return ["        " + pragma, f"        for (int64_t y = 0; y < {row}; y++) {{",
            "            const int64_t r0 = y;", *("            " + line for line in body),
            "        }"]


def test_only_pointwise_loops_over_whole_vector_blocks_split():
    load = "const float t1 = a[((r0) / 32)*2048 + (r0) % 32];"
    split = csplit.split_row_loops(_loop("#pragma omp simd", [load, "b[y] = t1;"]))
    assert "for (int64_t y_hi = 0; y_hi < 4; y_hi++) {" in split[0]
    assert any("a[(y_hi)*2048 + (y_lo)]" in line for line in split)
    kept = [_loop("#pragma omp simd reduction(+:acc)", [load, "acc = acc + t1;"]),   # a sum
            _loop("#pragma omp simd", [load.replace("% 32", "% 64"), "b[y] = t1;"]),
            _loop("#pragma omp simd", [load.replace("32", "24"), "b[y] = t1;"], row=96),
            _loop("#pragma omp simd", [load, "b[y] = t1;"], row=32),    # one block
            _loop("#pragma omp simd", [load, "b[y] = t1;"], row=80)]    # not whole blocks
    for lines in kept:
        assert csplit.split_row_loops(lines) == lines


def test_split_kernels_are_cached_as_printed(tmp_path, monkeypatch):
    """The graph cache stores the split text: a warm compile runs the same kernel."""
    from strata import config
    monkeypatch.setattr(config, "cache_dir", str(tmp_path))
    q = strata.randn(2, 4, 8, 32)
    first = _compiled(lambda q: _merge_heads(strata, q, q), q)
    again = _compiled(lambda q: _merge_heads(strata, q, q), q)
    assert again.from_cache and "y_lo" in again.output_code
    np.testing.assert_array_equal(first(q)[0].numpy(), again(q)[0].numpy())
