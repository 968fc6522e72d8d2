"""Sample inputs for the ops of ``ops/indexing.py``: advanced indexing, masks, nonzero, take/put,
searchsorted. Ops whose output size depends on the data are ``meta=False`` (Note [Data-dependent
shapes] in ``ops/indexing.py``)."""

import numpy as np

from . import Sample

_rng = np.random.default_rng(7)


def _a(*shape, dtype=np.float32):
    if dtype == np.bool_:
        return _rng.random(shape) > 0.5
    if np.issubdtype(dtype, np.integer):
        return _rng.integers(-5, 6, shape).astype(dtype)
    return np.asarray(_rng.standard_normal(shape), dtype)


def _i(*values):
    return np.array(values, np.int64)


X34 = _a(3, 4)
X234 = _a(2, 3, 4)
MASK34 = X34 > 0
MASK34[0, 0] = True  # at least one element selected


def _set(index_fn):
    """``x[index] = v`` as a sample function (lambdas cannot assign)."""
    def fn(m, x, *args):
        index, value = index_fn(m, *args)
        x[index] = value
        return x
    return fn


SAMPLES = {
    "aten::index.Tensor": [
        Sample(lambda m, x, i: x[i], (X34, _i(2, 0, -1)), name="rows"),
        Sample(lambda m, x, i: x[:, i], (X234, _i(1, 0)), name="middle"),
        Sample(lambda m, x, i: x[..., i], (X234, _i([3, 0], [1, 1])), name="last_2d_index"),
        Sample(lambda m, x, i, j: x[i, j], (X34, _i([0], [2]), _i(1, 3, 0)), name="broadcast"),
        Sample(lambda m, x, i, j: x[i, :, j], (X234, _i(1, 0), _i(3, 2)), name="separated"),
        Sample(lambda m, x, i, j: x[i, None, j], (X234, _i(1, 0), _i(2, 1)), name="none_between"),
        Sample(lambda m, x, i: x[None, i], (X34, _i(1)), name="after_none"),
        Sample(lambda m, x, i: x[i], (X34, np.array([1, 2], np.int32)), name="int32"),
        Sample(lambda m, x: x[[0, -1]], (X34,), name="list"),
        Sample(lambda m, x: x[[[0, 1], [2, 2]]], (X34,), name="nested_list"),
        Sample(lambda m, x, i: x[i], (X34, np.zeros(0, np.int64)), name="empty"),
        Sample(lambda m, x, i: x[i], (_a(5, dtype=np.int64), _i([0, 4], [2, 2])), name="long"),
        Sample(lambda m, x, i: x[i], (_a(4, 2, dtype=np.bool_), _i(3, 1)), name="bool"),
        Sample(lambda m, x, i: x[1:, i], (_a(4, 3, dtype=np.float64), _i(2, 2)), name="f64"),
        Sample(lambda m, x, i: x.to(m.bfloat16)[i], (_a(3, 2), _i(2, 0)), name="bf16"),
        Sample(lambda m, x, i: x[i], (_a(3, 2).astype(np.float16), _i(1)), name="f16"),
        Sample(lambda m, x, mask: x[mask], (X34, MASK34), meta=False, name="mask2d"),
        Sample(lambda m, x, mask: x[:, mask], (X234, MASK34[:, 0].copy()), meta=False,
               name="mask_dim1"),
        Sample(lambda m, x, mask, i: x[mask, i], (X234, MASK34[:2, 0].copy(), _i(2, 2, 2)[:1]),
               meta=False, name="mask_and_index"),
        Sample(lambda m, x: x[[True, False, True]], (X34,), meta=False, name="bool_list"),
        Sample(lambda m, x: x[True], (X34,), name="true"),
        Sample(lambda m, x: x[False, 0], (X34,), name="false"),
        Sample(lambda m, x, mask: x[mask], (np.array(3.0, np.float32),
                                            np.array(True)), meta=False, name="0d_mask"),
    ],
    "aten::index_put_": [
        Sample(lambda m, x, i, v: x.index_put_((i,), v), (X34, _i(2, 0), _a(2, 4)), name="rows"),
        Sample(lambda m, x, i, v: x.index_put_((i,), v), (X34, _i(1), _a(4)), name="bcast"),
        Sample(lambda m, x, i, j, v: x.index_put_((i, j), v), (X34, _i(0, 2), _i(1, 3), _a()),
               name="scalar_value"),
        Sample(lambda m, x, i, v: x.index_put_((i,), v, accumulate=True),
               (X34, _i(0, 0, 2, 0), _a(4, 4)), name="accumulate_duplicates"),
        Sample(lambda m, x, i, v: x.index_put_((i,), v, True),
               (_a(5, dtype=np.int64), _i(1, 1, 4), _a(3, dtype=np.int64)), name="acc_long"),
        Sample(lambda m, x, i, v: x.index_put_((i,), v, True),
               (_a(4).astype(np.float16), _i(1, 1, 3), _a(3).astype(np.float16)), name="acc_f16"),
        Sample(lambda m, x, mask, v: x.index_put_((mask,), v), (X34, MASK34, _a()),
               name="mask_fill"),
        Sample(lambda m, x, mask, v: x.index_put_((mask,), v),
               (X34, MASK34, np.full(int(MASK34.sum()), 9, np.float32)), name="mask_values"),
        Sample(lambda m, x, mask, v: x.index_put_((mask,), v, accumulate=True),
               (X34, MASK34, _a()), name="mask_accumulate"),
        Sample(lambda m, x, i, v: x.index_put_((i,), v), (_a(3, dtype=np.bool_), _i(2),
                                                          np.array([True])), name="bool"),
        Sample(_set(lambda m, i: (i, 1.5)), (X34, _i(1, 2)), name="setitem_rows"),
        Sample(_set(lambda m, i, v: ((slice(None), i), v)), (X234, _i(2, 0), _a(1, 1, 4)),
               name="setitem_strip_leading_ones"),
        Sample(_set(lambda m, i, j, v: ((i, slice(None), j), v)),
               (X234, _i(1, 0), _i(2, 3), _a(2, 1)), name="setitem_separated"),
        Sample(_set(lambda m, mask: (mask, -1)), (X34, MASK34), name="setitem_mask"),
        Sample(_set(lambda m, mask, v: (mask, v)), (X34, MASK34, _a().astype(np.float64)),
               name="setitem_mask_cast"),
        Sample(_set(lambda m: ([0, 2], 7)), (_a(3, 2, dtype=np.int64),), name="setitem_list"),
    ],
    "aten::index_put": [
        Sample(lambda m, x, i, v: m.index_put(x, (i,), v), (X34, _i(2, 0), _a(4)), name="rows"),
        Sample(lambda m, x, i, j, v: x.index_put((i, j), v, accumulate=True),
               (X34, _i(0, 0), _i(1, 1), _a(2)), name="accumulate"),
        Sample(lambda m, x, mask, v: x.index_put((mask,), v), (X34, MASK34, _a()),
               name="mask"),
    ],
    "aten::masked_fill.Scalar": [
        Sample(lambda m, x, mask: x.masked_fill(mask, -1.5), (X34, MASK34)),
        Sample(lambda m, x, mask: m.masked_fill(x, mask, float("-inf")), (X34, MASK34[0].copy()),
               name="broadcast_mask"),
        Sample(lambda m, x, mask: x.masked_fill(mask, 2), (X34[0].copy(), MASK34),
               name="broadcast_self"),
        Sample(lambda m, x, mask: x.masked_fill(mask, 2.7), (_a(3, 4, dtype=np.int64), MASK34),
               name="long_truncates"),
        Sample(lambda m, x, mask: x.masked_fill(mask, True), (_a(3, 4, dtype=np.bool_), MASK34),
               name="bool"),
        Sample(lambda m, x, mask: x.to(m.bfloat16).masked_fill(mask, 0.5), (X34, MASK34),
               name="bf16"),
        Sample(lambda m, x, mask: x.masked_fill(mask, 1), (_a(), np.array(True)), name="0d"),
        Sample(lambda m, x, mask: x.masked_fill(mask, value=3.0),
               (np.zeros((0, 4), np.float32), np.zeros((0, 4), bool)), name="empty_kwarg"),
    ],
    "aten::masked_fill.Tensor": [
        Sample(lambda m, x, mask, v: x.masked_fill(mask, v), (X34, MASK34, _a())),
        Sample(lambda m, x, mask, v: m.masked_fill(x, mask, v),
               (_a(3, 4, dtype=np.int64), MASK34, np.array(2.5, np.float64)), name="cast"),
        Sample(lambda m, x, mask, v: x.masked_fill(mask, v),
               (X34[:1].copy(), MASK34, np.array(-7, np.int64)), name="broadcast"),
    ],
    "aten::masked_fill_.Scalar": [
        Sample(lambda m, x, mask: x.masked_fill_(mask, 0.0), (X34, MASK34)),
        Sample(lambda m, x, mask: x.masked_fill_(mask, -1), (X234, MASK34[1].copy()),
               name="broadcast_mask"),
        Sample(lambda m, x, mask: x.masked_fill_(mask, 255),
               (_a(3, 4, dtype=np.int64).astype(np.uint8), MASK34), name="uint8"),
    ],
    "aten::masked_fill_.Tensor": [
        Sample(lambda m, x, mask, v: x.masked_fill_(mask, v), (X34, MASK34, _a())),
        Sample(lambda m, x, mask, v: x.masked_fill_(mask, v),
               (_a(3, 4, dtype=np.int32), MASK34, np.array(3, np.int64)), name="int"),
    ],
    "aten::masked_select": [
        Sample(lambda m, x, mask: x.masked_select(mask), (X34, MASK34), meta=False),
        Sample(lambda m, x, mask: m.masked_select(x, mask), (X34[0].copy(), MASK34),
               meta=False, name="broadcast_self"),
        Sample(lambda m, x, mask: m.masked_select(x, mask=mask), (X234, MASK34[0].copy()),
               meta=False, name="broadcast_mask"),
        Sample(lambda m, x, mask: x.masked_select(mask), (_a(2, 3, dtype=np.int64),
                                                          np.zeros((2, 3), bool)),
               meta=False, name="none_selected"),
    ],
    "aten::masked_scatter_": [
        Sample(lambda m, x, mask, s: x.masked_scatter_(mask, s), (X34, MASK34, _a(12))),
        Sample(lambda m, x, mask, s: x.masked_scatter_(mask, s),
               (X234, MASK34[0].copy(), _a(5, 5)), name="broadcast_mask"),
        Sample(lambda m, x, mask, s: x.masked_scatter_(mask, s),
               (_a(4, dtype=np.int64), np.array([True, False, True, True]),
                _a(3, dtype=np.int64)), name="long"),
    ],
    "aten::masked_scatter": [
        Sample(lambda m, x, mask, s: x.masked_scatter(mask, s), (X34, MASK34, _a(3, 4))),
        Sample(lambda m, x, mask, s: m.masked_scatter(x, mask, s), (X34[0].copy(), MASK34,
                                                                    _a(20)), name="broadcast"),
    ],
    "aten::nonzero": [
        Sample(lambda m, x: x.nonzero(), (MASK34,), meta=False),
        Sample(lambda m, x: m.nonzero(x), (np.array([0.0, np.nan, 2.0, -0.0], np.float32),),
               meta=False, name="nan"),
        Sample(lambda m, x: m.nonzero(x), (_a(2, 3, 2, dtype=np.int64),), meta=False, name="3d"),
        Sample(lambda m, x: m.nonzero(x), (np.array(3.0, np.float32),), meta=False, name="0d"),
        Sample(lambda m, x: m.nonzero(x), (np.array(0, np.int64),), meta=False, name="0d_zero"),
        Sample(lambda m, x: m.nonzero(x), (np.zeros((0, 3), np.float32),), meta=False,
               name="empty"),
    ],
    "aten::nonzero_numpy": [
        Sample(lambda m, x: x.nonzero(as_tuple=True), (MASK34,), meta=False),
        Sample(lambda m, x: m.nonzero(x, as_tuple=True), (np.array(True),), meta=False,
               name="0d"),
    ],
    "aten::argwhere": [
        Sample(lambda m, x: m.argwhere(x), (_a(3, 2, dtype=np.int64),), meta=False),
        Sample(lambda m, x: x.argwhere(), (np.array(2.0, np.float32),), meta=False, name="0d"),
    ],
    "aten::where": [
        Sample(lambda m, x: m.where(x > 0), (X234,), meta=False),
        Sample(lambda m, x: m.where(x), (_a(5, dtype=np.int64),), meta=False, name="int"),
    ],
    "aten::take": [
        Sample(lambda m, x, i: x.take(i), (X34, _i([0, 11], [-1, 5]))),
        Sample(lambda m, x, i: m.take(x, i), (X234, np.array(3, np.int64)), name="0d_index"),
        Sample(lambda m, x, i: m.take(x, index=i), (_a(4, dtype=np.int64), np.zeros(0, np.int64)),
               name="empty"),
    ],
    "aten::put_": [
        Sample(lambda m, x, i, s: x.put_(i, s), (X34, _i(0, 11, -2), _a(3))),
        Sample(lambda m, x, i, s: x.put_(i, s, accumulate=True), (X34, _i([1, 1], [1, 0]),
                                                                 _a(2, 2)), name="accumulate"),
        Sample(lambda m, x, i, s: x.put_(i, s), (_a(2, 3, dtype=np.int64), _i(4), _i(-9)),
               name="long"),
    ],
    "aten::put": [
        Sample(lambda m, x, i, s: m.put(x, i, s), (X34, _i(0, 5), _a(2))),
        Sample(lambda m, x, i, s: x.put(i, s, True), (X34, _i(5, 5), _a(2)), name="accumulate"),
    ],
    "aten::searchsorted.Tensor": [
        Sample(lambda m, s, v: m.searchsorted(s, v), (np.sort(_a(6)), _a(3, 4))),
        Sample(lambda m, s, v: m.searchsorted(s, v, right=True),
               (_i(1, 2, 2, 2, 5), _i([2, 0], [5, 9])), name="right_ties"),
        Sample(lambda m, s, v: m.searchsorted(s, v, side="right", out_int32=True),
               (_i(1, 2, 2, 2, 5), _i(2, 3)), name="side_int32"),
        Sample(lambda m, s, v: m.searchsorted(s, v), (np.sort(_a(2, 5), axis=-1), _a(2, 3)),
               name="batched"),
        Sample(lambda m, s, v, o: m.searchsorted(s, v, sorter=o),
               (np.array([5.0, 1, 9, 3, 7], np.float32), _a(4) * 5, _i(1, 3, 0, 4, 2)),
               name="sorter"),
        Sample(lambda m, s, v: m.searchsorted(s, v),
               (np.array([1.0, 2.0, np.nan], np.float32),
                np.array([np.nan, 1.5, 3.0], np.float32)), name="nan"),
        Sample(lambda m, s, v: m.searchsorted(s, v, right=True),
               (np.array([1.0, 2.0, np.nan], np.float32),
                np.array([np.nan, 2.0, 3.0], np.float32)), name="nan_right"),
        Sample(lambda m, s, v: m.searchsorted(s, v), (_i(1, 3, 5), np.array([2.5, 3.0])),
               name="promote"),
        Sample(lambda m, s, v: m.searchsorted(s, v), (np.sort(_a(4)), np.array(0.1, np.float32)),
               name="0d_value"),
        Sample(lambda m, s, v: m.searchsorted(s, v), (np.zeros(0, np.float32), _a(2)),
               name="empty_boundaries"),
    ],
    "aten::searchsorted.Scalar": [
        Sample(lambda m, s: m.searchsorted(s, 2), (_i(1, 2, 3),)),
        Sample(lambda m, s: m.searchsorted(s, 2.5, right=True), (_i(1, 2, 3),), name="float"),
    ],
    "aten::bucketize.Tensor": [
        Sample(lambda m, v, b: m.bucketize(v, b), (_a(3, 4), np.sort(_a(5)))),
        Sample(lambda m, v, b: m.bucketize(v, b, right=True, out_int32=True),
               (_i([1, 2], [3, 0]), _i(1, 2, 3)), name="right_int32"),
    ],
    "aten::bucketize.Scalar": [
        Sample(lambda m, b: m.bucketize(3, b), (_i(1, 3, 5),)),
        Sample(lambda m, b: m.bucketize(3, b, right=True), (_i(1, 3, 5),), name="right"),
    ],
}
