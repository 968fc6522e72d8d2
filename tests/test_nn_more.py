"""The nn layers added on top of the core set, against PyTorch: padding, resampling, shuffles,
fold, distances, InstanceNorm, LocalResponseNorm, RReLU, Softmax2d, more losses, EmbeddingBag
and gumbel_softmax. Forward values, input and parameter gradients (torch's parameters copied in),
float64 finite differences for the new functions, and the exception class for bad arguments.
Also the containers whose accessors were merged (ModuleDict, ParameterDict, Sequential)."""

import warnings

import numpy as np
import pytest
import torch
from helpers import assert_same, check, check_error
from hypothesis import given, settings
from hypothesis import strategies as st

import strata
from strata.autograd import gradcheck

RNG = np.random.default_rng(21)


def f64(*shape):
    return RNG.standard_normal(shape)


def F(m):
    return m.nn.functional


MODULE_NAMES = [
    "Upsample", "UpsamplingNearest2d", "UpsamplingBilinear2d", "PixelShuffle", "PixelUnshuffle",
    "ZeroPad1d", "ZeroPad2d", "ZeroPad3d", "ConstantPad1d", "ConstantPad2d", "ConstantPad3d",
    "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad1d",
    "ReplicationPad2d", "ReplicationPad3d", "CircularPad1d", "CircularPad2d", "CircularPad3d",
    "CosineSimilarity", "PairwiseDistance", "Softmax2d", "InstanceNorm1d", "InstanceNorm2d",
    "InstanceNorm3d", "LocalResponseNorm", "Unfold", "Fold", "TripletMarginLoss",
    "PoissonNLLLoss", "GaussianNLLLoss", "MultiLabelSoftMarginLoss", "RReLU", "ChannelShuffle",
    "EmbeddingBag",
]
FUNCTION_NAMES = ["interpolate", "pixel_shuffle", "pixel_unshuffle", "pad", "cosine_similarity",
                  "pairwise_distance", "instance_norm", "local_response_norm", "unfold", "fold",
                  "triplet_margin_loss", "poisson_nll_loss", "gaussian_nll_loss",
                  "multilabel_soft_margin_loss", "rrelu", "channel_shuffle", "embedding_bag",
                  "gumbel_softmax"]


def test_every_name_exists_and_is_torch_shaped():
    for name in MODULE_NAMES:
        assert issubclass(getattr(strata.nn, name), strata.nn.Module), name
        assert hasattr(torch.nn, name), name
    for name in FUNCTION_NAMES:
        assert callable(getattr(strata.nn.functional, name)), name
    assert callable(strata.channel_shuffle)


# --- modules: forward and backward with torch's parameters ----------------------------------------

def _run(m, module, inputs, cotangent_seed=3):
    """Forward float64 leaves through ``module``, backpropagate a fixed random cotangent, and
    return the output, the inputs' gradients and the parameters' gradients."""
    leaves = [m.tensor(x, requires_grad=np.issubdtype(x.dtype, np.floating))
              if isinstance(x, np.ndarray) else x for x in inputs]
    out = module(*leaves)
    cot = np.random.default_rng(cotangent_seed).standard_normal(tuple(out.shape))
    out.backward(m.tensor(cot))
    grads = [x.grad for x in leaves if isinstance(x, (strata.Tensor, torch.Tensor))
             and x.requires_grad]
    return out, grads, [p.grad for _, p in sorted(module.named_parameters())]


def _both(build):
    torch.manual_seed(0)
    t = build(torch.nn).double()
    s = build(strata.nn).double()
    s.load_state_dict({k: strata.tensor(v.detach().numpy()) for k, v in t.state_dict().items()})
    return s, t


def _lib(nn):
    return strata if nn is strata.nn else torch


_CLASS_WEIGHT = RNG.uniform(0.5, 2.0, 5)


def _i64(values):
    return np.asarray(values, dtype=np.int64)


