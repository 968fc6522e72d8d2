"""CPU backward lanes (Note [CPU backward lanes], docs/performance.md "Ninth pass"): the nodes a
small model's backward runs most (AddmmBackward0, GatherBackward0, TBackward0, TanhBackward0,
LogSoftmaxBackward0) computed in a few NumPy calls. Each lane gives the formula's gradients bit
for bit and PyTorch's to rounding; it steps aside for what it does not take (other dtypes and
scalars, double backward) and wherever the formula's ops could be observed (a dispatch mode, a
trace); freed and modified saved tensors still raise PyTorch's errors."""

import contextlib
import warnings

import numpy as np
import pytest
import torch
from helpers import assert_same
from hypothesis import given, settings
from hypothesis import strategies as st

import strata
from strata.autograd import derivatives
from strata.dispatch.modes import TorchDispatchMode
from strata.ops import activation as A
from strata.ops import linalg as L
from strata.ops import pointwise as P
from strata.ops import scatter as SC
from strata.ops import shape as S

LANE_OPS = (L.addmm, SC.gather, S.t, P.tanh, A._log_softmax)


@contextlib.contextmanager
def formulas_only():
    """The formulas' path: every lane unregistered for the duration."""
    saved = {op: derivatives.DERIVATIVES[op].cpu_backward for op in LANE_OPS}
    for op in LANE_OPS:
        derivatives.DERIVATIVES[op].cpu_backward = None
    try:
        yield
    finally:
        for op, lane in saved.items():
            derivatives.DERIVATIVES[op].cpu_backward = lane


def _grads(m, fn, arrays, needs):
    leaves = [m.tensor(a, requires_grad=need) for a, need in zip(arrays, needs)]
    out = fn(m, *leaves)
    out.backward(m.ones_like(out) if out.dim() else None)
    return [leaf.grad for leaf in leaves]


def _compare(fn, arrays, needs):
    """The lane's gradients equal the formula's bit for bit, and PyTorch's to rounding."""
    lane = _grads(strata, fn, arrays, needs)
    with formulas_only():
        formula = _grads(strata, fn, arrays, needs)
    expected = _grads(torch, fn, arrays, needs)
    for got, ref, want in zip(lane, formula, expected):
        assert (got is None) == (want is None) == (ref is None)
        if got is not None:
            np.testing.assert_array_equal(got.numpy(), ref.numpy())
            assert got.stride() == ref.stride()
            assert_same(got, want, check_stride=True)


def _linear_args(rng, rows, k, n, dtype, bias_shape):
    x = rng.standard_normal((rows, k)).astype(dtype)
    w = rng.standard_normal((n, k)).astype(dtype)
    b = rng.standard_normal(bias_shape(n, rows)).astype(dtype)
    return x, w, b


BIAS_SHAPES = {"row": lambda n, rows: (n,), "keepdim": lambda n, rows: (1, n),
               "full": lambda n, rows: (rows, n), "scalar": lambda n, rows: ()}


@settings(max_examples=30, deadline=None)
@given(rows=st.integers(1, 5), k=st.integers(1, 6), n=st.integers(1, 6),
       dtype=st.sampled_from(["float32", "float64", "float16"]),
       bias=st.sampled_from(sorted(BIAS_SHAPES)),
       needs=st.tuples(st.booleans(), st.booleans(), st.booleans()).filter(any),
       seed=st.integers(0, 2**16))
