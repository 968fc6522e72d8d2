"""``nn.functional``: losses.

The functions take ``torch.nn.functional``'s arguments (``reduction='mean'|'sum'|'none'``, and the
deprecated ``size_average``/``reduce`` pair) and call the aten loss ops with the reduction enum.
``gaussian_nll_loss`` and ``multilabel_soft_margin_loss`` have no aten op in PyTorch either: they
are written here over other ops, as in ``torch/nn/functional.py``.
"""

import math
import warnings

from ...autograd import no_grad
from ...core import dtype as D
from ...core.shape import broadcast_shapes
from ...ops import activation as A
from ...ops import factory as FA
from ...ops import loss as L
from ...ops import meta_rules as R
from ...ops import pointwise as P
from ...ops import shape as S
from ...ops.dense import pairwise_distance as _pairwise_distance
from ...ops.op import aten

__all__ = [
    "ctc_loss",
    "mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "nll_loss", "cross_entropy",
    "binary_cross_entropy", "binary_cross_entropy_with_logits", "kl_div", "poisson_nll_loss",
    "gaussian_nll_loss", "cosine_embedding_loss", "margin_ranking_loss", "hinge_embedding_loss",
    "soft_margin_loss", "multilabel_soft_margin_loss", "multi_margin_loss", "triplet_margin_loss",
    "multilabel_margin_loss", "triplet_margin_with_distance_loss",
]

_ENUM = {"none": L.NONE, "mean": L.MEAN, "sum": L.SUM}


def _enum(reduction):
    if reduction == "elementwise_mean":
        warnings.warn("reduction='elementwise_mean' is deprecated. Please use reduction='mean' "
                      "instead.", stacklevel=3)
        return L.MEAN
    try:
        return _ENUM[reduction]
    except (KeyError, TypeError):
        raise ValueError(f"{reduction} is not a valid value for reduction") from None


def _legacy(size_average, reduce):
    """The reduction the deprecated ``size_average``/``reduce`` flags mean."""
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    reduction = "mean" if size_average and reduce else "sum" if reduce else "none"
    warnings.warn(f"size_average and reduce args will be deprecated, please use "
                  f"reduction='{reduction}' instead.", stacklevel=3)
    return reduction


def _reduction(size_average, reduce, reduction):
    if size_average is not None or reduce is not None:
        reduction = _legacy(size_average, reduce)
    return _enum(reduction)


def _broadcast(input, target):
    """Warn like PyTorch when the shapes differ, then expand both to the broadcast shape."""
    if tuple(target.shape) != tuple(input.shape):
        warnings.warn(f"Using a target size ({target.size()}) that is different to the input "
                      f"size ({input.size()}). This will likely lead to incorrect results due "
                      f"to broadcasting. Please ensure they have the same size.", stacklevel=3)
        shape = broadcast_shapes(tuple(input.shape), tuple(target.shape))
        return S.broadcast_to(input, shape), S.broadcast_to(target, shape)
    return input, target


def _weighted(errors, weight, input, reduction, mean_by_weight=True):
    """The ``weight=`` path of mse/l1/huber: weighted errors; 'mean' divides by sum(weight)
    (mse, l1) or by the element count (huber), as PyTorch does."""
    if tuple(weight.shape) != tuple(input.shape):
        raise ValueError("Weights and input must have the same size.")
    weighted = P.mul(errors, weight)
    if reduction == "none":
        return weighted
    if reduction == "sum":
        return aten.sum.dim_IntList(weighted)
    if reduction == "mean" and mean_by_weight:
        return P.div(aten.sum.dim_IntList(weighted), aten.sum.dim_IntList(weight))
    if reduction == "mean":
        return aten.mean.dim(weighted)
    raise ValueError(f"Invalid reduction mode: {reduction}. Expected one of 'none', 'mean', "
                     f"'sum'.")


# --- regression -----------------------------------------------------------------------------------

def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    if size_average is not None or reduce is not None:
        reduction = _legacy(size_average, reduce)
    input, target = _broadcast(input, target)
    if weight is not None:
        diff = P.sub(input, target)
        return _weighted(P.mul(diff, diff), weight, input, reduction)
    return L.mse_loss(input, target, _enum(reduction))


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    if size_average is not None or reduce is not None:
        reduction = _legacy(size_average, reduce)
    input, target = _broadcast(input, target)
    if weight is not None:
        return _weighted(P.abs(P.sub(input, target)), weight, input, reduction)
    return L.l1_loss(input, target, _enum(reduction))


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    reduction = _reduction(size_average, reduce, reduction)
    input, target = _broadcast(input, target)
    if beta == 0.0:
        return L.l1_loss(input, target, reduction)
    return L.smooth_l1_loss(input, target, reduction, beta)