MODULES = [
    ("Upsample-nearest", lambda nn: nn.Upsample(scale_factor=2), (f64(1, 2, 3, 4),)),
    ("Upsample-bilinear", lambda nn: nn.Upsample(size=(5, 7), mode="bilinear"),
     (f64(2, 2, 3, 4),)),
    ("Upsample-linear", lambda nn: nn.Upsample(scale_factor=1.5, mode="linear",
                                               align_corners=True), (f64(2, 3, 4),)),
    ("UpsamplingNearest2d", lambda nn: nn.UpsamplingNearest2d(size=5), (f64(1, 2, 3, 3),)),
    ("UpsamplingBilinear2d", lambda nn: nn.UpsamplingBilinear2d(scale_factor=2),
     (f64(1, 2, 3, 4),)),
    ("PixelShuffle", lambda nn: nn.PixelShuffle(2), (f64(2, 8, 3, 2),)),
    ("PixelUnshuffle", lambda nn: nn.PixelUnshuffle(3), (f64(2, 6, 6),)),
    ("ChannelShuffle", lambda nn: nn.ChannelShuffle(3), (f64(2, 6, 2, 3),)),
    ("ZeroPad1d", lambda nn: nn.ZeroPad1d((2, 1)), (f64(2, 3, 4),)),
    ("ZeroPad2d", lambda nn: nn.ZeroPad2d((1, 0, -1, 2)), (f64(2, 3, 4),)),
    ("ConstantPad1d", lambda nn: nn.ConstantPad1d(2, 3.5), (f64(3, 4),)),
    ("ConstantPad2d", lambda nn: nn.ConstantPad2d((1, 2, 0, 1), -1.0), (f64(1, 2, 3, 4),)),
    ("ConstantPad3d", lambda nn: nn.ConstantPad3d(1, 0.5), (f64(1, 2, 2, 3, 2),)),
    ("ReflectionPad1d", lambda nn: nn.ReflectionPad1d((3, 1)), (f64(2, 3, 5),)),
    ("ReflectionPad2d", lambda nn: nn.ReflectionPad2d(2), (f64(1, 2, 4, 3),)),
    ("ReplicationPad1d", lambda nn: nn.ReplicationPad1d(2), (f64(3, 4),)),
    ("ReplicationPad2d", lambda nn: nn.ReplicationPad2d((1, 3, 2, 0)), (f64(2, 2, 3, 3),)),
    ("CircularPad2d", lambda nn: nn.CircularPad2d((1, 2, 2, 1)), (f64(1, 2, 3, 4),)),
    ("CosineSimilarity", lambda nn: nn.CosineSimilarity(dim=0), (f64(4, 3), f64(4, 3))),
    ("PairwiseDistance", lambda nn: nn.PairwiseDistance(p=1.5, keepdim=True),
     (f64(5, 3), f64(5, 3))),
    ("Softmax2d", lambda nn: nn.Softmax2d(), (f64(2, 3, 4, 2),)),
    ("Softmax2d-unbatched", lambda nn: nn.Softmax2d(), (f64(3, 4, 2),)),
    ("InstanceNorm1d", lambda nn: nn.InstanceNorm1d(3), (f64(2, 3, 6),)),
    ("InstanceNorm1d-unbatched", lambda nn: nn.InstanceNorm1d(3, affine=True), (f64(3, 6),)),
    ("InstanceNorm2d-affine", lambda nn: nn.InstanceNorm2d(3, affine=True), (f64(2, 3, 4, 4),)),
    ("InstanceNorm2d-no-bias", lambda nn: nn.InstanceNorm2d(2, affine=True, bias=False),
     (f64(2, 2, 3, 3),)),
    ("LocalResponseNorm", lambda nn: nn.LocalResponseNorm(3), (f64(2, 5, 3, 4),)),
    ("LocalResponseNorm-3d", lambda nn: nn.LocalResponseNorm(2, alpha=0.1, beta=0.5, k=2.0),
     (f64(2, 4, 5),)),
    ("LocalResponseNorm-5d", lambda nn: nn.LocalResponseNorm(4), (f64(1, 6, 2, 3, 2),)),
    ("Unfold", lambda nn: nn.Unfold((2, 3), padding=1, stride=(1, 2)), (f64(2, 3, 4, 5),)),
    ("Fold", lambda nn: nn.Fold((4, 5), 2, stride=1), (f64(2, 12, 12),)),
    ("RReLU-eval", lambda nn: nn.RReLU(0.1, 0.3).eval(), (f64(3, 4),)),
    ("TripletMarginLoss", lambda nn: nn.TripletMarginLoss(margin=2.0, p=1.0, swap=True),
     (f64(4, 3), f64(4, 3), f64(4, 3))),
    ("TripletMarginLoss-none", lambda nn: nn.TripletMarginLoss(reduction="none"),
     (f64(4, 3), f64(4, 3), f64(4, 3))),
    ("PoissonNLLLoss", lambda nn: nn.PoissonNLLLoss(), (f64(3, 4), np.abs(f64(3, 4)))),
    ("PoissonNLLLoss-full", lambda nn: nn.PoissonNLLLoss(log_input=False, full=True,
                                                         reduction="sum"),
     (np.abs(f64(3, 4)) + 0.1, np.abs(f64(3, 4)) * 3)),
    ("GaussianNLLLoss", lambda nn: nn.GaussianNLLLoss(), (f64(3, 4), f64(3, 4),
                                                          np.abs(f64(3, 4)) + 0.1)),
    ("GaussianNLLLoss-full", lambda nn: nn.GaussianNLLLoss(full=True, reduction="none"),
     (f64(3, 4), f64(3, 4), np.abs(f64(3, 1)) + 0.1)),
    ("MultiLabelSoftMarginLoss", lambda nn: nn.MultiLabelSoftMarginLoss(),
     (f64(3, 5), (f64(3, 5) > 0).astype(np.float64))),
    ("MultiLabelSoftMarginLoss-weight",
     lambda nn: nn.MultiLabelSoftMarginLoss(weight=_lib(nn).tensor(_CLASS_WEIGHT),
                                            reduction="none"),
     (f64(3, 5), (f64(3, 5) > 0).astype(np.float64))),
    ("EmbeddingBag-mean", lambda nn: nn.EmbeddingBag(7, 3), (_i64([1, 2, 4, 5, 4, 3]),
                                                             _i64([0, 2, 2]))),
    ("EmbeddingBag-max-2d", lambda nn: nn.EmbeddingBag(7, 3, mode="max"),
     (_i64([[1, 2, 6], [0, 0, 5]]),)),
    ("EmbeddingBag-sum-padding", lambda nn: nn.EmbeddingBag(7, 3, mode="sum", padding_idx=4),
     (_i64([4, 2, 4, 5, 1, 4]), _i64([0, 1, 3]))),
    ("EmbeddingBag-last-offset",
     lambda nn: nn.EmbeddingBag(7, 3, mode="mean", include_last_offset=True),
     (_i64([1, 2, 4, 5, 4, 3]), _i64([0, 2, 2, 6]))),
]


