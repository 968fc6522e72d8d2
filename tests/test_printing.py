"""``repr(tensor)`` is PyTorch's, character for character (with ``torch.`` spelled ``strata.``)."""

import numpy as np
import pytest
import strata
import torch
from helpers import DTYPE_PAIRS
from hypothesis import given
from hypothesis import strategies as st


@pytest.fixture(autouse=True)
def default_printoptions():
    yield
    strata.set_printoptions(profile="default")
    torch.set_printoptions(profile="default")
    strata.set_default_dtype(strata.float32)
    torch.set_default_dtype(torch.float32)


def both(arr, dtype="float32"):
    s_dt, t_dt = DTYPE_PAIRS[dtype]
    return strata.tensor(arr).to(s_dt), torch.tensor(arr).to(t_dt)


def assert_repr(s, t):
    expected = repr(t).replace("torch.", "strata.")
    assert repr(s) == expected, f"\nstrata:\n{s!r}\ntorch:\n{expected}"
    assert str(s) == str(t).replace("torch.", "strata.")


def set_both(**options):
    strata.set_printoptions(**options)
    torch.set_printoptions(**options)


# --- hypothesis: every dtype, shape and magnitude ------------------------------------------------

SCALES = [1e-12, 1e-5, 1e-3, 1.0, 3.7, 1e3, 1e5, 1e9, 1e20]


@st.composite
def arrays(draw):
    ndim = draw(st.integers(0, 3))
    shape = tuple(draw(st.lists(st.integers(0, 5), min_size=ndim, max_size=ndim)))
    dtype = draw(st.sampled_from(sorted(DTYPE_PAIRS)))
    n = int(np.prod(shape))
    seed = draw(st.integers(0, 2 ** 16))
    rng = np.random.default_rng(seed)
    kind = draw(st.sampled_from(["normal", "integral", "mixed_scale"]))
    if kind == "normal":
        values = rng.standard_normal(n) * draw(st.sampled_from(SCALES))
    elif kind == "integral":
        values = rng.integers(-300, 300, n).astype(np.float64)
    else:
        values = rng.standard_normal(n) * rng.choice(SCALES, n)
    if n and draw(st.booleans()):  # specials: nan, +-inf, +-0
        specials = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0])
        mask = rng.random(n) < 0.3
        values[mask] = rng.choice(specials, mask.sum())
    if dtype not in ("float16", "bfloat16", "float32", "float64"):
        values = np.nan_to_num(values, nan=0.0, posinf=100.0, neginf=-100.0)
        values = np.clip(values, -100, 100)
        values = (values != 0) if dtype == "bool" else np.abs(values) if dtype == "uint8" \
            else values
    return values.reshape(shape), dtype


@given(arrays())
def test_repr_matches_torch(case):
    arr, dtype = case
    assert_repr(*both(arr, dtype))


@given(st.integers(1, 2500), st.sampled_from(["float32", "int64", "bool", "float16"]))
def test_long_vectors_summarise_like_torch(n, dtype):
    arr = np.random.default_rng(n).standard_normal(n) * 100
    assert_repr(*both(arr if dtype != "bool" else arr > 0, dtype))


# --- specific layouts ----------------------------------------------------------------------------

CASES = {
    "ints": [1, 2, 3],
    "floats": [1.0, 2.0, 3.0],
    "mixed": [0.1, 123.456, -7.25],
    "sci_large_ratio": [1e-3, 1e5],
    "sci_big": [1e10, 1.0],
    "sci_tiny": [1e-5, 1e-6],
    "negative_zero": [-0.0, 0.0, 1.0],
    "only_zeros": [0.0, -0.0],
    "nan_inf": [float("nan"), float("inf"), -float("inf"), 1.5],
    "nan_only": [float("nan")],
    "int_valued_with_inf": [1.0, float("inf")],
    "bools": [True, False, True],
    "big_ints": [2 ** 40, -3, 7],
    "matrix": [[1.5, -2.25], [3.0, 400.125]],
    "cube": [[[1, 2], [3, 4]], [[5, 6], [7, 8]]],
    "scalar_float": 3.5,
    "scalar_int": 7,
    "scalar_bool": True,
    "scalar_neg_zero": -0.0,
    "scalar_nan": float("nan"),
    "scalar_big": 1.5e12,
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_literal_tensors(name):
    data = CASES[name]
    assert_repr(strata.tensor(data), torch.tensor(data))


@pytest.mark.parametrize("dtype", sorted(DTYPE_PAIRS))
def test_dtype_suffix(dtype):
    arr = np.array([[0, 1, 2], [3, 4, 5]])
    assert_repr(*both(arr, dtype))
    assert_repr(*both(np.array(3), dtype))


@pytest.mark.parametrize("shape", [(0,), (0, 3), (2, 0, 1), (3, 0)])
@pytest.mark.parametrize("dtype", ["float32", "int64", "bool", "float64"])
def test_empty_tensors(shape, dtype):
    assert_repr(*both(np.zeros(shape), dtype))


@pytest.mark.parametrize("shape", [(2000,), (40, 40), (3, 400), (1001,), (11, 11, 11),
                                   (2, 3, 200), (1000,)])
def test_summarised(shape):
    arr = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape) * 1.5
    assert_repr(*both(arr))
    assert_repr(*both(arr, "int64"))


