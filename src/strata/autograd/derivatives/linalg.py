"""Derivatives of ``ops/linalg.py`` and ``linalg_composites.py``: matrix products
(``d(AB) = dA B + A dB``) and einsum (the gradient of one operand is an einsum of the output
gradient with the other operands)."""

import math

from ...ops import factory as F
from ...ops import linalg as L
from ...ops import linalg_composites as LC
from ...ops import pointwise as P
from ...ops import reductions as RD
from ...ops import shape as S
from . import conj, derivative, is_tensor


def _t(x):
    return S.transpose(x, -2, -1)


def _h(x):
    """The conjugate transpose (Note [Complex gradients])."""
    return conj(_t(x))


def _mat2_grad(grad, mat1, mat2):
    """grad of ``mat1 @ mat2`` for mat2, laid out like mat2 when it is column-major (a
    ``weight.t()``): then (grad^T mat1)^T, whose transpose back is the weight's own row-major
    layout, so AccumulateGrad needs no copy (``mm_mat2_backward`` in FunctionsManual.cpp).
    ``mat2`` is the saved tensor, or only its geometry when mat1 needs no gradient."""
    (rows, _), strides = (mat2._shape, mat2.stride()) if is_tensor(mat2) else mat2[:2]
    if strides[0] == 1 and strides[1] == rows:
        return _t(L.mm(_t(grad), conj(mat1)))
    return L.mm(_h(mat1), grad)


# mat2's geometry (not the tensor: no version check, nothing kept alive) picks the layout of
# its gradient; the tensor itself is saved only for mat1's gradient
# trace is a composite with a row of its own (CompositeExplicitAutograd in backends/composite.py)
@derivative(LC.trace, "TraceBackward0")
def _trace(ctx, grad):
    """``trace_backward``: the gradient on the diagonal, zeros elsewhere."""
    out = F.full(tuple(ctx.sizes("self")), 0, dtype=grad.dtype, device=grad.device)
    diagonal = S.diagonal(out, 0, 0, 1)
    F.copy_(diagonal, S.expand(grad, tuple(diagonal.shape)))
    return out


@derivative(L.mm, "MmBackward0", save=("self if mat2", "mat2 if self", "mat2:geometry if mat2"))
def _mm(ctx, grad):
    return (L.mm(grad, _h(ctx.mat2)) if ctx.needs[0] else None,
            _mat2_grad(grad, ctx.self, ctx.mat2) if ctx.needs[1] else None)


@derivative(L.bmm, "BmmBackward0", save=("self if mat2", "mat2 if self"))
def _bmm(ctx, grad):
    return (L.bmm(grad, _h(ctx.mat2)) if ctx.needs[0] else None,
            L.bmm(_h(ctx.self), grad) if ctx.needs[1] else None)


def _scaled(x, factor):
    return x if factor == 1 else P.mul(x, factor)


@derivative(L.addmm, "AddmmBackward0",
            save=("mat1 if mat2", "mat2 if mat1", "mat2:geometry if mat2"))
def _addmm(ctx, grad):
    alpha = ctx.alpha
    return (_scaled(grad, ctx.beta) if ctx.needs[0] else None,
            _scaled(L.mm(grad, _h(ctx.mat2)), alpha) if ctx.needs[1] else None,
            _scaled(_mat2_grad(grad, ctx.mat1, ctx.mat2), alpha) if ctx.needs[2] else None)


@derivative(L.einsum, "EinsumBackward0", save=("tensors",))
def _einsum(ctx, grad):
    """For operand k: einsum(out, other operands -> k's distinct labels). Labels only k has were
    summed away in forward, so its gradient is broadcast along them; a label k repeats (a
    diagonal, ``ii``) gets its gradient written onto that diagonal of zeros."""
    tensors = ctx.tensors
    spec = L.parse_einsum(ctx.equation, [t._shape for t in tensors])
    ins, out = spec.equation.split("->")
    ins = ins.split(",")
    grads = []
    for k, (term, (edge, _)) in enumerate(zip(ins, ctx.next_functions)):
        if edge is None:
            grads.append(None)
            continue
        others = [t for i, t in enumerate(ins) if i != k]
        labels = "".join(dict.fromkeys(term))           # distinct, in order of appearance
        kept = "".join(c for c in labels if c in out or any(c in o for o in others))
        g = L.einsum(",".join([out] + others) + "->" + kept,
                     [grad] + [t for i, t in enumerate(tensors) if i != k])
        shape = tensors[k]._shape
        size_of = {c: shape[term.index(c)] for c in labels}
        for pos, c in enumerate(labels):
            if c not in kept:
                g = S.unsqueeze(g, pos)
        g = S.expand(g, tuple(size_of[c] if c not in kept else g._shape[pos]
                              for pos, c in enumerate(labels)))
        if len(labels) != len(term):
            g = _onto_diagonal(g, term, labels, shape)
        grads.append(g)
    return grads


def _onto_diagonal(g, term, labels, shape):
    """Zeros of ``shape`` with ``g`` (indexed by the distinct labels) on the diagonal the
    repeated labels describe: a strided view whose stride per label sums its positions."""
    strides = [1] * len(shape)
    for i in range(len(shape) - 2, -1, -1):
        strides[i] = strides[i + 1] * max(shape[i + 1], 1)
    view_strides = [sum(strides[i] for i, c in enumerate(term) if c == label)
                    for label in labels]
    out = F.full(shape, 0, dtype=g.dtype, device=g.device)
    F.copy_(S.as_strided(out, g._shape, view_strides, 0), g)
    return out


