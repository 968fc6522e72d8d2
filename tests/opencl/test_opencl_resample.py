"""F.pad (reflect, replicate, circular) and F.interpolate / nn.Upsample on opencl against PyTorch:
values and gradients, source indices with and without scales, half dtypes against the CPU
device (compile/inductor/opencl_resample.py)."""

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import strata

pytestmark = pytest.mark.skipif(not strata.opencl.is_available(),
                                reason="needs pyopencl with an OpenCL driver (pip install "
                                       "'strata[opencl]' brings PoCL)")


def check(fn, x, tol=1e-5):
    """fn on opencl == fn in torch, and the input's gradient for a random upstream one."""
    xt = torch.tensor(x, requires_grad=True)
    xs = strata.tensor(x).to("opencl").requires_grad_()
    want, got = fn(torch, xt), fn(strata, xs)
    assert got.device.type == "opencl" and tuple(got.shape) == tuple(want.shape)
    np.testing.assert_allclose(got.detach().cpu().numpy(), want.detach().numpy(), rtol=tol,
                               atol=tol)
    g = np.random.default_rng(1).standard_normal(tuple(want.shape)).astype(x.dtype)
    want.backward(torch.tensor(g))
    got.backward(strata.tensor(g).to("opencl"))
    assert xs.grad.device.type == "opencl"
    np.testing.assert_allclose(xs.grad.cpu().numpy(), xt.grad.numpy(), rtol=tol, atol=tol)


@settings(max_examples=6, deadline=None)
@given(dims=st.sampled_from([1, 2, 3]), mode=st.sampled_from(["reflect", "replicate",
                                                              "circular"]),
       batched=st.booleans(), data=st.data())
def test_pad_modes_and_their_gradients_match_torch(dims, mode, batched, data):
    spatial = data.draw(st.lists(st.integers(2, 5), min_size=dims, max_size=dims))
    pads = []
    for n in reversed(spatial):
        limit = n - 1 if mode == "reflect" else n
        pads += data.draw(st.lists(st.integers(0, limit), min_size=2, max_size=2))
    shape = ([2] if batched or dims == 3 else []) + [3] + spatial
    x = np.random.default_rng(0).standard_normal(shape)
    check(lambda m, t: m.nn.functional.pad(t, pads, mode=mode), x)


@settings(max_examples=8, deadline=None)
@given(dims=st.sampled_from([1, 2]), mode=st.sampled_from(["nearest", "nearest-exact",
                                                           "linear"]),
       align_corners=st.booleans(), data=st.data())
def test_interpolate_by_size_matches_torch(dims, mode, align_corners, data):
    spatial = data.draw(st.lists(st.integers(1, 6), min_size=dims, max_size=dims))
    size = data.draw(st.lists(st.integers(1, 13), min_size=dims, max_size=dims))
    if mode == "linear" and dims == 2:
        mode = "bilinear"
    corners = align_corners if mode in ("linear", "bilinear") else None
    x = np.random.default_rng(2).standard_normal([2, 3] + spatial).astype(np.float32)
    check(lambda m, t: m.nn.functional.interpolate(t, size=size, mode=mode,
                                                   align_corners=corners), x)


@pytest.mark.parametrize("mode,scale", [("nearest", 1.7), ("nearest", 2.0), ("nearest", 0.6),
                                        ("nearest-exact", 2.3), ("bilinear", 1.5),
                                        ("bilinear", 0.7), ("bilinear", 3.0)])
def test_interpolate_with_scales_matches_torch(mode, scale):
    """A scale given (recompute_scale_factor off) is used as ATen uses it: 1 / scale, not
    in / out."""
    x = np.random.default_rng(3).standard_normal((1, 2, 5, 7)).astype(np.float32)
    corners = False if mode == "bilinear" else None
    check(lambda m, t: m.nn.functional.interpolate(t, scale_factor=scale, mode=mode,
                                                   align_corners=corners), x)
    check(lambda m, t: m.nn.Upsample(scale_factor=scale, mode=mode,
                                     align_corners=corners)(t), x)


@pytest.mark.parametrize("mode,shape", [("nearest", (1, 2, 3, 4, 2)),
                                        ("trilinear", (2, 1, 3, 2, 4)), ("bicubic", (2, 2, 4, 5))])
