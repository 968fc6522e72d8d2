"""PyTorch surface everyday programs reach for (issue 11 §3), each against PyTorch."""

import math

import numpy as np
import pytest
import strata
import torch
from helpers import assert_same, check_outcome


def test_constants():
    for name in ("inf", "nan", "pi", "e", "newaxis"):
        s, t = getattr(strata, name), getattr(torch, name)
        assert (s is t is None) or s == t or (math.isnan(s) and math.isnan(t)), name
    assert strata.ones(3)[strata.newaxis].shape == (1, 3)


def test_variable():
    from strata.autograd import Variable as SV
    from torch.autograd import Variable as TV
    for V, m in ((SV, strata), (TV, torch)):
        x = m.ones(2)
        v = V(x, requires_grad=True)
        assert v is not x and v.requires_grad and v.is_leaf and not x.requires_grad
        assert isinstance(x, V) and type(v) is m.Tensor
        assert V().shape == (0,)
        y = m.ones(2, requires_grad=True) * 2
        assert V(y).grad_fn is None and not V(y).requires_grad
    check_outcome(lambda m: m.autograd.Variable([1.0, 2.0]))
    check_outcome(lambda m: m.autograd.Variable(m.arange(3), requires_grad=True))


def test_set_default_device():
    try:
        for m in (strata, torch):
            m.set_default_device("meta")
            assert m.ones(2).device.type == "meta" and m.get_default_device().type == "meta"
            with m.device("cpu"):
                assert m.zeros(1).device.type == "cpu"
            assert m.empty(1).device.type == "meta"
            m.set_default_device(None)
            assert m.ones(1).device.type == "cpu" and str(m.get_default_device()) == "cpu"
    finally:
        strata.set_default_device(None)
        torch.set_default_device(None)


@pytest.mark.parametrize("dtype", ["float32", "int64", "bool"])
def test_apply_(dtype):
    data = (np.arange(6).reshape(2, 3) % 4).astype(dtype)
    outs = []
    for m in (strata, torch):
        x = m.tensor(data).t()             # non-contiguous: written through its strides
        out = x.apply_(lambda v: not v if isinstance(v, bool) else v * 3 + 1)
        assert out is x and x._version == 0
        outs.append(x)
    assert_same(*outs)
    check_outcome(lambda m: m.ones(2, requires_grad=True).apply_(lambda v: v))
    check_outcome(lambda m: m.ones(2).apply_(3))