def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    input, target = _broadcast(input, target)
    if weight is not None:
        return _weighted(L.huber_loss(input, target, L.NONE, delta), weight, input, reduction,
                         mean_by_weight=False)
    return L.huber_loss(input, target, _enum(reduction), delta)


# --- classification -------------------------------------------------------------------------------

def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
             reduction="mean"):
    return L.nll_loss_nd(input, target, weight, _reduction(size_average, reduce, reduction),
                         ignore_index)


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean",
             zero_infinity=False):
    """Connectionist Temporal Classification: ``log_probs`` (T, N, C) log-softmaxed, targets
    (N, S) padded or 1-D concatenated, lengths as tensors or lists."""
    return L.ctc_loss(log_probs, targets, _lengths(input_lengths), _lengths(target_lengths),
                      blank, _reduction(None, None, reduction), zero_infinity)


def _lengths(lengths):
    """CTC lengths as a list: a tensor (0-d for an unbatched input), a sequence or an int."""
    lengths = lengths.tolist() if hasattr(lengths, "tolist") else lengths
    return [lengths] if isinstance(lengths, int) else list(lengths)


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
                  reduction="mean", label_smoothing=0.0):
    return L.cross_entropy_loss(input, target, weight,
                                _reduction(size_average, reduce, reduction), ignore_index,
                                label_smoothing)


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None,
                         reduction="mean"):
    reduction = _reduction(size_average, reduce, reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Using a target size ({target.size()}) that is different to the input "
                         f"size ({input.size()}) is deprecated. Please ensure they have the same "
                         f"size.")
    if weight is not None:
        weight = S.broadcast_to(weight, broadcast_shapes(tuple(target.shape),
                                                         tuple(weight.shape)))
    return L.binary_cross_entropy(input, target, weight, reduction)


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None,
                                     reduction="mean", pos_weight=None):
    reduction = _reduction(size_average, reduce, reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Target size ({target.size()}) must be the same as input size "
                         f"({input.size()})")
    return L.binary_cross_entropy_with_logits(input, target, weight, pos_weight, reduction)


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None,
                                reduction="mean"):
    if size_average is not None or reduce is not None:
        reduction = _legacy(size_average, reduce)
    # -(y * log_sigmoid(x) + (1 - y) * log_sigmoid(-x)), averaged over the classes
    loss = P.neg(P.add(P.mul(target, A.log_sigmoid(input)),
                       P.mul(P.sub(1, target), A.log_sigmoid(P.neg(input)))))
    if weight is not None:
        loss = P.mul(loss, weight)
    class_dim = input.dim() - 1
    loss = P.div(aten.sum.dim_IntList(loss, [class_dim]), input.size(class_dim))
    if reduction == "none":
        return loss
    if reduction == "mean":
        return aten.mean.dim(loss)
    if reduction == "sum":
        return aten.sum.dim_IntList(loss)
    raise ValueError(f"{reduction} is not valid")


# --- divergences and likelihoods ------------------------------------------------------------------

def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    if size_average is not None or reduce is not None:
        reduction_enum = _enum(_legacy(size_average, reduce))
    else:
        if reduction == "mean":
            warnings.warn(
                "reduction: 'mean' divides the total loss by both the batch size and the support "
                "size.'batchmean' divides only by the batch size, and aligns with the KL div math "
                "definition.'mean' will be changed to behave the same as 'batchmean' in the next "
                "major release.", stacklevel=2)
        reduction_enum = L.SUM if reduction == "batchmean" else _enum(reduction)
    reduced = L.kl_div(input, target, reduction_enum, log_target=log_target)
    if reduction == "batchmean" and input.dim() != 0:
        reduced = P.div(reduced, input.size(0))
    return reduced


def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8,
                     reduce=None, reduction="mean"):
    if size_average is not None or reduce is not None:
        reduction = _legacy(size_average, reduce)
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return L.poisson_nll_loss(input, target, log_input, full, eps, _enum(reduction))


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    if isinstance(var, float):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = P.mul(FA.full(tuple(input.shape), 1.0, dtype=input.dtype, device=input.device),
                    var)
    elif bool(aten.any.dims(P.lt(var, 0))):
        raise ValueError("var has negative entry/entries")
    if tuple(var.shape) != tuple(input.shape):
        if tuple(input.shape[:-1]) == tuple(var.shape):
            var = S.unsqueeze(var, -1)   # one variance per sample, shared by the last dim
        elif not (input.dim() == var.dim() and
                  sum(v for i, v in zip(input.shape, var.shape) if i != v) == 1):
            raise ValueError("var is of incorrect size")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    # Clamp for stability without letting the clamp into the gradient (as PyTorch does).
    var = FA.clone(var)
    with no_grad():
        P.clamp_(var, eps)
    loss = P.mul(P.add(P.log(var), P.div(P.pow(P.sub(input, target), 2), var)), 0.5)
    if full:
        loss = P.add(loss, 0.5 * math.log(2 * math.pi))
    if reduction == "mean":
        return aten.mean.dim(loss)
    if reduction == "sum":
        return aten.sum.dim_IntList(loss)
    return loss


