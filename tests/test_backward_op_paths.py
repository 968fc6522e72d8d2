"""The shortcuts of the fifth performance pass (docs/performance.md) give what the general paths
give, against PyTorch: the in-place fast lane (Note [In-place fast lane]) and the checks it must
not skip, scatter/gather's metas and small-index bounds check, the softmax backward's NumPy
formula for a few elements, ``full`` of zero, ``mm``/``addmm`` through ``np.dot``, the cached
contiguous strides and the matrix transpose; and the RL policy's backward, double backward
included, with the lane opened first; ``multinomial``'s small-input checks and single draw."""

import numpy as np
import pytest
import torch
from helpers import assert_same, check, check_error, check_outcome
from hypothesis import given, settings
from hypothesis import strategies as st

import strata
from strata.core.shape import contiguous_strides

_DTYPES = ["float32", "float64", "int64", "int32"]


def _open_lanes(m, dtype):
    """Run each in-place op once on two plain tensors of ``dtype``, so its lane is open."""
    a, b = m.ones(3, dtype=getattr(m, dtype)), m.ones(3, dtype=getattr(m, dtype))
    a.add_(b)
    a.add_(b, alpha=2)
    a.mul_(b)
    a.sub_(b)


@settings(max_examples=25, deadline=None)
@given(dtype=st.sampled_from(_DTYPES), shape=st.sampled_from([(3,), (2, 3), (4, 1), (1,)]),
       layout=st.sampled_from(["contiguous", "transposed", "view"]),
       op=st.sampled_from(["add_", "sub_", "mul_", "add_alpha"]), seed=st.integers(0, 2**16))
def test_inplace_lane_matches_torch(dtype, shape, layout, op, seed):
    """Once the lane is open, in-place binary ops on row-major, transposed and viewed targets
    give PyTorch's values, and bump the version counter as the full path does."""
    rng = np.random.default_rng(seed)
    a = (rng.standard_normal(shape) * 10).astype(dtype)
    b = (rng.standard_normal(shape) * 10).astype(dtype)

    def fn(m, x, y):
        _open_lanes(m, dtype)
        if layout == "transposed":
            x = x.t().contiguous().t() if x.ndim == 2 else x.clone()
        elif layout == "view":
            x = x.clone().view(x.shape)
        before = x._version
        if op == "add_alpha":
            x.add_(y, alpha=3)
        else:
            getattr(x, op)(y)
        assert x._version == before + 1
        return x

    check(fn, a, b)


@pytest.mark.parametrize("case", ["broadcast_self", "expanded_self", "partial_overlap",
                                  "cast", "float_alpha_int", "bool_alpha"])
def test_inplace_lane_leaves_checks_to_the_meta(case):
    """What the lane does not cover still raises PyTorch's error, with the lane open and the
    tensor unchanged."""
    def fn(m, a):
        _open_lanes(m, "float32")
        _open_lanes(m, "int64")
        if case == "broadcast_self":
            return a[:1].clone().add_(a)
        if case == "expanded_self":
            return a[:1].expand(3, 2).add_(m.ones(3, 2))
        if case == "partial_overlap":
            return a[1:].add_(a[:-1])
        if case == "cast":
            return m.ones(3, 2, dtype=m.int64).add_(a)
        if case == "float_alpha_int":
            return m.ones(3, 2, dtype=m.int64).add_(m.ones(3, 2, dtype=m.int64), alpha=1.5)
        return a.add_(a, alpha=True)

    check_error(fn, np.arange(6, dtype=np.float32).reshape(3, 2))


def test_inplace_full_alias_takes_the_lane():
    """``x.add_(x)``: a full alias is allowed (and doubles x), storage made or not."""
    def fn(m, a):
        _open_lanes(m, "float32")
        x = a.clone()
        x.add_(x)
        y = a.clone()
        y.view(-1)   # its storage is made now
        y.mul_(y)
        return x, y

    check(fn, np.arange(6, dtype=np.float32).reshape(2, 3))


@settings(max_examples=20, deadline=None)
@given(rows=st.integers(1, 3), cols=st.integers(1, 5), dim=st.sampled_from([0, 1, -1]),
       seed=st.integers(0, 2**16))
def test_scatter_add_and_gather_small_match_torch(rows, cols, dim, seed):
    """Small scatter_add/gather (the bounds check over a Python list, the cached position
    arrays), repeated indices accumulating; and the gather's gradient."""
    rng = np.random.default_rng(seed)
    size = rows if dim == 0 else cols
    index = rng.integers(0, size, (rows, cols))
    src = rng.standard_normal((rows, cols)).astype(np.float32)
    base = rng.standard_normal((rows, cols)).astype(np.float32)
    check(lambda m, x, i, s: m.scatter_add(x, dim, i, s), base, index, src)
    check(lambda m, x, i: m.gather(x, dim, i), base, index)
    for m, results in ((strata, []), (torch, [])):
        x = m.tensor(base, requires_grad=True)
        m.gather(x, dim, m.tensor(index)).sum().backward()
        results.append(x.grad)
        if m is strata:
            s_grad = x.grad
        else:
            assert_same(s_grad, x.grad)


