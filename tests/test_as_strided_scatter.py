"""``torch.as_strided_scatter`` against PyTorch: values in every dtype and layout of self (the
view is placed in self's storage, Note [as_strided_scatter geometry] in ops/scatter.py), the
errors with their wording and untouched inputs, and gradients.

PyTorch's own gradient for ``self`` (``as_strided_scatter_backward``) is the view's region of
the output gradient rather than everything outside it (a formula its review flagged as wrong);
strata's is the true one, so gradients are compared with PyTorch's ``clone`` + ``copy_`` into
the view, which is the same function, and checked by finite differences in float64."""

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import strata
from strata.autograd import gradcheck, gradgradcheck

DTYPES = ["float32", "float64", "int64", "int32", "bool"]

# (self's layout as a function of a contiguous 4x6 tensor, view size, stride, storage_offset)
CASES = [
    (lambda x: x, (2, 3), (6, 1), 7),
    (lambda x: x, (2, 3), (1, 6), 7),              # a transposed view
    (lambda x: x, (2, 2), (6, 2), 3),              # a view with gaps
    (lambda x: x, (2, 2), (1, 1), 1),              # overlapping view: the last write wins
    (lambda x: x, (3, 2), (2, 7), 0),              # strides that interleave
    (lambda x: x.t(), (2, 3), (6, 1), 2),          # self transposed: its storage positions
    (lambda x: x[1:], (2, 2), (6, 1), 7),          # self starts at offset 6
    (lambda x: x[1:], (2, 2), (6, 1), None),       # None: self's own offset
    (lambda x: x[:, ::2], (2,), (1,), 1),          # a non-dense self
    (lambda x: x[0].expand(3, 6), (2,), (1,), 8),  # an expanded self is cloned contiguously
    (lambda x: x, (0, 2), (1, 1), 30),             # an empty view writes nothing
    (lambda x: x[0, 0], (), (), 5),                # 0-dim
]


def _both(fn):
    return fn(strata), fn(torch)


def _values(lib, dtype, make_self, size, stride, offset):
    x = lib.tensor(np.arange(24).reshape(4, 6)).to(getattr(lib, dtype))
    src = lib.tensor(-np.arange(1, 1 + int(np.prod(size))).reshape(size)).to(getattr(lib, dtype))
    return lib.as_strided_scatter(make_self(x), src, size, stride, offset)


@pytest.mark.parametrize("case", range(len(CASES)))
@pytest.mark.parametrize("dtype", DTYPES)
def test_values_match_torch(case, dtype):
    got, want = _both(lambda lib: _values(lib, dtype, *CASES[case]))
    assert tuple(got.shape) == tuple(want.shape) and str(got.dtype)[7:] == str(want.dtype)[6:]
    np.testing.assert_array_equal(got.numpy(), want.numpy())


@settings(max_examples=30, deadline=None)
@given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=3), data=st.data())
def test_random_views_match_torch(shape, data):
    """Any in-bounds view (sizes, strides, offset) of a contiguous self, src in another dtype
    (copy_'s conversion)."""
    numel = int(np.prod(shape))
    ndim = data.draw(st.integers(0, 3))
    size = tuple(data.draw(st.integers(1, 3)) for _ in range(ndim))
    stride = tuple(data.draw(st.integers(1, 5)) for _ in range(ndim))
    extent = 1 + sum((n - 1) * s for n, s in zip(size, stride))
    if extent > numel:
        return
    offset = data.draw(st.integers(0, numel - extent))
    base = np.random.default_rng(numel).standard_normal(shape)
    src = np.arange(int(np.prod(size)), dtype=np.float64).reshape(size) * 1.5
    got, want = _both(lambda lib: lib.as_strided_scatter(
        lib.tensor(base, dtype=lib.float32), lib.tensor(src), size, stride, offset))
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    method, _ = _both(lambda lib: lib.tensor(base).as_strided_scatter(
        lib.tensor(src, dtype=lib.float64), size, stride, offset))
    np.testing.assert_array_equal(method.numpy(), _values_numpy(base, src, size, stride, offset))


def _values_numpy(base, src, size, stride, offset):
    flat = base.reshape(-1).copy()
    view = np.lib.stride_tricks.as_strided(flat[offset:], size, [s * 8 for s in stride])
    view[...] = src
    return flat.reshape(base.shape)


