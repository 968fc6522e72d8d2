"""The in-place random methods ``random_``, ``bernoulli_``, ``exponential_``, ``geometric_``,
``cauchy_``, ``log_normal_`` and ``Tensor.bernoulli``: errors (type, message, untouched state)
as PyTorch's; distributions by their moments and exact supports on 100K draws (values cannot
match PyTorch's: its CPU generator is MT19937, strata's NumPy's PCG64); dtypes, shapes, seeds,
generators and autograd (other devices and compiled functions: test_random_fills_devices.py)."""

import math
import warnings

import numpy as np
import pytest
import torch
from helpers import dtype_name
from hypothesis import assume, given
from hypothesis import strategies as st

import strata

N = 100_000
SIGMAS = 5          # a mean within this many standard errors of its expectation passes

INTEGERS = ("uint8", "int8", "int16", "int32", "int64")
FLOATS = ("float16", "bfloat16", "float32", "float64")


@pytest.fixture(autouse=True)
def reseed():
    strata.manual_seed(0)
    yield
    strata.manual_seed(0)


def _zeros(m, dtype="float32", shape=(4,)):
    return m.zeros(shape, dtype=getattr(m, dtype))


def _raised(fn, *args):
    """The exception ``fn(*args)`` raises, or None."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            fn(*args)
        except Exception as e:  # noqa: BLE001 - any exception class must be matched
            return e
    return None


# --- errors: torch's type and message, raised before anything changes ------------------------

BAD_CALLS = {
    "exponential_ lambd=0": lambda m: _zeros(m).exponential_(0),
    "exponential_ lambd<0": lambda m: _zeros(m).exponential_(-1.5),
    "exponential_ lambd=nan": lambda m: _zeros(m).exponential_(float("nan")),
    "exponential_ int64": lambda m: _zeros(m, "int64").exponential_(),
    "exponential_ bool": lambda m: _zeros(m, "bool").exponential_(),
    "exponential_ complex": lambda m: _zeros(m, "complex64").exponential_(),
    "exponential_ int64 lambd=0": lambda m: _zeros(m, "int64").exponential_(0),
    "geometric_ p=0": lambda m: _zeros(m).geometric_(0),
    "geometric_ p=1": lambda m: _zeros(m).geometric_(1),
    "geometric_ p>1": lambda m: _zeros(m).geometric_(1.5),
    "geometric_ p<0": lambda m: _zeros(m).geometric_(-0.1),
    "geometric_ p=nan": lambda m: _zeros(m).geometric_(float("nan")),
    "geometric_ bool": lambda m: _zeros(m, "bool").geometric_(0.5),
    "geometric_ complex": lambda m: _zeros(m, "complex64").geometric_(0.5),
    "cauchy_ sigma=0": lambda m: _zeros(m).cauchy_(0, 0),
    "cauchy_ sigma<0": lambda m: _zeros(m).cauchy_(0, -1),
    "cauchy_ sigma=nan": lambda m: _zeros(m).cauchy_(0, float("nan")),
    "cauchy_ int64": lambda m: _zeros(m, "int64").cauchy_(),
    "cauchy_ uint8": lambda m: _zeros(m, "uint8").cauchy_(),
    "cauchy_ bool": lambda m: _zeros(m, "bool").cauchy_(),
    "cauchy_ complex": lambda m: _zeros(m, "complex64").cauchy_(),
    "cauchy_ empty int": lambda m: _zeros(m, "int64", (0,)).cauchy_(),
    "log_normal_ std=0": lambda m: _zeros(m).log_normal_(0, 0),
    "log_normal_ std<0": lambda m: _zeros(m).log_normal_(0, -2),
    "log_normal_ std=nan": lambda m: _zeros(m).log_normal_(0, float("nan")),
    "log_normal_ int64": lambda m: _zeros(m, "int64").log_normal_(),
    "log_normal_ int8": lambda m: _zeros(m, "int8").log_normal_(),
    "log_normal_ complex": lambda m: _zeros(m, "complex64").log_normal_(),
    "random_ from=to": lambda m: _zeros(m).random_(5, 5),
    "random_ from>to": lambda m: _zeros(m).random_(6, 5),
    "random_ to=0": lambda m: _zeros(m).random_(0),
    "random_ to<0": lambda m: _zeros(m).random_(-1),
    "random_ uint8 to": lambda m: _zeros(m, "uint8").random_(0, 257),
    "random_ uint8 from": lambda m: _zeros(m, "uint8").random_(-5, 5),
    "random_ int8 from": lambda m: _zeros(m, "int8").random_(-129, 0),
    "random_ int16 to": lambda m: _zeros(m, "int16").random_(0, 2 ** 15 + 1),
    "random_ int32 to": lambda m: _zeros(m, "int32").random_(0, 2 ** 40),
    "random_ bool to": lambda m: _zeros(m, "bool").random_(0, 3),
    "random_ bool 10": lambda m: _zeros(m, "bool").random_(10),
    "random_ bool from": lambda m: _zeros(m, "bool").random_(2, None),
    "random_ float16 to": lambda m: _zeros(m, "float16").random_(0, 70000),
    "random_ float16 from": lambda m: _zeros(m, "float16").random_(-65505, 0),
    "random_ float16 rounded": lambda m: _zeros(m, "float16").random_(65503, 65504),
    "random_ float16 from, None": lambda m: _zeros(m, "float16").random_(60000, None),
    "random_ float32 from, None": lambda m: _zeros(m).random_(2 ** 24, None),
    "random_ bfloat16 from, None": lambda m: _zeros(m, "bfloat16").random_(2 ** 24, None),
    "random_ complex from, to": lambda m: _zeros(m, "complex64").random_(0, 5),
    "random_ complex from, None": lambda m: _zeros(m, "complex64").random_(5, None),
    "random_ complex": lambda m: _zeros(m, "complex64").random_(),
    "random_ int8 full range": lambda m: _zeros(m, "int8").random_(-2 ** 63, None),
    "random_ int32 full range": lambda m: _zeros(m, "int32").random_(-2 ** 63, None),
    "random_ bool full range": lambda m: _zeros(m, "bool").random_(-2 ** 63, None),
    "random_ float16 full range": lambda m: _zeros(m, "float16").random_(-2 ** 63, None),
    "random_ complex full range": lambda m: _zeros(m, "complex64").random_(-2 ** 63, None),
    "random_ to overflows": lambda m: _zeros(m).random_(2 ** 63),
    "random_ from overflows": lambda m: _zeros(m).random_(-2 ** 63 - 1, 0),
    "random_ float bound": lambda m: _zeros(m).random_(1.5, 3),
    "random_ float to": lambda m: _zeros(m).random_(0, 3.5),
    "random_ bool bound": lambda m: _zeros(m).random_(True),
    "random_ None": lambda m: _zeros(m).random_(None),
    "random_ from_=": lambda m: _zeros(m).random_(from_=1, to=3),
    "random_ three args": lambda m: _zeros(m).random_(0, 1, 2),
    "bernoulli_ p>1": lambda m: _zeros(m).bernoulli_(1.5),
    "bernoulli_ p<0": lambda m: _zeros(m).bernoulli_(-0.1),
    "bernoulli_ p=nan": lambda m: _zeros(m).bernoulli_(float("nan")),
    "bernoulli_ p=None": lambda m: _zeros(m).bernoulli_(None),
    "bernoulli_ complex": lambda m: _zeros(m, "complex64").bernoulli_(0.5),
    "bernoulli_ complex, tensor": lambda m: _zeros(m, "complex64").bernoulli_(m.tensor(0.5)),
    "bernoulli_ probs outside": lambda m: _zeros(m).bernoulli_(m.tensor([0.5, 1.5, 0, 0])),
    "bernoulli_ probs nan": lambda m: _zeros(m).bernoulli_(m.tensor(float("nan"))),
    "bernoulli_ probs int64": lambda m: _zeros(m).bernoulli_(m.ones(4, dtype=m.int64)),
    "bernoulli_ probs bool": lambda m: _zeros(m).bernoulli_(m.ones(4, dtype=m.bool)),
    "bernoulli_ probs complex": lambda m: _zeros(m).bernoulli_(m.ones(4, dtype=m.complex64)),
    "bernoulli_ probs too short": lambda m: _zeros(m).bernoulli_(m.full((2,), 0.5)),
    "bernoulli_ probs too many dims": lambda m: _zeros(m).bernoulli_(m.full((2, 4), 0.5)),
    "bernoulli_ probs empty": lambda m: _zeros(m).bernoulli_(m.zeros(0)),
    "bernoulli p>1": lambda m: _zeros(m).bernoulli(1.5),
    "bernoulli None": lambda m: _zeros(m).bernoulli(None),
    "bernoulli tensor": lambda m: _zeros(m).bernoulli(m.full((4,), 0.5)),
    "bernoulli int64 probs": lambda m: _zeros(m, "int64").bernoulli(),
    "bernoulli complex": lambda m: _zeros(m, "complex64").bernoulli(0.5),
}

# written into one element many times: refused (after a bad argument's error)
OVERLAPS = {
    "exponential_": lambda t: t.exponential_(),
    "exponential_ bad lambd": lambda t: t.exponential_(-1),
    "geometric_": lambda t: t.geometric_(0.5),
    "cauchy_": lambda t: t.cauchy_(),
    "cauchy_ bad sigma": lambda t: t.cauchy_(0, -1),
    "log_normal_": lambda t: t.log_normal_(),
    "random_": lambda t: t.random_(),
    "random_ to": lambda t: t.random_(10),
    "random_ from, to": lambda t: t.random_(5, 2),
    "bernoulli_": lambda t: t.bernoulli_(),
    "bernoulli_ bad p": lambda t: t.bernoulli_(1.5),
    "bernoulli_ probs": lambda t: t.bernoulli_(t.new_full((4,), 0.5)),
}


def _same_error(s_err, t_err):
    """The same class and message (of a Python argument error: up to the arguments it got, as
    PyTorch's parser goes on to say why each overload did not match)."""
    assert t_err is not None, "torch did not raise"
    assert s_err is not None, f"strata did not raise; torch raised {t_err!r}"
    assert type(s_err).__name__ == type(t_err).__name__, f"{s_err!r} != torch's {t_err!r}"
    s_text, t_text = (str(e).replace("strata.", "torch.") for e in (s_err, t_err))
    if isinstance(t_err, TypeError):
        s_text, t_text = (text.split(" - got (")[0] for text in (s_text, t_text))
    assert s_text == t_text, f"\n{s_err}\n!= torch's\n{t_err}"


@pytest.mark.parametrize("name", sorted(BAD_CALLS))
def test_bad_arguments_raise_torchs_error(name):
    _same_error(_raised(lambda: BAD_CALLS[name](strata)), _raised(lambda: BAD_CALLS[name](torch)))


@pytest.mark.parametrize("name", sorted(OVERLAPS))
def test_internal_overlap_is_refused(name):
    def attempt(m):
        return _raised(lambda: OVERLAPS[name](m.zeros(1).expand(4)))
    _same_error(attempt(strata), attempt(torch))


@pytest.mark.parametrize("call", [lambda t: t.exponential_(-1), lambda t: t.random_(3, 1),
                                  lambda t: t.bernoulli_(strata.tensor([0.5, 2.0, 0.5, 0.5])),
                                  lambda t: t.geometric_(1.0), lambda t: t.exponential_()])
def test_an_error_changes_nothing(call):
    """Neither the tensor, its version, nor the generator's state move on an error."""
    for dtype in (strata.float32, strata.int64):
        t = strata.arange(4).to(dtype)
        version, state = t._version, strata.get_rng_state()
        if _raised(call, t) is None:
            continue   # a valid call for this dtype
        assert t.tolist() == [0, 1, 2, 3] and t._version == version
        assert strata.equal(strata.get_rng_state(), state)


def test_empty_tensors_skip_the_dtype_check():
    """As PyTorch's ``CHECK_EMPTY_AND_RETURN``: the kernels' dtype dispatch is never reached."""
    for call in (lambda m: _zeros(m, "int64", (0,)).exponential_(),
                 lambda m: _zeros(m, "int64", (0,)).log_normal_(),
                 lambda m: _zeros(m, "complex64", (0,)).geometric_(0.5),
                 lambda m: _zeros(m, "complex64", (0,)).random_(),
                 lambda m: _zeros(m, "complex64", (0,)).bernoulli_(0.5),
                 lambda m: _zeros(m, "bool", (0,)).random_(-2 ** 63, None),
                 lambda m: _zeros(m, "float32", (0,)).bernoulli_(m.zeros(3))):
        s, t = call(strata), call(torch)
        assert (tuple(s.shape), dtype_name(s.dtype)) == (tuple(t.shape), dtype_name(t.dtype))


def test_random_out_of_exact_range_warns_as_torch():
    for call in (lambda m: _zeros(m, "float16").random_(0, 2 ** 11 + 2),
                 lambda m: _zeros(m, "float64").random_(-2 ** 60, 0)):
        with pytest.warns(UserWarning) as s_warned:
            call(strata)
        with pytest.warns(UserWarning) as t_warned:
            call(torch)
        assert str(s_warned[0].message) in str(t_warned[0].message)


def test_leaf_requiring_grad_raises_before_any_draw():
    calls = (lambda t: t.exponential_(), lambda t: t.geometric_(0.5), lambda t: t.cauchy_(),
             lambda t: t.log_normal_(), lambda t: t.random_(), lambda t: t.random_(5),
             lambda t: t.random_(1, 5), lambda t: t.bernoulli_(),
             lambda t: t.bernoulli_(t.new_full((3,), 0.5)))
    for call in calls:
        s = strata.zeros(3, requires_grad=True)
        state = strata.get_rng_state()
        _same_error(_raised(call, s), _raised(call, torch.zeros(3, requires_grad=True)))
        assert s.tolist() == [0, 0, 0] and s._version == 0
        assert strata.equal(strata.get_rng_state(), state)


# --- autograd: nodes of their own, zero gradients ---------------------------------------------

NODES = {
    "exponential_": lambda t, p: t.exponential_(),
    "geometric_": lambda t, p: t.geometric_(0.5),
    "cauchy_": lambda t, p: t.cauchy_(),
    "log_normal_": lambda t, p: t.log_normal_(),
    "random_": lambda t, p: t.random_(),
    "random_ to": lambda t, p: t.random_(3),
    "random_ from, to": lambda t, p: t.random_(1, 3),
    "random_ from, None": lambda t, p: t.random_(1, None),
    "bernoulli_": lambda t, p: t.bernoulli_(),
    "bernoulli_ probs": lambda t, p: t.bernoulli_(p),
}


@pytest.mark.parametrize("name", sorted(NODES))
def test_non_leaf_records_torchs_node_and_zero_gradients(name):
    results = []
    for m in (strata, torch):
        x = m.ones(3, requires_grad=True)
        p = m.full((3,), 0.5, requires_grad=True)
        y = x * 2
        version = y._version
        out = NODES[name](y, p)
        assert out is y and y._version == version + 1
        (y * 3).sum().backward()
        results.append((type(y.grad_fn).__name__, x.grad.tolist(),
                        None if p.grad is None else p.grad.tolist()))
    assert results[0] == results[1]


def test_bernoulli_method_follows_torchs_autograd():
    s, t = strata.full((3,), 0.5, requires_grad=True), torch.full((3,), 0.5, requires_grad=True)
    assert type(s.bernoulli().grad_fn).__name__ == type(t.bernoulli().grad_fn).__name__
    # bernoulli(p) has no formula: backward through it raises (a NotImplementedError, which is
    # a RuntimeError as PyTorch's)
    s_err = _raised(lambda: s.bernoulli(0.5).sum().backward())
    t_err = _raised(lambda: t.bernoulli(0.5).sum().backward())
    assert isinstance(s_err, type(t_err)) and str(s_err) == str(t_err)


def test_no_grad_allows_a_leaf():
    x = strata.zeros(3, requires_grad=True)
    with strata.no_grad():
        x.exponential_()
    assert x.requires_grad and (x.detach() >= 0).all()


# --- distributions: moments and exact supports on N draws -------------------------------------

def _check_mean(values, mean, var, what):
    got = float(np.mean(values))
    bound = SIGMAS * math.sqrt(var / values.size)
    assert abs(got - mean) <= bound, f"{what}: mean {got}, expected {mean} +- {bound}"


def _check_moments(values, mean, var, what):
    _check_mean(values, mean, var, what)
    # the sample variance's standard error, from the fourth moment
    centred = (values - mean) ** 2
    _check_mean(centred, var, float(np.var(centred)), f"{what} variance")


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("lambd", [0.5, 1.0, 4.0])
def test_exponential_moments(dtype, lambd):
    x = _zeros(strata, dtype, (N,)).exponential_(lambd).numpy().astype(np.float64)
    assert x.min() >= 0
    _check_moments(x, 1 / lambd, 1 / lambd ** 2, f"exponential({lambd})")


@pytest.mark.parametrize("dtype", ["int64", "int16", "float32", "float64"])
@pytest.mark.parametrize("p", [0.1, 0.5, 0.9])
def test_geometric_moments_and_support(dtype, p):
    x = _zeros(strata, dtype, (N,)).geometric_(p).numpy().astype(np.float64)
    assert x.min() >= 1 and np.all(x == np.floor(x))
    _check_moments(x, 1 / p, (1 - p) / p ** 2, f"geometric({p})")


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_cauchy_quartiles(dtype):
    """A Cauchy has no moments: its quartiles are median -+ sigma, so a binomial count of the
    draws below each quantile has a known mean and variance."""
    median, sigma = 1.5, 2.0
    x = _zeros(strata, dtype, (N,)).cauchy_(median, sigma).numpy().astype(np.float64)
    for q, quantile in ((0.25, median - sigma), (0.5, median), (0.75, median + sigma)):
        _check_mean((x < quantile).astype(np.float64), q, q * (1 - q), f"cauchy quantile {q}")


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_log_normal_moments(dtype):
    mean, std = 0.5, 0.75
    x = _zeros(strata, dtype, (N,)).log_normal_(mean, std).numpy().astype(np.float64)
    assert x.min() > 0
    _check_moments(np.log(x), mean, std ** 2, "log of log_normal")
    expected = math.exp(mean + std ** 2 / 2)
    _check_mean(x, expected, (math.exp(std ** 2) - 1) * expected ** 2, "log_normal")


@pytest.mark.parametrize("dtype", ["bool", "uint8", "int8", "int32", "int64", *FLOATS])
@pytest.mark.parametrize("p", [0.0, 0.3, 1.0])
def test_bernoulli_scalar(dtype, p):
    x = _zeros(strata, dtype, (N,)).bernoulli_(p)
    assert x.dtype is getattr(strata, dtype)
    values = x.numpy().astype(np.float64)
    assert set(np.unique(values)) <= {0.0, 1.0}
    if p in (0.0, 1.0):
        assert np.all(values == p)
    else:
        _check_mean(values, p, p * (1 - p), f"bernoulli_({p})")


@pytest.mark.parametrize("probs_dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("dtype", ["bool", "int64", "float32", "float64"])
def test_bernoulli_probabilities_broadcast(dtype, probs_dtype):
    """Each column draws with its own probability (the probabilities broadcast over rows)."""
    probs = strata.tensor([0.0, 0.2, 0.7, 1.0], dtype=getattr(strata, probs_dtype))
    x = _zeros(strata, dtype, (N // 4, 4)).bernoulli_(probs).numpy().astype(np.float64)
    assert np.all(x[:, 0] == 0) and np.all(x[:, 3] == 1)
    for col, p in ((1, 0.2), (2, 0.7)):
        _check_mean(x[:, col], p, p * (1 - p), f"bernoulli_ column {col}")


def test_bernoulli_method():
    probs = strata.full((N,), 0.25)
    x = probs.bernoulli()
    _check_mean(x.numpy().astype(np.float64), 0.25, 0.25 * 0.75, "bernoulli()")
    y = strata.zeros(N, dtype=strata.float64).bernoulli(0.6)
    assert y.dtype is strata.float64 and probs.tolist()[:3] == [0.25] * 3
    _check_mean(y.numpy(), 0.6, 0.24, "bernoulli(p)")
    assert strata.zeros(3).bernoulli(p=1).tolist() == [1, 1, 1]


def _uniform_integers(x, low, high):
    """``x`` holds every integer of [low, high] (a small range) in equal shares."""
    values = x.numpy().astype(np.float64)
    assert values.min() == low and values.max() == high
    assert np.all(values == np.floor(values))
    n = high - low + 1
    _check_mean(values, (low + high) / 2, (n * n - 1) / 12, f"random_ in [{low}, {high}]")


@pytest.mark.parametrize("dtype", [*INTEGERS, *FLOATS])
def test_random_from_to(dtype):
    low = 0 if dtype == "uint8" else -7
    _uniform_integers(_zeros(strata, dtype, (N,)).random_(low, 13), low, 12)
    _uniform_integers(_zeros(strata, dtype, (N,)).random_(9), 0, 8)
    _uniform_integers(_zeros(strata, dtype, (N,)).random_(to=2), 0, 1)


def test_random_bool():
    _uniform_integers(_zeros(strata, "bool", (N,)).random_(), 0, 1)
    _uniform_integers(_zeros(strata, "bool", (N,)).random_(0, 2), 0, 1)
    assert _zeros(strata, "bool", (N,)).random_(1, None).all()


# random_()'s range per dtype: [0, max] for integers, [0, 2**digits] for floats
DEFAULT_TOP = {"uint8": 255, "int8": 127, "int16": 2 ** 15 - 1, "int32": 2 ** 31 - 1,
               "int64": 2 ** 63 - 1, "float16": 2 ** 11, "bfloat16": 2 ** 8,
               "float32": 2 ** 24, "float64": 2 ** 53}


@pytest.mark.parametrize("dtype", sorted(DEFAULT_TOP))
def test_random_default_range(dtype):
    top = DEFAULT_TOP[dtype]
    x = _zeros(strata, dtype, (N,)).random_().numpy()
    values = x.astype(np.float64)
    assert values.min() >= 0 and values.max() <= top
    if top <= 2 ** 11:   # small ranges: both ends are drawn
        assert values.min() == 0 and values.max() == top
    else:
        _check_mean(values / top, 0.5, 1 / 12, f"random_() of {dtype}")
    # (from, None) is the same range from ``from`` on
    y = _zeros(strata, dtype, (N,)).random_(3, None).numpy().astype(np.float64)
    assert y.min() >= 3 and y.max() <= top


def test_random_full_int64_range():
    x = _zeros(strata, "int64", (N,)).random_(-2 ** 63, None).numpy()
    assert (x < 0).any() and (x > 0).any()
    _check_mean(x / 2.0 ** 63, 0.0, 1 / 3, "random_ over int64")
    f = _zeros(strata, "float32", (N,)).random_(-2 ** 63, None).numpy()
    assert np.abs(f).max() <= 2.0 ** 63


@pytest.mark.filterwarnings("ignore:.*out of bounds")
def test_random_rounded_bounds_stay_inside():
    """A float draw that rounds to ``to`` would leave [from, to): the bounds move inward as
    PyTorch's ``update_from``/``update_to`` (float16 holds multiples of 32 near 65504)."""
    x = _zeros(strata, "float16", (N,)).random_(60000, 65504).numpy().astype(np.float64)
    assert x.min() >= 60000 and x.max() < 65504
    y = _zeros(strata, "float32", (N,)).random_(2 ** 24 + 1, 2 ** 24 + 3).numpy()
    assert set(np.unique(y.astype(np.float64))) <= {2.0 ** 24, 2.0 ** 24 + 2}


# --- dtypes, shapes, layouts, seeds and generators ---------------------------------------------

CALLS = {
    "exponential_": (lambda t, g: t.exponential_(2.0, generator=g), FLOATS),
    "geometric_": (lambda t, g: t.geometric_(0.4, generator=g), INTEGERS + FLOATS),
    "cauchy_": (lambda t, g: t.cauchy_(1.0, 0.5, generator=g), FLOATS),
    "log_normal_": (lambda t, g: t.log_normal_(0.0, 0.5, generator=g), FLOATS),
    "random_": (lambda t, g: t.random_(generator=g), ("bool",) + INTEGERS + FLOATS),
    "random_ to": (lambda t, g: t.random_(100, generator=g), INTEGERS + FLOATS),
    "random_ from, to": (lambda t, g: t.random_(-3, 4, generator=g), INTEGERS[1:] + FLOATS),
    "bernoulli_": (lambda t, g: t.bernoulli_(0.3, generator=g), ("bool",) + INTEGERS + FLOATS),
    "bernoulli_ probs": (lambda t, g: t.bernoulli_(t.float().new_tensor(0.3), generator=g),
                         ("bool",) + INTEGERS + FLOATS),
}


@given(name=st.sampled_from(sorted(CALLS)), data=st.data(),
       shape=st.lists(st.integers(0, 5), min_size=0, max_size=3).map(tuple),
       transposed=st.booleans())
def test_dtype_shape_and_layout_are_kept(name, data, shape, transposed):
    call, dtypes = CALLS[name]
    dtype = getattr(strata, data.draw(st.sampled_from(dtypes)))
    t = strata.zeros(shape, dtype=dtype)
    if transposed and t.ndim >= 2:
        t = t.transpose(0, 1)
    strides, version = t.stride(), t._version
    out = call(t, None)
    assert out is t and t.dtype is dtype and t.stride() == strides
    assert t._version == version + 1
    t_torch = torch.zeros(shape, dtype=getattr(torch, dtype_name(dtype)))
    if transposed and t_torch.ndim >= 2:
        t_torch = t_torch.transpose(0, 1)
    assert tuple(call(t_torch, None).shape) == tuple(t.shape)


@pytest.mark.parametrize("name", sorted(CALLS))
def test_same_seed_same_values_and_generators_are_separate(name):
    call, dtypes = CALLS[name]
    dtype = getattr(strata, dtypes[-1])

    def draw(g=None):
        return call(strata.zeros(64, dtype=dtype), g).tolist()
    strata.manual_seed(7)
    first = draw()
    assert draw() != first                        # the stream moved on
    strata.manual_seed(7)
    assert draw() == first
    state = strata.get_rng_state()
    g1, g2 = strata.Generator().manual_seed(3), strata.Generator().manual_seed(3)
    assert draw(g1) == draw(g2)
    assert strata.equal(strata.get_rng_state(), state)   # the default generator did not move


def test_a_strided_tensor_fills_every_element():
    base = strata.full((6, 8), -1.0)
    view = base[::2, 1::3]
    view.exponential_()
    mask = np.zeros((6, 8), bool)
    mask[::2, 1::3] = True
    values = base.numpy()
    assert np.all(values[~mask] == -1) and np.all(values[mask] >= 0)


def test_numpy_numbers_are_accepted_as_torch_does():
    for m in (strata, torch):
        x = m.zeros(1000)
        assert set(x.random_(np.int64(2), np.int32(4)).unique().tolist()) == {2.0, 3.0}
        assert x.bernoulli_(np.float32(1.0)).tolist() == [1.0] * 1000
        assert x.bernoulli(np.float64(0.0)).tolist() == [0.0] * 1000
        assert x.exponential_(np.float64(2.0)).min() >= 0


_EDGES = [s * (2 ** k + d) for k in (7, 8, 11, 15, 16, 24, 31, 32, 53, 62) for d in (-1, 0, 1)
          for s in (1, -1)] + [2 ** 63 - 1, -2 ** 63, 65504, 65505, 65472]
_BOUNDS = st.one_of(st.integers(-300, 300), st.sampled_from(_EDGES))


@given(dtype=st.sampled_from(("bool", *INTEGERS, *FLOATS)), low=_BOUNDS,
       high=st.one_of(st.none(), _BOUNDS))
def test_random_bounds_match_torch(dtype, low, high):
    """Any bounds: the same error as PyTorch's (message included), or draws inside them."""
    assume(not (dtype in FLOATS and low == 2 ** 63 - 1))   # PyTorch never returns (below)

    def call(m):
        return _zeros(m, dtype, (256,)).random_(low, high)
    s_err, t_err = _raised(call, strata), _raised(call, torch)
    if t_err is not None or s_err is not None:
        _same_error(s_err, t_err)
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        values = call(strata).double().numpy()
    if dtype in FLOATS:   # a draw rounds to the dtype, as PyTorch's (even below ``from``)
        low = strata.tensor(low, dtype=strata.int64).to(getattr(strata, dtype)).item()
    top = float(high) if high is not None else math.inf
    assert np.all(values >= low) and np.all(values <= top)
    if high is not None and dtype not in FLOATS:
        assert np.all(values < high)


@pytest.mark.parametrize("dtype", FLOATS)
def test_random_from_int64_max_into_a_float_is_refused(dtype):
    """PyTorch's ``update_from`` overflows there (``from + 1``) and loops for ever; strata
    refuses it as any ``from`` past the float's exact integers."""
    with pytest.raises(RuntimeError, match="random_ expects 'from' casted to dtype to be less "
                                           "than or equal to 'to_inc'"):
        _zeros(strata, dtype).random_(2 ** 63 - 1, None)
