"""The opencl device's fused optimizer updates (compile/inductor/opencl_optim.py): one launch per
parameter, torch's numbers, the op path where they cannot run. Skipped where pyopencl finds no
OpenCL device."""

import numpy as np
import pytest
import torch

import strata
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


@pytest.fixture
def launches(monkeypatch):
    from strata.backends.opencl import runtime
    names = []
    for name in ("launch", "enqueue_prepared"):     # the pointwise lane's launches: the latter
        real = getattr(runtime.OpenCLRuntime, name)

        def counted(self, op_name, *args, real=real, **kwargs):
            names.append(op_name)
            return real(self, op_name, *args, **kwargs)
        monkeypatch.setattr(runtime.OpenCLRuntime, name, counted)
    return names


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
def test_one_launch_per_parameter(name, fused, launches):
    params = [strata.randn(4, 4, device="opencl", requires_grad=True) for _ in range(3)]
    opt = getattr(strata.optim, name.split("-")[0])(params, **OPTIMIZERS[name])
    for _ in range(2):                               # SGD's first step makes its buffers
        opt.zero_grad()
        sum((p * p).sum() for p in params).backward()
        launches.clear()
        opt.step()
    assert launches == [fused] * 3    # AdamW's weight decay is folded into its update


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
