"""``strata.gradient``: numerical derivatives of sampled values, as ``ReduceOps.cpp`` computes
them (second-order central differences inside, first- or second-order one-sided ones at the
edges), written over strata ops so autograd flows through them.

    >>> strata.gradient(strata.tensor([1.0, 2.0, 4.0, 8.0]))
    (tensor([1.0000, 1.5000, 3.0000, 4.0000]),)
"""

import numbers

from ..core.shape import wrap_dim
from ..ops import shape as S
from ..ops.meta_rules import is_tensor


def _edges(x, d, edge_order, first, second):
    """One-sided differences at the start and the end of dim ``d``: ``first``/``second``
    give (the slices' weights, divisor) for the start and the end."""
    def slab(lo, hi):
        return S.slice(x, d, lo, hi, 1)
    size = x.shape[d]
    if edge_order == 1:
        return (slab(1, 2).sub(slab(0, 1)).div(first),
                slab(size - 1, size).sub(slab(size - 2, size - 1)).div(second))
    (a0, b0, c0), (a1, b1, c1) = first, second
    start = slab(0, 1).mul(a0).add(slab(1, 2).mul(b0)).add(slab(2, 3).mul(c0))
    end = slab(size - 3, size - 2).mul(a1).add(slab(size - 2, size - 1).mul(b1)).add(
        slab(size - 1, size).mul(c1))
    return start, end


def _uniform(x, d, h, edge_order):
    size = x.shape[d]
    center = S.slice(x, d, 2, size, 1).sub(S.slice(x, d, 0, size - 2, 1)).div(h).div(2)
    if edge_order == 1:
        start, end = _edges(x, d, 1, h, h)
    else:
        start, end = _edges(x, d, 2, (-1.5 / h, 2 / h, -0.5 / h), (0.5 / h, -2 / h, 1.5 / h))
    return S.cat([start, center, end], d)


def _coordinates(x, d, coords, edge_order):
    if coords.ndim != 1:
        raise RuntimeError(f"torch.gradient expected each element of spacing to have one "
                           f"dimension, but got an element with {coords.ndim} dimensions!")
    size = x.shape[d]
    shape = [1] * x.ndim
    shape[d] = -1
    dx = coords.diff(1, 0)
    dx1, dx2 = dx[:-1], dx[1:]
    a = dx2.neg().div(dx1.mul(dx1.add(dx2))).reshape(shape)
    b = dx2.sub(dx1).div(dx1.mul(dx2)).reshape(shape)
    c = dx1.div(dx2.mul(dx1.add(dx2))).reshape(shape)
    center = S.slice(x, d, 0, size - 2, 1).mul(a).add(S.slice(x, d, 1, size - 1, 1).mul(b)).add(
        S.slice(x, d, 2, size, 1).mul(c))
    if edge_order == 1:
        start, end = _edges(x, d, 1, dx[0], dx[-1])
    else:
        h0, h1, g1, g0 = dx[0], dx[1], dx[-2], dx[-1]   # the first two and the last two steps
        start, end = _edges(
            x, d, 2,
            (h0.mul(2).add(h1).neg().div(h0.mul(h0.add(h1))), h0.add(h1).div(h0.mul(h1)),
             h0.neg().div(h1.mul(h0.add(h1)))),
            (g0.div(g1.mul(g0.add(g1))), g0.add(g1).neg().div(g0.mul(g1)),
             g0.mul(2).add(g1).div(g0.mul(g0.add(g1)))))
    return S.cat([start, center, end], d)


def _dims(input, dim):
    if dim is None:
        return list(range(input.ndim)), False
    dims = [dim] if isinstance(dim, int) else list(dim)
    wrapped = [wrap_dim(d, input.ndim) for d in dims]
    for d in wrapped:
        if wrapped.count(d) > 1:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
    return wrapped, True


def gradient(input, *, spacing=1, dim=None, edge_order=1):
    """The derivative of ``input`` along each of ``dim`` (all dims by default), one tensor per
    dim; ``spacing`` is a step (one for all dims or one per dim) or the sample coordinates."""
    dims, given = _dims(input, dim)
    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")
    if isinstance(spacing, (numbers.Number,)) or is_tensor(spacing) and spacing.ndim == 0:
        spacing = [spacing] * len(dims)
    spacing = list(spacing)
    if len(spacing) != len(dims):
        which = f"'dim.size() = {len(dims)}', since dim argument was given" if given else \
            f"'self.dim() = {input.ndim}', since dim argument was not given"
        raise RuntimeError(f"torch.gradient expected spacing to be unspecified, a scalar, or a "
                           f"list of length equal to {which}, but got a list of length "
                           f"{len(spacing)}")
    for d in dims:
        if input.shape[d] < edge_order + 1:
            raise RuntimeError("torch.gradient expected each dimension size to be at least "
                               "edge_order+1")
    return tuple(_coordinates(input, d, h, edge_order) if is_tensor(h) and h.ndim else
                 _uniform(input, d, h, edge_order) for d, h in zip(dims, spacing))


FUNCTIONS = {"gradient": gradient}
METHODS = {}
