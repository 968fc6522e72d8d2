"""Every OpenCL kernel against PyTorch and against strata on the CPU, on the same inputs.

Kernels are built once per structure (op, rank, dtypes), so examples of one rank reuse a program;
PoCL's kernel cache makes later runs cheap. Skipped where pyopencl finds no OpenCL device.
"""

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import strata

pytestmark = pytest.mark.skipif(not strata.opencl.is_available(),
                                reason="needs pyopencl with an OpenCL driver (pip install "
                                       "'strata[opencl]' brings PoCL)")

DTYPES = {"float32": np.float32, "int64": np.int64, "bool": np.bool_}


def values(shape, dtype, seed):
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return rng.random(shape) < 0.5
    if dtype == "int64":
        return rng.integers(-5, 6, size=shape).astype(np.int64)
    return rng.standard_normal(shape).astype(np.float32)


def check(fn, *arrays, atol=1e-5, rtol=1e-5):
    """fn(strata on opencl) == fn(strata on cpu) == fn(torch), dtype and values."""
    expected = fn(torch, *(torch.from_numpy(np.array(a)) for a in arrays))
    on_cpu = fn(strata, *(strata.tensor(a) for a in arrays))
    on_cl = fn(strata, *(strata.tensor(a).to("opencl") for a in arrays))
    for got, want, ref in zip(_flat(on_cl), _flat(expected), _flat(on_cpu)):
        assert got.device.type == "opencl"
        assert str(got.dtype) == str(want.dtype).replace("torch", "strata")
        assert tuple(got.shape) == tuple(want.shape)
        np.testing.assert_allclose(got.cpu().numpy(), want.numpy(), atol=atol, rtol=rtol)
        np.testing.assert_allclose(got.cpu().numpy(), ref.numpy(), atol=atol, rtol=rtol)


def _flat(value):
    if isinstance(value, tuple):
        return [v for item in value for v in _flat(item)]
    return [value]


shapes = st.lists(st.integers(1, 4), min_size=0, max_size=3).map(tuple)


@st.composite
def broadcast_pair(draw):
    """Two shapes that broadcast: the second drops leading dims and sets some dims to 1."""
    a = draw(shapes)
    b = list(a[draw(st.integers(0, len(a))):])
    for i in range(len(b)):
        if draw(st.booleans()):
            b[i] = 1
    return (a, tuple(b)) if draw(st.booleans()) else (tuple(b), a)


UNARY = ["exp", "log", "sqrt", "tanh", "sigmoid", "abs", "neg", "relu", "floor", "sin",
         "reciprocal", "logical_not"]


@settings(max_examples=12)
@given(shape=shapes, name=st.sampled_from(UNARY), dtype=st.sampled_from(["float32", "int64"]),
       seed=st.integers(0, 9))
def test_unary(shape, name, dtype, seed):
    x = values(shape, dtype, seed)
    if name in ("log", "sqrt"):
        x = np.abs(x) + 1
    check(lambda T, a: getattr(T, name)(a), x)


BINARY = ["add", "sub", "mul", "div", "maximum", "minimum", "eq", "ne", "lt", "le", "gt", "ge",
          "logical_and"]


@settings(max_examples=12)
@given(shapes=broadcast_pair(), name=st.sampled_from(BINARY),
       dtypes=st.tuples(*[st.sampled_from(list(DTYPES))] * 2), seed=st.integers(0, 9))
def test_binary_broadcasting_and_promotion(shapes, name, dtypes, seed):
    if name == "sub" and "bool" in dtypes or name in ("maximum", "minimum") and \
            dtypes == ("bool", "bool"):
        dtypes = ("float32", dtypes[1] if dtypes[1] != "bool" else "int64")
    a, b = values(shapes[0], dtypes[0], seed), values(shapes[1], dtypes[1], seed + 1)
    check(lambda T, x, y: getattr(T, name)(x, y), a, b)


@pytest.mark.parametrize("scalar", [2, 0.5, True])
def test_python_scalars_and_alpha(scalar):
    a = values((3, 4), "float32", 0)
    check(lambda T, x: x * scalar + 1, a)
    check(lambda T, x: T.add(x, x, alpha=2) - T.sub(x, 1, alpha=3), a)
    check(lambda T, x: x * T.tensor(3.0), a)    # a 0-dim CPU tensor mixes with any device