@pytest.mark.parametrize("how", [{"size": 0}, {"scale_factor": 1.6}, {"scale_factor": 0.7},
                                 {"align_corners": True}])
def test_3d_modes_and_bicubic_match_torch(mode, shape, how):
    dims = len(shape) - 2
    kwargs = dict(how)
    if "size" in kwargs or "align_corners" in kwargs:
        kwargs["size"] = (5, 3, 6)[:dims] if "size" in kwargs else (4, 7, 3)[:dims]
    if mode == "nearest":
        kwargs.pop("align_corners", None)
    x = np.random.default_rng(7).standard_normal(shape)
    check(lambda m, t: m.nn.functional.interpolate(t, mode=mode, **kwargs), x, tol=1e-12)
    check(lambda m, t: m.nn.functional.interpolate(t, mode=mode, **kwargs),
          x.astype(np.float32))


@pytest.mark.parametrize("corners", [False, True])
def test_linear_1d_float64_matches_torch(corners):
    x = np.random.default_rng(4).standard_normal((2, 3, 6))
    check(lambda m, t: m.nn.functional.interpolate(t, size=11, mode="linear",
                                                   align_corners=corners), x, tol=1e-12)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_resampling_matches_the_cpu_device(dtype):
    x = np.random.default_rng(5).standard_normal((2, 3, 4, 5)).astype(np.float32)
    calls = [lambda t: strata.nn.functional.interpolate(t, size=(7, 9), mode="bilinear"),
             lambda t: strata.nn.functional.interpolate(t, size=(3, 8), mode="bicubic"),
             lambda t: strata.nn.functional.interpolate(t, scale_factor=2, mode="nearest"),
             lambda t: strata.nn.functional.pad(t, (1, 2, 3, 1), mode="reflect"),
             lambda t: strata.nn.functional.pad(t, (2, 2, 1, 0), mode="replicate")]
    half = getattr(strata, dtype)
    for fn in calls:
        want = fn(strata.tensor(x).to(half)).float().numpy()
        got = fn(strata.tensor(x).to("opencl").to(half))
        assert got.dtype is half
        np.testing.assert_allclose(got.cpu().float().numpy(), want, rtol=1e-2, atol=1e-2)


def test_uint8_nearest_and_integer_reflection_match_torch():
    x = np.random.default_rng(6).integers(0, 255, (1, 2, 3, 4)).astype(np.uint8)
    got = strata.nn.functional.interpolate(strata.tensor(x).to("opencl"), size=(5, 6))
    want = torch.nn.functional.interpolate(torch.tensor(x), size=(5, 6))
    np.testing.assert_array_equal(got.cpu().numpy(), want.numpy())
    ints = np.arange(12).reshape(1, 2, 6)
    got = strata.nn.functional.pad(strata.tensor(ints).to("opencl"), (2, 3), mode="reflect")
    want = torch.nn.functional.pad(torch.tensor(ints), (2, 3), mode="reflect")
    np.testing.assert_array_equal(got.cpu().numpy(), want.numpy())


def test_bad_padding_raises_torchs_error_before_anything_runs():
    x = strata.zeros(1, 2, 3, device="opencl")
    with pytest.raises(RuntimeError) as got:
        strata.nn.functional.pad(x, (3, 0), mode="reflect")
    with pytest.raises(RuntimeError) as want:
        torch.nn.functional.pad(torch.zeros(1, 2, 3), (3, 0), mode="reflect")
    assert str(got.value) == str(want.value)


def test_resampling_and_its_backward_never_read_the_device_back(monkeypatch):
    """Indices come from sizes and scales, never from the data: no download (a sync point)."""
    from strata.backends.opencl import runtime
    downloads = []
    download = runtime.OpenCLRuntime.download

    def counted(self, *args, **kwargs):
        downloads.append(args)
        return download(self, *args, **kwargs)
    x = strata.randn(1, 2, 3, 4, device="opencl").requires_grad_()
    monkeypatch.setattr(runtime.OpenCLRuntime, "download", counted)
    for mode in ("nearest", "bilinear", "bicubic"):
        strata.nn.functional.interpolate(x, scale_factor=1.5, mode=mode).sum().backward()
    strata.nn.functional.pad(x, (1, 2, 2, 1), mode="reflect").sum().backward()
    strata.nn.functional.pad(x, (1, 2, 2, 1), mode="replicate").sum().backward()
    assert downloads == []
