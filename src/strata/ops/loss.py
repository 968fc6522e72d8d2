"""Loss functions, with PyTorch's ``reduction`` enum (0 none, 1 mean, 2 sum).

Most losses are composites written the way ``aten/src/ATen/native/Loss.cpp`` computes them, so
autograd gets them for free. Three are primitives because they need the data itself, not just
pointwise math: ``nll_loss_forward`` (it picks one element per row and checks each target is in
range; it also returns the total weight of the targets it used, which ``mean`` divides by and
the backward needs), its backward, and ``binary_cross_entropy`` (it checks every input is in
[0, 1]). ``cross_entropy_loss`` is ``log_softmax`` + ``nll_loss``, plus label smoothing and
class-probability targets.
"""

import math

from ..core import dtype as D
from ..core.shape import broadcast_shapes, contiguous_strides
from . import meta_rules as R
from . import pointwise as P
from . import pointwise_composites as PC
from . import shape as S
from .activation import check_float, log_sigmoid, log_softmax, opmath
from .op import TensorSpec, aten, defop, register_decomposition
from .factory import arange, full, scalar_tensor
from .indexing import masked_fill
from .reductions import logsumexp, mean
from .reductions import sum as reduce_sum
from .scatter import gather
from .special import xlogy

NONE, MEAN, SUM = 0, 1, 2
_ENUM = {"None": NONE, "Mean": MEAN, "Sum": SUM}  # schema defaults are spelled as enum names


def reduction_enum(reduction) -> int:
    return _ENUM[reduction] if isinstance(reduction, str) else reduction


def apply_reduction(loss, reduction):
    r = reduction_enum(reduction)
    if r == MEAN:
        return aten.mean.dim(loss)
    if r == SUM:
        return aten.sum.dim_IntList(loss)
    return loss


def _float_result(name, *operands):
    dt = R.promote(*operands)
    if dt.category != D.FLOATING:
        raise NotImplementedError(f"\"{name}\" not implemented for '{R.type_name(dt)}'")


def _fmt(shape):
    return "[" + ", ".join(map(str, shape)) + "]"


# --- regression losses ----------------------------------------------------------------------------

_RED = "int reduction=Mean"
mse_loss = defop(f"mse_loss(Tensor self, Tensor target, {_RED}) -> Tensor")
l1_loss = defop(f"l1_loss(Tensor self, Tensor target, {_RED}) -> Tensor")
smooth_l1_loss = defop(f"smooth_l1_loss(Tensor self, Tensor target, {_RED}, float beta=1.0) -> "
                       "Tensor")
huber_loss = defop(f"huber_loss(Tensor self, Tensor target, {_RED}, float delta=1.0) -> Tensor")


@register_decomposition(mse_loss)
@opmath
def _mse_loss(self, target, reduction=MEAN):
    _float_result("mse_cpu", self, target)
    diff = P.sub(self, target)
    return apply_reduction(P.mul(diff, diff), reduction)


@register_decomposition(l1_loss)
def _l1_loss(self, target, reduction=MEAN):
    return apply_reduction(P.abs(P.sub(self, target)), reduction)


@register_decomposition(smooth_l1_loss)
@opmath
def _smooth_l1_loss(self, target, reduction=MEAN, beta=1.0):
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    if beta == 0:
        return l1_loss(self, target, reduction)
    _float_result("smooth_l1_cpu", self, target)
    z = P.abs(P.sub(self, target))
    # z < beta ? 0.5 * z^2 / beta : z - 0.5 * beta
    loss = P.where(P.lt(z, beta), P.div(P.mul(P.mul(z, z), 0.5), beta), P.sub(z, 0.5 * beta))
    return apply_reduction(loss, reduction)


@register_decomposition(huber_loss)
@opmath
def _huber_loss(self, target, reduction=MEAN, delta=1.0):
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    _float_result("huber_cpu", self, target)
    z = P.abs(P.sub(self, target))
    # z < delta ? 0.5 * z^2 : delta * (z - 0.5 * delta)
    loss = P.where(P.lt(z, delta), P.mul(P.mul(z, z), 0.5), P.mul(P.sub(z, 0.5 * delta), delta))
    return apply_reduction(loss, reduction)


# --- negative log likelihood and cross entropy ----------------------------------------------------