@pytest.mark.parametrize("name,build,inputs", MODULES, ids=[m[0] for m in MODULES])
def test_module_forward_and_gradients_match_torch(name, build, inputs):
    s, t = _both(build)
    out_s, grads_s, pgrads_s = _run(strata, s, inputs)
    out_t, grads_t, pgrads_t = _run(torch, t, inputs)
    assert_same(out_s, out_t)
    assert_same(grads_s, grads_t)
    assert_same(pgrads_s, pgrads_t)
    assert repr(s) == repr(t)


def test_instance_norm_running_stats_match_torch():
    s, t = _both(lambda nn: nn.InstanceNorm1d(3, track_running_stats=True, momentum=0.3))
    x = f64(4, 3, 5)
    assert_same(s(strata.tensor(x)), t(torch.tensor(x)))
    assert_same([s.running_mean, s.running_var, s.num_batches_tracked],
                [t.running_mean, t.running_var, t.num_batches_tracked])
    s.eval(), t.eval()
    assert_same(s(strata.tensor(x)), t(torch.tensor(x)))


def test_rrelu_training_slopes_lie_in_range():
    x = strata.tensor(-np.abs(f64(200)) - 0.1)
    slopes = (strata.nn.RReLU(0.1, 0.3)(x) / x).numpy()
    assert slopes.min() >= 0.1 and slopes.max() <= 0.3 and slopes.std() > 0.01


def test_embedding_bag_from_pretrained_and_per_sample_weights():
    w = f64(5, 3)
    s = strata.nn.EmbeddingBag.from_pretrained(strata.tensor(w), mode="sum")
    t = torch.nn.EmbeddingBag.from_pretrained(torch.tensor(w), mode="sum")
    assert not s.weight.requires_grad
    idx, off, psw = _i64([0, 4, 4, 2]), _i64([0, 1]), f64(4)
    assert_same(s(strata.tensor(idx), strata.tensor(off), strata.tensor(psw)),
                t(torch.tensor(idx), torch.tensor(off), torch.tensor(psw)))


