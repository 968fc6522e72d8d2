"""Focused checks, against PyTorch, of the gaps that the training programs in tests/scripts/
(compile_autocast, seq2seq_attention, tabular_embeddings, wgan_gp, ...) and their neighbours
found: autocast's cast policies and recurrent modules, size arguments by keyword, persistent
DataLoader workers at exit, batch norm's double backward, anomaly mode. The nn, sparse and
func gaps are in test_program_gaps_nn.py. Each test names the program line that needed it."""

import numpy as np
import pytest
import torch
from helpers import assert_same
from hypothesis import given, settings
from hypothesis import strategies as st

import strata

FLOATS = {"float32": (strata.float32, torch.float32),
          "bfloat16": (strata.bfloat16, torch.bfloat16),
          "float16": (strata.float16, torch.float16),
          "float64": (strata.float64, torch.float64)}

# compile_autocast.py: `loss = F.cross_entropy(logits, yb)` under CPU autocast is float32
AUTOCAST_FP32_CALLS = {
    "cross_entropy": lambda m, x, t: m.nn.functional.cross_entropy(x, t),
    "nll_loss": lambda m, x, t: m.nn.functional.nll_loss(x.log_softmax(-1), t),
    "mse_loss": lambda m, x, t: m.nn.functional.mse_loss(x, x.detach() * 0.5),
    "l1_loss": lambda m, x, t: m.nn.functional.l1_loss(x, x.detach() * 0.5),
    "smooth_l1_loss": lambda m, x, t: m.nn.functional.smooth_l1_loss(x, x.detach() * 0.5),
    "bce_with_logits": lambda m, x, t: m.nn.functional.binary_cross_entropy_with_logits(
        x, m.ones_like(x)),
    "bce": lambda m, x, t: m.nn.functional.binary_cross_entropy(x.sigmoid(), m.ones_like(x)),
    "kl_div": lambda m, x, t: m.nn.functional.kl_div(x.log_softmax(-1), x.detach().softmax(-1),
                                                     reduction="batchmean"),
    "prod": lambda m, x, t: (x * 0.1 + 1).prod(dim=1),
    "cdist": lambda m, x, t: m.cdist(x, x),
}
# these keep the dtype they are given under autocast (no policy in PyTorch's CPU lists)
AUTOCAST_UNTOUCHED_CALLS = {
    "softmax": lambda m, x, t: m.softmax(x, dim=-1),
    "sum": lambda m, x, t: x.sum(),
    "layer_norm": lambda m, x, t: m.nn.functional.layer_norm(x, (x.shape[-1],)),
}


def _autocast_run(m, call, dtype_name, values, target):
    dtype = FLOATS[dtype_name][0 if m is strata else 1]
    x = m.tensor(values).to(dtype).requires_grad_()
    with m.autocast(device_type="cpu", dtype=m.bfloat16):
        out = call(m, x, m.tensor(target))
    out.float().sum().backward()
    return out, x.grad


@pytest.mark.parametrize("name", sorted({**AUTOCAST_FP32_CALLS, **AUTOCAST_UNTOUCHED_CALLS}))
@pytest.mark.parametrize("dtype_name", ["float32", "bfloat16", "float64"])
def test_autocast_cpu_cast_policies_match_pytorch(name, dtype_name):
    call = {**AUTOCAST_FP32_CALLS, **AUTOCAST_UNTOUCHED_CALLS}[name]
    rng = np.random.default_rng(0)
    values = rng.standard_normal((4, 6)).astype(np.float32)
    target = rng.integers(0, 6, 4)
    s_out, s_grad = _autocast_run(strata, call, dtype_name, values, target)
    t_out, t_grad = _autocast_run(torch, call, dtype_name, values, target)
    assert_same(s_out, t_out, atol=2e-2, rtol=2e-2)
    assert_same(s_grad, t_grad, atol=2e-2, rtol=2e-2)


@settings(max_examples=25, deadline=None)
@given(st.lists(st.sampled_from(["float32", "bfloat16", "float64"]), min_size=1, max_size=3),
       st.sampled_from(["cat", "stack"]))
def test_autocast_cpu_promotes_cat_and_stack_inputs(dtype_names, join):
    values = np.arange(6, dtype=np.float32).reshape(2, 3) / 7

    def run(m):
        parts = [m.tensor(values).to(FLOATS[d][0 if m is strata else 1]) for d in dtype_names]
        with m.autocast("cpu"):
            return getattr(m, join)(parts)
    assert_same(run(strata), run(torch))


def test_autocast_cpu_refuses_to_promote_bfloat16_with_float16():
    a = np.ones((2, 2), np.float32)
    for m in (strata, torch):
        parts = [m.tensor(a).bfloat16(), m.tensor(a).half()]
        with m.autocast("cpu"), pytest.raises(RuntimeError, match="prioritize"):
            m.cat(parts)


