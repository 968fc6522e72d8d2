"""Reductions, scans and sorting beyond the op database: PyTorch's errors, the Python API's
overloads and named tuples, and hypothesis sweeps over shapes, dims and dtypes."""

import pickle

import numpy as np
import pytest
import strata
import torch
from helpers import assert_same, check, check_error
from hypothesis import given
from hypothesis import strategies as st

nan, inf = float("nan"), float("inf")
F = np.arange(12, dtype=np.float32).reshape(3, 4) - 5
E = np.zeros((0, 3), dtype=np.float32)
I = np.arange(6).reshape(2, 3)
B = np.array([True, False, True])
S0 = np.array(3.0, dtype=np.float32)


# --- errors: same class as PyTorch, PyTorch's words, inputs untouched ---------------------------

@pytest.mark.parametrize("fn,x,match", [
    (lambda m, x: x.mean(), I, r"mean\(\): could not infer output dtype\. Input dtype must be "
                               r"either a floating point or complex dtype\. Got: Long"),
    (lambda m, x: x.mean(dtype=m.int32), F, r"Optional dtype must be .* Got: Int"),
    (lambda m, x: x.mean(), B, "Got: Bool"),
    (lambda m, x: m.nanmean(x), I, r"nanmean\(\): expected input to have floating point"),
    (lambda m, x: x.sum(2), F, r"Dimension out of range \(expected to be in range of "
                               r"\[-2, 1\], but got 2\)"),
    (lambda m, x: x.sum((0, -2)), F, "dim 0 appears multiple times in the list of dims"),
    (lambda m, x: x.amax(), E, r"amax\(\): Expected reduction dim to be specified for "
                               r"input.numel\(\) == 0"),
    (lambda m, x: x.amax(-2), E, r"amax\(\): Expected reduction dim -2 to have non-zero size"),
    (lambda m, x: x.amin((1, 0)), E, "amin\\(\\): Expected reduction dim 0 to have non-zero"),
    (lambda m, x: x.max(), E, r"max\(\): Expected reduction dim to be specified"),
    (lambda m, x: x.min(-2), E, r"min\(\): Expected reduction dim 0 to have non-zero size"),
    (lambda m, x: x.argmax(), E, r"argmax\(\): Expected reduction dim to be specified"),
    (lambda m, x: x.argmin(0), E, r"argmin\(\): Expected reduction dim 0 to have non-zero"),
    (lambda m, x: x.argmax(), B, r"argmax\(\): does not support bool input"),
    (lambda m, x: m.aminmax(x), E, "cannot compute aminmax over an empty dimension"),
    (lambda m, x: m.aminmax(x, dim=0), E, "aminmax: Expected reduction dim 0 to have non-zero"),
    (lambda m, x: x.std(), I, "std and var only support floating point and complex dtypes"),
    (lambda m, x: x.var(0), B, "std and var only support floating point"),
    (lambda m, x: x.norm(), I, "linalg.vector_norm: Expected a floating point or complex "
                               "tensor as input. Got Long"),
    (lambda m, x: x.norm(dtype=m.int64), F, "dtype should be floating point or complex, "
                                            "but got Long"),
    (lambda m, x: x.norm(dtype=m.float16), F, r"the dtype of the input \(Float\) should be "
                                              r"convertible without narrowing"),
    (lambda m, x: x.norm(inf), E, "cannot compute the inf norm on an empty tensor"),
    (lambda m, x: x.norm(-1, dim=0), E, "cannot compute the -1 norm on the dimension 0"),
    (lambda m, x: x.logcumsumexp(0), I, "\"logcumsumexp_out_cpu\" not implemented for 'Long'"),
    (lambda m, x: x.cumsum(2), F, "Dimension out of range"),
    (lambda m, x: x.cummax(-3), F, "Dimension out of range"),
    (lambda m, x: m.diff(x), S0, "diff expects input to be at least one-dimensional"),
    (lambda m, x: m.diff(x, -1), F, "order must be non-negative but got -1"),
    (lambda m, x: m.diff(x, prepend=m.ones(3)), F,
     "diff expects prepend or append to be the same dimension as input"),
    (lambda m, x: m.diff(x, dim=0, append=m.ones(1, 3)), F,
     r"input.size\(1\) = 4, but got tensor.size\(1\) = 3"),
    (lambda m, x: x.prod((0, 1)), F, None),
])
def test_reduction_errors(fn, x, match):
    check_error(fn, x, match=match)


