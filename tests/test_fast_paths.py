"""The eager fast paths of issue 11 give exactly what the general paths give: the binary
kernels' same-dtype lane (Note [Binary fast lane]), plain calls skipping the autograd fallback
(Note [Plain calls skip autograd]) and in-place gradient accumulation (Note [In-place gradient
accumulation])."""

import numpy as np
import pytest
import torch
from helpers import assert_same, check
from hypothesis import given, settings
from hypothesis import strategies as st

import strata

BINARY = ["add", "sub", "mul", "div", "maximum", "atan2", "remainder", "special_zeta"]
DTYPES = [np.float32, np.float64, np.int64, np.int32]


def _op(m, name):
    return m.special.zeta if name == "special_zeta" else getattr(m, name)


@pytest.mark.parametrize("name", BINARY)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("transposed", [False, True])
@settings(max_examples=3, deadline=None)
@given(shape=st.sampled_from([(3,), (2, 3), (4, 1, 3)]), seed=st.integers(0, 2**16))
def test_binary_ops_twice_match_torch(name, dtype, transposed, shape, seed):
    """The first call fills the lane, the second takes it: both equal PyTorch's, strides too
    (a kernel whose NumPy function computes in another dtype must not be wrapped as is)."""
    if name in ("atan2", "special_zeta") and np.dtype(dtype).kind == "i":
        dtype = np.float32
    rng = np.random.default_rng(seed)
    a = (rng.standard_normal(shape) * 4 + 5).astype(dtype)
    b = (rng.standard_normal(shape) * 4 + 5).astype(dtype)
    if np.dtype(dtype).kind == "i":
        b[b == 0] = 1

    def fn(m, x, y):
        if transposed:
            x, y = x.transpose(0, -1), y.transpose(0, -1)
        return _op(m, name)(x, y)
    for _ in range(2):
        check(fn, a, b, check_stride=True, atol=1e-5, rtol=1e-5)


def test_alpha_checks_still_run_after_the_lane_is_filled():
    x = strata.ones(3, dtype=strata.int64)
    strata.add(x, x, alpha=2)          # fills the lane for (int64, alpha=2)
    with pytest.raises(RuntimeError, match="alpha must not be a floating point"):
        strata.add(x, x, alpha=2.0)
    with pytest.raises(RuntimeError, match="Boolean alpha only supported"):
        strata.add(x, x, alpha=True)
    with pytest.raises(RuntimeError):
        torch.add(torch.ones(3, dtype=torch.int64), torch.ones(3, dtype=torch.int64), alpha=True)


def test_no_grad_view_of_a_leaf_is_still_marked():
    """A plain-call skip must not lose the no_grad-view mark: an in-place op on such a view in
    grad mode is refused, as in PyTorch."""
    for m in (strata, torch):
        leaf = m.ones(3, 2, requires_grad=True)
        with m.no_grad():
            view = leaf[0]
        with pytest.raises(RuntimeError, match="A view was created in no_grad mode"):
            view.mul_(2)


def test_views_of_plain_tensors_in_no_grad_mode():
    base = strata.ones(4, 3)
    with strata.no_grad():
        v = base.t()[1]
    assert v._base is base and not v.requires_grad
    v.add_(1)
    assert base[:, 1].tolist() == [2.0] * 4


def test_accumulation_in_place_leaves_the_callers_tensors_alone():
    """Fan-out gradients are summed in place only when the engine alone holds them: a user's
    grad_output and a gradient kept by a hook stay as they were."""
    for m in (strata, torch):
        x = m.ones(3, requires_grad=True)
        kept = []
        h = x * 1
        h.register_hook(kept.append)
        y = h * 2 + h * 3 + h * 4
        seed = m.full((3,), 0.5)
        y.backward(seed)
        assert seed.tolist() == [0.5] * 3
        assert kept[0].tolist() == [4.5] * 3
        assert x.grad.tolist() == [4.5] * 3


def test_recurrent_weight_gradient_matches_torch():
    """A weight used at every step gets its per-step gradients summed in place."""
    rng = np.random.default_rng(0)
    w = rng.standard_normal((4, 4)).astype(np.float32)
    x0 = rng.standard_normal((2, 4)).astype(np.float32)
    grads = []
    for m in (strata, torch):
        weight = m.tensor(w, requires_grad=True)
        h = m.tensor(x0)
        for _ in range(6):
            h = (h @ weight.t()).tanh()
        h.sum().backward()
        grads.append(weight.grad)
    assert_same(grads[0], grads[1], atol=1e-5, rtol=1e-5)
