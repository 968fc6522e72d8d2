"""nn.LSTM / nn.GRU / nn.RNN and the cells on opencl: the fused cell and whole-layer ops run on
the device (compile/inductor/opencl_rnn*.py) and train with the CPU device's losses and
gradients, and PyTorch's."""

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import strata

pytestmark = pytest.mark.skipif(not strata.opencl.is_available(),
                                reason="needs pyopencl with an OpenCL driver (pip install "
                                       "'strata[opencl]' brings PoCL)")

MODES = {"LSTM": (strata.nn.LSTM, torch.nn.LSTM), "GRU": (strata.nn.GRU, torch.nn.GRU),
         "RNN": (strata.nn.RNN, torch.nn.RNN)}


def _models(mode, seed, **kwargs):
    """The same recurrent model on the CPU, on opencl and in torch (torch's weights)."""
    torch.manual_seed(seed)
    reference = MODES[mode][1](**kwargs)
    models = []
    for device in ("cpu", "opencl"):
        model = MODES[mode][0](**kwargs)
        with strata.no_grad():
            for name, p in reference.named_parameters():
                getattr(model, name).copy_(strata.tensor(p.detach().numpy()))
        models.append(model.to(device))
    return reference, *models


def _train(model, lib, x, target, steps, device=None):
    """A few SGD steps on (output - target)^2; returns the losses and the last gradients."""
    opt = lib.optim.SGD(model.parameters(), lr=0.1)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        out, _ = model(x)
        loss = ((out - target) ** 2).mean()
        loss.backward()
        opt.step()
        losses.append(float(loss.item()))
    grads = {n: (p.grad.cpu() if device else p.grad).numpy() for n, p in
             model.named_parameters()}
    return losses, grads


