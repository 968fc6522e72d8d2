"""NAdam, RAdam, Adamax, Adadelta, Rprop and ASGD against PyTorch.

The same parameters and gradients go to a strata and a torch optimizer, and parameters and state
are compared after every step (float32 within 1e-6, float64 within 1e-12). The flat multi-tensor
path must give exactly the for-loop's numbers, a state dict saved mid-run must resume exactly,
and bad hyperparameters raise PyTorch's exception with PyTorch's message.
"""

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from test_optim import _assert_close, _assert_state_matches, _grads, _init, _np, _params

import strata

CONFIGS = [
    ("NAdam", dict()),
    ("NAdam", dict(lr=0.01, betas=(0.8, 0.99), weight_decay=0.1, momentum_decay=0.01)),
    ("NAdam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True, maximize=True)),
    ("RAdam", dict()),
    ("RAdam", dict(lr=0.01, weight_decay=0.1, maximize=True)),
    ("RAdam", dict(lr=0.01, betas=(0.7, 0.9), weight_decay=0.1, decoupled_weight_decay=True)),
    ("Adamax", dict()),
    ("Adamax", dict(lr=0.01, betas=(0.3, 0.9), eps=1e-3, weight_decay=0.1, maximize=True)),
    ("Adadelta", dict()),
    ("Adadelta", dict(lr=0.5, rho=0.8, eps=1e-4, weight_decay=0.1, maximize=True)),
    ("Rprop", dict()),
    ("Rprop", dict(lr=0.05, etas=(0.3, 1.5), step_sizes=(1e-3, 0.2), maximize=True)),
    ("ASGD", dict()),
    ("ASGD", dict(lr=0.05, lambd=1e-2, alpha=0.5, t0=3, weight_decay=0.1, maximize=True)),
]
IDS = [f"{name}-{i}" for i, (name, _) in enumerate(CONFIGS)]
NAMES = ["NAdam", "RAdam", "Adamax", "Adadelta", "Rprop", "ASGD"]


def _torch_foreach(name, foreach):
    # PyTorch's foreach ASGD rewrites the update (θ −= η·(g + λθ), float32 tensor math for η),
    # which is not its for-loop's numbers; strata's two paths both give the for-loop's.
    return False if name == "ASGD" else foreach


def _run_pair(name, kwargs, dtype, foreach, steps=12, seed=0, shapes=None):
    shapes = shapes or [(4, 3), (5,), (), (2, 1, 3)]
    init = _init(dtype, seed, shapes)
    sp, tp = _params(strata, init), _params(torch, init)
    so = getattr(strata.optim, name)(sp, **kwargs, foreach=foreach)
    to = getattr(torch.optim, name)(tp, **kwargs, foreach=_torch_foreach(name, foreach))
    rng = np.random.default_rng(seed + 1)
    for step in range(steps):
        for s, t, g in zip(sp, tp, _grads(rng, dtype, shapes)):
            s.grad, t.grad = strata.tensor(g), torch.tensor(g)
        so.step()
        to.step()
        for i, (s, t) in enumerate(zip(sp, tp)):
            _assert_close(s, t, dtype, f"{name} step {step} param {i}")
    return so, to


@pytest.mark.parametrize("foreach", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name,kwargs", CONFIGS, ids=IDS)
def test_matches_torch(name, kwargs, dtype, foreach):
    so, to = _run_pair(name, kwargs, dtype, foreach)
    t_sd = to.state_dict()
    for group in t_sd["param_groups"]:
        group["foreach"] = foreach      # torch ran its for-loop for ASGD (see _torch_foreach)
    _assert_state_matches(so.state_dict(), t_sd, dtype)


@given(name=st.sampled_from(NAMES), foreach=st.booleans(),
       dtype=st.sampled_from([np.float32, np.float64]),
       shapes=st.lists(st.lists(st.integers(1, 4), max_size=3).map(tuple), min_size=1,
                       max_size=4),
       seed=st.integers(0, 1000))
def test_matches_torch_any_shapes(name, foreach, dtype, shapes, seed):
    _run_pair(name, dict(weight_decay=0.05) if name != "Rprop" else dict(), dtype, foreach,
              steps=4, seed=seed, shapes=shapes)


def _train(m, params, opt, grads):
    for gs in grads:
        for p, g in zip(params, gs):
            p.grad = m.tensor(g)
        opt.step()


@pytest.mark.parametrize("name,kwargs", CONFIGS, ids=IDS)
def test_foreach_equals_for_loop_exactly(name, kwargs):
    rng = np.random.default_rng(7)
    grads = [_grads(rng, np.float32) for _ in range(8)]
    runs = []
    for foreach in (False, True):
        params = _params(strata, _init(np.float32))
        opt = getattr(strata.optim, name)(params, **kwargs, foreach=foreach)
        _train(strata, params, opt, grads)
        runs.append((params, opt.state_dict()))
    (p_loop, sd_loop), (p_flat, sd_flat) = runs
    for a, b in zip(p_loop, p_flat):
        assert np.array_equal(_np(a), _np(b))
    for pid, state in sd_loop["state"].items():
        for key, value in state.items():
            assert np.array_equal(_np(value), _np(sd_flat["state"][pid][key])), key


def _save_load_run(m, name, kwargs, init, grads, foreach=None, split=5):
    """Train ``split`` steps, save, load into a fresh optimizer over copies of the parameters,
    and train the rest; returns the parameters and the resumed optimizer."""
    first = _params(m, init)
    opt = getattr(m.optim, name)(first, **kwargs, foreach=foreach)
    _train(m, first, opt, grads[:split])
    saved = opt.state_dict()
    second = [m.nn.Parameter(p.detach().clone()) for p in first]
    resumed = getattr(m.optim, name)(second, **kwargs, foreach=foreach)
    resumed.load_state_dict(saved)
    assert resumed.state_dict()["param_groups"] == saved["param_groups"]
    _train(m, second, resumed, grads[split:])
    return second, resumed


@pytest.mark.parametrize("foreach", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name,kwargs", CONFIGS, ids=IDS)
def test_state_dict_round_trip(name, kwargs, dtype, foreach):
    """A state dict saved mid-run and loaded into a fresh strata optimizer continues as torch's
    does. Loading casts floating state to the parameter's dtype (all but ``step``, as PyTorch),
    so for float32 parameters the resumed run is the uninterrupted one exactly."""
    init = _init(dtype)
    rng = np.random.default_rng(2)
    grads = [_grads(rng, dtype) for _ in range(9)]
    sp, so = _save_load_run(strata, name, kwargs, init, grads, foreach)
    tp, to = _save_load_run(torch, name, kwargs, init, grads, _torch_foreach(name, foreach))
    for s, t in zip(sp, tp):
        _assert_close(s, t, dtype, name)
    t_sd = to.state_dict()
    for group in t_sd["param_groups"]:
        group["foreach"] = foreach
    _assert_state_matches(so.state_dict(), t_sd, dtype)
    if dtype == np.float32:
        ref = _params(strata, init)
        _train(strata, ref, getattr(strata.optim, name)(ref, **kwargs, foreach=foreach), grads)
        for a, b in zip(ref, sp):
            assert np.array_equal(_np(a), _np(b))


@pytest.mark.parametrize("name", NAMES)
def test_param_groups_and_skipped_params(name):
    """Two groups with their own lr, and a parameter without a grad on some steps: it gets no
    update and no state, and later its own step count (the flat path must stay exact)."""
    init = _init(np.float64, shapes=[(3,), (2, 2), (4,)])
    results = []
    for m in (strata, torch):
        ps = _params(m, init)
        opt = getattr(m.optim, name)([{"params": ps[:2]}, {"params": ps[2:], "lr": 0.003}])
        rng = np.random.default_rng(5)
        for step in range(6):
            for i, (p, g) in enumerate(zip(ps, _grads(rng, np.float64, [(3,), (2, 2), (4,)]))):
                p.grad = None if i == 1 and step in (0, 2, 3) else m.tensor(g)
            opt.step()
        results.append((ps, opt))
    (sp, so), (tp, to) = results
    for s, t in zip(sp, tp):
        _assert_close(s, t, np.float64, name)
    _assert_state_matches(so.state_dict(), to.state_dict(), np.float64)


@pytest.mark.parametrize("name", NAMES)
def test_defaults_and_repr_match_torch(name):
    s = getattr(strata.optim, name)(_params(strata, [np.ones(2, np.float32)]))
    t = getattr(torch.optim, name)(_params(torch, [np.ones(2, np.float32)]))
    assert s.defaults == t.defaults
    assert repr(s) == repr(t)


@pytest.mark.parametrize("make,match", [
    (lambda m, ps: m.optim.NAdam(ps, lr=-1), "Invalid learning rate: -1"),
    (lambda m, ps: m.optim.NAdam(ps, eps=-1e-8), "Invalid epsilon value: -1e-08"),
    (lambda m, ps: m.optim.NAdam(ps, betas=(0.9, 1.0)), "Invalid beta parameter at index 1: 1.0"),
    (lambda m, ps: m.optim.NAdam(ps, weight_decay=-0.1), "Invalid weight_decay value: -0.1"),
    (lambda m, ps: m.optim.NAdam(ps, momentum_decay=-1), "Invalid momentum_decay value: -1"),
    (lambda m, ps: m.optim.RAdam(ps, lr=-0.5, eps=-1), "Invalid learning rate: -0.5"),
    (lambda m, ps: m.optim.RAdam(ps, betas=(-0.1, 0.9)), "Invalid beta parameter at index 0"),
    (lambda m, ps: m.optim.Adamax(ps, eps=-1, betas=(2, 2)), "Invalid epsilon value: -1"),
    (lambda m, ps: m.optim.Adamax(ps, weight_decay=-1), "Invalid weight_decay value: -1"),
    (lambda m, ps: m.optim.Adadelta(ps, rho=1.5, eps=-1), "Invalid rho value: 1.5"),
    (lambda m, ps: m.optim.Adadelta(ps, eps=-1), "Invalid epsilon value: -1"),
    (lambda m, ps: m.optim.Adadelta(ps, lr=-1), "Invalid learning rate: -1"),
    (lambda m, ps: m.optim.Rprop(ps, etas=(1.5, 1.2)), "Invalid eta values: 1.5, 1.2"),
    (lambda m, ps: m.optim.Rprop(ps, etas=(0.5, 0.9)), "Invalid eta values: 0.5, 0.9"),
    (lambda m, ps: m.optim.Rprop(ps, lr=-2), "Invalid learning rate: -2"),
    (lambda m, ps: m.optim.ASGD(ps, weight_decay=-1), "Invalid weight_decay value: -1"),
    (lambda m, ps: m.optim.ASGD(ps, lr=m.tensor([0.1, 0.2])), "Tensor lr must be 1-element"),
    (lambda m, ps: m.optim.RAdam([]), "optimizer got an empty parameter list"),
])
def test_bad_hyperparameters_raise_like_torch(make, match):
    for m in (strata, torch):
        params = _params(m, _init(np.float32, shapes=[(2,), (3,)]))
        for p in params:
            p.grad = m.ones_like(p)
        before = [_np(p).copy() for p in params]
        with pytest.raises(ValueError, match=match):
            make(m, params)
        for p, b in zip(params, before):     # nothing was touched
            assert np.array_equal(_np(p), b) and np.array_equal(_np(p.grad), np.ones_like(b))


@pytest.mark.parametrize("name", NAMES)
def test_bad_add_param_group_and_load_leave_optimizer_unchanged(name):
    a, b, c = _params(strata, _init(np.float32, shapes=[(2,), (3,), (4,)]))
    opt = getattr(strata.optim, name)([a, b])
    a.grad, b.grad = strata.ones_like(a), strata.ones_like(b)
    opt.step()
    before = opt.state_dict()
    snapshot = {k: {n: _np(v).copy() for n, v in s.items()} for k, s in before["state"].items()}
    groups = [dict(g) for g in before["param_groups"]]
    with pytest.raises(ValueError, match="some parameters appear in more than one"):
        opt.add_param_group({"params": [a]})
    other = getattr(strata.optim, name)([a, b, c]).state_dict()
    with pytest.raises(ValueError, match="doesn't match the size of optimizer's group"):
        opt.load_state_dict(other)
    after = opt.state_dict()
    assert after["param_groups"] == groups and len(opt.param_groups) == 1
    for k, s in after["state"].items():
        for n, v in s.items():
            assert np.array_equal(_np(v), snapshot[k][n]), n


@pytest.mark.parametrize("name", NAMES)
def test_capturable_is_refused_clearly(name):
    params = _params(strata, _init(np.float32, shapes=[(2,)]))
    with pytest.raises(RuntimeError, match=f"{name}: `capturable=True` is not supported"):
        getattr(strata.optim, name)(params, capturable=True)


@pytest.mark.parametrize("name,scalars", [("NAdam", ("step", "mu_product")),
                                          ("ASGD", ("step", "eta", "mu")),
                                          ("RAdam", ("step",))])
def test_old_checkpoint_numbers_become_tensors(name, scalars):
    """Checkpoints from old releases stored scalar state as numbers; loading upgrades them to
    0-dim float32 tensors, as PyTorch's ``__setstate__`` does, and training continues."""
    (p,) = _params(strata, [np.ones(3, np.float32)])
    opt = getattr(strata.optim, name)([p])
    p.grad = strata.ones_like(p)
    opt.step()
    saved = opt.state_dict()
    for key in scalars:
        saved["state"][0][key] = saved["state"][0][key].item()
    opt.load_state_dict(saved)
    for key in scalars:
        value = opt.state[p][key]
        assert isinstance(value, strata.Tensor) and value.ndim == 0
        assert value.dtype is strata.float32
    opt.step()
    assert opt.state[p]["step"].item() == 2.0


@pytest.mark.parametrize("name", NAMES)
def test_tensor_lr_and_closure(name):
    """A 1-element tensor lr. PyTorch keeps it a float32 tensor in the coefficient arithmetic
    (strata takes its value), so float32 parameters agree to float32 precision."""
    results = []
    for m in (strata, torch):
        (p,) = _params(m, [np.linspace(-1, 1, 5, dtype=np.float32)])
        opt = getattr(m.optim, name)([p], lr=m.tensor(0.01))

        def closure():
            p.grad = 2 * p.detach()
            return 1.5

        losses = [opt.step(closure) for _ in range(3)]
        results.append(_np(p))
        assert losses == [1.5] * 3
    np.testing.assert_allclose(*results, rtol=1e-6, atol=1e-7)
