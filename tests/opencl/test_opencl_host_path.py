"""The host path of an eager opencl op: prepared launches of the pointwise lane
(backends/opencl/prepared.py), the lanes of clone/gelu/where/activation backward, and the fused
nll_loss and softmax kernels (fewer launches per training step). Skipped where pyopencl finds
no OpenCL device."""

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import strata

pytestmark = pytest.mark.skipif(not strata.opencl.is_available(),
                                reason="needs pyopencl with an OpenCL driver (pip install "
                                       "'strata[opencl]' brings PoCL)")


def _runtime():
    from strata.backends.opencl import runtime
    return runtime.get(0)


def _opencl(array):
    return strata.tensor(array).to("opencl")


# --- prepared launches ----------------------------------------------------------------------------

def test_a_prepared_launch_sets_only_what_changed(monkeypatch):
    """Note [Prepared launches]: a repeated ``x + y`` sets no argument but a new buffer or
    offset, and launches without the general path."""
    rt = _runtime()
    calls = []
    real = rt.driver.set_arg
    monkeypatch.setattr(rt.driver, "set_arg",
                        lambda handle, i, size, value: calls.append(i) or
                        real(handle, i, size, value))
    general = []
    launch = type(rt).launch
    monkeypatch.setattr(type(rt), "launch", lambda *a, **k: general.append(1) or launch(*a, **k))
    x, y = _opencl(np.arange(5.0, dtype=np.float32)), _opencl(np.ones(5, np.float32))
    x + y
    x + y                                   # now prepared, and its kernel's arguments its own
    calls.clear(), general.clear()
    results = [x + y for _ in range(4)]     # each output a new block: only its offset changes
    assert general == [] and len(calls) <= 4
    assert all(r.cpu().tolist() == [1.0, 2.0, 3.0, 4.0, 5.0] for r in results)


@settings(max_examples=30, deadline=None)
@given(shapes=st.sampled_from([((3, 4), (4,)), ((2, 1, 3), (5, 1)), ((6,), ()), ((4, 3), None),
                               ((1,), (2, 3))]),
       scalar=st.sampled_from([2, -1.5, 0.0, -0.0, 3]),
       op=st.sampled_from(["add", "mul", "sub", "maximum", "atan2"]))
def test_prepared_launches_match_torch(shapes, scalar, op):
    """The second and third calls of a signature run prepared: the same values as torch, for
    broadcast and transposed (``None``: the first operand transposed) operands and numbers."""
    rng = np.random.default_rng(0)
    a_shape, b_shape = shapes
    a = rng.standard_normal(a_shape).astype(np.float32)
    b = a.T.copy() if b_shape is None else rng.standard_normal(b_shape).astype(np.float32)
    sa, sb = _opencl(a), _opencl(b)
    ta, tb = torch.from_numpy(a), torch.from_numpy(b)
    if b_shape is None:
        sa, ta = sa.t(), ta.t()
    for _ in range(3):
        got = getattr(strata, op)(sa, sb)
        want = getattr(torch, op)(ta, tb)
        np.testing.assert_allclose(got.cpu().numpy(), want.numpy(), rtol=1e-6, atol=1e-6)
        if op in ("add", "mul", "sub"):
            with_number = getattr(strata, op)(sa, scalar).cpu().numpy()
            want_number = getattr(torch, op)(ta, scalar).numpy()
            np.testing.assert_array_equal(np.signbit(with_number), np.signbit(want_number))
            np.testing.assert_allclose(with_number, want_number, rtol=1e-6)


def test_prepared_launches_take_the_general_path_while_traced(launches):
    x = strata.ones(3, device="opencl")
    for _ in range(2):
        x * 2
    with strata.profiler.profile() as prof:
        traced = x * 2
        strata.opencl.synchronize()
    device = [e.name for e in prof.trace_events() if e.layer == "device"]
    assert "aten::mul.Tensor" in device and traced.cpu().tolist() == [2.0] * 3


