"""Sample inputs for the ops of ``ops/shape.py``: views (strides are compared with PyTorch's too)
and the shape ops that copy. View semantics (storage sharing, write-through, ``_base``) and errors
are tested in tests/test_views.py."""

import numpy as np

from . import Sample

DTYPES = ("bool", "uint8", "int64", "float16", "float32", "float64")


def arr(shape, dtype="float32", seed=0):
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return np.asarray(rng.random(shape) < 0.5)
    if dtype.startswith("float"):
        return np.asarray(rng.standard_normal(shape)).astype(dtype)
    return np.asarray(rng.integers(0 if dtype == "uint8" else -9, 10, shape)).astype(dtype)


def S(fn, *inputs, name="", **kw):
    """A sample whose strides must match PyTorch's too (views and copies alike)."""
    return Sample(fn, inputs, name=name, **({"check_stride": True} | kw))


A234 = arr((2, 3, 4))
A23 = arr((2, 3))

VIEWS = {
    "aten::view": [S(lambda m, x: x.view(6, 4), arr((2, 3, 4), d), name=d) for d in DTYPES] + [
        S(lambda m, x: x.view(-1), A234, name="flat"),
        S(lambda m, x: x.view(4, -1, 2), A234, name="infer"),
        S(lambda m, x: x.view(()), arr((1, 1)), name="to-0dim"),
        S(lambda m, x: x.view(1, 1, 1), arr(()), name="from-0dim"),
        S(lambda m: m.zeros(2, 0, 5).view(0, 5), name="empty", meta=False),
        S(lambda m, x: x.view(m.Size([3, 8])), A234, name="size"),
        S(lambda m, x: x.transpose(0, 1).view(3, 2, 2, 2), A234, name="split-last-of-permuted"),
        S(lambda m, x: x.view_as(m.empty(4, 6)), A234, name="view_as"),
    ],
    "aten::as_strided": [
        S(lambda m, x: x.as_strided((2, 2), (1, 2)), A234, name="overlap"),
        S(lambda m, x: m.as_strided(x, (3, 3), (4, 1), 2), A234, name="offset"),
        S(lambda m, x: x.as_strided((2, 3), (0, 1)), A234, name="stride-0"),
        S(lambda m, x: x.as_strided((0, 3), (1, 1), 23), A234, name="empty"),
        S(lambda m, x: x.as_strided((), (), 5), A234, name="0dim"),
    ],
    "aten::permute": [
        S(lambda m, x: x.permute(2, 0, 1), A234, name="3d"),
        S(lambda m, x: x.permute(-1, 0, -2), A234, name="negative"),
        S(lambda m, x: m.permute(x, (1, 0)), A23, name="function"),
        S(lambda m, x: x.permute([]), arr(()), name="0dim-empty-list"),
        S(lambda m: m.zeros(2, 0, 3).permute(1, 0, 2), name="empty", meta=False),
    ],
    "aten::transpose.int": [
        S(lambda m, x: x.transpose(0, 2), A234, name="3d"),
        S(lambda m, x: m.transpose(x, -1, -2), A234, name="negative"),
        S(lambda m, x: x.transpose(0, -1), arr(()), name="0dim"),
        S(lambda m, x: x.swapaxes(1, 0), arr((2, 3), "bool"), name="swapaxes"),
        S(lambda m, x: x.swapdims(1, 1), A23, name="same-dim"),
    ],
    "aten::expand": [
        S(lambda m, x: x.expand(2, 5, 4), arr((2, 1, 4)), name="middle"),
        S(lambda m, x: x.expand(3, 2, 3, 4), A234, name="new-leading"),
        S(lambda m, x: x.expand(-1, 3, -1), arr((2, 1, 4), "int64"), name="minus-one"),
        S(lambda m, x: x.expand(3, 2), arr(()), name="from-0dim"),
        S(lambda m, x: x.expand(2, 0), arr((2, 1)), name="to-empty"),
        S(lambda m, x: x.t().expand(4, 3, 2), A23, name="permuted-input"),
        S(lambda m, x: x.expand_as(m.empty(4, 2, 3)), arr((1, 3)), name="expand_as"),
        S(lambda m, x: x.expand((2, 3)), A23, name="same"),
    ],
    "aten::squeeze.dims": [
        S(lambda m, x: x.squeeze(), arr((2, 1, 3, 1)), name="all"),
        S(lambda m, x: x.squeeze(1), arr((2, 1, 3, 1)), name="one"),
        S(lambda m, x: x.squeeze(0), arr((2, 1, 3, 1)), name="not-size-1"),
        S(lambda m, x: x.squeeze((1, -1)), arr((2, 1, 3, 1)), name="dims"),
        S(lambda m, x: m.squeeze(x, -1), arr((1,)), name="to-0dim"),
        S(lambda m, x: x.squeeze(0), arr(()), name="0dim"),
        S(lambda m: m.zeros(1, 0, 1).squeeze(), name="empty", meta=False),
    ],
    "aten::unsqueeze": [
        S(lambda m, x: x.unsqueeze(d), A234, name=f"dim{d}") for d in (0, 1, 3, -1, -4)] + [
        S(lambda m, x: m.unsqueeze(x, 0), arr(()), name="0dim"),
        S(lambda m, x: x.unsqueeze(1), arr((2, 1)), name="next-to-size-1"),
    ],
    "aten::slice.Tensor": [
        S(lambda m, x: m.ops.aten.slice.Tensor(x, 1, 0, 2), A234, name="basic"),
        S(lambda m, x: m.ops.aten.slice.Tensor(x, -1, 1, None, 2), A234, name="step"),
        S(lambda m, x: m.ops.aten.slice.Tensor(x, 0, -1), A234, name="negative-start"),
        S(lambda m, x: m.ops.aten.slice.Tensor(x, 2, 5, 100), A234, name="out-of-range"),
        S(lambda m, x: m.ops.aten.slice.Tensor(x, 1, 2, 1), A234, name="empty"),
        S(lambda m, x: m.ops.aten.slice.Tensor(x), A234, name="defaults"),
    ],
    "aten::select.int": [
        S(lambda m, x: x.select(1, -1), A234, name="negative-index"),
        S(lambda m, x: m.select(x, -1, 2), A234, name="negative-dim"),
        S(lambda m, x: x.select(0, 0), arr((3,), "int64"), name="to-0dim"),
    ],
    "aten::diagonal": [S(lambda m, x: x.diagonal(), arr((3, 4)), name="2d")] + [
        S(lambda m, x, o=o: x.diagonal(o, 1, 2), A234, name=f"offset{o}")
        for o in (-2, -1, 1, 3, 5, -5)] + [
        S(lambda m, x: m.diagonal(x, 0, -1, 0), A234, name="negative-dims"),
        S(lambda m, x: x.diagonal(dim1=2, dim2=0), A234, name="reversed-dims"),
    ],
    "aten::unfold": [
        S(lambda m, x: x.unfold(2, 2, 1), A234, name="windows"),
        S(lambda m, x: x.unfold(1, 2, 2), A234, name="step"),
        S(lambda m, x: x.unfold(-1, 4, 3), A234, name="whole"),
        S(lambda m, x: x.unfold(0, 1, 1), arr(()), name="0dim"),
        S(lambda m, x: x.unfold(1, 0, 1), A234, name="size-0"),
    ],
    "aten::alias": [S(lambda m, x: m.ops.aten.alias.default(x), A234.transpose(), name="basic")],
    "aten::detach": [
        S(lambda m, x: x.detach(), A234, name="method"),
        S(lambda m, x: m.detach(x.transpose(0, 1)), A234, name="function"),
    ],
}

