"""The opencl device's fused optimizer updates (compile/inductor/opencl_optim.py): one launch per
group of parameters (multi-tensor) or per parameter, torch's numbers, the op path where they
cannot run. Skipped where pyopencl finds no OpenCL device."""

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import strata
from strata.compile.inductor import opencl_optim
from strata.optim import _native_update

pytestmark = pytest.mark.skipif(not strata.opencl.is_available(),
                                reason="needs pyopencl with an OpenCL driver (pip install "
                                       "'strata[opencl]' brings PoCL)")

OPTIMIZERS = {
    "Adam": {"lr": 1e-2},
    "AdamW": {"lr": 1e-2, "weight_decay": 0.1},
    "Adam-amsgrad": {"lr": 1e-2, "amsgrad": True},
    "SGD-momentum": {"lr": 1e-2, "momentum": 0.9, "dampening": 0.1},
    "SGD-nesterov": {"lr": 1e-2, "momentum": 0.9, "nesterov": True, "weight_decay": 0.01},
}


def _train(m, name, dev, steps=4, dtype=np.float32, transposed=False):
    """A few steps on two parameters (one maybe a non-contiguous view); their values."""
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal((5, 3)).astype(dtype), rng.standard_normal(7).astype(dtype)]
    params = [m.tensor(a.T.copy() if transposed and i == 0 else a).to(dev)
              for i, a in enumerate(arrays)]
    if transposed:
        params[0] = params[0].t()                    # a non-contiguous parameter
    params = [p.detach().requires_grad_() for p in params]
    opt = getattr(m.optim, name.split("-")[0])(params, **OPTIMIZERS[name])
    for step in range(steps):
        opt.zero_grad()
        loss = sum(((p * (step + 1)).sin() * p).sum() for p in params)
        loss.backward()
        opt.step()
    return [p.detach().cpu().numpy() for p in params]


@pytest.mark.parametrize("name", list(OPTIMIZERS))
@pytest.mark.parametrize("transposed", [False, True])
def test_updates_give_torchs_parameters(name, transposed):
    got = _train(strata, name, "opencl", transposed=transposed)
    want = _train(torch, name, "cpu", transposed=transposed)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", ["Adam", "AdamW", "SGD-momentum"])
def test_fused_updates_match_the_op_path(name, monkeypatch):
    fused = _train(strata, name, "opencl", dtype=np.float64)
    monkeypatch.setattr(_native_update, "_DEVICE_UPDATES", {})
    ops = _train(strata, name, "opencl", dtype=np.float64)
    for f, o in zip(fused, ops):
        np.testing.assert_allclose(f, o, rtol=1e-13, atol=1e-15)


@pytest.mark.parametrize("name, fused", [("Adam", "adam_step"), ("AdamW", "adamw_step"),
                                         ("SGD-momentum", "sgd_momentum_step")])
def test_one_launch_per_group(name, fused, launches):
    params = [strata.randn(4, 4, device="opencl", requires_grad=True) for _ in range(3)]
    opt = getattr(strata.optim, name.split("-")[0])(params, **OPTIMIZERS[name])
    for _ in range(2):                               # SGD's first step makes its buffers
        opt.zero_grad()
        sum((p * p).sum() for p in params).backward()
        launches.clear()
        opt.step()
    # AdamW's weight decay is folded into its update; the table is uploaded by a copy
    assert launches == [f"multi_tensor_{fused}"]


@pytest.mark.parametrize("name, fused", [("Adam", "adam_step"), ("AdamW", "adamw_step"),
                                         ("SGD-momentum", "sgd_momentum_step")])
def test_one_launch_per_parameter_without_the_group_update(name, fused, launches,
                                                           monkeypatch):
    monkeypatch.setattr(_native_update, "_DEVICE_GROUP_UPDATES", {})
    params = [strata.randn(4, 4, device="opencl", requires_grad=True) for _ in range(3)]
    opt = getattr(strata.optim, name.split("-")[0])(params, **OPTIMIZERS[name])
    for _ in range(2):
        opt.zero_grad()
        sum((p * p).sum() for p in params).backward()
        launches.clear()
        opt.step()
    assert launches == [fused] * 3


# --- multi-tensor updates (Note [Multi-tensor updates]) ---------------------------------------

GROUPED = {"Adam": {"lr": 1e-2, "betas": (0.8, 0.95)},
           "AdamW": {"lr": 1e-2, "weight_decay": 0.1},
           "SGD-momentum": {"lr": 1e-2, "momentum": 0.9, "dampening": 0.1},
           "SGD-nesterov": {"lr": 1e-2, "momentum": 0.9, "nesterov": True}}


