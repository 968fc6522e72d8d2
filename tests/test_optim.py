"""Optimizers against PyTorch: the same parameters and the same gradients, step after step.

Gradients are set by hand (``p.grad = ...``), so these tests need no autograd. Parameters and the
optimizer state are compared after every step (float32 within 1e-6, float64 within 1e-12), the
multi-tensor path must give exactly the for-loop's numbers, and ``state_dict()`` must have
PyTorch's structure.
"""

import math

import numpy as np
import pytest
import torch

import strata

SHAPES = [(4, 3), (5,), (), (2, 1, 3)]


def _params(m, arrays):
    return [m.nn.Parameter(m.tensor(a)) for a in arrays]


def _init(dtype, seed=0, shapes=SHAPES):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s).astype(dtype) for s in shapes]


def _grads(rng, dtype, shapes=SHAPES):
    return [rng.standard_normal(s).astype(dtype) for s in shapes]


def _np(t):
    t = t.detach()
    if str(t.dtype).endswith("bfloat16"):
        t = t.float()
    return t.numpy()


def _assert_close(a, b, dtype, what):
    rtol, atol = (1e-6, 1e-6) if dtype == np.float32 else (1e-12, 1e-12)
    np.testing.assert_allclose(_np(a), _np(b), rtol=rtol, atol=atol, err_msg=what)


def _assert_state_matches(s_sd, t_sd, dtype):
    """Same structure as torch's state_dict, and the same state values."""
    assert s_sd["param_groups"] == t_sd["param_groups"]
    assert sorted(s_sd["state"]) == sorted(t_sd["state"])
    for pid, t_state in t_sd["state"].items():
        s_state = s_sd["state"][pid]
        assert list(s_state) == list(t_state)
        for key, t_val in t_state.items():
            s_val = s_state[key]
            if isinstance(t_val, torch.Tensor):
                assert isinstance(s_val, strata.Tensor), key
                assert str(s_val.dtype) == str(t_val.dtype).replace("torch", "strata"), key
                assert tuple(s_val.shape) == tuple(t_val.shape), key
                _assert_close(s_val, t_val, dtype, f"state[{pid}][{key}]")
            else:
                assert s_val == t_val, key


CONFIGS = [
    ("SGD", dict(lr=0.1)),
    ("SGD", dict(lr=0.1, momentum=0.9)),
    ("SGD", dict(lr=0.05, momentum=0.9, nesterov=True, weight_decay=0.1)),
    ("SGD", dict(lr=0.05, momentum=0.8, dampening=0.3, maximize=True)),
    ("SGD", dict(lr=0.05, weight_decay=0.01)),
    ("Adam", dict()),
    ("Adam", dict(lr=0.01, betas=(0.8, 0.99), eps=1e-6, weight_decay=0.1)),
    ("Adam", dict(lr=0.01, amsgrad=True, maximize=True)),
    ("AdamW", dict(lr=0.01)),
    ("AdamW", dict(lr=0.01, weight_decay=0.1, amsgrad=True)),
    ("RMSprop", dict(lr=0.01)),
    ("RMSprop", dict(lr=0.01, alpha=0.9, momentum=0.5, centered=True, weight_decay=0.1)),
    ("RMSprop", dict(lr=0.01, centered=True, maximize=True)),
    ("Adagrad", dict(lr=0.1)),
    ("Adagrad", dict(lr=0.1, lr_decay=0.01, weight_decay=0.1, initial_accumulator_value=0.1,
                     maximize=True)),
]


def _run_pair(name, kwargs, dtype, steps=25, seed=0):
    init = _init(dtype, seed)
    sp, tp = _params(strata, init), _params(torch, init)
    so = getattr(strata.optim, name)(sp, **kwargs)
    to = getattr(torch.optim, name)(tp, **kwargs)
    rng = np.random.default_rng(seed + 1)
    for step in range(steps):
        grads = _grads(rng, dtype)
        for s, t, g in zip(sp, tp, grads):
            s.grad, t.grad = strata.tensor(g), torch.tensor(g)
        so.step()
        to.step()
        for i, (s, t) in enumerate(zip(sp, tp)):
            _assert_close(s, t, dtype, f"{name} step {step} param {i}")
    return so, to