def test_embedding_bag_scale_grad_by_freq_divides_by_frequency():
    """Each row's gradient is divided by how often it occurs, as ``F.embedding`` does (PyTorch's
    CPU embedding_bag kernel scales the wrong rows here, so this is checked against embedding)."""
    idx = strata.tensor([1, 2, 4, 5, 4, 3, 6, 6])
    w1 = strata.tensor(f64(7, 3), requires_grad=True)
    w2 = strata.tensor(w1.detach().numpy(), requires_grad=True)
    F(strata).embedding_bag(idx, w1, strata.tensor([0, 3]), mode="sum",
                            scale_grad_by_freq=True).sum().backward()
    F(strata).embedding(idx, w2, scale_grad_by_freq=True).sum().backward()
    np.testing.assert_allclose(w1.grad.numpy(), w2.grad.numpy())


# --- float64 finite differences ------------------------------------------------------------------

def _leaf(x):
    return strata.tensor(x, requires_grad=True)


def test_gradcheck_new_functions():
    idx, off = strata.tensor([1, 2, 4, 0, 4, 3]), strata.tensor([0, 2, 2])
    assert gradcheck(lambda w: F(strata).embedding_bag(idx, w, off), (_leaf(f64(5, 3)),))
    assert gradcheck(lambda w: F(strata).embedding_bag(idx, w, off, mode="max"),
                     (_leaf(f64(5, 3)),))
    assert gradcheck(lambda w, p: F(strata).embedding_bag(idx, w, off, mode="sum",
                                                          per_sample_weights=p),
                     (_leaf(f64(5, 3)), _leaf(f64(6))))
    assert gradcheck(lambda x: F(strata).local_response_norm(x, 3, k=2.0),
                     (_leaf(f64(2, 4, 3)),))
    assert gradcheck(lambda x: F(strata).channel_shuffle(x, 2), (_leaf(f64(1, 4, 3)),))

    def gumbel(x):
        strata.manual_seed(1)   # the same noise at every evaluation
        return F(strata).gumbel_softmax(x, tau=0.7)
    assert gradcheck(gumbel, (_leaf(f64(3, 4)),))


# --- gumbel_softmax ------------------------------------------------------------------------------

def test_gumbel_softmax_is_softmax_of_noisy_logits():
    logits = strata.tensor(f64(4, 6))
    strata.manual_seed(5)
    u = strata.empty(4, 6, dtype=strata.float64).uniform_()
    strata.manual_seed(5)
    y = F(strata).gumbel_softmax(logits, tau=0.5, dim=0)
    gumbels = -(-(1 - u).log()).log()
    np.testing.assert_allclose(y.numpy(), ((logits + gumbels) / 0.5).softmax(0).numpy())


def test_gumbel_softmax_hard_is_one_hot_with_the_soft_gradient():
    x = strata.tensor(f64(5, 4), requires_grad=True)
    strata.manual_seed(2)
    hard = F(strata).gumbel_softmax(x, hard=True)
    strata.manual_seed(2)
    soft = F(strata).gumbel_softmax(x)
    np.testing.assert_array_equal(hard.detach().numpy(),
                                  np.eye(4)[soft.detach().numpy().argmax(-1)])
    cot = strata.tensor(f64(5, 4))
    g_hard, = strata.autograd.grad(hard, x, cot)
    g_soft, = strata.autograd.grad(soft, x, cot)
    np.testing.assert_allclose(g_hard.numpy(), g_soft.numpy())
    with pytest.warns(UserWarning, match="deprecated"):
        F(strata).gumbel_softmax(x, eps=1e-3)


# --- hypothesis: padding modules and shuffles over shapes ----------------------------------------

@settings(max_examples=30, deadline=None)
@given(st.sampled_from(["ReflectionPad", "ReplicationPad", "ZeroPad", "CircularPad"]),
       st.integers(1, 2), st.data())