def test_strided_inputs_and_inplace():
    a = values((4, 5), "float32", 1)
    check(lambda T, x: x.t() * 2, a)
    check(lambda T, x: x[:, 1::2].exp(), a)

    def inplace(T, x):
        y = x.clone() if T is torch else x * 1
        y[:, 1:].mul_(3).add_(1)
        y.t()[0].relu_()
        return y
    check(inplace, a)


@settings(max_examples=10)
@given(shape=shapes, dtype=st.sampled_from(["float32", "int64", "bool"]), seed=st.integers(0, 9))
def test_where_and_conversion(shape, dtype, seed):
    a, b = values(shape, dtype, seed), values(shape, "float32", seed + 1)
    check(lambda T, x, y: T.where(y > 0, x, y), a, b)
    for target in ("float32", "int64", "bool"):
        check(lambda T, x, target=target: x.to(getattr(T, target)), a)


@settings(max_examples=10)
@given(shape=st.lists(st.integers(1, 5), min_size=1, max_size=3).map(tuple),
       dtype=st.sampled_from(["float32", "int64", "bool"]), seed=st.integers(0, 9),
       keepdim=st.booleans(), data=st.data())
def test_reductions(shape, dtype, seed, keepdim, data):
    x = values(shape, dtype, seed)
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    check(lambda T, a: a.sum(dim, keepdim=keepdim), x)
    check(lambda T, a: a.sum(), x)
    if dtype != "bool":
        check(lambda T, a: T.amax(a, dim, keepdim), x)
        check(lambda T, a: T.argmax(a, dim, keepdim), x)
        check(lambda T, a: a.argmin(), x)
        check(lambda T, a: a.max(dim, keepdim), x)
        check(lambda T, a: a.min(), x)
    if dtype == "float32":
        dims = (0, -1) if len(shape) > 1 else 0
        check(lambda T, a: a.mean(dims, keepdim=keepdim), x, atol=1e-5)


def test_reductions_propagate_nan_and_find_its_index():
    x = np.array([[1.0, np.nan, 3.0], [2.0, 0.0, -1.0]], np.float32)
    check(lambda T, a: (a.amax(1), a.argmax(1), a.min(1)), x)


@settings(max_examples=10)
@given(m=st.integers(1, 6), k=st.integers(1, 6), n=st.integers(1, 6), seed=st.integers(0, 9))
def test_matrix_products(m, k, n, seed):
    a, b = values((m, k), "float32", seed), values((k, n), "float32", seed + 1)
    c = values((n,), "float32", seed + 2)
    check(lambda T, x, y: x @ y, a, b, atol=1e-4)
    check(lambda T, x, y: T.mm(y.t(), x.t()), a, b, atol=1e-4)
    check(lambda T, x, y, z: T.addmm(z, x, y, beta=0.5, alpha=2), a, b, c, atol=1e-4)
    check(lambda T, x, y, z: T.nn.functional.linear(x, y.t(), z), a, b, c, atol=1e-4)
    batched = values((2, m, k), "float32", seed), values((2, k, n), "float32", seed)
    check(lambda T, x, y: T.bmm(x, y), *batched, atol=1e-4)


def test_mlp_trains_like_cpu():
    def train(device):
        strata.manual_seed(0)
        model = strata.nn.Sequential(strata.nn.Linear(4, 8), strata.nn.ReLU(),
                                     strata.nn.Linear(8, 1)).to(device)
        opt = strata.optim.SGD(model.parameters(), lr=0.1)
        x = strata.tensor(values((16, 4), "float32", 0)).to(device)
        y = strata.tensor(values((16, 1), "float32", 1)).to(device)
        losses = []
        for _ in range(4):
            opt.zero_grad()
            d = model(x) - y
            loss = (d * d).mean()
            loss.backward()
            opt.step()
            losses.append(loss.item())
        return losses, [p.detach().cpu().numpy() for p in model.parameters()]
    cpu_losses, cpu_params = train("cpu")
    cl_losses, cl_params = train("opencl")
    assert cl_losses[-1] < cl_losses[0]
    np.testing.assert_allclose(cl_losses, cpu_losses, rtol=1e-5)
    for got, want in zip(cl_params, cpu_params):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


@settings(max_examples=8)
@given(shape=st.lists(st.integers(1, 5), min_size=1, max_size=3).map(tuple),
       seed=st.integers(0, 9), data=st.data())
def test_softmax_and_log_softmax_with_gradients(shape, seed, data):
    x = values(shape, "float32", seed)
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    for name in ("softmax", "log_softmax"):
        def fn(T, a, name=name):
            a = a.requires_grad_()
            y = getattr(T, name)(a, dim)
            (y * y).sum().backward()
            return y.detach(), a.grad
        check(fn, x, atol=1e-5)