@pytest.mark.parametrize("foreach", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name,kwargs", CONFIGS, ids=[f"{n}-{i}" for i, (n, _) in
                                                      enumerate(CONFIGS)])
def test_matches_torch(name, kwargs, dtype, foreach):
    so, to = _run_pair(name, dict(kwargs, foreach=foreach), dtype)
    _assert_state_matches(so.state_dict(), to.state_dict(), dtype)


@pytest.mark.parametrize("name,kwargs", CONFIGS, ids=[f"{n}-{i}" for i, (n, _) in
                                                      enumerate(CONFIGS)])
def test_foreach_equals_for_loop_exactly(name, kwargs):
    runs = []
    for foreach in (False, True):
        params = _params(strata, _init(np.float32))
        opt = getattr(strata.optim, name)(params, **kwargs, foreach=foreach)
        rng = np.random.default_rng(7)
        for _ in range(8):
            for p, g in zip(params, _grads(rng, np.float32)):
                p.grad = strata.tensor(g)
            opt.step()
        runs.append((params, opt.state_dict()))
    (p_loop, sd_loop), (p_each, sd_each) = runs
    for a, b in zip(p_loop, p_each):
        assert np.array_equal(_np(a), _np(b))
    for pid, state in sd_loop["state"].items():
        for key, value in state.items():
            assert np.array_equal(_np(value), _np(sd_each["state"][pid][key])), key


@pytest.mark.parametrize("name", ["SGD", "Adam", "RMSprop", "Adagrad"])
def test_foreach_large_tensors_equal_for_loop(name):
    """Tensors above FLATTEN_MAX_NUMEL are updated one by one, small ones flattened."""
    shapes = [(300, 300), (7,), (3, 2)]
    assert 300 * 300 > strata.optim._multi_tensor.FLATTEN_MAX_NUMEL
    kwargs = dict(lr=0.05, weight_decay=0.1) | (dict(momentum=0.9) if name == "SGD" else {})
    results = []
    for foreach in (False, True):
        params = _params(strata, _init(np.float32, shapes=shapes))
        opt = getattr(strata.optim, name)(params, **kwargs, foreach=foreach)
        rng = np.random.default_rng(3)
        for _ in range(3):
            for p, g in zip(params, _grads(rng, np.float32, shapes=shapes)):
                p.grad = strata.tensor(g)
            opt.step()
        results.append([_np(p) for p in params])
    for a, b in zip(*results):
        assert np.array_equal(a, b)


@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad"])
def test_foreach_bfloat16_and_mixed_dtypes_equal_for_loop(name):
    """Buckets per (device, dtype): a bfloat16 and a float32 parameter in one group."""
    kwargs = dict(lr=0.05, weight_decay=0.1) | (dict(momentum=0.9) if name == "SGD" else {})
    results = []
    for foreach in (False, True):
        params = [strata.nn.Parameter(strata.tensor(a).to(dt)) for a, dt in
                  zip(_init(np.float32, shapes=[(3, 2), (4,), (5,)]),
                      (strata.bfloat16, strata.float32, strata.bfloat16))]
        opt = getattr(strata.optim, name)(params, **kwargs, foreach=foreach)
        rng = np.random.default_rng(3)
        for _ in range(5):
            for p, g in zip(params, _grads(rng, np.float32, shapes=[(3, 2), (4,), (5,)])):
                p.grad = strata.tensor(g).to(p.dtype)
            opt.step()
        results.append([_np(p) for p in params])
    for a, b in zip(*results):
        assert np.array_equal(a, b)


def test_bfloat16_adam_close_to_torch():
    arrays = _init(np.float32, shapes=[(8,), (3, 3)])
    sp = [strata.nn.Parameter(strata.tensor(a).bfloat16()) for a in arrays]
    tp = [torch.nn.Parameter(torch.tensor(a).bfloat16()) for a in arrays]
    so, to = strata.optim.Adam(sp, lr=0.01), torch.optim.Adam(tp, lr=0.01)
    rng = np.random.default_rng(1)
    for _ in range(10):
        for s, t, g in zip(sp, tp, _grads(rng, np.float32, shapes=[(8,), (3, 3)])):
            s.grad, t.grad = strata.tensor(g).bfloat16(), torch.tensor(g).bfloat16()
        so.step()
        to.step()
    for s, t in zip(sp, tp):
        assert s.dtype is strata.bfloat16
        np.testing.assert_allclose(_np(s), _np(t), rtol=1e-2, atol=1e-2)