def test_padding_modules_match_torch(kind, dims, data):
    spatial = [data.draw(st.integers(2, 5)) for _ in range(dims)]
    padding = tuple(data.draw(st.integers(0, 1 if kind != "ZeroPad" else 3))
                    for _ in range(2 * dims))
    batched = data.draw(st.booleans())
    x = f64(*([2] if batched else []), 3, *spatial)
    check(lambda m, a: getattr(m.nn, f"{kind}{dims}d")(padding)(a), x)


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 4), st.integers(1, 3), st.integers(1, 3))
def test_channel_shuffle_matches_torch(groups, per_group, extra_dims):
    x = f64(2, groups * per_group, *([3] * extra_dims))
    check(lambda m, a: F(m).channel_shuffle(a, groups), x)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(0, 6), min_size=0, max_size=10), st.data(),
       st.sampled_from(["sum", "mean", "max"]))
def test_embedding_bag_matches_torch(indices, data, mode):
    cuts = sorted(data.draw(st.lists(st.integers(0, len(indices)), max_size=4)))
    offsets = _i64([0] + cuts)
    w = f64(7, 3)
    check(lambda m, i, o, wt: F(m).embedding_bag(i, wt, o, mode=mode), _i64(indices), offsets, w)


# --- bad arguments raise torch's exception class -------------------------------------------------

_IDX, _OFF, _W = _i64([1, 2, 4, 5, 4, 3]), _i64([0, 2, 2, 5]), f64(6, 3)

ERRORS = [
    (lambda m, i, w, o: F(m).embedding_bag(i, w, o[1:]), (_IDX, _W, _OFF)),
    (lambda m, i, w, o: F(m).embedding_bag(i, w, o * 3), (_IDX, _W, _OFF)),
    (lambda m, i, w, o: F(m).embedding_bag(i * 2, w, o), (_IDX, _W, _OFF)),
    (lambda m, i, w, o: F(m).embedding_bag(i - 2, w, o), (_IDX, _W, _OFF)),
    (lambda m, i, w, o: F(m).embedding_bag(i.float(), w, o), (_IDX, _W, _OFF)),
    (lambda m, i, w, o: F(m).embedding_bag(i, w.int(), o), (_IDX, _W, _OFF)),
    (lambda m, i, w, o: F(m).embedding_bag(i, w, o, padding_idx=6), (_IDX, _W, _OFF)),
    (lambda m, i, w, o: F(m).embedding_bag(i, w, o, padding_idx=-7), (_IDX, _W, _OFF)),
    (lambda m, i, w, o: F(m).embedding_bag(i, w, o, mode="min"), (_IDX, _W, _OFF)),
    (lambda m, i, w, o: F(m).embedding_bag(i, w, o, mode="max", scale_grad_by_freq=True),
     (_IDX, _W, _OFF)),
    (lambda m, i, w, o: F(m).embedding_bag(i, w, o, mode="max", sparse=True), (_IDX, _W, _OFF)),
    (lambda m, i, w, o: F(m).embedding_bag(i, w, o, mode="mean", per_sample_weights=w[:, 0]),
     (_IDX, _W, _OFF)),
    (lambda m, i, w, o: F(m).embedding_bag(i, w, o, mode="sum", per_sample_weights=w[:, 0]
                                           .float()), (_IDX, _W, _OFF)),
    (lambda m, i, w, o: F(m).embedding_bag(i, w, o, per_sample_weights=w[:4, 0]),
     (_IDX, _W, _OFF)),
    (lambda m, i, w, o: F(m).embedding_bag(i, w), (_IDX, _W, _OFF)),
    (lambda m, i, w, o: F(m).embedding_bag(i.view(2, 3), w, o), (_IDX, _W, _OFF)),
    (lambda m, i, w, o: F(m).embedding_bag(i.view(1, 2, 3), w), (_IDX, _W, _OFF)),
    (lambda m, i, w, o: F(m).embedding_bag(i, w[0], o), (_IDX, _W, _OFF)),
    (lambda m, i, w, o: F(m).embedding_bag(i, w, o.view(2, 2)), (_IDX, _W, _OFF)),
    (lambda m, x: F(m).channel_shuffle(x, 0), (f64(2, 6, 3),)),
    (lambda m, x: F(m).channel_shuffle(x, 4), (f64(2, 6, 3),)),
    (lambda m, x: F(m).channel_shuffle(x, 2), (f64(2, 6),)),
    (lambda m, x: m.nn.Softmax2d()(x), (f64(2, 3),)),
    (lambda m, x: F(m).local_response_norm(x, 2), (f64(2, 3),)),
    (lambda m, x: m.nn.InstanceNorm1d(3)(x), (f64(3),)),
    (lambda m, x: m.nn.InstanceNorm2d(3, affine=True)(x), (f64(2, 4, 5, 5),)),
    (lambda m, x: m.nn.CircularPad2d(1)(x), (f64(2, 2, 3, 3, 3),)),
    (lambda m, x: m.nn.ReflectionPad1d(3)(x), (f64(2, 3),)),
    (lambda m, x: m.nn.ReplicationPad2d(1)(x), (f64(3, 3),)),
    (lambda m, x: m.nn.PixelShuffle(2)(x), (f64(1, 6, 2, 2),)),
    (lambda m, x: m.nn.Upsample(size=(2, 3, 4))(x), (f64(1, 2, 3, 4),)),
    (lambda m, x: m.nn.Upsample(scale_factor=(2.0,))(x), (f64(1, 2, 3, 4),)),
    (lambda m, x: m.nn.Fold(3, 2)(x), (f64(1, 5, 4),)),
    (lambda m, x: m.nn.TripletMarginLoss(margin=0.0)(x, x, x), (f64(2, 3),)),
    (lambda m, x: m.nn.GaussianNLLLoss()(x, x, -x.abs()), (f64(2, 3),)),
    (lambda m, x: m.nn.PoissonNLLLoss(reduction="avg")(x, x), (f64(2, 3),)),
]


