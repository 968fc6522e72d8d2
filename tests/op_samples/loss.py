"""Sample inputs for the ops of ``ops/loss.py``."""

import numpy as np

from op_samples import Sample

_rng = np.random.default_rng(2468)
nan, inf = float("nan"), float("inf")
NONE, MEAN, SUM = 0, 1, 2


def _f(*shape, dtype=np.float32):
    return _rng.standard_normal(shape).astype(dtype)


def _u(*shape, dtype=np.float32):
    return _rng.random(shape).astype(dtype)


def _t(n_classes, *shape):
    return _rng.integers(0, n_classes, shape).astype(np.int64)


def aten(m):
    return m.ops.aten


def f16(m, x):
    return x.to(m.float16)


def bf16(m, x):
    return x.to(m.bfloat16)


X, Y = _f(3, 4), _f(3, 4)
X64, Y64 = _f(2, 5, dtype=np.float64), _f(2, 5, dtype=np.float64)
ROW = _f(4)
E = np.zeros((0, 4), np.float32)
LOGP = _f(5, 4)
T = np.array([0, 3, 1, 2, 3])
T_IGN = np.array([0, -100, 1, -100, 3])
W = _u(4) + 0.5
LOGP3, T3 = _f(2, 4, 3), _t(4, 2, 3)               # (N, C, d1)
LOGP4, T4 = _f(2, 3, 2, 2), _t(3, 2, 2, 2)         # (N, C, H, W)
LOGP5, T5 = _f(2, 3, 2, 1, 2), _t(3, 2, 2, 1, 2)
PROBS = _u(3, 4)
PROBS /= PROBS.sum(1, keepdims=True)
P_IN = np.array([[0.0, 0.3, 1.0, 0.9], [0.5, 1e-8, 0.999, 0.2]], np.float32)
P_T = np.array([[1.0, 0.0, 0.0, 1.0], [0.5, 1.0, 0.0, 0.25]], np.float32)
TARGET_PM = np.array([1.0, -1.0, 1.0], np.float32)


def _reductions(fn, inputs, name=""):
    """The same call with reduction none, mean and sum."""
    return [Sample(lambda m, *a, r=r: fn(m, *a, r), inputs, name=f"{name}{label}")
            for r, label in ((NONE, "none"), (MEAN, "mean"), (SUM, "sum"))]