def _nll_forward_meta(self, target, weight, reduction, ignore_index):
    if not 0 < self.ndim <= 2:
        raise RuntimeError("input tensor should be 1D or 2D")
    if target.ndim > 1:
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if self.ndim == 1:
        if target.ndim == 1 and target.shape[0] != 1:
            raise ValueError(f"For 1D input, 1D target must have size 1, but got target size: "
                             f"{target.shape[0]}")
    elif self.shape[0] != target.shape[0]:
        raise RuntimeError(f"size mismatch (got input: {_fmt(self.shape)}, target: "
                           f"{_fmt(target.shape)})")
    n_classes = self.shape[-1]
    if weight is not None and (weight.ndim != 1 or weight.numel() != n_classes):
        raise RuntimeError(f"weight tensor should be defined either for all {n_classes} classes "
                           f"or no classes but got weight tensor of shape: {_fmt(weight.shape)}")
    if target.dtype not in (D.int64, D.uint8):
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got "
                           f"{R.type_name(target.dtype)}")
    if weight is not None and weight.dtype is not self.dtype:
        raise RuntimeError(f"expected scalar type {R.type_name(self.dtype)} but found "
                           f"{R.type_name(weight.dtype)}")
    check_float("nll_loss_out_frame", self)
    shape = (self.shape[0],) if reduction_enum(reduction) == NONE and self.ndim == 2 else ()
    return (TensorSpec(shape, self.dtype, contiguous_strides(shape)),
            TensorSpec((), self.dtype, ()))


def _nll_backward_meta(grad_output, self, target, weight, reduction, ignore_index,
                       total_weight):
    if not 0 < self.ndim <= 2:
        raise RuntimeError("input tensor should be 1D or 2D")
    if target.ndim > 1:
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if self.ndim == 2 and self.shape[0] != target.shape[0]:
        raise RuntimeError(f"size mismatch (got input: {_fmt(self.shape)}, target: "
                           f"{_fmt(target.shape)})")
    if total_weight.numel() != 1:
        raise RuntimeError(f"expected total_weight to be a  single element tensor, got: "
                           f"{_fmt(total_weight.shape)} ({total_weight.numel()} elements)")
    if weight is not None and weight.numel() != self.shape[-1]:
        raise RuntimeError("weight tensor should be defined either for all or no classes")
    if reduction_enum(reduction) == NONE and self.ndim == 2:
        n = self.shape[0]
        if grad_output.ndim != 1 or grad_output.shape[0] != n:
            got = grad_output.shape[0] if grad_output.ndim else 0
            raise RuntimeError(f"Expected a tensor of dimension 1 and tensor.size[0] == {n} but "
                               f"got: dimension {grad_output.ndim} and tensor.size[0] = {got}")
    elif grad_output.ndim > 1 or grad_output.numel() != 1:
        raise RuntimeError(f"Expected a single element grad_output tensor, but got: "
                           f"{_fmt(grad_output.shape)}")
    check_float("nll_loss_backward_out_frame", self)
    shape = tuple(self.shape)
    return TensorSpec(shape, self.dtype, contiguous_strides(shape))


_W = "Tensor? weight"
nll_loss_forward = defop(f"nll_loss_forward(Tensor self, Tensor target, {_W}, int reduction, "
                         "SymInt ignore_index) -> (Tensor output, Tensor total_weight)",
                         _nll_forward_meta)
nll_loss_backward = defop(f"nll_loss_backward(Tensor grad_output, Tensor self, Tensor target, "
                          f"{_W}, int reduction, SymInt ignore_index, Tensor total_weight) -> "
                          "Tensor", _nll_backward_meta)
nll_loss = defop(f"nll_loss(Tensor self, Tensor target, {_W}=None, {_RED}, "
                 "SymInt ignore_index=-100) -> Tensor")
nll_loss_nd = defop(f"nll_loss_nd(Tensor self, Tensor target, {_W}=None, {_RED}, "
                    "SymInt ignore_index=-100) -> Tensor")
cross_entropy_loss = defop(f"cross_entropy_loss(Tensor self, Tensor target, {_W}=None, {_RED}, "
                           "SymInt ignore_index=-100, float label_smoothing=0.0) -> Tensor")


@register_decomposition(nll_loss)
def _nll_loss(self, target, weight=None, reduction=MEAN, ignore_index=-100):
    return nll_loss_forward(self, target, weight, reduction, ignore_index)[0]


