"""The sixth performance pass (docs/performance.md, "Sixth pass"), against PyTorch: saved values
read as node properties, the engine's direct gradient accumulation, transposed views over their
base's array, SqueezeBackward1 as an unsqueeze, the one-dim ``sum`` lane, and Categorical's
validation by extremes, its int64 actions and its sampling from logits."""

import numpy as np
import pytest
import torch
from helpers import assert_same, check, check_error
from hypothesis import given, settings
from hypothesis import strategies as st

import strata
from strata.dispatch.modes import TorchDispatchMode

# --- saved values as properties (Note [Saved values as properties]) ------------------------------


@pytest.mark.parametrize("case", ["mul", "exp", "addmm", "gather", "log_softmax", "squeeze"])
def test_saved_values_match_torch(case):
    """``grad_fn._saved_<name>`` (properties now) gives PyTorch's values, before and after a
    backward that frees them (then PyTorch's error)."""
    rng = np.random.default_rng(0)
    a = rng.standard_normal((3, 4)).astype(np.float32)
    b = rng.standard_normal((4, 2)).astype(np.float32)

    def build(m):
        x = m.tensor(a, requires_grad=True)
        if case == "mul":
            return x * m.tensor(a[::-1].copy(), requires_grad=True), ("self", "other")
        if case == "exp":
            return x.exp(), ("result",)
        if case == "addmm":
            w = m.tensor(b, requires_grad=True)
            return m.addmm(m.zeros(2), x, w, beta=0.5, alpha=2.0), \
                ("mat1", "mat2", "alpha", "beta")
        if case == "gather":
            return x.gather(1, m.tensor([[0], [3], [1]])), ("dim", "index")
        if case == "log_softmax":
            return x.log_softmax(-1), ("result",)
        return x[:, :1].squeeze(1), ("dim",)

    (s_out, names), (t_out, _) = build(strata), build(torch)
    for name in names:
        assert_same(getattr(s_out.grad_fn, f"_saved_{name}"),
                    getattr(t_out.grad_fn, f"_saved_{name}"))
    s_out.sum().backward()
    t_out.sum().backward()
    saved = [n for n in names if n in ("self", "other", "mat1", "mat2", "index", "result")]
    for name in saved:
        with pytest.raises(RuntimeError, match="backward through the graph a second time"):
            getattr(t_out.grad_fn, f"_saved_{name}")
        with pytest.raises(RuntimeError, match="backward through the graph a second time"):
            getattr(s_out.grad_fn, f"_saved_{name}")


def test_unsaved_value_still_raises_attribute_error():
    """A tensor the formula did not keep reads as before: AttributeError (hasattr is False)."""
    x = strata.ones(2, requires_grad=True)
    y = x * strata.ones(2)   # ``other`` needs no gradient, so ``self`` is not saved
    assert not hasattr(y.grad_fn, "_saved_self")
    assert hasattr(y.grad_fn, "_saved_other")
    assert y.grad_fn.name() == "MulBackward0"   # a node method is not shadowed


# --- direct buffer accumulation (Note [Direct buffer accumulation]) -------------------------------

@settings(max_examples=20, deadline=None)
@given(dtype=st.sampled_from(["float32", "float64", "float16"]), steps=st.integers(2, 12),
       seed=st.integers(0, 2**16))
def test_weight_used_at_every_step_matches_torch(dtype, steps, seed):
    """A policy's weights get one gradient per step, summed in the engine's buffer (in place,
    half precision through ``add_``): PyTorch's gradients."""
    rng = np.random.default_rng(seed)
    w = rng.standard_normal((5, 3)).astype(dtype)
    b = rng.standard_normal(5).astype(dtype)
    xs = rng.standard_normal((steps, 1, 3)).astype(dtype)

    def fn(m, w, b, xs):
        w.requires_grad_(True)
        b.requires_grad_(True)
        total = sum(m.nn.functional.linear(xs[i], w, b).tanh().sum() for i in range(steps))
        total.backward()
        return w.grad, b.grad

    tol = 2e-2 if dtype == "float16" else None
    check(fn, w, b, xs, atol=tol, rtol=tol)


class _Ops(TorchDispatchMode):
    def __init__(self):
        self.names = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.names.append(str(func))
        return func(*args, **(kwargs or {}))