def test_is_autocast_enabled_and_dtype_follow_the_context():
    seen = {}
    for m in (strata, torch):
        states = [m.is_autocast_enabled("cpu"), m.get_autocast_dtype("cpu")]
        with m.autocast("cpu", dtype=m.float16):
            states += [m.is_autocast_enabled("cpu"), m.is_autocast_enabled(),
                       m.get_autocast_dtype("cpu")]
            with m.autocast("cpu", enabled=False):
                states.append(m.is_autocast_enabled("cpu"))
            states.append(m.is_autocast_enabled("cpu"))
        states += [m.is_autocast_enabled("cpu"), m.get_autocast_dtype("cuda")]
        seen[m] = [str(v).split(".")[-1] for v in states]
    assert seen[strata] == seen[torch]


# a program's `x.flip(dims=[1])`, `x.permute(dims=...)`: size arguments also go by keyword
SIZE_KEYWORD_CALLS = {
    "flip": lambda x: x.flip(dims=[0, 1]),
    "flip_tuple": lambda x: x.flip(dims=(1,)),
    "permute": lambda x: x.permute(dims=(1, 0)),
    "reshape": lambda x: x.reshape(shape=(3, 4)),
    "view": lambda x: x.view(size=(12,)),
    "expand": lambda x: x.expand(size=(2, 4, 3)),
    "repeat": lambda x: x.repeat(repeats=(1, 2)),
    "tile": lambda x: x.tile(dims=(2, 1)),
}
SIZE_ARGUMENT_ERRORS = {
    "flip_twice": lambda x: x.flip(0, dims=(1,)),
    "permute_twice": lambda x: x.permute(1, 0, dims=(1, 0)),
    "flip_int": lambda x: x.flip(dims=0),
    "flip_missing": lambda x: x.flip(),
    "permute_missing": lambda x: x.permute(),
    "reshape_missing": lambda x: x.reshape(),
    "expand_missing": lambda x: x.expand(),
    "repeat_missing": lambda x: x.repeat(),
    "tile_missing": lambda x: x.tile(),
}


@pytest.mark.parametrize("name", sorted(SIZE_KEYWORD_CALLS))
def test_size_arguments_by_keyword(name):
    a = np.arange(12, dtype=np.float32).reshape(4, 3)
    assert_same(SIZE_KEYWORD_CALLS[name](strata.tensor(a)),
                SIZE_KEYWORD_CALLS[name](torch.tensor(a)), check_stride=True)


@pytest.mark.parametrize("name", sorted(SIZE_ARGUMENT_ERRORS))
def test_size_argument_errors_match_pytorch(name):
    a = np.arange(12, dtype=np.float32).reshape(4, 3)
    with pytest.raises(TypeError) as t_err:
        SIZE_ARGUMENT_ERRORS[name](torch.tensor(a))
    with pytest.raises(TypeError) as s_err:
        SIZE_ARGUMENT_ERRORS[name](strata.tensor(a))
    assert str(s_err.value) == str(t_err.value)


PERSISTENT_LOADER_PROGRAM = """
import torch
from torch.utils.data import DataLoader, TensorDataset
loader = DataLoader(TensorDataset(torch.arange(8.)), batch_size=4, num_workers=2,
                    persistent_workers=True)
for epoch in range(2):
    print(epoch, [b[0].tolist() for b in loader])
"""


def test_persistent_workers_alive_at_exit_end_quietly(tmp_path):
    """A module-level loader with persistent workers is still alive when the program ends:
    multiprocessing terminates its workers then, which is no failure (PyTorch prints nothing)."""
    import subprocess
    import sys
    script = tmp_path / "persistent.py"
    script.write_text(PERSISTENT_LOADER_PROGRAM)
    runs = [subprocess.run([sys.executable, *cmd, str(script)], check=False, capture_output=True,
                           text=True, timeout=120, cwd=tmp_path)
            for cmd in ((), ("-m", "strata", "run"))]
    for run in runs:
        assert run.returncode == 0 and run.stderr == "", run.stderr
    assert runs[0].stdout == runs[1].stdout


# a WGAN-GP critic (gradient penalty through InstanceNorm/BatchNorm): the batch statistics are
# functions of the input when the backward is differentiated again
NORM_CASES = {
    "batch_norm_2d": (lambda m, x, w, b: m.nn.functional.batch_norm(
        x, None, None, w, b, training=True), (6, 3, 2, 2)),
    "batch_norm_1d": (lambda m, x, w, b: m.nn.functional.batch_norm(
        x, m.zeros(3, dtype=x.dtype), m.ones(3, dtype=x.dtype), w, b, training=True), (5, 3)),
    "instance_norm": (lambda m, x, w, b: m.nn.functional.instance_norm(x, weight=w, bias=b),
                      (2, 3, 2, 3)),
    "batch_norm_no_affine": (lambda m, x, w, b: m.nn.functional.batch_norm(
        x, None, None, None, None, training=True), (4, 3, 3)),
}


