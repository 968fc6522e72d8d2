"""Learning-rate schedulers against PyTorch: the same lr (and momentum) sequence, step by step.

The formulas are plain Python float arithmetic on both sides, so the sequences must be equal,
not just close.
"""

import math
import warnings

import pytest
import torch

import strata


def _optimizer(m, name="SGD", groups=1, **kwargs):
    params = [[m.nn.Parameter(m.ones(2))] for _ in range(groups)]
    opt_cls = getattr(m.optim, name)
    defaults = dict(lr=0.1, momentum=0.9) if name == "SGD" else dict(lr=0.1)
    if groups == 1:
        return opt_cls(params[0], **(defaults | kwargs))
    return opt_cls([{"params": p, "lr": 0.1 * (i + 1)} for i, p in enumerate(params)],
                   **({k: v for k, v in defaults.items() if k != "lr"} | kwargs))


def _observed(opt):
    return [(g["lr"], g.get("momentum"), g.get("betas")) for g in opt.param_groups]


SCHEDULERS = {
    "StepLR": lambda m, o: m.optim.lr_scheduler.StepLR(o, step_size=7, gamma=0.5),
    "MultiStepLR": lambda m, o: m.optim.lr_scheduler.MultiStepLR(o, [5, 12, 12, 30], gamma=0.3),
    "ExponentialLR": lambda m, o: m.optim.lr_scheduler.ExponentialLR(o, gamma=0.93),
    "CosineAnnealingLR": lambda m, o: m.optim.lr_scheduler.CosineAnnealingLR(o, T_max=17),
    "CosineAnnealingLR-eta": lambda m, o: m.optim.lr_scheduler.CosineAnnealingLR(
        o, T_max=10, eta_min=0.01),
    "LambdaLR": lambda m, o: m.optim.lr_scheduler.LambdaLR(o, lambda e: 0.95 ** e + 0.01 * e),
    "MultiplicativeLR": lambda m, o: m.optim.lr_scheduler.MultiplicativeLR(o, lambda e: 0.97),
    "LinearLR": lambda m, o: m.optim.lr_scheduler.LinearLR(o, start_factor=0.2, total_iters=9),
    "LinearLR-down": lambda m, o: m.optim.lr_scheduler.LinearLR(
        o, start_factor=1.0, end_factor=0.1, total_iters=20),
    "ConstantLR": lambda m, o: m.optim.lr_scheduler.ConstantLR(o, factor=0.25, total_iters=6),
    "PolynomialLR": lambda m, o: m.optim.lr_scheduler.PolynomialLR(o, total_iters=30, power=2.0),
    "CosineAnnealingWarmRestarts": lambda m, o: m.optim.lr_scheduler.CosineAnnealingWarmRestarts(
        o, T_0=5, T_mult=2, eta_min=0.001),
    "OneCycleLR-cos": lambda m, o: m.optim.lr_scheduler.OneCycleLR(o, max_lr=1.0,
                                                                   total_steps=60),
    "OneCycleLR-linear-3phase": lambda m, o: m.optim.lr_scheduler.OneCycleLR(
        o, max_lr=[0.5] * len(o.param_groups), epochs=6, steps_per_epoch=10,
        anneal_strategy="linear", three_phase=True, pct_start=0.25),
    "OneCycleLR-no-momentum": lambda m, o: m.optim.lr_scheduler.OneCycleLR(
        o, max_lr=0.3, total_steps=60, cycle_momentum=False, div_factor=10.0),
    "CyclicLR": lambda m, o: m.optim.lr_scheduler.CyclicLR(o, 0.01, 0.1, step_size_up=7),
    "CyclicLR-triangular2": lambda m, o: m.optim.lr_scheduler.CyclicLR(
        o, [0.01] * len(o.param_groups), 0.2, step_size_up=5, step_size_down=3,
        mode="triangular2", base_momentum=0.7, max_momentum=0.95),
    "CyclicLR-exp_range": lambda m, o: m.optim.lr_scheduler.CyclicLR(
        o, 0.001, 0.05, step_size_up=4, mode="exp_range", gamma=0.97, cycle_momentum=False),
    "CyclicLR-scale_fn": lambda m, o: m.optim.lr_scheduler.CyclicLR(
        o, 0.001, 0.05, step_size_up=6, scale_fn=lambda x: 1 / (1 + x), scale_mode="iterations",
        cycle_momentum=False),
    "SequentialLR": lambda m, o: m.optim.lr_scheduler.SequentialLR(
        o, [m.optim.lr_scheduler.LinearLR(o, start_factor=0.1, total_iters=10),
            m.optim.lr_scheduler.CosineAnnealingLR(o, T_max=40)], milestones=[10]),
    "SequentialLR-3": lambda m, o: m.optim.lr_scheduler.SequentialLR(
        o, [m.optim.lr_scheduler.ConstantLR(o, factor=0.5, total_iters=5),
            m.optim.lr_scheduler.ExponentialLR(o, gamma=0.9),
            m.optim.lr_scheduler.StepLR(o, step_size=4)], milestones=[8, 20]),
    "ChainedScheduler": lambda m, o: m.optim.lr_scheduler.ChainedScheduler(
        [m.optim.lr_scheduler.ConstantLR(o, factor=0.5, total_iters=4),
         m.optim.lr_scheduler.ExponentialLR(o, gamma=0.95)]),
}