SAMPLES = {
    "aten::mse_loss": [
        *_reductions(lambda m, x, y, r: aten(m).mse_loss.default(x, y, r), (X, Y)),
        Sample(lambda m, x, y: aten(m).mse_loss.default(x, y), (X64, Y64), name="f64_default"),
        Sample(lambda m, x, y: aten(m).mse_loss.default(x, y, NONE), (X, Y[0]), name="bcast"),
        Sample(lambda m, x, y: aten(m).mse_loss.default(f16(m, x), f16(m, y)), (X, Y),
               name="f16"),
        Sample(lambda m, x, y: aten(m).mse_loss.default(x, y), (X, Y.astype(np.float64)),
               name="promote"),
        Sample(lambda m, x, y: aten(m).mse_loss.default(x, y), (E, E), name="empty_mean"),
        Sample(lambda m, x, y: aten(m).mse_loss.default(x, y, SUM), (E, E), name="empty_sum"),
    ],
    "aten::l1_loss": [
        *_reductions(lambda m, x, y, r: aten(m).l1_loss.default(x, y, r), (X, Y)),
        Sample(lambda m, x, y: aten(m).l1_loss.default(x, y, NONE),
               (_t(9, 3, 2), _t(9, 3, 2)), name="int_none"),
        Sample(lambda m, x, y: aten(m).l1_loss.default(bf16(m, x), bf16(m, y)), (X, Y),
               name="bf16"),
    ],
    "aten::smooth_l1_loss": [
        *_reductions(lambda m, x, y, r: aten(m).smooth_l1_loss.default(x, y, r), (X, Y)),
        Sample(lambda m, x, y: aten(m).smooth_l1_loss.default(x, y, MEAN, 0.3), (X64, Y64),
               name="beta"),
        Sample(lambda m, x, y: aten(m).smooth_l1_loss.default(x, y, NONE, 0.0), (X, Y),
               name="beta0"),
    ],
    "aten::huber_loss": [
        *_reductions(lambda m, x, y, r: aten(m).huber_loss.default(x, y, r), (X, Y)),
        Sample(lambda m, x, y: aten(m).huber_loss.default(x, y, SUM, 0.4), (X64, Y64),
               name="delta"),
    ],
    # --- nll and cross entropy -------------------------------------------------------------------
    "aten::nll_loss_forward": [
        *_reductions(lambda m, x, t, r: aten(m).nll_loss_forward.default(x, t, None, r, -100),
                     (LOGP, T)),
        *_reductions(lambda m, x, t, w, r: aten(m).nll_loss_forward.default(x, t, w, r, -100),
                     (LOGP, T_IGN, W), name="weight_ignore_"),
        Sample(lambda m, x, t: aten(m).nll_loss_forward.default(x, t, None, MEAN, 1),
               (LOGP, T), name="ignore_index_1"),
        Sample(lambda m, x, t: aten(m).nll_loss_forward.default(x, t, None, MEAN, -100),
               (LOGP, np.full(5, -100)), name="all_ignored"),
        Sample(lambda m, x, t: aten(m).nll_loss_forward.default(x, t, None, NONE, -100),
               (ROW, np.array(2)), name="1d"),
        Sample(lambda m, x, t: aten(m).nll_loss_forward.default(x, t, None, MEAN, -100),
               (ROW, np.array([3])), name="1d_target1"),
        Sample(lambda m, x, t: aten(m).nll_loss_forward.default(x, t.to(m.uint8), None, SUM,
                                                                 -100), (LOGP, T), name="uint8"),
        Sample(lambda m, x, t: aten(m).nll_loss_forward.default(x, t, None, MEAN, -100),
               (E, np.zeros(0, np.int64)), name="empty"),
        Sample(lambda m, x, t, w: aten(m).nll_loss_forward.default(x, t, w, MEAN, -100),
               (LOGP.astype(np.float64), T, W.astype(np.float64)), name="f64"),
        Sample(lambda m, x, t: aten(m).nll_loss_forward.default(f16(m, x), t, None, MEAN, -100),
               (LOGP, T), name="f16"),
    ],
    "aten::nll_loss_backward": [
        Sample(lambda m, g, x, t, w, tw: aten(m).nll_loss_backward.default(
            g, x, t, w, MEAN, -100, tw), (np.array(1.5, np.float32), LOGP, T_IGN, W,
                                          np.array(2.5, np.float32)), name="mean_weight"),
        Sample(lambda m, g, x, t: aten(m).nll_loss_backward.default(
            g, x, t, None, NONE, -100, m.tensor(0.0)), (_f(5), LOGP, T_IGN), name="none"),
        Sample(lambda m, g, x, t: aten(m).nll_loss_backward.default(
            g, x, t, None, SUM, -100, m.tensor(3.0)), (np.array(2.0, np.float32), LOGP, T),
            name="sum"),
        Sample(lambda m, g, x, t: aten(m).nll_loss_backward.default(
            g, x, t, None, MEAN, -100, m.tensor(1.0)), (np.array(1.0, np.float32), ROW,
                                                       np.array(1)), name="1d"),
    ],
    "aten::nll_loss": [
        Sample(lambda m, x, t: m.nn.functional.nll_loss(x, t), (LOGP, T), name="mean"),
        Sample(lambda m, x, t, w: m.nn.functional.nll_loss(x, t, w, reduction="sum"),
               (LOGP, T_IGN, W), name="weight_sum"),
    ],
    "aten::nll_loss_nd": [
        *_reductions(lambda m, x, t, r: aten(m).nll_loss_nd.default(x, t, None, r), (LOGP3, T3),
                     name="3d_"),
        *_reductions(lambda m, x, t, w, r: aten(m).nll_loss_nd.default(x, t, w, r), (LOGP4, T4,
                                                                                  W[:3]),
                     name="4d_"),
        Sample(lambda m, x, t: aten(m).nll_loss_nd.default(x, t, None, NONE), (LOGP5, T5),
               name="5d_none"),
        Sample(lambda m, x, t: aten(m).nll_loss_nd.default(x, t, None, MEAN, 0), (LOGP5, T5),
               name="5d_ignore"),
        Sample(lambda m, x, t: aten(m).nll_loss_nd.default(x, t), (ROW, np.array(1)), name="1d"),
    ],
    "aten::cross_entropy_loss": [
        Sample(lambda m, x, t: m.nn.functional.cross_entropy(x, t), (LOGP, T), name="mean"),
        Sample(lambda m, x, t, w: m.nn.functional.cross_entropy(x, t, w, ignore_index=0,
                                                                reduction="none"),
               (LOGP, T, W), name="weight_ignore_none"),
        Sample(lambda m, x, t: m.nn.functional.cross_entropy(x, t, label_smoothing=0.2),
               (LOGP, T_IGN), name="smoothing_mean"),
        Sample(lambda m, x, t, w: m.nn.functional.cross_entropy(x, t, w, label_smoothing=0.1),
               (LOGP, T_IGN, W), name="smoothing_weight"),
        Sample(lambda m, x, t: m.nn.functional.cross_entropy(x, t, reduction="sum",
                                                             label_smoothing=0.3),
               (LOGP, T), name="smoothing_sum"),
        Sample(lambda m, x, t: m.nn.functional.cross_entropy(x, t, reduction="none",
                                                             label_smoothing=0.3),
               (LOGP4, T4), name="smoothing_4d_none"),
        Sample(lambda m, x, t: m.nn.functional.cross_entropy(x, t), (LOGP3, T3), name="3d"),
        Sample(lambda m, x, t: m.nn.functional.cross_entropy(x, t), (ROW, np.array(2)),
               name="1d"),
        Sample(lambda m, x, p: m.nn.functional.cross_entropy(x, p), (X, PROBS), name="probs"),
        Sample(lambda m, x, p, w: m.nn.functional.cross_entropy(x, p, w, reduction="none",
                                                                label_smoothing=0.1),
               (X, PROBS, W), name="probs_weight_smoothing"),
        Sample(lambda m, x, p: m.nn.functional.cross_entropy(x, p, reduction="sum"),
               (ROW, PROBS[0]), name="probs_1d"),
        Sample(lambda m, x, p: m.nn.functional.cross_entropy(x, p), (E, E), name="probs_empty"),
        Sample(lambda m, x, t: m.nn.functional.cross_entropy(x, t), (LOGP.astype(np.float64), T),
               name="f64"),
    ],
    # --- binary -----------------------------------------------------------------------------------
    "aten::binary_cross_entropy": [
        *_reductions(lambda m, x, t, r: aten(m).binary_cross_entropy.default(x, t, None, r),
                     (P_IN, P_T)),
        Sample(lambda m, x, t, w: aten(m).binary_cross_entropy.default(x, t, w), (P_IN, P_T,
                                                                                  _u(4)),
               name="weight_bcast"),
        Sample(lambda m, x, t: aten(m).binary_cross_entropy.default(x, t),
               (_u(3, 2, dtype=np.float64), _u(3, 2, dtype=np.float64)), name="f64"),
        Sample(lambda m, x, t: aten(m).binary_cross_entropy.default(f16(m, x), f16(m, t)),
               (_u(3, 2), _u(3, 2)), name="f16"),
    ],
    "aten::binary_cross_entropy_backward": [
        Sample(lambda m, g, x, t: aten(m).binary_cross_entropy_backward.default(g, x, t),
               (np.array(1.0, np.float32), _u(3, 4), P_T.repeat(2, 0)[:3]), name="mean"),
        Sample(lambda m, g, x, t, w: aten(m).binary_cross_entropy_backward.default(
            g, x, t, w, NONE), (_f(2, 4), P_IN, P_T, _u(4)), name="none_weight"),
    ],
    "aten::binary_cross_entropy_with_logits": [
        *_reductions(lambda m, x, t, r: m.binary_cross_entropy_with_logits(x, t, None, None, r),
                     (X * 10, _u(3, 4))),
        Sample(lambda m, x, t, w, pw: m.binary_cross_entropy_with_logits(x, t, w, pw),
               (X, _u(3, 4), _u(4), _u(4) * 3), name="weights"),
        Sample(lambda m, x, t, pw: m.binary_cross_entropy_with_logits(x, t, pos_weight=pw,
                                                                      reduction=NONE),
               (X64, _u(2, 5, dtype=np.float64), np.array([2.0])), name="f64_pos_weight"),
        Sample(lambda m, x, t: m.binary_cross_entropy_with_logits(bf16(m, x), bf16(m, t)),
               (X, _u(3, 4)), name="bf16"),
    ],
    # --- divergences ------------------------------------------------------------------------------
    "aten::kl_div": [
        *_reductions(lambda m, x, t, r: m.kl_div(x, t, r), (np.log(PROBS), _u(3, 4))),
        Sample(lambda m, x, t: m.kl_div(x, t, log_target=True), (np.log(PROBS), X),
               name="log_target"),
        Sample(lambda m, x, t: m.kl_div(x, t, NONE),
               (X[:2], np.array([[0.0, 1.0, -1.0, 0.5], [nan, 0.0, 2.0, 0.0]], np.float32)),
               name="zero_negative_target"),
        Sample(lambda m, x, t: m.kl_div(x, t), (X64, np.abs(Y64)), name="f64"),
    ],
    "aten::poisson_nll_loss": [
        *_reductions(lambda m, x, t, r: m.poisson_nll_loss(x, t, True, False, 1e-8, r),
                     (X, np.abs(Y) * 3)),
        Sample(lambda m, x, t: m.poisson_nll_loss(x, t, False, False, 1e-8, MEAN),
               (_u(3, 4) + 0.1, np.abs(Y)), name="rate_input"),
        Sample(lambda m, x, t: m.poisson_nll_loss(x, t, True, True, 1e-8, NONE),
               (X64, np.abs(Y64) * 4), name="full"),
    ],
    # --- margins ----------------------------------------------------------------------------------
    "aten::cosine_embedding_loss": [
        *_reductions(lambda m, a, b, t, r: m.cosine_embedding_loss(a, b, t, 0.1, r),
                     (X, Y, TARGET_PM)),
        Sample(lambda m, a, b, t: m.cosine_embedding_loss(a, b, t), (ROW, _f(4),
                                                                     np.array(-1.0, np.float32)),
               name="1d"),
        Sample(lambda m, a, b, t: m.cosine_embedding_loss(a, b, t, -0.5), (X64, Y64,
                                                                           np.array([1.0, -1.0])),
               name="f64"),
    ],
    "aten::margin_ranking_loss": [
        *_reductions(lambda m, a, b, t, r: m.margin_ranking_loss(a, b, t, 0.2, r),
                     (X[0], Y[0], np.sign(_f(4)))),
        Sample(lambda m, a, b, t: m.margin_ranking_loss(a, b, t), (X64, Y64, np.sign(X64)),
               name="f64"),
    ],
    "aten::hinge_embedding_loss": [
        *_reductions(lambda m, x, t, r: m.hinge_embedding_loss(x, t, 1.0, r),
                     (X, np.sign(_f(3, 4)))),
        Sample(lambda m, x, t: m.hinge_embedding_loss(x, t, margin=0.5), (X64, np.sign(Y64)),
               name="margin"),
    ],
    "aten::multi_margin_loss": [
        *_reductions(lambda m, x, t, r: aten(m).multi_margin_loss.default(x, t, 1, 1, None, r),
                     (LOGP, T)),
        Sample(lambda m, x, t, w: m.nn.functional.multi_margin_loss(x, t, p=2, margin=0.5,
                                                                   weight=w),
               (LOGP.astype(np.float64), T, np.array([0.5, 1.0, 2.0, 1.5])), name="p2_weight"),
        Sample(lambda m, x, t: m.nn.functional.multi_margin_loss(x, t, reduction="none"),
               (ROW, np.array(2)), name="vector"),
    ],
    "aten::soft_margin_loss": [
        *_reductions(lambda m, x, t, r: aten(m).soft_margin_loss.default(x, t, r),
                     (X, np.sign(_f(3, 4)))),
        Sample(lambda m, x, t: aten(m).soft_margin_loss.default(x, t), (X64, np.sign(Y64)),
               name="f64"),
    ],
    "aten::triplet_margin_loss": [
        *_reductions(lambda m, a, p, n, r: m.triplet_margin_loss(a, p, n, 1.0, 2, 1e-6, False, r),
                     (X, Y, _f(3, 4))),
        Sample(lambda m, a, p, n: m.triplet_margin_loss(a, p, n, 0.5, 1, 1e-6, True),
               (X, Y, _f(3, 4)), name="swap_p1"),
        Sample(lambda m, a, p, n: m.triplet_margin_loss(a, p, n), (ROW, _f(4), _f(4)),
               name="1d"),
    ],
}


def _log_softmax(shape, seed, dtype=np.float32):
    x = np.random.default_rng(seed).standard_normal(shape)
    return (x - np.log(np.exp(x).sum(-1, keepdims=True))).astype(dtype)


SAMPLES["aten::ctc_loss.IntList"] = [   # through log_softmax: PyTorch's gradient w.r.t.
    # log_probs is not the partial derivative, but agrees with it once log_softmax is applied
    Sample(lambda m, x, t: m.nn.functional.ctc_loss(x.log_softmax(2), t, [6, 5], [3, 2]),
           (_log_softmax((6, 2, 5), 1), np.array([[1, 2, 2], [3, 1, 0]])), meta=False),
    Sample(lambda m, x, t: m.nn.functional.ctc_loss(x.log_softmax(2), t, [4, 4], [2, 1],
                                                    reduction="none"),
           (_log_softmax((4, 2, 3), 2, np.float64), np.array([1, 2, 2])), meta=False,
           name="concatenated"),
]