@settings(max_examples=8)
@given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=3).map(tuple),
       seed=st.integers(0, 9), data=st.data())
def test_index_select_embedding_cat(shape, seed, data):
    x = values(shape, "float32", seed)
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    index = np.array(data.draw(st.lists(st.integers(0, shape[dim] - 1), max_size=5)), np.int64)
    check(lambda T, a, i: T.index_select(a, dim, i), x, index)
    check(lambda T, a, b: T.cat([a, b * 2, a], dim), x, values(shape, "float32", seed + 1))
    weight, ids = values((6, 3), "float32", seed), np.array([[1, 5], [0, 1]], np.int64)
    check(lambda T, w, i: T.nn.functional.embedding(i, w), weight, ids)


def test_out_of_range_indices_raise_at_the_next_sync_point():
    """backends/opencl/asserts.py's Note [Device-side asserts]: checked on the device, raised
    at the next sync point with PyTorch's text; nothing is read outside the buffers."""
    x = strata.ones(4, 3, device="opencl")
    bad = strata.tensor([0, 4]).to("opencl")
    out = strata.index_select(x, 1, strata.tensor([0, 3]).to("opencl"))   # no error yet
    with pytest.raises(RuntimeError, match="INDICES element is out of DATA bounds, id=3"):
        out.cpu()
    rows = strata.index_select(x, 0, bad)            # dim 0: torch's IndexError, as embedding
    with pytest.raises(IndexError, match="index out of range in self"):
        rows.cpu()
    strata.opencl.synchronize()                      # reported once, then cleared
    embedded = strata.nn.functional.embedding(bad, x)
    with pytest.raises(IndexError, match="index out of range in self"):
        strata.opencl.synchronize()
    assert embedded.cpu().tolist() == [[1.0] * 3] * 2  # the device is still usable
    strata.nn.functional.embedding(strata.tensor([-1, 2]).to("opencl"), x)
    with pytest.raises(IndexError, match="index out of range in self"):
        strata.opencl.synchronize()


def test_launch_blocking_raises_index_errors_at_the_op(monkeypatch):
    """As CUDA_LAUNCH_BLOCKING=1 makes a device-side assert raise at its kernel."""
    from strata.backends.opencl import runtime
    monkeypatch.setattr(runtime.get(0), "launch_blocking", True)
    x = strata.ones(4, 3, device="opencl")
    bad = strata.tensor([[0, 4]]).to("opencl")
    with pytest.raises(IndexError, match="index out of range in self"):
        strata.nn.functional.embedding(bad, x)
    with pytest.raises(IndexError, match="Target -2 is out of bounds."):
        strata.nn.functional.cross_entropy(x, strata.tensor([0, 1, -2, 2]).to("opencl"))
    strata.nn.functional.cross_entropy(x, strata.tensor([0, -100, 1, 2]).to("opencl"))


def test_the_host_check_remains_where_the_device_cannot_check():
    """Index tensors of more than four dims are checked on the host, at the op."""
    x = strata.ones(4, 3, device="opencl")
    bad = strata.tensor([0, 4]).reshape(1, 1, 1, 1, 2).to("opencl")
    with pytest.raises(IndexError, match="index out of range in self"):
        strata.nn.functional.embedding(bad, x)


def test_gemm_over_several_tiles_and_edge_cases():
    a, b = values((37, 40), "float32", 3), values((40, 33), "float32", 4)
    check(lambda T, x, y: x @ y, a, b, atol=1e-4)
    check(lambda T, x, y: T.bmm(x.expand(3, 37, 40), y.expand(3, 40, 33)), a, b, atol=1e-4)
    nan = np.full((37, 33), np.nan, np.float32)
    check(lambda T, c, x, y: T.addmm(c, x, y, beta=0, alpha=3), nan, a, b, atol=1e-4)
    ints = values((5, 7), "int64", 5), values((7, 2), "int64", 6)
    check(lambda T, x, y: x @ y, *ints)           # integers: the loop-IR reduction


@pytest.mark.parametrize("kwargs", [{}, {"weight": True}, {"reduction": "sum"},
                                    {"reduction": "none", "weight": True},
                                    {"ignore_index": 2}, {"one_row": True}])
