"""``strata.optim.swa_utils`` against ``torch.optim.swa_utils``: AveragedModel (SWA and EMA),
SWALR's lr sequence, and update_bn's recomputed BatchNorm statistics."""

import math
import warnings

import numpy as np
import pytest
import torch

import strata

WEIGHT_SHAPES = [(5, 3), (5,), (5,), (5,), (2, 5), (2,)]


def _net(m):
    return m.nn.Sequential(m.nn.Linear(3, 5), m.nn.BatchNorm1d(5), m.nn.ReLU(), m.nn.Linear(5, 2))


def _set_weights(m, net, rng, dtype):
    """Load fresh random weights and BatchNorm statistics (as training would move them)."""
    with m.no_grad():
        for p, shape in zip(net.parameters(), WEIGHT_SHAPES):
            p.copy_(m.tensor(rng.standard_normal(shape).astype(dtype)))
        bn = net[1]
        bn.running_mean.copy_(m.tensor(rng.standard_normal(5).astype(dtype)))
        bn.running_var.copy_(m.tensor(rng.uniform(0.5, 2, 5).astype(dtype)))
        bn.num_batches_tracked.add_(1)


def _np(t):
    return t.detach().numpy()


def _averaging_run(m, dtype, make_kwargs, updates=4):
    net = _net(m).to(getattr(m, dtype))
    rng = np.random.default_rng(0)
    _set_weights(m, net, rng, dtype)
    averaged = m.optim.swa_utils.AveragedModel(net, **make_kwargs(m))
    for _ in range(updates):
        _set_weights(m, net, rng, dtype)
        averaged.update_parameters(net)
    return averaged


AVERAGING = {
    "swa": lambda m: {},
    "swa-buffers": lambda m: {"use_buffers": True},
    "ema-multi": lambda m: {"multi_avg_fn": m.optim.swa_utils.get_ema_multi_avg_fn(0.9)},
    "ema-multi-buffers": lambda m: {"multi_avg_fn": m.optim.swa_utils.get_ema_multi_avg_fn(0.7),
                                    "use_buffers": True},
    "ema": lambda m: {"avg_fn": m.optim.swa_utils.get_ema_avg_fn(0.8)},
    "swa-fn": lambda m: {"avg_fn": m.optim.swa_utils.get_swa_avg_fn()},
    "swa-multi": lambda m: {"multi_avg_fn": m.optim.swa_utils.get_swa_multi_avg_fn()},
}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("kind", list(AVERAGING))
def test_averaged_model_matches_torch(kind, dtype):
    s = _averaging_run(strata, dtype, AVERAGING[kind])
    t = _averaging_run(torch, dtype, AVERAGING[kind])
    tol = 1e-6 if dtype == "float32" else 1e-12
    s_state, t_state = s.state_dict(), t.state_dict()
    assert list(s_state) == list(t_state)
    for key, t_val in t_state.items():
        assert str(s_state[key].dtype).split(".")[1] == str(t_val.dtype).split(".")[1], key
        np.testing.assert_allclose(_np(s_state[key]), _np(t_val), rtol=tol, atol=tol,
                                   err_msg=key)
    assert s.n_averaged.item() == t.n_averaged.item() == 4 and s.n_averaged.dtype is strata.int64


def test_averaged_model_copies_and_forwards():
    net = _net(strata)
    averaged = strata.optim.swa_utils.AveragedModel(net)
    assert averaged.module is not net
    assert all(a is not b for a, b in zip(averaged.module.parameters(), net.parameters()))
    net.eval()
    averaged.eval()
    x = strata.tensor(np.random.default_rng(1).standard_normal((4, 3)).astype(np.float32))
    np.testing.assert_array_equal(_np(averaged(x)), _np(net(x)))
    averaged.update_parameters(net)        # the first update copies: still the same function
    np.testing.assert_array_equal(_np(averaged(x)), _np(net(x)))


def test_averaged_model_argument_errors():
    for m in (strata, torch):
        su = m.optim.swa_utils
        with pytest.raises(AssertionError, match="Only one of avg_fn and multi_avg_fn"):
            su.AveragedModel(_net(m), avg_fn=su.get_swa_avg_fn(),
                             multi_avg_fn=su.get_swa_multi_avg_fn())
        for make in (su.get_ema_multi_avg_fn, su.get_ema_avg_fn):
            with pytest.raises(ValueError, match=r"Invalid decay value 1.5 provided. Please "
                                                 r"provide a value in \[0,1\] range."):
                make(1.5)


def _lrs(m, kwargs, steps=8, groups=2):
    params = [m.nn.Parameter(m.zeros(2)) for _ in range(groups)]
    opt = m.optim.SGD([{"params": [p], "lr": 0.1 * (i + 1)} for i, p in enumerate(params)])
    sched = m.optim.swa_utils.SWALR(opt, **kwargs)
    lrs = [sched.get_last_lr()]
    for _ in range(steps):
        opt.step()
        sched.step()
        lrs.append(sched.get_last_lr())
    return lrs, sched, opt


