"""scatter_reduce (sum, prod, mean, amax, amin; include_self True and False), scatter of a
number, and scatters whose index is smaller than the output in the other dims, lowered
(lowering_scatter.py): compiled == eager strata bit for bit (eager's order of combining, its
identities, its mean in double), eager == PyTorch, float (NaN, Inf, -0.0), integer and bool
dtypes; no Fallback; an index out of range raises eager's error before anything is written."""

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import strata
from strata.compile.aot import make_fx
from strata.compile.inductor.compile_fx import compile_fx

pytestmark = pytest.mark.filterwarnings("error::RuntimeWarning")

REDUCTIONS = ["sum", "prod", "mean", "amax", "amin"]
DTYPES = ["float32", "float64", "int64", "int32", "bool"]


def _values(rng, shape, dtype):
    if dtype == "bool":
        return rng.random(shape) < 0.5
    x = rng.standard_normal(shape) * 3
    if dtype.startswith("float"):
        flat = x.reshape(-1)
        flat[rng.integers(0, flat.size, 2)] = rng.choice([np.nan, np.inf, -np.inf, -0.0], 2)
        return x.astype(dtype)
    return np.round(x).astype(dtype)


def _lowered(fn, *tensors):
    run = compile_fx(make_fx(fn)(*tensors), list(tensors))
    assert "Fallback" not in run.ir_post_fusion, run.ir_post_fusion
    return run


@settings(max_examples=40, deadline=None)
@given(reduction=st.sampled_from(REDUCTIONS), include_self=st.booleans(),
       dtype=st.sampled_from(DTYPES), shape=st.lists(st.integers(1, 5), min_size=1, max_size=3),
       data=st.data())
def test_compiled_scatter_reduce_equals_eager_and_torch(reduction, include_self, dtype, shape,
                                                       data):
    if dtype == "bool" and reduction == "mean":
        return      # PyTorch has no bool mean (tested below: the same error)
    d = data.draw(st.integers(-len(shape), len(shape) - 1))
    rng = np.random.default_rng(data.draw(st.integers(0, 2 ** 16)))
    index_shape = [data.draw(st.integers(1, n)) for n in shape]     # smaller: a masked kernel
    index_shape[d] = data.draw(st.integers(1, 7))                   # repeats along dim
    index = rng.integers(0, shape[d], index_shape).astype(data.draw(
        st.sampled_from(["int64", "int32"])))
    x = _values(rng, shape, dtype)
    src = _values(rng, [n + data.draw(st.integers(0, 1)) for n in index_shape], dtype)

    def fn(a, i, s):
        return a.scatter_reduce(d, i, s, reduction, include_self=include_self)
    tensors = [strata.tensor(v) for v in (x, index, src)]
    got = _lowered(fn, *tensors)(*tensors)[0].numpy()
    eager = fn(*tensors).numpy()
    want = fn(*(torch.tensor(v) for v in (x, index, src))).numpy()
    assert got.dtype == eager.dtype and got.tobytes() == eager.tobytes()
    if dtype.startswith("float"):    # PyTorch's sums of repeats may run in another order
        np.testing.assert_allclose(eager, want, rtol=1e-5, atol=1e-5, equal_nan=True)
    else:
        assert np.array_equal(eager, want)


SMALLER_INDEX_OPS = {
    "scatter": lambda a, i, s: a.scatter(1, i, s),
    "scatter_add": lambda a, i, s: a.scatter_add(1, i, s),
    "scatter of a number": lambda a, i, s: a.scatter(1, i, -2.5 if a.is_floating_point() else -7),
}


@pytest.mark.parametrize("dtype", ["float32", "int64", "int32"])
@pytest.mark.parametrize("name", list(SMALLER_INDEX_OPS))
def test_scatter_of_a_number_and_a_smaller_index(name, dtype):
    fn = SMALLER_INDEX_OPS[name]
    x = np.arange(24).reshape(2, 3, 4).astype(dtype)
    index = np.array([[[2, 0], [1, 1]]])            # (1, 2, 2): smaller in dims 0 and 2
    src = np.arange(100, 112).reshape(1, 3, 4).astype(dtype)
    tensors = [strata.tensor(v) for v in (x, index, src)]
    got = _lowered(fn, *tensors)(*tensors)[0].numpy()
    assert got.tobytes() == fn(*tensors).numpy().tobytes()
    np.testing.assert_array_equal(got, fn(*(torch.tensor(v) for v in (x, index, src))).numpy())