@pytest.mark.parametrize("mode", ["LSTM", "GRU", "RNN"])
def test_two_layer_bidirectional_batch_first_trains_as_on_cpu_and_torch(mode):
    reference, on_cpu, on_device = _models(mode, 0, input_size=5, hidden_size=6, num_layers=2,
                                           bidirectional=True, batch_first=True)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 7, 5)).astype(np.float32)
    target = rng.standard_normal((3, 7, 12)).astype(np.float32)
    want, want_grads = _train(reference, torch, torch.tensor(x), torch.tensor(target), 3)
    cpu, cpu_grads = _train(on_cpu, strata, strata.tensor(x), strata.tensor(target), 3)
    got, got_grads = _train(on_device, strata, strata.tensor(x).to("opencl"),
                            strata.tensor(target).to("opencl"), 3, "opencl")
    np.testing.assert_allclose(got, cpu, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    for name, g in got_grads.items():
        np.testing.assert_allclose(g, cpu_grads[name], rtol=1e-4, atol=1e-5, err_msg=name)
        np.testing.assert_allclose(g, want_grads[name], rtol=1e-4, atol=1e-5, err_msg=name)
    for p in on_device.parameters():
        assert p.device.type == "opencl" and p.grad.device.type == "opencl"


@pytest.mark.parametrize("mode", ["LSTM", "GRU", "RNN"])
def test_packed_sequences_match_the_cpu_device_and_torch(mode):
    """A packed batch of unsorted lengths, with an initial state: outputs, the last states and
    every gradient as the CPU device's and PyTorch's."""
    reference, on_cpu, model = _models(mode, 1, input_size=4, hidden_size=5, num_layers=2,
                                       bidirectional=True)
    rng = np.random.default_rng(1)
    x = rng.standard_normal((6, 3, 4)).astype(np.float32)
    h0 = rng.standard_normal((4, 3, 5)).astype(np.float32)
    lengths = [4, 6, 2]

    def run(lib, model, device):
        xs = lib.tensor(x).to(device).requires_grad_()
        hs = lib.tensor(h0).to(device).requires_grad_()
        packed = lib.nn.utils.rnn.pack_padded_sequence(xs, lib.tensor(lengths),
                                                       enforce_sorted=False)
        state = (hs, lib.zeros_like(hs)) if mode == "LSTM" else hs
        out, last = model(packed, state)
        padded, _ = lib.nn.utils.rnn.pad_packed_sequence(out)
        last = last[0] if mode == "LSTM" else last
        loss = (padded ** 2).sum() + (last * 0.5).sum()
        loss.backward()
        grads = [p.grad for p in model.parameters()] + [xs.grad, hs.grad]
        return [t.detach().cpu().numpy() for t in (padded, last, *grads)]
    got, cpu = run(strata, model, "opencl"), run(strata, on_cpu, "cpu")
    for g, c, want in zip(got, cpu, run(torch, reference, "cpu")):
        np.testing.assert_allclose(g, c, rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(g, want, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("bidirectional", [False, True])
def test_packed_lstm_with_a_projection_matches_the_cpu_device_and_torch(bidirectional):
    """proj_size < hidden_size on a packed batch: the backward's per-step (batch, proj)
    outputs have their own kernel (the gate kernel spans (batch, hidden) and wrote past each
    row, giving a wrong W_hr gradient)."""
    reference, on_cpu, model = _models("LSTM", 2, input_size=4, hidden_size=5, proj_size=2,
                                       bidirectional=bidirectional)
    rng = np.random.default_rng(2)
    x = rng.standard_normal((5, 3, 4)).astype(np.float32)
    lengths = [5, 1, 3]

    def run(lib, model, device):
        xs = lib.tensor(x).to(device).requires_grad_()
        packed = lib.nn.utils.rnn.pack_padded_sequence(xs, lib.tensor(lengths),
                                                       enforce_sorted=False)
        out, (h, c) = model(packed)
        padded, _ = lib.nn.utils.rnn.pad_packed_sequence(out)
        ((padded ** 2).sum() + h.sum() + (c * 0.5).sum()).backward()
        grads = [p.grad for p in model.parameters()] + [xs.grad]
        return [t.detach().cpu().numpy() for t in (padded, h, c, *grads)]
    got, cpu = run(strata, model, "opencl"), run(strata, on_cpu, "cpu")
    for g, c, want in zip(got, cpu, run(torch, reference, "cpu"), strict=True):
        np.testing.assert_allclose(g, c, rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(g, want, rtol=1e-4, atol=1e-5)


@settings(max_examples=3, deadline=None)
@given(mode=st.sampled_from(["LSTM", "GRU"]), dtype=st.sampled_from(["float16", "bfloat16"]),
       seed=st.integers(0, 99))
def test_half_layers_match_the_cpu_device(mode, dtype, seed):
    """Half layers compute in float32 and round their results, as the CPU device does."""
    _, on_cpu, on_device = _models(mode, seed, input_size=3, hidden_size=4)
    half = getattr(strata, dtype)
    on_cpu, on_device = on_cpu.to(half), on_device.to(half)
    x = np.random.default_rng(seed).standard_normal((5, 2, 3)).astype(np.float32)
    results = []
    for model, device in ((on_cpu, "cpu"), (on_device, "opencl")):
        xs = strata.tensor(x).to(device).to(half).requires_grad_()
        out, _ = model(xs)
        out.float().sum().backward()
        results.append([t.detach().cpu().float().numpy()
                        for t in (out, xs.grad, *(p.grad for p in model.parameters()))])
    tol = 1e-2 if dtype == "float16" else 5e-2
    for got, want in zip(results[1], results[0]):
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


@pytest.mark.parametrize("cell", ["LSTMCell", "GRUCell"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_cells_and_their_gradients_match_torch(cell, dtype):
    torch.manual_seed(2)
    reference = getattr(torch.nn, cell)(4, 3).double()
    model = getattr(strata.nn, cell)(4, 3)
    with strata.no_grad():
        for name, p in reference.named_parameters():
            getattr(model, name).copy_(strata.tensor(p.detach().numpy()))
    model = model.to("opencl").to(getattr(strata, dtype))
    x = np.random.default_rng(2).standard_normal((5, 4))
    xs = strata.tensor(x).to("opencl").to(getattr(strata, dtype)).requires_grad_()
    xt = torch.tensor(x).requires_grad_()
    got, want = model(xs), reference(xt)
    got, want = (got[0], want[0]) if cell == "LSTMCell" else (got, want)
    (got.float() * 2).sum().backward()
    (want * 2).sum().backward()
    tol = {"float32": 1e-5, "float64": 1e-12, "float16": 5e-3}[dtype]
    pairs = [(got, want), (xs.grad, xt.grad)] + [
        (getattr(model, n).grad, p.grad) for n, p in reference.named_parameters()]
    for g, w in pairs:
        assert g.device.type == "opencl"
        np.testing.assert_allclose(g.detach().cpu().double().numpy(), w.detach().numpy(),
                                   rtol=tol, atol=tol)


def test_a_bad_state_raises_the_cpu_error_before_anything_runs():
    lstm = strata.nn.LSTM(3, 4).to("opencl")
    x = strata.zeros(5, 2, 3, device="opencl")
    h = strata.zeros(1, 2, 4, device="opencl")
    before = lstm.weight_hh_l0.detach().cpu().numpy().copy()
    with pytest.raises(RuntimeError) as got:
        lstm(x, (h, strata.zeros(1, 3, 4, device="opencl")))
    with pytest.raises(RuntimeError) as want:
        torch.nn.LSTM(3, 4)(torch.zeros(5, 2, 3), (torch.zeros(1, 2, 4), torch.zeros(1, 3, 4)))
    assert str(got.value) == str(want.value)
    np.testing.assert_array_equal(lstm.weight_hh_l0.detach().cpu().numpy(), before)


def test_training_steps_never_read_the_device_back(monkeypatch):
    """The layers loop over time on the host but never wait for the device: no download (a
    sync point) between the inputs' upload and the loss's ``.item()``."""
    from strata.backends.opencl import runtime
    downloads = []
    download = runtime.OpenCLRuntime.download

    def counted(self, *args, **kwargs):
        downloads.append(args)
        return download(self, *args, **kwargs)
    models = [strata.nn.LSTM(3, 4, num_layers=2, bidirectional=True, proj_size=2),
              strata.nn.GRU(3, 4, batch_first=True)]
    x = strata.randn(5, 2, 3, device="opencl")
    monkeypatch.setattr(runtime.OpenCLRuntime, "download", counted)
    for model in models:
        out, _ = model.to("opencl")(x)
        out.sum().backward()
    assert downloads == []