@pytest.mark.parametrize("foreach", [False, True])
@pytest.mark.parametrize("name", ["SGD", "Adam", "Adagrad"])
def test_param_without_grad_is_skipped(name, foreach):
    """A parameter whose grad is None gets no update, no state and no weight decay; when it
    comes back its bias corrections are its own (the multi-tensor path must stay exact)."""
    kwargs = dict(lr=0.1, weight_decay=0.1) | (dict(momentum=0.9) if name == "SGD" else {})
    init = _init(np.float64, shapes=[(3,), (2, 2)])
    sp, tp = _params(strata, init), _params(torch, init)
    so = getattr(strata.optim, name)(sp, **kwargs, foreach=foreach)
    to = getattr(torch.optim, name)(tp, **kwargs, foreach=foreach)
    rng = np.random.default_rng(5)
    for step in range(6):
        grads = _grads(rng, np.float64, shapes=[(3,), (2, 2)])
        for i, (s, t, g) in enumerate(zip(sp, tp, grads)):
            skip = i == 1 and step in (0, 2, 3)
            s.grad = None if skip else strata.tensor(g)
            t.grad = None if skip else torch.tensor(g)
        so.step()
        to.step()
        for s, t in zip(sp, tp):
            _assert_close(s, t, np.float64, f"step {step}")
    _assert_state_matches(so.state_dict(), to.state_dict(), np.float64)


def test_state_dict_format_is_torchs():
    p1, p2, p3 = _params(strata, _init(np.float32, shapes=[(2,), (3,), (1,)]))
    opt = strata.optim.Adam([{"params": [p1, p2]}, {"params": [p3], "lr": 0.5}], lr=0.1)
    for p in (p1, p3):
        p.grad = strata.ones_like(p)
    opt.step()
    sd = opt.state_dict()
    assert [g["params"] for g in sd["param_groups"]] == [[0, 1], [2]]
    assert sd["param_groups"][1]["lr"] == 0.5 and sd["param_groups"][0]["lr"] == 0.1
    assert sorted(sd["state"]) == [0, 2]          # only parameters that have state
    step = sd["state"][0]["step"]
    assert step.dtype is strata.float32 and step.ndim == 0 and step.item() == 1.0
    assert list(sd["state"][0]) == ["step", "exp_avg", "exp_avg_sq"]
    # The state dict holds the live state tensors, as PyTorch's does.
    assert sd["state"][0]["exp_avg"] is opt.state[p1]["exp_avg"]


def test_step_dtype_follows_default_dtype():
    strata.set_default_dtype(strata.float64)
    try:
        (p,) = _params(strata, [np.ones(2)])
        opt = strata.optim.Adam([p])
        p.grad = strata.ones_like(p)
        opt.step()
        assert opt.state[p]["step"].dtype is strata.float64
    finally:
        strata.set_default_dtype(strata.float32)


@pytest.mark.parametrize("name,kwargs", [("SGD", dict(lr=0.1, momentum=0.9)),
                                         ("Adam", dict(lr=0.01, amsgrad=True)),
                                         ("RMSprop", dict(momentum=0.5, centered=True)),
                                         ("Adagrad", dict())])
@pytest.mark.parametrize("foreach", [False, True])
def test_load_state_dict_resumes_exactly(name, kwargs, foreach):
    init = _init(np.float32)
    rng = np.random.default_rng(2)
    grads = [_grads(rng, np.float32) for _ in range(10)]

    def train(params, opt, steps):
        for gs in steps:
            for p, g in zip(params, gs):
                p.grad = strata.tensor(g)
            opt.step()

    ref = _params(strata, init)
    ref_opt = getattr(strata.optim, name)(ref, **kwargs, foreach=foreach)
    train(ref, ref_opt, grads)

    first = _params(strata, init)
    opt = getattr(strata.optim, name)(first, **kwargs, foreach=foreach)
    train(first, opt, grads[:4])
    saved = opt.state_dict()
    second = [strata.nn.Parameter(p.detach().clone()) for p in first]
    opt2 = getattr(strata.optim, name)(second, **kwargs, foreach=foreach)
    opt2.load_state_dict(saved)
    train(second, opt2, grads[4:])
    for a, b in zip(ref, second):
        assert np.array_equal(_np(a), _np(b))


