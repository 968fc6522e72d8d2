"""Note [Cached update plan] (optim/_group_update.py): Adam's one-kernel plan is reused between
steps, and planned again whenever what it holds changes. Each case changes something between
two steps, in strata and in PyTorch alike, and the parameters, states and version counters
must stay PyTorch's; the plan is counted to show it was reused or remade."""

import copy

import numpy as np
import pytest
import torch

import strata
from strata.backends.cpu import native
from strata.optim import _group_update

STEPS, AT = 4, 2     # the change comes before step AT


def _array(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32) * 0.1


def _model(m):
    model = m.nn.Sequential(m.nn.Linear(20, 30), m.nn.Tanh(), m.nn.Linear(30, 4))
    with m.no_grad():
        for seed, p in enumerate(model.parameters()):
            p.copy_(m.tensor(_array(*p.shape, seed=seed)))
    return model


def _replace_first_weight(m, model, opt):
    new = m.nn.Parameter(m.tensor(_array(30, 20, seed=9)))
    model[0].weight = new
    opt.param_groups[0]["params"][0] = new


def _set_data(m, model, opt):
    model[2].weight.data = m.tensor(_array(4, 30, seed=7))


def _drop_one_grad(m, model, opt):
    model[2].bias.grad = None


def _transposed_grad(m, model, opt):
    grad = model[0].weight.grad
    model[0].weight.grad = grad.t().contiguous().t()      # same values, column-major


def _state_by_hand(m, model, opt):
    opt.state[model[0].bias]["exp_avg"] = m.zeros_like(model[0].bias)


def _state_in_place(m, model, opt):
    opt.state[model[0].weight]["exp_avg_sq"].mul_(0.5)


def _set_group(**values):
    def change(m, model, opt):
        opt.param_groups[0].update(values)
    return change


# (name, change, where: before the forward or between backward and step, the plans made: P a
# plan, N a refusal; one P: the first step's plan served every step)
CASES = [
    ("lr", _set_group(lr=0.05), "step", "P"),
    ("betas and eps", _set_group(betas=(0.8, 0.99), eps=1e-6), "step", "P"),
    ("decoupled weight decay", _set_group(weight_decay=0.3), "step", "P"),
    ("state changed in place", _state_in_place, "step", "P"),
    ("parameter's .data set", _set_data, "step", "PP"),
    ("state tensor replaced", _state_by_hand, "step", "PP"),
    # five parameters, then six whose step counts differ: the loop from then on
    ("a gradient missing", _drop_one_grad, "step", "PPN"),
    ("a column-major gradient", _transposed_grad, "step", "PNP"),
    # the new parameter starts at step 0, the others are at 2: each step is the loop's
    ("parameter replaced", _replace_first_weight, "forward", "PNN"),
]


def _train(m, opt_name, change, where, loaded=None, dtype="float32"):
    m.manual_seed(0)
    model = _model(m).to(getattr(m, dtype))
    decay = 0.1 if opt_name == "AdamW" else 0.0    # (Adam's coupled decay: not this kernel)
    opt = getattr(m.optim, opt_name)(model.parameters(), lr=1e-2, weight_decay=decay,
                                     foreach=False)   # where the kernel refuses: the loop
    x = m.tensor(_array(8, 20, seed=5)).to(getattr(m, dtype))
    saved, earlier_grads = None, []   # kept: each step's gradients live at new addresses
    for i in range(STEPS):
        opt.zero_grad()
        if i == AT and where == "forward":
            change(m, model, opt)
        model(x).square().sum().backward()
        if i == 1:
            saved = copy.deepcopy(opt.state_dict())
        if i == AT and where == "step":
            change(m, model, opt)
        if i == AT and loaded:
            opt.load_state_dict(saved)
        opt.step()
        earlier_grads.append([p.grad for p in model.parameters()])
    return model, opt


def _observed(model, opt):
    values = [p.detach().numpy().copy() for p in model.parameters()]
    states = [(p._version, float(s["step"]), s["exp_avg"].numpy().copy(),
               s["exp_avg_sq"].numpy().copy(), s["exp_avg"]._version, s["exp_avg_sq"]._version)
              for p, s in opt.state.items()]
    return values, states


def _assert_same(got, want, state_versions=True):
    (values, states), (want_values, want_states) = got, want
    for a, b in zip(values, want_values, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    for s, t in zip(states, want_states, strict=True):
        assert s[:2] == t[:2]
        assert not state_versions or s[4:] == t[4:]
        for a, b in zip(s[2:4], t[2:4]):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-7)


