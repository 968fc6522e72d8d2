"""Cauchy, HalfNormal, HalfCauchy, StudentT, Chi2, Geometric, Multinomial, Gumbel and the
mixed-family KL divergences against torch.distributions: densities, moments, CDFs, KL on the
same parameters; sample shapes, dtypes, reproducibility and statistics; validation errors."""

import itertools
import math

import numpy as np
import pytest
import scipy.stats
import torch
from helpers import check, check_error
from hypothesis import given, settings
from hypothesis import strategies as st
from test_distributions_more import (
    check_error_like_torch,
    check_reproducible,
    check_sample_moments,
    check_samples_and_expand,
)

import strata

rng = np.random.default_rng(7)
N = 20000


def pos(*shape):
    return rng.uniform(0.5, 3.0, shape)


def unit(*shape):
    return rng.uniform(0.1, 0.9, shape)


def counts(total, *shape):
    """Rows of category counts summing to ``total``."""
    return np.stack([np.bincount(rng.integers(0, shape[-1], total), minlength=shape[-1])
                     for _ in range(int(np.prod(shape[:-1])))]).reshape(shape).astype(float)


# name -> (constructor(m, *params), params, a value in the support)
CASES = {
    "Cauchy": (lambda m, a, b: m.distributions.Cauchy(a, b), (rng.standard_normal(4), pos(4)),
               rng.standard_normal(4)),
    "HalfNormal": (lambda m, s: m.distributions.HalfNormal(s), (pos(2, 3),), pos(2, 3)),
    "HalfCauchy": (lambda m, s: m.distributions.HalfCauchy(s), (pos(3),), pos(3)),
    # df on each side of 1 and 2: mean and variance are nan / inf / finite
    "StudentT": (lambda m, df, a, b: m.distributions.StudentT(df, a, b),
                 (np.array([0.7, 1.5, 2.5, 6.0]), rng.standard_normal(4), pos(4)),
                 rng.standard_normal(4)),
    "StudentTDefault": (lambda m, df: m.distributions.StudentT(df), (pos(3),),
                        rng.standard_normal(3)),
    "Chi2": (lambda m, df: m.distributions.Chi2(df), (pos(3),), pos(3)),
    "Geometric": (lambda m, p: m.distributions.Geometric(p), (unit(4),),
                  rng.integers(0, 6, 4).astype(float)),
    "GeometricLogits": (lambda m, x: m.distributions.Geometric(logits=x),
                        (rng.standard_normal(3),), rng.integers(0, 6, 3).astype(float)),
    "Multinomial": (lambda m, p: m.distributions.Multinomial(5, p), (pos(2, 3),), counts(5, 2, 3)),
    "MultinomialLogits": (lambda m, x: m.distributions.Multinomial(4, logits=x),
                          (rng.standard_normal(4),), counts(4, 4)),
    "Gumbel": (lambda m, a, b: m.distributions.Gumbel(a, b), (rng.standard_normal(3), pos(3)),
               rng.standard_normal(3)),
}

PROPERTIES = ("mean", "mode", "variance", "stddev")


def _prop(d, name):
    try:
        return getattr(d, name)
    except NotImplementedError:
        return "NotImplemented"


def _same(s, t, key, rtol=1e-7):
    if isinstance(t, str) or isinstance(s, str):
        assert s == t, key
        return
    np.testing.assert_allclose(s.detach().numpy(), t.detach().numpy(), rtol=rtol, atol=1e-9,
                               equal_nan=True, err_msg=key)
    assert str(s.dtype).split(".")[-1] == str(t.dtype).split(".")[-1], key
    assert tuple(s.shape) == tuple(t.shape), key


def _both(name):
    make, params, _ = CASES[name]
    return (make(strata, *(strata.tensor(p) for p in params)),
            make(torch, *(torch.tensor(p) for p in params)))


