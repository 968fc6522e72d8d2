"""``opt.step()`` inside a compiled training step is part of the graph (issue 9).

The whole step (``zero_grad``, forward, ``backward``, ``opt.step()``) is compiled with the
inductor backend and compared with the same step whose forward and backward are compiled and
whose ``opt.step()`` runs eagerly (the same gradients, so the update alone is compared):
parameters and optimizer state bit for bit (Adafactor's, whose update reduces, within an ulp per
step); against eager strata and PyTorch within tolerance (compiled kernels round sums differently
from eager's); the update is one graph with no break inside ``opt.step()``, lowered to generated
C with no Fallback (but Adafactor's norms), written in place (same tensors, version counters
moved), and hyperparameter changes recompile.
"""

import functools

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import strata
from helpers import recording_backend
from strata._dynamo import explain

OPTIMIZERS = {
    "Adam": lambda lib, params: lib.optim.Adam(params, lr=0.01),
    "AdamW": lambda lib, params: lib.optim.AdamW(params, lr=0.01, weight_decay=0.1),
    "SGD(momentum)": lambda lib, params: lib.optim.SGD(params, lr=0.05, momentum=0.9),
    "RMSprop(momentum)": lambda lib, params: lib.optim.RMSprop(params, lr=0.01, momentum=0.5),
    "Adagrad": lambda lib, params: lib.optim.Adagrad(params, lr=0.05, lr_decay=0.01),
    "Adagrad(weight_decay)": lambda lib, params: lib.optim.Adagrad(params, lr=0.05,
                                                                   weight_decay=0.1),
    "Adamax": lambda lib, params: lib.optim.Adamax(params, lr=0.01),
    "Adamax(weight_decay)": lambda lib, params: lib.optim.Adamax(params, lr=0.01,
                                                                 weight_decay=0.1),
    "NAdam": lambda lib, params: lib.optim.NAdam(params, lr=0.01),
    "NAdam(decoupled_weight_decay)": lambda lib, params: lib.optim.NAdam(
        params, lr=0.01, weight_decay=0.1, decoupled_weight_decay=True),
    "RAdam": lambda lib, params: lib.optim.RAdam(params, lr=0.01),
    "RAdam(decoupled_weight_decay)": lambda lib, params: lib.optim.RAdam(
        params, lr=0.01, betas=(0.9, 0.9), weight_decay=0.1, decoupled_weight_decay=True),
    "Adadelta": lambda lib, params: lib.optim.Adadelta(params, lr=0.5),
    "Rprop": lambda lib, params: lib.optim.Rprop(params, lr=0.01),
    # t0=2: the running average starts (mu < 1) within the tested steps
    "ASGD": lambda lib, params: lib.optim.ASGD(params, lr=0.05, lambd=0.01, t0=2,
                                               weight_decay=0.1),
    "Adafactor": lambda lib, params: lib.optim.Adafactor(params, lr=0.01, weight_decay=0.1),
}
# Coupled weight decay's gradient ``g + λθ``, NAdam's denominator, RAdam's unrectified update,
# Adadelta's delta, Rprop's sign factors, ASGD's new parameter and Adafactor's statistics are
# read twice by these updates, so the compiler realizes them in a temporary buffer: parameters
# and state are still written in place, with one more buffer.
IN_PLACE_WITHOUT_TEMPORARIES = [kind for kind in OPTIMIZERS if "weight_decay" not in kind
                                and not kind.startswith(("NAdam", "RAdam", "Adadelta", "Rprop",
                                                         "ASGD", "Adafactor"))]
# Adafactor's update reduces: the mean of its row statistics is a generated reduction, whose
# summation order is not NumPy's pairwise one (an ulp apart: compared within tolerance), and its
# norms keep the eager kernel (``linalg_vector_norm`` has no lowering: a Fallback).
REDUCING = {"Adafactor"}
STEPS = 4


