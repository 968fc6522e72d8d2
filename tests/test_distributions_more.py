"""strata.distributions against torch.distributions: densities, moments, CDFs, KL divergences
on the same parameters; sample shapes, dtypes, reproducibility and statistics; rsample
gradients; and validation errors."""

import numpy as np
import pytest
import torch
from helpers import assert_same, check, check_error
from hypothesis import given, settings
from hypothesis import strategies as st

import strata

rng = np.random.default_rng(3)
N = 20000


def pos(*shape):
    return rng.uniform(0.5, 3.0, shape)


def unit(*shape):
    return rng.uniform(0.1, 0.9, shape)


def simplex(*shape):
    p = rng.uniform(0.1, 1.0, shape)
    return p / p.sum(-1, keepdims=True)


def spd(n, batch=()):
    a = rng.standard_normal(batch + (n, n))
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


L3 = np.linalg.cholesky(spd(3))

# name -> (constructor(m, *params), params, a value in the support)
CASES = {
    "Normal": (lambda m, a, b: m.distributions.Normal(a, b), (rng.standard_normal(4), pos(4)),
               rng.standard_normal(4)),
    "Uniform": (lambda m, a, b: m.distributions.Uniform(a, a + b),
                (rng.standard_normal(3), pos(3)), None),
    "Exponential": (lambda m, r: m.distributions.Exponential(r), (pos(2, 3),), pos(2, 3)),
    "Laplace": (lambda m, a, b: m.distributions.Laplace(a, b), (rng.standard_normal(4), pos(4)),
                rng.standard_normal(4)),
    "Gamma": (lambda m, a, b: m.distributions.Gamma(a, b), (pos(3), pos(3)), pos(3)),
    "Beta": (lambda m, a, b: m.distributions.Beta(a, b), (pos(2, 2), pos(2, 2)), unit(2, 2)),
    "Dirichlet": (lambda m, c: m.distributions.Dirichlet(c), (pos(2, 4),), simplex(2, 4)),
    "Poisson": (lambda m, r: m.distributions.Poisson(r), (pos(5),),
                rng.integers(0, 6, 5).astype(float)),
    "Binomial": (lambda m, p: m.distributions.Binomial(7, probs=p), (unit(4),),
                 rng.integers(0, 8, 4).astype(float)),
    "BinomialLogits": (lambda m, x: m.distributions.Binomial(m.full((4,), 5.0), logits=x),
                       (rng.standard_normal(4),), rng.integers(0, 6, 4).astype(float)),
    "Bernoulli": (lambda m, p: m.distributions.Bernoulli(p), (unit(3),), np.array([0., 1., 1.])),
    "BernoulliLogits": (lambda m, x: m.distributions.Bernoulli(logits=x),
                        (rng.standard_normal(3),), np.array([1., 0., 1.])),
    "Categorical": (lambda m, p: m.distributions.Categorical(p), (simplex(3, 4),),
                    np.array([0, 3, 2])),
    "OneHotCategorical": (lambda m, x: m.distributions.OneHotCategorical(logits=x),
                          (rng.standard_normal((2, 3)),), np.eye(3)[[2, 0]]),
    "MVNCov": (lambda m, mu, c: m.distributions.MultivariateNormal(mu, covariance_matrix=c),
               (rng.standard_normal(3), spd(3)), rng.standard_normal((2, 3))),
    "MVNPrecision": (lambda m, mu, c: m.distributions.MultivariateNormal(mu, precision_matrix=c),
                     (rng.standard_normal((2, 3)), spd(3)), rng.standard_normal((2, 3))),
    "MVNTril": (lambda m, mu, lt: m.distributions.MultivariateNormal(mu, scale_tril=lt),
                (rng.standard_normal(3), L3), rng.standard_normal(3)),
    "Independent": (lambda m, a, b: m.distributions.Independent(
        m.distributions.Normal(a, b), 1), (rng.standard_normal((2, 3)), pos(2, 3)),
        rng.standard_normal((2, 3))),
    "LogNormal": (lambda m, a, b: m.distributions.LogNormal(a, b),
                  (rng.standard_normal(3), pos(3)), pos(3)),
    "Logistic": (lambda m, a, b: m.distributions.TransformedDistribution(
        m.distributions.Uniform(m.zeros_like(a), m.ones_like(a)),
        [m.distributions.transforms.SigmoidTransform().inv,
         m.distributions.transforms.AffineTransform(a, b)]),
        (rng.standard_normal(3), pos(3)), rng.standard_normal(3)),
}
CASES["Uniform"] = (*CASES["Uniform"][:2], CASES["Uniform"][1][0] + 0.3 * CASES["Uniform"][1][1])

