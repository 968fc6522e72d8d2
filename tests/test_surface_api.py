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


def _grads(fn, *arrays):
    """``fn(m, *tensors)`` and the gradients of its sum (weighted by an arange), per library."""
    out = []
    for m in (strata, torch):
        ts = [m.tensor(a, requires_grad=a.dtype.kind == "f") for a in arrays]
        y = fn(m, *ts)
        w = m.arange(1, y.numel() + 1, dtype=y.dtype).reshape(y.shape) / y.numel()
        (y * w).sum().backward()
        out.append((y.detach(), [t.grad for t in ts if t.requires_grad]))
    (sy, sg), (ty, tg) = out
    assert_same(sy, ty, atol=1e-5, rtol=1e-4)
    for a, b in zip(sg, tg):
        assert_same(a, b, atol=1e-5, rtol=1e-4)


def test_rms_norm_values_gradients_and_errors(rng):
    x, w = rng.standard_normal((2, 3, 4)), rng.standard_normal(4)
    _grads(lambda m, x, w: m.nn.functional.rms_norm(x, (4,), w), x, w)
    _grads(lambda m, x: m.nn.functional.rms_norm(x, (3, 4), eps=1e-3), x)
    module = [m.nn.RMSNorm(4) for m in (strata, torch)]
    assert_same(module[0](strata.tensor(x)), module[1](torch.tensor(x)))
    for fn in (lambda m: m.nn.functional.rms_norm(m.ones(2, 3), (4,)),
               lambda m: m.nn.functional.rms_norm(m.ones(2, 3), (3,), m.ones(2)),
               lambda m: m.nn.functional.rms_norm(m.ones(2, 3).long(), (3,)),
               lambda m: m.nn.functional.rms_norm(m.ones(2, 3), ())):
        err = check_outcome(fn)
        assert str(err) == str(_torch_error(fn))


def _torch_error(fn):
    try:
        fn(torch)
    except Exception as e:  # noqa: BLE001
        return e
    raise AssertionError("torch did not raise")