@pytest.mark.parametrize("name", sorted(CASES))
def test_log_prob_entropy_moments(name):
    value = CASES[name][2]
    s, t = _both(name)
    assert (tuple(s.batch_shape), tuple(s.event_shape)) == \
        (tuple(t.batch_shape), tuple(t.event_shape))
    for key in PROPERTIES:
        _same(_prop(s, key), _prop(t, key), key)
    _same(s.log_prob(strata.tensor(value)), t.log_prob(torch.tensor(value)), "log_prob")
    _same(s.entropy(), t.entropy(), "entropy")
    assert repr(s).replace("strata", "torch") == repr(t)


def test_python_number_parameters():
    """Numbers give an empty batch shape and the default dtype, as in PyTorch."""
    D = (lambda m: m.distributions)
    for make in (lambda m: D(m).Cauchy(0.5, 2.0), lambda m: D(m).Gumbel(1.0, 2.0),
                 lambda m: D(m).HalfNormal(1.5), lambda m: D(m).HalfCauchy(0.5),
                 lambda m: D(m).Chi2(3.0), lambda m: D(m).Geometric(0.25),
                 lambda m: D(m).StudentT(3.0)):
        s, t = make(strata), make(torch)
        assert tuple(s.batch_shape) == tuple(t.batch_shape) == ()
        for key in ("mean", "variance", "entropy"):
            sv, tv = getattr(s, key), getattr(t, key)
            _same(sv() if callable(sv) else sv, tv() if callable(tv) else tv, key)
        _same(s.log_prob(strata.tensor(1.0)), t.log_prob(torch.tensor(1.0)), "log_prob")


def test_half_distributions_outside_support_and_numbers():
    """Without validation a negative value has density 0 (log -inf); HalfCauchy takes numbers."""
    check(lambda m: m.distributions.HalfNormal(m.tensor([1.0, 2.0]), validate_args=False)
          .log_prob(m.tensor([-1.0, 0.5])))
    check(lambda m: m.distributions.HalfCauchy(m.tensor([1.0, 2.0], dtype=m.float64),
                                               validate_args=False).log_prob(0.5))


CDF_CASES = ["Cauchy", "HalfNormal", "HalfCauchy", "Gumbel"]