def _run_group(shapes, name, dtype, steps=3, skip=None, seed=0):
    """``steps`` steps of optimizer ``name`` over parameters of ``shapes`` on opencl with given
    random gradients (parameter ``skip`` has none in the first step); every tensor's values,
    the step counts and the version counters."""
    rng = np.random.default_rng(seed)
    params = [strata.tensor(rng.standard_normal(shape).astype(dtype)).to("opencl")
              .requires_grad_() for shape in shapes]
    opt = getattr(strata.optim, name.split("-")[0])(params, **GROUPED[name])
    for step in range(steps):
        for i, p in enumerate(params):
            grad = rng.standard_normal(p.shape).astype(dtype)
            p.grad = None if (i == skip and step == 0) else strata.tensor(grad).to("opencl")
        opt.step()
    values, versions = [], []
    for p in params:
        state = opt.state[p]
        tensors = [p] + [state[k] for k in sorted(state)]
        values += [t.detach().cpu().numpy() for t in tensors]
        versions += [t._version for t in tensors]
    return values, versions


def _grouped_and_looped(monkeypatch, *args, **kwargs):
    grouped = _run_group(*args, **kwargs)
    with monkeypatch.context() as patch:
        patch.setattr(_native_update, "_DEVICE_GROUP_UPDATES", {})
        looped = _run_group(*args, **kwargs)
    return grouped, looped


def _assert_same_bits(grouped, looped):
    (got, got_versions), (want, want_versions) = grouped, looped
    assert got_versions == want_versions
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_array_equal(g.reshape(-1).view(np.uint8), w.reshape(-1).view(np.uint8))


@settings(max_examples=12, deadline=None)
@given(shapes=st.lists(st.lists(st.integers(0, 9), min_size=0, max_size=3).map(tuple),
                       min_size=1, max_size=6),
       name=st.sampled_from(sorted(GROUPED)), dtype=st.sampled_from([np.float32, np.float64]))
def test_group_update_has_the_per_parameter_bits(shapes, name, dtype):
    grouped = _run_group(shapes, name, dtype)
    saved = dict(_native_update._DEVICE_GROUP_UPDATES)
    _native_update._DEVICE_GROUP_UPDATES.clear()
    try:
        looped = _run_group(shapes, name, dtype)
    finally:
        _native_update._DEVICE_GROUP_UPDATES.update(saved)
    _assert_same_bits(grouped, looped)


@pytest.mark.parametrize("name", ["Adam", "AdamW"])
def test_parameters_at_different_steps_launch_once_per_step_count(name, monkeypatch,
                                                                    launches):
    grouped, looped = _grouped_and_looped(monkeypatch, [(3, 4), (5,), (2, 2)], name,
                                          np.float32, skip=1)
    _assert_same_bits(grouped, looped)
    steps = [v for v in grouped[0] if v.shape == ()]
    assert [float(s) for s in steps] == [3.0, 2.0, 3.0]
    launches.clear()
    _run_group([(3, 4), (5,), (2, 2)], name, np.float32, steps=2, skip=1)
    # the first step: one launch for the 2 parameters with a gradient, the second: 2 counts
    assert launches.count(f"multi_tensor_{name.lower()}_step") == 3


def test_a_group_over_more_buffers_than_slots_takes_several_launches(monkeypatch, launches):
    monkeypatch.setattr(opencl_optim, "SLOTS", 4)    # every launch takes at most 4 buffers
    # blocks of 1 MiB: two to a 2 MiB segment, so 3 parameters' 12 tensors need 6 or more
    shapes = [(1 << 18,)] * 3
    grouped, looped = _grouped_and_looped(monkeypatch, shapes, "AdamW", np.float32, steps=2)
    _assert_same_bits(grouped, looped)
    launches.clear()
    _run_group(shapes, "AdamW", np.float32, steps=1)
    assert launches.count("multi_tensor_adamw_step") > 1


def test_the_table_is_uploaded_once_while_tensors_stay(monkeypatch):
    from strata.backends.opencl import runtime
    uploads = []
    real = runtime.OpenCLRuntime.upload
    monkeypatch.setattr(runtime.OpenCLRuntime, "upload",
                        lambda self, dst, array, *a, **k: (uploads.append(array.nbytes),
                                                           real(self, dst, array, *a, **k)))
    params = [strata.randn(5, 4, device="opencl", requires_grad=True) for _ in range(3)]
    opt = strata.optim.AdamW(params, lr=1e-2)
    grads = [strata.randn(5, 4, device="opencl") for _ in range(3)]
    for p, g in zip(params, grads):
        p.grad = g
    for _ in range(4):
        opt.step()
    assert uploads == [3 * 9 * 8]        # one table: 3 rows of a start and 4 (slot, offset)


def test_the_group_update_falls_back_to_the_loop_for_a_strided_parameter(launches):
    params = [strata.randn(4, 3, device="opencl").t().detach().requires_grad_(),
              strata.randn(4, device="opencl", requires_grad=True)]
    opt = strata.optim.Adam(params, lr=1e-2)
    for p in params:
        p.grad = strata.ones(p.shape, device="opencl")
    launches.clear()
    opt.step()
    assert "multi_tensor_adam_step" not in launches and "adam_step" in launches