def test_linear_layer_gradients(rows, k, n, dtype, bias, needs, seed):
    """``addmm(bias, x, w.t())`` (a linear layer) and a tanh on top: every subset of inputs
    needing a gradient, every bias shape; half precision takes the formula."""
    arrays = _linear_args(np.random.default_rng(seed), rows, k, n, dtype, BIAS_SHAPES[bias])

    def fn(m, x, w, b):
        return m.addmm(b, x, w.t()).tanh()
    _compare(fn, arrays, needs)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_linear_layer_gradients_of_many_rows(dtype):
    """A tall gradient's bias sum runs the generated column sum (native.column_sum, from 512
    rows): the formula's bits, NumPy's, and PyTorch's to rounding."""
    x, w, b = _linear_args(np.random.default_rng(5), 1024, 24, 40, dtype, BIAS_SHAPES["row"])
    arrays = (x * 0.1, w * 0.1, b)     # tanh off its flat tails: float32's gradients stay exact
    _compare(lambda m, x, w, b: m.addmm(b, x, w.t()).tanh(), arrays, (True, True, True))


@pytest.mark.parametrize("layout", ["row_major", "strided", "not_blas_ready"])
def test_addmm_other_layouts(layout):
    """mat2 row-major, a strided slice, and one with no unit stride (copied for BLAS)."""
    rng = np.random.default_rng(1)
    x = rng.standard_normal((3, 4)).astype(np.float32)
    w = rng.standard_normal((8, 9)).astype(np.float32)
    b = rng.standard_normal(5).astype(np.float32)

    def fn(m, x, w, b):
        mat2 = {"row_major": w[:4, :5], "strided": w[:4, ::2],
                "not_blas_ready": w[::2, ::2][:4, :5]}[layout]
        return m.addmm(b, x, mat2)
    _compare(fn, (x, w, b), (True, True, True))


@pytest.mark.parametrize("scalars", [(0.5, 1), (1, 2.0), (1.0, 1), (1, 1.0)])
def test_addmm_other_scalars_take_the_formula(scalars):
    beta, alpha = scalars
    rng = np.random.default_rng(2)
    arrays = _linear_args(rng, 2, 3, 4, np.float32, BIAS_SHAPES["row"])

    def fn(m, x, w, b):
        return m.addmm(b, x, w.t(), beta=beta, alpha=alpha)
    _compare(fn, arrays, (True, True, True))


@settings(max_examples=30, deadline=None)
@given(shape=st.lists(st.integers(1, 4), min_size=0, max_size=3), data=st.data(),
       dtype=st.sampled_from(["float32", "float64", "bfloat16"]), seed=st.integers(0, 2**16))
def test_gather_gradients(shape, data, dtype, seed):
    """Index shapes no larger than the input along every dim, repeated indices (summed), a
    0-dim input; bfloat16 takes the formula."""
    rng = np.random.default_rng(seed)
    ndim = len(shape)
    dim = data.draw(st.integers(-max(ndim, 1), max(ndim, 1) - 1))
    d = dim % max(ndim, 1)
    index_shape = [data.draw(st.integers(1, s + 1)) if i != d else data.draw(st.integers(1, 5))
                   for i, s in enumerate(shape)]
    index_shape = [min(s, shape[i]) if i != d else s for i, s in enumerate(index_shape)]
    high = shape[d] if ndim else 1
    index = rng.integers(0, high, size=index_shape)
    x = rng.standard_normal(shape).astype(np.float32)

    def fn(m, x):
        x = x.to(getattr(m, dtype))
        return (x.gather(dim, m.tensor(index)) * 3).float().sum()
    _compare(fn, (x,), (True,))


def test_log_softmax_and_categorical_log_prob():
    """A policy's head: log_softmax rows, gathered by the action (the RL loop's nodes)."""
    logits = np.random.default_rng(3).standard_normal((4, 3)).astype(np.float32)

    def fn(m, z):
        dist = m.distributions.Categorical(logits=z)
        return dist.log_prob(m.tensor([2, 0, 1, 1])).sum() + z.t().tanh().sum()
    _compare(fn, (logits,), (True,))


def test_complex_tanh_takes_the_formula():
    z = np.array([0.3 + 0.2j, -1.0 + 0.5j], dtype=np.complex64)

    def fn(m, z):
        return z.tanh().abs().sum()
    _compare(fn, (z,), (True,))