def _run(m, make, opt_kwargs, steps=60):
    opt = _optimizer(m, **opt_kwargs)
    sched = make(m, opt)
    history = [(list(sched.get_last_lr()), _observed(opt))]
    for _ in range(steps):
        opt.step()
        sched.step()
        history.append((list(sched.get_last_lr()), _observed(opt)))
    return history, sched


@pytest.mark.parametrize("opt_kwargs", [dict(), dict(name="Adam"), dict(groups=2)],
                         ids=["sgd", "adam", "two-groups"])
@pytest.mark.parametrize("name", list(SCHEDULERS))
def test_sequence_matches_torch(name, opt_kwargs):
    with warnings.catch_warnings(record=True) as s_warnings:
        s_hist, _ = _run(strata, SCHEDULERS[name], opt_kwargs)
    with warnings.catch_warnings(record=True) as t_warnings:
        t_hist, _ = _run(torch, SCHEDULERS[name], opt_kwargs)
    assert s_hist == t_hist
    # Composite schedulers warn about their inner schedulers' first step, as in torch.
    assert [str(w.message) for w in s_warnings] == [str(w.message) for w in t_warnings]


@pytest.mark.parametrize("name", ["StepLR", "MultiStepLR", "CosineAnnealingLR", "LinearLR",
                                  "OneCycleLR-cos", "SequentialLR", "LambdaLR",
                                  "CyclicLR-triangular2"])
def test_state_dict_round_trip_resumes(name):
    make = SCHEDULERS[name]
    full, _ = _run(strata, make, {}, steps=40)
    first, sched = _run(strata, make, {}, steps=15)
    sd = sched.state_dict()
    opt_sd = sched.optimizer.state_dict()
    opt2 = _optimizer(strata)
    sched2 = make(strata, opt2)
    opt2.load_state_dict(opt_sd)
    sched2.load_state_dict(sd)
    resumed = []
    for _ in range(25):
        opt2.step()
        sched2.step()
        resumed.append((list(sched2.get_last_lr()), _observed(opt2)))
    assert first == full[:16]
    assert resumed == full[16:]


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_state_dict_keys_match_torch():
    for name in ("StepLR", "CosineAnnealingLR", "OneCycleLR-cos", "LambdaLR", "SequentialLR"):
        _, s_sched = _run(strata, SCHEDULERS[name], {}, steps=3)
        _, t_sched = _run(torch, SCHEDULERS[name], {}, steps=3)
        assert sorted(s_sched.state_dict()) == sorted(t_sched.state_dict()), name


