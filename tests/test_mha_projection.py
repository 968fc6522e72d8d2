"""MultiheadAttention's in-projection against torch in each packing case: self-attention (query
is key is value: one linear over the whole in_proj_weight), encoder-decoder (key is value) and
three distinct inputs, batch_first or not, batched or not, with and without bias; the outputs and
the gradients of inputs and parameters."""

import numpy as np
import pytest
import torch
from helpers import assert_same
from test_nn_module import both

import strata


def _inputs(m, case, shape, rng):
    def make():
        return m.tensor(rng.standard_normal(shape).astype(np.float32), requires_grad=True)
    q = make()
    if case == "self":
        return q, q, q
    k = make()
    if case == "cross":
        return q, k, k
    return q, k, make()


@pytest.mark.parametrize("case", ["self", "cross", "distinct"])
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("batched", [True, False])
@pytest.mark.parametrize("bias", [True, False])
def test_projection_cases_match_torch(case, batch_first, batched, bias):
    s, t = both(lambda nn: nn.MultiheadAttention(8, 2, bias=bias, batch_first=batch_first))
    shape = ((3, 5, 8) if batch_first else (5, 3, 8)) if batched else (5, 8)
    ins_s = _inputs(strata, case, shape, np.random.default_rng(0))
    ins_t = _inputs(torch, case, shape, np.random.default_rng(0))
    out_s, w_s = s(*ins_s)
    out_t, w_t = t(*ins_t)
    assert_same(out_s, out_t, atol=1e-5, rtol=1e-4)
    assert_same(w_s, w_t, atol=1e-5, rtol=1e-4)
    (out_s.square().sum() + w_s.sum()).backward()
    (out_t.square().sum() + w_t.sum()).backward()
    for a, b in zip({id(x): x for x in ins_s}.values(), {id(x): x for x in ins_t}.values()):
        assert_same(a.grad, b.grad, atol=1e-4, rtol=1e-3)
    for (name, p_s), (_, p_t) in zip(s.named_parameters(), t.named_parameters()):
        assert_same(p_s.grad, p_t.grad, atol=1e-4, rtol=1e-3), name


def test_separate_kv_dims_match_torch():
    s, t = both(lambda nn: nn.MultiheadAttention(8, 2, kdim=4, vdim=6))
    rng = np.random.default_rng(1)
    arrays = [rng.standard_normal(shape).astype(np.float32)
              for shape in ((5, 3, 8), (7, 3, 4), (7, 3, 6))]
    out_s, _ = s(*(strata.tensor(a) for a in arrays))
    out_t, _ = t(*(torch.tensor(a) for a in arrays))
    assert_same(out_s, out_t, atol=1e-5, rtol=1e-4)


def test_self_attention_runs_one_projection_gemm(monkeypatch):
    """The packed path: one linear over the whole (3E, E) weight for q, k and v, as torch's."""
    from strata.nn.modules import activation
    shapes = []
    linear = activation.F.linear

    def counting(x, w, b=None):
        shapes.append(tuple(w.shape))
        return linear(x, w, b)
    monkeypatch.setattr(activation.F, "linear", counting)
    mha = strata.nn.MultiheadAttention(8, 2, batch_first=True)
    x = strata.randn(2, 5, 8)
    mha(x, x, x, need_weights=False)
    assert shapes == [(24, 8), (8, 8)]      # in_proj (q, k, v at once), then out_proj