def test_dispatch_mode_still_sees_the_accumulation():
    """Under a dispatch mode the accumulation is an op the mode sees (PyTorch's shows an
    ``add``), not the engine's direct sum."""
    class TorchOps(torch.utils._python_dispatch.TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.names = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            self.names.append(str(func))
            return func(*args, **(kwargs or {}))

    for m, mode_cls in ((strata, _Ops), (torch, TorchOps)):
        w = m.ones(4, 3, requires_grad=True)
        loss = sum((m.ones(1, 3) @ w.t()).sum() for _ in range(3))
        with mode_cls() as mode:
            loss.backward()
        assert any("add" in name for name in mode.names), (m.__name__, mode.names)
        np.testing.assert_array_equal(w.grad.numpy(), np.full((4, 3), 3.0, np.float32))


# --- views over the base's array (Note [Views over the base's array]) ------------------------

@settings(max_examples=60, deadline=None)
@given(shape=st.lists(st.integers(1, 4), min_size=0, max_size=4), strided=st.booleans(),
       op=st.sampled_from(["transpose", "squeeze", "squeeze_all", "unsqueeze"]), data=st.data())
def test_view_array_is_the_view(shape, strided, op, data):
    """A view's array taken from its base's holds the view's elements, follows writes into the
    base and into the view, and the view has PyTorch's layout."""
    n = len(shape)
    d0 = data.draw(st.integers(-max(n, 1), max(n, 1) - 1))
    d1 = data.draw(st.integers(-max(n, 1), max(n, 1) - 1))
    at = data.draw(st.integers(-n - 1, n))
    a = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)

    def fn(m, x):
        if strided and n:
            x = x.transpose(0, -1)   # a base that is itself a strided view
        v = {"transpose": lambda: x.transpose(d0, d1), "squeeze": lambda: x.squeeze(d0),
             "squeeze_all": lambda: x.squeeze(), "unsqueeze": lambda: x.unsqueeze(at)}[op]()
        x.add_(1)
        w = v.mul(1).flatten()   # reads the view's array (values: size-1 strides aside)
        v.mul_(2)
        return v, w, x.clone()

    check(fn, a, check_stride=True)


def test_matrix_t_array_follows_base():
    x = strata.tensor(np.arange(6.0).reshape(2, 3))
    v = x.t()
    assert v._array is not None and v._array.base is not None
    x.mul_(2)
    np.testing.assert_array_equal(v.numpy(), np.arange(6.0).reshape(2, 3).T * 2)


# --- SqueezeBackward1 as an unsqueeze -----------------------------------------------------------

@pytest.mark.parametrize("shape, dim", [((3, 1), 1), ((3, 1), -1), ((3, 2), 1), ((1,), 0),
                                        ((), 0), ((2, 1, 4), None), ((2, 1, 1), [1, 2])])
def test_squeeze_backward_matches_torch(shape, dim):
    """Gradients, double-backward nodes and the gradient's strides of ``squeeze``."""
    a = np.random.default_rng(1).standard_normal(shape).astype(np.float64)

    def fn(m, x):
        x.requires_grad_(True)
        y = x.squeeze() if dim is None else x.squeeze(dim)
        w = m.ones_like(y) * 2
        (g,) = m.autograd.grad((y * y * w).sum(), x, create_graph=True)
        (gg,) = m.autograd.grad(g.sum(), x)
        return g, gg

    check(fn, a, check_stride=True)


# --- sum over one dim -----------------------------------------------------------------------------

@settings(max_examples=40, deadline=None)
@given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=3),
       dtype=st.sampled_from(["float32", "float64", "int32", "bool"]), keepdim=st.booleans(),
       data=st.data())
def test_sum_one_dim_matches_torch(shape, dtype, keepdim, data):
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    a = (np.random.default_rng(2).standard_normal(shape) * 4).astype(dtype)
    check(lambda m, x: m.sum(x, [dim], keepdim), a)


def test_sum_one_dim_out_of_range_raises_as_torch():
    check_error(lambda m, x: m.sum(x, [2]), np.ones((2, 3), np.float32))


# --- Categorical -------------------------------------------------------------------------------

@settings(max_examples=60, deadline=None)
@given(values=st.lists(st.integers(-3, 6), min_size=0, max_size=6),
       dtype=st.sampled_from(["int64", "int32", "uint8", "float32"]), low=st.integers(-1, 2),
       width=st.integers(0, 4))