@pytest.mark.parametrize("n", [5, 13, 27, 60, 200])
def test_line_wrapping(n):
    arr = np.linspace(-1000, 1000, n)
    assert_repr(*both(arr))
    assert_repr(*both(arr.reshape(1, -1)))
    assert_repr(*both(np.arange(n) * 12345, "int64"))


@pytest.mark.parametrize("options", [
    dict(precision=2), dict(precision=8), dict(sci_mode=True), dict(sci_mode=False),
    dict(threshold=5), dict(edgeitems=1, threshold=10), dict(linewidth=40), dict(linewidth=200),
    dict(profile="short"), dict(profile="full"), dict(edgeitems=0, threshold=3),
])
def test_printoptions(options):
    set_both(**options)
    for arr in (np.linspace(0, 1e4, 30), np.arange(24.0).reshape(4, 6) / 7,
                np.array([1e-7, 1.0]), np.array(2.5)):
        assert_repr(*both(arr))
    assert_repr(*both(np.arange(30), "int64"))


def test_printoptions_context_manager_restores():
    before = strata.get_printoptions()
    with strata.printoptions(precision=1, linewidth=30):
        assert repr(strata.tensor([1.26])) == "tensor([1.3])"
        assert strata.get_printoptions()["linewidth"] == 30
    assert strata.get_printoptions() == before
    assert repr(strata.tensor([1.26])) == "tensor([1.2600])"


def test_default_dtype_changes_suffixes():
    strata.set_default_dtype(strata.float64)
    torch.set_default_dtype(torch.float64)
    for arr, dtype in ((np.array([1.5, 2.0]), "float64"), (np.array([1.5, 2.0]), "float32"),
                       (np.zeros(0), "float64"), (np.zeros((0, 2)), "float32")):
        assert_repr(*both(arr, dtype))


def test_requires_grad_and_grad_fn():
    s = strata.tensor([1.0, 2.0], requires_grad=True)
    t = torch.tensor([1.0, 2.0], requires_grad=True)
    assert_repr(s, t)
    assert_repr(s * 2, t * 2)
    assert_repr((s + 1).sum(), (t + 1).sum())
    assert_repr(strata.zeros(0, requires_grad=True), torch.zeros(0, requires_grad=True))


def test_suffixes_wrap_at_linewidth():
    arr = np.arange(12.0).reshape(3, 4) * 1.123456
    s = strata.tensor(arr, dtype=strata.float64, requires_grad=True)
    t = torch.tensor(arr, dtype=torch.float64, requires_grad=True)
    assert_repr(s, t)
    assert_repr(s * 3, t * 3)
    long_line = np.arange(15.0) * 1.5
    assert_repr(*both(long_line, "float16"))


@pytest.mark.parametrize("dtype", ["float32", "int64", "bool", "float16"])
@pytest.mark.parametrize("shape", [(2, 3), (), (0,), (4,)])
def test_meta_tensors(dtype, shape):
    s_dt, t_dt = DTYPE_PAIRS[dtype]
    assert_repr(strata.empty(shape, dtype=s_dt, device="meta"),
                torch.empty(shape, dtype=t_dt, device="meta"))


def test_noncontiguous_views_print_their_values():
    arr = np.arange(24.0).reshape(4, 6)
    assert_repr(strata.tensor(arr).t(), torch.tensor(arr).t())
    assert_repr(strata.tensor(arr).expand(2, 4, 6), torch.tensor(arr).expand(2, 4, 6))


def test_format_of_scalars_and_tensors():
    assert f"{strata.tensor(3.14159):.2f}" == "3.14"
    assert f"{strata.tensor([1.0, 2.0])}" == str(torch.tensor([1.0, 2.0]))


def test_suffix_line_breaks_where_torch_breaks():
    # the last line is 59 characters: ", dtype=torch.int32)" still fits in 80, so no new line
    arr = np.array([[0, 1000000, 2, 1, -1000000], [1000000, 0, 0, 0, 1000000]])
    assert_repr(*both(arr, "int32"))
    assert "\n       dtype" not in repr(strata.tensor(arr, dtype=strata.int32))