def _nll_flat(self, target, weight, reduction, ignore_index):
    """``nll_loss_forward`` on any (N, C, d1, ...) input: (output, total_weight), the output
    shaped (N, d1, ...) for reduction='none'."""
    if self.ndim <= 2:
        return nll_loss_forward(self, target, weight, reduction, ignore_index)
    n, c, spatial = self.shape[0], self.shape[1], tuple(self.shape[2:])
    if self.ndim == 4:  # PyTorch's nll_loss2d checks, with its wording
        if target.ndim != 3:
            raise RuntimeError(f"only batches of spatial targets supported (3D tensors) but got "
                               f"targets of dimension: {target.ndim}")
        if tuple(target.shape) != (n,) + spatial:
            raise RuntimeError(f"size mismatch (got input: {_fmt(self.shape)} , target: "
                               f"{_fmt(target.shape)}")
    elif tuple(target.shape[1:]) != spatial:
        raise RuntimeError(f"Expected target size {_fmt((n,) + spatial)}, got "
                           f"{_fmt(target.shape)}")
    # Classes last, then one row per (sample, position): a plain 2-D nll_loss.
    rows = S.reshape(S.movedim(self, 1, -1), (-1, c))
    output, total = nll_loss_forward(rows, S.reshape(target, (-1,)), weight, reduction,
                                     ignore_index)
    if reduction_enum(reduction) == NONE:
        output = S.reshape(output, (n,) + spatial)
    return output, total


@register_decomposition(nll_loss_nd)
def _nll_loss_nd(self, target, weight=None, reduction=MEAN, ignore_index=-100):
    if self.ndim < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {self.ndim})")
    if self.ndim != 1 and self.shape[0] != target.shape[0]:
        raise ValueError(f"Expected input batch_size ({self.shape[0]}) to match target "
                         f"batch_size ({target.shape[0]}).")
    return _nll_flat(self, target, weight, reduction, ignore_index)[0]


def _class_view(weight, ndim, class_dim):
    """``weight`` (C,) shaped to broadcast along ``class_dim`` of an ``ndim``-d input."""
    shape = [1] * ndim
    shape[class_dim] = weight.shape[0]
    return S.reshape(weight, tuple(shape))


def _cross_entropy_probs(logp, target, weight, reduction, label_smoothing, class_dim):
    n_classes = logp.shape[class_dim]
    if weight is not None and (weight.ndim != 1 or weight.numel() != n_classes):
        raise RuntimeError(f"cross_entropy: weight tensor should be defined either for all "
                           f"{n_classes} classes or no classes but got weight tensor of shape: "
                           f"{_fmt(weight.shape)}")
    if label_smoothing > 0:
        target = P.add(P.mul(target, 1 - label_smoothing), label_smoothing / n_classes)
    terms = P.mul(logp, target)
    if weight is not None:
        terms = P.mul(terms, _class_view(weight, logp.ndim, class_dim) if logp.ndim > 1
                      else weight)
    r = reduction_enum(reduction)
    if r == NONE:
        return P.neg(aten.sum.dim_IntList(terms, [class_dim]))
    total = P.neg(aten.sum.dim_IntList(terms))
    if r == SUM:
        return total
    # mean over samples (and positions), not over classes; nothing to average is nan
    count = logp.numel() // n_classes
    return P.div(total, count) if count else P.mul(total, math.nan)


def _cross_entropy_smoothed(logp, target, weight, reduction, ignore_index, label_smoothing,
                            class_dim):
    nll, total_weight = _nll_flat(logp, target, weight, reduction, ignore_index)
    n_classes = logp.shape[class_dim]
    if weight is not None:
        smooth = P.neg(aten.sum.dim_IntList(P.mul(logp, _class_view(weight, logp.ndim,
                                                                        class_dim)), [class_dim]))
    else:
        smooth = P.neg(aten.sum.dim_IntList(logp, [class_dim]))
    smooth = P.where(P.eq(target, ignore_index), 0.0, smooth)
    r = reduction_enum(reduction)
    if r == MEAN:
        # normalised like nll_loss: by the total weight of the targets that are not ignored
        smooth = P.div(aten.sum.dim_IntList(smooth), total_weight)
    elif r == SUM:
        smooth = aten.sum.dim_IntList(smooth)
    return P.add(P.mul(nll, 1 - label_smoothing), P.mul(smooth, label_smoothing / n_classes))