def test_cross_entropy_and_its_gradient(kwargs):
    kwargs = dict(kwargs)
    one_row = kwargs.pop("one_row", False)
    x = values((4,) if one_row else (5, 4), "float32", 7)
    target = np.array(1 if one_row else [0, 3, 2, 1, 2], np.int64)
    weight = np.array([0.5, 1.0, 2.0, 0.25], np.float32)

    def fn(T, a, t, w):
        a = a.requires_grad_()
        extra = dict(kwargs, weight=w) if kwargs.get("weight") else kwargs
        loss = T.nn.functional.cross_entropy(a, t, **extra)
        loss.sum().backward()
        return loss.detach(), a.grad
    check(fn, x, target, weight, atol=1e-6)


def test_cross_entropy_rejects_bad_targets():
    x = strata.zeros(2, 3, device="opencl")
    loss = strata.nn.functional.cross_entropy(x, strata.tensor([0, 3]).to("opencl"))
    with pytest.raises(IndexError, match="Target 3 is out of bounds."):
        loss.item()
    ignored = strata.nn.functional.cross_entropy(x, strata.tensor([3, 3]).to("opencl"),
                                                 ignore_index=3)
    assert np.isnan(ignored.item())                  # every row ignored: 0 / 0, no error


def test_classifier_trains_like_cpu():
    def train(device):
        strata.manual_seed(1)
        model = strata.nn.Sequential(strata.nn.Linear(6, 16), strata.nn.ReLU(),
                                     strata.nn.Linear(16, 3)).to(device)
        opt = strata.optim.SGD(model.parameters(), lr=0.5)
        x = strata.tensor(values((32, 6), "float32", 2)).to(device)
        y = strata.tensor(np.arange(32) % 3).to(device)
        losses = []
        for _ in range(5):
            opt.zero_grad()
            loss = strata.nn.functional.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            losses.append(loss.item())
        return losses
    cpu, cl = train("cpu"), train("opencl")
    assert cl[-1] < cl[0]
    np.testing.assert_allclose(cl, cpu, rtol=1e-5)


@pytest.mark.parametrize("name,kwargs", [("SGD", {"lr": 0.1, "momentum": 0.9}),
                                         ("Adam", {"lr": 0.01})])
def test_optimizers_step_like_cpu(name, kwargs):
    def run(device):
        strata.manual_seed(2)
        model = strata.nn.Linear(3, 2).to(device)
        opt = getattr(strata.optim, name)(model.parameters(), **kwargs)
        x = strata.tensor(values((4, 3), "float32", 3)).to(device)
        for _ in range(3):
            opt.zero_grad()
            (model(x) * model(x)).sum().backward()
            opt.step()
        return [p.detach().cpu().numpy() for p in model.parameters()]
    for got, want in zip(run("opencl"), run("cpu")):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    check(lambda T, a: a.t().clone(), values((3, 4), "float32", 0))


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_uses_the_eager_formula_and_differentiates(approximate):
    def fn(T, a):
        a = a.requires_grad_()
        y = T.nn.functional.gelu(a, approximate=approximate)
        y.sum().backward()
        return y.detach(), a.grad, T.special.erf(a.detach())
    check(fn, values((3, 5), "float32", 4), atol=1e-5)
    check(lambda T, a: 1 - a, values((2,), "float32", 0))      # a Python number first
    check(lambda T, a: T.where(a > 0, 0.0, a), values((2, 3), "float32", 1))


def test_silu_uses_the_eager_formula_and_differentiates():
    def fn(T, a):
        a = a.requires_grad_()
        y = T.nn.functional.silu(a)
        y.sum().backward()
        return y.detach(), a.grad
    check(fn, values((3, 5), "float32", 4), atol=1e-5)


@pytest.mark.parametrize("affine", [True, False])
def test_layer_norm_and_its_gradients(affine):
    x = values((2, 3, 4), "float32", 5)
    w, b = values((4,), "float32", 6), values((4,), "float32", 7)

    def fn(T, a, weight, bias):
        a = a.requires_grad_()
        weight, bias = (weight.requires_grad_(), bias.requires_grad_()) if affine else (None,
                                                                                         None)
        y = T.nn.functional.layer_norm(a, (4,), weight, bias, eps=1e-4)
        (y * y.detach().exp()).sum().backward()
        grads = (a.grad, weight.grad, bias.grad) if affine else (a.grad,)
        return (y.detach(), *grads)
    check(fn, x, w, b, atol=1e-4, rtol=1e-4)
    check(lambda T, a: T.native_layer_norm(a, (3, 4), None, None, 1e-5), x, atol=1e-5)


