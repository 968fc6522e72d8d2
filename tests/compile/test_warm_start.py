"""A fresh process with a warm cache: the min-cut partition is read from the cache (no networkx
import, no cut), and a damaged or missing entry is cut again with the same result."""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

import strata
from strata import config
from strata.compile.aot import partitioners

SRC = Path(__file__).resolve().parents[2] / "src"

TRAIN = """
import sys, strata
from strata import config
config.cache_dir = sys.argv[1]
strata.manual_seed(0)
model = strata.nn.Sequential(strata.nn.Linear(8, 16), strata.nn.GELU(), strata.nn.Linear(16, 3))
def step(x, y):
    loss = strata.nn.functional.cross_entropy(model(x), y)
    loss.backward()
    return loss
loss = strata.compile(step)(strata.randn(4, 8), strata.tensor([0, 2, 1, 0]))
print(float(loss), float(model[0].weight.grad.sum()), "networkx" in sys.modules)
"""


def test_warm_process_skips_the_cut_and_networkx(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    runs = [subprocess.run([sys.executable, "-c", TRAIN, str(tmp_path)], env=env,
                           capture_output=True, text=True, timeout=300, check=False)
            for _ in range(2)]
    for run in runs:
        assert run.returncode == 0, run.stderr
    (cold, cold_grad, cold_nx), (warm, warm_grad, warm_nx) = (r.stdout.split() for r in runs)
    assert cold_nx == "True" and warm_nx == "False"
    assert (cold, cold_grad) == (warm, warm_grad)
    assert len(list((tmp_path / "partition").glob("*.json"))) == 1


def _step(m, w, x):
    return (m.nn.functional.gelu(x @ w).tanh() * 3).softmax(-1).square().sum()


def test_cached_cut_is_the_cut_and_damage_cuts_again(tmp_path, monkeypatch):
    monkeypatch.setattr(config, "cache_dir", str(tmp_path))
    rng = np.random.default_rng(0)
    w, x = rng.standard_normal((6, 5)).astype(np.float32), rng.standard_normal((3, 6))
    x = x.astype(np.float32)
    cuts = []
    original = partitioners._min_cut
    monkeypatch.setattr(partitioners, "_min_cut", lambda *a: cuts.append(1) or original(*a))
    tw = torch.tensor(w, requires_grad=True)
    _step(torch, tw, torch.tensor(x)).backward()

    def compiled_grad():
        strata._dynamo.reset()    # compile again in this process: only the cache remembers
        sw = strata.tensor(w, requires_grad=True)
        strata.compile(lambda w, x: _step(strata, w, x))(sw, strata.tensor(x)).backward()
        return sw.grad.numpy()
    first = compiled_grad()
    assert len(cuts) == 1
    np.testing.assert_allclose(first, tw.grad.numpy(), rtol=1e-4, atol=1e-6)
    np.testing.assert_array_equal(compiled_grad(), first)
    assert len(cuts) == 1                                   # read from the cache
    (entry,) = (tmp_path / "partition").glob("*.json")
    entry.write_text('["not", "the", "cut"]')
    with pytest.warns(RuntimeWarning, match="damaged or does not match"):
        np.testing.assert_array_equal(compiled_grad(), first)
    assert len(cuts) == 2                                   # cut again, stored again
    np.testing.assert_array_equal(compiled_grad(), first)
    assert len(cuts) == 2
