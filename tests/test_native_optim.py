"""Adam/AdamW's and SGD-with-momentum's generated updates (compile/inductor/eager_optim.py via
optim/_native_update.py): the same bits as the op path they replace, on the flat-bucket and the
per-parameter paths, the version counters moved as the ops move them, the op path kept where
the kernel must not run, and agreement with PyTorch."""

import numpy as np
import pytest
import torch

import strata
from strata import config
from strata.backends.cpu import native
from strata.optim import _group_update, _native_update


def _model(m, dtype):
    m.manual_seed(0)
    rng = np.random.default_rng(0)
    big = m.nn.Linear(300, 300)       # above FLATTEN_MAX_NUMEL: its own tensors
    small = m.nn.Linear(300, 5)       # flattened into a bucket
    shapes = ((300, 300), (300,), (5, 300), (5,))
    for p, shape in zip(list(big.parameters()) + list(small.parameters()), shapes):
        with m.no_grad():
            p.copy_(m.tensor(rng.standard_normal(shape) * 0.05))
    return m.nn.Sequential(big, m.nn.Tanh(), small).to(getattr(m, dtype))


def _train(m, opt_name, dtype, steps=4, **kwargs):
    model = _model(m, dtype)
    kwargs.setdefault("lr", 1e-2)
    opt = getattr(m.optim, opt_name)(model.parameters(), **kwargs)
    x = m.tensor(np.random.default_rng(1).standard_normal((8, 300))).to(getattr(m, dtype))
    for _ in range(steps):
        opt.zero_grad()
        model(x).square().sum().backward()
        opt.step()
    return [p.detach().numpy().copy() for p in model.parameters()], opt


def _with_native(monkeypatch, on):
    monkeypatch.setattr(config, "native_kernels", on)
    native.reset()


def _without_one_kernel(monkeypatch):
    """Note [One update kernel] off: Adam and SGD take their per-parameter and flat paths."""
    monkeypatch.setattr(_group_update.GroupUpdate, "plan", classmethod(lambda cls, *a: None))


KERNEL_CALLS = {"Adam": "strata.optim.adam.adam_step", "AdamW": "strata.optim.adam.adam_step",
                "SGD": "strata.optim.sgd.sgd_momentum_step"}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("opt_name,kwargs", [
    ("Adam", {}), ("Adam", {"weight_decay": 0.1, "maximize": True}),
    ("AdamW", {"weight_decay": 0.05}), ("Adam", {"foreach": False}),
    ("SGD", {"momentum": 0.9, "lr": 1e-4}),
    ("SGD", {"momentum": 0.9, "nesterov": True, "foreach": False, "lr": 1e-4}),
    ("SGD", {"momentum": 0.5, "dampening": 0.1, "weight_decay": 0.01, "lr": 1e-4}),
])
def test_same_bits_as_the_op_path(monkeypatch, dtype, opt_name, kwargs):
    _without_one_kernel(monkeypatch)     # the per-parameter and flat paths' kernels
    calls = []
    where = KERNEL_CALLS[opt_name]
    real = getattr(_native_update, where.rsplit(".", 1)[1])
    monkeypatch.setattr(where, lambda *a: calls.append(real(*a)) or calls[-1])
    _with_native(monkeypatch, True)
    fast, _ = _train(strata, opt_name, dtype, **kwargs)
    if native.function("eager_optim", "adam_step_float32") is None:
        pytest.skip("no C compiler")
    assert calls and all(calls)           # the kernel really ran, for every update
    monkeypatch.setattr(where, lambda *a: False)   # the ops only
    slow, _ = _train(strata, opt_name, dtype, **kwargs)
    for a, b in zip(fast, slow):
        assert np.array_equal(a, b)
    want, _ = _train(torch, opt_name, dtype, **kwargs)
    tol = 1e-5 if dtype == "float32" else 1e-12
    for a, b in zip(fast, want):
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


def test_versions_move_as_the_ops_move_them(monkeypatch):
    _without_one_kernel(monkeypatch)
    real = _native_update.adam_step

    def run(on):
        monkeypatch.setattr("strata.optim.adam.adam_step", real if on else lambda *a: False)
        _, opt = _train(strata, "Adam", "float32", steps=2, foreach=False)
        return [(p._version, s["exp_avg"]._version, s["exp_avg_sq"]._version)
                for p, s in opt.state.items()]
    assert run(True) == run(False)


def test_op_path_where_the_kernel_must_not_run(monkeypatch):
    _with_native(monkeypatch, True)
    x = strata.ones(2000)
    state = [strata.zeros(2000), strata.zeros(2000)]
    args = (0.1, 0.999, 0.5, 1e-8, 0.01)
    assert not _native_update.adam_step(x, x, *state, 0.6, *args[1:])   # lerp from the far end
    assert not _native_update.adam_step(x, x.double(), *state, *args)   # mixed dtypes
    assert not _native_update.adam_step(x[::2], x[::2], state[0][::2], state[1][::2], *args)
    with strata.enable_grad():
        assert not _native_update.adam_step(x, x, *state, *args)        # ops must record
    with strata.no_grad():
        assert _native_update.adam_step(x, x, *state, *args) == (
            native.function("eager_optim", "adam_step_float32") is not None)


