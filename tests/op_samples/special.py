"""Sample inputs for the ops of ``ops/special.py`` (helpers and dtype lists shared with
``op_samples/pointwise.py``, whose conventions these follow)."""

import numpy as np

from op_samples import Sample
from op_samples.pointwise import ALL, FLOATS, SPECIAL, _loose, _two, _unary_samples, arr, sample

# --- unary ---------------------------------------------------------------------------------------
UNARY_FLOAT = {  # name -> value range; integer inputs compute in the default float dtype
    "erf": (-3, 3), "erfc": (-3, 3), "erfinv": (-0.99, 0.99), "lgamma": (0.1, 6),
    "digamma": (-2.5, 6),
}

SAMPLES = {}
for _name, (_lo, _hi) in UNARY_FLOAT.items():
    SAMPLES |= _unary_samples(_name, ALL, _lo, _hi, True, float_result=True)
SAMPLES["aten::lgamma"].append(
    sample(lambda m, x: m.lgamma(x), [np.array([-0.5, -1.5, -2.7, -1.0, 0.0, 1.0, 2.0, 150.0,
                                                1e-8, 1e10])], ["float64"], "poles-and-range"))
SAMPLES["aten::digamma"].append(
    sample(lambda m, x: m.digamma(x), [np.array([-0.5, -1.5, -2.7, -1.0, -0.0, 1e-30, 1.4616321,
                                                 10.0, 11.5, 1e16, 1e18])], ["float64"],
           "poles-and-range"))
SAMPLES["aten::polygamma"] = [
    sample(lambda m, x, n=n: m.polygamma(n, x), [arr(d, lo=-2.5, hi=6, seed=n)], [d], f"n{n}-{d}")
    for n in (0, 1, 2, 3) for d in FLOATS] + [
    sample(lambda m, x: m.polygamma(2, x), [SPECIAL], ["float64"], "special"),
    sample(lambda m, x: m.polygamma(1, x), [SPECIAL.astype("float32")], ["float32"],
           "special-trigamma"),
    sample(lambda m, x: m.polygamma(4, x), [np.array([-3.3, -0.5, 0.25, 1.0, 2.0, 9.5, 10.0,
                                                      30.0, 1e3])], ["float64"], "range"),
    sample(lambda m, x: x.polygamma(3), [arr("float64", (3, 4, 5), 0.1, 6)], ["float64"],
           "method-3d"),
    sample(lambda m, x: m.polygamma(n=2, input=x), [arr("float32", (), 0.1, 6)], ["float32"],
           "0dim-kw"),
    sample(lambda m, x: m.polygamma(1, x), [arr("float32", (0, 3))], ["float32"], "empty"),
    sample(lambda m, x: m.polygamma(2, x), [arr("int64", lo=1, hi=5)], ["int64"], "int-to-float"),
]
SAMPLES["aten::polygamma_"] = [
    sample(lambda m, x, n=n: x.polygamma_(n), [arr(d, lo=0.1, hi=6)], [d], f"n{n}-{d}")
    for n, d in ((0, "float32"), (1, "float64"), (2, "float16"), (3, "bfloat16"))] + [
    sample(lambda m, x: x.polygamma_(2), [arr("float64", (0, 2))], ["float64"], "empty",
           check_stride=False)]
SAMPLES["aten::erfinv"].append(
    sample(lambda m, x: m.erfinv(x), [np.array([-1.0, 1.0, 1.5, -2.0, 0.0, 0.999, -0.7, 0.7])],
           ["float64"], "edges"))
SAMPLES["aten::erf"].append(
    sample(lambda m, x: m.erf(x), [np.linspace(-7, 7, 2001)], ["float64"], "large-array"))


# --- Bessel functions, entr, logit, sinc, mvlgamma, zeta, igamma ----------------------------------
def _float_unary_samples(qualname, fn, lo, hi, specials=SPECIAL, dtypes=ALL, **kw):
    return {qualname: [sample(fn, [arr(d, (2, 3), lo, hi)], [d], d, **_loose(d), **kw)
                       for d in dtypes] + [
        Sample(fn, (specials,), name="special"),
        Sample(fn, (np.zeros((0, 2), np.float32),), name="empty"),
        Sample(fn, (np.array(1.25),), name="0d"),
    ]}


_BESSEL = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 0.5, -1.5, 7.9, 8.0, 8.1, -30.0, 100.0])


