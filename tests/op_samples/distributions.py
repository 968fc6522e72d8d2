"""Samples for the sampling ops of ``strata.distributions``: random draws compare shape and dtype
(their statistics are tested in tests/test_distributions_more.py); ``sign`` of a draw is
deterministic, which lets the op database check values and run the gradient through
``_standard_gamma``'s formula. ``_standard_gamma_grad`` is deterministic and compared by value."""

import numpy as np

from . import Sample

_rng = np.random.default_rng(11)
ALPHA = _rng.uniform(0.3, 4.0, (3, 4))


def R(fn, *inputs, name):
    return Sample(fn, inputs, name=name, random=True)


SAMPLES = {
    "aten::_standard_gamma": [
        R(lambda m, a: m._standard_gamma(a), ALPHA, name="float64"),
        R(lambda m, a: m._standard_gamma(a.float().t()), ALPHA, name="float-transposed"),
        R(lambda m, a: m._standard_gamma(a[:0]), ALPHA, name="empty"),
        Sample(lambda m, a: m._standard_gamma(a).sign(), (ALPHA,), name="positive"),
    ],
    "aten::_standard_gamma_grad": [
        # every region of ATen's approximation: small x, large alpha (near and far), rational
        Sample(lambda m, a, x: m._standard_gamma_grad(a, x),
               (np.array([0.5, 2.0, 9.0, 9.0, 20.0, 3.0, 1.5]),
                np.array([0.3, 0.7, 9.5, 3.0, 40.0, 2.5, 4.0])), name="regions"),
        Sample(lambda m, a, x: m._standard_gamma_grad(a.float(), x.float()),
               (ALPHA, _rng.uniform(0.1, 6.0, (3, 4))), name="float", rtol=1e-5),
    ],
    "aten::_sample_dirichlet": [
        R(lambda m, a: m._sample_dirichlet(a), ALPHA, name="float64"),
        R(lambda m, a: m._sample_dirichlet(a.float()[0]), ALPHA, name="1d"),
        # rounded: the draws (and so the last bit of their sum) differ between devices
        Sample(lambda m, a: m._sample_dirichlet(a).sum(-1).round(decimals=9), (ALPHA,),
               name="sums-to-one",
               meta=False, noncontiguous=False),
    ],
    "aten::poisson": [
        R(lambda m, a: m.poisson(a), ALPHA, name="float64"),
        R(lambda m, a: m.poisson(a.half()), ALPHA, name="half"),
        Sample(lambda m, a: m.poisson(a * 0), (ALPHA,), name="zero-rate"),
        R(lambda m, a: m.poisson(a[0, 0]), ALPHA, name="0-dim"),
    ],
    "aten::binomial": [
        R(lambda m, n, p: m.binomial(n, p), np.full((3, 4), 10.0), ALPHA / 4.0,
          name="float64"),
        R(lambda m, n, p: m.binomial(n.float(), p.float().t()), np.full((4, 3), 5.0),
          ALPHA / 4.0, name="float-transposed"),
        Sample(lambda m, n, p: m.binomial(n, p), (np.full((3, 4), 7.0), np.ones((3, 4))),
               name="certain"),
    ],
}
