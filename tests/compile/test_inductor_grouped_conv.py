"""Grouped and depthwise convolutions lowered (lowering_nn.py): on the CPU eager's grouped
convolution as an Extern and the bias in a fused epilogue, in the forward and in both backward
convolutions (the input gradient a grouped transposed convolution, the weight gradient a grouped
convolution with a wide kernel). Values equal eager strata's to rounding (the sums are
generated) and PyTorch's within float32 tolerance; no Fallback."""

import re

import numpy as np
import pytest
import torch
from hypothesis import Phase, given, settings
from hypothesis import strategies as st

import strata
from helpers import recording_backend

pytestmark = pytest.mark.filterwarnings("error::RuntimeWarning")


def _conv_step(m, nd, x, w, b, stride, padding, dilation, groups, backend=None):
    conv = getattr(m.nn.functional, f"conv{nd}d")

    def loss(x, w, b):
        return (m.relu(conv(x, w, b, stride, padding, dilation, groups)) * 1.5).sum()
    if backend is not None:
        loss = m.compile(loss, backend=backend)
    x, w, b = (m.tensor(a, requires_grad=True) for a in (x, w, b))
    value = loss(x, w, b)
    value.backward()
    return [t.detach().numpy() for t in (value, x.grad, w.grad, b.grad)]


@settings(max_examples=8, deadline=None, phases=(Phase.explicit, Phase.reuse, Phase.generate))
@given(nd=st.sampled_from([1, 2]), groups=st.sampled_from([2, 3]),
       per_group=st.sampled_from([(1, 1), (1, 2), (2, 1), (2, 3)]),
       stride=st.integers(1, 2), padding=st.integers(0, 2), dilation=st.integers(1, 2),
       seed=st.integers(0, 2 ** 16))
def test_grouped_convolution_training_step(nd, groups, per_group, stride, padding, dilation,
                                           seed):
    """Depthwise is ``per_group == (1, k)``: one input channel per group."""
    rng = np.random.default_rng(seed)
    channels, filters = groups * per_group[0], groups * per_group[1]
    x = rng.standard_normal((2, channels) + (7,) * nd).astype(np.float32)
    w = rng.standard_normal((filters, per_group[0]) + (3,) * nd).astype(np.float32)
    b = rng.standard_normal(filters).astype(np.float32)
    args = (nd, x, w, b, stride, padding, dilation, groups)
    runs = []
    got = _conv_step(strata, *args, backend=recording_backend(runs))
    eager = _conv_step(strata, *args)
    want = _conv_step(torch, *args)
    # the loss is a generated sum (its own summation order); the gradients run eager's
    # kernels, their bias sums and the pointwise ops between are generated: equal to rounding
    np.testing.assert_allclose(got[0], eager[0], rtol=1e-6)
    for g, e, t in zip(got, eager, want):
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(e, t, rtol=1e-4, atol=1e-4)
    for run in runs:
        assert "Fallback" not in run.ir_post_fusion
    conv = getattr(strata.nn.functional, f"conv{nd}d")
    forward = strata.compile(lambda *t: conv(*t, stride, padding, dilation, groups),
                             backend="inductor")
    tensors = [strata.tensor(a) for a in (x, w, b)]
    np.testing.assert_allclose(forward(*tensors).numpy(), conv(
        *tensors, stride, padding, dilation, groups).numpy(), rtol=1e-5, atol=1e-5)
    externs = [e for r in runs for e in re.findall(r"Extern\(<(?:OpOverload aten::|function )(\w+)",
                                                   r.ir_post_fusion)]
    # eager's grouped kernel, as Externs: the forward (with its ReLU, ``convolution_relu``),
    # the input and the weight gradients
    assert externs.count("convolution") == 2 and externs.count("convolution_relu") == 1