@pytest.mark.parametrize("case", ["index_high", "index_negative", "index_high_many",
                                  "dtype", "ndim", "larger", "larger_src"])
def test_scatter_gather_errors_match_torch(case):
    """Bad indices and shapes raise PyTorch's errors through the rewritten metas."""
    def fn(m, x):
        index = {"index_high": [[2]], "index_negative": [[-1]],
                 "index_high_many": [[0] * 19 + [20]], "larger": [[0], [0]],
                 "larger_src": [[0, 1]]}.get(case, [[0]])
        i = m.tensor(index)
        if case == "dtype":
            i = i.float()
        if case == "ndim":
            i = i.view(-1)
        src = m.ones(1, 1) if case == "larger_src" else m.ones(len(index), len(index[0]))
        if case == "index_high_many":
            x = m.zeros(1, 20)
        return m.scatter_add(x, 1, i, src)

    check_error(fn, np.zeros((1, 2), np.float32))
    if case.startswith("index"):
        check_error(lambda m, x: m.gather(x, 1, m.tensor([[2 if case != "index_negative"
                                                           else -1]])),
                    np.zeros((1, 2), np.float32))


@pytest.mark.parametrize("shape", [(1, 2), (3, 4), (2, 3, 5), (1,), (8, 8)])
@pytest.mark.parametrize("kind", ["softmax", "log_softmax"])
def test_softmax_backward_few_elements_matches_torch(shape, kind):
    """Up to 64 elements the softmax backward runs its NumPy formula, beyond it the row kernel:
    both give PyTorch's gradients, for the last and an inner dim."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape).astype(np.float32)
    g = rng.standard_normal(shape).astype(np.float32)
    for dim in (-1, 0):
        def fn(m, a, grad, dim=dim):
            a = a.requires_grad_()
            out = getattr(m, kind)(a, dim)
            (gx,) = m.autograd.grad(out, a, grad)
            return gx
        check(fn, x, g, atol=1e-6, rtol=1e-5)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16", "int8",
                                   "uint8", "int64", "bool", "complex64"])
def test_full_of_zero_matches_torch(dtype):
    """``full(size, 0)`` (every dtype's zero bits, through ``np.zeros``) and the small-int fill
    check's boundaries."""
    check(lambda m: m.full((2, 3), 0, dtype=getattr(m, dtype)))
    check(lambda m: m.full((2,), 127, dtype=getattr(m, dtype)))
    if dtype in ("int8",):
        check_error(lambda m: m.full((2,), 128, dtype=getattr(m, dtype)))


@settings(max_examples=20, deadline=None)
@given(n=st.integers(0, 4), k=st.integers(0, 4), p=st.integers(0, 4),
       dtype=st.sampled_from(["float32", "float64", "int64", "complex64"]),
       transposed=st.booleans(), seed=st.integers(0, 2**16))
def test_mm_and_addmm_match_torch(n, k, p, dtype, transposed, seed):
    """``np.dot`` gives ``np.matmul``'s products: empty, outer (k = 1), transposed operands."""
    rng = np.random.default_rng(seed)
    a = (rng.standard_normal((n, k)) * 4).astype(dtype)
    b = (rng.standard_normal((p, k) if transposed else (k, p)) * 4).astype(dtype)
    c = (rng.standard_normal((p,)) * 4).astype(dtype)

    def operand(m, t):
        return t.t() if transposed else t
    check(lambda m, x, y: m.mm(x, operand(m, y)), a, b, rtol=1e-5)
    check(lambda m, bias, x, y: m.addmm(bias, x, operand(m, y), beta=2, alpha=3), c, a, b,
          rtol=1e-5)


def test_contiguous_strides_cache():
    """Cached strides are Python ints whatever the first caller passed, lists and Sizes hit
    the same entries, and a full cache starts afresh."""
    assert contiguous_strides((2, 0, 3)) == (3, 3, 1)
    assert contiguous_strides([4, 5]) == (5, 1)
    assert contiguous_strides(strata.Size((4, 5))) == (5, 1)
    strides = contiguous_strides((np.int64(6), np.int64(7)))
    assert strides == (7, 1)
    from strata.core import shape as shape_module
    for n in range(shape_module._CONTIGUOUS_MAX + 5):
        contiguous_strides((n, 3))
    assert len(shape_module._CONTIGUOUS) <= shape_module._CONTIGUOUS_MAX
    assert all(type(s) is int for s in contiguous_strides((7, 9)))


@pytest.mark.parametrize("dims", [(0, 1), (1, 0), (-2, -1), (-1, 0), (0, 0), (-1, -1), (1, -2),
                                  (2, 0), (0, -3), (0.0, 1), (1, -2.0)])
def test_matrix_transpose_matches_torch(dims):
    """Every dim pair of a matrix's transpose (the swapping ones take the shortcut); the
    out-of-range ones raise IndexError, a float dim TypeError (equal to an int, it must not
    find the shortcut's set)."""
    check_outcome(lambda m, x: m.transpose(x, *dims),
                  np.arange(6, dtype=np.float32).reshape(2, 3), check_stride=True)


def _policy_loss(m, create_graph):
    """Two steps of the RL policy's graph (Linear, Tanh, Linear, Categorical log_prob)."""
    m.manual_seed(0)
    rng = np.random.default_rng(0)
    w1 = m.tensor(rng.standard_normal((8, 4)).astype(np.float32), requires_grad=True)
    b1 = m.tensor(rng.standard_normal(8).astype(np.float32), requires_grad=True)
    w2 = m.tensor(rng.standard_normal((2, 8)).astype(np.float32), requires_grad=True)
    b2 = m.tensor(rng.standard_normal(2).astype(np.float32), requires_grad=True)
    params = [w1, b1, w2, b2]
    log_probs = []
    for step in range(2):
        obs = m.tensor(rng.standard_normal(4).astype(np.float32)).unsqueeze(0)
        logits = m.nn.functional.linear(m.tanh(m.nn.functional.linear(obs, w1, b1)), w2, b2)
        dist = m.distributions.Categorical(logits=logits)
        log_probs.append(dist.log_prob(m.tensor([step % 2])))
    loss = -(m.cat(log_probs) * m.tensor([1.0, 0.5])).sum()
    grads = m.autograd.grad(loss, params, create_graph=create_graph)
    if not create_graph:
        return grads
    penalty = sum((g * g).sum() for g in grads)
    return m.autograd.grad(penalty, params)


@pytest.mark.parametrize("create_graph", [False, True])
def test_policy_backward_matches_torch(create_graph):
    """The RL policy's gradients, and with ``create_graph=True`` its double backward, with every
    lane open: the fast paths run only where nothing records."""
    def fn(m):
        _open_lanes(m, "float32")
        return _policy_loss(m, create_graph)
    check(fn, atol=1e-5, rtol=1e-5)


def test_lane_is_taken_only_where_it_may(monkeypatch):
    """With the lane open the in-place meta is not consulted for a same-shape, same-dtype write
    into a dense (or transposed) target; a broadcast, a float alpha and a target sharing its
    storage with the other operand still go through it."""
    from strata.ops import pointwise as P
    _open_lanes(strata, "float32")

    def refuse(*args):
        raise LookupError("meta consulted")
    monkeypatch.setattr(P.add_, "meta", refuse)
    x, y = strata.ones(2, 3), strata.ones(2, 3)
    x.add_(y)
    strata.ones(3, 2).t().add_(y)
    assert x.tolist() == [[2.0] * 3] * 2
    base = strata.ones(2, 4)
    for call in (lambda: x.add_(strata.ones(3)), lambda: x.add_(y, alpha=0.5),
                 lambda: base[:, 1:].add_(base[:, :3])):
        with pytest.raises(LookupError):
            call()


@pytest.mark.parametrize("probs", [[[0.2, float("nan")]], [[0.5, float("inf")]], [[-0.1, 1.0]],
                                   [[0.0, 0.0], [0.3, 0.7]], [[0.0, 0.0]] * 40])
def test_multinomial_checks_match_torch(probs):
    """Python's checks of a few probabilities (and NumPy's past 64) raise PyTorch's errors."""
    check_error(lambda m, p: m.multinomial(p, 1), np.array(probs, np.float32))


@pytest.mark.parametrize("shape", [(2,), (3, 4), (1, 2), (20, 5)])
def test_multinomial_single_draw_is_the_top_key(shape):
    """One draw without replacement is the first draw of the sort over the same keys: the
    argmax shortcut gives the same category for the same seed, and zero-probability
    categories are never drawn."""
    rng = np.random.default_rng(1)
    p = rng.random(shape).astype(np.float32)
    p[..., 0] = 0
    probs = strata.tensor(p)
    for seed in range(5):
        strata.manual_seed(seed)
        one = strata.multinomial(probs, 1)
        strata.manual_seed(seed)
        several = strata.multinomial(probs, shape[-1] - 1)
        assert one.tolist() == several[..., :1].tolist()
        assert (one != 0).all()


@pytest.mark.parametrize("shape", [(), (1,), (2, 1), (1, 3, 1)])
@pytest.mark.parametrize("dim", [0, 1, -1, -2, 2, 3, -4])
def test_squeeze_one_dim_matches_torch(shape, dim):
    """``squeeze(int)`` reads the slots: the shape, strides and the dim range errors are
    PyTorch's."""
    check_outcome(lambda m, x: x.squeeze(dim), np.zeros(shape, np.float32), check_stride=True)
