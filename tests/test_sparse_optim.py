"""Sparse gradients (``nn.Embedding(sparse=True)``) through the optimizers, against PyTorch:
SGD (momentum, nesterov, dampening, maximize) and Adagrad (lr_decay, maximize) update only the
named rows as PyTorch's single-tensor paths do; the optimizers without a sparse path raise
PyTorch's errors before any state changes. Also the hybrid sparse tensors those paths build
(``sparse_coo_tensor`` with values of more than one dim) and ``sparse_mask``."""

import warnings

import numpy as np
import pytest
import strata
import torch

BATCHES = ([[1, 2, 1]], [[3, 1, 0]], [[2, 2, 5]], [[4, 4, 4]])


def train(m, optimizer, **options):
    """The embedding's weight, and each optimizer state tensor (dense), after a few steps."""
    emb = m.nn.Embedding(6, 3, sparse=True)
    with m.no_grad():
        emb.weight.copy_(m.tensor(np.arange(18, dtype=np.float32).reshape(6, 3) / 10 - 0.7))
    opt = getattr(m.optim, optimizer)(emb.parameters(), **options)
    for batch in BATCHES:
        opt.zero_grad()
        (emb(m.tensor(batch)) ** 2).sum().backward()
        opt.step()
    state = {k: (v.to_dense() if v.is_sparse else v).detach().numpy()
             for k, v in opt.state[emb.weight].items() if k != "step"}
    return emb.weight.detach().numpy(), state


@pytest.mark.parametrize("optimizer,options", [
    ("SGD", {"lr": 0.1}),
    ("SGD", {"lr": 0.1, "momentum": 0.9}),
    ("SGD", {"lr": 0.1, "momentum": 0.9, "nesterov": True}),
    ("SGD", {"lr": 0.1, "momentum": 0.5, "dampening": 0.3, "maximize": True}),
    ("SGD", {"lr": 0.1, "momentum": 0.9, "foreach": True}),
    ("Adagrad", {"lr": 0.1}),
    ("Adagrad", {"lr": 0.1, "lr_decay": 0.1, "maximize": True, "eps": 1e-3}),
    ("Adagrad", {"lr": 0.1, "initial_accumulator_value": 0.5, "foreach": True}),
])
def test_sparse_updates_match_torch(optimizer, options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")        # torch's sparse invariant-check notice
        want_weight, want_state = train(torch, optimizer, **options)
    weight, state = train(strata, optimizer, **options)
    np.testing.assert_allclose(weight, want_weight, rtol=1e-6, atol=1e-6)
    assert state.keys() == want_state.keys()
    for name, value in state.items():
        np.testing.assert_allclose(value, want_state[name], rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("optimizer,options,message", [
    ("Adam", {}, "Adam does not support sparse gradients, please consider SparseAdam"),
    ("AdamW", {}, "Adam does not support sparse gradients, please consider SparseAdam"),
    ("RMSprop", {}, "RMSprop does not support sparse gradients"),
    ("Adamax", {}, "Adamax does not support sparse gradients"),
    ("NAdam", {}, "NAdam does not support sparse gradients"),
    ("Adagrad", {"weight_decay": 0.1},
     "weight_decay option is not compatible with sparse gradients"),
    ("SGD", {"weight_decay": 0.1}, r"add\(sparse, dense\) is not supported"),
])
def test_optimizers_without_a_sparse_path_raise_torchs_error(optimizer, options, message):
    for m in (torch, strata):
        emb = m.nn.Embedding(6, 3, sparse=True)
        opt = getattr(m.optim, optimizer)(emb.parameters(), lr=0.1, **options)
        emb(m.tensor([[1, 2]])).sum().backward()
        before = emb.weight.detach().clone()
        with pytest.raises(RuntimeError, match=message):
            opt.step()
        if m is strata:                          # nothing changed: weight and state
            np.testing.assert_array_equal(emb.weight.detach().numpy(), before.numpy())
            state = opt.state[emb.weight]
            assert "step" not in state or float(state["step"]) == 0


def test_hybrid_sparse_tensors_match_torch():
    idx, vals = np.array([[1, 3, 1]]), np.arange(6, dtype=np.float32).reshape(3, 2)
    for size in ((5, 2), ()):
        s = strata.sparse_coo_tensor(strata.tensor(idx), strata.tensor(vals), *size and (size,))
        t = torch.sparse_coo_tensor(torch.tensor(idx), torch.tensor(vals), *size and (size,))
        assert tuple(s.shape) == tuple(t.shape)
        assert (s.sparse_dim(), s.dense_dim()) == (t.sparse_dim(), t.dense_dim())
        np.testing.assert_array_equal(s.to_dense().numpy(), t.to_dense().numpy())
        np.testing.assert_array_equal(s.coalesce()._values().numpy(),
                                      t.coalesce()._values().numpy())
    for size, message in (((5, 3), r"values has incorrect size, expected \[3, 3\], got \[3, 2\]"),
                          ((5,), "len\\(size\\) = 1, sparse_dim = 1, dense_dim = 1")):
        for m in (torch, strata):
            with pytest.raises(RuntimeError, match=message):
                m.sparse_coo_tensor(m.tensor(idx), m.tensor(vals), size)


def test_sparse_mask_and_in_place_scaling_match_torch():
    idx, vals = np.array([[1, 3, 1]]), np.ones((3, 2), np.float32)
    dense = np.arange(10, dtype=np.float32).reshape(5, 2)
    results = {}
    for m in (torch, strata):
        s = m.sparse_coo_tensor(m.tensor(idx), m.tensor(vals), (5, 2))
        masked = m.tensor(dense).sparse_mask(s)
        scaled = s.clone()
        assert scaled.mul_(0.5) is scaled
        results[m.__name__] = (masked._values().numpy(), masked.is_coalesced(),
                               m.tensor(dense).sparse_mask(s.coalesce()).is_coalesced(),
                               scaled.to_dense().numpy())
        with pytest.raises(RuntimeError, match="operands have incompatible sizes"):
            m.zeros(5, 3).sparse_mask(s)
    for got, want in zip(results["strata"], results["torch"]):
        np.testing.assert_array_equal(got, want)
