"""The nn modules and functions PyTorch has that strata lacked (found by running ordinary
programs against both): HingeEmbeddingLoss, SoftMarginLoss, MultiLabelMarginLoss (and
F.multilabel_margin_loss), TripletMarginWithDistanceLoss (and its F function), NLLLoss2d,
Hardshrink, Softshrink, Dropout3d, FeatureAlphaDropout; values, gradients and errors against
PyTorch."""

import numpy as np
import pytest
import torch
from helpers import assert_same, check_error

import strata

X = np.random.default_rng(0).standard_normal((6, 4)).astype(np.float32)
LABELS = [[[3, 0, -1, 1]] * 6, [[0, 1, 2, 3]] * 6, [[-1, 0, 1, 2]] * 6,
          [[2, 2, -1, 0], [1, -1, 3, 3], [0, 1, 2, -1], [3, 2, 1, 0], [-1, -1, -1, -1],
           [1, 1, 1, 1]]]


def _with_grad(m, fn):
    x = m.tensor(X, requires_grad=True)
    out = fn(m, x)
    (grad,) = m.autograd.grad(out.sum(), x)
    return out, grad


@pytest.mark.parametrize("labels", LABELS)
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_multilabel_margin_loss_matches_torch(labels, reduction):
    def loss(m, x):
        return m.nn.MultiLabelMarginLoss(reduction=reduction)(x, m.tensor(labels))
    for got, want in zip(_with_grad(strata, loss), _with_grad(torch, loss)):
        assert_same(got, want, atol=1e-6, rtol=1e-6)
    one = [m.nn.functional.multilabel_margin_loss(m.tensor(X[0]), m.tensor(labels[0]))
           for m in (strata, torch)]
    assert_same(*one, atol=1e-6, rtol=1e-6)


@pytest.mark.parametrize("target, message", [
    ([[5, 0, -1, 1]] * 6, "argument #2 'target' is out of range"),
    ([[3, -1, -5, 0]] * 6, "argument #2 'target' is out of range"),
    ([[3, 0, -1]] * 6, r"inconsistent target size: \[6, 3\] for input of size: \[6, 4\]"),
])
def test_multilabel_margin_loss_errors_match_torch(target, message):
    for m in (strata, torch):
        with pytest.raises(RuntimeError, match=message):
            m.nn.functional.multilabel_margin_loss(m.tensor(X), m.tensor(target))


@pytest.mark.parametrize("swap", [False, True])
@pytest.mark.parametrize("custom", [False, True])
def test_triplet_margin_with_distance_loss_matches_torch(swap, custom):
    def loss(m, x):
        distance = (lambda a, b: (a - b).abs().amax(1)) if custom else None
        module = m.nn.TripletMarginWithDistanceLoss(distance_function=distance, margin=0.7,
                                                    swap=swap, reduction="none")
        return module(x, x.flip(0) * 0.5, x.roll(1, 0))
    for got, want in zip(_with_grad(strata, loss), _with_grad(torch, loss)):
        assert_same(got, want, atol=1e-6, rtol=1e-6)
    for m in (strata, torch):
        with pytest.raises(ValueError, match="expected margin to be greater than 0, got 0"):
            m.nn.TripletMarginWithDistanceLoss(margin=0)
        with pytest.raises(RuntimeError, match="anchor 2D, positive 1D, and negative 2D"):
            m.nn.functional.triplet_margin_with_distance_loss(m.ones(2, 3), m.ones(3),
                                                              m.ones(2, 3))


@pytest.mark.parametrize("make", [
    lambda m, x: m.nn.HingeEmbeddingLoss(margin=0.5)(x, m.sign(x)),
    lambda m, x: m.nn.SoftMarginLoss(reduction="sum")(x, m.sign(x.detach())),
    lambda m, x: m.nn.NLLLoss2d()(x.reshape(1, 6, 2, 2).log_softmax(1),
                                  m.tensor([[[0, 5], [2, 1]]])),
    lambda m, x: m.nn.Hardshrink(0.3)(x),
    lambda m, x: m.nn.Softshrink(0.3)(x),
    lambda m, x: m.nn.Dropout3d(0.5).eval()(x.reshape(1, 2, 3, 2, 2)),
    lambda m, x: m.nn.FeatureAlphaDropout(0.5).eval()(x),
    lambda m, x: m.nn.Dropout3d(0.0)(x.reshape(1, 2, 3, 2, 2)),
], ids=["hinge", "soft_margin", "nll2d", "hardshrink", "softshrink", "dropout3d",
        "feature_alpha_dropout", "dropout3d_p0"])
def test_modules_match_torch(make):
    for got, want in zip(_with_grad(strata, make), _with_grad(torch, make)):
        assert_same(got, want, atol=1e-6, rtol=1e-6)


def test_shrink_modules_print_as_torchs():
    for name in ("Hardshrink", "Softshrink"):
        assert repr(getattr(strata.nn, name)(0.3)) == repr(getattr(torch.nn, name)(0.3))


def _adaptive(m):
    rng = np.random.default_rng(0)
    module = m.nn.AdaptiveLogSoftmaxWithLoss(8, 20, [4, 10, 15], div_value=2.0, head_bias=True)
    with m.no_grad():
        for p in module.parameters():
            p.copy_(m.tensor(rng.standard_normal(tuple(p.shape)).astype(np.float32) * 0.5))
    x = m.tensor(rng.standard_normal((7, 8)).astype(np.float32), requires_grad=True)
    target = m.tensor([0, 3, 4, 9, 10, 19, 14])
    output, loss = module(x, target)
    loss.backward()
    one = module(x[0], target[0])
    return (output, loss, x.grad, module.tail[1][0].weight.grad, module.log_prob(x),
            module.predict(x), one.output, one.loss,
            sorted(name for name, _ in module.named_parameters()))