def test_a_prepared_launch_on_a_second_stream_records_its_use_of_the_first_streams_block():
    """The allocator must not hand the block of ``x`` (the default stream's) out again while
    the side stream's kernel may still read it."""
    rt = _runtime()
    x = strata.ones(1000, device="opencl")
    for _ in range(2):
        x * 2
    side = strata.opencl.Stream()
    side.wait_stream(strata.opencl.current_stream())   # x is written on the default stream
    with strata.opencl.stream(side):
        other = x * 2
    block = x._storage.block
    assert block.uses and side.id in block.uses
    side.synchronize()
    assert other.cpu().tolist() == [2.0] * 1000 and rt is _runtime()


def test_the_lanes_of_clone_gelu_where_and_backward_formulas_skip_their_meta(monkeypatch):
    from strata.ops import activation as A
    from strata.ops import factory as F
    from strata.ops import pointwise as P
    calls = []
    for op in (F.clone, P.gelu, P.where, A.gelu_backward):
        real = op.meta
        monkeypatch.setattr(op, "meta", lambda *a, real=real: calls.append(1) or real(*a))
    rng = np.random.default_rng(1)
    a, b = (rng.standard_normal((3, 4)).astype(np.float32) for _ in range(2))
    sa, sb, mask = _opencl(a), _opencl(b), _opencl(a > 0)
    ta, tb = torch.from_numpy(a), torch.from_numpy(b)
    for round_ in range(3):
        got = [sa.t().clone(), strata.nn.functional.gelu(sa, approximate="tanh"),
               strata.where(mask, sa, sb), strata.ops.aten.gelu_backward(sb, sa)]
        want = [ta.t().clone(), torch.nn.functional.gelu(ta, approximate="tanh"),
                torch.where(ta > 0, ta, tb), torch.ops.aten.gelu_backward(tb, ta)]
        for g, w in zip(got, want):
            assert tuple(g.shape) == tuple(w.shape) and g.stride() == w.stride()
            np.testing.assert_allclose(g.cpu().numpy(), w.numpy(), rtol=1e-5, atol=1e-6)
        if round_ == 0:
            first = len(calls)
    assert first <= 4 and len(calls) == first    # later rounds: no meta function ran


def test_a_lane_still_raises_for_bad_input_and_changes_nothing():
    x = strata.ones(3, device="opencl")
    strata.where(x > 0, x, x)
    with pytest.raises(RuntimeError, match="must match the size"):
        strata.where(strata.ones(4, device="opencl") > 0, x, x)
    assert x.cpu().tolist() == [1.0] * 3


# --- fused nll_loss -------------------------------------------------------------------------------

@settings(max_examples=25, deadline=None)
@given(rows=st.integers(1, 300), classes=st.integers(1, 9), weighted=st.booleans(),
       reduction=st.sampled_from(["mean", "sum"]), dtype=st.sampled_from(["float32", "float64"]),
       ignore=st.sampled_from([-100, 0]), seed=st.integers(0, 99))