def test_integer_interval_validation_matches_torch(values, dtype, low, width):
    """``integer_interval`` validates by its extremes for integers: PyTorch's verdict."""
    if dtype == "uint8":
        values = [abs(v) for v in values]
    a = np.array(values, dtype=dtype)
    if dtype == "float32" and a.size:
        a[0] += 0.5   # a fraction is never in the support
    s_ok = strata.distributions.constraints.integer_interval(low, low + width)._all_valid(
        strata.tensor(a))
    t_ok = bool(torch.distributions.constraints.integer_interval(low, low + width).check(
        torch.tensor(a)).all())
    assert s_ok == t_ok


@pytest.mark.parametrize("action", [[2], [-1], [1]])
@pytest.mark.parametrize("dtype", ["int64", "int32", "float32"])
def test_categorical_log_prob_matches_torch(action, dtype):
    """Valid actions give PyTorch's log-probabilities and gradients; invalid ones its error."""
    logits = np.array([[0.3, -1.2]], np.float32)
    act = np.array(action, dtype)

    def fn(m, lg, act):
        lg = lg.clone().requires_grad_(True)
        lp = m.distributions.Categorical(logits=lg).log_prob(act)
        lp.sum().backward()
        return lp.detach(), lg.grad

    if action == [1]:
        check(fn, logits, act)
    else:
        err, _ = check_error(fn, logits, act)
        assert "to be within the support" in str(err)


@pytest.mark.parametrize("batch", [(), (3,), (2, 3)])
@pytest.mark.parametrize("sample_shape", [(), (4,), (2, 2)])
def test_categorical_sample_shapes_and_draws(batch, sample_shape):
    """Sampling from logits (no recorded softmax) draws what sampling from the same
    probabilities draws, in PyTorch's shapes and dtype; ``probs`` keeps its graph."""
    logits = np.random.default_rng(3).standard_normal(batch + (4,)).astype(np.float32)
    t_draws = torch.distributions.Categorical(logits=torch.tensor(logits)).sample(sample_shape)
    lg = strata.tensor(logits, requires_grad=True)
    by_logits = strata.distributions.Categorical(logits=lg)
    strata.manual_seed(7)
    s_draws = by_logits.sample(sample_shape)
    strata.manual_seed(7)
    by_probs = strata.distributions.Categorical(probs=lg.detach().softmax(-1)).sample(
        sample_shape)
    assert tuple(s_draws.shape) == tuple(t_draws.shape) and s_draws.dtype == strata.int64
    np.testing.assert_array_equal(s_draws.numpy(), by_probs.numpy())
    assert ((s_draws.numpy() >= 0) & (s_draws.numpy() < 4)).all()
    assert by_logits.probs.grad_fn.name() == "SoftmaxBackward0"


@settings(max_examples=30, deadline=None)
@given(shape=st.lists(st.integers(1, 3), min_size=1, max_size=3),
       dtype=st.sampled_from(["float32", "float64", "int64"]),
       reduce=st.sampled_from(["add", "sum", "prod", "mean", "amax"]), data=st.data())
def test_scatter_of_one_index_matches_torch(shape, dtype, reduce, data):
    """A single-element index scatters with a plain indexed add (sum) or ``ufunc.at``."""
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    position = [data.draw(st.integers(0, n - 1)) for n in shape]
    index = np.full([1] * len(shape), position[dim], np.int64)
    a = (np.random.default_rng(4).standard_normal(shape) * 3).astype(dtype)
    src = np.full([1] * len(shape), 2, dtype)
    if reduce == "add":
        check(lambda m, x, i, s: x.scatter_add(dim, i, s), a, index, src)
    else:
        check(lambda m, x, i, s: x.scatter_reduce(dim, i, s, reduce), a, index, src)


def test_profiler_still_sees_the_accumulation():
    """While a trace is installed the engine's sums are ops the profiler counts (the direct
    path is for untraced runs)."""
    w = strata.ones(4, 3, requires_grad=True)
    loss = sum((strata.ones(1, 3) @ w.t()).sum() for _ in range(3))
    with strata.profiler.profile() as prof:
        loss.backward()
    counts = {e.key: e.count for e in prof.key_averages()}
    assert counts.get("aten::add_", 0) + counts.get("aten::add", 0) == 2, counts
