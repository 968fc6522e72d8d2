"""Sample inputs for the ops of ``ops/scatter.py``: gather/scatter and the index_* ops.

Plain (non-reducing) scatters and index_copy get indices without duplicates: which write wins is
unspecified in PyTorch."""

import numpy as np

from . import Sample

_rng = np.random.default_rng(11)


def _a(*shape, dtype=np.float32):
    if dtype == np.bool_:
        return _rng.random(shape) > 0.5
    if np.issubdtype(dtype, np.integer):
        return _rng.integers(-5, 6, shape).astype(dtype)
    return np.asarray(_rng.standard_normal(shape), dtype)


def _i(*values):
    return np.array(values, np.int64)


def _perm_rows(rows, cols, n):
    """An index of shape (rows, cols) with distinct entries in [0, n) along dim 1."""
    return np.stack([_rng.permutation(n)[:cols] for _ in range(rows)]).astype(np.int64)


X34 = _a(3, 4)
IDX = _i([0, 2, 1], [3, 3, 0])          # gather/scatter_add index for dim 1, shape (2, 3)
IDX0 = _i([2, 0, 1, 1], [0, 0, 2, 1])   # for dim 0, shape (2, 4)

SAMPLES = {
    "aten::gather": [
        Sample(lambda m, x, i: x.gather(1, i), (X34, IDX)),
        Sample(lambda m, x, i: m.gather(x, 0, i), (X34, IDX0), name="dim0"),
        Sample(lambda m, x, i: m.gather(x, -1, index=i), (X34, IDX.astype(np.int32)),
               name="int32_negdim"),
        Sample(lambda m, x, i: x.gather(1, i), (X34, _i([1] * 7, [0] * 7)), name="wider_index"),
        Sample(lambda m, x, i: x.gather(2, i), (_a(2, 3, 4, dtype=np.int64),
                                                _i([[0, 3]], [[1, 1]])), name="3d_long"),
        Sample(lambda m, x, i: x.gather(0, i), (np.array(2.5, np.float32), _i(0, 0)),
               name="0d_self"),
        Sample(lambda m, x, i: x.gather(0, i), (_a(3), np.array(2, np.int64)), name="0d_index"),
        Sample(lambda m, x, i: x.gather(1, i), (X34, np.zeros((0, 2), np.int64)), name="empty"),
        Sample(lambda m, x, i: x.gather(0, i), (_a(4, dtype=np.bool_), _i(3, 0)), name="bool"),
    ],
    "aten::scatter.src": [
        Sample(lambda m, x, i, s: x.scatter(1, i, s), (X34, _perm_rows(3, 2, 4), _a(3, 3))),
        Sample(lambda m, x, i, s: m.scatter(x, 0, i, s), (X34, _i([2, 0, 1, 0]), _a(2, 4)),
               name="dim0"),
        Sample(lambda m, x, i, s: x.scatter(-1, i, src=s),
               (_a(2, 5, dtype=np.int64), _perm_rows(2, 3, 5).astype(np.int32),
                _a(2, 3, dtype=np.int64)), name="int32_kw"),
        Sample(lambda m, x, i, s: x.scatter(0, i, s), (np.array(1.0, np.float32),
                                                       np.array(0, np.int64),
                                                       np.array(5.0, np.float32)), name="0d"),
        Sample(lambda m, x, i, s: x.scatter(1, i, s), (X34, np.zeros((0, 1), np.int64), _a(1)),
               name="empty"),
    ],
    "aten::scatter.value": [
        Sample(lambda m, x, i: x.scatter(1, i, 2.5), (X34, _perm_rows(3, 2, 4))),
        Sample(lambda m, x, i: m.scatter(x, 0, i, value=-1), (_a(3, 2, dtype=np.int64),
                                                              _i([1, 0])), name="long_kw"),
    ],
    "aten::scatter.reduce": [
        Sample(lambda m, x, i, s: x.scatter(1, i, s, reduce="add"), (X34, IDX, _a(2, 3))),
        Sample(lambda m, x, i, s: m.scatter(x, 1, i, s, reduce="multiply"), (X34, IDX, _a(2, 3)),
               name="multiply"),
    ],
    "aten::scatter.value_reduce": [
        Sample(lambda m, x, i: x.scatter(1, i, 2.0, reduce="add"), (X34, IDX)),
        Sample(lambda m, x, i: x.scatter(0, i, 3, reduce="multiply"),
               (_a(3, 4, dtype=np.int64), IDX0), name="multiply_long"),
    ],
    "aten::scatter_.src": [
        Sample(lambda m, x, i, s: x.scatter_(1, i, s), (X34, _perm_rows(3, 2, 4), _a(3, 3))),
    ],
    "aten::scatter_.value": [
        Sample(lambda m, x, i: x.scatter_(1, i, 1.0), (np.zeros((3, 5), np.float32),
                                                      _perm_rows(3, 1, 5)), name="one_hot"),
    ],
    "aten::scatter_.reduce": [
        Sample(lambda m, x, i, s: x.scatter_(1, i, s, reduce="add"), (X34, IDX, _a(2, 3))),
    ],
    "aten::scatter_.value_reduce": [
        Sample(lambda m, x, i: x.scatter_(1, i, 2.0, reduce="multiply"), (X34, IDX)),
    ],
    "aten::scatter_add": [
        Sample(lambda m, x, i, s: x.scatter_add(1, i, s), (X34, IDX, _a(2, 3))),
        Sample(lambda m, x, i, s: m.scatter_add(x, 0, i, s), (X34, IDX0, _a(3, 5)),
               name="bigger_src"),
        Sample(lambda m, x, i, s: x.scatter_add(1, i, s), (_a(2, 3, dtype=np.int64),
                                                           _i([0, 0, 0]), _a(1, 3, dtype=np.int64)),
               name="long_duplicates"),
        Sample(lambda m, x, i, s: x.scatter_add(0, i, s),
               (np.zeros(3, np.float16), _i(1, 1, 2), _a(3).astype(np.float16)), name="f16"),
    ],
    "aten::scatter_add_": [
        Sample(lambda m, x, i, s: x.scatter_add_(1, i, s), (X34, IDX, _a(2, 3))),
    ],
    "aten::scatter_reduce.two": [
        Sample(lambda m, x, i, s: x.scatter_reduce(1, i, s, "sum"), (X34, IDX, _a(2, 3))),
        Sample(lambda m, x, i, s: x.scatter_reduce(1, i, s, "prod", include_self=False),
               (X34, IDX, _a(2, 3)), name="prod_noself"),
        Sample(lambda m, x, i, s: x.scatter_reduce(1, i, s, "mean"), (X34, IDX, _a(2, 3)),
               name="mean"),
        Sample(lambda m, x, i, s: m.scatter_reduce(x, 1, i, s, "mean", include_self=False),
               (X34, IDX, _a(2, 3)), name="mean_noself"),
        Sample(lambda m, x, i, s: x.scatter_reduce(0, i, s, "amax"), (X34, IDX0, _a(2, 4)),
               name="amax"),
        Sample(lambda m, x, i, s: x.scatter_reduce(0, i, s, reduce="amin", include_self=False),
               (X34, IDX0, _a(2, 4)), name="amin_noself"),
        Sample(lambda m, x, i, s: x.scatter_reduce(1, i, s, "mean"),
               (_a(2, 3, dtype=np.int64), _i([0, 0, 2], [1, 1, 1]), _a(2, 3, dtype=np.int64)),
               name="mean_long_floor"),
        Sample(lambda m, x, i, s: x.scatter_reduce(1, i, s, "amax", include_self=False),
               (_a(2, 3, dtype=np.int64), _i([0, 0, 2], [1, 1, 1]), _a(2, 3, dtype=np.int64)),
               name="amax_long_noself"),
        Sample(lambda m, x, i, s: x.scatter_reduce(0, i, s, "amin"),
               (_a(3), _i(0, 0), np.array([np.nan, 1.0], np.float32)), name="nan"),
        Sample(lambda m, x, i, s: x.scatter_reduce(0, i, s, "max"), (_a(3), _i(0, 2), _a(2)),
               name="max_alias"),
        Sample(lambda m, x, i, s: x.scatter_reduce(0, i, s, "prod"),
               (_a(3, dtype=np.bool_), _i(0, 0, 1), _a(3, dtype=np.bool_)), name="bool_prod"),
    ],
    "aten::scatter_reduce_.two": [
        Sample(lambda m, x, i, s: x.scatter_reduce_(1, i, s, "amax", include_self=False),
               (X34, IDX, _a(2, 3))),
    ],
    "aten::index_select": [
        Sample(lambda m, x, i: x.index_select(0, i), (X34, _i(2, 0, 2))),
        Sample(lambda m, x, i: m.index_select(x, -1, i), (X34, _i(3, 1).astype(np.int32)),
               name="int32_negdim"),
        Sample(lambda m, x, i: m.index_select(x, 1, index=i), (X34, np.array(2, np.int64)),
               name="0d_index"),
        Sample(lambda m, x, i: x.index_select(0, i), (np.array(4, np.int64), _i(0)), name="0d"),
        Sample(lambda m, x, i: x.index_select(1, i), (X34, np.zeros(0, np.int64)), name="empty"),
        Sample(lambda m, x, i: x.index_select(0, i), (_a(3, 2).astype(np.float16), _i(1, 1)),
               name="f16"),
    ],
    "aten::index_add_": [
        Sample(lambda m, x, i, s: x.index_add_(0, i, s), (X34, _i(0, 2, 0), _a(3, 4))),
        Sample(lambda m, x, i, s: x.index_add_(1, i, s, alpha=2.5), (X34, _i(3), _a(3, 1)),
               name="alpha"),
    ],
    "aten::index_add": [
        Sample(lambda m, x, i, s: x.index_add(1, i, s), (X34, _i(1, 1).astype(np.int32),
                                                         _a(3, 2))),
        Sample(lambda m, x, i, s: m.index_add(x, 0, i, s, alpha=2),
               (_a(3, 2, dtype=np.int64), _i(2), _a(1, 2, dtype=np.int64)), name="long_alpha"),
        Sample(lambda m, x, i, s: x.index_add(0, i, s), (np.array(1.0, np.float32), _i(0),
                                                         np.array(2.0, np.float32)), name="0d"),
        Sample(lambda m, x, i, s: x.index_add(0, i, s),
               (np.zeros(3, np.float16), _i(1, 1), _a(2).astype(np.float16)), name="f16"),
    ],
    "aten::index_copy_": [
        Sample(lambda m, x, i, s: x.index_copy_(0, i, s), (X34, _i(2, 0), _a(2, 4))),
    ],
    "aten::index_copy": [
        Sample(lambda m, x, i, s: x.index_copy(1, i, s), (X34, _i(3, 0), _a(3, 2))),
        Sample(lambda m, x, i, s: m.index_copy(x, 0, i, s), (_a(3), np.array(1, np.int64),
                                                             np.array(9.0, np.float32)),
               name="0d_source"),
    ],
    "aten::index_fill_.int_Scalar": [
        Sample(lambda m, x, i: x.index_fill_(1, i, -1.0), (X34, _i(0, 3))),
        Sample(lambda m, x, i: x.index_fill_(0, i, 2.5), (_a(3, 2, dtype=np.int64), _i(-1)),
               name="negative_index_long"),
    ],
    "aten::index_fill_.int_Tensor": [
        Sample(lambda m, x, i, v: x.index_fill_(1, i, v), (X34, _i(1), np.array(7.0))),
    ],
    "aten::index_fill.int_Scalar": [
        Sample(lambda m, x, i: x.index_fill(0, i, 0), (X34, _i(2, 0))),
        Sample(lambda m, x, i: m.index_fill(x, 0, i, 1.5), (np.array(3.0, np.float32),
                                                             _i(0)), name="0d"),
        Sample(lambda m, x, i: x.index_fill(1, i, True), (_a(2, 3, dtype=np.bool_),
                                                          np.array(1, np.int64)), name="bool"),
    ],
    "aten::index_fill.int_Tensor": [
        Sample(lambda m, x, i, v: m.index_fill(x, -1, i, v), (X34, _i(2, 1),
                                                              np.array(-3, np.int64))),
    ],
    "aten::take_along_dim": [
        Sample(lambda m, x, i: m.take_along_dim(x, i, 1), (X34, _i([0], [2], [1]))),
        Sample(lambda m, x, i: x.take_along_dim(i, dim=1), (X34, _i([0, 1, 3])),
               name="broadcast_index"),
        Sample(lambda m, x, i: m.take_along_dim(x, i, 2),
               (_a(3, 1, 4), np.array([[[0, 3]] * 5], np.int64)),
               name="broadcast_both"),
        Sample(lambda m, x, i: m.take_along_dim(x, i), (X34, _i(0, 11, 3)), noncontiguous=False,
               name="flat"),
    ],
    "aten::as_strided_scatter": [
        Sample(lambda m, x, s: m.as_strided_scatter(x, s, (2, 2), (4, 1), 5), (X34, _a(2, 2))),
        Sample(lambda m, x, s: x.as_strided_scatter(s, (3, 2), (1, 4)), (X34, _a(3, 2)),
               name="transposed_view"),
        Sample(lambda m, x, s: m.as_strided_scatter(x, s, (2,), (3,), 2),
               (_a(3, 4, dtype=np.int64), _a(2)), name="long_self_float_src"),
        Sample(lambda m, x, s: m.as_strided_scatter(x, s, (), (), 0),
               (np.array(1.0, np.float32), np.array(2.0, np.float32)), name="0d"),
    ],
}