PROPERTIES = ("mean", "mode", "variance", "stddev")


def _prop(d, name):
    try:
        return getattr(d, name)
    except NotImplementedError:
        return "NotImplemented"


def _value(m, v):
    return m.tensor(v)


@pytest.mark.parametrize("name", sorted(CASES))
def test_log_prob_entropy_moments(name):
    make, params, value = CASES[name]

    def run(m, *ps):
        d = make(m, *ps)
        out = {p: _prop(d, p) for p in PROPERTIES}
        out["log_prob"] = d.log_prob(_value(m, value))
        if name not in ("Poisson", "Logistic", "Uniform") or name == "Uniform":
            out["entropy"] = d.entropy()
        return out, tuple(d.batch_shape), tuple(d.event_shape)

    t_out, t_batch, t_event = run(torch, *(torch.tensor(p) for p in params))
    s_out, s_batch, s_event = run(strata, *(strata.tensor(p) for p in params))
    assert (s_batch, s_event) == (t_batch, t_event)
    for key, t in t_out.items():
        s = s_out[key]
        if isinstance(t, str) or isinstance(s, str):
            assert s == t, key
            continue
        np.testing.assert_allclose(s.detach().numpy(), t.detach().numpy(), rtol=1e-7,
                                   atol=1e-9, equal_nan=True, err_msg=key)
        assert str(s.dtype).split(".")[-1] == str(t.dtype).split(".")[-1], key


CDF_CASES = ["Normal", "Uniform", "Exponential", "Laplace", "LogNormal"]


@pytest.mark.parametrize("name", CDF_CASES)
def test_cdf_icdf(name):
    make, params, value = CASES[name]
    q = unit(*np.broadcast(*params).shape)

    def run(m, *ps):
        d = make(m, *ps)
        return d.cdf(m.tensor(value)), d.icdf(m.tensor(q))
    check(lambda m, *ps: run(m, *ps), *params, rtol=1e-7, atol=1e-9)


def test_transformed_cdf_with_decreasing_affine():
    loc, scale = rng.standard_normal(3), -pos(3)
    check(lambda m, a, b, x: m.distributions.TransformedDistribution(
        m.distributions.Normal(m.zeros(3, dtype=m.float64), 1.0),
        m.distributions.transforms.AffineTransform(a, b)).cdf(x),
        loc, scale, rng.standard_normal(3))


def check_samples_and_expand(s, t):
    """Sample/rsample shapes, dtypes, no grad; expand keeps the type and gives torch's shapes."""
    for shape in ((), (5,), (2, 3)):
        ts, ss = t.sample(shape), s.sample(shape)
        assert tuple(ss.shape) == tuple(ts.shape)
        assert str(ss.dtype).split(".")[-1] == str(ts.dtype).split(".")[-1]
        assert not ss.requires_grad
        assert bool(s.support.check(ss).all())
    assert s.has_rsample == t.has_rsample
    if t.has_rsample:
        assert tuple(s.rsample((4,)).shape) == tuple(t.rsample((4,)).shape)
    new_batch = (3,) + tuple(t.batch_shape)
    te, se = t.expand(new_batch), s.expand(new_batch)
    assert type(se) is type(s)
    assert (tuple(se.batch_shape), tuple(se.event_shape)) == \
        (tuple(te.batch_shape), tuple(te.event_shape))
    assert tuple(se.sample((2,)).shape) == tuple(te.sample((2,)).shape)


@pytest.mark.parametrize("name", sorted(CASES))
def test_sample_shape_dtype_and_expand(name):
    make, params, _ = CASES[name]
    check_samples_and_expand(make(strata, *(strata.tensor(p) for p in params)),
                             make(torch, *(torch.tensor(p) for p in params)))