@pytest.mark.parametrize("fn,x,match", [
    (lambda m, x: x.sort(2), F, "Dimension out of range"),
    (lambda m, x: x.topk(5), F, "selected index k out of range"),
    (lambda m, x: x.topk(-1), F, "selected index k out of range"),
    (lambda m, x: x.topk(2), S0, "selected index k out of range"),
    (lambda m, x: x.topk(1), B, "topk does not support bool dtypes on CPU"),
    (lambda m, x: x.kthvalue(0), F, r"kthvalue\(\): selected number k out of range for "
                                    r"dimension 1"),
    (lambda m, x: x.kthvalue(4, 0), F, "selected number k out of range for dimension 0"),
    (lambda m, x: x.kthvalue(1), B, "\"kthvalue_cpu\" not implemented for 'Bool'"),
    (lambda m, x: x.kthvalue(1, 0), E, r"kthvalue\(\): Expected reduction dim 0 to have"),
    (lambda m, x: x.median(), B, "\"median_cpu\" not implemented for 'Bool'"),
    (lambda m, x: x.median(0), B, "\"median_out\" not implemented for 'Bool'"),
    (lambda m, x: x.nanmedian(0), E, r"nanmedian\(\): Expected reduction dim 0 to have"),
    (lambda m, x: x.mode(0), E, r"mode\(\): Expected reduction dim 0 to have non-zero size"),
    (lambda m, x: m.unique(x, dim=0), S0, "Dimension specified as 0 but tensor has no "
                                          "dimensions"),
    (lambda m, x: m.unique(x, dim=1), E, "There are 0 sized dimensions, and they aren't "
                                         "selected"),
    (lambda m, x: m.unique_consecutive(x, dim=2), F, "Dimension out of range"),
    (lambda m, x: m.bincount(x), np.array([1, -1]), "bincount only supports 1-d "
                                                    "non-negative integral inputs."),
    (lambda m, x: m.bincount(x), I, "bincount only supports 1-d non-negative"),
    (lambda m, x: m.bincount(x), F[0], "\"bincount_cpu\" not implemented for 'Float'"),
    (lambda m, x: m.bincount(x), B, "\"bincount_cpu\" not implemented for 'Bool'"),
    (lambda m, x: m.bincount(x, minlength=-1), I[0], "minlength should be >= 0"),
    (lambda m, x: m.bincount(x, m.ones(2)), I[0], "weights should be 1-d and have the same "
                                                  "length as input"),
    (lambda m, x: m.histc(x), I, "\"histogram_cpu\" not implemented for 'Long'"),
    (lambda m, x: m.histc(x), B, "\"linspace_cpu\" not implemented for 'Bool'"),
    (lambda m, x: m.histc(x, bins=0), F, r"torch.histogram\(\): bins must be > 0, but got 0 "
                                         r"for dimension 0"),
    (lambda m, x: m.histc(x, 4, 3, 1), F, "torch.histc: max must be larger than min"),
    (lambda m, x: m.histc(x, 4, nan, 1), F, r"torch.histc: range of \[nan, 1\] is not finite"),
    (lambda m, x: m.histc(x), np.array([1, inf], np.float32), r"range of \[1, inf\] is not "
                                                              r"finite"),
    (lambda m, x: m.histc(x), np.array([1, nan], np.float32), "is not finite"),
])
def test_sorting_errors(fn, x, match):
    check_error(fn, x, match=match)


def test_meta_validates_like_cpu():
    meta = strata.zeros(0, 3, device="meta")
    with pytest.raises(IndexError, match="Expected reduction dim 0 to have non-zero size"):
        meta.max(0)
    with pytest.raises(RuntimeError, match="selected index k out of range"):
        strata.ones(2, device="meta").topk(3)