def test_adaptive_log_softmax_with_loss_matches_torch():
    for got, want in zip(_adaptive(strata), _adaptive(torch)):
        if isinstance(want, list):
            assert got == want
        else:
            assert_same(got, want, atol=1e-6, rtol=1e-6)


def test_adaptive_log_softmax_with_loss_errors_match_torch():
    x = np.random.default_rng(1).standard_normal((3, 8)).astype(np.float32)
    for m in (strata, torch):
        module = m.nn.AdaptiveLogSoftmaxWithLoss(8, 20, [4, 10])
        with pytest.raises(RuntimeError, match=r"Target values should be in \[0, 19\], but "
                                               r"values in range \[0, 20\] were found"):
            module(m.tensor(x), m.tensor([0, 20, 3]))
        with pytest.raises(RuntimeError, match="same size in the batch dimension"):
            module(m.tensor(x), m.tensor([0, 1]))
        for cutoffs in ([], [4, 2], [0, 3], [4, 20], [3, 3]):
            with pytest.raises(ValueError, match="cutoffs should be a sequence"):
                m.nn.AdaptiveLogSoftmaxWithLoss(8, 20, cutoffs)


@pytest.mark.parametrize("size,channels", [(3, 7), (5, 3), (4, 6), (2, 5), (7, 2)])
def test_cross_map_lrn2d_forward_and_backward_are_pytorchs(size, channels):
    """The legacy module's own running-sum forward and hand-written backward, edges included."""
    rng = np.random.default_rng(size * 10 + channels)
    x = rng.standard_normal((2, channels, 3, 4))
    g = rng.standard_normal((2, channels, 3, 4))
    out = []
    for m in (torch, strata):
        xt = m.tensor(x, requires_grad=True)
        y = m.nn.CrossMapLRN2d(size, 1e-1, 0.75, 1.5)(xt)
        (y * m.tensor(g)).sum().backward()
        out.append((y.detach().numpy(), xt.grad.numpy()))
    for a, b in zip(out[1], out[0], strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
    assert repr(strata.nn.CrossMapLRN2d(3)) == repr(torch.nn.CrossMapLRN2d(3))
    check_error(lambda m: m.nn.CrossMapLRN2d(3)(m.ones(2, 3, 4)), match="Expected input to be 4D")


@pytest.mark.parametrize("config", [
    {}, {"bias": True}, {"reduction": "sum", "ignore_index": 1}, {"reduction": "none"},
    {"k_dim": True, "label_smoothing": 0.1}, {"k_dim": True, "reduction": "none", "bias": True},
    {"probabilities": True}, {"unbatched": True}, {"class_weight": True},
])
def test_linear_cross_entropy_values_and_gradients_are_pytorchs(config):
    rng = np.random.default_rng(len(config) * 7 + sum(map(len, config)))
    config = dict(config)
    k_dim, probabilities = config.pop("k_dim", False), config.pop("probabilities", False)
    unbatched, bias = config.pop("unbatched", False), config.pop("bias", False)
    class_weight = config.pop("class_weight", False)
    x = rng.standard_normal(4 if unbatched else (5, 4))
    w = rng.standard_normal((3, 2, 4) if k_dim else (3, 4))
    b = rng.standard_normal(w.shape[:-1])
    if probabilities:
        p = rng.uniform(size=(5, 3))
        target = p / p.sum(-1, keepdims=True)
    else:
        target = rng.integers(0, 3, () if unbatched else ((5, 2) if k_dim else 5))
    out = []
    for m in (torch, strata):
        xt, wt = m.tensor(x, requires_grad=True), m.tensor(w, requires_grad=True)
        bt = m.tensor(b, requires_grad=True) if bias else None
        kwargs = dict(config, linear_bias=bt)
        if class_weight:
            kwargs["weight"] = m.tensor([0.5, 2.0, 1.0], dtype=m.float64)
        loss = m.nn.functional.linear_cross_entropy(xt, wt, m.tensor(target), **kwargs)
        loss.sum().backward()
        out.append([loss.detach().numpy(), xt.grad.numpy(), wt.grad.numpy()] +
                   ([bt.grad.numpy()] if bias else []))
    for a, b_ in zip(out[1], out[0], strict=True):
        np.testing.assert_allclose(a, b_, rtol=1e-12, atol=1e-12)


def test_linear_cross_entropy_loss_module_and_errors():
    strata.manual_seed(0)
    module = strata.nn.LinearCrossEntropyLoss(4, 3, out_features=(2,), bias=True)
    assert module.linear.weight.shape == (6, 4) and module.linear.bias.shape == (6,)
    loss = module(strata.randn(5, 4), strata.randint(0, 3, (5, 2)))
    assert loss.shape == () and loss.requires_grad
    assert "out_features=(2,)" in repr(module)
    assert isinstance(strata.nn.LinearCrossEntropyOptions(), strata.nn.LinearCrossEntropyOptions)
    x, w = np.ones((5, 4)), np.ones((3, 4))
    for bad in (lambda m: m.nn.functional.linear_cross_entropy(m.tensor(x)[None], m.tensor(w),
                                                               m.zeros(5, dtype=m.long)),
                lambda m: m.nn.functional.linear_cross_entropy(m.tensor(x), m.tensor(w)[0],
                                                               m.zeros(5, dtype=m.long)),
                lambda m: m.nn.functional.linear_cross_entropy(m.tensor(x), m.tensor(w)[:, :3],
                                                               m.zeros(5, dtype=m.long)),
                lambda m: m.nn.LinearCrossEntropyLoss(4, 3, label_smoothing=2),
                lambda m: m.nn.LinearCrossEntropyLoss(4, 3, weight=m.ones(2))):
        check_error(bad, match=".")