@pytest.mark.parametrize("name", ["Gamma", "Dirichlet", "Poisson", "Binomial", "Normal",
                                  "Laplace", "Exponential", "MVNCov", "Beta"])
def test_reproducible_under_manual_seed(name):
    make, params, _ = CASES[name]
    check_reproducible(make(strata, *(strata.tensor(p) for p in params)))


def check_reproducible(d):
    strata.manual_seed(123)
    a = d.sample((3,))
    strata.manual_seed(123)
    b = d.sample((3,))
    c = d.sample((3,))
    assert a.tolist() == b.tolist()
    assert c.tolist() != b.tolist()


STAT_CASES = {   # params of one batch element, as floats
    "Gamma": lambda m: m.distributions.Gamma(m.tensor(2.5, dtype=m.float64), 1.5),
    "GammaSmall": lambda m: m.distributions.Gamma(m.tensor(0.3, dtype=m.float64), 2.0),
    "Beta": lambda m: m.distributions.Beta(m.tensor(2.0, dtype=m.float64), 5.0),
    "Poisson": lambda m: m.distributions.Poisson(m.tensor(4.5, dtype=m.float64)),
    "Binomial": lambda m: m.distributions.Binomial(12, m.tensor(0.3, dtype=m.float64)),
    "Exponential": lambda m: m.distributions.Exponential(m.tensor(2.0, dtype=m.float64)),
    "Laplace": lambda m: m.distributions.Laplace(m.tensor(1.0, dtype=m.float64), 0.5),
    "Uniform": lambda m: m.distributions.Uniform(m.tensor(-1.0, dtype=m.float64), 3.0),
    "LogNormal": lambda m: m.distributions.LogNormal(m.tensor(0.2, dtype=m.float64), 0.4),
}


@pytest.mark.parametrize("name", sorted(STAT_CASES))
def test_sample_statistics(name):
    check_sample_moments(STAT_CASES[name](strata), STAT_CASES[name](torch))


def check_sample_moments(d, t, var_rtol=0.05):
    """Mean and variance of N draws of ``d`` against ``t``'s exact moments."""
    strata.manual_seed(0)
    x = d.sample((N,)).numpy()
    mean, var = t.mean.item(), t.variance.item()
    assert abs(x.mean() - mean) < 5 * (var / N) ** 0.5
    assert abs(x.var() - var) < var_rtol * var


def test_dirichlet_and_mvn_statistics():
    strata.manual_seed(1)
    conc = np.array([0.5, 2.0, 3.5])
    x = strata.distributions.Dirichlet(strata.tensor(conc)).sample((N,)).numpy()
    np.testing.assert_allclose(x.sum(-1), 1.0, rtol=1e-12)
    np.testing.assert_allclose(x.mean(0), conc / conc.sum(), atol=0.01)
    cov = spd(3)
    mvn = strata.distributions.MultivariateNormal(strata.zeros(3, dtype=strata.float64),
                                                  covariance_matrix=strata.tensor(cov))
    y = mvn.sample((N,)).numpy()
    np.testing.assert_allclose(np.cov(y.T), cov, atol=0.08 * np.abs(cov).max())


def test_categorical_family_frequencies():
    strata.manual_seed(2)
    p = np.array([0.1, 0.6, 0.3])
    oh = strata.distributions.OneHotCategorical(strata.tensor(p)).sample((N,)).numpy()
    assert set(np.unique(oh.sum(-1))) == {1.0}
    np.testing.assert_allclose(oh.mean(0), p, atol=0.02)


# --- sampling ops --------------------------------------------------------------------------------

@given(alpha=st.floats(0.05, 30.0), x=st.floats(0.01, 60.0))
@settings(max_examples=60, deadline=None)
def test_standard_gamma_grad_matches_torch(alpha, x):
    check(lambda m, a, v: m._standard_gamma_grad(a, v), np.array([alpha]), np.array([x]),
          rtol=1e-6, atol=1e-12)