def _special_samples():
    out = {}
    for qualname, fn in (
            ("aten::i0", lambda m, x: m.i0(x)),
            ("aten::special_i0e", lambda m, x: m.special.i0e(x)),
            ("aten::special_i1", lambda m, x: m.special.i1(x)),
            ("aten::special_i1e", lambda m, x: m.special.i1e(x))):
        out |= _float_unary_samples(qualname, fn, -12, 12, _BESSEL)
    out |= _float_unary_samples("aten::special_entr", lambda m, x: m.special.entr(x), 0.01, 4)
    out["aten::special_entr"].append(
        Sample(lambda m, x: m.special.entr(x), (arr("int64", lo=-2, hi=4),), name="int"))
    out["aten::i0_"] = [sample(lambda m, x: x.i0_(), [arr(d, lo=-5, hi=5)], [d], d)
                        for d in FLOATS]
    out |= _float_unary_samples("aten::logit", lambda m, x: m.logit(x), 0.01, 0.99)
    out["aten::logit"] += [
        Sample(lambda m, x: x.logit(eps=0.2), (arr("float32", lo=-0.5, hi=1.5),), name="eps"),
        Sample(lambda m, x: m.logit(x, -1.0), (arr("float64", lo=0, hi=1),), name="neg_eps")]
    out["aten::logit_"] = [
        sample(lambda m, x: x.logit_(), [arr(d, lo=0.01, hi=0.99)], [d], d) for d in FLOATS] + [
        Sample(lambda m, x: m.logit_(x, 0.25), (arr("float64", lo=0, hi=1),), name="eps")]
    out |= _float_unary_samples("aten::sinc", lambda m, x: m.sinc(x), -4, 4)
    out["aten::sinc_"] = [sample(lambda m, x: x.sinc_(), [arr(d)], [d], d) for d in FLOATS]
    out |= _float_unary_samples("aten::mvlgamma", lambda m, x: m.mvlgamma(x, 3), 1.1, 6,
                                np.array([1.5, 2.0, 10.0, np.inf, np.nan]), dtypes=FLOATS)
    out["aten::mvlgamma"] += [
        Sample(lambda m, x: x.mvlgamma(1), (arr("float64", lo=0.1, hi=4),), name="p1"),
        Sample(lambda m, x: x.mvlgamma(2), (arr("int64", lo=1, hi=5),), name="int")]
    out["aten::mvlgamma_"] = [
        Sample(lambda m, x: x.mvlgamma_(2), (arr(d, lo=1, hi=5),), name=d)
        for d in ("float32", "float64")]
    zeta = np.array([0.5, 1.0, 2.0, 3.5, 2.0, 4.0, 2.5, np.inf, np.nan])
    zeta_q = np.array([1.0, 1.0, 2.0, -1.5, -1.0, -2.5, 0.0, 3.0, 1.0])
    out["aten::special_zeta"] = [
        _two("zeta", lambda m, a, b: m.special.zeta(a, b), d, lo=1.5, hi=6)
        for d in ("float32", "float64")] + [
        Sample(lambda m, a, b: m.special.zeta(a, b), (zeta, zeta_q), name="domain"),
        Sample(lambda m, a, b: m.special.zeta(a, b), (arr("int64", lo=2, hi=5),
                                                      arr("int32", (3,), 1, 4)), name="int"),
        Sample(lambda m, b: m.special.zeta(2.0, b), (arr("float32", lo=0.5, hi=4),),
               name="scalar_self"),
        Sample(lambda m, a: m.special.zeta(a, 2), (arr("float64", lo=1.5, hi=4),),
               name="scalar_other")]
    return out


_IGAMMA_A = np.array([0.0, 0.0, -1.0, 1.0, np.inf, np.inf, 1.0, np.nan, 0.5, 3.0, 30.0, 100.0,
                      1000.0, 2.0, 1e-3, 0.0])
_IGAMMA_X = np.array([0.0, 1.0, 1.0, -1.0, 1.0, np.inf, np.inf, 1.0, 0.2, 7.0, 31.0, 90.0,
                      1010.0, 1e-5, 1e3, np.nan])


def _igamma_samples(name):
    """P(a, x) and Q(a, x): every dtype, the domain edges of ATen's calc_igamma, a ~ x large
    (where ATen's asymptotic series is ~1e-9 off: looser float64 tolerance), in-place."""
    fn = lambda m, a, x: getattr(m, name)(a, x)   # noqa: E731
    samples = [_two(name, fn, d, lo=0.1, hi=6, **_loose(d)) for d in FLOATS] + [
        Sample(fn, (_IGAMMA_A, _IGAMMA_X), name="domain", rtol=1e-8, atol=1e-12),
        Sample(lambda m, a, x: getattr(a, name)(x), (arr("float32", lo=0.5, hi=40),
                                                     arr("float32", (3,), 0.5, 40, seed=1)),
               name="method")]
    inplace = [sample(lambda m, a, x: getattr(a, name + "_")(x),
                      [arr(d, lo=0.1, hi=6), arr(d, (3,), 0.1, 6, seed=1)], [d, d], d, **_loose(d))
               for d in FLOATS]
    return {f"aten::{name}": samples, f"aten::{name}_": inplace}


# --- composites -----------------------------------------------------------------------------------
SAMPLES["aten::xlogy.Tensor"] = [
    sample(lambda m, a, b: m.xlogy(a, b), [arr(d, lo=0, hi=3), arr(d, (3,), 0, 3, 1)],
           [d, d], d) for d in ALL] + [
    sample(lambda m, a, b: m.xlogy(a, b), [SPECIAL[:, None], SPECIAL[None, :]],
           ["float64", "float64"], "special"),
    sample(lambda m, a: m.xlogy(a, 2), [arr("int32")], ["int32"], "int-scalar"),
    sample(lambda m, a: m.xlogy(a, 2.0), [arr("float16")], ["float16"], "half-scalar"),
    sample(lambda m, b: m.xlogy(3, b), [arr("float64", lo=0)], ["float64"], "scalar-self"),
    sample(lambda m, a, b: a.xlogy(b), [arr("float16"), arr("float32", ())],
           ["float16", "float32"], "0dim-other")]
SAMPLES.update(_special_samples())
SAMPLES.update(_igamma_samples("igamma"))
SAMPLES.update(_igamma_samples("igammac"))