@register_decomposition(cross_entropy_loss)
def _cross_entropy_loss(self, target, weight=None, reduction=MEAN, ignore_index=-100,
                        label_smoothing=0.0):
    class_dim = 1 if self.ndim > 1 else 0
    if tuple(self.shape) == tuple(target.shape):  # class probabilities, not class indices
        if target.dtype.category != D.FLOATING:
            raise RuntimeError(f"Expected floating point type for target with class "
                               f"probabilities, got {R.type_name(target.dtype)}")
        if ignore_index >= 0:
            raise RuntimeError("ignore_index is not supported for floating point target")
        _check_smoothing(label_smoothing)
        return _cross_entropy_probs(log_softmax(self, class_dim), target, weight, reduction,
                                    label_smoothing, class_dim)
    logp = log_softmax(self, class_dim)
    if label_smoothing > 0:
        _check_smoothing(label_smoothing)
        return _cross_entropy_smoothed(logp, target, weight, reduction, ignore_index,
                                       label_smoothing, class_dim)
    return nll_loss_nd(logp, target, weight, reduction, ignore_index)


def _check_smoothing(label_smoothing):
    if label_smoothing > 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")


# --- binary losses --------------------------------------------------------------------------------

def _bce_meta(self, target, weight=None, reduction=MEAN):
    check_float("binary_cross_entropy", self)
    for other in (target, weight):
        if other is not None and other.dtype is not self.dtype:
            raise RuntimeError(f"Found dtype {R.type_name(other.dtype)} but expected "
                               f"{R.type_name(self.dtype)}")
    shape = broadcast_shapes(*(tuple(x.shape) for x in (self, target, weight) if x is not None))
    if reduction_enum(reduction) != NONE:
        shape = ()
    return TensorSpec(shape, self.dtype, contiguous_strides(shape))


binary_cross_entropy = defop(f"binary_cross_entropy(Tensor self, Tensor target, {_W}=None, "
                             f"{_RED}) -> Tensor", _bce_meta)
binary_cross_entropy_backward = defop(
    f"binary_cross_entropy_backward(Tensor grad_output, Tensor self, Tensor target, {_W}=None, "
    f"{_RED}) -> Tensor")
binary_cross_entropy_with_logits = defop(
    f"binary_cross_entropy_with_logits(Tensor self, Tensor target, {_W}=None, "
    f"Tensor? pos_weight=None, {_RED}) -> Tensor")


@register_decomposition(binary_cross_entropy_backward)
@opmath
def _bce_backward(grad_output, self, target, weight=None, reduction=MEAN):
    # d/dx: grad * (x - y) / max((1 - x) * x, eps)
    denom = P.clamp(P.mul(P.sub(1, self), self), 1e-12)
    grad = P.div(P.mul(grad_output, P.sub(self, target)), denom)
    if weight is not None:
        grad = P.mul(grad, weight)
    if reduction_enum(reduction) == MEAN:
        grad = P.div(grad, self.numel())
    return grad


@register_decomposition(binary_cross_entropy_with_logits)
@opmath
def _bce_with_logits(self, target, weight=None, pos_weight=None, reduction=MEAN):
    # (1 - y) * x - w_log * log_sigmoid(x), with w_log = 1 + (pos_weight - 1) * y
    log_sig = log_sigmoid(self)
    if pos_weight is not None:
        log_sig = P.mul(P.add(P.mul(P.sub(pos_weight, 1), target), 1), log_sig)
    loss = P.sub(P.mul(P.sub(1, target), self), log_sig)
    if weight is not None:
        loss = P.mul(loss, weight)
    return apply_reduction(loss, reduction)


# --- divergences and likelihoods ------------------------------------------------------------------

kl_div = defop(f"kl_div(Tensor self, Tensor target, {_RED}, *, bool log_target=False) -> Tensor")
poisson_nll_loss = defop("poisson_nll_loss(Tensor input, Tensor target, bool log_input, "
                         "bool full, float eps, int reduction) -> Tensor", function=True)


@register_decomposition(kl_div)
@opmath
def _kl_div(self, target, reduction=MEAN, log_target=False):
    if R.promote(self, target).category != D.FLOATING:
        raise RuntimeError("kl_div: Integral inputs not supported.")
    if log_target:  # exp(t) * (t - x)
        loss = P.mul(P.exp(target), P.sub(target, self))
    else:  # t * log(t) - t * x, with 0 * log(0) = 0
        loss = P.sub(xlogy(target, target), P.mul(target, self))
    return apply_reduction(loss, reduction)