def test_gamma_rsample_gradient_is_the_implicit_reparameterisation():
    """d sample / d concentration at the drawn sample is ``_standard_gamma_grad`` (over rate)."""
    conc = strata.tensor([0.4, 1.0, 3.0, 12.0], dtype=strata.float64, requires_grad=True)
    rate = strata.tensor([1.0, 2.0, 0.5, 1.0], dtype=strata.float64, requires_grad=True)
    x = strata.distributions.Gamma(conc, rate).rsample()
    x.sum().backward()
    z = (x * rate).detach()   # the standard Gamma draw
    expected = torch._standard_gamma_grad(torch.tensor(conc.detach().numpy()),
                                          torch.tensor(z.numpy())) / torch.tensor(
        rate.detach().numpy())
    np.testing.assert_allclose(conc.grad.numpy(), expected.numpy(), rtol=1e-10)
    np.testing.assert_allclose(rate.grad.numpy(), -x.detach().numpy() / rate.detach().numpy(),
                               rtol=1e-10)


def test_gamma_rsample_gradient_matches_mean_gradient():
    """E[x] = alpha: the Monte-Carlo gradient of the sample mean is about 1."""
    strata.manual_seed(4)
    conc = strata.tensor(2.0, dtype=strata.float64, requires_grad=True)
    strata.distributions.Gamma(conc, 1.0).rsample((N,)).mean().backward()
    assert abs(conc.grad.item() - 1.0) < 0.03


def test_dirichlet_and_beta_rsample_gradients():
    strata.manual_seed(5)
    conc = strata.tensor([1.5, 2.0, 4.0], dtype=strata.float64, requires_grad=True)
    x = strata.distributions.Dirichlet(conc).rsample((N,))
    x.sum().backward()   # every sample sums to one: exactly zero gradient
    np.testing.assert_allclose(conc.grad.numpy(), 0.0, atol=1e-8)
    conc.grad = None
    x = strata.distributions.Dirichlet(conc).rsample((N,))
    x[:, 0].mean().backward()   # d/dc (c0 / sum c)
    c = conc.detach().numpy()
    expected = -c[0] / c.sum() ** 2 + np.array([1 / c.sum(), 0, 0])
    np.testing.assert_allclose(conc.grad.numpy(), expected, atol=0.01)
    a = strata.tensor(2.0, dtype=strata.float64, requires_grad=True)
    strata.distributions.Beta(a, 3.0).rsample((N,)).mean().backward()
    assert abs(a.grad.item() - 3.0 / 25.0) < 0.01


def test_log_prob_gradients_match_torch():
    def run(m, a, b, v):
        a, b = a.requires_grad_(), b.requires_grad_()
        lp = (m.distributions.Gamma(a, b).log_prob(v).sum()
              + m.distributions.Beta(a, b).entropy().sum()
              + m.distributions.kl_divergence(m.distributions.Laplace(a, b),
                                              m.distributions.Laplace(b, a)).sum())
        return m.autograd.grad(lp, (a, b))
    check(run, pos(3), pos(3), pos(3), rtol=1e-9)


def test_mvn_gradcheck():
    mu, L = rng.standard_normal(3), L3
    value = rng.standard_normal((2, 3))

    def fn(loc, tril):
        d = strata.distributions.MultivariateNormal(loc, scale_tril=tril.tril(),
                                                    validate_args=False)
        return d.log_prob(strata.tensor(value))
    leaves = (strata.tensor(mu, requires_grad=True), strata.tensor(L, requires_grad=True))
    assert strata.autograd.gradcheck(fn, leaves)


def test_poisson_and_binomial_ops():
    strata.manual_seed(6)
    rate = strata.full((N,), 3.0, dtype=strata.float64)
    x = strata.poisson(rate).numpy()
    assert abs(x.mean() - 3.0) < 0.05 and abs(x.var() - 3.0) < 0.15
    assert np.all(x == np.floor(x))
    y = strata.binomial(strata.full((N,), 10.0), strata.full((N,), 0.25)).numpy()
    assert y.min() >= 0 and y.max() <= 10 and abs(y.mean() - 2.5) < 0.05
    check_error(lambda m, r: m.poisson(r), np.array([1.0, -1.0]))
    check_error(lambda m, r: m._standard_gamma(r), np.array([1, 2]))
    check_error(lambda m, n, p: m.binomial(n, p), np.array([1, 2]), np.array([0.5, 0.5]))
    check_error(lambda m, n, p: m.binomial(n, p.float()), np.array([1.0]), np.array([0.5]))
    g = strata.Generator().manual_seed(9)
    a = strata._standard_gamma(strata.ones(4), g)
    assert a.tolist() == strata._standard_gamma(strata.ones(4),
                                                strata.Generator().manual_seed(9)).tolist()