def _mlp(lib, kind, seed=0):
    """A 12-32-32-5 MLP with weights from NumPy (the same in every library) and its optimizer."""
    rng = np.random.default_rng(seed)
    model = lib.nn.Sequential(lib.nn.Linear(12, 32), lib.nn.ReLU(), lib.nn.Linear(32, 32),
                              lib.nn.ReLU(), lib.nn.Linear(32, 5))
    with lib.no_grad():
        for p in model.parameters():
            p.copy_(lib.tensor(rng.standard_normal(tuple(p.shape)).astype(np.float32) * 0.3))
    return model, OPTIMIZERS[kind](lib, model.parameters())


def _data(lib):
    rng = np.random.default_rng(1)
    x = lib.tensor(rng.standard_normal((8, 12)).astype(np.float32))
    y = lib.tensor(rng.integers(0, 5, 8))
    return x, y


def _train_step(lib, model, opt, set_to_none=True):
    def step(x, y):
        opt.zero_grad(set_to_none=set_to_none)
        loss = lib.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss
    return step


def _reference_step(model, opt, set_to_none=True):
    """The step with its forward and backward compiled and eager's ``opt.step()``."""
    loss_fn = strata.compile(lambda x, y: strata.nn.functional.cross_entropy(model(x), y),
                             backend="inductor")

    def step(x, y):
        opt.zero_grad(set_to_none=set_to_none)
        loss = loss_fn(x, y)
        loss.backward()
        opt.step()
        return loss
    return step


def _bits_equal(a, b):
    return a.shape == b.shape and a.detach().numpy().tobytes() == b.detach().numpy().tobytes()


def _equal_for(kind, a, b):
    """Bit for bit, or for an update that reduces (``REDUCING``) within a few ulps of the
    parameters' scale: Adafactor divides by norms summed in another order, so an element that
    crossed 0 (1e-3 where the weights are ~0.3) carries the updates' absolute error (3e-9 seen),
    not a few ulps of its own value."""
    if kind not in REDUCING:
        return _bits_equal(a, b)
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-6, atol=1e-8)
    return True


@pytest.mark.parametrize("kind", list(OPTIMIZERS))
def test_compiled_training_loop_is_eagers_bit_for_bit_and_torchs_within_tolerance(kind):
    x, y = _data(strata)
    (model, opt), (ref_model, ref_opt), (eager_model, eager_opt) = (
        _mlp(strata, kind) for _ in range(3))
    compiled = strata.compile(_train_step(strata, model, opt), backend="inductor")
    reference = _reference_step(ref_model, ref_opt)
    eager = _train_step(strata, eager_model, eager_opt)
    torch_model, torch_opt = _mlp(torch, kind)
    torch_step = _train_step(torch, torch_model, torch_opt)
    tx, ty = torch.from_numpy(x.numpy()), torch.from_numpy(y.numpy())
    for _ in range(STEPS):
        loss, ref_loss = float(compiled(x, y)), float(reference(x, y))
        eager_loss, torch_loss = float(eager(x, y)), float(torch_step(tx, ty).detach())
        assert loss == ref_loss or (kind in REDUCING and abs(loss - ref_loss) < 1e-6)
        assert abs(loss - eager_loss) < 1e-5 and abs(loss - torch_loss) < 1e-4
    for p, q, e, t in zip(model.parameters(), ref_model.parameters(), eager_model.parameters(),
                          torch_model.parameters()):
        assert _equal_for(kind, p, q)
        # Adam's and RMSprop's updates divide by sqrt(v): an ulp of a gradient near zero moves
        # a parameter by up to lr, and RMSprop's momentum (0.5) carries it on, to 2 lr (one
        # element of 384 moved 1.2e-3 with numpy 2.4's BLAS); every other element within 1e-4
        for other in (e, t):
            got, want = p.detach().numpy(), other.detach().numpy()
            if kind.startswith("RMSprop"):
                np.testing.assert_allclose(got, want, atol=2 * 0.01)
                assert np.mean(np.abs(got - want) > 1e-4) < 0.01
            else:
                np.testing.assert_allclose(got, want, atol=1e-4)