def test_fused_nll_loss_matches_torch(rows, classes, weighted, reduction, dtype, ignore, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((rows, classes)).astype(dtype)
    target = rng.integers(0, classes, rows)
    target[rng.random(rows) < 0.2] = ignore
    weight = rng.random(classes).astype(dtype) if weighted else None
    want = torch.nn.functional.nll_loss(
        torch.from_numpy(x), torch.from_numpy(target),
        None if weight is None else torch.from_numpy(weight), reduction=reduction,
        ignore_index=ignore)
    got = strata.nn.functional.nll_loss(
        _opencl(x), _opencl(target), None if weight is None else _opencl(weight),
        reduction=reduction, ignore_index=ignore)
    tol = 1e-5 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(got.cpu().numpy(), want.numpy(), rtol=tol, atol=tol)


def test_fused_nll_loss_is_one_launch_with_its_target_check(launches):
    x = strata.randn(6, 4, device="opencl")
    target = _opencl(np.array([0, 3, 1, 2, 3, 0]))
    launches.clear()
    loss = strata.ops.aten.nll_loss_forward(x, target, None, 1, -100)
    assert launches == ["aten::nll_loss_forward"]
    want = torch.nn.functional.nll_loss(torch.from_numpy(x.cpu().numpy()),
                                        torch.tensor([0, 3, 1, 2, 3, 0]))
    np.testing.assert_allclose(loss[0].cpu().numpy(), want.numpy(), rtol=1e-6)
    all_ignored = strata.nn.functional.nll_loss(x, strata.full((6,), -100, device="opencl"))
    assert np.isnan(all_ignored.cpu().item())     # 0 / 0, as in PyTorch


def test_fused_nll_loss_reports_a_bad_target_at_the_next_sync_point():
    x = strata.randn(3, 4, device="opencl")
    loss = strata.nn.functional.nll_loss(x, _opencl(np.array([1, 7, 2])))
    with pytest.raises(IndexError, match="Target 7 is out of bounds."):
        loss.cpu()
    good = strata.nn.functional.nll_loss(x, _opencl(np.array([1, 3, 2])))   # still usable
    want = torch.nn.functional.nll_loss(torch.from_numpy(x.cpu().numpy()),
                                        torch.tensor([1, 3, 2]))
    np.testing.assert_allclose(good.cpu().numpy(), want.numpy(), rtol=1e-6)


# --- fused softmax --------------------------------------------------------------------------------

@settings(max_examples=30, deadline=None)
@given(shape=st.sampled_from([(4, 7), (2, 3, 5), (5,), (), (0, 3), (3, 300), (2, 1)]),
       dim=st.integers(-3, 2), log=st.booleans(), dtype=st.sampled_from(["float32", "float64"]),
       special=st.sampled_from([None, -np.inf, np.nan]), seed=st.integers(0, 99))
def test_fused_softmax_forward_and_backward_match_torch(shape, dim, log, dtype, special, seed):
    ndim = max(len(shape), 1)
    if not -ndim <= dim < ndim:
        return
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape).astype(dtype)
    if special is not None and x.size:
        x.reshape(-1)[0] = special
    g = rng.standard_normal(shape).astype(dtype)
    name = "log_softmax" if log else "softmax"
    tx = torch.tensor(x, requires_grad=True)
    ty = getattr(torch, name)(tx, dim)
    ty.backward(torch.from_numpy(g))
    sx = _opencl(x).requires_grad_()
    sy = getattr(strata, name)(sx, dim)
    sy.backward(_opencl(g))
    tol = 1e-5 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(sy.detach().cpu().numpy(), ty.detach().numpy(), rtol=tol,
                               atol=tol)
    np.testing.assert_allclose(sx.grad.cpu().numpy(), tx.grad.numpy(), rtol=tol, atol=tol)


def test_fused_softmax_is_one_launch_each_way(launches):
    x = strata.randn(8, 16, device="opencl", requires_grad=True)
    for name in ("softmax", "log_softmax"):
        y = getattr(strata, name)(x, -1)
        g = strata.randn(8, 16, device="opencl")
        launches.clear()
        y = getattr(strata, name)(x, -1)
        assert launches == [f"aten::_{name}"]
        launches.clear()
        y.backward(g)
        assert launches.count(f"aten::_{name}_backward_data") == 1
        assert not [n for n in launches if "sum" in n or "mul" in n]


def test_softmax_takes_the_general_path_for_long_rows_strides_and_halves(launches):
    from strata.compile.inductor.opencl_rows import GROUP_ROW
    x = strata.randn(2, GROUP_ROW, device="opencl")
    launches.clear()
    strata.softmax(x, -1)
    assert len(launches) == 2                   # the row statistics, then the formula
    for arg in (x[:, ::2], x.t(), x.half()):
        want = torch.softmax(torch.from_numpy(arg.float().cpu().numpy()), 0)
        launches.clear()
        got = strata.softmax(arg, 0)
        assert len(launches) == 2
        np.testing.assert_allclose(got.float().cpu().numpy(), want.numpy(), rtol=2e-3,
                                   atol=1e-3)


def test_fused_softmax_validates_before_launching(launches):
    y = strata.randn(2, 3, device="opencl")
    launches.clear()
    with pytest.raises(IndexError, match="Dimension out of range"):
        strata.softmax(y, 2)
    assert launches == []


# --- fused layer norm forward ---------------------------------------------------------------------

@settings(max_examples=25, deadline=None)
@given(shape=st.sampled_from([((4, 8), 1), ((2, 3, 5), 2), ((3, 300), 1), ((0, 4), 1),
                              ((6,), 1)]),
       affine=st.sampled_from([(True, True), (True, False), (False, True), (False, False)]),
       dtype=st.sampled_from(["float32", "float64"]), seed=st.integers(0, 99))
