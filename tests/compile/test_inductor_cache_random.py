"""Graphs with random ops are stored in the graph cache: a fresh process with a warm cache
lowers nothing and draws what a cold one draws, which is what eager draws from the same seed.
Dropout's mask and ``rand_like`` are generated kernels (Note [Random draws]); other random ops
(``bernoulli`` of a tensor of probabilities) are ``seeded_random`` steps, stored by name."""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

SRC = Path(__file__).resolve().parents[2] / "src"

TRAIN = """
import json, sys, strata
from strata import config
from strata.compile.inductor import graph
config.cache_dir = sys.argv[1]
lowered = []
run = graph.GraphLowering.run
graph.GraphLowering.run = lambda self: lowered.append(1) or run(self)
strata.manual_seed(0)
model = strata.nn.Sequential(strata.nn.Linear(8, 32), strata.nn.Dropout(0.4),
                             strata.nn.Linear(32, 3))
x = strata.randn(1, 8)
def step(x):
    out = model(x)
    noise = strata.rand_like(out) + strata.bernoulli(strata.full_like(out, 0.3))
    loss = (out * (1 + noise)).square().mean()
    loss.backward()
    return loss
def run_step(fn):
    model.zero_grad(set_to_none=True)
    strata.manual_seed(11)
    loss = fn(x)
    return [float(loss), model[0].weight.grad.flatten().tolist(), strata.rand(2).tolist()]
compiled = run_step(strata.compile(step, backend="inductor"))
print(json.dumps({"compiled": compiled, "eager": run_step(step), "lowered": len(lowered)}))
"""


def test_warm_process_loads_dropout_graphs_and_draws_the_same(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    runs = []
    for _ in range(2):
        done = subprocess.run([sys.executable, "-c", TRAIN, str(tmp_path)], env=env,
                              capture_output=True, text=True, timeout=300, check=False)
        assert done.returncode == 0, done.stderr
        runs.append(json.loads(done.stdout.splitlines()[-1]))
    cold, warm = runs
    assert cold["lowered"] == 2 and warm["lowered"] == 0    # forward and backward from cache
    assert warm["compiled"] == cold["compiled"]
    loss, grad, after = cold["compiled"]
    eager_loss, eager_grad, eager_after = cold["eager"]
    np.testing.assert_allclose(loss, eager_loss, rtol=1e-5)
    np.testing.assert_allclose(grad, eager_grad, rtol=1e-4, atol=1e-6)
    assert after == eager_after      # the generator advanced as eager advances it
    assert 0.0 in grad               # dropout zeroed some hidden units' gradients
    entries = [json.loads(p.read_text()) for p in (tmp_path / "fxgraph").glob("*.json")]
    assert any(["named", "seeded_random"] in e["targets"].values() for e in entries)
    assert any("strata_pcg_bits53(s0)" in e["source"] for e in entries)
