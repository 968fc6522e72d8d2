"""Random numbers: seeding and generators give reproducible, independent streams; distributions
have the right moments and bounds (loose statistical tolerances); shapes, dtypes and errors match
PyTorch (values cannot: PyTorch uses MT19937, strata NumPy's PCG64)."""

import numpy as np
import pytest
import strata
import torch
from helpers import check_outcome

DRAWS = {
    "rand": lambda m, g: m.rand(3, 4, generator=g),
    "randn": lambda m, g: m.randn(5, generator=g),
    "randint": lambda m, g: m.randint(0, 100, (6,), generator=g),
    "randperm": lambda m, g: m.randperm(10, generator=g),
    "normal": lambda m, g: m.normal(2.0, 3.0, (4,), generator=g),
    "normal_tensor": lambda m, g: m.normal(m.zeros(4), m.ones(4), generator=g),
    "bernoulli": lambda m, g: m.bernoulli(m.full((8,), 0.5), generator=g),
    "bernoulli_p": lambda m, g: m.bernoulli(m.ones(8), 0.3, generator=g),
    "multinomial": lambda m, g: m.multinomial(m.ones(10), 5, generator=g),
    "rand_like": lambda m, g: m.rand_like(m.ones(3), generator=g),
    "randint_like": lambda m, g: m.randint_like(m.ones(3), 10, generator=g),
    "normal_": lambda m, g: m.empty(4).normal_(generator=g),
    "uniform_": lambda m, g: m.empty(4).uniform_(-1, 1, generator=g),
}


@pytest.fixture(autouse=True)
def reseed():
    yield
    strata.manual_seed(0)


@pytest.mark.parametrize("name", sorted(DRAWS))
def test_same_seed_same_stream(name):
    draw = DRAWS[name]
    strata.manual_seed(1234)
    first = [draw(strata, None).tolist() for _ in range(3)]
    strata.manual_seed(1234)
    assert [draw(strata, None).tolist() for _ in range(3)] == first
    g = strata.Generator().manual_seed(1234)
    with_generator = [draw(strata, g).tolist() for _ in range(3)]
    g.manual_seed(1234)
    assert [draw(strata, g).tolist() for _ in range(3)] == with_generator


@pytest.mark.parametrize("name", sorted(DRAWS))
def test_shapes_and_dtypes_match_torch(name):
    s = DRAWS[name](strata, strata.Generator().manual_seed(0))
    t = DRAWS[name](torch, torch.Generator().manual_seed(0))
    assert tuple(s.shape) == tuple(t.shape)
    assert str(s.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]


def test_generators_are_independent():
    g1 = strata.Generator().manual_seed(7)
    g2 = strata.Generator().manual_seed(7)
    a = strata.rand(5, generator=g1).tolist()
    strata.rand(100)  # the default generator advances; g2 must not
    strata.rand(3, generator=strata.Generator().manual_seed(99))
    assert strata.rand(5, generator=g2).tolist() == a
    strata.manual_seed(3)
    x = strata.rand(4).tolist()
    strata.manual_seed(3)
    strata.rand(10, generator=g1)  # drawing from g1 leaves the default stream alone
    assert strata.rand(4).tolist() == x


def test_different_seeds_differ():
    a = strata.rand(8, generator=strata.Generator().manual_seed(1)).tolist()
    b = strata.rand(8, generator=strata.Generator().manual_seed(2)).tolist()
    assert a != b


def test_rng_state_round_trip():
    strata.manual_seed(5)
    state = strata.get_rng_state()
    assert state.dtype is strata.uint8 and state.ndim == 1
    a = strata.randn(6).tolist()
    strata.rand(50)
    strata.set_rng_state(state)
    assert strata.randn(6).tolist() == a
    assert strata.initial_seed() == 5
    g = strata.Generator().manual_seed(11)
    gs = g.get_state()
    b = strata.randint(0, 1000, (5,), generator=g).tolist()
    g.set_state(gs)
    assert strata.randint(0, 1000, (5,), generator=g).tolist() == b


def test_fork_rng_restores_the_default_stream():
    strata.manual_seed(9)
    expected = strata.rand(3).tolist()
    strata.manual_seed(9)
    with strata.random.fork_rng():
        strata.manual_seed(1)
        strata.rand(100)
    assert strata.rand(3).tolist() == expected
    with strata.random.fork_rng(enabled=False):
        strata.rand(1)
    assert strata.rand(3).tolist() != expected


