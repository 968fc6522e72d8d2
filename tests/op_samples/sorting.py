"""Sample inputs for the ops of ``ops/sorting.py``.

Ties are only compared where PyTorch's answer is deterministic: stable sorts, median/mode
(documented tie rules) and top-k/kthvalue inputs whose selected values are distinct.
"""

import numpy as np

from op_samples import Sample

_rng = np.random.default_rng(4321)
nan, inf = float("nan"), float("inf")

F = _rng.standard_normal((3, 5)).astype(np.float32)
F3 = _rng.standard_normal((2, 3, 4)).astype(np.float32)
D64 = _rng.standard_normal((4, 6))
DISTINCT = _rng.permutation(40).reshape(4, 10).astype(np.int64)
BIG = _rng.permutation(400).astype(np.float32) / 7   # 400 distinct values: top-k's partial path
S0 = np.array(2.5, dtype=np.float32)
E = np.zeros((0, 3), dtype=np.float32)
TIES = np.array([[3, 1, 3, 2, 1, 3], [0, 0, 5, 5, 1, 5]], dtype=np.int64)
FTIES = np.array([[3., 1., nan, 2., 1., nan, -0.0, 0.0], [2., 2., 2., -inf, inf, 1., 1., 2.]],
                 dtype=np.float32)
B = np.array([[True, False, True, True], [False, False, True, False]])
U8 = _rng.integers(0, 6, (3, 7)).astype(np.uint8)
COUNTS = np.array([0, 3, 1, 1, 7, 3, 0], dtype=np.int64)
W32 = _rng.random(7).astype(np.float32)
WITH_NAN = np.array([[1., nan, 3., 2., nan], [5., 4., 1., 2., 3.], [nan, nan, nan, nan, nan]],
                    dtype=np.float32)


def bf16(m, x):
    return x.to(m.bfloat16)


def f16(m, x):
    return x.to(m.float16)


