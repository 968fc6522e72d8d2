"""Derivatives of ``ops/linalg.py``: matrix products (``d(AB) = dA B + A dB``) and einsum (the
gradient of one operand is an einsum of the output gradient with the other operands)."""

from ...ops import linalg as L
from ...ops import pointwise as P
from ...ops import shape as S
from . import derivative


def _t(x):
    return S.transpose(x, -2, -1)


@derivative(L.mm, "MmBackward0", save=("self if mat2", "mat2 if self"))
def _mm(ctx, grad):
    return (L.mm(grad, _t(ctx.mat2)) if ctx.needs[0] else None,
            L.mm(_t(ctx.self), grad) if ctx.needs[1] else None)


@derivative(L.bmm, "BmmBackward0", save=("self if mat2", "mat2 if self"))
def _bmm(ctx, grad):
    return (L.bmm(grad, _t(ctx.mat2)) if ctx.needs[0] else None,
            L.bmm(_t(ctx.self), grad) if ctx.needs[1] else None)


def _scaled(x, factor):
    return x if factor == 1 else P.mul(x, factor)


@derivative(L.addmm, "AddmmBackward0", save=("mat1 if mat2", "mat2 if mat1"))
def _addmm(ctx, grad):
    alpha = ctx.alpha
    return (_scaled(grad, ctx.beta) if ctx.needs[0] else None,
            _scaled(L.mm(grad, _t(ctx.mat2)), alpha) if ctx.needs[1] else None,
            _scaled(L.mm(_t(ctx.mat1), grad), alpha) if ctx.needs[2] else None)


@derivative(L.einsum, "EinsumBackward0", save=("tensors",))
def _einsum(ctx, grad):
    """For operand k: einsum(out, other operands -> k's labels). Labels only operand k has were
    summed away in forward, so its gradient is broadcast along them."""
    tensors = ctx.tensors
    spec = L.parse_einsum(ctx.equation, [t._shape for t in tensors])
    ins, out = spec.equation.split("->")
    ins = ins.split(",")
    grads = []
    for k, (term, needed) in enumerate(zip(ins, ctx.next_functions)):
        if needed[0] is None:
            grads.append(None)
            continue
        if len(set(term)) != len(term):
            raise NotImplementedError(f"einsum backward: operand {k} repeats a subscript "
                                      f"('{term}'); strata cannot differentiate a diagonal "
                                      f"einsum operand")
        others = [t for i, t in enumerate(ins) if i != k]
        kept = "".join(c for c in term if c in out or any(c in o for o in others))
        equation = ",".join([out] + others) + "->" + kept
        g = L.einsum(equation, [grad] + [t for i, t in enumerate(tensors) if i != k])
        shape = tensors[k]._shape
        for pos, c in enumerate(term):
            if c not in kept:
                g = S.unsqueeze(g, pos)
        grads.append(S.expand(g, tuple(max(a, b) for a, b in zip(g._shape, shape))))
    return grads
