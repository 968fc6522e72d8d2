"""The parts of PyTorch's surface that programs touch around the model: `strata run`, cuda and
backends flags, amp, tensorboard, distributions, and modules that import but are not built."""

import os
import struct
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import strata
import torch
from helpers import assert_same

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run_script(tmp_path, source, *args):
    script = tmp_path / "prog.py"
    script.write_text(textwrap.dedent(source))
    return subprocess.run([sys.executable, "-m", "strata", "run", str(script), *args],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path)


def test_strata_run_executes_an_unmodified_pytorch_script(tmp_path):
    out = run_script(tmp_path, """
        import sys
        import torch
        import torch.nn as nn
        import torch.nn.functional as F
        from torch.utils.data import DataLoader, TensorDataset
        assert torch.__name__ == "strata"
        print("args", sys.argv[1:])
        print("cuda", torch.cuda.is_available(), torch.backends.cudnn.allow_tf32)
        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        x = torch.arange(6, dtype=torch.float32).view(2, 3).to(device)
        print("sum", x.sum().item())
        print("relu", F.relu(x - 2).tolist())
        print("linear", nn.Linear(3, 2)(x).shape)
    """, "--lr", "0.1")
    assert out.returncode == 0, out.stderr
    assert "args ['--lr', '0.1']" in out.stdout
    assert "cuda False True" in out.stdout
    assert "sum 15.0" in out.stdout
    assert "relu [[0.0, 0.0, 0.0], [1.0, 2.0, 3.0]]" in out.stdout
    assert "linear strata.Size([2, 2])" in out.stdout


def test_strata_run_reports_missing_torch_modules(tmp_path):
    out = run_script(tmp_path, "import torch._C\n")
    assert out.returncode != 0
    assert "No module named 'torch._C' (strata does not provide 'strata._C')" in out.stderr


def test_cuda_and_accelerator_answer_truthfully():
    assert strata.cuda.is_available() is False
    assert strata.cuda.device_count() == 0
    strata.cuda.manual_seed(0)
    strata.cuda.manual_seed_all(0)
    assert strata.accelerator.is_available() is False
    with pytest.raises(AssertionError, match="not compiled with CUDA"):
        strata.cuda.synchronize()
    with pytest.raises(AssertionError, match="not compiled with CUDA"):   # as PyTorch's
        strata.ones(2).cuda()


def test_unbuilt_modules_import_and_raise_clearly():
    import strata.onnx
    with pytest.raises(RuntimeError, match="ONNX export is not built"):
        strata.onnx.export(strata.nn.Linear(1, 1), strata.ones(1), "m.onnx")


def test_grad_scaler_disabled_is_a_pass_through():
    scaler = strata.cuda.amp.GradScaler(enabled=False)
    model = strata.nn.Linear(2, 1)
    opt = strata.optim.SGD(model.parameters(), lr=0.1)
    loss = model(strata.ones(1, 2)).sum()
    assert scaler.scale(loss) is loss
    before = model.weight.detach().clone()
    scaler.scale(loss).backward()
    scaler.unscale_(opt)
    scaler.step(opt)
    scaler.update()
    assert not np.allclose(model.weight.detach().numpy(), before.numpy())


def test_grad_scaler_cpu_skips_steps_with_inf_and_backs_off():
    scaler = strata.amp.GradScaler("cpu", init_scale=4.0)
    p = strata.nn.Parameter(strata.ones(2))
    opt = strata.optim.SGD([p], lr=1.0)
    p.grad = strata.tensor([float("inf"), 1.0])
    scaler.step(opt)
    scaler.update()
    assert p.tolist() == [1.0, 1.0] and scaler.get_scale() == 2.0
    p.grad = strata.tensor([2.0, 2.0])
    scaler.step(opt)                 # unscales by 1/2 then steps
    scaler.update()
    assert p.tolist() == [0.0, 0.0]


def test_autocast_cpu_runs_matmuls_in_bfloat16():
    a = np.random.default_rng(0).standard_normal((4, 5)).astype(np.float32)
    b = np.random.default_rng(1).standard_normal((5, 3)).astype(np.float32)
    with strata.autocast("cpu"):
        s = strata.tensor(a) @ strata.tensor(b)
        s_add = strata.tensor(a) + 1
    with torch.autocast("cpu"):
        t = torch.tensor(a) @ torch.tensor(b)
        t_add = torch.tensor(a) + 1
    assert_same(s, t)
    assert_same(s_add, t_add)
    assert (strata.tensor(a) @ strata.tensor(b)).dtype is strata.float32   # off again


def test_tensorboard_writes_real_event_files(tmp_path):
    pytest.importorskip("tensorboardX")
    from tensorboardX.proto import event_pb2
    from strata.utils.tensorboard import SummaryWriter
    writer = SummaryWriter(log_dir=str(tmp_path))
    for step in range(3):
        writer.add_scalar("loss", strata.tensor(1.0 / (step + 1)), step)
    writer.flush()
    writer.close()
    files = [f for f in os.listdir(tmp_path) if "tfevents" in f]
    assert len(files) == 1
    data = (tmp_path / files[0]).read_bytes()
    scalars, pos = [], 0
    while pos < len(data):                       # TFRecord: len, crc, payload, crc
        (length,) = struct.unpack("<Q", data[pos:pos + 8])
        event = event_pb2.Event.FromString(data[pos + 12:pos + 12 + length])
        pos += 12 + length + 4
        for v in event.summary.value:
            scalars.append((event.step, v.tag, round(v.simple_value, 4)))
    assert scalars == [(0, "loss", 1.0), (1, "loss", 0.5), (2, "loss", 0.3333)]


def test_categorical_matches_torch():
    logits = np.array([[0.1, 1.0, -0.5], [2.0, 0.0, 0.0]], np.float32)
    s = strata.distributions.Categorical(logits=strata.tensor(logits))
    t = torch.distributions.Categorical(logits=torch.tensor(logits))
    value = np.array([2, 0])
    assert_same(s.log_prob(strata.tensor(value)), t.log_prob(torch.tensor(value)))
    assert_same(s.entropy(), t.entropy())
    assert_same(s.probs, t.probs)
    strata.manual_seed(0)
    sample = s.sample((1000,))
    assert tuple(sample.shape) == (1000, 2) and sample.dtype is strata.int64
    freq = np.bincount(sample[:, 1].numpy(), minlength=3) / 1000
    np.testing.assert_allclose(freq, t.probs[1].numpy(), atol=0.06)
    probs = strata.distributions.Categorical(probs=strata.tensor([0.2, 0.8]))
    assert_same(probs.log_prob(strata.tensor(1)),
                torch.distributions.Categorical(probs=torch.tensor([0.2, 0.8]))
                .log_prob(torch.tensor(1)))
    with pytest.raises(ValueError, match="Either `probs` or `logits`"):
        strata.distributions.Categorical()


def test_compile_returns_an_optimized_module():
    model = strata.nn.Linear(2, 2)
    compiled = strata.compile(model, backend="eager")   # tests/compile/ covers the compiler
    assert compiled._orig_mod is model
    x = strata.randn(3, 2)
    assert strata.allclose(compiled(x), model(x))
