"""Focused checks, against PyTorch, of the gaps that the training programs in tests/scripts/
(vae_digits, dcgan, resnet_cnn, seq2seq_attention, tabular_embeddings, compile_autocast) found.
Each test names the program line that needed it."""

import numpy as np
import pytest
import strata
import torch
from helpers import assert_same
from hypothesis import given, settings
from hypothesis import strategies as st

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