@pytest.mark.parametrize("kind", list(OPTIMIZERS))
def test_state_dict_after_compiled_steps_equals_eagers(kind):
    x, y = _data(strata)
    (model, opt), (eager_model, eager_opt) = _mlp(strata, kind), _mlp(strata, kind)
    compiled = strata.compile(_train_step(strata, model, opt), backend="inductor")
    eager = _reference_step(eager_model, eager_opt)
    for _ in range(STEPS):
        compiled(x, y)
        eager(x, y)
    mine, theirs = opt.state_dict(), eager_opt.state_dict()
    assert mine["param_groups"] == theirs["param_groups"]
    assert mine["state"].keys() == theirs["state"].keys()
    for index, state in mine["state"].items():
        assert state.keys() == theirs["state"][index].keys()
        for name, value in state.items():
            assert value.dtype == theirs["state"][index][name].dtype
            assert _equal_for(kind, value, theirs["state"][index][name]), (index, name)
    if "step" in mine["state"][0]:
        assert float(mine["state"][0]["step"]) == STEPS and mine["state"][0]["step"].ndim == 0


@pytest.mark.parametrize("kind", list(OPTIMIZERS))
def test_opt_step_is_one_graph_with_no_break(kind):
    x, y = _data(strata)
    model, opt = _mlp(strata, kind)
    strata.nn.functional.cross_entropy(model(x), y).backward()
    opt.step()     # the state exists: the graph below is the steady-state update
    report = explain(lambda: opt.step())()
    assert (report.graph_count, report.graph_break_count) == (1, 0), report.break_reasons
    # the whole step breaks only where eager's autograd must run: setting .grad, backward()
    whole = explain(_train_step(strata, model, opt))(x, y)
    reasons = " ".join(str(r) for r in whole.break_reasons)
    assert "strata/optim" not in reasons and "item" not in reasons, reasons


@pytest.mark.parametrize("kind", list(OPTIMIZERS))
def test_update_lowers_to_generated_kernels_written_in_place(kind):
    x, y = _data(strata)
    model, opt = _mlp(strata, kind)
    strata.nn.functional.cross_entropy(model(x), y).backward()
    opt.step()
    runs = []
    update = strata.compile(lambda: opt.step(), backend=recording_backend(runs))
    params = list(model.parameters())
    grads = [p.grad for p in params]
    grad_bits = [g.numpy().tobytes() for g in grads]
    states = [dict(opt.state[p]) for p in params]
    versions = [p._version for p in params]
    update()
    (run,) = runs
    fallbacks = run.ir_post_fusion.count("Fallback")
    assert fallbacks == run.ir_post_fusion.count("linalg_vector_norm") and "kernel" in \
        run.ir_post_fusion and (fallbacks == 0 or kind in REDUCING)
    # one kernel per parameter updates it and its state: no copies back
    if kind in IN_PLACE_WITHOUT_TEMPORARIES:
        assert "np.empty((" + ", ".join(map(str, params[0].shape)) + ")" not in run.output_code
    for p, g, bits, state, version in zip(params, grads, grad_bits, states, versions):
        assert p.grad is g and g.numpy().tobytes() == bits    # gradients are only read
        assert all(opt.state[p][name] is t for name, t in state.items())
        assert p._version > version