def _plans(monkeypatch):
    """Record what ``AdamUpdate.plan`` and ``SGDUpdate.plan`` answer."""
    plans, real = [], _group_update.GroupUpdate.plan.__func__
    monkeypatch.setattr(_group_update.GroupUpdate, "plan", classmethod(
        lambda cls, *a: plans.append(real(cls, *a)) or plans[-1]))
    return plans


def _versions(opt):
    """Each parameter's version, and each state tensor's (and value, for a step count)."""
    return [(p._version, [(name, t._version) + ((float(t),) if t.ndim == 0 else ())
                          for name, t in sorted(s.items())]) for p, s in opt.state.items()]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("opt_name,kwargs", [
    ("Adam", {}), ("AdamW", {"weight_decay": 0.05}), ("Adam", {"foreach": False}),
    ("AdamW", {"weight_decay": 0.1, "foreach": False}),
    ("SGD", {"momentum": 0.9, "lr": 1e-4}),
    ("SGD", {"momentum": 0.9, "nesterov": True, "foreach": False, "lr": 1e-4}),
    ("SGD", {"momentum": 0.5, "dampening": 0.1, "lr": 1e-4}),
])
def test_one_update_kernel_same_bits_and_versions(monkeypatch, dtype, opt_name, kwargs):
    """Note [One update kernel]: every parameter (large and flattened ones) in one parallel
    call, over 1 and 2 threads: the op path's bits, PyTorch's version counts and values."""
    _with_native(monkeypatch, True)
    if native.function("eager_optim", "adam_multi_step_float32") is None:
        pytest.skip("no C compiler")
    before = strata.get_num_threads()
    plans = _plans(monkeypatch)
    try:
        runs = []
        for threads in (1, 2):
            strata.set_num_threads(threads)
            runs.append(_train(strata, opt_name, dtype, **kwargs))
    finally:
        strata.set_num_threads(before)
    assert plans and all(p is not None for p in plans)   # it ran, for every step
    (fast, opt), (fast_two, _) = runs
    _without_one_kernel(monkeypatch)
    monkeypatch.setattr(KERNEL_CALLS[opt_name], lambda *a: False)   # the ops only
    slow, slow_opt = _train(strata, opt_name, dtype, **kwargs)
    for a, b, c in zip(fast, fast_two, slow):
        assert np.array_equal(a, b) and np.array_equal(a, c)
    want, torch_opt = _train(torch, opt_name, dtype, **kwargs)
    if opt_name == "SGD":    # the flat path's first step makes the buffers views of one
        # buffer (optim/_multi_tensor.py), sharing one counter that each step moves once
        assert [v[1] for v in _versions(opt)] == [v[1] for v in _versions(slow_opt)]
        assert [p._version for p in opt.state] == [p._version for p in torch_opt.state]
    else:
        assert _versions(opt) == _versions(torch_opt)
    tol = 1e-5 if dtype == "float32" else 1e-12
    for a, b in zip(fast, want):
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


def test_one_update_kernel_refuses_what_it_cannot_compute(monkeypatch):
    """Different step counts, amsgrad, maximize, coupled weight decay, a tensor lr, mixed
    dtypes: the other paths run (and give PyTorch's numbers)."""
    _with_native(monkeypatch, True)
    plans = _plans(monkeypatch)
    model = _model(strata, "float32")
    opt = strata.optim.Adam(model.parameters(), lr=1e-2)
    x = strata.randn(8, 300)
    model(x).square().sum().backward()
    opt.step()
    assert plans[-1] is not None
    opt.state[model[0].weight]["step"].add_(1)      # this parameter is one step ahead
    before = [p.detach().clone() for p in model.parameters()]
    opt.step()
    assert plans[-1] is None
    assert [float(opt.state[p]["step"]) for p in model.parameters()] == [3, 2, 2, 2]
    assert not any(strata.equal(a, b) for a, b in zip(before, model.parameters()))
    for kwargs in ({"amsgrad": True}, {"maximize": True}, {"weight_decay": 0.1},
                   {"lr": strata.tensor(0.01)}):
        del plans[:]
        opt = strata.optim.Adam(model.parameters(), **kwargs)
        opt.step()
        assert plans in ([], [None])
    results = []
    del plans[:]
    for m in (strata, torch):       # float32 and float64 parameters in one group
        mixed = [m.zeros(3, requires_grad=True), m.zeros(3, dtype=m.float64, requires_grad=True)]
        for p in mixed:
            p.grad = m.ones_like(p)
        m.optim.Adam(mixed, lr=0.1).step()
        results.append([p.detach().numpy() for p in mixed])
    assert plans == [None]
    for a, b in zip(*results):
        np.testing.assert_array_equal(a, b)