def test_seeds():
    assert strata.Generator().initial_seed() == torch.Generator().initial_seed()
    assert strata.manual_seed(-1).initial_seed() == 2 ** 64 - 1
    assert strata.manual_seed(2 ** 64 - 1).initial_seed() == 2 ** 64 - 1
    assert strata.manual_seed(1.5).initial_seed() == 1
    assert strata.manual_seed(strata.tensor(3)).initial_seed() == 3
    s = strata.seed()
    assert isinstance(s, int) and 0 <= s < 2 ** 64 and strata.initial_seed() == s
    g = strata.Generator()
    assert g.seed() == g.initial_seed()
    assert isinstance(strata.manual_seed(0), strata.Generator)
    assert strata.default_generator.device == strata.device("cpu")
    assert strata.random.initial_seed() == 0


@pytest.mark.parametrize("expr", [
    "m.manual_seed(2 ** 64)", "m.manual_seed(-2 ** 63 - 1)", "m.manual_seed('3').initial_seed()",
    "m.Generator().manual_seed('3')", "m.Generator('meta')", "m.Generator().device",
    "m.set_rng_state(m.zeros(3))", "m.set_rng_state([1, 2])",
    "m.set_rng_state(m.zeros(3, dtype=m.uint8))", "m.Generator().set_state(m.zeros(3))",
    "m.rand(3, generator=1)", "m.randint(5, (2,), generator=1)",
])
def test_generator_errors(expr):
    check_outcome(lambda m: eval(expr, {"m": m}))


# --- distributions -----------------------------------------------------------------------------

N = 20000


def stats(t):
    a = t.double().numpy()
    return a.mean(), a.std()


def test_rand_uniform():
    for dtype in (strata.float32, strata.float64, strata.float16, strata.bfloat16):
        x = strata.rand(N, dtype=dtype)
        assert x.dtype is dtype
        a = x.float().numpy()
        assert a.min() >= 0 and a.max() < 1 or dtype in (strata.float16, strata.bfloat16)
        mean, std = stats(x)
        assert abs(mean - 0.5) < 0.02 and abs(std - (1 / 12) ** 0.5) < 0.02


def test_randn_normal():
    mean, std = stats(strata.randn(N))
    assert abs(mean) < 0.05 and abs(std - 1) < 0.05
    mean, std = stats(strata.normal(3.0, 2.0, (N,)))
    assert abs(mean - 3) < 0.1 and abs(std - 2) < 0.1
    x = strata.normal(strata.full((N,), -5.0), strata.full((N,), 0.5))
    mean, std = stats(x)
    assert abs(mean + 5) < 0.05 and abs(std - 0.5) < 0.05
    assert strata.normal(strata.full((3,), 5.0), 0.0).tolist() == [5.0, 5.0, 5.0]


def test_randint_bounds_and_coverage():
    x = strata.randint(-3, 4, (N,)).numpy()
    assert x.min() == -3 and x.max() == 3 and set(np.unique(x)) == set(range(-3, 4))
    counts = np.bincount(x + 3)
    assert counts.min() > N / 7 * 0.85
    y = strata.randint(5, (3, 4), dtype=strata.int8)
    assert y.dtype is strata.int8 and y.shape == (3, 4)
    assert 0 <= y.min().item() and y.max().item() < 5


def test_randperm_is_a_permutation():
    for n in (0, 1, 2, 17, 1000):
        p = strata.randperm(n)
        assert p.dtype is strata.int64 and sorted(p.tolist()) == list(range(n))
    assert strata.randperm(1000).tolist() != list(range(1000))


def test_bernoulli_rates():
    x = strata.bernoulli(strata.full((N,), 0.25))
    assert set(np.unique(x.numpy())) <= {0.0, 1.0}
    assert abs(x.numpy().mean() - 0.25) < 0.02
    probs = strata.tensor([0.0, 1.0] * 50)
    assert strata.bernoulli(probs).tolist() == probs.tolist()
    assert abs(strata.bernoulli(strata.ones(N), 0.7).numpy().mean() - 0.7) < 0.02


def test_multinomial_frequencies():
    probs = strata.tensor([0.1, 0.2, 0.7])
    draws = strata.multinomial(probs, N, replacement=True).numpy()
    freq = np.bincount(draws, minlength=3) / N
    assert np.allclose(freq, [0.1, 0.2, 0.7], atol=0.02)
    weights = strata.tensor([[1.0, 0.0, 3.0], [0.0, 5.0, 0.0]])  # unnormalised rows
    rows = strata.multinomial(weights, 1000, replacement=True).numpy()
    assert set(np.unique(rows[0])) <= {0, 2} and set(np.unique(rows[1])) == {1}


def test_multinomial_without_replacement_is_unique():
    for _ in range(20):
        draw = strata.multinomial(strata.rand(10) + 0.01, 10).tolist()
        assert sorted(draw) == list(range(10))
    only = strata.multinomial(strata.tensor([0.0, 1.0, 0.0]), 1).tolist()
    assert only == [1]


