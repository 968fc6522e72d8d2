"""The inductor lowerings that remove work around the BLAS calls, against PyTorch eager: addmm as
an Extern mm with a fused bias epilogue, mm/bmm straight into NumPy's matmul, sums over leading
dims by rows (Note [Column reductions]), reshapes that index only the dims they split or merge.
Values and gradients, with NaN/Inf/-0.0 where the lowering could lose them."""

import math

import numpy as np
import pytest
import torch
from helpers import assert_same
from hypothesis import given, settings
from hypothesis import strategies as st

import strata
from strata import config
from strata.compile.aot import make_fx
from strata.compile.inductor.compile_fx import compile_fx
from strata.compile.inductor.lowering_views import _common_refinement, _refined_index

# NumPy's floating-point warnings never reach the user (Note [Silent IEEE arithmetic])
pytestmark = pytest.mark.filterwarnings("error::RuntimeWarning")


def _rand(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def _run_both(fn, *arrays, atol=1e-5, rtol=1e-5):
    compiled = strata.compile(lambda *xs: fn(strata, *xs), backend="inductor")
    got = compiled(*(strata.tensor(a) for a in arrays))
    want = fn(torch, *(torch.tensor(a) for a in arrays))
    assert_same(got, want, atol=atol, rtol=rtol)


def _compiled(fn, *tensors):
    return compile_fx(make_fx(fn)(*tensors), list(tensors))


@pytest.mark.parametrize("beta, alpha", [(1, 1), (0.5, 2.0), (0, 1), (0, -1.5)])
def test_addmm_with_its_bias_and_activation_fused(beta, alpha):
    bias = _rand(5)
    bias[1] = np.nan       # beta == 0 ignores the bias, NaN included
    bias[2] = -0.0
    x, w = _rand(3, 4, seed=1), _rand(5, 4, seed=2)
    x[0, 0] = np.inf
    _run_both(lambda m, b, x, w: m.relu(m.addmm(b, x, w.t(), beta=beta, alpha=alpha)) * 2,
              bias, x, w)


def test_addmm_epilogue_shares_the_activation_kernel():
    run = _compiled(lambda b, x, w: strata.relu(strata.addmm(b, x, w.t())),
                    strata.randn(8), strata.randn(4, 6), strata.randn(8, 6))
    post = run.ir_post_fusion
    assert post.count("Extern(") == 1 and post.count("kernel") == 1
    assert "_matmul(" in run.output_code and "targets[" not in run.output_code


def test_linear_relu_training_gradients_match_torch():
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((16, 12)).astype(np.float32), rng.integers(0, 4, 16)
    weights = [_rand(10, 12, seed=3), _rand(10, seed=4), _rand(4, 10, seed=5), _rand(4, seed=6)]

    def loss_and_grads(m, compiled):
        params = [m.tensor(w, requires_grad=True) for w in weights]

        def step(x, y):
            h = m.nn.functional.linear(x, params[0], params[1]).relu()
            loss = m.nn.functional.cross_entropy(m.nn.functional.linear(h, params[2], params[3]),
                                                 y)
            loss.backward()
            return loss
        fn = strata.compile(step, backend="inductor") if compiled else step
        loss = fn(m.tensor(x), m.tensor(y))
        return loss, [p.grad for p in params]
    got_loss, got_grads = loss_and_grads(strata, True)
    want_loss, want_grads = loss_and_grads(torch, False)
    assert_same(got_loss, want_loss, atol=1e-5, rtol=1e-5)
    for got, want in zip(got_grads, want_grads):
        assert_same(got, want, atol=1e-5, rtol=1e-4)


def test_bmm_and_strided_mm_operands():
    _run_both(lambda m, a, b: (m.bmm(a, b.transpose(1, 2)) + 1, m.mm(a[0].t(), a[1]),
                               m.mm(a[0][:, 1:3], b[0][1:3])),
              _rand(2, 4, 3), _rand(2, 5, 3, seed=1))


def test_integer_mm_runs_its_eager_kernel():
    a = np.arange(12, dtype=np.int64).reshape(3, 4)
    _run_both(lambda m, a: m.mm(a, a.t()) * 3, a)


@pytest.mark.parametrize("dims", [(0,), (0, 1), 0])
def test_sum_over_leading_dims_is_a_column_reduction(dims):
    x = _rand(6, 5, 16)
    x[1, 2, 3], x[0, 0, 4], x[3, 1, 5] = np.nan, np.inf, -np.inf
    x[:, :, 6] = -0.0
    run = _compiled(lambda t: (t * 2).sum(dims), strata.tensor(x))
    assert "for (int64_t y = 0; y <" in run.output_code.split("void", 1)[1].split("#pragma")[0]
    assert_same(run(strata.tensor(x))[0], (torch.tensor(x) * 2).sum(dims), atol=1e-5)


def test_column_reductions_of_ints_and_bools_and_gradients():
    ints = np.array([[2**62, 1, -3] * 4, [2**62, -1, 5] * 4], np.int64)   # wraps as eager
    _run_both(lambda m, a: (a.sum(0), (a > 0).sum(0)), ints)
    _run_both(lambda m, a: a.sum(0, keepdim=True) * a, _rand(7, 9))
    x = _rand(10, 12)
    compiled = strata.compile(lambda t: (t.tanh() * t).sum(0).sum(), backend="inductor")
    xs, xt = strata.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    compiled(xs).backward()
    (xt.tanh() * xt).sum(0).sum().backward()
    assert_same(xs.grad, xt.grad, atol=1e-5)


def _factorings(n):
    """Shapes of up to 4 dims whose product is ``n``."""
    shapes = [()] if n == 1 else []
    for rank in range(1, 5):
        def split(left, rank):
            if rank == 1:
                yield (left,)
                return
            for first in range(1, left + 1):
                if left % first == 0:
                    for rest in split(left // first, rank - 1):
                        yield (first, *rest)
        shapes.extend(split(n, rank))
    return shapes


@settings(max_examples=60, deadline=None)
@given(st.sampled_from([1, 4, 6, 12, 16, 24]), st.data())
def test_refined_reshape_index_agrees_with_numpy(numel, data):
    src = data.draw(st.sampled_from(_factorings(numel)))
    dst = data.draw(st.sampled_from(_factorings(numel)))
    atoms = _common_refinement(src, dst)
    if atoms is None:
        return
    base = np.arange(numel).reshape(src)
    for index in np.ndindex(*dst):
        exprs = _refined_index(atoms, src, dst, tuple(str(i) for i in index))
        src_index = tuple(eval(str(e).replace("/", "//")) for e in exprs)
        assert base[src_index] == base.reshape(dst)[index]


@settings(max_examples=25, deadline=None)
@given(st.sampled_from([(4, 6), (2, 3, 4), (8, 3), (2, 12)]), st.data())
def test_reshapes_of_fused_values_read_through_strides(shape, data):
    """A reshape of an unrealized value, itself read transposed: the index expressions of the
    reshape are multiplied by strides (each must stay one C term)."""
    numel = math.prod(shape)
    dst = data.draw(st.sampled_from([s for s in _factorings(numel) if len(s) >= 2]))
    x = _rand(*shape)
    x.flat[3] = np.nan
    _run_both(lambda m, a: ((a * 2).reshape(dst).transpose(0, -1) + 1).reshape(shape[::-1])
              .sum(0), x)


CONVS = [((2, 3, 9, 9), (4, 3, 3, 3), {}),
         ((2, 3, 9, 9), (4, 3, 3, 3), {"padding": 1}),
         ((2, 3, 10, 9), (5, 3, 3, 2), {"stride": 2, "padding": (1, 2), "dilation": (2, 1)}),
         ((3, 2, 5, 5), (4, 2, 4, 4), {}),      # kernel wider than the output: cols transposed
         ((1, 2, 7), (3, 2, 3), {"padding": 1})]


@pytest.mark.parametrize("x_shape, w_shape, kwargs", CONVS)
def test_convolution_values_and_gradients_match_torch(x_shape, w_shape, kwargs):
    x, w, b = _rand(*x_shape), _rand(*w_shape, seed=1), _rand(w_shape[0], seed=2)
    x.flat[5], x.flat[9], x.flat[13] = np.nan, np.inf, -0.0
    conv = "conv2d" if len(x_shape) == 4 else "conv1d"

    def run(m, compiled):
        xs, ws, bs = (m.tensor(a, requires_grad=True) for a in (x, w, b))

        def step(xs, ws, bs):
            out = getattr(m.nn.functional, conv)(xs, ws, bs, **kwargs).relu()
            out.sum().backward()
            return out
        fn = strata.compile(step, backend="inductor") if compiled else step
        return fn(xs, ws, bs), xs.grad, ws.grad, bs.grad
    for got, want in zip(run(strata, True), run(torch, False)):
        assert_same(got, want, atol=1e-4, rtol=1e-4)


TRANSPOSED = [((2, 3, 5, 5), (3, 4, 3, 3), {}),
              ((2, 3, 5, 4), (3, 2, 3, 2), {"stride": 2, "padding": 1, "output_padding": 1}),
              ((1, 2, 6, 6), (2, 3, 3, 3), {"padding": 1, "dilation": 2}),
              ((2, 2, 7), (2, 3, 3), {"stride": 3, "padding": 2})]


@pytest.mark.parametrize("x_shape, w_shape, kwargs", TRANSPOSED)
def test_transposed_convolution_values_and_gradients_match_torch(x_shape, w_shape, kwargs):
    x, w, b = _rand(*x_shape), _rand(*w_shape, seed=1), _rand(w_shape[1], seed=2)
    x.flat[3], x.flat[8] = np.nan, -np.inf
    conv = "conv_transpose2d" if len(x_shape) == 4 else "conv_transpose1d"

    def run(m, compiled):
        xs, ws, bs = (m.tensor(a, requires_grad=True) for a in (x, w, b))

        def step(xs, ws, bs):
            out = getattr(m.nn.functional, conv)(xs, ws, bs, **kwargs)
            out.tanh().sum().backward()
            return out
        fn = strata.compile(step, backend="inductor") if compiled else step
        return fn(xs, ws, bs), xs.grad, ws.grad, bs.grad
    for got, want in zip(run(strata, True), run(torch, False)):
        assert_same(got, want, atol=1e-4, rtol=1e-4)


def test_convolution_is_eagers_extern_and_one_epilogue_kernel():
    """(Under a ReLU alone it is one Extern instead: test_inductor_cnn_externs.py.)"""
    x, w, b = strata.randn(2, 3, 8, 8), strata.randn(4, 3, 3, 3), strata.randn(4)
    run = _compiled(lambda x, w, b: strata.nn.functional.conv2d(x, w, b).tanh(), x, w, b)
    post = run.ir_post_fusion
    assert "Fallback" not in post and post.count("Extern(<OpOverload aten::convolution>)") == 1
    assert post.count("kernel") == 1      # bias + tanh over the convolution's output
    assert "_convolution(" in run.output_code     # eager's arrays in, no dispatch
    want = torch.nn.functional.conv2d(*(torch.tensor(t.numpy()) for t in (x, w, b))).tanh()
    assert_same(run(x, w, b)[0], want, atol=1e-5, rtol=1e-5)


def test_sums_over_outer_and_trailing_dims_run_in_two_stages():
    x = _rand(4, 6, 5, 5)
    x[0, 1, 2, 3], x[2, 3, 0, 0] = np.nan, -np.inf
    run = _compiled(lambda t: (t.sum((0, 2, 3)), t.sum((0, 3), keepdim=True),
                               t.amax((0, 2, 3))), strata.tensor(x))
    assert run.ir_post_fusion.count("Reduction(") == 6
    xt = torch.tensor(x)
    assert_same(run(strata.tensor(x)), [xt.sum((0, 2, 3)), xt.sum((0, 3), keepdim=True),
                                       xt.amax((0, 2, 3))], atol=1e-5, rtol=1e-5)


def test_small_window_reductions_are_unrolled_and_keep_nan_semantics():
    x = _rand(5, 3, 4)
    x[1, 2, 3], x[3, 0, 0], x[4, 1, 2] = np.nan, np.inf, -0.0
    run = _compiled(lambda t: (t.amax(-1), t.amin((1, 2)), t.sum(-1)), strata.tensor(x))
    source = run.output_code.split('"""')[-2] if '"""' in run.output_code else run.output_code
    assert "reduction(max" not in source     # straight-line code: no SIMD reduction loop
    xt = torch.tensor(x)
    assert_same(run(strata.tensor(x)), [xt.amax(-1), xt.amin((1, 2)), xt.sum(-1)],
                atol=1e-6, rtol=1e-6)


def test_view_writes_in_a_backward_lower_their_index_tensors():
    """The gradient of a slice of a packed weight (attention's q/k/v): AOT writes it as a
    scatter whose index is an as_strided view of an arange; both are kernels now."""
    w = _rand(9, 4)

    def run(m, compiled):
        ws = m.tensor(w, requires_grad=True)

        def step(ws):
            q, k, v = ws.chunk(3)
            loss = (q * 2 + k.exp() - v.t().sum(0)[:, None]).sum()
            loss.backward()
            return loss
        fn = strata.compile(step, backend="inductor") if compiled else step
        return fn(ws), ws.grad
    for got, want in zip(run(strata, True), run(torch, False)):
        assert_same(got, want, atol=1e-5, rtol=1e-5)


def test_arange_and_as_strided_of_a_kernel_output():
    run = _compiled(lambda x: (x * 2).as_strided((3, 2), (1, 3), 1) + strata.arange(2, 8, 3),
                    strata.randn(12))
    assert "Fallback" not in run.ir_post_fusion
    x = strata.randn(12)
    want = (torch.tensor(x.numpy()) * 2).as_strided((3, 2), (1, 3), 1) + torch.arange(2, 8, 3)
    assert_same(run(x)[0], want, atol=1e-6)


@pytest.mark.parametrize("pool", ["native", "python"])
def test_compiled_kernels_use_the_thread_count_of_set_num_threads(pool, monkeypatch):
    """Generated kernels split their rows over strata's pools (the native pool where it is
    built, Note [Native pool]; else ``parallel_for``), so ``set_num_threads`` governs them as it
    does eager kernels and BLAS; results do not depend on the count (each row is computed by
    one thread, in the same order)."""
    import threading

    from strata.backends.cpu import array, native_pool
    from strata.compile.inductor import autotune
    if pool == "native" and native_pool.library() is None:
        pytest.skip("no native pool (no C compiler or STRATA_NATIVE_KERNELS=0)")
    if pool == "python":
        monkeypatch.setattr(native_pool, "library", lambda: None)
    # the wrapper's own launches (a graph program makes the same ones from C: test_inductor_plan)
    monkeypatch.setattr(config, "graph_programs", False)
    x = strata.tensor(_rand(2048, 512))   # 1M elements: several chunks of array.GRAIN_SIZE
    fn = strata.compile(lambda t: (t.exp() * 2).softmax(-1) + t.sum(0), backend="inductor")
    before = strata.get_num_threads()
    names, chunks, loops = set(), [], []
    original = array.parallel_for

    def recording(begin, end, grain, body):
        def chunk(lo, hi):
            names.add(threading.current_thread().name.split("_")[0])
            chunks.append((lo, hi))
            body(lo, hi)
        original(begin, end, grain, chunk)
    try:
        strata.set_num_threads(1)
        one = fn(x).numpy()
        strata.set_num_threads(2)
        for _ in range(autotune.MEASURED_CALLS):    # Note [Measured row tiles]: one chunk each
            fn(x)
        monkeypatch.setattr(array, "parallel_for", recording)
        if pool == "native":
            lib = native_pool.library()
            run = lib.strata_parallel
            monkeypatch.setattr(lib, "strata_parallel", lambda task, context, begin, end, step:
                                loops.append((begin, end, step)) or run(task, context, begin,
                                                                         end, step))
        two = fn(x).numpy()
        workers = native_pool.library().strata_pool_workers() if pool == "native" else None
    finally:
        strata.set_num_threads(before)
    assert np.array_equal(one, two)
    if pool == "native":     # the caller and one C worker, several chunks a loop
        assert workers == 1 and not chunks and loops
        assert all((end - begin) > step for begin, end, step in loops)
    else:
        # run by the caller and the pool's thread (which takes chunks only if it wakes in
        # time: Note [CPU parallel_for])
        assert len(chunks) > 1
        assert "MainThread" in names and names <= {"MainThread", "strata-cpu"}


POOLS = [((2, 3, 8, 8), {"kernel_size": 2}),
         ((2, 3, 9, 7), {"kernel_size": 3, "stride": 2, "padding": 1}),
         ((1, 2, 10, 9), {"kernel_size": (3, 2), "stride": (2, 1), "padding": (1, 0),
                          "dilation": (2, 1), "ceil_mode": True}),
         ((2, 2, 7, 7), {"kernel_size": 2, "ceil_mode": True}),
         ((2, 2, 5, 6), {"kernel_size": 2})]


@pytest.mark.parametrize("shape, kwargs", POOLS)
def test_max_pool2d_values_indices_and_gradients_match_torch(shape, kwargs):
    """Ties keep the first element, the last NaN wins, padding never wins, -inf windows; the
    gradient (a NaN and an inf among them) reaches only the element each index names."""
    x = _rand(*shape)
    x.flat[5], x.flat[17], x.flat[30] = np.nan, np.nan, -np.inf
    x.flat[40:44] = 1.0
    x[0, 0, :3, :3] = -np.inf
    x[0, 1, 1, :] = -0.0
    out_shape = torch.nn.functional.max_pool2d(torch.tensor(x), **kwargs).shape
    g = _rand(*out_shape, seed=3)
    g.flat[3], g.flat[4] = np.inf, np.nan

    def run(m, compiled):
        xs = m.tensor(x, requires_grad=True)

        def step(xs, gs):
            values, indices = m.nn.functional.max_pool2d(xs, return_indices=True, **kwargs)
            (values * gs).sum().backward()
            return values, indices
        fn = strata.compile(step, backend="inductor") if compiled else step
        values, indices = fn(xs, m.tensor(g))
        return values, indices, xs.grad
    for got, want in zip(run(strata, True), run(torch, False)):
        assert_same(got, want, atol=1e-6, rtol=1e-6)


def test_max_pool2d_is_one_kernel_and_its_backward_a_gather():
    """(A 2x2 pool of a realized input is one Extern instead: test_inductor_cnn_externs.py.)"""
    x = strata.randn(2, 3, 8, 8, requires_grad=True)
    run = _compiled(lambda x: strata.nn.functional.max_pool2d(x, 3, 2, return_indices=True), x)
    assert "Fallback" not in run.ir_post_fusion and run.ir_post_fusion.count("kernel") == 1
    grad, indices = strata.randn(2, 3, 4, 4), strata.nn.functional.max_pool2d(
        x.detach(), 2, return_indices=True)[1]
    back = _compiled(lambda g, x, i: strata.ops.aten.max_pool2d_with_indices_backward(
        g, x, [2, 2], [2, 2], [0, 0], [1, 1], False, i), grad, x.detach(), indices)
    assert "Fallback" not in back.ir_post_fusion


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weighted", [False, True])
def test_nll_loss_values_and_gradients_match_torch(reduction, weighted):
    """Ignored rows, a NaN and a -inf logit, class weights; fused with log_softmax."""
    x = _rand(6, 5)
    x[1, 2], x[3, 0], x[4, 4] = np.nan, -np.inf, -0.0
    targets = np.array([0, 2, 4, -100, 1, 4])
    weight = np.random.default_rng(1).random(5).astype(np.float32)

    def run(m, compiled):
        xs = m.tensor(x, requires_grad=True)

        def step(xs, ts, ws):
            loss = m.nn.functional.nll_loss(m.log_softmax(xs * 2, -1), ts,
                                            weight=ws if weighted else None,
                                            reduction=reduction)
            (loss.sum() if reduction == "none" else loss).backward()
            return loss
        fn = strata.compile(step, backend="inductor") if compiled else step
        return fn(xs, m.tensor(targets), m.tensor(weight)), xs.grad
    for got, want in zip(run(strata, True), run(torch, False)):
        assert_same(got, want, atol=1e-5, rtol=1e-5)


def test_nll_loss_lowering_has_no_fallback_and_all_ignored_is_nan():
    run = _compiled(lambda x, t: strata.nn.functional.cross_entropy(x, t),
                    strata.randn(4, 3), strata.tensor([0, 2, 1, 1]))
    assert "Fallback" not in run.ir_post_fusion and "Check(" in run.ir_post_fusion
    ignored = strata.compile(lambda x, t: strata.nn.functional.nll_loss(x, t),
                             backend="inductor")(strata.randn(3, 4), strata.tensor([-100] * 3))
    assert np.isnan(float(ignored))     # 0 / 0, as PyTorch


def test_nll_loss_out_of_range_target_raises_eagers_error_before_any_update():
    x = strata.tensor(_rand(6, 5), requires_grad=True)
    step = strata.compile(lambda x, t: strata.nn.functional.cross_entropy(x, t).backward(),
                          backend="inductor")
    with pytest.raises(IndexError, match="Target 7 is out of bounds."):
        step(x, strata.tensor([0, 7, 1, 1, 1, 1]))
    with pytest.raises(IndexError, match="Target -3 is out of bounds."):
        step(x, strata.tensor([0, 1, -3, 1, 1, 1]))
    assert x.grad is None
    with pytest.raises(IndexError, match="Target 7 is out of bounds."):
        torch.nn.functional.cross_entropy(torch.tensor(x.detach().numpy()),
                                          torch.tensor([0, 7, 1, 1, 1, 1]))


def test_matmul_only_inputs_keep_their_strides():
    """An input that only mm/bmm Externs read whole is not copied into the strides the graph
    was compiled for (BLAS reads either unit-stride layout): a transposed activation saved for
    an attention's backward. The product is eager's and torch's."""
    a, b = _rand(4, 8, 16), _rand(4, 16, 8, seed=1)
    gm = make_fx(lambda a, b: strata.bmm(a, b) * 2)(strata.tensor(a), strata.tensor(b))
    run = compile_fx(gm, [strata.tensor(a), strata.tensor(b)])
    assert "_laid_out(" not in run.output_code.split("#include")[0]     # the wrapper's part
    transposed = strata.tensor(np.ascontiguousarray(a.transpose(0, 2, 1))).transpose(1, 2)
    assert transposed.stride() != (128, 16, 1)
    got = run(transposed, strata.tensor(b))[0]
    want = torch.bmm(torch.tensor(a), torch.tensor(b)) * 2
    assert_same(got, want, atol=1e-5)
    np.testing.assert_array_equal(
        got.numpy(), (strata.bmm(transposed, strata.tensor(b)) * 2).numpy())