def test_fused_layer_norm_matches_torch(shape, affine, dtype, seed):
    shape, normalized = shape
    rng = np.random.default_rng(seed)
    norm = shape[-normalized:]
    x = rng.standard_normal(shape).astype(dtype)
    w, b = (rng.standard_normal(norm).astype(dtype) for _ in range(2))
    params_t = [torch.from_numpy(p) if on else None for p, on in zip((w, b), affine)]
    params_s = [_opencl(p) if on else None for p, on in zip((w, b), affine)]
    want = torch.ops.aten.native_layer_norm(torch.from_numpy(x), list(norm), *params_t, 1e-5)
    got = strata.ops.aten.native_layer_norm(_opencl(x), list(norm), *params_s, 1e-5)
    tol = 1e-5 if dtype == "float32" else 1e-12
    for g, w_ in zip(got, want):
        assert tuple(g.shape) == tuple(w_.shape) and g.dtype.itemsize == w_.dtype.itemsize
        np.testing.assert_allclose(g.cpu().numpy(), w_.numpy(), rtol=tol, atol=tol)


def test_fused_layer_norm_is_one_launch_and_long_rows_or_halves_take_two(launches):
    x = strata.randn(4, 32, device="opencl")
    w, b = strata.randn(32, device="opencl"), strata.randn(32, device="opencl")
    launches.clear()
    strata.nn.functional.layer_norm(x, (32,), w, b)
    assert launches == ["aten::native_layer_norm"]
    from strata.compile.inductor.opencl_rows import GROUP_ROW
    long_rows = strata.randn(2, GROUP_ROW, device="opencl")
    halves = x.half()
    launches.clear()
    strata.nn.functional.layer_norm(long_rows, (GROUP_ROW,))
    strata.nn.functional.layer_norm(halves, (32,))
    assert launches == ["aten::native_layer_norm"] * 4


# --- cat in one launch (opencl_cat.py) ------------------------------------------------------------

@settings(max_examples=30, deadline=None)
@given(count=st.integers(1, 6), rank=st.integers(1, 3), data=st.data(),
       dtypes=st.lists(st.sampled_from(["float32", "float64", "int64", "float16"]), min_size=6,
                       max_size=6),
       transposed=st.booleans())
def test_cat_matches_torch(count, rank, data, dtypes, transposed):
    """Any inputs (sizes along ``dim`` from 0, promoted dtypes, a transposed input): torch's
    values and dtype."""
    dim = data.draw(st.integers(-rank, rank - 1))
    shape = data.draw(st.lists(st.integers(1, 4), min_size=rank, max_size=rank))
    rng = np.random.default_rng(len(shape))
    arrays = []
    for k in range(count):
        own = list(shape)
        own[dim] = data.draw(st.integers(0, 3))
        arrays.append((rng.standard_normal(own) * 4).astype(dtypes[k]))
    ours = [_opencl(a) for a in arrays]
    theirs = [torch.from_numpy(a) for a in arrays]
    if transposed and rank > 1:
        ours[0] = _opencl(np.ascontiguousarray(arrays[0].swapaxes(0, -1))).transpose(0, -1)
    got = strata.cat(ours, dim)
    want = torch.cat(theirs, dim)
    assert str(got.dtype) == str(want.dtype).replace("torch", "strata")
    np.testing.assert_array_equal(got.cpu().numpy(), want.numpy())


@pytest.mark.parametrize("count, expected", [(2, 1), (3, 1), (4, 1), (5, 5)])
def test_cat_of_a_few_inputs_is_one_launch(count, expected, launches):
    parts = [strata.ones(2, 3, device="opencl") * k for k in range(count)]
    launches.clear()
    out = strata.cat(parts, 1)
    assert launches == ["aten::cat"] * expected
    assert out.cpu().numpy().tolist() == np.concatenate(
        [np.full((2, 3), k, np.float32) for k in range(count)], 1).tolist()


def test_cat_refuses_a_cpu_input_before_launching(launches):
    parts = [strata.ones(2, device="opencl"), strata.ones(2, device="opencl"), strata.ones(2)]
    launches.clear()
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        strata.cat(parts)
    assert launches == []