@register_decomposition(poisson_nll_loss)
@opmath
def _poisson_nll_loss(input, target, log_input, full, eps, reduction):
    if log_input:
        loss = P.sub(P.exp(input), P.mul(target, input))
    else:
        loss = P.sub(input, P.mul(target, P.log(P.add(input, eps))))
    if full:
        # Stirling's approximation of log(target!), for targets > 1
        stirling = P.add(P.sub(P.mul(target, P.log(target)), target),
                         P.mul(P.log(P.mul(target, 2 * math.pi)), 0.5))
        loss = P.add(loss, masked_fill(stirling, P.le(target, 1), 0))
    return apply_reduction(loss, reduction)


# --- margin and embedding losses ------------------------------------------------------------------

cosine_embedding_loss = defop("cosine_embedding_loss(Tensor input1, Tensor input2, Tensor target, "
                              f"float margin=0.0, {_RED}) -> Tensor")
margin_ranking_loss = defop("margin_ranking_loss(Tensor input1, Tensor input2, Tensor target, "
                            f"float margin=0.0, {_RED}) -> Tensor")
hinge_embedding_loss = defop(f"hinge_embedding_loss(Tensor self, Tensor target, "
                             f"float margin=1.0, {_RED}) -> Tensor")
soft_margin_loss = defop(f"soft_margin_loss(Tensor self, Tensor target, {_RED}) -> Tensor")
multi_margin_loss = defop(f"multi_margin_loss(Tensor self, Tensor target, Scalar p=1, "
                         f"Scalar margin=1, Tensor? weight=None, {_RED}) -> Tensor")
triplet_margin_loss = defop("triplet_margin_loss(Tensor anchor, Tensor positive, "
                            "Tensor negative, float margin=1.0, float p=2, float eps=1e-06, "
                            f"bool swap=False, {_RED}) -> Tensor")

_EPSILON = 1e-12


@register_decomposition(cosine_embedding_loss)
@opmath
def _cosine_embedding_loss(input1, input2, target, margin=0.0, reduction=MEAN):
    tdim = target.ndim
    if tdim > 1:
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if tdim == 1 and input1.ndim != 2:
        raise RuntimeError(f"1D target tensor expects 2D input tensors, but found inputs with "
                           f"sizes {_fmt(input1.shape)} and {_fmt(input2.shape)}.")
    if tdim == 0 and input1.ndim != 1:
        raise RuntimeError(f"0D target tensor expects 1D input tensors, but found inputs with "
                           f"sizes {_fmt(input1.shape)} and {_fmt(input2.shape)}.")
    prod = aten.sum.dim_IntList(P.mul(input1, input2), [tdim])
    mag1 = P.add(aten.sum.dim_IntList(P.mul(input1, input1), [tdim]), _EPSILON)
    mag2 = P.add(aten.sum.dim_IntList(P.mul(input2, input2), [tdim]), _EPSILON)
    cos = P.div(prod, P.sqrt(P.mul(mag1, mag2)))
    pos = P.where(P.eq(target, 1), P.sub(1, cos), 0)
    neg = P.where(P.eq(target, -1), P.clamp(P.sub(cos, margin), 0), 0)
    return apply_reduction(P.add(pos, neg), reduction)


@register_decomposition(margin_ranking_loss)
def _margin_ranking_loss(input1, input2, target, margin=0.0, reduction=MEAN):
    # max(0, -y * (x1 - x2) + margin)
    loss = PC.clamp_min(P.add(P.mul(P.neg(target), P.sub(input1, input2)), margin), 0)
    return apply_reduction(loss, reduction)


@register_decomposition(hinge_embedding_loss)
def _hinge_embedding_loss(self, target, margin=1.0, reduction=MEAN):
    margin_part = P.where(P.ne(target, 1), P.clamp(P.sub(margin, self), 0), 0)
    self_part = P.where(P.ne(target, -1), self, 0)
    return apply_reduction(P.add(margin_part, self_part), reduction)