@pytest.mark.parametrize("args,dtype", [((5,), None), ((1, 2.5, 0.3), None), ((-3, 7, 2), None),
                                        ((0, 1, 0.1), "float32"), ((10,), "float64")])
def test_arange(args, dtype):
    got = strata.arange(*args, device="opencl",
                        **({"dtype": getattr(strata, dtype)} if dtype else {}))
    want = torch.arange(*args, **({"dtype": getattr(torch, dtype)} if dtype else {}))
    assert got.device.type == "opencl" and str(got.dtype) == str(want.dtype).replace("torch",
                                                                                   "strata")
    np.testing.assert_array_equal(got.cpu().numpy(), want.numpy())


def test_index_add_and_the_gradients_of_embedding_and_index_select():
    x, src = values((4, 3), "float32", 8), values((4, 5), "float32", 9)
    index = np.array([2, 0, 2, 1, 2], np.int64)
    check(lambda T, a, s, i: a.clone().index_add_(1, i, s, alpha=2), x, src, index)
    ids = np.array([[1, 3, 1], [0, 1, 5]], np.int64)

    def embedding(T, w, i):
        w = w.requires_grad_()
        out = T.nn.functional.embedding(i, w, padding_idx=0)
        (out * out).sum().backward()
        return w.grad

    def select(T, a, i):
        a = a.requires_grad_()
        T.index_select(a, 0, i).exp().sum().backward()
        return a.grad
    check(embedding, values((6, 3), "float32", 10), ids)
    check(select, values((6, 3), "float32", 11), index)
    bad = strata.tensor([0, 4]).to("opencl")
    y = strata.zeros(4, 2, device="opencl")
    y.index_add_(0, bad, strata.ones(2, 2, device="opencl"))
    with pytest.raises(RuntimeError, match="index 4 is out of bounds for dimension 0 with size 4"):
        strata.opencl.synchronize()                  # as on CUDA, y's values are not defined


@pytest.mark.parametrize("exponent", [2, 0.5, 3, -1.5])
def test_pow(exponent):
    x = np.abs(values((3, 4), "float32", 12)) + 0.1
    check(lambda T, a: a ** exponent, x, rtol=2e-6)
    check(lambda T, a, b: T.pow(a, b), x, values((4,), "float32", 13), rtol=2e-6)
    check(lambda T, a: a.clone().pow_(exponent), x, rtol=2e-6)


def test_integer_fmod_by_zero_raises_and_leaves_self_alone():
    x = strata.arange(3, device="opencl")
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        x.fmod_(0)
    assert x.cpu().tolist() == [0, 1, 2]
    assert x.fmod_(2).cpu().tolist() == [0, 1, 0]


@pytest.mark.parametrize("approximate", ["none", "tanh"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_gelu_in_place_matches_torch(approximate, dtype):
    a = np.random.default_rng(0).standard_normal((5, 7)).astype(dtype)
    x = strata.tensor(a).to("opencl")
    assert strata.ops.aten.gelu_(x, approximate=approximate) is x
    expected = torch.nn.functional.gelu(torch.tensor(a), approximate=approximate).numpy()
    np.testing.assert_allclose(x.cpu().numpy(), expected, rtol=1e-6, atol=1e-6)


def test_gelu_in_place_of_integers_raises_as_torch_and_changes_nothing():
    x = strata.tensor([1, 2]).to("opencl")
    with pytest.raises(NotImplementedError) as err:
        strata.ops.aten.gelu_(x)
    with pytest.raises(NotImplementedError) as torch_err:
        torch.ops.aten.gelu_(torch.tensor([1, 2]))
    assert str(err.value) == str(torch_err.value)
    assert x.cpu().tolist() == [1, 2]


def test_clamp_with_number_bounds_keeps_x_on_a_zero_tie():
    """As the CPU's and ATen's scalar clamp: a NaN number bound gives NaN (PyTorch 2.13's
    answer; 2.11, on the GPU machines, left x as it was)."""
    values = [0.0, -0.0, -1.0, float("nan"), 5.0]
    for call in (lambda x: x.clamp(-0.0, 0.0), lambda x: x.clamp(max=-0.0),
                 lambda x: x.clamp(min=-0.0), lambda x: x.clamp(min=float("nan"))):
        got = call(strata.tensor(values).to("opencl")).cpu().numpy()
        want = call(torch.tensor(values)).numpy()
        if np.isnan(got).all() and torch.__version__ < "2.13":
            continue
        np.testing.assert_array_equal(got, want)
        assert np.array_equal(np.signbit(got), np.signbit(want))
