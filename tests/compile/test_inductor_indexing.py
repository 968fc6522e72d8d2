"""Advanced indexing inside inductor graphs: ``x[idx]`` (index.Tensor), ``index_select`` and
``unfold`` as indexed loads fused with their readers; ``x[idx] = v`` / ``+= v`` (index_put_)
as IndexAdd kernels and ``x[mask] = v`` as a select. A Check step raises eager's (PyTorch's)
error for an index outside its dim before any kernel runs. Values and gradients against eager
strata (bit for bit) and PyTorch."""

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import strata
from strata.compile.aot import make_fx
from strata.compile.inductor.compile_fx import compile_fx

# a graph that fails to capture or build runs eagerly with a warning: that must fail the test
pytestmark = [pytest.mark.filterwarnings("error::RuntimeWarning"),
              pytest.mark.filterwarnings("error::UserWarning")]


def _both(fn, *arrays):
    """``fn(strata, *tensors)`` compiled and eager, and ``fn(torch, *tensors)``, as arrays."""
    args = [strata.tensor(a) for a in arrays]
    got = strata.compile(lambda *a: fn(strata, *a), backend="inductor")(*args).numpy()
    eager = fn(strata, *args).numpy()
    want = fn(torch, *[torch.tensor(a) for a in arrays]).numpy()
    return got, eager, want


def _bound(fn, m):
    return lambda *args: fn(m, *args)


def _ir(fn, *args):
    return compile_fx(make_fx(fn)(*args), list(args)).ir_post_fusion


@settings(max_examples=12, deadline=None)
@given(shape=st.lists(st.integers(1, 5), min_size=2, max_size=3),
       dims=st.sampled_from([(0,), (1,), (0, 1), (0, 2), (1, 2)]),
       index_shapes=st.sampled_from([((3,), (3,)), ((2, 1), (3,)), ((), (2, 2)), ((4,), ())]),
       index_dtype=st.sampled_from(["int64", "int32"]),
       dtype=st.sampled_from(["float32", "float64", "int64", "bool"]), seed=st.integers(0, 999))
def test_index_matches_eager_and_torch(shape, dims, index_shapes, index_dtype, dtype, seed):
    """Negative indices, broadcast index tensors, adjacent and separated indexed dims (the
    broadcast dims then lead)."""
    dims = [d for d in dims if d < len(shape)]
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(shape) * 10).astype(dtype)
    indices = [rng.integers(-shape[d], shape[d], index_shapes[k]).astype(index_dtype)
               for k, d in enumerate(dims)]

    def fn(m, x, *idx):
        key = [slice(None)] * (max(dims) + 1)
        for d, i in zip(dims, idx):
            key[d] = i
        return x[tuple(key)].to(m.float64) * 2 + 1
    got, eager, want = _both(fn, x, *indices)
    np.testing.assert_array_equal(got, eager)
    np.testing.assert_array_equal(got, want)


@settings(max_examples=10, deadline=None)
@given(shape=st.lists(st.integers(1, 5), min_size=1, max_size=3), dim=st.integers(0, 2),
       count=st.integers(0, 6), index_dtype=st.sampled_from(["int64", "int32"]),
       dtype=st.sampled_from(["float32", "int32", "bool"]), scalar_index=st.booleans(),
       seed=st.integers(0, 999))
def test_index_select_matches_eager_and_torch(shape, dim, count, index_dtype, dtype,
                                             scalar_index, seed):
    dim = dim % len(shape)
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(shape) * 10).astype(dtype)
    index = rng.integers(0, shape[dim], () if scalar_index else count).astype(index_dtype)
    got, eager, want = _both(lambda m, x, i: x.index_select(dim, i).to(m.float64) - 1, x, index)
    np.testing.assert_array_equal(got, eager)
    np.testing.assert_array_equal(got, want)