SAMPLES = {
    "aten::sort.stable": [
        Sample(lambda m, x: x.sort(), (F,)),
        Sample(lambda m, x: m.sort(x, 0, True), (F,), name="dim_desc"),
        Sample(lambda m, x: x.sort(dim=1, descending=True, stable=True), (TIES,),
               name="ties_desc"),
        Sample(lambda m, x: m.sort(x, stable=True), (TIES,), name="ties"),
        Sample(lambda m, x: x.sort(), (FTIES,), name="nan_zero"),
        Sample(lambda m, x: x.sort(descending=True), (FTIES,), name="nan_desc"),
        Sample(lambda m, x: x.sort(-2), (F3,), name="3d"),
        Sample(lambda m, x: x.sort(), (B,), name="bool"),
        Sample(lambda m, x: x.sort(0, True), (U8,), name="uint8"),
        Sample(lambda m, x: f16(m, x).sort(1), (FTIES,), name="f16"),
        Sample(lambda m, x: bf16(m, x).sort(descending=True), (FTIES,), name="bf16"),
        Sample(lambda m, x: x.sort(), (S0,), name="0d"),
        Sample(lambda m, x: x.sort(0), (E,), name="empty"),
    ],
    "aten::sort": [
        Sample(lambda m, x: m.ops.aten.sort.default(x), (TIES,)),
        Sample(lambda m, x: m.ops.aten.sort.default(x, 0, True), (F,), name="desc"),
    ],
    "aten::argsort": [
        Sample(lambda m, x: x.argsort(), (FTIES,)),
        Sample(lambda m, x: m.argsort(x, 0, descending=True), (TIES,), name="desc"),
        Sample(lambda m, x: m.ops.aten.argsort.default(x, 1, True), (F,), name="aten"),
    ],
    "aten::argsort.stable": [
        Sample(lambda m, x: m.argsort(x, stable=True), (TIES,)),
        Sample(lambda m, x: x.argsort(dim=1, descending=True, stable=True), (FTIES,),
               name="desc"),
    ],
    "aten::msort": [
        Sample(lambda m, x: m.msort(x), (F,)),
        Sample(lambda m, x: x.msort(), (TIES,), name="ties"),
        Sample(lambda m, x: m.msort(x), (S0,), name="0d"),
    ],
    "aten::topk": [
        Sample(lambda m, x: x.topk(3), (F,)),
        Sample(lambda m, x: m.topk(x, 2, dim=0, largest=False), (F,), name="smallest"),
        Sample(lambda m, x: m.topk(x, 4, 1), (DISTINCT,), name="int"),
        Sample(lambda m, x: x.topk(5), (BIG,), name="partial"),
        Sample(lambda m, x: x.topk(7, largest=False), (BIG,), name="partial_smallest"),
        Sample(lambda m, x: x.topk(2, dim=1), (WITH_NAN[:2],), name="nan"),
        Sample(lambda m, x: x.topk(0, 1), (F,), name="k0"),
        Sample(lambda m, x: x.topk(5, 1), (F,), name="k_all"),
        Sample(lambda m, x: f16(m, x).topk(2), (F,), name="f16"),
        Sample(lambda m, x: x.topk(1), (S0,), name="0d"),
        Sample(lambda m, x: x.topk(1, 1), (E,), name="empty"),
    ],
    "aten::kthvalue": [
        Sample(lambda m, x: x.kthvalue(2), (F,)),
        Sample(lambda m, x: m.kthvalue(x, 3, 0, True), (DISTINCT,), name="keepdim"),
        Sample(lambda m, x: m.kthvalue(x, 5, dim=1), (WITH_NAN[:2],), name="nan_last"),
        Sample(lambda m, x: x.kthvalue(1), (S0,), name="0d"),
        Sample(lambda m, x: bf16(m, x).kthvalue(3, 0), (DISTINCT,), name="bf16"),
    ],
    "aten::median": [
        Sample(lambda m, x: x.median(), (F,)),
        Sample(lambda m, x: m.median(x), (TIES,), name="int_even"),
        Sample(lambda m, x: x.median(), (WITH_NAN,), name="nan"),
        Sample(lambda m, x: f16(m, x).median(), (F,), name="f16"),
        Sample(lambda m, x: x.median(), (E,), name="empty"),
        Sample(lambda m, x: x.median(), (S0,), name="0d"),
    ],
    "aten::median.dim": [
        Sample(lambda m, x: x.median(1), (F,)),
        Sample(lambda m, x: m.median(x, dim=1, keepdim=True), (TIES,), name="ties"),
        Sample(lambda m, x: x.median(0), (D64,), name="even"),
        Sample(lambda m, x: x.median(1), (WITH_NAN,), name="nan"),
        Sample(lambda m, x: x.median(0), (S0,), name="0d"),
        Sample(lambda m, x: x.median(1), (E,), name="empty_ok"),
    ],
    "aten::nanmedian": [
        Sample(lambda m, x: x.nanmedian(), (WITH_NAN,)),
        Sample(lambda m, x: m.nanmedian(x), (TIES,), name="int"),
        Sample(lambda m, x: m.nanmedian(x), (E,), name="empty"),
    ],
    "aten::nanmedian.dim": [
        Sample(lambda m, x: x.nanmedian(1), (WITH_NAN,)),
        Sample(lambda m, x: m.nanmedian(x, 0, True), (WITH_NAN,), name="keepdim"),
        Sample(lambda m, x: x.nanmedian(-1), (D64,), name="no_nan"),
    ],
    "aten::mode": [
        Sample(lambda m, x: x.mode(), (TIES,)),
        Sample(lambda m, x: m.mode(x, 0, keepdim=True), (TIES,), name="dim0"),
        Sample(lambda m, x: m.mode(x, 1), (U8,), name="uint8"),
        Sample(lambda m, x: x.mode(), (B,), name="bool"),
        Sample(lambda m, x: x.mode(1), (np.array([[-0.0, 0.0, 1.0], [0.0, -0.0, 2.0]]),),
               name="signed_zero"),
        Sample(lambda m, x: x.mode(0), (F,), name="all_distinct"),
        Sample(lambda m, x: x.mode(), (S0,), name="0d"),
        Sample(lambda m, x: x.mode(1), (E,), name="empty_ok"),
    ],
    "aten::_unique2": [
        Sample(lambda m, x: m.unique(x), (TIES,), meta=False),
        Sample(lambda m, x: x.unique(return_inverse=True, return_counts=True), (U8,),
               meta=False, name="all_outputs"),
        Sample(lambda m, x: m.unique(x, return_counts=True), (FTIES,), meta=False, name="nan"),
        Sample(lambda m, x: m.unique(x, sorted=False, return_inverse=True), (B,), meta=False,
               name="bool"),
        Sample(lambda m, x: m.unique(bf16(m, x)), (FTIES,), meta=False, name="bf16"),
        Sample(lambda m, x: m.unique(x, return_inverse=True), (S0,), meta=False, name="0d"),
        Sample(lambda m, x: m.unique(x, return_inverse=True, return_counts=True), (E,),
               meta=False, name="empty"),
        Sample(lambda m, x: m.ops.aten._unique2.default(x), (TIES,), meta=False, name="aten"),
    ],
    "aten::unique_dim": [
        Sample(lambda m, x: m.unique(x, dim=0, return_inverse=True, return_counts=True),
               (np.array([[1, 2], [0, 5], [1, 2], [0, 4]]),), meta=False),
        Sample(lambda m, x: x.unique(dim=1), (TIES,), meta=False, name="dim1"),
        Sample(lambda m, x: m.unique(x, dim=0), (E,), meta=False, name="empty"),
    ],
    "aten::unique_consecutive": [
        Sample(lambda m, x: m.unique_consecutive(x), (TIES,), meta=False),
        Sample(lambda m, x: x.unique_consecutive(return_inverse=True, return_counts=True),
               (np.array([1, 1, 2, 2, 3, 1, 1]),), meta=False, name="all_outputs"),
        Sample(lambda m, x: m.unique_consecutive(x, return_counts=True, dim=0),
               (np.array([[1, 2], [1, 2], [3, 4], [1, 2]]),), meta=False, name="dim"),
        Sample(lambda m, x: m.unique_consecutive(x, True, True), (S0,), meta=False, name="0d"),
        Sample(lambda m, x: m.unique_consecutive(x, return_inverse=True), (E,), meta=False,
               name="empty"),
    ],
    "aten::bincount": [
        Sample(lambda m, x: m.bincount(x), (COUNTS,), meta=False),
        Sample(lambda m, x, w: x.bincount(w, minlength=10), (COUNTS, W32),
               meta=False, name="weights"),
        Sample(lambda m, x, w: m.bincount(x, weights=w), (COUNTS, _rng.random(7)),
               meta=False, name="f64_weights"),
        Sample(lambda m, x, w: m.bincount(x, w), (COUNTS, np.arange(7)), meta=False,
               name="int_weights"),
        Sample(lambda m, x: m.bincount(x), (U8[0],), meta=False, name="uint8"),
        Sample(lambda m, x: m.bincount(x, minlength=3), (np.zeros(0, np.int64),), meta=False,
               name="empty"),
    ],
    "aten::histc": [
        Sample(lambda m, x: m.histc(x), (F,)),
        Sample(lambda m, x: x.histc(bins=4, min=-1, max=1), (F,), name="range"),
        Sample(lambda m, x: m.histc(x, 3, 1, 1), (D64,), name="equal_range"),
        Sample(lambda m, x: m.histc(x, 5), (np.array([2., 2., 2.], np.float32),),
               name="constant"),
        Sample(lambda m, x: m.histc(x, 4, 0, 3), (np.array([0., 1., 2., 3., 3., 4., -1., nan],
                                                           np.float32),), name="edges_nan"),
        Sample(lambda m, x: f16(m, x).histc(6), (F,), name="f16"),
        Sample(lambda m, x: m.histc(x, 3), (E,), name="empty"),
        Sample(lambda m, x: m.histc(x), (S0,), name="0d"),
    ],
}