def test_group_update_gives_torchs_parameters_at_different_steps():
    def run(m, dev):
        rng = np.random.default_rng(1)
        params = [m.tensor(rng.standard_normal(s).astype(np.float32)).to(dev).requires_grad_()
                  for s in ((4, 3), (6,), (2, 5))]
        opt = m.optim.AdamW(params, lr=1e-2, weight_decay=0.1)
        for step in range(3):
            for i, p in enumerate(params):
                g = m.tensor(rng.standard_normal(tuple(p.shape)).astype(np.float32)).to(dev)
                p.grad = None if (i == 1 and step == 0) else g
            opt.step()
        return [p.detach().cpu().numpy() for p in params]
    for got, want in zip(run(strata, "opencl"), run(torch, "cpu")):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_adamw_decay_moves_the_version_counter_as_its_ops_do():
    p = strata.randn(6, device="opencl", requires_grad=True)
    opt = strata.optim.AdamW([p], lr=0.1, weight_decay=0.1)
    for _ in range(2):
        (p * p).sum().backward()
        version = p._version
        opt.step()
    assert p._version == version + 2                 # mul_ and addcdiv_


def test_the_update_moves_version_counters_as_the_ops_do():
    p = strata.randn(6, device="opencl", requires_grad=True)
    opt = strata.optim.Adam([p], lr=0.1)
    (p * p).sum().backward()
    opt.step()
    version = p._version
    state = opt.state[p]
    versions = (state["exp_avg"]._version, state["exp_avg_sq"]._version)
    (p * p).sum().backward()
    opt.step()
    assert p._version == version + 1
    assert (state["exp_avg"]._version, state["exp_avg_sq"]._version) == \
        (versions[0] + 1, versions[1] + 2)


def test_a_saved_parameter_overwritten_by_the_step_is_caught():
    p = strata.randn(5, device="opencl", requires_grad=True)
    opt = strata.optim.Adam([p], lr=0.1)
    (p * p).sum().backward()
    y = (p * p).sum()                                # saves p
    opt.step()
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()


@pytest.mark.parametrize("grouped", [True, False])
def test_an_inference_step_count_raises_as_the_loop_does_and_leaves_the_parameter(
        grouped, monkeypatch):
    if not grouped:
        monkeypatch.setattr(_native_update, "_DEVICE_GROUP_UPDATES", {})
    p = strata.randn(4, device="opencl", requires_grad=True)
    opt = strata.optim.Adam([p], lr=0.1)
    p.grad = strata.ones(4, device="opencl")
    opt.step()
    with strata.inference_mode():
        opt.state[p]["step"] = strata.scalar_tensor(1.0)
    before = p.detach().cpu().numpy().copy()
    with pytest.raises(RuntimeError, match="Inplace update to inference tensor"):
        opt.step()
    np.testing.assert_array_equal(p.detach().cpu().numpy(), before)


def _changed_between_steps(m, dev, change):
    """AdamW over three parameters for 4 steps, ``change(m, params, opt)`` before the third
    step's update: the parameters and the state after."""
    rng = np.random.default_rng(3)
    params = [m.tensor(rng.standard_normal(s).astype(np.float32)).to(dev).requires_grad_()
              for s in ((4, 3), (3,), (2, 5))]
    opt = m.optim.AdamW(params, lr=1e-2, weight_decay=0.1)
    for i in range(4):
        opt.zero_grad()
        sum(((p * (i + 1)).sin() * p).sum() for p in params).backward()
        if i == 2:
            change(m, params, opt)
        opt.step()
    return [p.detach().cpu().numpy() for p in params] + \
        [s[k].cpu().numpy() for s in opt.state.values() for k in ("exp_avg", "exp_avg_sq")]


def _new_data(m, params, opt):
    params[2].data = m.full((2, 5), 0.5, device=params[2].device)


def _transposed_state(m, params, opt):
    state = opt.state[params[0]]
    state["exp_avg_sq"] = state["exp_avg_sq"].t().contiguous().t()   # same values, strided


def _state_by_hand(m, params, opt):
    opt.state[params[1]]["exp_avg"] = m.zeros(3, device=params[1].device)


def _transposed_grad(m, params, opt):
    params[0].grad = params[0].grad.t().contiguous().t()


@pytest.mark.parametrize("change", [_new_data, _transposed_state, _state_by_hand,
                                    _transposed_grad])
def test_kept_checks_follow_changes_between_steps(monkeypatch, change):
    """Note [Kept checks]: the parameters' and states' checks are kept between steps and made
    again when one of them moves; the values stay torch's."""
    checks = []
    real = opencl_optim.MultiTensorUpdate._check
    monkeypatch.setattr(opencl_optim.MultiTensorUpdate, "_check", staticmethod(
        lambda *a: checks.append(1) or real(*a)))
    got = _changed_between_steps(strata, "opencl", change)
    want = _changed_between_steps(torch, "cpu", change)
    for a, b in zip(got, want, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    # made at the first step (the state appears then) and again where a tensor moved; a
    # refusal (a strided state: the loop runs) is not kept, so checked at each step after
    want_checks = {_transposed_grad: 1, _transposed_state: 3}.get(change, 2)
    assert len(checks) == want_checks