@register_decomposition(multi_margin_loss)
def _multi_margin_loss(self, target, p=1, margin=1, weight=None, reduction=MEAN):
    """Per sample: the sum over the other classes j of max(0, margin - x[y] + x[j]) ** p (times
    weight[y]), over the number of classes (ATen's ``multi_margin_loss_cpu``)."""
    if self.ndim > 2 or self.numel() == 0 and self.ndim != 2:
        raise RuntimeError(f"Expected non-empty vector or matrix with optional 0-dim batch size, "
                           f"but got: {_fmt(self.shape)}")
    rows, classes = (1, self.shape[0]) if self.ndim <= 1 else tuple(self.shape)
    if target.ndim > 1 or target.numel() != rows:
        raise RuntimeError(f"multi_margin_loss: target tensor should be 1-D with size equal to "
                           f"the number of input samples (batch size). Expected target size "
                           f"[{rows}], but got {_fmt(target.shape)}. Input has shape "
                           f"{_fmt(self.shape)}.")
    if weight is not None and (weight.ndim != 1 or weight.numel() != classes):
        raise RuntimeError(f"inconsistent weight size, expected {classes} but got "
                           f"{_fmt(weight.shape)}")
    if self.dtype.category != D.FLOATING:
        raise NotImplementedError(f"\"multi_margin_loss_cpu_kernel\" not implemented for "
                                  f"'{R.type_name(self.dtype)}'")
    labels = S.reshape(target, (rows, 1))
    if rows and not target.is_meta and \
            bool(P.logical_or(P.lt(labels, 0), P.ge(labels, classes)).any()):
        raise RuntimeError("target out of range")
    x = S.reshape(self, (rows, classes))
    terms = PC.clamp_min(P.add(P.sub(margin, gather(x, 1, labels)), x), 0)
    if p == 2:
        terms = P.mul(terms, terms)
    if weight is not None:
        terms = P.mul(terms, S.reshape(aten.index_select.default(weight, 0,
                                                                 S.reshape(labels, (rows,))),
                                       (rows, 1)))
    own_class = P.eq(arange(0, classes, dtype=D.int64, device=self.device), labels)
    loss = P.div(reduce_sum(masked_fill(terms, own_class, 0), [1], False), classes)
    if reduction_enum(reduction) == NONE:
        return S.reshape(loss, tuple(target.shape)) if self.ndim <= 1 else loss
    return apply_reduction(loss, reduction)


@register_decomposition(soft_margin_loss)
@opmath
def _soft_margin_loss(self, target, reduction=MEAN):
    # log(1 + exp(-y * x))
    return apply_reduction(P.log1p(P.exp(P.mul(P.neg(self), target))), reduction)


@register_decomposition(triplet_margin_loss)
def _triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False,
                         reduction=MEAN):
    a, pos, neg = anchor.ndim, positive.ndim, negative.ndim
    if not a == pos == neg:
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have the "
                           f"same number of dimensions, but got: anchor {a}D, positive {pos}D, "
                           f"and negative {neg}D inputs")
    distance = aten.pairwise_distance.default
    dist_pos = distance(anchor, positive, p, eps)
    dist_neg = distance(anchor, negative, p, eps)
    if swap:
        dist_neg = P.minimum(dist_neg, distance(positive, negative, p, eps))
    loss = PC.clamp_min(P.sub(P.add(dist_pos, margin), dist_neg), 0)
    return apply_reduction(loss, reduction)


# --- CTC (Graves et al. 2006): the forward algorithm in log space, as a decomposition -----------
ctc_loss = defop("ctc_loss.IntList(Tensor log_probs, Tensor targets, int[] input_lengths, "
                 "int[] target_lengths, int blank=0, int reduction=Mean, "
                 "bool zero_infinity=False) -> Tensor")
_CTC_IMPOSSIBLE = -1e30   # log 0 as a finite number, so unreachable states get no NaN gradients


def _ctc_checks(log_probs, targets, input_lengths, target_lengths, blank):
    where = "(while checking arguments for ctc_loss_allocate_outputs)"
    batch = log_probs.shape[1] if log_probs.ndim == 3 else 1
    if blank < 0 or blank >= log_probs.shape[-1]:
        raise RuntimeError("blank must be in label range")
    if len(input_lengths) != batch:
        raise RuntimeError(f"input_lengths must be of size batch_size {where}")
    if len(target_lengths) != batch:
        raise RuntimeError(f"target_lengths must be of size batch_size {where}")
    for n, length in enumerate(input_lengths):
        if length > log_probs.shape[0]:
            raise RuntimeError(f"Expected input_lengths to have value at most "
                               f"{log_probs.shape[0]}, but got value {length} {where}")
    if targets.ndim == 2 or (targets.ndim == 1 and log_probs.ndim == 2):
        limit = targets.shape[-1]
        for length in target_lengths:
            if length > limit:
                raise RuntimeError(f"Expected tensor to have size at least {length} at "
                                   f"dimension 1, but got size {limit} for argument #2 "
                                   f"'targets' {where}")