@pytest.mark.parametrize("fn", [
    lambda m, x: m.unique(x), lambda m, x: m.unique(x, dim=0),
    lambda m, x: m.unique_consecutive(x), lambda m, x: m.bincount(x),
])
def test_data_dependent_ops_refuse_meta_tensors(fn):
    t = torch.zeros(3, dtype=torch.int64, device="meta")
    with pytest.raises(NotImplementedError):
        fn(torch, t)
    s = strata.zeros(3, dtype=strata.int64, device="meta")
    with pytest.raises(NotImplementedError, match="output shape depends on the values"):
        fn(strata, s)


def test_meta_still_validates_data_dependent_ops():
    with pytest.raises(RuntimeError, match="minlength should be >= 0"):
        strata.bincount(strata.zeros(3, dtype=strata.int64, device="meta"), minlength=-1)


# --- the Python API: overloads, named tuples, out= ------------------------------------------------

def test_max_overloads():
    check(lambda m, x, y: (m.max(x), m.max(x, 1), m.max(x, y), x.max(other=y), x.max(dim=0)),
          F, F[::-1].copy())
    check(lambda m, x, y: (m.min(x), x.min(0, True), m.min(x, y)), F, F[:, :1].copy())


@pytest.mark.parametrize("name,call,fields", [
    ("max", lambda m, x: m.max(x, 1), ("values", "indices")),
    ("min", lambda m, x: x.min(dim=0), ("values", "indices")),
    ("aminmax", lambda m, x: m.aminmax(x), ("min", "max")),
    ("sort", lambda m, x: x.sort(), ("values", "indices")),
    ("topk", lambda m, x: x.topk(2), ("values", "indices")),
    ("kthvalue", lambda m, x: x.kthvalue(2), ("values", "indices")),
    ("median", lambda m, x: x.median(1), ("values", "indices")),
    ("nanmedian", lambda m, x: x.nanmedian(1), ("values", "indices")),
    ("mode", lambda m, x: x.mode(), ("values", "indices")),
    ("cummax", lambda m, x: x.cummax(1), ("values", "indices")),
    ("cummin", lambda m, x: m.cummin(x, 0), ("values", "indices")),
])
def test_named_tuples(name, call, fields):
    s, t = check(call, F)
    assert type(s).__name__ == type(t).__name__ == name
    assert s._fields == fields  # torch's structseq has the same attributes (checked below)
    assert isinstance(s, strata.return_types.__dict__[name])
    assert repr(s).startswith(f"strata.return_types.{name}(\n{fields[0]}=tensor(")
    for field in fields:
        assert_same(getattr(s, field), getattr(t, field))
    again = pickle.loads(pickle.dumps(s))
    assert type(again) is type(s)
    assert_same(again[0], t[0])


def test_out_arguments():
    def fn(m, x):
        v, i = m.empty(3), m.empty(3, dtype=m.int64)
        r = m.max(x, 1, out=(v, i))
        total = m.empty(4)
        m.sum(x, 0, out=total)
        return r.values, r.indices, v, i, total
    check(fn, F)


def test_unique_return_shapes():
    check(lambda m, x: (m.unique(x), m.unique(x, return_inverse=True),
                        m.unique(x, return_counts=True), m.unique_consecutive(x)),
          np.array([[2, 1], [2, 3]]))


def test_std_legacy_and_correction_forms():
    check(lambda m, x: (x.std(0, True), x.std(0, False, True), x.var(unbiased=True),
                        m.std(x, correction=2), m.var_mean(x, 1, keepdim=True)), F)


def test_norm_matrix_orders_use_linalg():
    check(lambda m, x: (m.norm(x, p="nuc"), x.norm("fro", dim=(0, 1))), F, atol=1e-4)


def test_reductions_do_not_write_their_input():
    x = strata.tensor(F)
    version = x._version
    for out in (x.sum(0), x.cumsum(1), x.sort(1).values, x.max(1).values, x.mean()):
        assert out.data_ptr() != x.data_ptr()
    assert x._version == version
    np.testing.assert_array_equal(x.numpy(), F)