COMPOSITE_VIEWS = {
    "aten::reshape": [
        S(lambda m, x: x.reshape(4, 6), A234, name="view"),
        S(lambda m, x: x.transpose(0, 1).reshape(-1), A234, name="copy"),
        S(lambda m, x: x.transpose(0, 1).reshape(3, 2, 4), A234, name="view-of-permuted"),
        S(lambda m, x: m.reshape(x, (2, -1)), A234, name="function"),
        S(lambda m, x: x.reshape(()), arr((1,)), name="0dim"),
        S(lambda m: m.zeros(0, 2, 2, dtype=m.int64).reshape(0, 4), name="empty", meta=False),
        S(lambda m, x: x.reshape_as(m.empty(3, 8)), A234, name="reshape_as"),
    ],
    "aten::flatten.using_ints": [
        S(lambda m, x: x.flatten(), A234, name="all"),
        S(lambda m, x: x.flatten(1), A234, name="start"),
        S(lambda m, x: m.flatten(x, 0, -2), A234, name="range"),
        S(lambda m, x: x.flatten(1, 1), A234, name="one-dim"),
        S(lambda m, x: x.flatten(), arr(()), name="0dim"),
        S(lambda m, x: x.transpose(0, 2).flatten(), A234, name="copy"),
    ],
    "aten::unflatten.int": [
        S(lambda m, x: x.unflatten(2, (2, 2)), A234, name="basic"),
        S(lambda m, x: x.unflatten(-1, (-1, 2)), A234, name="infer"),
        S(lambda m, x: m.unflatten(x, 0, (1, 2)), A234, name="function"),
    ],
    "aten::narrow": [
        S(lambda m, x: x.narrow(1, 1, 2), A234, name="basic"),
        S(lambda m, x: x.narrow(-1, -2, 2), A234, name="negative"),
        S(lambda m, x: m.narrow(x, 0, 2, 0), A234, name="empty"),
    ],
    "aten::t": [
        S(lambda m, x: x.t(), A23, name="2d"),
        S(lambda m, x: m.t(x), arr((3,)), name="1d"),
        S(lambda m, x: x.t(), arr(()), name="0dim"),
        S(lambda m, x: x.T, A23, name="T"),
        S(lambda m, x: x.mT, A234, name="mT"),
    ],
    "aten::movedim.intlist": [
        S(lambda m, x: x.movedim(0, -1), A234, name="int"),
        S(lambda m, x: x.movedim((0, 1), (2, 0)), A234, name="lists"),
        S(lambda m, x: m.moveaxis(x, -1, 0), A234, name="moveaxis"),
    ],
    "aten::split.Tensor": [
        S(lambda m, x: x.split(2, dim=2), A234, name="even"),
        S(lambda m, x: x.split(3, -1), A234, name="uneven"),
        S(lambda m, x: m.split(x, 5, 1), A234, name="bigger-than-dim"),
        S(lambda m: m.zeros(2, 0).split(2, 1), name="empty", meta=False),
        S(lambda m: m.zeros(2, 0).split(0, 1), name="empty-0", meta=False),
    ],
    "aten::split_with_sizes": [
        S(lambda m, x: x.split([1, 3], dim=2), A234, name="method"),
        S(lambda m, x: m.split(x, (2, 0, 1), 1), A234, name="with-0"),
    ],
    "aten::chunk": [
        S(lambda m, x: x.chunk(3, 2), A234, name="uneven"),
        S(lambda m, x: m.chunk(x, 5, 1), A234, name="more-than-size"),
        S(lambda m, x: x.chunk(2, -1), A234, name="even"),
        S(lambda m: m.zeros(2, 0).chunk(3, 1), name="empty", meta=False),
    ],
    "aten::unbind.int": [
        S(lambda m, x: x.unbind(1), A234, name="dim1"),
        S(lambda m, x: m.unbind(x), A234, name="default"),
        S(lambda m: m.zeros(2, 0).unbind(-1), name="empty", meta=False),
        S(lambda m, x: tuple(x), A23, name="iter"),
    ],
    "aten::broadcast_to": [
        S(lambda m, x: x.broadcast_to(3, 2, 4), arr((2, 1)), name="varargs"),
        S(lambda m, x: m.broadcast_to(x, (2, 3)), arr((3,)), name="function"),
    ],
}

