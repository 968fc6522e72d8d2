"""Sample inputs for the ops of ``ops/reductions.py``."""

import numpy as np

from op_samples import Sample

_rng = np.random.default_rng(1234)
nan, inf = float("nan"), float("inf")


def _f(*shape, dtype=np.float32):
    return _rng.standard_normal(shape).astype(dtype)


def _i(*shape, lo=-4, hi=5, dtype=np.int64):
    return _rng.integers(lo, hi, shape).astype(dtype)


F = _f(3, 4)                       # float32 matrix
F3 = _f(2, 3, 4)                   # float32 3-d
D64 = _f(3, 5, dtype=np.float64)
POS = np.abs(_f(3, 4)) + 0.5       # positive, for prod / logs
S0 = np.array(1.5, dtype=np.float32)
E = np.zeros((0, 3), dtype=np.float32)
I = _i(3, 4)
I32 = _i(4, 3, dtype=np.int32)
U8 = _i(3, 4, lo=0, hi=4, dtype=np.uint8)
B = _rng.random((3, 4)) < 0.5
NAN = np.array([[1.0, nan, 3.0, -1.0], [-inf, 2.0, 0.0, inf], [4.0, 4.0, -2.0, 1.0]],
               dtype=np.float32)
TIES = np.array([[3, 1, 3, 2, 1], [0, 0, 5, 5, 1]], dtype=np.int64)


def bf16(m, x):
    return x.to(m.bfloat16)


def f16(m, x):
    return x.to(m.float16)