# --- composite products with rows of their own (CompositeExplicitAutograd in
# backends/composite.py): one node each, as ATen records
def _scaled(grad, factor):
    """``maybe_multiply``: grad * factor, or grad itself for a factor of 1."""
    return grad if factor == 1 else P.mul(grad, conj(factor))


@derivative(L.dot, "DotBackward0", save=("self if tensor", "tensor if self"))
def _dot(ctx, grad):
    return (P.mul(grad, conj(ctx.tensor)) if ctx.needs[0] else None,
            P.mul(grad, conj(ctx.self)) if ctx.needs[1] else None)


@derivative(LC.vdot, "VdotBackward0", save=("self if other", "other if self"))
def _vdot(ctx, grad):
    return (P.mul(conj(grad), ctx.other) if ctx.needs[0] else None,
            P.mul(grad, ctx.self) if ctx.needs[1] else None)


@derivative(L.mv, "MvBackward0", save=("self if vec", "vec if self"))
def _mv(ctx, grad):
    return (LC.outer(grad, conj(ctx.vec)) if ctx.needs[0] else None,
            L.mv(_h(ctx.self), grad) if ctx.needs[1] else None)


@derivative(LC.addmv, "AddmvBackward0", save=("mat if vec", "vec if mat"))
def _addmv(ctx, grad):
    return (_scaled(grad, ctx.beta) if ctx.needs[0] else None,
            _scaled(LC.outer(grad, conj(ctx.vec)), ctx.alpha) if ctx.needs[1] else None,
            _scaled(L.mv(_h(ctx.mat), grad), ctx.alpha) if ctx.needs[2] else None)


@derivative(LC.baddbmm, "BaddbmmBackward0", save=("batch1 if batch2", "batch2 if batch1"))
def _baddbmm(ctx, grad):
    return (_scaled(grad, ctx.beta) if ctx.needs[0] else None,
            _scaled(L.bmm(grad, _h(ctx.batch2)), ctx.alpha) if ctx.needs[1] else None,
            _scaled(L.bmm(_h(ctx.batch1), grad), ctx.alpha) if ctx.needs[2] else None)


@derivative(LC.addbmm, "AddbmmBackward0", save=("batch1 if batch2", "batch2 if batch1"))
def _addbmm(ctx, grad):
    """Each batch's product adds into the result: every batch sees the whole gradient."""
    (b, n, _), (_, _, p) = ctx.sizes("batch1"), ctx.sizes("batch2")
    spread = S.expand(S.unsqueeze(grad, 0), (b, n, p)) if any(ctx.needs[1:]) else None
    return (_scaled(grad, ctx.beta) if ctx.needs[0] else None,
            _scaled(L.bmm(spread, _h(ctx.batch2)), ctx.alpha) if ctx.needs[1] else None,
            _scaled(L.bmm(_h(ctx.batch1), spread), ctx.alpha) if ctx.needs[2] else None)


@derivative(LC.linalg_cross, "LinalgCrossBackward0", save=("self if other", "other if self"))
def _linalg_cross(ctx, grad):
    return (LC.linalg_cross(conj(ctx.other), grad, dim=ctx.dim) if ctx.needs[0] else None,
            LC.linalg_cross(grad, conj(ctx.self), dim=ctx.dim) if ctx.needs[1] else None)


@derivative(LC.diag_embed, "DiagEmbedBackward0")
def _diag_embed(ctx, grad):
    return S.diagonal(grad, ctx.offset, ctx.dim1, ctx.dim2)


# cdist is a composite with a row of its own (CompositeExplicitAutograd); ATen's node is its
# _cdist_forward's
@derivative(LC.cdist, "CdistBackward0", save=("x1", "x2", "result"))
def _cdist(ctx, grad):
    """``_cdist_backward``: each distance's gradient along diff = x1_i - x2_j (zero where the
    distance is), summed over the other input's rows; x2's is the negative."""
    p = float(ctx.p)
    if p == 2:     # sum_j ratio_ij (x1_i - x2_j) as two products: no (..., P, R, M) difference
        ratio = P.where(P.eq(ctx.result, 0), 0.0, P.div(grad, ctx.result))
        g1 = P.sub(P.mul(ctx.x1, RD.sum(ratio, [-1], True)), L.matmul(ratio, ctx.x2)) \
            if ctx.needs[0] else None
        g2 = P.sub(P.mul(ctx.x2, S.unsqueeze(RD.sum(ratio, [-2]), -1)),
                   L.matmul(S.transpose(ratio, -2, -1), ctx.x1)) if ctx.needs[1] else None
        return g1, g2
    diff = P.sub(S.unsqueeze(ctx.x1, -2), S.unsqueeze(ctx.x2, -3))   # (..., P, R, M)
    dist = S.unsqueeze(ctx.result, -1)
    at_zero = P.eq(dist, 0)
    if p == 0:
        slope = P.mul(diff, 0)
    elif p == 1:
        slope = P.sign(diff)
    elif p == 2:
        slope = P.where(at_zero, 0.0, P.div(diff, dist))
    elif math.isinf(p):
        slope = P.mul(P.sign(diff), P.eq(P.abs(diff), dist))
    elif p < 2:
        slope = P.where(at_zero, 0.0, P.div(P.mul(P.sign(diff), P.pow(P.abs(diff), p - 1)),
                                            P.pow(dist, p - 1)))
    else:
        slope = P.where(at_zero, 0.0, P.div(P.mul(diff, P.pow(P.abs(diff), p - 2)),
                                            P.pow(dist, p - 1)))
    weighted = P.mul(S.unsqueeze(grad, -1), slope)
    return (RD.sum(weighted, [-2]) if ctx.needs[0] else None,
            P.neg(RD.sum(weighted, [-3])) if ctx.needs[1] else None)