COPIES = {
    "aten::cat": [
        S(lambda m, a, b: m.cat([a, b], 1), A234, arr((2, 1, 4), seed=1), name="dim1"),
        S(lambda m, a, b: m.cat((a, b), -1), A234, arr((2, 3, 1), seed=1), name="negative-dim"),
        S(lambda m, a, b: m.cat([a, b]), arr((2, 3), "int32"), arr((1, 3), "float16"),
          name="promote"),
        S(lambda m, a, b: m.cat([a, b]), A23, np.zeros((0,), np.float32), name="legacy-empty"),
        S(lambda m, b: m.cat([m.zeros(2, 0), b], dim=1), arr((2, 3)), name="empty-piece",
          meta=False),
        S(lambda m, a: m.cat([a]), arr((3,), "bool"), name="single"),
        S(lambda m, a, b: m.concat([a, b], 0), arr((2, 2), "uint8"), arr((1, 2), "int8"),
          name="concat-uint8-int8"),
        S(lambda m, a, b: m.concatenate([a.t(), b], axis=0), A23, arr((1, 2)),
          name="concatenate-permuted"),
    ],
    "aten::stack": [
        S(lambda m, a, b: m.stack([a, b]), A23, arr((2, 3), seed=1), name="dim0"),
        S(lambda m, a, b: m.stack([a, b], -1), A23, arr((2, 3), seed=1), name="last"),
        S(lambda m, a, b: m.stack([a, b], -1), arr((), "int64"), arr((), "int64"), name="0dim"),
        S(lambda m, a, b, c: m.stack((a, b, c), dim=1), arr((3, 2), "uint8"), arr((3, 2), "int8"),
          arr((3, 2), "bool"), name="promote-kw"),
        S(lambda m, a: m.stack([a] * 4, -2), arr((2, 0, 3), "float64"), name="empty"),
        S(lambda m, a, b: m.stack([a, b], 2), arr((4, 5), "float16"), arr((4, 5), "float32"),
          name="half-float-end"),
        S(lambda m, a: m.stack([a.t(), a.t()], 0), arr((3, 2)), name="transposed"),
        S(lambda m, a: m.stack([a], -3), A23, name="single-neg"),
        S(lambda m, a, b: m.stack([a, b], 0), arr((2, 3, 4, 5)), arr((2, 3, 4, 5), seed=1),
          name="dense-4d"),
    ] + [S(lambda m, x, d=d: m.stack([x.to(memory_format=m.channels_last)] * 2, d),
           arr((2, 3, 4, 5)), name=f"channels-last-dim{d}") for d in range(5)] + [
        S(lambda m, x: m.stack([x.transpose(1, 2)] * 3, 3), arr((2, 4, 3)),
          name="channels-last-after-unsqueeze"),
    ],
    "aten::hstack": [
        S(lambda m, a, b: m.hstack([a, b]), A23, arr((2, 1)), name="2d"),
        S(lambda m, a, b: m.hstack([a, b]), arr((3,)), arr((2,)), name="1d"),
        S(lambda m, a, b: m.hstack([a, b]), arr(()), arr(()), name="0dim"),
    ],
    "aten::vstack": [
        S(lambda m, a, b: m.vstack([a, b]), arr((3,)), arr((3,)), name="1d"),
        S(lambda m, a, b: m.vstack([a, b]), A23, arr((1, 3)), name="2d"),
        S(lambda m, a, b: m.vstack((a, b)), arr(()), arr(()), name="0dim"),
    ],
    "aten::flip": [
        S(lambda m, x: x.flip(0, -1), arr((2, 3, 4), d), name=d) for d in DTYPES] + [
        S(lambda m, x: m.flip(x, (1,)), A234.transpose(1, 0, 2), name="permuted"),
        S(lambda m, x: x.flip(()), A23, name="no-dims"),
        S(lambda m, x: x.fliplr(), A23, name="fliplr"),
        S(lambda m, x: m.flipud(x), A23, name="flipud"),
    ],
    "aten::roll": [
        S(lambda m, x: x.roll(1), A234, name="flat"),
        S(lambda m, x: x.roll((1, -1), (0, 2)), A234, name="dims"),
        S(lambda m, x: m.roll(x, 5, -1), A234, name="big-shift"),
        S(lambda m: m.zeros(2, 0).roll(2, 1), name="empty", meta=False),
    ],
    "aten::repeat": [
        S(lambda m, x: x.repeat(2, 1, 3), A23, name="new-dim"),
        S(lambda m, x: x.repeat(0, 2), A23, name="zero"),
        S(lambda m, x: x.repeat(2, 2), arr((2, 3), "bool"), name="bool"),
        S(lambda m, x: x.repeat(()), arr(()), name="0dim"),
    ],
    "aten::tile": [
        S(lambda m, x: x.tile(2), A23, name="short"),
        S(lambda m, x: m.tile(x, (2, 1, 1)), A23, name="long"),
    ],
    "aten::tril": [
        S(lambda m, x, k=k: x.tril(k), arr((3, 4), d), name=f"{d}-{k}")
        for d in ("float32", "int64") for k in (-1, 0, 2)] + [
        S(lambda m, x: m.tril(x), A234, name="batched"),
    ],
    "aten::triu": [
        S(lambda m, x, k=k: x.triu(k), arr((3, 4), d), name=f"{d}-{k}")
        for d in ("float32", "bool") for k in (-2, 0, 1)] + [
        S(lambda m, x: m.triu(x, 1), A234.transpose(0, 2, 1), name="batched-permuted"),
    ],
    "aten::diag": [
        S(lambda m, x: m.diag(x), arr((3,)), name="1d"),
        S(lambda m, x: m.diag(x, 1), arr((3,), "int64"), name="1d-offset"),
        S(lambda m, x: x.diag(-1), arr((3, 4)), name="2d-offset"),
        S(lambda m, x: m.diag(x, 5), arr((3, 4)), name="2d-empty"),
    ],
    "aten::_reshape_copy": [
        S(lambda m, x: m.ops.aten._reshape_copy.default(x, [4, -1]), A234, name="basic"),
        S(lambda m, x: m.ops.aten._reshape_copy.default(x.transpose(0, 2), [-1]), A234,
          name="permuted"),
    ],
    "aten::repeat_interleave.self_int": [
        S(lambda m, x: x.repeat_interleave(2), A23, name="flat"),
        S(lambda m, x: x.repeat_interleave(3, dim=1), A23, name="dim"),
        S(lambda m, x: m.repeat_interleave(x, 2, -1), arr((2, 2), "int64"), name="function"),
        S(lambda m, x: x.repeat_interleave(0, 0), A23, name="zero"),
    ],
    "aten::repeat_interleave.self_Tensor": [
        S(lambda m, x, r: x.repeat_interleave(r, dim=0), A23, np.array([1, 2]), name="dim0",
          meta=False),
        S(lambda m, x, r: m.repeat_interleave(x, r, 1), A23, np.array([0, 2, 1]), name="dim1",
          meta=False),
        S(lambda m, x, r: x.repeat_interleave(r), A23, np.array(2), name="0dim-repeats",
          meta=False),
        S(lambda m, x, r: x.repeat_interleave(r, 0, output_size=3), A23, np.array([2, 1]),
          name="output_size", meta=False),
    ],
    "aten::repeat_interleave.Tensor": [
        S(lambda m, r: m.repeat_interleave(r), np.array([1, 0, 3]), name="indices", meta=False),
        S(lambda m, r: m.repeat_interleave(r, output_size=4), np.array([1, 0, 3], np.int32),
          name="output_size"),
    ],
}



