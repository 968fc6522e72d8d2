"""Graph replay on the sim device (``mode="reduce-overhead"``): one ``OP_EXEC_LIST`` ring
record runs the recorded command list. Beside the opencl tests, since it is the same feature;
the sim device needs no driver, so only the opencl case of the training test can be skipped."""

import numpy as np
import pytest
import torch

import strata
from strata.backends.sim import commands as C
from strata.backends.sim import runtime as sim_runtime


def step(lib, x, w):
    h = (x.sin() * 2 + w).relu()
    return h.sum(-1), lib.softmax(h, -1)


def test_replay_is_one_record_and_sees_new_inputs(monkeypatch):
    replayed = strata.compile(lambda a, b: step(strata, a, b), mode="reduce-overhead")
    replayed(strata.randn(4, 6).to("sim"), strata.randn(4, 6).to("sim"))   # records
    driver = sim_runtime.get().driver
    opcodes = []
    submit = driver.submit

    def counted(qid, opcode, *args, **kwargs):
        opcodes.append(opcode)
        return submit(qid, opcode, *args, **kwargs)
    monkeypatch.setattr(driver, "submit", counted)
    for seed in range(3):
        strata.manual_seed(seed)
        x, w = strata.randn(4, 6), strata.randn(4, 6)
        xs, ws = x.to("sim"), w.to("sim")
        opcodes.clear()
        got = replayed(xs, ws)
        # the two inputs copied into the static buffers, then the whole graph as one record
        assert opcodes == [C.OP_COPY, C.OP_COPY, C.OP_EXEC_LIST]
        want = step(torch, torch.from_numpy(x.numpy()), torch.from_numpy(w.numpy()))
        for g, e in zip(got, want):
            assert g.device.type == "sim"
            np.testing.assert_allclose(g.cpu().numpy(), e.numpy(), rtol=1e-5, atol=1e-6)


def test_default_mode_on_sim_runs_the_graph_each_call():
    compiled = strata.compile(lambda a, b: step(strata, a, b))
    x, w = strata.randn(3, 5), strata.randn(3, 5)
    got = compiled(x.to("sim"), w.to("sim"))
    want = step(torch, torch.from_numpy(x.numpy()), torch.from_numpy(w.numpy()))
    for g, e in zip(got, want):
        np.testing.assert_allclose(g.cpu().numpy(), e.numpy(), rtol=1e-5, atol=1e-6)


def train_losses(mode, device, steps=4):
    """SGD steps of a small MLP, eager or compiled with ``mode``: the losses."""
    strata.manual_seed(0)
    model = strata.nn.Sequential(strata.nn.Linear(6, 8), strata.nn.ReLU(),
                                 strata.nn.Linear(8, 3)).to(device)
    forward = strata.compile(model, mode=mode) if mode else model
    opt = strata.optim.SGD(model.parameters(), lr=0.1)
    losses = []
    for i in range(steps):
        strata.manual_seed(10 + i)
        x = strata.randn(5, 6).to(device)
        opt.zero_grad()
        loss = ((forward(x) - 1) ** 2).mean()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


@pytest.mark.parametrize("device", ["sim", pytest.param("opencl", marks=pytest.mark.skipif(
    not strata.opencl.is_available(), reason="needs pyopencl with an OpenCL driver"))])
def test_replayed_training_steps_match_eager(device):
    """Forward and backward graphs are both replayed; each step's new batch and weights are
    copied into the recordings' static inputs."""
    np.testing.assert_allclose(train_losses("reduce-overhead", device),
                               train_losses(None, device), rtol=1e-5)


def test_arguments_unlike_the_recording_run_the_graph_normally():
    """Another shape or a different non-tensor argument is not copied into the recording."""
    from strata.compile.inductor.replay import ReplayedGraph
    recordings = []

    def new_recording():
        recordings.append(sim_runtime.get().new_recording())
        return recordings[-1]
    replayed = ReplayedGraph(lambda args: [args[0] * args[1]], new_recording)
    x = strata.ones(3).to("sim")
    replayed([x, 2.0])
    assert replayed([x + 1, 2.0])[0].cpu().tolist() == [4.0] * 3     # replayed
    assert replayed([x, 5.0])[0].cpu().tolist() == [5.0] * 3         # run: 5.0 was not baked
    assert replayed([strata.ones(2).to("sim"), 2.0])[0].cpu().tolist() == [2.0] * 2
    assert replayed.replays == 1 and len(recordings) == 1