# --- quantiles and membership -------------------------------------------------------------------
def _quantile_samples(name):
    q3 = np.array([0.0, 0.25, 0.6, 1.0], np.float32)
    modes = ("linear", "lower", "higher", "midpoint", "nearest")
    tensor_q = [
        Sample(lambda m, x, q, mode=mode: getattr(m, name)(x, q, dim=1, interpolation=mode),
               (F, q3), name=f"q-tensor-{mode}") for mode in modes] + [
        Sample(lambda m, x, q: getattr(x, name)(q.double(), 0, keepdim=True), (D64, q3),
               name="keepdim"),
        Sample(lambda m, x, q: getattr(m, name)(x, q), (F3, q3), name="flat"),
        Sample(lambda m, x, q: getattr(m, name)(x, q, keepdim=True), (F3, q3), name="flat-keep"),
        Sample(lambda m, x, q: getattr(m, name)(x, q[1], dim=-1), (WITH_NAN, q3), name="nan-0d-q"),
        Sample(lambda m, x, q: getattr(m, name)(x, q, dim=0), (S0, q3), name="0d-input"),
    ]
    scalar_q = [
        Sample(lambda m, x, mode=mode: getattr(m, name)(x, 0.35, 1, interpolation=mode),
               (WITH_NAN,), name=f"nan-{mode}") for mode in modes] + [
        Sample(lambda m, x: getattr(x, name)(0.5), (F3,), name="flat"),
        Sample(lambda m, x: getattr(x, name)(0.9, dim=-2, keepdim=True), (F3,), name="keepdim"),
        Sample(lambda m, x: getattr(m, name)(x, 0.125, 1), (FTIES,), name="ties-inf"),
        Sample(lambda m, x: getattr(m, name)(x, 1.0), (S0,), name="0d"),
    ]
    return {f"aten::{name}": tensor_q, f"aten::{name}.scalar": scalar_q}