# --- KL divergence -------------------------------------------------------------------------------

KL_PAIRS = ["Normal", "Uniform", "Exponential", "Laplace", "Gamma", "Beta", "Dirichlet", "Poisson",
            "Binomial", "Bernoulli", "Categorical", "OneHotCategorical", "MVNCov", "MVNTril",
            "Independent", "LogNormal"]


@pytest.mark.parametrize("name", KL_PAIRS)
def test_kl_divergence(name):
    make, params, _ = CASES[name]
    other = tuple(p[::-1].copy() if p.ndim == 1 and name not in ("MVNTril", "MVNCov") else p
                  for p in params)
    if name.startswith("MVN"):
        other = (params[0] + 0.5, params[1] * 1.5)
    if name == "Uniform":
        other = (params[0] - 0.2, params[1] + 0.5)
    check(lambda m, *ps: m.distributions.kl_divergence(make(m, *ps[:len(params)]),
                                                       make(m, *ps[len(params):])),
          *params, *other, rtol=1e-7, atol=1e-9)


def test_kl_infinite_and_registry():
    check(lambda m: m.distributions.kl_divergence(m.distributions.Uniform(0.0, 2.0),
                                                  m.distributions.Uniform(0.5, 1.0)))
    check(lambda m: m.distributions.kl_divergence(
        m.distributions.Bernoulli(m.tensor([0.0, 0.5, 1.0])),
        m.distributions.Bernoulli(m.tensor([0.5, 0.0, 1.0]))))
    check_error(lambda m: m.distributions.kl_divergence(m.distributions.Categorical(m.ones(2)),
                                                        m.distributions.Normal(0.0, 1.0)),
                match="No KL")

    class MyNormal(strata.distributions.Normal):
        pass

    @strata.distributions.register_kl(MyNormal, strata.distributions.Normal)
    def _kl(p, q):
        return strata.tensor(42.0)
    D = strata.distributions
    assert D.kl_divergence(MyNormal(0.0, 1.0), D.Normal(0.0, 1.0)).item() == 42.0
    assert D.kl_divergence(D.Normal(0.0, 1.0), MyNormal(0.0, 1.0)).item() == 0.0


# --- validation ----------------------------------------------------------------------------------