def _product_samples():
    rng = np.random.default_rng(5)
    v = rng.standard_normal(4).astype(np.float32)
    iv = np.array([3, 1, 4], np.int64)
    return {
        "aten::block_diag": [
            S(lambda m, a, b, c: m.block_diag(a, b, c), np.array(2.5, np.float32), v,
              rng.standard_normal((2, 3)), name="0d-1d-2d"),
            S(lambda m, a, b: m.block_diag(a, b), iv, np.array([[True, False]]), name="int-bool"),
            S(lambda m, a, b, c: m.block_diag(a, b, c), np.zeros((0, 2), np.float32),
              np.ones((2, 0), np.float32), v, name="empty-blocks"),
            S(lambda m, a: m.block_diag(a), rng.standard_normal((3, 2)), name="one"),
        ],
        "aten::cartesian_prod": [
            S(lambda m, a, b: m.cartesian_prod(a, b), v, v[:2], name="two"),
            S(lambda m, a, b, c: m.cartesian_prod(a, b, c), iv, iv[:2], iv, name="three-int"),
            S(lambda m, a: m.cartesian_prod(a), v, name="one"),
            S(lambda m, a, b: m.cartesian_prod(a, b), v, np.zeros(0, np.float32), name="empty"),
        ],
        "aten::combinations": [
            S(lambda m, a: m.combinations(a), v, name="pairs"),
            S(lambda m, a: m.combinations(a, 3), v, name="triples"),
            S(lambda m, a: m.combinations(a, 2, with_replacement=True), iv, name="replacement"),
            S(lambda m, a: m.combinations(a, r=5), iv, name="too-many"),
            S(lambda m, a: m.combinations(a, r=0), iv, name="r0"),
            S(lambda m, a: m.combinations(a, r=1), np.array([True, False]), name="bool"),
        ],
    }


VIEW_SCATTERS = {
    "aten::slice_scatter": [
        S(lambda m, x, y: m.slice_scatter(x, y, 1, 1, 3), A234, arr((2, 2, 4)), name="dim1"),
        S(lambda m, x, y: x.slice_scatter(y, -1, step=2), A234, arr((2, 3, 2)), name="step"),
        S(lambda m, x, y: m.slice_scatter(x, y), A23, arr((2, 3)), name="whole"),
    ],
    "aten::select_scatter": [
        S(lambda m, x, y: m.select_scatter(x, y, 1, -1), A234, arr((2, 4)), name="negative"),
        S(lambda m, x, y: x.select_scatter(y, 0, 0), A23, arr((3,)), name="method"),
    ],
    "aten::diagonal_scatter": [
        S(lambda m, x, y: m.diagonal_scatter(x, y), A23, arr((2,)), name="main"),
        S(lambda m, x, y: m.diagonal_scatter(x, y, 1, 1, 2), A234, arr((2, 3)), name="offset"),
        S(lambda m, x, y: x.diagonal_scatter(y, -1), A23, arr((1,)), name="below"),
    ],
}

SAMPLES = VIEWS | COMPOSITE_VIEWS | COPIES | VIEW_SCATTERS | _product_samples()