def test_lanes_are_taken_and_step_aside_for_observers(monkeypatch):
    """A plain backward runs no formula of these nodes; under a dispatch mode or the profiler
    the formulas run and their ops are seen, with the same gradients."""
    calls = []
    for op in (L.addmm, P.tanh):
        deriv = derivatives.DERIVATIVES[op]
        monkeypatch.setattr(deriv, "formula", lambda ctx, *grads, formula=deriv.formula:
                            calls.append(ctx.name()) or formula(ctx, *grads))
    rng = np.random.default_rng(4)
    x, w, b = _linear_args(rng, 2, 3, 4, np.float32, BIAS_SHAPES["row"])

    def backward():
        xs, ws, bs = (strata.tensor(a, requires_grad=True) for a in (x, w, b))
        strata.addmm(bs, xs, ws.t()).tanh().sum().backward()
        return [t.grad for t in (xs, ws, bs)]

    plain = backward()
    assert calls == []

    class Seen(TorchDispatchMode):
        def __init__(self):
            self.ops = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            self.ops.append(func.qualname)
            return func(*args, **(kwargs or {}))
    with Seen() as mode:
        moded = backward()
    assert len(calls) == 2 and "aten::mm" in mode.ops and "aten::tanh_backward" in mode.ops
    calls.clear()
    with strata.profiler.profile() as prof:
        profiled = backward()
    assert len(calls) == 2
    assert "aten::mm" in {e.name for e in prof.events()}
    for a, b_, c in zip(plain, moded, profiled):
        np.testing.assert_array_equal(a.numpy(), b_.numpy())
        np.testing.assert_array_equal(a.numpy(), c.numpy())


def test_double_backward_through_the_formula():
    """create_graph=True records the formula's ops: second derivatives equal PyTorch's."""
    rng = np.random.default_rng(5)
    x, w, b = _linear_args(rng, 2, 3, 4, np.float64, BIAS_SHAPES["row"])

    def second(m):
        xs, ws, bs = (m.tensor(a, requires_grad=True) for a in (x, w, b))
        y = m.addmm(bs, xs, ws.t()).tanh().log_softmax(-1).gather(1, m.tensor([[1], [3]]))
        (gx,) = m.autograd.grad(y.sum(), [xs], create_graph=True)
        (gw,) = m.autograd.grad((gx * gx).sum(), [ws])
        return gx, gw
    assert_same(second(strata), second(torch))


def test_saved_tensor_errors_unchanged():
    """The lanes read saved tensors through the node: a second backward and an in-place change
    of a saved input raise PyTorch's errors, and no gradient is written."""
    def build(m):
        x = m.ones(2, 3, requires_grad=True)
        w = m.ones(4, 3, requires_grad=True)
        return x, w, m.addmm(m.zeros(4), x * 1, w.t())
    for m in (strata, torch):
        x, w, y = build(m)
        y.sum().backward()
        with pytest.raises(RuntimeError, match="backward through the graph a second time"):
            y.sum().backward()
    errors = []
    for m in (strata, torch):
        x = m.ones(2, 3, requires_grad=True)
        w = m.ones(4, 3, requires_grad=True)
        h = x * 1
        y = m.addmm(m.zeros(4), h, w.t())
        with m.no_grad():
            h.add_(1)
        with pytest.raises(RuntimeError) as info:
            y.sum().backward()
        errors.append(str(info.value).split(";")[0])
        assert w.grad is None and x.grad is None
    assert "modified by an inplace operation" in errors[0]
    assert errors[0].replace("AddmmBackward0", "") == errors[1].replace("AddmmBackward0", "")


# --- softmax rows: the generated kernels' pointers (native.address) -----------------------------

@settings(max_examples=30, deadline=None)
@given(rows=st.integers(1, 6), n=st.integers(1, 9), layout=st.sampled_from(
    ["contiguous", "row_slice", "transposed", "read_only", "empty"]),
    dtype=st.sampled_from(["float32", "float64"]), log=st.booleans(), seed=st.integers(0, 2**16))