@pytest.mark.parametrize("fn,inputs", ERRORS)
def test_bad_arguments_raise_like_torch(fn, inputs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_error(fn, *inputs)


def test_instance_norm_warns_when_channels_differ_without_affine():
    with pytest.warns(UserWarning, match="does not match num_features"):
        strata.nn.InstanceNorm1d(4)(strata.tensor(f64(2, 3, 5)))


# --- containers ----------------------------------------------------------------------------------

def _dict_ops(m):
    d = m.nn.ModuleDict({"a": m.nn.ReLU(), "b": m.nn.Tanh()})
    d.update([("c", m.nn.Identity())])
    popped = type(d.pop("a")).__name__
    p = m.nn.ParameterDict({"w": m.nn.Parameter(m.ones(2)), "v": m.zeros(3)})
    p.update({"u": m.ones(1)})
    del p["w"]
    return (popped, list(d.keys()), len(d), "b" in d, [type(v).__name__ for v in d.values()],
            list(p.keys()), len(p), "w" in p, p.get("w"), [tuple(v.shape) for v in p.values()],
            p.pop("v").shape, [name for name, _ in p.named_parameters()])


def _list_ops(m):
    s = m.nn.Sequential(m.nn.ReLU(), m.nn.Tanh())
    same = s.insert(1, m.nn.Identity()) is s
    s.append(m.nn.Sigmoid())
    ml = m.nn.ModuleList([m.nn.ReLU()])
    ml.insert(0, m.nn.Tanh())
    ml.append(m.nn.Identity())
    return (same, [type(x).__name__ for x in s], len(s), list(s._modules),
            [type(x).__name__ for x in ml], len(ml), list(ml._modules))


@pytest.mark.parametrize("ops", [_dict_ops, _list_ops])
def test_containers_match_torch(ops):
    s, t = ops(strata), ops(torch)
    assert str(s).replace("strata", "torch") == str(t)


@pytest.mark.parametrize("kwargs", [{"size": (2, 3, 4)}, {"scale_factor": (2.0,)}])
def test_interpolate_spatial_length_errors_match_torch(kwargs):
    s, t = check_error(lambda m, x: F(m).interpolate(x, **kwargs), f64(1, 2, 3, 4))
    assert str(s) == str(t)


def test_embedding_padding_row_skips_a_nan_gradient():
    """The padding row's gradient stays 0 even where the incoming gradient is NaN (PyTorch skips
    padding positions; it does not multiply them by 0)."""
    weight = np.random.default_rng(0).standard_normal((5, 3)).astype(np.float32)
    grads = []
    for m in (strata, torch):
        w = m.tensor(weight, requires_grad=True)
        out = m.nn.functional.embedding(m.tensor([0, 2, 2, 4]), w, padding_idx=2)
        g = m.ones_like(out)
        g[1] = float("nan")
        out.backward(g)
        grads.append(w.grad.numpy())
    np.testing.assert_array_equal(*grads)
    assert not np.isnan(grads[0]).any()