def test_an_index_out_of_range_raises_eagers_error_before_writing():
    x, src = strata.zeros(2, 3), strata.ones(2, 3)
    index = strata.tensor([[0, 1], [0, 3]])
    compiled = strata.compile(lambda x, i, s: x.scatter_reduce_(1, i, s, "amax"),
                              backend="inductor")
    with pytest.raises(RuntimeError, match="index 3 is out of bounds for dimension 1 with "
                                           "size 3"):
        compiled(x, index, src)
    assert x.numpy().tolist() == [[0.0] * 3] * 2
    with pytest.raises(RuntimeError, match="index 3 is out of bounds for dimension 1 with "
                                           "size 3"):
        torch.zeros(2, 3).scatter_reduce_(1, torch.tensor([[0, 1], [0, 3]]), torch.ones(2, 3),
                                          "amax")


def test_an_empty_index_gives_self_and_a_number_out_of_range_keeps_eagers_error():
    x = strata.arange(6, dtype=strata.int32).reshape(2, 3)
    empty = strata.zeros(2, 0, dtype=strata.int64)
    got = compile_fx(make_fx(lambda a, i: a.scatter(1, i, 5))(x, empty), [x, empty])
    assert "Fallback" not in got.ir_post_fusion
    assert got(x, empty)[0].tolist() == x.tolist()
    index = strata.tensor([[0], [1]])
    big = strata.compile(lambda a, i: a.scatter(1, i, 2 ** 40), backend="inductor")
    message = "value cannot be converted to type int without overflow"
    with pytest.raises(RuntimeError, match=message):
        big(x, index)
    assert x.tolist() == [[0, 1, 2], [3, 4, 5]]
    with pytest.raises(RuntimeError, match=message):
        torch.arange(6, dtype=torch.int32).reshape(2, 3).scatter(1, torch.tensor([[0], [1]]),
                                                                  2 ** 40)


def test_a_bool_mean_raises_pytorchs_error():
    compiled = strata.compile(lambda x, i, s: x.scatter_reduce(0, i, s, "mean"),
                              backend="inductor")
    x, i = strata.tensor([True, False]), strata.tensor([0, 1])
    message = "\"scatter_gather_tensor_cpu_reduce_mean\" not implemented for 'Bool'"
    with pytest.raises(NotImplementedError, match=message):
        compiled(x, i, x)
    with pytest.raises(NotImplementedError, match=message):
        torch.tensor([True, False]).scatter_reduce(0, torch.tensor([0, 1]),
                                                   torch.tensor([True, False]), "mean")


@settings(max_examples=20, deadline=None)
@given(shape=st.lists(st.integers(1, 5), min_size=2, max_size=4),
       dtype=st.sampled_from(["float32", "float64", "int64", "int32", "int8"]),
       alpha=st.sampled_from([1, 2, -1]), count=st.integers(1, 7), data=st.data())
def test_index_add_along_any_dim_equals_eager_and_torch(shape, dtype, alpha, count, data):
    """index_add_ of an N-D tensor along any dim (index_select's and nearest upsampling's
    backward): the N-D IndexAdd kernel, repeated indices summed in order as eager's add.at."""
    d = data.draw(st.integers(-len(shape), len(shape) - 1))
    rng = np.random.default_rng(data.draw(st.integers(0, 2 ** 16)))
    x = _values(rng, shape, dtype)
    source_shape = list(shape)
    source_shape[d] = count
    source = _values(rng, source_shape, dtype)
    index = rng.integers(0, shape[d], count)

    def fn(a, i, s):
        return (a * 2).index_add_(d, i, s * 3, alpha=alpha) + 1
    tensors = [strata.tensor(v) for v in (x, index, source)]
    got = _lowered(fn, *tensors)(*tensors)[0].numpy()
    eager = fn(*tensors).numpy()
    assert got.tobytes() == eager.tobytes()
    want = fn(*(torch.tensor(v) for v in (x, index, source))).numpy()
    if dtype.startswith("float"):
        np.testing.assert_allclose(eager, want, rtol=1e-5, atol=1e-4, equal_nan=True)
    else:
        np.testing.assert_array_equal(eager, want)


def test_index_add_along_dim_1_raises_eagers_error_first():
    x, source = strata.zeros(2, 3), strata.ones(2, 2)
    compiled = strata.compile(lambda x, i, s: (x * 1).index_add_(1, i, s), backend="inductor")
    message = "index 3 is out of bounds for dimension 1 with size 3"
    with pytest.raises(RuntimeError, match=message):
        compiled(x, strata.tensor([0, 3]), source)
    with pytest.raises(RuntimeError, match=message):
        torch.zeros(2, 3).index_add_(1, torch.tensor([0, 3]), torch.ones(2, 2))