@pytest.mark.parametrize("kwargs", [
    dict(swa_lr=0.05),
    dict(swa_lr=0.05, anneal_epochs=3, anneal_strategy="linear"),
    dict(swa_lr=[0.01, 0.5], anneal_epochs=4),
    dict(swa_lr=0.02, anneal_epochs=0),
    dict(swa_lr=0.3, anneal_epochs=1, anneal_strategy="linear"),
])
def test_swalr_matches_torch(kwargs):
    s_lrs, s_sched, s_opt = _lrs(strata, kwargs)
    t_lrs, t_sched, t_opt = _lrs(torch, kwargs)
    for s, t in zip(s_lrs, t_lrs):
        assert all(math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-15) for a, b in zip(s, t))
    assert [g["swa_lr"] for g in s_opt.param_groups] == [g["swa_lr"] for g in t_opt.param_groups]
    assert sorted(s_sched.state_dict()) == sorted(t_sched.state_dict())


def test_swalr_state_dict_round_trip():
    lrs, sched, opt = _lrs(strata, dict(swa_lr=0.05, anneal_epochs=6, anneal_strategy="linear"),
                           steps=3)
    saved = sched.state_dict()
    assert "anneal_func" not in saved and "optimizer" not in saved
    params = [p for g in opt.param_groups for p in g["params"]]
    fresh_opt = strata.optim.SGD([{"params": [p], "lr": g["lr"]}
                                  for p, g in zip(params, opt.param_groups)])
    fresh = strata.optim.swa_utils.SWALR(fresh_opt, swa_lr=0.5, anneal_strategy="cos")
    fresh.load_state_dict(saved)
    for g, ref in zip(fresh_opt.param_groups, opt.param_groups):
        g["swa_lr"] = ref["swa_lr"]
    for _ in range(3):
        opt.step()
        fresh_opt.step()
        sched.step()
        fresh.step()
        assert fresh.get_last_lr() == sched.get_last_lr()
    assert fresh.anneal_func(0.25) == 0.25           # linear again after loading


@pytest.mark.parametrize("make,exc,match", [
    (lambda m, o: m.optim.swa_utils.SWALR(o, swa_lr=0.1, anneal_strategy="exp"), ValueError,
     "anneal_strategy must be one of 'cos' or 'linear', instead got exp"),
    (lambda m, o: m.optim.swa_utils.SWALR(o, swa_lr=0.1, anneal_epochs=-1), ValueError,
     "anneal_epochs must be equal or greater than 0, got -1"),
    (lambda m, o: m.optim.swa_utils.SWALR(o, swa_lr=0.1, anneal_epochs=2.5), ValueError,
     "anneal_epochs must be equal or greater than 0, got 2.5"),
    (lambda m, o: m.optim.swa_utils.SWALR(o, swa_lr=[0.1, 0.2, 0.3]), ValueError,
     "swa_lr must have the same length as optimizer.param_groups"),
])
def test_swalr_errors_match_torch(make, exc, match):
    for m in (strata, torch):
        opt = m.optim.SGD([{"params": [m.nn.Parameter(m.zeros(2))]},
                           {"params": [m.nn.Parameter(m.zeros(2))]}], lr=0.1)
        with pytest.raises(exc, match=match):
            make(m, opt)
        assert [g["lr"] for g in opt.param_groups] == [0.1, 0.1]


def test_swalr_get_lr_outside_step_warns():
    _, sched, _ = _lrs(strata, dict(swa_lr=0.05), steps=1)
    with pytest.warns(UserWarning, match="please use `get_last_lr\\(\\)`"):
        sched.get_lr()


def _bn_run(m, batches, as_tuples):
    net = _net(m)
    rng = np.random.default_rng(3)
    _set_weights(m, net, rng, "float32")
    net[1].momentum = 0.3
    net.eval()
    loader = [(m.tensor(b), m.tensor(b[:, :1])) if as_tuples else m.tensor(b) for b in batches]
    m.optim.swa_utils.update_bn(loader, net)
    return net


@pytest.mark.parametrize("as_tuples", [False, True])
def test_update_bn_matches_torch(as_tuples):
    rng = np.random.default_rng(4)
    batches = [rng.standard_normal((n, 3)).astype(np.float32) * 2 + 1 for n in (6, 4, 8)]
    s, t = _bn_run(strata, batches, as_tuples), _bn_run(torch, batches, as_tuples)
    for name in ("running_mean", "running_var"):
        np.testing.assert_allclose(_np(getattr(s[1], name)), _np(getattr(t[1], name)),
                                   rtol=1e-5, atol=1e-6, err_msg=name)
    assert s[1].num_batches_tracked.item() == t[1].num_batches_tracked.item() == 3
    assert s[1].momentum == 0.3 and not s.training       # both restored


def test_update_bn_without_batchnorm_does_nothing():
    net = strata.nn.Sequential(strata.nn.Linear(3, 2))
    calls = []
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        strata.optim.swa_utils.update_bn(iter(calls), net)
    assert net.training