def _gradient_penalty(m, norm, x_np, w_np, b_np):
    x = m.tensor(x_np, requires_grad=True)
    w, b = m.tensor(w_np, requires_grad=True), m.tensor(b_np, requires_grad=True)
    out = norm(m, x, w, b)
    scores = (m.tanh(out) * m.arange(out.numel(), dtype=x.dtype).view(out.shape).cos()).sum()
    g, = m.autograd.grad(scores, x, create_graph=True)
    penalty = ((g.flatten(1).norm(dim=1) - 1) ** 2).mean()
    penalty.backward()
    return penalty, x.grad, w.grad, b.grad


@pytest.mark.parametrize("name", sorted(NORM_CASES))
def test_normalization_double_backward_matches_pytorch(name):
    norm, shape = NORM_CASES[name]
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape)
    w, b = rng.uniform(0.5, 1.5, shape[1]), rng.standard_normal(shape[1])
    s, t = _gradient_penalty(strata, norm, x, w, b), _gradient_penalty(torch, norm, x, w, b)
    if t[2] is None:   # no affine parameters: the normalisation ignores w and b
        assert s[2] is None and s[3] is None
        s, t = s[:2], t[:2]
    assert_same(s, t, atol=1e-10, rtol=1e-8)


@pytest.mark.parametrize("name", ["batch_norm_2d", "instance_norm"])
def test_normalization_double_backward_gradgradcheck(name):
    norm, shape = NORM_CASES[name]
    rng = np.random.default_rng(1)
    x = strata.tensor(rng.standard_normal(shape), requires_grad=True)
    w = strata.tensor(rng.uniform(0.5, 1.5, shape[1]), requires_grad=True)
    b = strata.tensor(rng.standard_normal(shape[1]), requires_grad=True)
    assert strata.autograd.gradgradcheck(lambda *a: norm(strata, *a), (x, w, b))


# an LSTMCell decoder under CPU autocast raised; LSTM/RNN outputs were float32, not bfloat16
RECURRENT_MODULES = {
    "LSTM": lambda m: m.nn.LSTM(4, 3, batch_first=True),
    "LSTM_2layer_bidirectional": lambda m: m.nn.LSTM(4, 3, num_layers=2, bidirectional=True),
    "GRU": lambda m: m.nn.GRU(4, 3, batch_first=True),
    "RNN_tanh": lambda m: m.nn.RNN(4, 3, batch_first=True),
    "RNN_relu_no_bias": lambda m: m.nn.RNN(4, 3, nonlinearity="relu", bias=False),
    "LSTMCell": lambda m: m.nn.LSTMCell(4, 3),
    "GRUCell": lambda m: m.nn.GRUCell(4, 3),
    "RNNCell": lambda m: m.nn.RNNCell(4, 3),
}


def _recurrent_run(m, name, autocast):
    module = RECURRENT_MODULES[name](m)
    rng = np.random.default_rng(0)
    with m.no_grad():
        for p in module.parameters():
            p.copy_(m.tensor(rng.uniform(-0.5, 0.5, tuple(p.shape)).astype(np.float32)))
    x = m.tensor(rng.standard_normal((2, 5, 4)).astype(np.float32))
    if name.endswith("Cell"):
        x = x[:, 0]
    with m.autocast("cpu", dtype=m.bfloat16, enabled=autocast):
        out = module(x)
    first = out[0] if isinstance(out, tuple) else out
    state = out[1] if isinstance(out, tuple) and not name.endswith("Cell") else None
    if isinstance(state, tuple):
        state = state[0]
    (first.float().sum() + (state.float().sum() if state is not None else 0)).backward()
    grads = [p.grad for p in module.parameters()]
    return [first, state] + grads if state is not None else [first] + grads


@pytest.mark.parametrize("autocast", [True, False])
@pytest.mark.parametrize("name", sorted(RECURRENT_MODULES))
def test_recurrent_modules_under_autocast_match_pytorch(name, autocast):
    tol = 3e-2 if autocast else 1e-5
    assert_same(_recurrent_run(strata, name, autocast), _recurrent_run(torch, name, autocast),
                atol=tol, rtol=tol)


def test_dist_refuses_integers_as_pytorch():
    messages = []
    for m in (strata, torch):
        with pytest.raises(RuntimeError) as err:
            m.dist(m.tensor([1, 2]), m.tensor([0, 1]))
        messages.append(str(err.value))
    assert messages[0] == messages[1]


# debugging a NaN loss: anomaly mode's NaN check names the node and the forward line
def test_anomaly_nan_check_warns_with_the_forward_line():
    seen = []
    for m in (strata, torch):
        with m.autograd.set_detect_anomaly(True):
            x = m.tensor([-1.0], requires_grad=True)
            y = m.sqrt(x)   # the forward line
            with pytest.warns(UserWarning) as record, pytest.raises(RuntimeError) as err:
                y.backward()
        warning = next(str(w.message) for w in record if "Error detected" in str(w.message))
        seen.append((str(err.value), warning.splitlines()[0], "y = m.sqrt(x)" in warning,
                     "test_program_gaps.py" in warning))
    assert seen[0] == seen[1] == (
        "Function 'SqrtBackward0' returned nan values in its 0th output.",
        "Error detected in SqrtBackward0. Traceback of forward call that caused the error:",
        True, True)