def test_radam_rectified_steps_are_one_graph_and_eagers_bit_for_bit():
    """RAdam's update is SGD with momentum until the variance is tractable (rho_t > 5, here
    from step 6): the traced update takes both branches with a ``where``, so crossing the
    threshold compiles nothing new, and every step matches eager's."""
    from strata.compile.inductor import inductor
    graphs = []

    def counting_inductor(gm, example_inputs):
        graphs.append(gm)
        return inductor(gm, example_inputs)

    def radam(lib, params):
        return lib.optim.RAdam(params, lr=0.01, betas=(0.9, 0.9))

    x, y = _data(strata)
    (model, _), (ref_model, _) = _mlp(strata, "RAdam"), _mlp(strata, "RAdam")
    opt, ref_opt = radam(strata, model.parameters()), radam(strata, ref_model.parameters())
    compiled = strata.compile(_train_step(strata, model, opt), backend=counting_inductor)
    reference = _reference_step(ref_model, ref_opt)
    for step in range(8):
        compiled(x, y)
        reference(x, y)
        if step == 2:
            compiled_so_far = len(graphs)
        for p, q in zip(model.parameters(), ref_model.parameters()):
            assert _bits_equal(p, q), step
    assert len(graphs) == compiled_so_far


def test_a_tensor_saved_for_backward_sees_the_compiled_update():
    """The version counters move, so autograd refuses a graph whose saved weight the compiled
    update overwrote, as it refuses eager's."""
    x, y = _data(strata)
    model, opt = _mlp(strata, "Adam")
    strata.nn.functional.cross_entropy(model(x), y).backward()
    opt.step()
    update = strata.compile(lambda: opt.step(), backend="inductor")
    loss = strata.nn.functional.cross_entropy(model(x), y)
    update()
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        loss.backward()


@pytest.mark.parametrize("change", ["lr", "betas"])
def test_changing_a_hyperparameter_recompiles_and_matches_eager(change):
    x, y = _data(strata)
    (model, opt), (eager_model, eager_opt) = _mlp(strata, "Adam"), _mlp(strata, "Adam")
    compiled = strata.compile(_train_step(strata, model, opt), backend="inductor")
    eager = _reference_step(eager_model, eager_opt)
    for step in range(STEPS):
        if step == 2:
            for o in (opt, eager_opt):
                o.param_groups[0][change] = 0.002 if change == "lr" else (0.8, 0.99)
        compiled(x, y)
        eager(x, y)
        for p, q in zip(model.parameters(), eager_model.parameters()):
            assert _bits_equal(p, q), step


def test_zero_grad_without_set_to_none_inside_and_outside_the_compiled_step():
    x, y = _data(strata)
    (model, opt), (eager_model, eager_opt) = _mlp(strata, "SGD(momentum)"), \
        _mlp(strata, "SGD(momentum)")
    compiled = strata.compile(_train_step(strata, model, opt, set_to_none=False),
                              backend="inductor")
    eager = _reference_step(eager_model, eager_opt, set_to_none=False)
    for _ in range(3):
        compiled(x, y)
        eager(x, y)
    for p, q in zip(model.parameters(), eager_model.parameters()):
        assert _bits_equal(p, q) and _bits_equal(p.grad, q.grad)
    opt.zero_grad()             # set_to_none outside: the next compiled step starts afresh
    eager_opt.zero_grad()
    assert all(p.grad is None for p in model.parameters())
    compiled(x, y)
    eager(x, y)
    for p, q in zip(model.parameters(), eager_model.parameters()):
        assert _bits_equal(p, q)


def test_eager_step_keeps_the_native_update(monkeypatch):
    """Outside compilation the fused native update still runs (optim/_native_update.py)."""
    from strata.optim import _native_update
    from strata.optim import _group_update
    calls = []
    monkeypatch.setattr(_native_update, "_launch", functools.partial(
        lambda original, *a: calls.append(a[0]) or original(*a), _native_update._launch))
    run_all = _group_update.AdamUpdate.run      # every parameter at once

    def counted_run(update, *args):
        calls.append("adam_multi_step")
        return run_all(update, *args)
    monkeypatch.setattr(_group_update.AdamUpdate, "run", counted_run)
    x, y = _data(strata)
    model, opt = _mlp(strata, "Adam")
    for _ in range(2):
        _train_step(strata, model, opt)(x, y)
    assert "adam_step" in calls or "adam_multi_step" in calls


