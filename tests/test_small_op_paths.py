"""The shortcuts issue 11's per-op work added give what the general paths give, against PyTorch:
Categorical's log_prob and validation with fewer ops, ``sum_to`` of a bias gradient, the
binder's positional defaults, ``linear``'s direct transpose, the fast lane's direct ufunc for
alpha 1, lazily made storages (Note [Lazy storage]) and the inference/anomaly flags that skip
thread-local reads."""

import threading

import numpy as np
import pytest
import torch
from helpers import assert_same, check, check_error, check_outcome
from hypothesis import given, settings
from hypothesis import strategies as st

import strata


def _both(fn, *arrays, grad=()):
    """``fn(m, *tensors)`` on strata and torch; ``grad`` names inputs that require grad. Returns
    the two results and the two lists of input gradients (after ``result.sum().backward()``)."""
    out = []
    for m in (strata, torch):
        ts = [m.tensor(a, requires_grad=i in grad) for i, a in enumerate(arrays)]
        r = fn(m, *ts)
        if grad:
            r.sum().backward()
        out.append((r, [t.grad for i, t in enumerate(ts) if i in grad]))
    return out


@settings(max_examples=15, deadline=None)
@given(batch=st.sampled_from([(), (1,), (3,), (2, 3)]), k=st.integers(2, 5),
       value_shape=st.sampled_from(["same", "extra", "broadcast"]), seed=st.integers(0, 2**16))
def test_categorical_log_prob_matches_torch(batch, k, value_shape, seed):
    """One value per batch element takes the gather without broadcasting; other value shapes
    (a sample dimension in front, a size-1 batch dim) still broadcast; values and gradients
    equal PyTorch's."""
    rng = np.random.default_rng(seed)
    logits = rng.standard_normal(batch + (k,)).astype(np.float32)
    shape = {"same": batch, "extra": (2,) + batch,
             "broadcast": batch[:-1] + (1,) if batch else ()}[value_shape]
    value = rng.integers(0, k, shape)

    def fn(m, lg, v):
        return m.distributions.Categorical(logits=lg).log_prob(v)

    (s, (sg,)), (t, (tg,)) = _both(fn, logits, value, grad=(0,))
    assert_same(s, t)
    assert_same(sg, tg)


@pytest.mark.parametrize("value", [[0, 3], [-1, 0], [1.5, 0.0], [1.0, 2.0]])
def test_categorical_support_check_matches_torch(value):
    """Out of range (integers) and non-whole (floats) values raise PyTorch's ValueError; whole
    floats in range are valid in both."""
    logits = np.zeros((2, 3), np.float32)
    arr = np.array(value)

    def fn(m, lg, v):
        return m.distributions.Categorical(logits=lg).log_prob(v)

    if value in ([0, 3], [-1, 0], [1.5, 0.0]):
        check_error(fn, logits, arr)
    else:
        check(fn, logits, arr)


def test_independent_constraint_validation_matches_torch():
    """Invalid logits (nan) raise at construction, through the one ``all()`` of the base
    check; a 0-dim parameter still gets the dimension error."""
    bad = np.array([[0.0, np.nan], [1.0, 2.0]], np.float32)
    check_error(lambda m, lg: m.distributions.Categorical(logits=lg), bad)
    assert not strata.distributions.constraints.real_vector._all_valid(strata.tensor(bad))
    assert strata.distributions.constraints.real_vector._all_valid(strata.tensor(bad[1]))
    with pytest.raises(ValueError, match="Expected value.dim"):
        strata.distributions.constraints.real_vector._all_valid(strata.tensor(1.0))


@pytest.mark.parametrize("shapes", [((3, 4), (4,)), ((2, 3, 4), (4,)), ((3, 4), (3, 1)),
                                    ((2, 3, 4), (3, 1)), ((2, 3, 4), (1, 4)), ((3, 4), (3, 4))])
def test_broadcast_gradients_summed_back_match_torch(shapes):
    """``sum_to``: leading dims alone are summed away at once (a bias); with inner size-1 dims
    it sums with keepdim and views."""
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal(s).astype(np.float32) for s in shapes)
    (s, sg), (t, tg) = _both(lambda m, x, y: x * y + y, a, b, grad=(0, 1))
    assert_same(s, t)
    for g, h in zip(sg, tg):
        assert_same(g, h)


def test_positional_defaults_bind_as_keywords_do():
    """A positional call that leaves trailing defaults out gets them (addmm's beta and alpha);
    too many positional arguments and a missing required one still raise TypeError."""
    from strata.ops import linalg as L
    rng = np.random.default_rng(1)
    c, a, b = (strata.tensor(rng.standard_normal(s).astype(np.float32))
               for s in ((2, 2), (2, 3), (3, 2)))
    assert np.array_equal(L.addmm(c, a, b).numpy(), L.addmm(c, a, b, beta=1, alpha=1).numpy())
    assert L.addmm.binder.bind((c, a, b), {}) == (c, a, b, 1, 1)
    with pytest.raises(TypeError, match="positional"):
        L.addmm(c, a, b, 2)   # beta is keyword-only
    with pytest.raises(TypeError, match="missing required argument"):
        L.addmm.binder.bind((c, a), {})