@pytest.mark.parametrize("name", CDF_CASES + ["Chi2"])
def test_cdf_icdf(name):
    make, params, value = CASES[name]
    q = unit(*np.broadcast(*params).shape)

    def run(m, *ps):
        d = make(m, *ps)
        out = [d.cdf(m.tensor(value))]
        if name != "Chi2":   # Gamma has no icdf
            out += [d.icdf(m.tensor(q)), d.cdf(d.icdf(m.tensor(q)))]
        return out
    check(run, *params, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("name", sorted(CASES))
def test_sample_shape_dtype_and_expand(name):
    s, t = _both(name)
    check_samples_and_expand(s, t)
    se, te = s.expand((3,) + tuple(t.batch_shape)), t.expand((3,) + tuple(t.batch_shape))
    value = CASES[name][2]
    _same(se.log_prob(strata.tensor(value)), te.log_prob(torch.tensor(value)), "log_prob")
    if not name.startswith("Multinomial"):   # torch: AttributeError (no _binomial)
        _same(se.entropy(), te.entropy(), "expanded entropy")


def test_multinomial_expanded_entropy():
    s = strata.distributions.Multinomial(5, strata.tensor(CASES["Multinomial"][1][0]))
    t = torch.distributions.Multinomial(5, torch.tensor(CASES["Multinomial"][1][0]))
    _same(s.expand((4, 2)).entropy(), t.entropy().expand(4, 2), "entropy")


@pytest.mark.parametrize("name", sorted(CASES))
def test_reproducible_under_manual_seed(name):
    check_reproducible(_both(name)[0])


STAT_CASES = {   # one batch element, float64
    "HalfNormal": lambda m: m.distributions.HalfNormal(m.tensor(1.5, dtype=m.float64)),
    "StudentT": lambda m: m.distributions.StudentT(m.tensor(8.0, dtype=m.float64), 1.0, 2.0),
    "Chi2": lambda m: m.distributions.Chi2(m.tensor(3.0, dtype=m.float64)),
    "Geometric": lambda m: m.distributions.Geometric(m.tensor(0.3, dtype=m.float64)),
    "Gumbel": lambda m: m.distributions.Gumbel(m.tensor(0.5, dtype=m.float64), 2.0),
}


@pytest.mark.parametrize("name", sorted(STAT_CASES))
def test_sample_statistics(name):
    check_sample_moments(STAT_CASES[name](strata), STAT_CASES[name](torch), var_rtol=0.08)


@pytest.mark.parametrize("name", ["Cauchy", "HalfCauchy", "StudentT", "Gumbel", "HalfNormal"])
def test_empirical_cdf_matches_torch_cdf(name):
    """Heavy tails have no moments: compare the empirical CDF at a few points instead."""
    make = {"Cauchy": lambda m: m.distributions.Cauchy(m.tensor(1.0, dtype=m.float64), 2.0),
            "HalfCauchy": lambda m: m.distributions.HalfCauchy(m.tensor(0.5, dtype=m.float64)),
            "StudentT": lambda m: m.distributions.StudentT(m.tensor(1.5, dtype=m.float64)),
            "Gumbel": lambda m: m.distributions.Gumbel(m.tensor(-1.0, dtype=m.float64), 0.5),
            "HalfNormal": lambda m: m.distributions.HalfNormal(m.tensor(2.0, dtype=m.float64))}
    strata.manual_seed(1)
    x = make[name](strata).sample((N,)).numpy()
    points = np.quantile(x, [0.1, 0.3, 0.5, 0.7, 0.9])
    if name == "StudentT":   # torch's StudentT has no cdf
        cdf = scipy.stats.t(1.5).cdf(points)
    else:
        cdf = make[name](torch).cdf(torch.tensor(points)).numpy()
    np.testing.assert_allclose(cdf, [0.1, 0.3, 0.5, 0.7, 0.9], atol=0.02)


def test_multinomial_sample_counts():
    strata.manual_seed(2)
    p = np.array([0.1, 0.6, 0.3])
    x = strata.distributions.Multinomial(7, strata.tensor(p)).sample((N,)).numpy()
    assert set(np.unique(x.sum(-1))) == {7.0}
    assert np.all(x == np.floor(x)) and x.min() >= 0
    np.testing.assert_allclose(x.mean(0), 7 * p, atol=0.05)
    np.testing.assert_allclose(x.var(0), 7 * p * (1 - p), rtol=0.06)
    empty = strata.distributions.Multinomial(0, strata.tensor(p)).sample((2,))
    assert empty.tolist() == [[0.0, 0.0, 0.0]] * 2


def test_rsample_gradients():
    """Reparameterised draws carry gradients: d x / d loc = 1, d x / d scale = (x - loc)/scale."""
    loc = strata.tensor([0.5, -1.0], dtype=strata.float64, requires_grad=True)
    scale = strata.tensor([2.0, 0.5], dtype=strata.float64, requires_grad=True)
    for D in (strata.distributions.Cauchy, strata.distributions.Gumbel):
        loc.grad = scale.grad = None
        x = D(loc, scale).rsample()
        x.sum().backward()
        np.testing.assert_allclose(loc.grad.numpy(), 1.0, rtol=1e-12)
        np.testing.assert_allclose(scale.grad.numpy(),
                                   ((x - loc) / scale).detach().numpy(), rtol=1e-9)
    strata.manual_seed(3)
    s = strata.tensor(1.5, dtype=strata.float64, requires_grad=True)
    strata.distributions.HalfNormal(s).rsample((N,)).mean().backward()
    assert abs(s.grad.item() - math.sqrt(2 / math.pi)) < 0.02
    df = strata.tensor(4.0, dtype=strata.float64, requires_grad=True)
    strata.distributions.Chi2(df).rsample((N,)).mean().backward()   # E = df
    assert abs(df.grad.item() - 1.0) < 0.03


def test_log_prob_gradients_match_torch():
    def run(m, a, b, v):
        a, b = a.requires_grad_(), b.requires_grad_()
        D = m.distributions
        total = (D.StudentT(a, v, b).log_prob(v + b).sum() + D.StudentT(a, 0.0, b).entropy().sum()
                 + D.Gumbel(v, b).log_prob(a).sum() + D.Cauchy(v, a).log_prob(b).sum()
                 + D.Geometric(a / (a + b)).entropy().sum()
                 + D.kl_divergence(D.Gamma(a, b), D.Gumbel(v, a)).sum()
                 + D.kl_divergence(D.Normal(v, a), D.Laplace(b, a)).sum())
        return m.autograd.grad(total, (a, b))
    check(run, pos(3), pos(3), rng.standard_normal(3), rtol=1e-9)


def test_gradcheck_student_t_and_multinomial():
    value = rng.standard_normal(3)

    def student(df, loc, scale):
        return strata.distributions.StudentT(df, loc, scale, validate_args=False).log_prob(
            strata.tensor(value))
    leaves = tuple(strata.tensor(p, requires_grad=True)
                   for p in (pos(3), rng.standard_normal(3), pos(3)))
    assert strata.autograd.gradcheck(student, leaves)
    x = strata.tensor(counts(4, 2, 3))

    def multinomial(logits):
        return strata.distributions.Multinomial(4, logits=logits).log_prob(x)
    assert strata.autograd.gradcheck(multinomial,
                                     (strata.tensor(rng.standard_normal((2, 3)),
                                                    requires_grad=True),))


# --- KL divergence: every pair of families, against torch ----------------------------------------

FAMILIES = {   # name -> constructor(m) with batch shape (3,), float64
    "Normal": lambda m, r: m.distributions.Normal(m.tensor(r.standard_normal(3)),
                                                  m.tensor(r.uniform(0.5, 2, 3))),
    "Laplace": lambda m, r: m.distributions.Laplace(m.tensor(r.standard_normal(3)),
                                                    m.tensor(r.uniform(0.5, 2, 3))),
    "Cauchy": lambda m, r: m.distributions.Cauchy(m.tensor(r.standard_normal(3)),
                                                  m.tensor(r.uniform(0.5, 2, 3))),
    "Gumbel": lambda m, r: m.distributions.Gumbel(m.tensor(r.standard_normal(3)),
                                                  m.tensor(r.uniform(0.5, 2, 3))),
    "HalfNormal": lambda m, r: m.distributions.HalfNormal(m.tensor(r.uniform(0.5, 2, 3))),
    "HalfCauchy": lambda m, r: m.distributions.HalfCauchy(m.tensor(r.uniform(0.5, 2, 3))),
    "StudentT": lambda m, r: m.distributions.StudentT(m.tensor(r.uniform(2, 5, 3))),
    "Exponential": lambda m, r: m.distributions.Exponential(m.tensor(r.uniform(0.5, 2, 3))),
    "Gamma": lambda m, r: m.distributions.Gamma(m.tensor(r.uniform(0.5, 3, 3)),
                                                m.tensor(r.uniform(0.5, 2, 3))),
    "Chi2": lambda m, r: m.distributions.Chi2(m.tensor(r.uniform(1, 4, 3))),
    "Beta": lambda m, r: m.distributions.Beta(m.tensor(r.uniform(0.5, 3, 3)),
                                              m.tensor(r.uniform(0.5, 3, 3))),
    # inside (0, 1): finite against Beta, Exponential, Gamma
    "Uniform": lambda m, r: m.distributions.Uniform(m.tensor(r.uniform(0.05, 0.4, 3)),
                                                    m.tensor(r.uniform(0.5, 0.95, 3))),
    # across 0 and 1: infinite against them
    "UniformWide": lambda m, r: m.distributions.Uniform(m.tensor(r.uniform(-2, -0.5, 3)),
                                                        m.tensor(r.uniform(1.5, 3, 3))),
    "LogNormal": lambda m, r: m.distributions.LogNormal(m.tensor(r.standard_normal(3)),
                                                        m.tensor(r.uniform(0.5, 2, 3))),
    "Poisson": lambda m, r: m.distributions.Poisson(m.tensor(r.uniform(0.5, 3, 3))),
    "Bernoulli": lambda m, r: m.distributions.Bernoulli(m.tensor(r.uniform(0.1, 0.9, 3))),
    "Binomial": lambda m, r: m.distributions.Binomial(5, m.tensor(r.uniform(0.1, 0.9, 3))),
    "Geometric": lambda m, r: m.distributions.Geometric(m.tensor(r.uniform(0.1, 0.9, 3))),
    "Categorical": lambda m, r: m.distributions.Categorical(m.tensor(r.uniform(0.1, 1, (3, 3)))),
    "Multinomial": lambda m, r: m.distributions.Multinomial(
        4, m.tensor(r.uniform(0.1, 1, (3, 3)))),
}


def _kl(m, p_name, q_name):
    p = FAMILIES[p_name](m, np.random.default_rng(11))
    q = FAMILIES[q_name](m, np.random.default_rng(12))
    try:
        return m.distributions.kl_divergence(p, q)
    except NotImplementedError:
        return "NotImplemented"


@pytest.mark.parametrize("p_name", sorted(FAMILIES))
def test_kl_every_pair_matches_torch(p_name):
    """Same registered pairs as PyTorch (NotImplementedError otherwise), same values."""
    finite = 0
    for q_name in sorted(FAMILIES):
        t, s = _kl(torch, p_name, q_name), _kl(strata, p_name, q_name)
        _same(s, t, f"KL({p_name} || {q_name})", rtol=1e-6)
        finite += not isinstance(t, str) and bool(torch.isfinite(t).all())
    assert finite >= (p_name not in ("StudentT", "Multinomial"))   # torch has no KL for these


def test_kl_mixed_pairs_are_registered():
    """The mixed-family rules are found (not only their absence agreed on)."""
    D = strata.distributions
    for p, q in [(D.Exponential, D.Gamma), (D.Gamma, D.Exponential), (D.Uniform, D.Normal),
                 (D.Uniform, D.Exponential), (D.Uniform, D.Gamma), (D.Normal, D.Laplace),
                 (D.Chi2, D.Gumbel), (D.Beta, D.Uniform), (D.Poisson, D.Binomial)]:
        assert D.kl._dispatch_kl(p, q) is not NotImplemented, (p, q)


@given(low=st.floats(-3, 3), width=st.floats(0.1, 4), rate=st.floats(0.1, 5))
@settings(max_examples=30, deadline=None)
def test_kl_uniform_exponential_gamma_support(low, width, rate):
    """Finite when the Uniform lies in [0, inf), inf otherwise, for any bounds."""
    def run(m):
        D = m.distributions
        p = D.Uniform(m.tensor([low], dtype=m.float64), m.tensor([low + width], dtype=m.float64))
        return (D.kl_divergence(p, D.Exponential(m.tensor([rate], dtype=m.float64))),
                D.kl_divergence(p, D.Gamma(m.tensor([2.0], dtype=m.float64), rate)))
    check(run, rtol=1e-7)


def test_kl_pairs_with_chi2_and_symmetry():
    for make in itertools.product(["Chi2", "Gamma", "Exponential"], repeat=2):
        _same(_kl(strata, *make), _kl(torch, *make), str(make), rtol=1e-6)


# --- validation ----------------------------------------------------------------------------------

BAD = {
    "cauchy-scale": lambda m: m.distributions.Cauchy(0.0, m.tensor([1.0, 0.0])),
    "halfnormal-scale": lambda m: m.distributions.HalfNormal(m.tensor([-1.0])),
    "halfcauchy-scale": lambda m: m.distributions.HalfCauchy(m.tensor([0.0])),
    "studentt-df": lambda m: m.distributions.StudentT(m.tensor([-1.0])),
    "studentt-scale": lambda m: m.distributions.StudentT(2.0, 0.0, m.tensor([-1.0])),
    "chi2-df": lambda m: m.distributions.Chi2(m.tensor([0.0, 1.0])),
    "geometric-zero": lambda m: m.distributions.Geometric(m.tensor([0.5, 0.0])),
    "geometric-above-one": lambda m: m.distributions.Geometric(m.tensor([1.5])),
    "geometric-both": lambda m: m.distributions.Geometric(m.tensor([0.5]), m.tensor([0.0])),
    "geometric-none": lambda m: m.distributions.Geometric(),
    "multinomial-count": lambda m: m.distributions.Multinomial(2.5, m.ones(3)),
    "multinomial-probs": lambda m: m.distributions.Multinomial(2, m.tensor([0.5, -0.5])),
    "multinomial-0d": lambda m: m.distributions.Multinomial(2, m.tensor(1.0)),
    "gumbel-scale": lambda m: m.distributions.Gumbel(m.tensor([0.0]), m.tensor([-2.0])),
    "gumbel-type": lambda m: m.distributions.Gumbel("0", 1.0),
    "log-prob-halfnormal": lambda m: m.distributions.HalfNormal(1.0).log_prob(m.tensor([-1.0])),
    "log-prob-halfcauchy-number": lambda m: m.distributions.HalfCauchy(1.0).log_prob(1.0),
    "log-prob-geometric": lambda m: m.distributions.Geometric(0.5).log_prob(m.tensor([1.5])),
    "log-prob-multinomial-neg": lambda m: m.distributions.Multinomial(3, m.ones(2)).log_prob(
        m.tensor([4.0, -1.0])),
    "log-prob-multinomial-sum": lambda m: m.distributions.Multinomial(3, m.ones(2)).log_prob(
        m.tensor([3.0, 1.0])),
    "log-prob-multinomial-shape": lambda m: m.distributions.Multinomial(3, m.ones(2)).log_prob(
        m.tensor([1.0, 1.0, 1.0])),
    "cdf-halfnormal": lambda m: m.distributions.HalfNormal(1.0).cdf(m.tensor([-1.0])),
    "cdf-cauchy-type": lambda m: m.distributions.Cauchy(0.0, 1.0).cdf(0.5),
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_invalid_arguments_raise_like_torch(name):
    check_error_like_torch(BAD[name])


def test_geometric_message_and_validation_switch():
    s_err, t_err = check_error(lambda m: m.distributions.Geometric(m.tensor([0.5, 0.0])))
    assert str(s_err).replace("strata.Size", "torch.Size") == str(t_err)
    D = strata.distributions
    assert D.Geometric(strata.tensor([0.0]), validate_args=False).probs.item() == 0.0
    assert D.Cauchy(0.0, -1.0, validate_args=False).scale.item() == -1.0


def test_support_and_transform_reprs():
    D, T = strata.distributions, torch.distributions
    for s, t in [(D.Multinomial(3, strata.ones(2)).support,
                  T.Multinomial(3, torch.ones(2)).support),
                 (D.HalfNormal(1.0).support, T.HalfNormal(1.0).support),
                 (D.Geometric(0.5).support, T.Geometric(0.5).support),
                 (D.Chi2(2.0).arg_constraints["df"], T.Chi2(2.0).arg_constraints["df"]),
                 (D.transforms.AbsTransform(), T.transforms.AbsTransform()),
                 (D.transforms.AbsTransform().codomain, T.transforms.AbsTransform().codomain)]:
        assert repr(s).replace("strata", "torch") == repr(t)
    assert D.constraints.is_dependent(D.Multinomial.support)
    assert D.transforms.AbsTransform() == D.transforms.AbsTransform()
    check(lambda m: m.distributions.constraints.multinomial(3).check(
        m.tensor([[1.0, 2.0], [3.0, 1.0], [-1.0, 2.0]])))
    check(lambda m: m.distributions.Chi2(m.tensor([1.0, 3.0])).df)
    check(lambda m: m.distributions.Geometric(logits=m.tensor([0.3, -2.0])).probs)
    assert isinstance(D.Chi2(1.0), D.Gamma) and isinstance(D.Gumbel(0.0, 1.0),
                                                           D.TransformedDistribution)


def test_student_t_variance_gradient_at_df_2():
    def grads(m):
        df = m.tensor([2.0, 3.0, 1.5], requires_grad=True)
        scale = m.tensor([1.0, 2.0, 1.0], requires_grad=True)
        v = m.distributions.StudentT(df, 0.0, scale).variance
        return m.autograd.grad(v.sum(), [df, scale])
    for s, t in zip(grads(strata), grads(torch)):
        np.testing.assert_allclose(s.numpy(), t.numpy())