def _isin_samples():
    ints = _rng.integers(0, 8, (3, 4)).astype(np.int64)
    tests = np.array([1, 5, 5, 7], np.int32)
    return {
        "aten::isin.Tensor_Tensor": [
            Sample(lambda m, x, t: m.isin(x, t), (ints, tests), name="int"),
            Sample(lambda m, x, t: m.isin(x, t, invert=True), (ints, tests), name="invert"),
            Sample(lambda m, x, t: m.isin(x, t.float() / 2), (ints, tests), name="promote"),
            Sample(lambda m, x, t: m.isin(x, t), (FTIES, np.array([nan, 1.0, -inf])),
                   name="nan_inf"),
            Sample(lambda m, x, t: m.isin(x, t, assume_unique=True), (U8, tests[:2]),
                   name="uint8"),
            Sample(lambda m, x, t: m.isin(x, t), (E, tests), name="empty-elements"),
            # a test set past PyTorch's 10 * n**0.145 threshold: the sorted binary search
            Sample(lambda m, x, t: m.isin(x, t), (np.arange(-6, 6), np.arange(0, 80, 3)),
                   name="searched"),
            Sample(lambda m, x, t: m.isin(x, t, invert=True),
                   (np.array([nan, -0.0, 1.5, inf, 3.0]),
                    np.array([0.0, nan, 3.0, -inf] * 10)), name="searched_nan_zero"),
            Sample(lambda m, x, t: m.isin(x, t), (ints, np.zeros(0, np.int64)), name="empty-test"),
            Sample(lambda m, x, t: m.isin(f16(m, x), t), (F, F[0]), name="f16"),
        ],
        "aten::isin.Tensor_Scalar": [
            Sample(lambda m, x: m.isin(x, 5), (ints,), name="int"),
            Sample(lambda m, x: m.isin(x, 2.5, invert=True), (F * 0 + 2.5,), name="float"),
        ],
        "aten::isin.Scalar_Tensor": [
            Sample(lambda m, t: m.isin(5, t), (tests,), name="int"),
            Sample(lambda m, t: m.isin(3.0, t, invert=True), (tests,), name="invert"),
        ],
    }


SAMPLES.update(_quantile_samples("quantile"))
SAMPLES.update(_quantile_samples("nanquantile"))
SAMPLES.update(_isin_samples())
SAMPLES["aten::histogram.bin_ct"] = [
    Sample(lambda m, x: m.histogram(x, 7), (np.random.default_rng(5).standard_normal(200)
                                            .astype(np.float32),)),
    Sample(lambda m, x, w: m.histogram(x, 4, range=(-1.0, 2.0), weight=w, density=True),
           (np.random.default_rng(6).standard_normal((5, 8)), np.random.default_rng(7)
            .random((5, 8))), name="range-weight-density"),
    Sample(lambda m, x: x.histogram(3), (np.ones(4, np.float32),), name="constant"),
    Sample(lambda m, x: m.histogram(x, 2), (np.zeros(0, np.float32),), name="empty"),
]
SAMPLES["aten::histogram.bins_tensor"] = [
    Sample(lambda m, x, b: m.histogram(x, b), (np.random.default_rng(8).standard_normal(50),
                                               np.array([-3.0, -1.0, 0.0, 0.5, 3.0]))),
    Sample(lambda m, x, b, w: m.histogram(x, b, weight=w, density=True),
           (np.random.default_rng(9).standard_normal(30).astype(np.float32),
            np.array([-2.0, 0.0, 1.0, 2.0], np.float32),
            np.random.default_rng(10).random(30).astype(np.float32)), name="weight-density"),
]