@pytest.mark.parametrize("weight_shape", [(2, 4), (4,), (2, 4, 1)])
@pytest.mark.parametrize("bias", [True, False])
def test_linear_matches_torch(weight_shape, bias):
    """A 2-D weight is transposed directly; a 1-D weight goes through ``t()`` (with a bias,
    addmm refuses it as PyTorch's does); a 3-D weight raises t()'s RuntimeError."""
    rng = np.random.default_rng(2)
    x = rng.standard_normal((3, 4)).astype(np.float32)
    w = rng.standard_normal(weight_shape).astype(np.float32)
    out_features = weight_shape[0] if len(weight_shape) == 2 else ()
    bs = rng.standard_normal(out_features).astype(np.float32)
    args = (x, w, bs) if bias else (x, w)

    def fn(m, *ts):
        return m.nn.functional.linear(*ts)

    if len(weight_shape) == 3:
        check_error(fn, *args, match="t\\(\\) expects a tensor with <= 2 dimensions")
        return
    if len(weight_shape) == 1 and bias:   # PyTorch's addmm refuses the 1-D mat2 too
        check_error(fn, *args, match="mat2 must be a matrix")
        return
    grads = (0, 1, 2) if bias else (0, 1)
    (s, sg), (t, tg) = _both(fn, *args, grad=grads)
    assert_same(s, t)
    for g, h in zip(sg, tg):
        assert_same(g, h)


@pytest.mark.parametrize("alpha", [1, 2, 1.0, True, -1])
@pytest.mark.parametrize("name", ["add", "sub"])
@pytest.mark.parametrize("dtype", [np.float32, np.int64])
def test_lane_with_alpha_matches_torch(alpha, name, dtype):
    """Called twice (the second call takes the lane, alpha 1 as the bare ufunc): the same as
    PyTorch, and a float or bool alpha never shares the int alpha's lane entry."""
    a = np.arange(6, dtype=dtype).reshape(2, 3)
    b = np.ones((2, 3), dtype)
    for _ in range(2):
        check_outcome(lambda m, x, y: getattr(m, name)(x, y, alpha=alpha), a, b)


def test_lazy_storage_is_made_once_and_shared_by_views():
    """A kernel's result has no Storage object until asked (Note [Lazy storage]); then one,
    the same on every read, shared by its views, and writes through a view show in it."""
    x = strata.ones(4) + 1
    assert x._storage_or_none is None
    storage = x.untyped_storage()
    assert storage is x.untyped_storage() and storage.nbytes == 16
    view = x[1:3]
    assert view.untyped_storage() is storage
    assert view.data_ptr() == x.data_ptr() + 4
    view.fill_(7.0)
    assert x.tolist() == [2.0, 7.0, 7.0, 2.0]
    y = strata.ones(4) + 1
    y.unsqueeze_(0)   # an in-place view op on a result whose storage was never read
    assert y.tolist() == [[2.0, 2.0, 2.0, 2.0]] and y.untyped_storage().nbytes == 16


def test_lazy_storage_allocations_still_reported_while_profiling():
    """While a trace is installed, results make their storage at once, so the profiler's
    memory columns see every allocation."""
    x = strata.ones(256)
    with strata.profiler.profile(profile_memory=True) as prof:
        y = x + x
    assert y._storage_or_none is not None
    rows = {e.key: e for e in prof.key_averages()}
    assert rows["aten::add"].cpu_memory_usage >= 1024


def test_inference_mode_in_another_thread_marks_only_its_tensors():
    """The "inference mode used" flag only lets a thread skip the thread-local read while no
    thread ever entered the mode; after that each thread's own mode decides."""
    made = {}

    def worker():
        with strata.inference_mode():
            made["inside"] = strata.ones(2) + 1

    th = threading.Thread(target=worker)
    th.start()
    th.join()
    assert made["inside"].is_inference()
    assert not (strata.ones(2) + 1).is_inference()


def test_anomaly_mode_still_records_forward_traces():
    x = strata.ones(2, requires_grad=True)
    with pytest.warns(UserWarning, match="Anomaly Detection"), strata.autograd.detect_anomaly():
        y = x * 2
    assert y.grad_fn._trace
    z = x * 2
    assert z.grad_fn._trace is None


@pytest.mark.parametrize("batch", [(), (3,), (2, 3)])
@pytest.mark.parametrize("sample_shape", [(), (1,), (4,), (2, 2)])
def test_categorical_sample_shapes_match_torch(batch, sample_shape):
    """One draw per batch element skips the transpose; shapes and dtype stay PyTorch's, and the
    draws are those of the general path (multinomial, transpose, reshape) with the same seed."""
    logits = np.random.default_rng(3).standard_normal(batch + (4,)).astype(np.float32)
    s = strata.distributions.Categorical(logits=strata.tensor(logits))
    t = torch.distributions.Categorical(logits=torch.tensor(logits))
    strata.manual_seed(5)
    drawn, expected = s.sample(sample_shape), t.sample(sample_shape)
    assert tuple(drawn.shape) == tuple(expected.shape)
    assert drawn.dtype is strata.int64 and drawn.stride() == expected.stride()
    strata.manual_seed(5)
    n = int(np.prod(sample_shape))
    general = s.probs.reshape(-1, 4).multinomial(n, True).t().reshape(drawn.shape)
    assert drawn.tolist() == general.tolist()
