"""The MLP step's floor row (benchmarks/compile.py, ``mlp_products``) times the products the
compiled step really runs: the same calls, shapes, layouts and pairing, in the same order."""

import itertools
import os
import sys

import numpy as np
import pytest
import torch

import strata
from strata.compile.inductor import compile_fx as cfx

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(__file__))))  # benchmarks
from benchmarks.compile import mlp_products

SIZES, BATCH = (12, 16, 16, 3), 8


def _layout(a):
    return a.shape, a.strides


def _recorded_products(monkeypatch):
    """The products of one compiled MLP step of ``SIZES``, as ``mlp_products`` lists them."""
    calls = []

    def record(fn):
        def run(*operands):
            calls.append([tuple(_layout(x) for x in operands[i:i + 3])
                          for i in range(0, len(operands), 3)])
            return fn(*operands)
        return run
    monkeypatch.setattr(cfx, "_matmul", record(cfx._matmul))        # read when a graph is
    monkeypatch.setattr(cfx, "_matmul_pair", record(cfx._matmul_pair))   # compiled
    strata.manual_seed(0)
    nn = strata.nn
    layers = []
    for n_in, n_out in itertools.pairwise(SIZES):
        layers += [nn.Linear(n_in, n_out), nn.ReLU()]
    model = nn.Sequential(*layers[:-1])
    rng = np.random.default_rng(0)
    x = strata.tensor(rng.standard_normal((BATCH, SIZES[0]), dtype=np.float32))
    y = strata.tensor(rng.integers(0, SIZES[-1], BATCH))

    def forward_backward(x, y):
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        return loss
    strata.compile(forward_backward, backend="inductor")(x, y)
    return calls


def test_floor_products_are_the_compiled_steps(monkeypatch):
    want = [[tuple(_layout(x) for x in triple) for triple in call]
            for call in mlp_products(batch=BATCH, sizes=SIZES)]
    got = _recorded_products(monkeypatch)
    assert got == want
    assert [len(call) for call in got] == [1, 1, 1, 2, 2, 1]   # two Linear backwards paired


def test_floor_products_compute_what_their_shapes_say():
    for call in mlp_products(np.random.default_rng(1), batch=BATCH, sizes=SIZES):
        for a, b, out in call:
            cfx._matmul(a, b, out)
            np.testing.assert_allclose(out, a @ b, rtol=1e-5, atol=1e-5)


def test_a_saved_weight_modified_before_backward_raises_as_in_torch():
    """The forward saves a Linear's weight for its backward as the input tensor itself (no
    ``as_strided`` view: compile_fx's ``Wrapper.view``); an in-place change of it before the
    backward is caught by its version counter, as PyTorch catches it."""
    messages = []
    for m in (strata, torch):
        m.manual_seed(0)
        model = m.nn.Sequential(m.nn.Linear(6, 5), m.nn.ReLU(), m.nn.Linear(5, 3))

        def loss_of(x, model=model):
            return model(x).sum()
        run = strata.compile(loss_of, backend="inductor") if m is strata else loss_of
        loss = run(m.ones(4, 6))
        with m.no_grad():
            model[2].weight.add_(1)
        with pytest.raises(RuntimeError, match="modified by an inplace operation") as error:
            loss.backward()
        messages.append(str(error.value))
        assert model[2].weight.grad is None and model[0].weight.grad is None
    for message in messages:
        assert "is at version 2; expected version 1 instead" in message