def test_softmax_rows_any_layout(rows, n, layout, dtype, log, seed):
    """Writable contiguous rows lend their buffer to the C kernel; strided, read-only and empty
    arrays take ``ctypes.data``: every layout gives PyTorch's values, forward and backward."""
    base = np.random.default_rng(seed).standard_normal((rows, 2 * n + 1)).astype(dtype)
    if layout == "read_only":
        base.flags.writeable = False

    def fn(m):
        x = m.from_numpy(base) if layout == "read_only" else m.tensor(base)
        x = {"contiguous": x[:, :n], "row_slice": x[:, 1:n + 1], "transposed": x[:, :n].t(),
             "read_only": x, "empty": x[:0]}[layout]
        x = x.detach().requires_grad_(True)
        y = x.log_softmax(-1) if log else x.softmax(-1)
        (y * m.arange(y.shape[-1], dtype=y.dtype)).sum().backward()
        return y, x.grad
    with warnings_ignored():
        assert_same(fn(strata), fn(torch))


@contextlib.contextmanager
def warnings_ignored():
    with warnings.catch_warnings():   # torch.from_numpy warns about read-only arrays
        warnings.simplefilter("ignore")
        yield


def test_address_lends_or_falls_back():
    from strata.backends.cpu import native
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    assert not isinstance(native.address(a), int)   # a byref of the array's own buffer
    read_only = a.copy()
    read_only.flags.writeable = False
    for arr in (a[:, ::2], read_only, a[:0]):
        assert native.address(arr) == arr.ctypes.data


@pytest.mark.parametrize("shape, dim, index", [((1, 2), -1, [[1]]), ((3,), 0, [2]),
                                                ((2, 1, 3), 1, [[[0]]]), ((), 0, 0)])
def test_gather_one_element_negative_zero(shape, dim, index):
    """A one-element gather's gradient is ``0 + g`` as scatter_add adds it: -0.0 gives +0.0."""
    def fn(m):
        x = m.zeros(shape, requires_grad=True)
        (x.gather(dim, m.tensor(index)) * -0.0).sum().backward()
        return x.grad
    got, want = fn(strata), fn(torch)
    assert_same(got, want)
    np.testing.assert_array_equal(np.signbit(got.numpy()), np.signbit(want.numpy()))


def test_lanes_step_aside_while_a_kernel_they_stand_for_is_replaced():
    """A CPU ``mm`` kernel put in place of strata's (deregister, then ``Library.impl``) is
    called by a plain backward too; with strata's kernel back the lanes run again."""
    from strata.dispatch import dispatcher as DP
    from strata.dispatch.keys import key_by_name
    from strata.library import Library

    cpu = key_by_name("CPU")
    original = DP._tables[L.mm][cpu]
    calls = []

    def counting_mm(a, b):
        calls.append(a.shape)
        return original.fn(a, b)

    def linear_grads():
        x, w = strata.ones(2, 3, requires_grad=True), strata.ones(4, 3, requires_grad=True)
        strata.nn.functional.linear(x, w, strata.zeros(4)).sum().backward()
        return x.grad, w.grad

    lanes = {op: derivatives.DERIVATIVES[op].cpu_backward for op in LANE_OPS}
    expected = linear_grads()
    DP.deregister_kernel(L.mm, cpu)
    lib = Library("aten", "IMPL")
    try:
        lib.impl("mm", counting_mm, "CPU")
        assert all(derivatives.DERIVATIVES[op].cpu_backward is None for op in LANE_OPS)
        for got, want in zip(linear_grads(), expected):
            np.testing.assert_array_equal(got.numpy(), want.numpy())
        assert len(calls) == 2          # both gradients' products went through the new kernel
    finally:
        lib._destroy()
        DP.register_kernel(L.mm, cpu, original.fn, boxed=original.boxed)
    # strata's own kernel is back: the lanes run again
    assert {op: derivatives.DERIVATIVES[op].cpu_backward for op in LANE_OPS} == lanes