def test_logsumexp_is_stable_in_float64():
    x = np.array([[1000.0, 1000.0], [-1000.0, -1000.5], [-inf, -inf], [inf, 1.0]])
    check(lambda m, t: m.logsumexp(t, 1), x)


def test_topk_partial_path_matches_full_sort():
    rng = np.random.default_rng(0)
    x = strata.tensor(rng.standard_normal((3, 500)).astype(np.float32))
    for k, largest in ((5, True), (7, False), (124, True)):
        values, indices = x.topk(k, 1, largest)
        full_values, full_indices = x.sort(1, descending=largest)
        np.testing.assert_array_equal(values.numpy(), full_values.numpy()[:, :k])
        np.testing.assert_array_equal(indices.numpy(), full_indices.numpy()[:, :k])


# --- hypothesis: random shapes, dims and dtypes against PyTorch ---------------------------------

DTYPES = {"float64": np.float64, "float32": np.float32, "int64": np.int64, "int32": np.int32,
          "uint8": np.uint8, "bool": np.bool_}


@st.composite
def arrays_and_dim(draw, dtypes=tuple(DTYPES), min_side=0):
    shape = tuple(draw(st.lists(st.integers(min_side, 4), min_size=0, max_size=3)))
    dtype = DTYPES[draw(st.sampled_from(dtypes))]
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 16)))
    if dtype is np.bool_:
        x = rng.random(shape) < 0.5
    elif np.issubdtype(dtype, np.integer):
        x = rng.integers(0 if dtype is np.uint8 else -3, 4, shape).astype(dtype)
    else:
        x = (np.round(rng.standard_normal(shape) * 4) / 4).astype(dtype)  # coarse: ties happen
    x = np.asarray(x)  # a 0-d draw comes back as a NumPy scalar
    ndim = len(shape)
    dim = draw(st.integers(-ndim, ndim - 1)) if ndim else draw(st.sampled_from([0, -1]))
    return x, dim, draw(st.booleans())


@given(arrays_and_dim())
def test_sum_prod_cumsum_any_match_torch(case):
    x, dim, keepdim = case
    check(lambda m, t: (t.sum(dim, keepdim), t.sum(), t.prod(dim, keepdim), t.cumsum(dim),
                        t.any(dim, keepdim), t.all()), x)


@given(arrays_and_dim(dtypes=("float64", "float32")))
def test_float_reductions_match_torch(case):
    x, dim, keepdim = case
    check(lambda m, t: (t.mean(dim, keepdim), t.var(dim, keepdim=keepdim), t.logsumexp(dim),
                        t.norm(dim=dim, keepdim=keepdim), t.logcumsumexp(dim),
                        t.nansum(dim, keepdim)), x)


@given(arrays_and_dim(dtypes=("float64", "int64", "uint8", "bool"), min_side=1))
def test_selections_match_torch(case):
    x, dim, keepdim = case
    numeric = x.dtype != np.bool_
    check(lambda m, t: (t.amax(dim, keepdim), t.max(dim, keepdim), t.min(dim, keepdim),
                        t.sort(dim=dim, stable=True), t.sort(dim=dim, descending=True, stable=True),
                        t.cummax(dim), t.cummin(dim), t.mode(dim, keepdim)), x)
    if numeric:
        check(lambda m, t: (t.argmax(dim, keepdim), t.argmin(), t.median(dim, keepdim),
                            t.median()), x)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16", "int8", "uint8",
                                   "int64", "bool"])
@pytest.mark.parametrize("shape", [(), (1,), (1, 1)])
def test_sum_of_one_element_matches_torch(dtype, shape):
    """The one-element fast path of ``x.sum()``: the value plus 0 (-0.0 sums to +0.0), NaN and
    inf kept, integers and bool summed into int64."""
    for value in (-0.0, 1.5, float("nan"), float("-inf"), 7.0):
        if dtype in ("bool", "int8", "uint8", "int64") and not np.isfinite(value):
            continue
        a = np.array(value, dtype="float64").reshape(shape)
        check(lambda m, x: x.to(getattr(m, dtype)).sum(), a)
        got = strata.tensor(a).to(getattr(strata, dtype)).sum()
        assert np.signbit(got.float().item()) == np.signbit(
            torch.tensor(a).to(getattr(torch, dtype)).sum().float().item())