_BIAS_CORRECTIONS = []


def _compiled_bias_corrections():
    """Adam's bias corrections as the traced step computes them, compiled once for 64 lanes."""
    if not _BIAS_CORRECTIONS:
        def corrections(step, lr, beta1, beta2):
            one = strata.ones((), dtype=strata.float64)
            step = step.to(strata.float64)
            step_size = strata.div(lr, one - strata.pow(beta1, step))
            return step_size, strata.pow(one - strata.pow(beta2, step), 0.5 * one)
        _BIAS_CORRECTIONS.append(strata.compile(corrections, backend="inductor", dynamic=False))
    return _BIAS_CORRECTIONS[0]


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 10**7), st.floats(1e-6, 1.0), st.floats(0.0, 0.9999),
                          st.floats(0.0, 0.99999)), min_size=64, max_size=64))
def test_generated_bias_corrections_are_pythons_floats(lanes):
    """The generated ``pow`` and divisions give the doubles Python's ``**`` and ``/`` give (the
    numbers eager's update converts), so the compiled update can be eager's bit for bit."""
    steps, lrs, beta1s, beta2s = (np.array(column) for column in zip(*lanes))
    step_size, bias_correction2_sqrt = _compiled_bias_corrections()(
        strata.tensor(steps.astype(np.float32)), strata.tensor(lrs), strata.tensor(beta1s),
        strata.tensor(beta2s))
    for k, (step, lr, beta1, beta2) in enumerate(lanes):
        step = float(np.float32(step))      # the step counter is a float32 tensor
        assert step_size[k].item() == lr / (1 - beta1 ** step)
        assert bias_correction2_sqrt[k].item() == (1 - beta2 ** step) ** 0.5


def test_a_scheduled_lr_stays_in_the_graph_and_matches_eager():
    """An LR scheduler wraps ``opt.step`` (a weak reference to the optimizer, as PyTorch's);
    the update stays one graph, and each new lr recompiles it."""
    x, y = _data(strata)
    (model, opt), (ref_model, ref_opt) = _mlp(strata, "AdamW"), _mlp(strata, "AdamW")
    schedulers = [strata.optim.lr_scheduler.StepLR(o, step_size=2, gamma=0.5)
                  for o in (opt, ref_opt)]
    compiled = strata.compile(_train_step(strata, model, opt), backend="inductor")
    reference = _reference_step(ref_model, ref_opt)
    for _ in range(5):
        compiled(x, y)
        reference(x, y)
        for scheduler in schedulers:
            scheduler.step()
    for p, q in zip(model.parameters(), ref_model.parameters()):
        assert _bits_equal(p, q)
    assert opt.param_groups[0]["lr"] == ref_opt.param_groups[0]["lr"] == 0.0025
    report = explain(lambda: opt.step())()
    assert (report.graph_count, report.graph_break_count) == (1, 0), report.break_reasons


@pytest.mark.parametrize("kind", ["AdamW", "SGD(momentum)", "RMSprop(momentum)", "Adagrad",
                                  "Adamax", "NAdam", "RAdam"])
def test_a_tensor_lr_is_a_graph_input_no_recompile(kind):
    """``lr=tensor`` (PyTorch's advice for compiled optimizers with schedulers): the update reads
    it as an input, so an ExponentialLR changing it every step compiles nothing new."""
    from strata.compile.inductor import inductor
    graphs = []

    def counting_inductor(gm, example_inputs):
        graphs.append(gm)
        return inductor(gm, example_inputs)

    x, y = _data(strata)
    (model, opt), (ref_model, ref_opt) = _mlp(strata, kind), _mlp(strata, kind)
    for o in (opt, ref_opt):
        o.param_groups[0]["lr"] = strata.tensor(0.05)
    schedulers = [strata.optim.lr_scheduler.ExponentialLR(o, gamma=0.7) for o in (opt, ref_opt)]
    compiled = strata.compile(_train_step(strata, model, opt), backend=counting_inductor)
    reference = _reference_step(ref_model, ref_opt)
    for step in range(6):
        compiled(x, y)
        reference(x, y)
        for scheduler in schedulers:
            scheduler.step()
        if step == 2:
            compiled_so_far = len(graphs)
        for p, q in zip(model.parameters(), ref_model.parameters()):
            assert _bits_equal(p, q), step
    assert len(graphs) == compiled_so_far
    assert float(opt.param_groups[0]["lr"]) == pytest.approx(0.05 * 0.7 ** 6)