def test_scheduler_before_optimizer_step_warns():
    for m in (strata, torch):
        opt = _optimizer(m)
        sched = m.optim.lr_scheduler.StepLR(opt, step_size=2)
        with pytest.warns(UserWarning, match=r"Detected call of `lr_scheduler.step\(\)` before "
                                             r"`optimizer.step\(\)`"):
            sched.step()


def test_no_warning_in_the_right_order():
    opt = _optimizer(strata)
    sched = strata.optim.lr_scheduler.StepLR(opt, step_size=2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        opt.step()
        sched.step()


def test_get_lr_outside_step_warns():
    sched = strata.optim.lr_scheduler.StepLR(_optimizer(strata), step_size=2)
    with pytest.warns(UserWarning, match="please use `get_last_lr\\(\\)`"):
        sched.get_lr()


def test_initial_lr_and_base_lrs():
    opt = _optimizer(strata, groups=2)
    sched = strata.optim.lr_scheduler.ExponentialLR(opt, gamma=0.5)
    assert sched.last_epoch == 0
    assert sched.base_lrs == [0.1, 0.2]
    assert [g["initial_lr"] for g in opt.param_groups] == [0.1, 0.2]


def test_resume_requires_initial_lr():
    for m in (strata, torch):
        with pytest.raises(KeyError, match="param 'initial_lr' is not specified in "
                                           "param_groups\\[0\\]"):
            m.optim.lr_scheduler.StepLR(_optimizer(m), step_size=3, last_epoch=5)


@pytest.mark.parametrize("name", ["StepLR", "MultiStepLR", "ExponentialLR", "CosineAnnealingLR",
                                  "LinearLR", "ConstantLR", "PolynomialLR"])
def test_step_with_epoch_uses_closed_form(name):
    results = []
    for m in (strata, torch):
        opt = _optimizer(m)
        sched = SCHEDULERS[name](m, opt)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            lrs = []
            for epoch in (3, 9, 4, 15, 40):
                opt.step()
                sched.step(epoch)
                lrs.append(sched.get_last_lr()[0])
        results.append(lrs)
    assert results[0] == results[1]


def _plateau_run(m, metrics, **kwargs):
    opt = _optimizer(m, groups=2)
    sched = m.optim.lr_scheduler.ReduceLROnPlateau(opt, **kwargs)
    lrs = []
    for value in metrics:
        opt.step()
        sched.step(value)
        lrs.append((sched.get_last_lr(), sched.num_bad_epochs, sched.cooldown_counter,
                    sched.best))
    return lrs


@pytest.mark.parametrize("kwargs", [
    dict(),
    dict(mode="max", factor=0.5, patience=2, threshold=0.01, threshold_mode="abs"),
    dict(patience=1, cooldown=2, min_lr=[0.01, 0.05], factor=0.3),
    dict(patience=0, eps=0.05, min_lr=0.001),
])
def test_reduce_on_plateau_matches_torch(kwargs):
    metrics = [1.0, 0.9, 0.95, 0.95, 0.96, 0.89, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9,
               0.95, 1.2, 0.5, 0.5, 0.5, 0.5, 0.51, 0.49] * 3
    assert _plateau_run(strata, metrics, **kwargs) == _plateau_run(torch, metrics, **kwargs)


def test_reduce_on_plateau_accepts_tensor_metric_and_state_dict():
    opt = _optimizer(strata)
    sched = strata.optim.lr_scheduler.ReduceLROnPlateau(opt, patience=0)
    sched.step(strata.tensor(1.0))
    sched.step(strata.tensor(2.0))
    assert math.isclose(opt.param_groups[0]["lr"], 0.01)
    sd = sched.state_dict()
    other = strata.optim.lr_scheduler.ReduceLROnPlateau(_optimizer(strata), patience=0)
    other.load_state_dict(sd)
    assert other.best == 1.0 and other.mode == "min"


@pytest.mark.parametrize("make,exc,match", [
    (lambda m, o: m.optim.lr_scheduler.ReduceLROnPlateau(o, factor=1.0), ValueError,
     "Factor should be < 1.0."),
    (lambda m, o: m.optim.lr_scheduler.ReduceLROnPlateau(o, mode="avg"), ValueError,
     "mode avg is unknown!"),
    (lambda m, o: m.optim.lr_scheduler.OneCycleLR(o, max_lr=1.0), ValueError,
     "You must define either total_steps OR"),
    (lambda m, o: m.optim.lr_scheduler.OneCycleLR(o, max_lr=1.0, total_steps=10,
                                                 anneal_strategy="exp"), ValueError,
     "anneal_strategy must be one of 'cos' or 'linear', instead got exp"),
    (lambda m, o: m.optim.lr_scheduler.LinearLR(o, start_factor=0), ValueError,
     "Starting multiplicative factor expected to be greater than 0"),
    (lambda m, o: m.optim.lr_scheduler.ConstantLR(o, factor=2), ValueError,
     "Constant multiplicative factor expected to be between 0 and 1."),
    (lambda m, o: m.optim.lr_scheduler.SequentialLR(
        o, [m.optim.lr_scheduler.StepLR(o, 2)], milestones=[3]), ValueError,
     "Sequential Schedulers expects number of schedulers provided to be one more"),
    (lambda m, o: m.optim.lr_scheduler.StepLR(object(), 2), TypeError,
     "object is not an Optimizer"),
    (lambda m, o: m.optim.lr_scheduler.LambdaLR(o, [lambda e: 1, lambda e: 2]), ValueError,
     "Expected 1 lr_lambdas, but got 2"),
])
def test_errors_match_torch(make, exc, match):
    for m in (strata, torch):
        with pytest.raises(exc, match=match):
            make(m, _optimizer(m))


def test_one_cycle_too_many_steps():
    for m in (strata, torch):
        opt = _optimizer(m)
        sched = m.optim.lr_scheduler.OneCycleLR(opt, max_lr=1.0, total_steps=3)
        for _ in range(3):
            opt.step()
            sched.step()
        with pytest.raises(ValueError, match="Tried to step 4 times. The specified number of "
                                             "total steps is 3"):
            sched.step()


def test_one_cycle_requires_momentum():
    for m in (strata, torch):
        opt = m.optim.Adagrad([m.nn.Parameter(m.ones(2))])
        with pytest.raises(ValueError, match="optimizer must support momentum or beta1"):
            m.optim.lr_scheduler.OneCycleLR(opt, max_lr=1.0, total_steps=10)


def test_legacy_lr_scheduler_base_class():
    """Old code subclasses ``_LRScheduler``; it is ``LRScheduler`` under its pre-2.0 name."""
    for m in (strata, torch):
        class Halving(m.optim.lr_scheduler._LRScheduler):
            def get_lr(self):
                return [base * 0.5 ** self.last_epoch for base in self.base_lrs]

        opt = _optimizer(m)
        sched = Halving(opt)
        opt.step()
        sched.step()
        assert sched.get_last_lr() == [0.5 * opt.param_groups[0]["initial_lr"]]
        assert isinstance(sched, m.optim.lr_scheduler.LRScheduler)


def test_cyclic_lr_errors():
    for make in (lambda m, o: m.optim.lr_scheduler.CyclicLR(o, 0.1, 1.0, mode="sawtooth"),
                 lambda m, o: m.optim.lr_scheduler.CyclicLR(o, [0.1, 0.2], 1.0)):
        with pytest.raises(ValueError) as s_err:
            make(strata, _optimizer(strata))
        with pytest.raises(ValueError) as t_err:
            make(torch, _optimizer(torch))
        assert str(s_err.value) == str(t_err.value)
    for m in (strata, torch):
        opt = m.optim.Adagrad([m.nn.Parameter(m.ones(1))])
        with pytest.raises(ValueError, match="optimizer must support momentum or beta1"):
            m.optim.lr_scheduler.CyclicLR(opt, 0.1, 1.0)