@pytest.mark.parametrize("expr", [
    "m.randint(3, 3, (2,))", "m.randint(4, 3, (2,))", "m.randint(1.5, 5, (2,))", "m.randint(5)",
    "m.randint(5, 2)", "m.randint(5, 6, 7)", "m.randint(0, 300, (2,), dtype=m.uint8)",
    "m.randint(-5, 0, (3,), dtype=m.uint8)", "m.randint(0, 3, (2,), dtype=m.bool)",
    "m.randperm(-1)", "m.randperm(2.5)", "m.randperm(5, dtype=m.bool)",
    "m.randperm(300, dtype=m.uint8)", "m.normal(0.0, -1.0, (2,))", "m.normal(m.zeros(2), -1.0)",
    "m.normal(m.zeros(2), m.tensor([1.0, -1.0]))", "m.normal(m.zeros(2), m.ones(3))",
    "m.normal(0.0, 1.0)", "m.normal(m.zeros(2), 1.0, size=(3,))",
    "m.normal(m.zeros(3, dtype=m.int64), 1.0)", "m.bernoulli(m.full((3,), 2.0))",
    "m.bernoulli(m.full((3,), float('nan')))", "m.bernoulli(m.ones(3), 1.3)",
    "m.bernoulli(m.ones(3, dtype=m.int64))", "m.multinomial(m.tensor([0.2, 0.8]), 3)",
    "m.multinomial(m.tensor([0.2, 0.8]), 0)", "m.multinomial(m.tensor([0.2, 0.8]), -1)",
    "m.multinomial(m.tensor([-0.2, 0.8]), 1)", "m.multinomial(m.tensor([0.0, 0.0]), 1)",
    "m.multinomial(m.tensor([float('nan'), 0.0]), 1)",
    "m.multinomial(m.tensor([float('inf'), 0.0]), 1)", "m.multinomial(m.tensor([1, 2]), 1)",
    "m.multinomial(m.ones(2, 2, 2), 1)", "m.multinomial(m.ones(0), 1)",
    "m.multinomial(m.tensor(1.0), 1)", "m.multinomial(m.ones(3, dtype=m.bool), 2)",
    "m.multinomial(m.tensor([0.5, 0.0, 0.0]), 2)", "m.multinomial(m.ones(0, 3), 1)",
    "m.rand(2, dtype=m.int64)", "m.randn(2, dtype=m.int64)", "m.rand(2, dtype=m.bool)",
    "m.rand(2, 3.0)", "m.randn(2.0)", "m.randn(size=3)", "m.rand_like(m.ones(2, dtype=m.int64))",
    "m.empty(3, dtype=m.int64).uniform_()", "m.empty(3).uniform_(2, 1)",
    "m.empty(3, dtype=m.int64).normal_()", "m.empty(3).normal_(0, -1)",
])
def test_random_errors_match_torch(expr):
    check_outcome(lambda m: eval(expr, {"m": m}))


@pytest.mark.parametrize("expr", [
    "m.rand(2, 3).shape", "m.rand((2, 3)).shape", "m.rand(size=(2,)).shape", "m.randn(()).shape",
    "m.rand(0).shape", "m.randn(2, 3, dtype=m.float64).dtype", "m.rand(2, dtype=m.bfloat16).dtype",
    "m.randn(2, dtype=m.float16).dtype", "m.rand(2, out=m.empty(2)).shape",
    "m.randint(5, (3,), dtype=m.float32).dtype", "m.randint(high=5, size=(2,)).shape",
    "m.randint(5, size=(2,)).shape", "m.randint(1, 5, size=(2,)).shape",
    "m.randint(low=1, high=5, size=(2,)).shape", "m.randint(0, 2, (2,), dtype=m.bool).dtype",
    "m.randperm(0)", "m.randperm(5, dtype=m.float32).dtype", "m.normal(0, 1, size=(2,), "
    "dtype=m.float64).dtype", "m.normal(2, 3, (2,)).dtype", "m.normal(m.zeros(2, 1), "
    "m.ones(3)).shape", "m.normal(0, m.ones(3)).shape", "m.normal(m.zeros(3, "
    "dtype=m.float64)).dtype", "m.normal(m.zeros(2), m.ones(2, dtype=m.float64)).dtype",
    "m.normal(0, m.ones(2, dtype=m.float64)).dtype", "m.bernoulli(m.full((3,), 0.5, "
    "dtype=m.float64)).dtype", "m.bernoulli(m.ones(3, dtype=m.int64), 0.5).dtype",
    "m.multinomial(m.ones(3), 5, replacement=True).shape", "m.multinomial(m.ones(3, 4), 2).shape",
    "m.multinomial(m.ones(3, dtype=m.float16), 2).dtype", "m.randn(2, 3, requires_grad=True)."
    "requires_grad", "m.rand(2, requires_grad=True).is_leaf",
    "m.randint(3, (2,), requires_grad=True)",
])
def test_random_signatures(expr):
    check_outcome(lambda m: eval(expr, {"m": m}))