# --- margins and embeddings -----------------------------------------------------------------------

def cosine_embedding_loss(input1, input2, target, margin=0, size_average=None, reduce=None,
                          reduction="mean"):
    return L.cosine_embedding_loss(input1, input2, target, margin,
                                   _reduction(size_average, reduce, reduction))


def margin_ranking_loss(input1, input2, target, margin=0, size_average=None, reduce=None,
                        reduction="mean"):
    reduction = _reduction(size_average, reduce, reduction)
    if input1.dim() != input2.dim() or input1.dim() != target.dim():
        raise RuntimeError(
            f"margin_ranking_loss : All input tensors should have same dimension but got sizes: "
            f"input1: {input1.size()}, input2: {input2.size()}, target: {target.size()} ")
    return L.margin_ranking_loss(input1, input2, target, margin, reduction)


def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None,
                         reduction="mean"):
    return L.hinge_embedding_loss(input, target, margin,
                                  _reduction(size_average, reduce, reduction))


def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None,
                      reduce=None, reduction="mean"):
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    return L.multi_margin_loss(input, target, p, margin, weight,
                               _reduction(size_average, reduce, reduction))


def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    return L.soft_margin_loss(input, target, _reduction(size_average, reduce, reduction))


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False,
                        size_average=None, reduce=None, reduction="mean"):
    reduction = _reduction(size_average, reduce, reduction)
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    return L.triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap, reduction)


def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """``sum over the target labels j and the other classes i of max(0, 1 - (x[y_j] - x[i]))``
    over the class count, per sample (ATen's ``multilabel_margin_loss``): ``target`` holds
    class indices, ended by the first -1. Written with differentiable ops."""
    reduction = _reduction(size_average, reduce, reduction)
    if target.dtype is not D.int64:
        raise RuntimeError(f"expected scalar type Long but found {R.type_name(target.dtype)}")
    if input.ndim > 2 or tuple(target.shape) != tuple(input.shape):
        raise RuntimeError(f"inconsistent target size: {list(target.shape)} for input of size: "
                           f"{list(input.shape)}")
    classes = input.shape[-1] if input.ndim else 1
    x, y = (t.reshape(-1, classes) for t in (input, target))
    if y.numel() and (bool((y < -1).any()) or bool((y >= classes).any())):
        raise RuntimeError("argument #2 'target' is out of range")
    labels = (y >= 0).int().cumprod(1).bool()           # the labels before the first -1
    classes_range = FA.arange(0, classes, dtype=D.int64, device=x.device)
    is_target = (labels.unsqueeze(2) & (y.unsqueeze(2) == classes_range)).any(1)
    at_labels = x.gather(1, y.clamp(min=0))
    margins = (1 - at_labels.unsqueeze(2) + x.unsqueeze(1)).clamp(min=0)
    counted = labels.unsqueeze(2) & ~is_target.unsqueeze(1)
    loss = (margins * counted).sum((1, 2)) / classes
    if input.ndim < 2:
        loss = loss.reshape(())
    if reduction == L.SUM:
        return loss.sum()
    return loss.mean() if reduction == L.MEAN else loss


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None,
                                      margin=1.0, swap=False, reduction="mean"):
    """``max(d(a, p) - d(a, n) + margin, 0)`` with any distance (PyTorch's Python
    composite; the default distance is ``pairwise_distance``)."""
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    if not anchor.ndim == positive.ndim == negative.ndim:
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have the "
                           f"same number of dimensions, but got: anchor {anchor.ndim}D, positive "
                           f"{positive.ndim}D, and negative {negative.ndim}D inputs")
    distance = distance_function if distance_function is not None else _pairwise_distance
    dist_pos, dist_neg = distance(anchor, positive), distance(anchor, negative)
    if swap:
        dist_neg = P.minimum(dist_neg, distance(positive, negative))
    loss = (dist_pos + margin - dist_neg).clamp(min=0)
    if reduction == "sum":
        return loss.sum()
    return loss.mean() if reduction == "mean" else loss