@pytest.fixture
def plans(monkeypatch):
    """Every plan ``AdamUpdate.plan`` or ``SGDUpdate.plan`` makes (None where it refuses)."""
    if native.function("eager_optim", "adam_multi_step_float32") is None:
        pytest.skip("no C compiler")
    made, real = [], _group_update.GroupUpdate.plan.__func__
    monkeypatch.setattr(_group_update.GroupUpdate, "plan", classmethod(
        lambda cls, *a: made.append(real(cls, *a)) or made[-1]))
    return made


@pytest.mark.parametrize("opt_name", ["Adam", "AdamW"])
@pytest.mark.parametrize("name,change,where,made", CASES, ids=[c[0] for c in CASES])
def test_a_change_between_steps_gives_pytorchs_update(plans, opt_name, name, change, where,
                                                     made):
    if opt_name == "Adam" and name == "decoupled weight decay":
        pytest.skip("Adam's weight decay is coupled: its step is not this kernel's")
    got = _train(strata, opt_name, change, where)
    want = _train(torch, opt_name, change, where)
    _assert_same(_observed(*got), _observed(*want))
    assert "".join("N" if plan is None else "P" for plan in plans) == made


def test_a_loaded_state_dict_is_planned_again(plans):
    got = _train(strata, "AdamW", _set_group(), "step", loaded=True)
    want = _train(torch, "AdamW", _set_group(), "step", loaded=True)
    # (the loaded state's versions: PyTorch's deepcopy keeps a tensor's, strata's starts at 0)
    _assert_same(_observed(*got), _observed(*want), state_versions=False)
    assert len(plans) == 2 and all(plans)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_the_plan_is_reused_while_nothing_changes(plans, dtype):
    got = _train(strata, "AdamW", _set_group(lr=0.03), "step", dtype=dtype)
    want = _train(torch, "AdamW", _set_group(lr=0.03), "step", dtype=dtype)
    _assert_same(_observed(*got), _observed(*want))
    assert len(plans) == 1 and plans[0] is not None and plans[0].dtype == dtype


def test_a_mode_or_grad_mode_sends_the_step_to_the_ops(plans):
    """A dispatch mode must see the update's ops, even with a plan made before it came."""
    model, opt = _train(strata, "AdamW", _set_group(), "step")
    model(strata.ones(1, 20)).sum().backward()
    seen = []

    class Recording(strata.dispatch.TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen.append(func)
            return func(*args, **(kwargs or {}))
    with Recording():
        opt.step()
    assert seen and len(plans) == 2 and plans[-1] is None


def _sgd_buffer_by_hand(m, model, opt):
    opt.state[model[0].bias]["momentum_buffer"] = m.zeros_like(model[0].bias)


def _train_sgd(m, change, nesterov):
    m.manual_seed(0)
    model = _model(m)
    opt = m.optim.SGD(model.parameters(), lr=1e-2, momentum=0.9, nesterov=nesterov,
                      foreach=False)    # the first step's buffers: one tensor each, as torch's
    x = m.tensor(_array(8, 20, seed=5))
    earlier_grads = []
    for i in range(STEPS):
        opt.zero_grad()
        model(x).square().sum().backward()
        if i == AT:
            change(m, model, opt)
        opt.step()
        earlier_grads.append([p.grad for p in model.parameters()])
    return ([p.detach().numpy().copy() for p in model.parameters()],
            [(p._version, s["momentum_buffer"].numpy().copy(), s["momentum_buffer"]._version)
             for p, s in opt.state.items()])


@pytest.mark.parametrize("nesterov", [False, True])
@pytest.mark.parametrize("name,change,made", [
    ("nothing", _set_group(), "P"), ("lr", _set_group(lr=0.05), "P"),
    ("momentum and dampening", _set_group(momentum=0.5, dampening=0.0), "P"),
    ("buffer replaced", _sgd_buffer_by_hand, "PP"), ("parameter's .data set", _set_data, "PP"),
    ("a column-major gradient", _transposed_grad, "PNP"),
    ("weight decay", _set_group(weight_decay=0.1), "P"),     # the loop from then on
], ids=lambda v: v if isinstance(v, str) else "")
def test_sgd_group_update_is_planned_like_adams(plans, nesterov, name, change, made):
    """SGD with momentum's one-kernel update (from its second step, when the buffers exist)
    under the same plan cache: PyTorch's parameters, buffers and versions after each change."""
    (values, states), (want_values, want_states) = (_train_sgd(m, change, nesterov)
                                                    for m in (strata, torch))
    for a, b in zip(values, want_values, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    for (version, buf, buf_version), (want_version, want_buf, want_buf_version) in zip(
            states, want_states, strict=True):
        assert (version, buf_version) == (want_version, want_buf_version)
        np.testing.assert_allclose(buf, want_buf, rtol=1e-5, atol=1e-6)
    assert "".join("N" if plan is None else "P" for plan in plans) == made