@pytest.mark.parametrize("args, message", [
    (((2, 2), (4, 1), 11), ("setStorage: sizes [2, 2], strides [4, 1], storage offset 11, and "
                           "itemsize 4 requiring a storage size of 68 are out of bounds for "
                           "storage of size 48")),
    (((2, 2), (4, -1), 1), ("as_strided: Negative strides are not supported at the moment, got "
                           "strides: [4, -1]")),
    (((2, 2), (4, 1), -1), "Tensor: invalid storage offset -1"),
    (((2, -2), (4, 1), 1), ("Storage size calculation overflowed with sizes=[2, -2] and "
                           "strides=[4, 1]")),
    (((2, 2), (4, 1, 1), 1), "mismatch in length of strides and shape"),
    (((2, 2), (0, 1), 1), ("unsupported operation: more than one element of the written-to "
                          "tensor refers to a single memory location")),
    (((4,), (1,), 1), ("expected src to have a size equal to the slice of self. src size = "
                      "[2, 2], slice size = [4]")),
])
def test_errors_match_torch_and_leave_inputs_untouched(args, message):
    for lib in (strata, torch):
        x = lib.arange(12.).reshape(3, 4)
        src = lib.full((2, 2), -1.)
        with pytest.raises(RuntimeError, match=None) as info:
            lib.as_strided_scatter(x, src, *args)
        assert message in str(info.value)
        np.testing.assert_array_equal(x.numpy(), np.arange(12.).reshape(3, 4))
        np.testing.assert_array_equal(src.numpy(), np.full((2, 2), -1.))


def _weighted_grads(lib, make_self, size, stride, offset, reference):
    x = lib.tensor(np.arange(24.).reshape(4, 6) / 7, requires_grad=True)
    src = lib.tensor(np.linspace(-1, 1, int(np.prod(size))).reshape(size), requires_grad=True)
    base = make_self(x)
    if reference:       # PyTorch's clone + copy_ into the view: the same function
        out = base.clone()
        out.as_strided(size, stride, offset).copy_(src)
    else:
        out = lib.as_strided_scatter(base, src, size, stride, offset)
    weights = lib.tensor(np.cos(np.arange(out.numel())).reshape(tuple(out.shape)))
    (out * weights).sum().backward()
    return out.detach().numpy(), x.grad.numpy(), src.grad.numpy()


@pytest.mark.parametrize("make_self, size, stride, offset", [
    (lambda x: x, (2, 3), (6, 1), 7),
    (lambda x: x, (2, 3), (1, 6), 7),
    (lambda x: x * 1, (3,), (5,), 2),
    (lambda x: x[1:] * 1, (2, 2), (6, 1), 2),
    (lambda x: (x * 1)[1:], (2, 2), (6, 1), None),  # self at offset 6 of its storage
    (lambda x: x[:, 1:3] * 1, (2,), (1,), 1),
    (lambda x: x.t() * 1, (2,), (1,), 1),
    (lambda x: x[0].expand(3, 6), (2,), (1,), 8),
])
def test_gradients_match_torchs_clone_and_copy(make_self, size, stride, offset):
    got = _weighted_grads(strata, make_self, size, stride, offset, reference=False)
    want = _weighted_grads(torch, make_self, size, stride, offset, reference=True)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)


def test_src_gradient_matches_torchs_as_strided_scatter():
    got, want = _both(lambda lib: _weighted_grads(lib, lambda x: x, (2, 3), (1, 6), 7, False))
    np.testing.assert_array_equal(got[2], want[2])


@pytest.mark.parametrize("make_self, size, stride, offset", [
    (lambda x: x, (2, 2), (4, 1), 5),
    (lambda x: x.t(), (2, 2), (1, 4), 5),
    (lambda x: x[1:], (2, 2), (1, 4), 5),
    (lambda x: x[1:], (2, 2), (1, 4), None),
    (lambda x: x[1:], (2, 2), (1, 4), 0),      # half the view lies before self: no gradient
])
def test_float64_gradcheck(make_self, size, stride, offset):
    rng = np.random.default_rng(0)
    x = strata.tensor(rng.random((3, 4)), requires_grad=True)
    src = strata.tensor(rng.random(size), requires_grad=True)

    def f(x, src):
        return strata.as_strided_scatter(make_self(x), src, size, stride, offset)
    assert gradcheck(f, (x, src))
    assert gradgradcheck(f, (x, src))


def test_meta_and_explain_rows():
    out = strata.as_strided_scatter(strata.empty(3, 4, device="meta"),
                                    strata.empty(2, 2, device="meta"), (2, 2), (4, 1), 1)
    assert out.device.type == "meta" and tuple(out.shape) == (3, 4)
    with pytest.raises(RuntimeError, match="out of bounds for storage"):
        strata.as_strided_scatter(strata.empty(3, 4, device="meta"),
                                  strata.empty(2, 2, device="meta"), (2, 2), (4, 1), 11)


@pytest.mark.parametrize("device", ["sim", "opencl"])
def test_devices_match_cpu(device):
    """The sim device runs the CPU kernel in its own process; opencl has its own kernel."""
    if device == "opencl" and not strata.opencl.is_available():
        pytest.skip("needs an OpenCL driver (PoCL)")
    x = strata.arange(12.).reshape(3, 4)
    src = -strata.arange(1., 5.).reshape(2, 2)
    for layout in (lambda t: t, lambda t: t.t(), lambda t: t[1:]):
        want = strata.as_strided_scatter(layout(x), src, (2, 2), (4, 1), 5)
        got = strata.as_strided_scatter(layout(x.to(device)), src.to(device), (2, 2), (4, 1), 5)
        assert got.device.type == device
        np.testing.assert_array_equal(got.cpu().numpy(), want.numpy())
