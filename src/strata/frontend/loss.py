"""Frontends of the loss family: ``strata.kl_div(x, t)`` and the other losses PyTorch exposes
as ``torch.<name>``.

PyTorch's Python bindings of these ops declare ``int64_t reduction=at::Reduction::Mean``; its
argument parser cannot read that default and uses 0, so ``torch.kl_div(x, t)`` does not reduce,
while the aten op and ``nn.functional`` default to the mean. These functions copy the bindings,
so a program gets the same numbers from ``strata.kl_div(x, t)`` as from ``torch.kl_div(x, t)``.
"""

from ..ops import loss as L


def binary_cross_entropy_with_logits(input, target, weight=None, pos_weight=None,
                                     reduction=L.NONE):
    return L.binary_cross_entropy_with_logits(input, target, weight, pos_weight, reduction)


def kl_div(input, target, reduction=L.NONE, *, log_target=False):
    return L.kl_div(input, target, reduction, log_target=log_target)


def cosine_embedding_loss(input1, input2, target, margin=0.0, reduction=L.NONE):
    return L.cosine_embedding_loss(input1, input2, target, margin, reduction)


def margin_ranking_loss(input1, input2, target, margin=0.0, reduction=L.NONE):
    return L.margin_ranking_loss(input1, input2, target, margin, reduction)


def hinge_embedding_loss(input, target, margin=1.0, reduction=L.NONE):
    return L.hinge_embedding_loss(input, target, margin, reduction)


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-06, swap=False,
                        reduction=L.NONE):
    return L.triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap, reduction)


METHODS = {}
FUNCTIONS = {f.__name__: f for f in (binary_cross_entropy_with_logits, kl_div,
                                     cosine_embedding_loss, margin_ranking_loss,
                                     hinge_embedding_loss, triplet_margin_loss)}
