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


@pytest.mark.parametrize("shapes, side_by_side", [
    (((256, 256), (256, 128), (256, 256), (256, 128)), True),            # equal work
    (((4, 64, 128), (4, 128, 256), (4, 128, 64), (4, 64, 256)), True),   # bmm
    (((256, 256), (256, 128), (8, 8), (8, 8)), False),                   # unequal work
    (((4, 5), (5, 6), (6, 4), (4, 5)), False),                           # small
])
def test_matmul_pair_equals_two_products(two_threads, monkeypatch, shapes, side_by_side):
    from strata.compile.inductor import products
    loops = []

    def counted(begin, end, grain, fn):
        loops.append((begin, end))
        return parallel_for(begin, end, grain, fn)

    def counted_native(products):     # the same loop on the native pool (Note [Native pool])
        ran = run_products(products)
        if ran:
            loops.append((0, len(products)))
        return ran
    parallel_for, run_products = products.parallel_for, products.run_products
    monkeypatch.setattr(products, "parallel_for", counted)
    monkeypatch.setattr(products, "run_products", counted_native)
    rng = np.random.default_rng(0)
    a, b, c, d = (rng.standard_normal(s).astype(np.float32) for s in shapes)
    b = np.ascontiguousarray(b.swapaxes(-1, -2)).swapaxes(-1, -2)     # a transposed operand
    out = np.empty(a.shape[:-1] + b.shape[-1:], np.float32)
    out2 = np.empty(c.shape[:-1] + d.shape[-1:], np.float32)
    products._matmul_pair(a, b, out, c, d, out2)
    np.testing.assert_allclose(out, a.astype(np.float64) @ b, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(out2, c.astype(np.float64) @ d, rtol=1e-4, atol=1e-4)
    assert len(loops) == (1 if side_by_side else 0)    # one loop for both products


def test_a_linear_backward_pairs_its_two_products_and_matches_eager(two_threads, monkeypatch):
    from strata.compile.inductor import compile_fx as cfx
    pairs = []

    def counted(*arrays):
        pairs.append([a.shape for a in arrays])
        return pair(*arrays)
    pair = cfx._matmul_pair
    monkeypatch.setattr(cfx, "_matmul_pair", counted)   # read when a wrapper is made
    rng = np.random.default_rng(2)
    x_np = rng.standard_normal((256, 256)).astype(np.float32)
    w_np = (rng.standard_normal((128, 256)) * 0.1).astype(np.float32)
    grads = []
    for m in (strata, torch):
        x = m.tensor(x_np, requires_grad=True)
        w = m.tensor(w_np, requires_grad=True)

        def step(x, w, m=m):
            loss = (x @ w.t()).relu().sum()
            loss.backward()
            return loss
        run = strata.compile(step, backend="inductor") if m is strata else step
        grads.append((run(x, w), x.grad, w.grad))
    for s, t in zip(*grads):
        assert_same(s, t, atol=1e-3, rtol=1e-4)
    # dX = dY @ W and dW = dY.T @ X, side by side
    assert pairs == [[(256, 128), (128, 256), (256, 256), (128, 256), (256, 256), (128, 256)]]


def test_dependent_products_are_not_paired():
    """``(x @ w) @ v``: the second product reads the first's output."""
    x, w, v = strata.randn(4, 8), strata.randn(8, 8), strata.randn(8, 3)
    run = _compiled(lambda x, w, v: (x @ w) @ v, x, w, v)
    assert "_matmul_pair" not in run.output_code and run.output_code.count("_matmul(") == 2
    assert_same(run(x, w, v)[0], (torch.tensor(x.numpy()) @ torch.tensor(w.numpy()))
                @ torch.tensor(v.numpy()), atol=1e-4, rtol=1e-4)


@pytest.mark.parametrize("transposed", [False, True])
def test_backward_with_a_non_contiguous_gradient_matches_eager(transposed):
    """AOT's backward makes each incoming gradient contiguous (as PyTorch does) and takes it as it
    is when it already is."""
    rng = np.random.default_rng(3)
    x_np = rng.standard_normal((4, 5)).astype(np.float32)
    g_np = rng.standard_normal((5, 4) if transposed else (4, 5)).astype(np.float32)
    grads = []
    for m in (strata, torch):
        x = m.tensor(x_np, requires_grad=True)

        def fn(x, m=m):
            return (x * 2).exp() + x
        run = strata.compile(fn, backend="inductor") if m is strata else fn
        g = m.tensor(g_np)
        run(x).backward(g.t() if transposed else g)
        grads.append(x.grad)
    assert_same(*grads, atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("targets",
                         [[0, 2, 1, 1], [0, -100, 2, -100], [0, -100, 5, 7], [9, 0, -1, 1]])
def test_target_check_fast_path_steps_aside_for_ignored_and_bad_targets(targets):
    """Targets all inside [0, classes) skip eager's check; any other (ignored ones included) take
    it, so the error is eager's, naming the first bad target, and ignored ones pass."""
    x_np = np.random.default_rng(4).standard_normal((4, 3)).astype(np.float32)
    run = strata.compile(lambda x, t: strata.nn.functional.cross_entropy(x, t), backend="inductor")
    bad = [t for t in targets if t != -100 and not 0 <= t < 3]
    if bad:
        with pytest.raises(IndexError, match=f"Target {bad[0]} is out of bounds."):
            run(strata.tensor(x_np), strata.tensor(targets))
        with pytest.raises(IndexError, match=f"Target {bad[0]} is out of bounds."):
            torch.nn.functional.cross_entropy(torch.tensor(x_np), torch.tensor(targets))
        return
    assert_same(run(strata.tensor(x_np), strata.tensor(targets)),
                torch.nn.functional.cross_entropy(torch.tensor(x_np), torch.tensor(targets)),
                atol=1e-6, rtol=1e-6)


@settings(max_examples=15, deadline=None)
@given(batch=st.integers(1, 3), m=st.integers(1, 9), k=st.integers(1, 9), n=st.integers(1, 9),
       dims=st.sampled_from([(0, 2, 1), (2, 1, 0)]))
def test_permuted_formula_reaches_bmm_as_a_transposed_view(batch, m, k, n, dims):
    """Note [Permuted Extern operands] (graph.py): ``bmm(permute(a * b), c)`` computes a * b in
    its own layout (loads and stores along the same rows) and hands BLAS a strided view of it:
    the same values as eager strata bit for bit, torch's within float32 rounding."""
    rng = np.random.default_rng(batch * 100 + m * 10 + k)
    shape = [batch, k, m] if dims == (0, 2, 1) else [k, m, batch]
    a, b = (rng.standard_normal(shape).astype(np.float32) for _ in range(2))
    c = rng.standard_normal((batch, k, n)).astype(np.float32)

    def fn(lib, a, b, c):
        return lib.bmm((a * b).permute(*dims), c)
    inputs = [strata.tensor(v) for v in (a, b, c)]
    run = _compiled(lambda a, b, c: fn(strata, a, b, c), *inputs)
    got = run(*inputs)[0]
    np.testing.assert_array_equal(got.numpy(), fn(strata, *inputs).numpy())
    assert_same(got, fn(torch, *(torch.tensor(v) for v in (a, b, c))), atol=1e-5, rtol=1e-5)
    if dims == (0, 2, 1) and m > 1 and k > 1:
        assert "_strided(a_buf" in run.output_code and "_matmul(" in run.output_code