@settings(max_examples=10, deadline=None)
@given(shape=st.lists(st.integers(1, 6), min_size=1, max_size=3), dim=st.integers(0, 2),
       size=st.integers(0, 3), step=st.integers(1, 3), computed=st.booleans(),
       seed=st.integers(0, 999))
def test_unfold_matches_eager_and_torch(shape, dim, size, step, computed, seed):
    """Windows of an input (a strided view) or of a formula (an indexed load)."""
    dim = dim % len(shape)
    size = min(size, shape[dim])
    x = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)

    def fn(m, x):
        return (x * 3 if computed else x).unfold(dim, size, step) + 1
    got, eager, want = _both(fn, x)
    np.testing.assert_array_equal(got, eager)
    np.testing.assert_array_equal(got, want)


def _put(m, x, index, values, dim, accumulate):
    """``x * 2`` (a graph value read once) with ``values`` put at ``index`` along ``dim``."""
    y = x * 2
    if accumulate:      # (torch's Tensor.index_put_ takes no None for a whole dim; aten's does)
        put = m.ops.aten.index_put_
        put(y, [None] * dim + [index], values, True)
    else:
        y[(slice(None),) * dim + (index,)] = values
    return y + 1


@settings(max_examples=12, deadline=None)
@given(shape=st.lists(st.integers(1, 5), min_size=1, max_size=3), dim=st.integers(0, 2),
       count=st.integers(0, 7), accumulate=st.booleans(), broadcast=st.booleans(),
       dtype=st.sampled_from(["float32", "float64", "int64"]),
       index_dtype=st.sampled_from(["int64", "int32"]), seed=st.integers(0, 999))
def test_index_put_matches_eager_bit_for_bit_and_torch(shape, dim, count, accumulate,
                                                      broadcast, dtype, index_dtype, seed):
    """Repeated rows: summed in index order (``np.add.at``) or the last write kept, as eager;
    PyTorch's assignment to a repeated row is unspecified, so it is compared with distinct
    rows only."""
    dim = dim % len(shape)
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(shape) * 100).astype(dtype)
    index = rng.integers(-shape[dim], shape[dim], count).astype(index_dtype)

    def values(rows):
        """Values for ``rows`` puts; ``broadcast``: without the first dim, or with one row."""
        v = rng.standard_normal((*shape[:dim], rows, *shape[dim + 1:])) * 100
        return (v if not broadcast else v[0] if dim else v[:1]).astype(dtype)

    def fn(m, x, i, v):
        return _put(m, x, i, v, dim, accumulate)
    got, eager, _ = _both(fn, x, index, values(count))
    np.testing.assert_array_equal(got, eager)
    if not accumulate:
        index = np.arange(-shape[dim], 0)[rng.permutation(shape[dim])][:count]
    got, _, want = _both(fn, x, index.astype(index_dtype), values(len(index)))
    np.testing.assert_allclose(got, want, rtol=1e-6)


@settings(max_examples=10, deadline=None)
@given(first=st.integers(0, 1), index_shapes=st.sampled_from([((4,), (4,)), ((2, 1), (3,)),
                                                             ((2, 2), ()), ((0,), (1,))]),
       accumulate=st.booleans(), dtype=st.sampled_from(["float32", "int64"]),
       seed=st.integers(0, 999))
