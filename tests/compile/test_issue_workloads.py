"""Issue 9's tiny GPT as its text words it (benchmarks/training.py ``_gpt``: masked_fill of a
``tril`` buffer, GELU MLP, AdamW), smaller: compiled training steps match eager strata and
PyTorch's eager steps from the same weights."""

import sys
from pathlib import Path

import numpy as np
import torch

import strata

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from benchmarks.training import _gpt  # noqa: E402


def _steps(m, built, compiled, n=3):
    """The first step's gradients and every step's loss (Adam's parameters are not compared:
    its update of a near-zero gradient turns float rounding into a sign)."""
    model, opt, x, y = built

    def forward_backward(x, y):
        loss = m.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        return loss.detach()
    run = strata.compile(forward_backward, backend="inductor") if compiled else forward_backward
    losses, grads = [], None
    for _ in range(n):
        opt.zero_grad()
        losses.append(float(run(x, y)))
        if grads is None:
            grads = [p.grad.numpy().copy() for p in model.parameters()]
        opt.step()
    return losses, grads


def test_issue_gpt_compiled_matches_eager_and_torch():
    sizes = dict(context=16, batch=2, d_model=32, layers=2)
    strata.manual_seed(0)
    built = _gpt(strata, **sizes)
    eager = _gpt(strata, **sizes)
    eager[0].load_state_dict(built[0].state_dict())
    theirs = _gpt(torch, **sizes)
    for p, q in zip(built[0].parameters(), theirs[0].parameters()):
        q.data = torch.tensor(p.detach().numpy())
    got, want, ref = (_steps(strata, built, True), _steps(strata, eager, False),
                      _steps(torch, theirs, False))
    np.testing.assert_allclose(got[0], want[0], rtol=1e-5)
    np.testing.assert_allclose(got[0], ref[0], rtol=1e-4)
    for a, b, c in zip(got[1], want[1], ref[1]):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6)
        np.testing.assert_allclose(a, c, rtol=1e-4, atol=1e-6)