def test_load_state_dict_casts_state_to_param_dtype():
    (p64,) = _params(strata, [np.ones(3)])
    opt64 = strata.optim.Adam([p64])
    p64.grad = strata.ones_like(p64)
    opt64.step()
    (p32,) = _params(strata, [np.ones(3, np.float32)])
    opt32 = strata.optim.Adam([p32])
    opt32.load_state_dict(opt64.state_dict())
    state = opt32.state[p32]
    assert state["exp_avg"].dtype is strata.float32
    assert state["step"].dtype is strata.float32      # step keeps its own dtype
    assert opt32.param_groups[0]["params"][0] is p32


def test_load_state_dict_errors():
    a, b, c = _params(strata, _init(np.float32, shapes=[(2,), (2,), (2,)]))
    opt = strata.optim.SGD([a, b], lr=0.1)
    other_groups = strata.optim.SGD([{"params": [a]}, {"params": [b]}], lr=0.1).state_dict()
    with pytest.raises(ValueError, match="loaded state dict has a different number of "
                                         "parameter groups"):
        opt.load_state_dict(other_groups)
    other_size = strata.optim.SGD([a, b, c], lr=0.1).state_dict()
    with pytest.raises(ValueError, match="loaded state dict contains a parameter group that "
                                         "doesn't match the size of optimizer's group"):
        opt.load_state_dict(other_size)
    # The same errors in torch.
    ta, tb = _params(torch, _init(np.float32, shapes=[(2,), (2,)]))
    with pytest.raises(ValueError, match="doesn't match the size of optimizer's group"):
        torch.optim.SGD([ta, tb], lr=0.1).load_state_dict(
            torch.optim.SGD([ta], lr=0.1).state_dict())


@pytest.mark.parametrize("make,exc,match", [
    (lambda m, ps: m.optim.SGD([], lr=0.1), ValueError, "optimizer got an empty parameter list"),
    (lambda m, ps: m.optim.SGD(ps, lr=-0.1), ValueError, "Invalid learning rate: -0.1"),
    (lambda m, ps: m.optim.SGD(ps, lr=0.1, nesterov=True), ValueError,
     "Nesterov momentum requires a momentum and zero dampening"),
    (lambda m, ps: m.optim.SGD(ps, lr=0.1, momentum=0.9, dampening=0.1, nesterov=True),
     ValueError, "Nesterov momentum requires a momentum and zero dampening"),
    (lambda m, ps: m.optim.SGD(ps, lr=0.1, momentum=-1), ValueError, "Invalid momentum value"),
    (lambda m, ps: m.optim.Adam(ps, betas=(1.0, 0.9)), ValueError,
     "Invalid beta parameter at index 0: 1.0"),
    (lambda m, ps: m.optim.Adam(ps, eps=-1.0), ValueError, "Invalid epsilon value: -1.0"),
    (lambda m, ps: m.optim.AdamW(ps, weight_decay=-1), ValueError,
     "Invalid weight_decay value: -1"),
    (lambda m, ps: m.optim.RMSprop(ps, alpha=-1), ValueError, "Invalid alpha value: -1"),
    (lambda m, ps: m.optim.Adagrad(ps, lr_decay=-1), ValueError, "Invalid lr_decay value: -1"),
    (lambda m, ps: m.optim.SGD(ps[0], lr=0.1), TypeError,
     "params argument given to the optimizer should be an iterable of Tensors or dicts"),
    (lambda m, ps: m.optim.SGD([{"params": ps}, {"params": ps[:1]}], lr=0.1), ValueError,
     "some parameters appear in more than one parameter group"),
    (lambda m, ps: m.optim.SGD([ps[0] * 2], lr=0.1), ValueError,
     "can't optimize a non-leaf Tensor"),
    (lambda m, ps: m.optim.SGD([1.0], lr=0.1), TypeError,
     "optimizer can only optimize Tensors"),
    (lambda m, ps: m.optim.SGD([{"params": {ps[0]}}], lr=0.1), TypeError,
     "ordered collections"),
    (lambda m, ps: m.optim.LBFGS([{"params": ps[:1]}, {"params": ps[1:]}]), ValueError,
     "LBFGS doesn't support per-parameter options"),
])
def test_construction_errors_match_torch(make, exc, match):
    for m in (strata, torch):
        params = _params(m, _init(np.float32, shapes=[(2,), (3,)]))
        with pytest.raises(exc, match=match):
            make(m, params)