BAD = {
    "normal-scale": lambda m: m.distributions.Normal(0.0, m.tensor([1.0, -1.0])),
    "uniform-order": lambda m: m.distributions.Uniform(m.tensor([0.0]), m.tensor([0.0])),
    "exponential-rate": lambda m: m.distributions.Exponential(m.tensor([0.0])),
    "gamma-conc": lambda m: m.distributions.Gamma(m.tensor([-1.0]), 1.0),
    "beta-conc": lambda m: m.distributions.Beta(m.tensor([0.5]), m.tensor([0.0])),
    "dirichlet-1d": lambda m: m.distributions.Dirichlet(m.tensor(1.0)),
    "dirichlet-conc": lambda m: m.distributions.Dirichlet(m.tensor([1.0, -2.0])),
    "poisson-rate": lambda m: m.distributions.Poisson(m.tensor([-0.5])),
    "binomial-count": lambda m: m.distributions.Binomial(m.tensor([2.5]), m.tensor([0.5])),
    "binomial-probs": lambda m: m.distributions.Binomial(3, m.tensor([1.5])),
    "binomial-both": lambda m: m.distributions.Binomial(3, m.tensor([0.5]), m.tensor([0.0])),
    "bernoulli-none": lambda m: m.distributions.Bernoulli(),
    "categorical-probs": lambda m: m.distributions.Categorical(m.tensor([0.5, -0.5])),
    "onehot-0d": lambda m: m.distributions.OneHotCategorical(m.tensor(1.0)),
    "mvn-two": lambda m: m.distributions.MultivariateNormal(m.zeros(2), m.eye(2),
                                                            scale_tril=m.eye(2)),
    "mvn-none": lambda m: m.distributions.MultivariateNormal(m.zeros(2)),
    "mvn-loc0d": lambda m: m.distributions.MultivariateNormal(m.tensor(0.0), m.eye(2)),
    "mvn-cov1d": lambda m: m.distributions.MultivariateNormal(m.zeros(2), m.ones(2)),
    "mvn-not-pd": lambda m: m.distributions.MultivariateNormal(
        m.zeros(2), m.tensor([[1.0, 2.0], [2.0, 1.0]])),
    "mvn-tril": lambda m: m.distributions.MultivariateNormal(
        m.zeros(2), scale_tril=m.tensor([[1.0, 1.0], [0.0, 1.0]])),
    "independent-ndims": lambda m: m.distributions.Independent(
        m.distributions.Normal(m.zeros(3), 1.0), 2),
    "lognormal-scale": lambda m: m.distributions.LogNormal(0.0, m.tensor([0.0])),
    "transformed-type": lambda m: m.distributions.TransformedDistribution(
        m.distributions.Normal(0.0, 1.0), "exp"),
    "log-prob-support": lambda m: m.distributions.Gamma(1.0, 1.0).log_prob(m.tensor([-1.0])),
    "log-prob-shape": lambda m: m.distributions.Dirichlet(m.ones(3)).log_prob(m.ones(2) / 2),
    "log-prob-broadcast": lambda m: m.distributions.Normal(m.zeros(3), 1.0).log_prob(m.zeros(2)),
    "log-prob-integer": lambda m: m.distributions.Poisson(2.0).log_prob(m.tensor([1.5])),
    "log-prob-simplex": lambda m: m.distributions.Dirichlet(m.ones(2)).log_prob(
        m.tensor([0.5, 0.6])),
    "log-prob-onehot": lambda m: m.distributions.OneHotCategorical(m.ones(2)).log_prob(
        m.tensor([1.0, 1.0])),
    "log-prob-uniform": lambda m: m.distributions.Uniform(0.0, 1.0).log_prob(m.tensor(2.0)),
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_invalid_arguments_raise_like_torch(name):
    check_error_like_torch(BAD[name])


def check_error_like_torch(fn):
    """Same exception type as torch, and the message starts with torch's first clause."""
    s_err, t_err = check_error(fn)
    first = str(t_err).split(" (")[0].split(":")[0]
    assert str(s_err).replace("strata.", "torch.").startswith(first), (s_err, t_err)


def test_validation_message_and_switches():
    s_err, t_err = check_error(lambda m: m.distributions.Gamma(m.tensor([-1.0, 2.0]),
                                                               m.tensor([1.0, 1.0])))
    head = "Expected parameter concentration (Tensor of shape (2,)) of distribution " \
           "Gamma(concentration: torch.Size([2]), rate: torch.Size([2])) to satisfy the " \
           "constraint GreaterThan(lower_bound=0.0), but found invalid values:"
    assert str(t_err).startswith(head)
    assert str(s_err).startswith(head.replace("torch.Size", "strata.Size"))
    D = strata.distributions
    assert D.Normal(0.0, -1.0, validate_args=False).scale.item() == -1.0
    D.Distribution.set_default_validate_args(False)
    try:
        D.Poisson(-1.0)
    finally:
        D.Distribution.set_default_validate_args(True)
    with pytest.raises(ValueError):
        D.Distribution.set_default_validate_args(1.5)


def test_constraints_repr_and_support():
    D, T = strata.distributions, torch.distributions
    for s, t in [(D.Gamma(1.0, 1.0).support, T.Gamma(1.0, 1.0).support),
                 (D.Dirichlet(strata.ones(2)).arg_constraints["concentration"],
                  T.Dirichlet(torch.ones(2)).arg_constraints["concentration"]),
                 (D.Uniform(0.0, 2.0).support, T.Uniform(0.0, 2.0).support),
                 (D.Binomial(4, strata.tensor(0.5)).support,
                  T.Binomial(4, torch.tensor(0.5)).support),
                 (D.MultivariateNormal(strata.zeros(2), strata.eye(2)).support,
                  T.MultivariateNormal(torch.zeros(2), torch.eye(2)).support),
                 (D.Independent(D.Normal(strata.zeros(2), 1.0), 1).support,
                  T.Independent(T.Normal(torch.zeros(2), 1.0), 1).support)]:
        assert repr(s).replace("strata", "torch") == repr(t)
    assert D.constraints.is_dependent(D.Uniform.support)
    assert D.constraints.simplex.check(strata.tensor([0.25, 0.75])).item()


def test_enumerate_support_and_lazy_parameters():
    check(lambda m: m.distributions.Binomial(3, m.tensor([0.2, 0.7])).enumerate_support())
    check(lambda m: m.distributions.OneHotCategorical(m.ones(2, 3)).enumerate_support(False))
    check(lambda m: m.distributions.Bernoulli(logits=m.tensor([0.3, -2.0])).probs)
    check(lambda m: m.distributions.Categorical(m.tensor([1.0, 3.0])).logits)
    check(lambda m: m.distributions.MultivariateNormal(
        m.zeros(2), scale_tril=m.tensor([[1.0, 0.0], [0.5, 2.0]])).precision_matrix,
        rtol=1e-6)
    check(lambda m: m.distributions.Binomial(5, m.tensor([0.3, 0.6])).entropy())


def test_gamma_cdf():
    make, params, value = CASES["Gamma"]
    check(lambda m, *ps: make(m, *ps).cdf(m.tensor(value)), *params, rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("make", [
    lambda m: m._standard_gamma(m.ones(2, dtype=m.int64)),
    lambda m: m._standard_gamma(m.ones(2, dtype=m.float16)),
    lambda m: m.poisson(m.ones(2, dtype=m.int64)),
    lambda m: m._sample_dirichlet(m.ones(2, dtype=m.float16)),
])
def test_sampling_ops_refuse_dtypes_like_torch(make):
    with pytest.raises(NotImplementedError) as t_err:
        make(torch)
    with pytest.raises(NotImplementedError) as s_err:
        make(strata)
    assert str(s_err.value) == str(t_err.value)


def _mixture(m):
    d = m.distributions
    logits = m.tensor([[0.3, -0.2, 1.0], [0.0, 0.5, -1.0]])
    loc = m.tensor([[-1.0, 0.5, 2.0], [0.0, 1.0, -2.0]], requires_grad=True)
    scale = m.tensor([[0.5, 1.0, 2.0], [1.5, 0.3, 0.8]])
    mixture = d.MixtureSameFamily(d.Categorical(logits=logits), d.Normal(loc, scale))
    x = m.tensor([[0.2, -0.7], [1.5, 3.0]])
    log_prob = mixture.log_prob(x)
    log_prob.sum().backward()
    vector = d.MixtureSameFamily(d.Categorical(m.tensor([0.4, 0.6])), d.Independent(
        d.Normal(m.tensor([[0.0, 1, 2], [1, 1, 1]]), m.ones(2, 3)), 1))
    return (log_prob, loc.grad, mixture.mean, mixture.variance, mixture.cdf(x),
            vector.log_prob(m.ones(3)), vector.mean,
            [tuple(mixture.sample((5,)).shape), tuple(vector.sample((4,)).shape),
             tuple(mixture.expand((4, 2)).batch_shape)])


def test_mixture_same_family_matches_torch():
    for got, want in zip(_mixture(strata), _mixture(torch)):
        if isinstance(want, list):
            assert got == want
        else:
            assert_same(got, want, atol=1e-6, rtol=1e-6)
    for m in (strata, torch):
        d = m.distributions
        with pytest.raises(ValueError, match="needs to be an  instance of"):
            d.MixtureSameFamily(d.Normal(0.0, 1.0), d.Normal(m.zeros(3), m.ones(3)))
        with pytest.raises(ValueError, match=r"`mixture_distribution component` \(2\) does not "
                                             r"equal"):
            d.MixtureSameFamily(d.Categorical(m.ones(2)), d.Normal(m.zeros(3), m.ones(3)))


# --- VonMises and RelaxedBernoulli ---------------------------------------------------------------
def _von_mises(m, loc, kappa):
    return m.distributions.VonMises(m.tensor(loc, dtype=m.float64),
                                    m.tensor(kappa, dtype=m.float64))


@given(st.lists(st.floats(-10, 10), min_size=3, max_size=3),
       st.lists(st.floats(1e-4, 50), min_size=3, max_size=3))
@settings(max_examples=20)
def test_von_mises_log_prob_and_variance_match_torch(values, kappas):
    loc = [0.5, -2.0, 3.0]
    for m_out in (lambda m: _von_mises(m, loc, kappas).log_prob(m.tensor(values,
                                                                         dtype=m.float64)),
                  lambda m: _von_mises(m, loc, kappas).variance):
        want = m_out(torch).numpy()
        got = m_out(strata).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_von_mises_gradient_expand_and_errors():
    grads = []
    for m in (torch, strata):
        kappa = m.tensor([1.5, 5.0], dtype=m.float64, requires_grad=True)
        loc = m.tensor([0.0, 1.0], dtype=m.float64, requires_grad=True)
        m.distributions.VonMises(loc, kappa).log_prob(m.tensor([0.3, -2.0])).sum().backward()
        grads.append((kappa.grad.numpy(), loc.grad.numpy()))
    for w, g in zip(*grads):
        np.testing.assert_allclose(g, w, rtol=1e-12)
    d = strata.distributions.VonMises(strata.zeros(3), strata.ones(3)).expand((2, 3))
    assert d.batch_shape == (2, 3) and d.mean.shape == (2, 3)
    check_error(lambda m: m.distributions.VonMises(m.tensor([0.0]), m.tensor([-1.0])))


@pytest.mark.parametrize("kappa", [1e-6, 0.5, 2.0, 30.0])
def test_von_mises_samples_have_the_circular_moments(kappa):
    """Samples lie in [-pi, pi); their mean resultant vector is I1/I0 (kappa) at the angle
    loc, which the circular variance gives."""
    strata.manual_seed(0)
    d = strata.distributions.VonMises(strata.tensor(1.0), strata.tensor(kappa))
    s = d.sample((N,))
    assert s.dtype == strata.float32 and s.shape == (N,)
    assert float(s.min()) >= -np.pi and float(s.max()) < np.pi
    resultant = 1 - float(d.variance)
    c, sn = float(s.cos().mean()), float(s.sin().mean())
    tolerance = 4 / np.sqrt(N)
    assert abs(c - resultant * np.cos(1.0)) < tolerance
    assert abs(sn - resultant * np.sin(1.0)) < tolerance


def _relaxed(m, **kwargs):
    return m.distributions.RelaxedBernoulli(m.tensor(0.5), **kwargs)


@pytest.mark.parametrize("param", ["probs", "logits"])
def test_relaxed_bernoulli_matches_torch(param):
    values = {"probs": [0.1, 0.7, 0.95], "logits": [-2.0, 0.3, 4.0]}[param]
    x = [0.2, 0.9, 0.5]
    want, got = (_relaxed(m, **{param: m.tensor(values)}) for m in (torch, strata))
    for fn in (lambda d, m: d.log_prob(m.tensor(x)), lambda d, m: d.probs,
               lambda d, m: d.logits, lambda d, m: d.temperature):
        np.testing.assert_allclose(fn(got, strata).numpy(), fn(want, torch).numpy(),
                                   rtol=1e-6, atol=1e-6)
    assert got.has_rsample and got.batch_shape == (3,)
    assert got.expand((2, 3)).batch_shape == (2, 3)
    check_error(lambda m: m.distributions.RelaxedBernoulli(m.tensor(0.5)))


def test_relaxed_bernoulli_rsample_is_differentiable_and_in_the_unit_interval():
    strata.manual_seed(0)
    p = strata.tensor([0.2, 0.8], requires_grad=True)
    d = strata.distributions.RelaxedBernoulli(strata.tensor(0.5), probs=p)
    s = d.rsample((N,))
    assert s.shape == (N, 2) and float(s.min()) > 0 and float(s.max()) < 1
    # P(s > 1/2) = P(logistic noise > -logit p) = p, at any temperature
    np.testing.assert_allclose((s > 0.5).float().mean(0).numpy(), [0.2, 0.8], atol=0.02)
    s.mean().backward()
    assert p.grad is not None and bool((p.grad > 0).all())
