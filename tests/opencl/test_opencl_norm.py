"""The opencl device's fused layer norm backward (compile/inductor/opencl_norm.py) against
PyTorch: values and gradients through F.layer_norm and nn.LayerNorm, and one launch per
backward for every output mask; and the backward op's own derivative (double backward, on cpu
and opencl)."""

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import strata

needs_opencl = pytest.mark.skipif(not strata.opencl.is_available(),
                                  reason="needs pyopencl with an OpenCL driver (pip install "
                                         "'strata[opencl]' brings PoCL)")
DEVICES = ["cpu", pytest.param("opencl", marks=needs_opencl)]

TOLERANCE = {"float32": 1e-4, "float64": 1e-10, "float16": 1e-2}


def _layer_norm_grads(lib, device, x, normalized, weight, bias, grad):
    xs = lib.tensor(x, device=device).requires_grad_()
    ws = lib.tensor(weight, device=device).requires_grad_() if weight is not None else None
    bs = lib.tensor(bias, device=device).requires_grad_() if bias is not None else None
    y = lib.nn.functional.layer_norm(xs, normalized, ws, bs)
    y.backward(lib.tensor(grad, device=device))
    return [y] + [t.grad for t in (xs, ws, bs) if t is not None]


def _assert_close(got, want, dtype):
    tol = TOLERANCE[dtype]
    for s, t in zip(got, want, strict=True):
        assert s.device.type == "opencl" and str(s.dtype)[7:] == str(t.dtype)[6:]
        np.testing.assert_allclose(s.detach().float().cpu().numpy(),
                                   t.detach().float().numpy(), rtol=tol, atol=tol)


@needs_opencl
@settings(max_examples=25, deadline=None)
@given(batch=st.lists(st.integers(0, 4), max_size=2),
       normalized=st.lists(st.integers(1, 7), min_size=1, max_size=2),
       dtype=st.sampled_from(sorted(TOLERANCE)), affine=st.tuples(st.booleans(), st.booleans()),
       seed=st.integers(0, 2**31))
def test_layer_norm_gradients_match_torch(batch, normalized, dtype, affine, seed):
    rng = np.random.default_rng(seed)
    shape = (*batch, *normalized)
    x, grad = (rng.standard_normal(shape).astype(dtype) for _ in range(2))
    weight = rng.standard_normal(normalized).astype(dtype) if affine[0] else None
    bias = rng.standard_normal(normalized).astype(dtype) if affine[1] else None
    args = (x, tuple(normalized), weight, bias, grad)
    _assert_close(_layer_norm_grads(strata, "opencl", *args),
                  _layer_norm_grads(torch, "cpu", *args), dtype)