SAMPLES = {
    "aten::sum.dim_IntList": [
        Sample(lambda m, x: m.sum(x), (F,), name="all"),
        Sample(lambda m, x: x.sum(1), (F,), name="dim"),
        Sample(lambda m, x: x.sum(-1, keepdim=True), (F3,), name="neg_keepdim"),
        Sample(lambda m, x: m.sum(x, (0, 2)), (F3,), name="dims"),
        Sample(lambda m, x: m.sum(x, dim=[]), (F,), name="empty_list"),
        Sample(lambda m, x: x.sum(axis=0), (F,), name="axis"),
        Sample(lambda m, x: m.sum(input=x, dim=0, dtype=m.float64), (F,), name="dtype"),
        Sample(lambda m, x: x.sum(0, dtype=m.int32), (F,), name="float_to_int"),
        Sample(lambda m, x: m.sum(x), (D64,), name="f64"),
        Sample(lambda m, x: f16(m, x).sum(1), (F,), name="f16"),
        Sample(lambda m, x: bf16(m, x).sum(), (F,), name="bf16"),
        Sample(lambda m, x: x.sum(0), (I,), name="int64"),
        Sample(lambda m, x: m.sum(x), (I32,), name="int32"),
        Sample(lambda m, x: x.sum(1), (U8,), name="uint8"),
        Sample(lambda m, x: x.sum(), (B,), name="bool"),
        Sample(lambda m, x: x.sum(1), (NAN,), name="nan_inf"),
        Sample(lambda m, x: x.sum(), (S0,), name="0d"),
        Sample(lambda m, x: x.sum(0, keepdim=True), (S0,), name="0d_dim"),
        Sample(lambda m, x: x.sum(), (E,), name="empty"),
        Sample(lambda m, x: x.sum(0), (E,), name="empty_dim0"),
        Sample(lambda m, x: x.sum(1), (E,), name="empty_dim1"),
    ],
    "aten::prod": [
        Sample(lambda m, x: m.prod(x), (POS,)),
        Sample(lambda m, x: x.prod(dtype=m.float64), (POS,), name="dtype"),
        Sample(lambda m, x: x.prod(), (I,), name="int"),
        Sample(lambda m, x: x.prod(), (B,), name="bool"),
        Sample(lambda m, x: x.prod(), (E,), name="empty"),
        Sample(lambda m, x: x.prod(), (S0,), name="0d"),
    ],
    "aten::prod.dim_int": [
        Sample(lambda m, x: m.prod(x, 1), (POS,)),
        Sample(lambda m, x: x.prod(-1, keepdim=True), (POS,), name="keepdim"),
        Sample(lambda m, x: x.prod(0, dtype=m.float64), (I,), name="dtype"),
        Sample(lambda m, x: x.prod(0), (U8,), name="uint8"),
        Sample(lambda m, x: f16(m, x).prod(1), (POS,), name="f16"),
        Sample(lambda m, x: x.prod(0), (E,), name="empty"),
        Sample(lambda m, x: x.prod(0), (S0,), name="0d"),
    ],
    "aten::mean.dim": [
        Sample(lambda m, x: x.mean(), (F,), name="all"),
        Sample(lambda m, x: m.mean(x, 1), (F,), name="dim"),
        Sample(lambda m, x: x.mean((0, -1), keepdim=True), (F3,), name="dims_keepdim"),
        Sample(lambda m, x: x.mean(dtype=m.float64), (I,), name="int_dtype"),
        Sample(lambda m, x: x.mean(0, dtype=m.float16), (F,), name="narrow_dtype"),
        Sample(lambda m, x: f16(m, x).mean(1), (F,), name="f16"),
        Sample(lambda m, x: bf16(m, x).mean(0), (F,), name="bf16"),
        Sample(lambda m, x: x.mean(0), (NAN,), name="nan"),
        Sample(lambda m, x: x.mean(), (E,), name="empty"),
        Sample(lambda m, x: x.mean(1), (E,), name="empty_dim1"),
        Sample(lambda m, x: x.mean(0), (E,), name="empty_dim0"),
        Sample(lambda m, x: x.mean(), (S0,), name="0d"),
    ],
    "aten::nansum": [
        Sample(lambda m, x: m.nansum(x), (NAN,)),
        Sample(lambda m, x: x.nansum(1, keepdim=True), (NAN,), name="dim"),
        Sample(lambda m, x: m.nansum(x, dtype=m.float32), (I32,), name="int_dtype"),
        Sample(lambda m, x: m.nansum(x), (B,), name="bool"),
        Sample(lambda m, x: f16(m, x).nansum(0), (NAN,), name="f16"),
    ],
    "aten::nanmean": [
        Sample(lambda m, x: m.nanmean(x), (NAN,)),
        Sample(lambda m, x: x.nanmean(1), (NAN,), name="dim"),
        Sample(lambda m, x: m.nanmean(x, 0, keepdim=True, dtype=m.float64), (NAN,),
               name="dtype"),
        Sample(lambda m, x: m.nanmean(x), (E,), name="empty"),
    ],
    "aten::amax": [
        Sample(lambda m, x: m.amax(x), (F,), name="all"),
        Sample(lambda m, x: x.amax(1), (NAN,), name="nan"),
        Sample(lambda m, x: x.amax((0, 2), keepdim=True), (F3,), name="dims"),
        Sample(lambda m, x: x.amax(-1), (I,), name="int"),
        Sample(lambda m, x: x.amax(0), (B,), name="bool"),
        Sample(lambda m, x: bf16(m, x).amax(0), (NAN,), name="bf16"),
        Sample(lambda m, x: x.amax(1), (E,), name="empty_ok"),
        Sample(lambda m, x: x.amax(), (S0,), name="0d"),
    ],
    "aten::amin": [
        Sample(lambda m, x: m.amin(x, 0), (F,)),
        Sample(lambda m, x: x.amin(), (NAN,), name="nan"),
        Sample(lambda m, x: x.amin(dim=1, keepdim=True), (U8,), name="uint8"),
        Sample(lambda m, x: f16(m, x).amin(1), (NAN,), name="f16"),
    ],
    "aten::max": [
        Sample(lambda m, x: x.max(), (F,)),
        Sample(lambda m, x: m.max(x), (NAN,), name="nan"),
        Sample(lambda m, x: m.max(input=x), (I,), name="int"),
        Sample(lambda m, x: x.max(), (B,), name="bool"),
        Sample(lambda m, x: x.max(), (S0,), name="0d"),
    ],
    "aten::min": [
        Sample(lambda m, x: x.min(), (F,)),
        Sample(lambda m, x: m.min(x), (NAN,), name="nan"),
        Sample(lambda m, x: bf16(m, x).min(), (F,), name="bf16"),
    ],
    "aten::max.dim": [
        Sample(lambda m, x: x.max(1), (F,)),
        Sample(lambda m, x: m.max(x, dim=0, keepdim=True), (F3,), name="keepdim"),
        Sample(lambda m, x: m.max(x, -1), (NAN,), name="nan"),
        Sample(lambda m, x: x.max(1), (TIES,), name="ties_first"),
        Sample(lambda m, x: x.max(0), (B,), name="bool"),
        Sample(lambda m, x: f16(m, x).max(1), (NAN,), name="f16"),
        Sample(lambda m, x: bf16(m, x).max(0), (F,), name="bf16"),
        Sample(lambda m, x: x.max(1), (E,), name="empty_ok"),
        Sample(lambda m, x: x.max(0), (S0,), name="0d"),
    ],
    "aten::min.dim": [
        Sample(lambda m, x: x.min(0), (F,)),
        Sample(lambda m, x: m.min(x, 1, True), (TIES,), name="ties_first"),
        Sample(lambda m, x: x.min(dim=1), (NAN,), name="nan"),
        Sample(lambda m, x: x.min(-1), (S0,), name="0d"),
    ],
    "aten::argmax": [
        Sample(lambda m, x: x.argmax(), (F,), name="flat"),
        Sample(lambda m, x: m.argmax(x, dim=1), (F3,), name="dim"),
        Sample(lambda m, x: x.argmax(1, keepdim=True), (TIES,), name="ties"),
        Sample(lambda m, x: x.argmax(), (NAN,), name="nan"),
        Sample(lambda m, x: x.argmax(keepdim=True), (F,), name="flat_keepdim"),
        Sample(lambda m, x: bf16(m, x).argmax(0), (NAN,), name="bf16"),
        Sample(lambda m, x: x.argmax(1), (E,), name="empty_ok"),
        Sample(lambda m, x: x.argmax(0), (S0,), name="0d"),
    ],
    "aten::argmin": [
        Sample(lambda m, x: x.argmin(), (F,), name="flat"),
        Sample(lambda m, x: m.argmin(x, 0), (TIES,), name="ties"),
        Sample(lambda m, x: x.argmin(1), (NAN,), name="nan"),
        Sample(lambda m, x: f16(m, x).argmin(-1), (F3,), name="f16"),
    ],
    "aten::aminmax": [
        Sample(lambda m, x: m.aminmax(x), (F,)),
        Sample(lambda m, x: m.aminmax(x, dim=1, keepdim=True), (NAN,), name="dim"),
        Sample(lambda m, x: x.aminmax(dim=-1), (I,), name="int"),
        Sample(lambda m, x: m.aminmax(x, keepdim=True), (F,), name="all_keepdim"),
        Sample(lambda m, x: m.aminmax(x, dim=0), (S0,), name="0d"),
    ],
    "aten::var.correction": [
        Sample(lambda m, x: x.var(), (F,)),
        Sample(lambda m, x: m.var(x, 1), (F,), name="dim"),
        Sample(lambda m, x: x.var(0, keepdim=True, correction=0), (D64,), name="correction"),
        Sample(lambda m, x: x.var((0, 2), correction=2.5), (F3,), name="float_correction"),
        Sample(lambda m, x: x.var(unbiased=False), (F,), name="unbiased_kw"),
        Sample(lambda m, x: m.var(x, 1, False, True), (F,), name="legacy_positional"),
        Sample(lambda m, x: x.var(False), (F,), name="legacy_bool"),
        Sample(lambda m, x: f16(m, x).var(1), (F,), name="f16"),
        Sample(lambda m, x: x.var(1), (NAN,), name="nan"),
        Sample(lambda m, x: x.var(dim=[]), (F,), name="empty_list"),
        Sample(lambda m, x: x.var(0), (E,), name="empty"),
    ],
    "aten::std.correction": [
        Sample(lambda m, x: x.std(), (F,)),
        Sample(lambda m, x: m.std(x, dim=0, correction=0, keepdim=True), (F,), name="dim"),
        Sample(lambda m, x: x.std(1, True), (D64,), name="legacy"),
        Sample(lambda m, x: bf16(m, x).std(0), (F,), name="bf16", atol=3e-2, rtol=3e-2),
        Sample(lambda m, x: x.std(0), (S0,), name="0d_nan"),
    ],
    "aten::var_mean.correction": [
        Sample(lambda m, x: m.var_mean(x), (F,)),
        Sample(lambda m, x: m.var_mean(x, 1, True, True), (F,), name="legacy"),
        Sample(lambda m, x: m.var_mean(x, (0, 1), correction=0), (F3,), name="dims"),
    ],
    "aten::std_mean.correction": [
        Sample(lambda m, x: m.std_mean(x), (D64,)),
        Sample(lambda m, x: m.std_mean(x, dim=-1, unbiased=False, keepdim=True), (F,),
               name="unbiased"),
    ],
    "aten::all.dims": [
        Sample(lambda m, x: x.all(), (B,), name="all"),
        Sample(lambda m, x: m.all(x, 1), (B,), name="dim"),
        Sample(lambda m, x: x.all(dim=(0, 1), keepdim=True), (I,), name="int"),
        Sample(lambda m, x: x.all(0), (U8,), name="uint8"),
        Sample(lambda m, x: x.all(dim=[]), (F,), name="empty_list_no_reduce"),
        Sample(lambda m, x: x.all(1), (NAN,), name="nan"),
        Sample(lambda m, x: x.all(), (E,), name="empty"),
        Sample(lambda m, x: x.all(0), (S0,), name="0d"),
    ],
    "aten::any.dims": [
        Sample(lambda m, x: x.any(), (B,), name="all"),
        Sample(lambda m, x: m.any(x, -1, keepdim=True), (I,), name="dim"),
        Sample(lambda m, x: x.any(), (U8,), name="uint8"),
        Sample(lambda m, x: x.any(1), (E,), name="empty"),
        Sample(lambda m, x: bf16(m, x).any(0), (F,), name="bf16"),
    ],
    "aten::count_nonzero": [
        Sample(lambda m, x: m.count_nonzero(x), (I,)),
        Sample(lambda m, x: x.count_nonzero(1), (B,), name="dim"),
        Sample(lambda m, x: m.count_nonzero(x, 0), (NAN,), name="nan"),
    ],
    "aten::count_nonzero.dim_IntList": [
        Sample(lambda m, x: m.count_nonzero(x, (0, 1)), (I,)),
        Sample(lambda m, x: m.count_nonzero(x, dim=[0, -1]), (F3,), name="neg"),
        Sample(lambda m, x: m.count_nonzero(x, dim=[]), (U8,), name="empty_list"),
    ],
    "aten::logsumexp": [
        Sample(lambda m, x: x.logsumexp(1), (F,)),
        Sample(lambda m, x: m.logsumexp(x, (0, 2), keepdim=True), (F3,), name="dims"),
        Sample(lambda m, x: m.logsumexp(x * 100, 0), (F,), name="large"),
        Sample(lambda m, x: x.logsumexp(1), (NAN,), name="nan_inf"),
        Sample(lambda m, x: x.logsumexp(0), (I,), name="int"),
        Sample(lambda m, x: x.logsumexp(0), (B,), name="bool"),
        Sample(lambda m, x: f16(m, x).logsumexp(-1), (F,), name="f16"),
        Sample(lambda m, x: x.logsumexp(0), (S0,), name="0d"),
        Sample(lambda m, x: x.logsumexp(1), (E,), name="empty"),
    ],
    "aten::linalg_vector_norm": [
        Sample(lambda m, x: x.norm(), (F,), name="fro"),
        Sample(lambda m, x: m.norm(x, p=1), (F,), name="p1"),
        Sample(lambda m, x: m.norm(x, p=3, dim=1), (F,), name="p3"),
        Sample(lambda m, x: x.norm(inf, 0, True), (NAN,), name="inf"),
        Sample(lambda m, x: m.norm(x, float("-inf"), dim=-1), (F,), name="neg_inf"),
        Sample(lambda m, x: m.norm(x, p=0), (I.astype(np.float32),), name="p0"),
        Sample(lambda m, x: m.norm(x, p=-1.5, dim=1), (POS,), name="neg_p"),
        Sample(lambda m, x: m.norm(x, "fro", dim=(0, 2), keepdim=True), (F3,), name="fro_dims"),
        Sample(lambda m, x: m.norm(x, dtype=m.float64), (F,), name="dtype"),
        Sample(lambda m, x: f16(m, x).norm(dim=1), (F,), name="f16"),
        Sample(lambda m, x: x.norm(), (E,), name="empty"),
        Sample(lambda m, x: x.norm(dim=0), (S0,), name="0d"),
        Sample(lambda m, x: m.linalg.vector_norm(x, ord=3.5, dim=(0, 1)), (POS,), name="linalg"),
    ],
    "aten::cumsum": [
        Sample(lambda m, x: x.cumsum(1), (F,)),
        Sample(lambda m, x: m.cumsum(x, dim=-2), (F3,), name="neg"),
        Sample(lambda m, x: m.cumsum(x, 0, dtype=m.float64), (F,), name="dtype"),
        Sample(lambda m, x: x.cumsum(0), (I32,), name="int32"),
        Sample(lambda m, x: x.cumsum(1), (U8,), name="uint8"),
        Sample(lambda m, x: x.cumsum(1), (B,), name="bool"),
        Sample(lambda m, x: f16(m, x).cumsum(1), (F,), name="f16"),
        Sample(lambda m, x: x.cumsum(1), (NAN,), name="nan"),
        Sample(lambda m, x: x.cumsum(0), (E,), name="empty"),
        Sample(lambda m, x: x.cumsum(0), (S0,), name="0d"),
    ],
    "aten::cumprod": [
        Sample(lambda m, x: x.cumprod(1), (POS,)),
        Sample(lambda m, x: m.cumprod(x, 0), (I,), name="int"),
        Sample(lambda m, x: x.cumprod(-1, dtype=m.float64), (POS,), name="dtype"),
        Sample(lambda m, x: x.cumprod(0), (B,), name="bool"),
        Sample(lambda m, x: x.cumprod(0), (S0,), name="0d"),
    ],
    "aten::cummax": [
        Sample(lambda m, x: x.cummax(1), (F,)),
        Sample(lambda m, x: m.cummax(x, 1), (TIES,), name="ties_last"),
        Sample(lambda m, x: m.cummax(x, dim=1), (NAN,), name="nan"),
        Sample(lambda m, x: x.cummax(0), (B,), name="bool"),
        Sample(lambda m, x: bf16(m, x).cummax(-1), (F3,), name="bf16"),
        Sample(lambda m, x: x.cummax(0), (E,), name="empty"),
        Sample(lambda m, x: x.cummax(0), (S0,), name="0d"),
    ],
    "aten::cummin": [
        Sample(lambda m, x: x.cummin(0), (F,)),
        Sample(lambda m, x: m.cummin(x, -1), (TIES,), name="ties_last"),
        Sample(lambda m, x: x.cummin(1), (NAN,), name="nan"),
    ],
    "aten::logcumsumexp": [
        Sample(lambda m, x: x.logcumsumexp(1), (F,)),
        Sample(lambda m, x: m.logcumsumexp(x * 300, 0), (D64,), name="wide_range"),
        Sample(lambda m, x: x.logcumsumexp(1), (NAN,), name="nan_inf"),
        Sample(lambda m, x: f16(m, x).logcumsumexp(0), (F,), name="f16"),
        Sample(lambda m, x: x.logcumsumexp(0), (S0,), name="0d"),
        Sample(lambda m, x: x.logcumsumexp(0), (E,), name="empty"),
    ],
    "aten::diff": [
        Sample(lambda m, x: m.diff(x), (F,)),
        Sample(lambda m, x: x.diff(n=2, dim=0), (I,), name="n2"),
        Sample(lambda m, x: m.diff(x, 5, 1), (F,), name="n_too_big"),
        Sample(lambda m, x: m.diff(x, 0), (F,), name="n0"),
        Sample(lambda m, x: m.diff(x), (B,), name="bool_xor"),
        Sample(lambda m, x, p, a: m.diff(x, dim=1, prepend=p, append=a),
               (F, _f(3, 2), _f(3, 1)), name="prepend_append"),
        Sample(lambda m, x, p: m.diff(x, prepend=p), (I, _f(3, 1)), name="promote"),
        Sample(lambda m, x: m.diff(x, dim=0), (E,), name="empty"),
    ],
}