def test_capturable_refused_clearly():
    params = _params(strata, _init(np.float32, shapes=[(2,)]))
    with pytest.raises(RuntimeError, match="RMSprop: `capturable=True` is not supported"):
        strata.optim.RMSprop(params, capturable=True)


FUSED = [
    lambda m, p: m.optim.Adam(p, lr=0.01, fused=True),
    lambda m, p: m.optim.AdamW(p, lr=0.01, weight_decay=0.1, fused=True),
    lambda m, p: m.optim.Adam(p, lr=0.01, amsgrad=True, maximize=True, fused=True),
    lambda m, p: m.optim.SGD(p, lr=0.1, momentum=0.9, nesterov=True, fused=True),
    lambda m, p: m.optim.Adagrad(p, lr=0.1, fused=True),
]


@pytest.mark.parametrize("make", FUSED)
def test_fused_steps_match_torch(make):
    """Note [Fused optimizers]: ``fused=True`` runs strata's one-kernel update, with torch's
    numbers (torch's fused CPU kernels)."""
    init = _init(np.float32, shapes=[(4, 3), (3,)])
    results = []
    for m in (strata, torch):
        params = _params(m, init)
        opt = make(m, params)
        for step in range(3):
            for i, p in enumerate(params):
                p.grad = m.tensor(np.sin(np.arange(p.numel(), dtype=np.float32) + step + i)
                                  .reshape(tuple(p.shape)))
            opt.step()
        results.append([p.detach().numpy().copy() for p in params])
    for s, t in zip(*results):
        np.testing.assert_allclose(s, t, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("kwargs, match", [
    ({"foreach": True}, "`fused` and `foreach` cannot be `True` together."),
    ({"differentiable": True}, "`fused` does not support `differentiable`"),
])
@pytest.mark.parametrize("cls", ["Adam", "AdamW", "SGD", "Adagrad"])
def test_fused_construction_errors_match_torch(cls, kwargs, match):
    for m in (strata, torch):
        params = _params(m, _init(np.float32, shapes=[(2,)]))
        with pytest.raises(RuntimeError, match=match):
            getattr(m.optim, cls)(params, lr=0.1, fused=True, **kwargs)


def test_fused_refuses_non_float_params_at_the_step_and_changes_nothing():
    for m in (strata, torch):
        p = m.nn.Parameter(m.zeros(2, dtype=m.complex64))
        opt = m.optim.Adam([p], fused=True)
        p.grad = m.ones(2, dtype=m.complex64)
        with pytest.raises(RuntimeError, match="`fused=True` requires all the params to be "
                                               "floating point Tensors of supported devices"):
            opt.step()
        assert np.array_equal(p.detach().numpy(), np.zeros(2, np.complex64))
        assert len(opt.state[p]) == 0


def test_add_param_group_fills_defaults():
    a, b = _params(strata, _init(np.float32, shapes=[(2,), (2,)]))
    opt = strata.optim.SGD([a], lr=0.1, momentum=0.9)
    opt.add_param_group({"params": b, "lr": 0.01})
    group = opt.param_groups[1]
    assert group["params"] == [b] and group["lr"] == 0.01 and group["momentum"] == 0.9
    t = torch.optim.SGD([torch.nn.Parameter(torch.ones(2))], lr=0.1, momentum=0.9)
    t.add_param_group({"params": torch.nn.Parameter(torch.ones(2)), "lr": 0.01})
    assert list(group) == list(t.param_groups[1])


def test_named_parameters():
    a, b = _params(strata, _init(np.float32, shapes=[(2,), (2,)]))
    opt = strata.optim.SGD([("w", a), ("b", b)], lr=0.1)
    assert opt.param_groups[0]["param_names"] == ["w", "b"]
    assert opt.param_groups[0]["params"] == [a, b]
    assert opt.state_dict()["param_groups"][0]["param_names"] == ["w", "b"]


@pytest.mark.parametrize("set_to_none", [True, False])
def test_zero_grad(set_to_none):
    (p,) = _params(strata, [np.ones(3, np.float32)])
    opt = strata.optim.SGD([p], lr=0.1)
    grad = strata.ones_like(p)
    p.grad = grad
    opt.zero_grad(set_to_none=set_to_none)
    if set_to_none:
        assert p.grad is None
    else:
        assert p.grad is grad and grad.tolist() == [0.0, 0.0, 0.0]


def test_step_updates_in_place_and_bumps_version():
    (p,) = _params(strata, [np.ones(3, np.float32)])
    ptr, version = p.data_ptr(), p._version
    opt = strata.optim.SGD([p], lr=0.1)
    p.grad = strata.ones_like(p)
    opt.step()
    assert p.data_ptr() == ptr and p._version > version
    assert np.allclose(_np(p), 0.9)
    assert not p.grad.requires_grad


def test_step_runs_without_grad_and_closure_with_grad():
    (p,) = _params(strata, [np.ones(2, np.float32)])
    opt = strata.optim.SGD([p], lr=0.1)
    seen = []

    def closure():
        seen.append(strata.autograd.grad_mode.is_grad_enabled())
        p.grad = strata.ones_like(p)
        return 3.5

    assert opt.step(closure) == 3.5
    assert seen == [True]
    assert strata.autograd.grad_mode.is_grad_enabled()


def test_step_hooks():
    (p,) = _params(strata, [np.ones(2, np.float32)])
    opt = strata.optim.SGD([p], lr=0.1)
    calls = []
    h1 = opt.register_step_pre_hook(lambda o, args, kwargs: calls.append(("pre", o is opt)))
    h2 = opt.register_step_post_hook(lambda o, args, kwargs: calls.append(("post", o is opt)))
    opt.step()
    assert calls == [("pre", True), ("post", True)]
    h1.remove()
    h2.remove()
    opt.step()
    assert len(calls) == 2


def test_state_dict_hooks():
    (p,) = _params(strata, [np.ones(2, np.float32)])
    opt = strata.optim.SGD([p], lr=0.1)
    opt.register_state_dict_post_hook(lambda o, sd: {**sd, "extra": 1})
    sd = opt.state_dict()
    assert sd["extra"] == 1
    loaded = []
    opt.register_load_state_dict_post_hook(lambda o: loaded.append(True))
    opt.load_state_dict(sd)
    assert loaded == [True]


def test_repr_matches_torch():
    s = strata.optim.Adam(_params(strata, [np.ones(2, np.float32)]), lr=0.1)
    t = torch.optim.Adam(_params(torch, [np.ones(2, np.float32)]), lr=0.1)
    assert repr(s) == repr(t)


def test_tensor_lr():
    (p,) = _params(strata, [np.ones(2, np.float32)])
    opt = strata.optim.SGD([p], lr=strata.tensor(0.5))
    p.grad = strata.ones_like(p)
    opt.step()
    assert np.allclose(_np(p), 0.5)


# --- LBFGS ---------------------------------------------------------------------------------------

def _quartic_problem(m, x0, A, b):
    """f(x) = ½xᵀAx − bᵀx + 0.1·Σx⁴ with a hand-written gradient (no autograd needed)."""
    x = m.nn.Parameter(m.tensor(x0))
    At, bt = m.tensor(A), m.tensor(b)

    def closure():
        xv = x.detach()
        ax = (At * xv).sum(1)
        x.grad = ax - bt + 0.4 * xv ** 3
        return 0.5 * (xv * ax).sum() - (bt * xv).sum() + 0.1 * (xv ** 4).sum()
    return x, closure


@pytest.mark.parametrize("line_search_fn", [None, "strong_wolfe"])
@pytest.mark.parametrize("history_size", [100, 3])
def test_lbfgs_matches_torch(line_search_fn, history_size):
    rng = np.random.default_rng(0)
    q = rng.standard_normal((6, 6))
    A, b, x0 = q @ q.T + np.eye(6), rng.standard_normal(6), rng.standard_normal(6)
    sx, sclosure = _quartic_problem(strata, x0, A, b)
    tx, tclosure = _quartic_problem(torch, x0, A, b)
    kwargs = dict(lr=0.5, max_iter=7, history_size=history_size, line_search_fn=line_search_fn)
    so, to = strata.optim.LBFGS([sx], **kwargs), torch.optim.LBFGS([tx], **kwargs)
    for _ in range(4):
        s_loss, t_loss = so.step(sclosure), to.step(tclosure)
        assert math.isclose(float(s_loss), float(t_loss), rel_tol=1e-10, abs_tol=1e-12)
        np.testing.assert_allclose(_np(sx), _np(tx), rtol=1e-9, atol=1e-11)
    s_state, t_state = so.state[sx], to.state[tx]
    assert s_state["func_evals"] == t_state["func_evals"]
    assert s_state["n_iter"] == t_state["n_iter"]
    assert len(s_state["old_dirs"]) == len(t_state["old_dirs"])
    assert sorted(so.state_dict()["state"][0]) == sorted(to.state_dict()["state"][0])


def test_lbfgs_stops_at_optimum():
    x, closure = _quartic_problem(strata, np.zeros(3), np.eye(3), np.zeros(3))
    opt = strata.optim.LBFGS([x])
    opt.step(closure)
    assert opt.state[x]["func_evals"] == 1 and opt.state[x]["n_iter"] == 0


def test_lbfgs_rejects_unknown_line_search():
    x, closure = _quartic_problem(strata, np.ones(3), np.eye(3), np.zeros(3))
    with pytest.raises(RuntimeError, match="only 'strong_wolfe' is supported"):
        strata.optim.LBFGS([x], line_search_fn="armijo").step(closure)


# --- end to end: autograd fills the gradients --------------------------------------------------

def _mlp(m, seed_weights):
    net = m.nn.Sequential(m.nn.Linear(6, 16), m.nn.Tanh(), m.nn.Linear(16, 3))
    with m.autograd.grad_mode.no_grad():
        for p, w in zip(net.parameters(), seed_weights):
            p.copy_(m.tensor(w))
    return net


@pytest.mark.parametrize("name,kwargs", [("SGD", dict(lr=0.1, momentum=0.9, nesterov=True)),
                                         ("Adam", dict(lr=0.01)),
                                         ("AdamW", dict(lr=0.01, foreach=True)),
                                         ("RMSprop", dict(lr=0.01, centered=True))])
def test_training_loop_matches_torch(name, kwargs):
    """20 steps of zero_grad / forward / backward / step on the same batches: the losses and the
    weights follow PyTorch's (float32, within 1e-5)."""
    rng = np.random.default_rng(0)
    weights = [rng.standard_normal(s).astype(np.float32) * 0.3
               for s in [(16, 6), (16,), (3, 16), (3,)]]
    snet, tnet = _mlp(strata, weights), _mlp(torch, weights)
    sopt = getattr(strata.optim, name)(snet.parameters(), **kwargs)
    topt = getattr(torch.optim, name)(tnet.parameters(), **kwargs)
    for step in range(20):
        x = rng.standard_normal((8, 6)).astype(np.float32)
        y = rng.standard_normal((8, 3)).astype(np.float32)
        losses = []
        for m, net, opt in ((strata, snet, sopt), (torch, tnet, topt)):
            opt.zero_grad()
            loss = ((net(m.tensor(x)) - m.tensor(y)) ** 2).mean()
            loss.backward()
            opt.step()
            losses.append(loss.item())
        assert math.isclose(losses[0], losses[1], rel_tol=1e-5, abs_tol=1e-6), step
    for s, t in zip(snet.parameters(), tnet.parameters()):
        np.testing.assert_allclose(_np(s), _np(t), rtol=1e-5, atol=1e-5)


def test_lbfgs_with_autograd_closure():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((20, 4))
    y = x @ rng.standard_normal(4) + 0.5
    results = []
    for m in (strata, torch):
        w = m.nn.Parameter(m.zeros(4, dtype=m.float64))
        b = m.nn.Parameter(m.zeros(1, dtype=m.float64))
        opt = m.optim.LBFGS([w, b], lr=1, line_search_fn="strong_wolfe")
        xt, yt = m.tensor(x), m.tensor(y)

        def closure():
            opt.zero_grad()
            loss = ((xt @ w + b - yt) ** 2).mean()
            loss.backward()
            return loss

        for _ in range(3):
            opt.step(closure)
        results.append((_np(w), _np(b)))
    np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-8, atol=1e-10)
