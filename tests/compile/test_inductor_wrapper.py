"""The generated wrapper's fast paths (compile_fx.py) and the cases where they step aside: views
of a buffer built over its memory, inputs used as they come when already laid out, kernel
pointers through ``native.address``; each checked against PyTorch or NumPy's own answer."""

import numpy as np
import pytest
import torch
from helpers import assert_same
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.lib.stride_tricks import as_strided

import strata
from strata._tensor import from_array
from strata.compile.aot import make_fx
from strata.compile.inductor.compile_fx import _input, _strided, compile_fx


@st.composite
def _views(draw):
    """A base array, contiguous or not, and a view of it that stays inside its memory."""
    rows, cols = draw(st.integers(1, 6)), draw(st.integers(1, 6))
    base = np.arange(rows * cols, dtype=draw(st.sampled_from([np.float32, np.float64])))
    base = base.reshape(rows, cols)
    if draw(st.booleans()):
        base = base.T            # not C-contiguous: as_strided's path
    n = base.size
    offset = draw(st.integers(0, n - 1)) if base.flags.c_contiguous else 0
    size = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    stride = (draw(st.integers(0, 3)), draw(st.integers(0, 3)))
    last = offset + (size[0] - 1) * stride[0] + (size[1] - 1) * stride[1]
    if last >= n:
        size, stride = (1, 1), (0, 0)
    return base, size, stride, offset


@settings(max_examples=60, deadline=None)
@given(_views())
def test_strided_views_equal_as_strided(case):
    base, size, stride, offset = case
    got = _strided(base, size, stride, offset)
    flat = base.reshape(-1)[offset:] if offset else base
    want = as_strided(flat, size, [s * base.itemsize for s in stride])
    np.testing.assert_array_equal(got, want)
    assert got.strides == want.strides
    if base.flags.c_contiguous:    # a view over the same memory, not a copy
        assert np.shares_memory(got, base)


def test_strided_view_keeps_read_only_memory_read_only():
    base = np.arange(6.0).reshape(2, 3)
    base.flags.writeable = False
    assert not _strided(base, (3, 2), (1, 3), 0).flags.writeable


def test_input_is_used_as_it_comes_when_laid_out():
    arr = np.arange(12, dtype=np.float32).reshape(3, 4)
    t = from_array(arr, strata.float32)
    assert _input(t, (3, 4), (16, 4), (4, 1)) is arr


def test_input_with_other_strides_is_laid_out_again():
    t = strata.arange(12, dtype=strata.float32).reshape(4, 3).t()   # (3, 4), strides (1, 3)
    arr = _input(t, (3, 4), (16, 4), (4, 1))
    assert arr.strides == (16, 4)
    np.testing.assert_array_equal(arr, t.numpy())


def test_input_of_another_shape_is_refused():
    t = strata.zeros(5, 4)
    with pytest.raises(RuntimeError, match=r"input of shape \[3, 4\], got \[5, 4\]"):
        _input(t, (3, 4), (16, 4), (4, 1))


def _compiled(fn, *tensors):
    return compile_fx(make_fx(fn)(*tensors), list(tensors))


def test_transposed_and_read_only_inputs_give_eager_answers():
    """A read-only array cannot lend its buffer (``native.address`` then takes ``ctypes``), and a
    transposed input is laid out again before the kernels read it."""
    rng = np.random.default_rng(0)
    x_np = rng.standard_normal((4, 6)).astype(np.float32)
    w_np = rng.standard_normal((5, 6)).astype(np.float32)
    read_only = x_np.copy()
    read_only.flags.writeable = False
    x = from_array(read_only, strata.float32)
    w = strata.tensor(w_np.T.copy()).t()       # (5, 6) with strides (1, 5)

    def fn(m, x, w):
        return ((x @ w.t()).relu() * 2 + 1).sum(-1)
    run = _compiled(lambda x, w: fn(strata, x, w), strata.tensor(x_np), strata.tensor(w_np))
    got = run(x, w)[0]
    assert_same(got, fn(torch, torch.tensor(x_np), torch.tensor(w_np)), atol=1e-5, rtol=1e-5)
    assert not read_only.flags.writeable


def test_compiled_training_step_with_transposed_weights_matches_eager():
    """The MLP shape of benchmarks/compile.py, smaller: every GEMM reads a weight through a
    transposed view of its buffer (``_strided``)."""
    rng = np.random.default_rng(1)
    xs = rng.standard_normal((8, 12)).astype(np.float32)
    ys = rng.integers(0, 3, 8)
    results = []
    for m in (strata, torch):
        m.manual_seed(0)
        model = m.nn.Sequential(m.nn.Linear(12, 16), m.nn.ReLU(), m.nn.Linear(16, 3))
        with m.no_grad():
            for p, seed in zip(model.parameters(), range(4)):
                p.copy_(m.tensor(np.random.default_rng(seed).standard_normal(
                    tuple(p.shape)).astype(np.float32) * 0.3))

        def step(x, y, model=model, m=m):
            loss = m.nn.functional.cross_entropy(model(x), y)
            loss.backward()
            return loss
        run = strata.compile(step, backend="inductor") if m is strata else step
        losses = [run(m.tensor(xs), m.tensor(ys)) for _ in range(2)]   # grads accumulate
        results.append((losses, [p.grad for p in model.parameters()]))
    (s_losses, s_grads), (t_losses, t_grads) = results
    for s, t in zip(s_losses + s_grads, t_losses + t_grads):
        assert_same(s, t, atol=1e-5, rtol=1e-5)


def test_strided_view_past_the_array_reads_the_rest_of_its_memory():
    storage = np.arange(20, dtype=np.float32)
    got = _strided(storage[:6], (2, 5), (5, 1), 3)     # np.ndarray refuses: as_strided's path
    np.testing.assert_array_equal(got, storage[3:13].reshape(2, 5))


def test_as_strided_of_an_input_into_the_rest_of_its_storage_matches_eager():
    def fn(m, x):
        return x.as_strided((2, 5), (5, 1), 1) * 2 + 1
    results = []
    for m in (strata, torch):
        x = m.arange(20, dtype=m.float32)[:6]
        run = strata.compile(lambda x: fn(strata, x), backend="inductor") if m is strata \
            else (lambda x: fn(torch, x))
        results.append(run(x))
    assert_same(*results)