def test_eager_and_compiled_steps_interleave():
    """Eager steps keep the state as views of flat buffers (optim/_multi_tensor.py); compiled
    steps write through those views in place, and eager steps after them see the writes."""
    x, y = _data(strata)
    (model, opt), (ref_model, ref_opt) = _mlp(strata, "Adam"), _mlp(strata, "Adam")
    compiled = strata.compile(_train_step(strata, model, opt), backend="inductor")
    mixed = _reference_step(model, opt)     # the same model and optimizer, eager update
    reference = _reference_step(ref_model, ref_opt)
    for step in range(6):
        (mixed if step in (0, 1, 4) else compiled)(x, y)
        reference(x, y)
    for p, q in zip(model.parameters(), ref_model.parameters()):
        assert _bits_equal(p, q)
    for p, q in zip(model.parameters(), ref_model.parameters()):
        for name in ("step", "exp_avg", "exp_avg_sq"):
            assert _bits_equal(opt.state[p][name], ref_opt.state[q][name])


@pytest.mark.skipif(not strata.opencl.is_available(), reason="no OpenCL device")
@pytest.mark.parametrize("kind", ["Adam", "SGD(momentum)"])
def test_compiled_update_on_the_opencl_device(kind):
    """The OpenCL wrapper allocates every kernel output: its mutations are copied back, not
    written in place (GraphLowering's in-place pass is the C wrapper's), and still eager's."""
    x, y = (t.to("opencl") for t in _data(strata))
    (model, opt), (ref_model, ref_opt) = _mlp(strata, kind), _mlp(strata, kind)
    for m in (model, ref_model):
        m.to("opencl")
    for o, m in ((opt, model), (ref_opt, ref_model)):
        o.param_groups[0]["params"] = list(m.parameters())
    compiled = strata.compile(_train_step(strata, model, opt), backend="inductor")
    reference = _reference_step(ref_model, ref_opt)
    for _ in range(3):
        compiled(x, y)
        reference(x, y)
    for p, q in zip(model.parameters(), ref_model.parameters()):
        assert _bits_equal(p.cpu(), q.cpu())


@pytest.mark.parametrize("kind", ["Adam", "ASGD", "Adafactor", "Rprop", "SGD(momentum)"])
def test_state_is_made_before_tracing_so_one_graph_serves_every_step(kind):
    """Capture runs ``_init_missing_state`` eagerly (Dynamo's ``_init_group``): the first
    compiled step is already the steady-state graph. SGD's momentum buffer is made by its
    first update (PyTorch's rule: a clone of the gradient), so it compiles that step apart."""
    x, y = _data(strata)
    (model, opt), (ref_model, ref_opt) = _mlp(strata, kind), _mlp(strata, kind)
    graphs = []

    def counting(gm, example_inputs):
        graphs.append(gm)
        return gm.forward
    update = strata.compile(lambda: opt.step(), backend=counting)
    for _ in range(3):
        for m, o in ((model, opt), (ref_model, ref_opt)):
            o.zero_grad()
            strata.nn.functional.cross_entropy(m(x), y).backward()
        update()
        ref_opt.step()
    assert len(graphs) == (2 if kind == "SGD(momentum)" else 1)
    for p, q in zip(model.parameters(), ref_model.parameters()):
        assert _equal_for(kind, p, q)
        assert opt.state[p].keys() == ref_opt.state[q].keys()