@needs_opencl
@pytest.mark.parametrize("dtype", sorted(TOLERANCE))
def test_long_and_strided_rows_match_torch(dtype):
    """Rows longer than a work-group, and an input that is a transposed view."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((300, 6)).astype(dtype)
    w, b = (rng.standard_normal(300).astype(dtype) for _ in range(2))
    g = rng.standard_normal((6, 300)).astype(dtype)
    results = []
    for lib, device in ((strata, "opencl"), (torch, "cpu")):
        xs = lib.tensor(x, device=device).requires_grad_()
        ws, bs = (lib.tensor(p, device=device).requires_grad_() for p in (w, b))
        y = lib.nn.functional.layer_norm(xs.t(), (300,), ws, bs)
        y.backward(lib.tensor(g, device=device))
        results.append([y, xs.grad, ws.grad, bs.grad])
    _assert_close(*results, dtype)


@needs_opencl
@pytest.mark.parametrize("bias", [True, False])
def test_layer_norm_module_gradients_match_torch(bias):
    rng = np.random.default_rng(1)
    x, g = (rng.standard_normal((2, 3, 4, 5)).astype("float32") for _ in range(2))
    weight = rng.standard_normal((4, 5)).astype("float32")
    results = []
    for lib, device in ((strata, "opencl"), (torch, "cpu")):
        layer = lib.nn.LayerNorm((4, 5), bias=bias)
        with lib.no_grad():
            layer.weight.copy_(lib.tensor(weight))
        layer = layer.to(device)
        xs = lib.tensor(x, device=device).requires_grad_()
        y = layer(xs)
        y.backward(lib.tensor(g, device=device))
        results.append([y, xs.grad] + [p.grad for p in layer.parameters()])
    _assert_close(*results, "float32")


@needs_opencl
def test_the_backward_is_one_launch(launches):
    """grad_input's rows and grad_weight's and grad_bias's columns in one kernel (two kernels
    before, about a dozen pointwise and reduction kernels before that)."""
    x = strata.randn(8, 16, device="opencl")
    w, b = strata.randn(16, device="opencl"), strata.randn(16, device="opencl")
    g = strata.randn(8, 16, device="opencl")
    _, mean, rstd = strata.ops.aten.native_layer_norm(x, [16], w, b, 1e-5)
    launched = launches         # the class is patched, not the runtime: an instance attribute
    launched.clear()            # outlived its test before pytest 9.2 and hid later patches
    grads = strata.ops.aten.native_layer_norm_backward(g, x, [16], mean, rstd, w, b,
                                                       [True, True, True])
    assert launched == ["aten::native_layer_norm_backward"]
    launched.clear()
    only_input = strata.ops.aten.native_layer_norm_backward(g, x, [16], mean, rstd, w, b,
                                                            [True, False, False])
    assert launched == ["aten::native_layer_norm_backward"]
    assert only_input[1] is None and only_input[2] is None
    want = torch.ops.aten.native_layer_norm_backward(
        *(torch.tensor(t.cpu().numpy()) for t in (g, x)), [16],
        *(torch.tensor(t.cpu().numpy()) for t in (mean, rstd, w, b)), [True, True, True])
    _assert_close(grads, want, "float32")


@needs_opencl
@pytest.mark.parametrize("mask, affine", [  # torch has no weight gradient without a weight
    ((a, b, c), affine) for a in (True, False) for b in (True, False) for c in (True, False)
    for affine in (True, False) if affine or not (b or c)])
@pytest.mark.parametrize("dtype", sorted(TOLERANCE))
def test_every_output_mask_is_one_launch_matching_torch(mask, dtype, affine, monkeypatch):
    """Rows (grad_input) and columns (grad_weight, grad_bias) share the launch in any mix; an
    empty batch still writes zero weight and bias gradients."""
    from strata.backends.opencl import runtime
    rng = np.random.default_rng(1)
    for rows in (5, 0):
        x, g = (rng.standard_normal((rows, 3, 4)).astype(dtype) for _ in range(2))
        w, b = (rng.standard_normal((3, 4)).astype(dtype) if affine else None for _ in "wb")
        t_args = [torch.tensor(a) if a is not None else None for a in (g, x)]
        _, mean, rstd = torch.ops.aten.native_layer_norm(t_args[1], [3, 4], *(
            torch.tensor(a) if a is not None else None for a in (w, b)), 1e-5)
        arrays = (g, x, mean.numpy(), rstd.numpy(), w, b)
        want = torch.ops.aten.native_layer_norm_backward(
            *(torch.tensor(a) if a is not None else None for a in arrays[:2]), [3, 4],
            *(torch.tensor(a) if a is not None else None for a in arrays[2:]), list(mask))
        s_args = [strata.tensor(a).to("opencl") if a is not None else None for a in arrays]
        launched = []
        real = runtime.OpenCLRuntime.launch
        monkeypatch.setattr(runtime.OpenCLRuntime, "launch",
                            lambda self, name, *a, seen=launched, real=real, **k:
                            seen.append(name) or real(self, name, *a, **k))
        got = strata.ops.aten.native_layer_norm_backward(*s_args[:2], [3, 4], *s_args[2:],
                                                         list(mask))
        monkeypatch.undo()
        wanted = mask[0] and rows or mask[1] or mask[2]
        assert launched == ["aten::native_layer_norm_backward"] * bool(wanted)
        for s, t, on in zip(got, want, mask, strict=True):
            assert (s is None) == (not on)
            if on:
                _assert_close([s], [t], dtype)


def _layer_norm_inputs(lib, device, affine, normalized, seed=0):
    """float64 leaves: the input, then the weight and bias that ``affine`` names."""
    rng = np.random.default_rng(seed)
    shape = (3, *normalized)
    leaves = [lib.tensor(rng.standard_normal(shape), device=device, requires_grad=True)]
    leaves += [lib.tensor(rng.standard_normal(normalized), device=device, requires_grad=True)
               for _ in affine]
    return leaves


def _layer_norm_of(lib, affine, normalized):
    def fn(x, *params):
        named = dict(zip(affine, params))
        return lib.nn.functional.layer_norm(x, normalized, named.get("w"), named.get("b"))
    return fn


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("affine", ["", "w", "wb"])   # a bias alone: torch's own formula raises
@pytest.mark.parametrize("normalized", [(5,), (2, 5)])
def test_second_derivatives_match_torch(device, affine, normalized):
    """create_graph=True first derivatives, then the gradient of their inner product with a
    fixed tensor: every leaf's second derivative equals torch's (float64). The backward op's
    own derivative accounts for the mean and rstd depending on the input."""
    rng = np.random.default_rng(1)
    upstream = rng.standard_normal((3, *normalized))

    def second(lib, dev):
        leaves = _layer_norm_inputs(lib, dev, affine, normalized)
        y = _layer_norm_of(lib, affine, normalized)(*leaves)
        firsts = lib.autograd.grad((y * lib.tensor(upstream, device=dev)).sum(), leaves,
                                   create_graph=True)
        probes = [rng_probe.standard_normal(tuple(f.shape)) for f in firsts]
        total = sum((f * lib.tensor(p, device=dev)).sum() for f, p in zip(firsts, probes))
        return [g.detach().cpu().numpy() if g is not None else None
                for g in lib.autograd.grad(total, leaves, allow_unused=True)]

    rng_probe = np.random.default_rng(2)
    got = second(strata, device)
    rng_probe = np.random.default_rng(2)
    want = second(torch, "cpu")
    for s, t in zip(got, want, strict=True):
        if t is None:
            assert s is None or not s.any()
            continue
        np.testing.assert_allclose(s, t, rtol=1e-9, atol=1e-11)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("affine", ["", "b", "wb"])
def test_gradcheck_and_gradgradcheck(device, affine):
    """Finite differences agree with the first and second derivatives, as torch's own do on
    the same inputs (with a bias but no weight torch's double backward raises; strata's
    formula adds the bias term regardless)."""
    normalized = (2, 3)
    fn = _layer_norm_of(strata, affine, normalized)
    leaves = _layer_norm_inputs(strata, device, affine, normalized)
    assert strata.autograd.gradcheck(fn, leaves)
    assert strata.autograd.gradgradcheck(fn, leaves)
    if affine != "b":
        t_leaves = _layer_norm_inputs(torch, "cpu", affine, normalized)
        assert torch.autograd.gradgradcheck(_layer_norm_of(torch, affine, normalized), t_leaves)


@pytest.mark.parametrize("device", DEVICES)
def test_backward_op_gradient_matches_torch(device):
    """``native_layer_norm_backward`` differentiated directly (its node is
    NativeLayerNormBackwardBackward0): grad_out, input and weight, with and without the masks
    leaving outputs out (None)."""
    rng = np.random.default_rng(3)
    arrays = [rng.standard_normal(s) for s in ((4, 6), (4, 6), (6,), (6,))]
    for mask in ([True, True, True], [True, False, False], [False, True, True]):
        results = []
        for lib, dev in ((strata, device), (torch, "cpu")):
            g, x, w, b = (lib.tensor(a, device=dev, requires_grad=True) for a in arrays)
            _, mean, rstd = lib.native_layer_norm(x, [6], w, b, 1e-5)
            outs = lib.ops.aten.native_layer_norm_backward(g, x, [6], mean, rstd, w, b, mask)
            assert [o is None for o in outs] == [not m for m in mask]
            kept = [o for o in outs if o is not None]
            assert {type(o.grad_fn).__name__ for o in kept} == \
                {"NativeLayerNormBackwardBackward0"}
            total = sum((o * lib.tensor(rng_of(o), device=dev)).sum() for o in kept)
            grads = lib.autograd.grad(total, [g, x, w], allow_unused=True)
            results.append([None if t is None else t.detach().cpu().numpy() for t in grads])
        for s, t in zip(*results, strict=True):
            assert (s is None or not s.any()) if t is None else \
                np.allclose(s, t, rtol=1e-9, atol=1e-11)


def rng_of(t):
    """A cotangent that depends only on the output's shape (the same for strata and torch)."""
    return np.random.default_rng(t.numel()).standard_normal(tuple(t.shape))