@register_decomposition(ctc_loss)
def _ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction=MEAN,
              zero_infinity=False):
    """-log p(target | input) summed over every alignment: alpha over the target with blanks
    between and around its labels (the "extended" target), one step per frame; each sequence's
    loss is read at its own last frame and last two extended states."""
    input_lengths, target_lengths = list(input_lengths), list(target_lengths)
    _ctc_checks(log_probs, targets, input_lengths, target_lengths, blank)
    batched = log_probs.ndim == 3
    lp = log_probs if batched else S.unsqueeze(log_probs, 1)
    steps, batch = lp.shape[0], lp.shape[1]
    labels = _padded_targets(targets, target_lengths, batched, blank)     # (N, S)
    width = 2 * labels.shape[1] + 1
    blanks = full((batch, labels.shape[1]), blank, dtype=D.int64, device=lp.device)
    extended = S.cat([S.reshape(S.stack([blanks, labels], 2), [batch, width - 1]),
                      full((batch, 1), blank, dtype=D.int64, device=lp.device)], 1)
    two_back = S.cat([full((batch, 2), -1, dtype=D.int64, device=lp.device),
                      S.slice(extended, 1, 0, width - 2)], 1)
    can_skip = P.logical_and(P.ne(extended, blank), P.ne(extended, two_back))
    impossible = scalar_tensor(_CTC_IMPOSSIBLE, dtype=lp.dtype, device=lp.device)
    lp = P.maximum(lp, impossible)
    first_two = P.lt(arange(0, width, dtype=D.int64, device=lp.device), 2)
    alpha = P.where(first_two, gather(S.select(lp, 0, 0), 1, extended), impossible)
    history = [alpha]
    pad = full((batch, 2), _CTC_IMPOSSIBLE, dtype=lp.dtype, device=lp.device)
    for t in range(1, steps):
        shifted = S.cat([pad, alpha], 1)
        one = S.slice(shifted, 1, 1, width + 1)
        two = P.where(can_skip, S.slice(shifted, 1, 0, width), impossible)
        alpha = P.add(logsumexp(S.stack([alpha, one, two], 0), [0]),
                      gather(S.select(lp, 0, t), 1, extended))
        history.append(alpha)
    frames = S.stack(history, 1)                                       # (N, T, L)
    last = _int_column([max(n - 1, 0) for n in input_lengths], lp)     # (N, 1)
    final = S.squeeze(gather(frames, 1, S.expand(S.unsqueeze(last, 2), [batch, 1, width])),
                      [1])                                             # (N, L)
    ends = gather(final, 1, _int_column([2 * n for n in target_lengths], lp))
    before = gather(final, 1, _int_column([max(2 * n - 1, 0) for n in target_lengths], lp))
    before = P.where(P.eq(_int_column(target_lengths, lp), 0), impossible, before)
    loss = P.neg(S.squeeze(logsumexp(S.cat([ends, before], 1), [1], True), [1]))
    infinite = P.gt(loss, -_CTC_IMPOSSIBLE / 10)
    loss = P.where(infinite, 0.0 if zero_infinity else math.inf, loss)
    r = reduction_enum(reduction)
    if r == MEAN:
        per_label = P.div(loss, P.clamp(S.squeeze(_int_column(target_lengths, lp), [1]), 1,
                                        None))
        return mean(per_label)
    if r == SUM:
        return reduce_sum(loss)
    return loss if batched else S.squeeze(loss, [0])


def _padded_targets(targets, target_lengths, batched, blank):
    """(N, S) labels, S the longest target: concatenated 1-D targets are split and padded."""
    longest = max(target_lengths, default=0)
    if targets.ndim == 1 and batched:
        rows, start = [], 0
        for n in target_lengths:
            pad = full((longest - n,), blank, dtype=targets.dtype, device=targets.device)
            rows.append(S.cat([S.slice(targets, 0, start, start + n), pad], 0))
            start += n
        return S.stack(rows, 0).long()
    rows = targets if targets.ndim == 2 else S.unsqueeze(targets, 0)
    return S.slice(rows, 1, 0, longest).long()


def _int_column(values, like):
    """An (N, 1) int64 tensor of the Python ints ``values`` on ``like``'s device."""
    return S.stack([full((1,), v, dtype=D.int64, device=like.device) for v in values], 0)
