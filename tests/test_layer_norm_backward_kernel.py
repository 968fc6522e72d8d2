"""The CPU kernel of ``native_layer_norm_backward`` (backends/cpu/normalization.py: the input
gradient from a generated row kernel, NumPy for the rest) against torch's, for each output mask,
with and without the affine parameters, over several dtypes, shapes (one normalized dim or
two, an empty batch) and layouts (a transposed input takes the NumPy formula, a transposed
gradient alone is copied for the row kernel), and through
autograd's double backward."""

import numpy as np
import pytest
import torch

import strata


def _array(out):
    """The float32 values of an output; None for None or torch's undefined tensor."""
    try:
        return None if out is None else out.float().numpy()
    except RuntimeError:
        return None


TOL = {"float32": 2e-5, "float64": 1e-12, "float16": 2e-2, "bfloat16": 5e-2}


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("shape, normalized", [((6, 5, 8), [8]), ((3, 4, 6), [4, 6]),
                                               ((7,), [7]), ((0, 4), [4]), ((40, 33), [33])])
@pytest.mark.parametrize("affine", [True, False])
@pytest.mark.parametrize("mask", [[True, True, True], [True, False, False],
                                  [False, True, True]])
@pytest.mark.parametrize("transposed", ["none", "both", "grad"])
def test_matches_torch(dtype, shape, normalized, affine, mask, transposed):
    if not affine:     # no parameter, no gradient to ask for (torch's op raises if asked)
        mask = [mask[0], False, False]
    rng = np.random.default_rng(0)
    x, g = (rng.standard_normal(shape).astype(np.float32) for _ in range(2))
    w, b = (rng.standard_normal(normalized).astype(np.float32) for _ in range(2))
    results = []
    for m in (strata, torch):
        dt = getattr(m, dtype)
        tx, tg = m.tensor(x).to(dt), m.tensor(g).to(dt)
        if transposed != "none" and len(shape) > 1:    # the same values, a transposed layout
            tg = tg.transpose(0, -1).contiguous().transpose(0, -1)
            if transposed == "both":
                tx = tx.transpose(0, -1).contiguous().transpose(0, -1)
        tw, tb = (m.tensor(w).to(dt), m.tensor(b).to(dt)) if affine else (None, None)
        _, mean, rstd = m.ops.aten.native_layer_norm(tx, normalized, tw, tb, 1e-5)
        out = m.ops.aten.native_layer_norm_backward(tg, tx, normalized, mean, rstd, tw, tb, mask)
        results.append([_array(o) for o in out])
        if m is strata:
            assert all(o is None or o.dtype is dt for o in out)
    for k, (s, t) in enumerate(zip(*results)):
        if not mask[k]:
            assert s is None
            continue
        assert s is not None and s.shape == t.shape
        np.testing.assert_allclose(s, t, rtol=TOL[dtype], atol=TOL[dtype] * 10)


def test_gradients_match_finite_differences_twice():
    x = strata.randn(3, 5, dtype=strata.float64, requires_grad=True)
    w = strata.randn(5, dtype=strata.float64, requires_grad=True)
    b = strata.randn(5, dtype=strata.float64, requires_grad=True)
    f = lambda x, w, b: strata.nn.functional.layer_norm(x, (5,), w, b)
    assert strata.autograd.gradcheck(f, (x, w, b))
    assert strata.autograd.gradgradcheck(f, (x, w, b))