@pytest.mark.parametrize("call", [
    lambda m: m.unique(m.empty(3, device="meta")),
    lambda m: m.unique(m.empty(2, 3, device="meta"), dim=1),
    lambda m: m.unique_consecutive(m.empty(3, device="meta")),
    lambda m: m.bincount(m.empty(3, dtype=m.int64, device="meta")),
])
def test_data_dependent_ops_refuse_meta_tensors_as_torch(call):
    """Ops whose output shape depends on the values raise NotImplementedError on ``meta`` naming
    the aten op, as PyTorch's (which has no meta kernel for them)."""
    with pytest.raises(NotImplementedError) as expected:
        call(torch)
    with pytest.raises(NotImplementedError, match=r"^aten::\w+: attempted to run this operator "
                                                  r"with Meta tensors") as got:
        call(strata)
    assert str(got.value).split(":")[:3] == str(expected.value).split(":")[:3]   # aten::<op>


# --- histogramdd (frontend/reductions.py) ---------------------------------------------------------
@given(st.integers(0, 40), st.integers(1, 3), st.integers(1, 5), st.booleans(), st.booleans(),
       st.booleans())
def test_histogramdd_matches_torch(n, dims, bins, with_range, weighted, density):
    rng = np.random.default_rng(n * 7 + dims)
    # a quarter grid: points on the edges and on the ends of the range
    points = np.round(rng.uniform(-1, 1, (n, dims)) * 4) / 4
    kwargs = {"bins": bins, "density": density}
    if with_range:
        kwargs["range"] = [v for _ in range(dims) for v in (-0.5, 0.75)]
    weight = rng.uniform(0, 2, n) if weighted else None
    out = []
    for m in (torch, strata):
        w = None if weight is None else m.tensor(weight, dtype=m.float64)
        out.append(m.histogramdd(m.tensor(points, dtype=m.float64), weight=w, **kwargs))
    want, got = out
    np.testing.assert_allclose(got.hist.numpy(), want.hist.numpy(), rtol=1e-12, atol=1e-12,
                               equal_nan=True)
    for e, f in zip(got.bin_edges, want.bin_edges, strict=True):
        np.testing.assert_array_equal(e.numpy(), f.numpy())


def test_histogramdd_with_edges_and_its_errors():
    x = [[0.0, 1.0], [1.0, 2.0], [2.0, 0.0], [2.0, 2.0], [0.5, 0.5]]
    check(lambda m: m.histogramdd(m.tensor(x), bins=[m.tensor([0.0, 1.0, 2.0]),
                                                     m.tensor([0.0, 0.5, 3.0])],
                                  weight=m.arange(5.0)).hist)
    for bad in (lambda m: m.histogramdd(m.tensor(x), bins=[2]),
                lambda m: m.histogramdd(m.tensor(x).long(), bins=2),
                lambda m: m.histogramdd(m.tensor(x), bins=0),
                lambda m: m.histogramdd(m.tensor(x), bins=2, range=[0.0, 1.0]),
                lambda m: m.histogramdd(m.tensor(x), bins=2, weight=m.ones(4)),
                lambda m: m.histogramdd(m.tensor(x[0]), bins=2),
                lambda m: m.histogramdd(m.tensor(x), bins=2, range=[1.0, 0.0, 0.0, 1.0])):
        check_error(bad, match=".")


@pytest.mark.parametrize("dtype", ["float32", "bool"])
def test_bincount_refuses_non_integer_input_as_pytorch(dtype):
    check_error(lambda m: m.bincount(m.tensor([1, 0, 2]).to(getattr(m, dtype))),
                match="\"bincount_cpu\" not implemented for")