# --- trapezoid rules and Vandermonde matrices ---------------------------------------------------
def _trapezoid_samples(name):
    """``name(y, x)`` and ``name(y, dx=)`` (through the function that picks the overload)."""
    xs = np.array([0.0, 0.5, 2.0, 2.5], np.float32)
    call = lambda m: getattr(m, name)
    return {
        f"aten::{name}.x": [
            Sample(lambda m, y, x: call(m)(y, x), (F, xs), name="1d-x"),
            Sample(lambda m, y, x: call(m)(y, x, dim=0), (F, xs[:3]), name="dim0"),
            Sample(lambda m, y, x: call(m)(y, x), (F, _f(3, 4) * 3), name="nd-x"),
            Sample(lambda m, y, x: call(m)(y, x, dim=1), (F3, _f(3, 1)), name="broadcast-x"),
            Sample(lambda m, y, x: call(m)(y, x), (I, np.arange(4)), name="int"),
            Sample(lambda m, y, x: call(m)(y, x), (NAN, xs), name="nan_inf"),
            Sample(lambda m, y, x: call(m)(y, x, dim=0), (E, xs[:0]), name="empty"),
        ],
        f"aten::{name}.dx": [
            Sample(lambda m, y: call(m)(y), (F,), name="default"),
            Sample(lambda m, y: call(m)(y, dx=0.25, dim=0), (D64,), name="dx"),
            Sample(lambda m, y: call(m)(y, dx=2), (I,), name="int"),
            Sample(lambda m, y: call(m)(f16(m, y), dx=0.5), (F,), name="f16"),
            Sample(lambda m, y: call(m)(y, dim=0), (E,), name="empty"),
            Sample(lambda m, y: call(m)(y, dim=-2), (F3,), name="3d"),
        ],
    }