def test_index_put_with_several_index_tensors(first, index_shapes, accumulate, dtype, seed):
    """``x[i, j] = v`` / ``+= v`` on adjacent dims, the index tensors broadcast (N-D ones too):
    eager's bits; PyTorch's with distinct elements (its order of repeated writes is
    unspecified)."""
    rng = np.random.default_rng(seed)
    shape = (3, 4, 5)
    x = (rng.standard_normal(shape) * 100).astype(dtype)
    spans = shape[first:first + 2]
    result = np.broadcast_shapes(*index_shapes)
    i, j = (rng.integers(-n, n, s) for n, s in zip(spans, index_shapes))
    if not accumulate:      # distinct elements: the flat positions of a permutation
        flat = rng.permutation(spans[0] * spans[1])[:int(np.prod(result))].reshape(result)
        i, j = np.broadcast_to(flat // spans[1], result), flat % spans[1] - spans[1]
    values = (rng.standard_normal(result + shape[first + 2:]) * 100).astype(dtype)
    if first:
        values = np.ascontiguousarray(np.broadcast_to(values, (3, *values.shape)))

    def fn(m, x, i, j, v):
        y = x * 2
        key = [None] * first + [i, j]
        put = m.ops.aten.index_put_
        put(y, key, v, accumulate)
        return y - 1
    got, eager, want = _both(fn, x, i, j, values)
    np.testing.assert_array_equal(got, eager)
    np.testing.assert_allclose(got, want, rtol=1e-6)
    post = _ir(lambda *a: fn(strata, *a), *map(strata.tensor, (x, i, j, values)))
    assert "IndexAdd(" in post and "Fallback" not in post


def test_masked_assignment_of_one_value_is_a_select():
    x = np.random.default_rng(0).standard_normal((4, 5)).astype(np.float32)
    x[0, 0] = np.nan

    def fn(m, x):
        y = x * 2
        y[y > 0] = -0.0
        return y
    got, eager, want = _both(fn, x)
    np.testing.assert_array_equal(got, eager)
    np.testing.assert_array_equal(got, want)
    assert np.signbit(got[x > 0]).all()
    assert "Fallback" not in _ir(lambda x: fn(strata, x), strata.tensor(x))


def test_a_boolean_mask_read_keeps_eagers_kernel():
    """``x[mask]`` has a data-dependent shape: it stays a Fallback, and right."""
    x = np.random.default_rng(1).standard_normal((4, 5)).astype(np.float32)
    got, _, want = _both(lambda m, x: x[x > 0] * 2, x)
    np.testing.assert_array_equal(got, want)


def test_gradients_match_eager_and_torch():
    """index's backward is an index_put_ accumulate, index_select's an index_add_: IndexAdd
    kernels, no Fallback."""
    rng = np.random.default_rng(3)
    x, scale = rng.standard_normal((5, 4)).astype(np.float32), rng.standard_normal(4)
    index = np.array([0, -1, 2, 2, -5])

    def step(m, x, i, s):
        out = x[i] * s.to(x.dtype) + x.index_select(1, i.abs() % 4)[:, :4] * 2 + \
            x.unfold(0, 2, 1).sum(-1)[:1]
        (out * out).sum().backward()
    grads = []
    for m, compiled in ((strata, True), (strata, False), (torch, False)):
        xt = m.tensor(x, requires_grad=True)
        fn = _bound(step, m)
        (strata.compile(fn, backend="inductor") if compiled else fn)(
            xt, m.tensor(index), m.tensor(scale))
        grads.append(xt.grad.numpy())
    np.testing.assert_array_equal(grads[0], grads[1])
    np.testing.assert_allclose(grads[0], grads[2], rtol=1e-5, atol=1e-5)
    args = [strata.tensor(x), strata.tensor(index), strata.randn(5, 4)]
    backward = _ir(lambda x, i, g: strata.zeros(5, 4).index_put_((i,), g, accumulate=True),
                   *args)
    assert "IndexAdd(" in backward and "Fallback" not in backward


def test_gradient_of_several_index_tensors_is_one_index_add():
    """``y[:, i, j]``'s backward: an accumulating index_put_ over two dims, eager's sums."""
    y = np.random.default_rng(4).standard_normal((4, 5, 3)).astype(np.float32)
    i, j = np.array([0, -1, 2, 2]), np.array([[1], [2]])
    grads = []
    for m, compiled in ((strata, True), (strata, False), (torch, False)):
        yt = m.tensor(y, requires_grad=True)

        def step(y, i, j):
            out = y[:, i, j] * 3
            (out * out).sum().backward()
        (strata.compile(step, backend="inductor") if compiled else step)(
            yt, m.tensor(i), m.tensor(j))
        grads.append(yt.grad.numpy())
    np.testing.assert_array_equal(grads[0], grads[1])
    np.testing.assert_allclose(grads[0], grads[2], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("fn", [
    lambda x, i: x[i] + 1, lambda x, i: x[:, i.abs()] * x[:, :3],
    lambda x, i: x.index_select(0, i.abs()).exp(), lambda x, i: x.unfold(1, 2, 1) + 1,
    lambda x, i: (x * 2).index_put_((i,), x[:3], accumulate=True),
    lambda x, i: (x * 2).index_put_((i,), x[0]),
])
def test_lowered_without_a_fallback_the_check_first(fn):
    post = _ir(fn, strata.randn(4, 4), strata.tensor([1, -2, 3]))
    assert "Fallback" not in post and "kernel" in post
    if "Check(" in post:
        assert post.index("Check(") < post.rindex("kernel")   # the one loading through it


@pytest.mark.parametrize("bad", [5, -6])
def test_out_of_range_index_raises_torchs_error_and_writes_nothing(bad):
    """The Check step runs before any kernel: an input written in place is left as it was."""
    def write(m, x, i, v):
        x[i] = v * 2
        return x[i].sum()
    x, values = strata.randn(5, 3), strata.randn(3, 3)
    compiled = strata.compile(lambda *a: write(strata, *a), backend="inductor")
    compiled(x.clone(), strata.tensor([0, 1, 2]), values)
    kept = x.clone()
    message = f"index {bad} is out of bounds for dimension 0 with size 5"
    with pytest.raises(IndexError, match=message):
        compiled(x, strata.tensor([0, bad, 2]), values)
    np.testing.assert_array_equal(x.numpy(), kept.numpy())
    with pytest.raises(IndexError, match=message):
        write(torch, torch.zeros(5, 3), torch.tensor([0, bad, 2]), torch.ones(3, 3))
    read = strata.compile(lambda x, i: x[:, :, i] + 1, backend="inductor")
    read(strata.randn(2, 2, 5), strata.tensor([1]))
    message = f"index {bad} is out of bounds for dimension 0 with size 5"
    with pytest.raises(IndexError, match=message):
        read(strata.randn(2, 2, 5), strata.tensor([bad]))
    with pytest.raises(IndexError, match=message):
        torch.randn(2, 2, 5)[:, :, torch.tensor([bad])]


def test_index_select_out_of_range_raises_torchs_errors():
    """ATen checks rows (dim 0) with TORCH_CHECK_INDEX, other dims in a gather."""
    select = strata.compile(lambda x, d, i: x.index_select(d, i) * 2, backend="inductor")
    for dim, error, message in ((0, IndexError, "index out of range in self"),
                                (1, RuntimeError, "INDICES element is out of DATA bounds, "
                                                  + "id=7 axis_dim=4")):
        select(strata.randn(4, 4), dim, strata.tensor([1]))
        with pytest.raises(error, match=message):
            select(strata.randn(4, 4), dim, strata.tensor([1, 7]))
        with pytest.raises(error, match=message):
            torch.randn(4, 4).index_select(dim, torch.tensor([1, 7]))


def test_empty_self_and_index():
    """A self with no elements: no kernel divides by its rows; shapes are torch's."""
    def put(m, x, i, v):
        y = x * 2
        y[i] = v
        return y

    x, i, v = np.zeros((0, 3), np.float32), np.zeros(0, np.int64), np.zeros((0, 3), np.float32)
    for fn, arrays in ((put, (x, i, v)), (lambda m, x, i: x[i] + 1, (x, i)),
                       (lambda m, x, i: x.index_select(1, i) + 1, (x, i))):
        got, eager, want = _both(fn, *arrays)
        assert got.shape == eager.shape == want.shape