SAMPLES.update(_trapezoid_samples("trapezoid"))
SAMPLES.update(_trapezoid_samples("trapz"))
SAMPLES.update(_trapezoid_samples("cumulative_trapezoid"))
SAMPLES["aten::vander"] = [
    Sample(lambda m, x: m.vander(x), (F[0],), name="square"),
    Sample(lambda m, x: m.vander(x, N=6, increasing=True), (D64[0],), name="increasing"),
    Sample(lambda m, x: m.vander(x, 3), (I[0],), name="int"),
    Sample(lambda m, x: m.vander(x.int(), 2), (I[0],), name="int32"),
    Sample(lambda m, x: m.vander(x, 3), (B[0],), name="bool"),
    Sample(lambda m, x: m.vander(x, 0), (F[0],), name="N0"),
    Sample(lambda m, x: m.vander(x, 1), (F[0],), name="N1"),
    Sample(lambda m, x: m.vander(x, 3), (E[:, 0],), name="empty"),
    Sample(lambda m, x: m.vander(f16(m, x), 4), (F[0],), name="f16"),
]


def _checked_on_data(fn, inputs, **kwargs):
    """cov checks its weights' values (and warns on the degrees of freedom): no meta run."""
    return Sample(fn, inputs, meta=False, **kwargs)


SAMPLES["aten::cov"] = [
    _checked_on_data(lambda m, x: m.cov(x), (F,)),
    _checked_on_data(lambda m, x: x.cov(correction=0), (D64,), name="population"),
    _checked_on_data(lambda m, x: m.cov(x), (F[0],), name="1d"),
    _checked_on_data(lambda m, x, f, a: m.cov(x, fweights=f, aweights=a), (F, _i(4, lo=0, hi=4) + 1,
                                                                 np.abs(_f(4)) + 0.1),
           name="weights"),
    _checked_on_data(lambda m, x, f: m.cov(x, correction=2, fweights=f), (F, _i(4, lo=1, hi=3)),
           name="fweights"),
    _checked_on_data(lambda m, x: m.cov(x), (I,), name="int"),
]
SAMPLES["aten::corrcoef"] = [
    _checked_on_data(lambda m, x: m.corrcoef(x), (F,)),
    _checked_on_data(lambda m, x: x.corrcoef(), (D64,), name="double"),
    _checked_on_data(lambda m, x: m.corrcoef(x), (F[0],), name="1d"),
    _checked_on_data(lambda m, x: m.corrcoef(x), (I,), name="int"),
]
