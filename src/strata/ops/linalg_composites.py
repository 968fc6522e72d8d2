"""Composite linear-algebra ops: ``mv``, ``addmv``, ``dot``, ``vdot``, ``outer``/``ger``,
``baddbmm``, ``addbmm``, ``tensordot``, ``kron``, ``trace``, ``cross``/``linalg_cross``,
``cdist`` and ``diag_embed``, each a decomposition over the products of ``linalg.py`` (``mm``,
``bmm``, ``addmm``, ``matmul``) and pointwise ops, with PyTorch's checks and errors, as in
``LinearAlgebra.cpp``.

Separate from ``linalg.py``, which defines the primitives (and ``matmul``, whose rank rules the
compiler's OpenCL kernels use directly).
"""

import math

from ..core import dtype as D
from ..core.shape import broadcast_shapes, wrap_dim
from . import meta_rules as R
from . import pointwise as P
from . import shape as S
from .complex import conj
from .linalg import (
    CTYPE,
    _check_addmv_dtypes,
    _check_mv,
    _dot,
    _mv_product,
    _not_implemented,
    blas_scalar,
    bmm,
    check_expandable,
    matmul,
    mm,
)
from .op import aten, defop, register_decomposition
from .reductions import sum as reduce_sum
from .reductions import vector_norm

addmv = defop("addmv(Tensor self, Tensor mat, Tensor vec, *, Scalar beta=1, Scalar alpha=1) -> "
              "Tensor", method=True, function=True)
vdot = defop("vdot(Tensor self, Tensor other) -> Tensor", method=True, function=True)
outer = defop("outer(Tensor self, Tensor vec2) -> Tensor", method=True, function=True)
ger = defop("ger(Tensor self, Tensor vec2) -> Tensor", method=True, function=True)
baddbmm = defop("baddbmm(Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, "
                "Scalar alpha=1) -> Tensor", method=True, function=True)
addbmm = defop("addbmm(Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, "
               "Scalar alpha=1) -> Tensor", method=True, function=True)
tensordot = defop("tensordot(Tensor self, Tensor other, int[] dims_self, int[] dims_other) -> "
                  "Tensor")
kron = defop("kron(Tensor self, Tensor other) -> Tensor", method=True, function=True)
trace = defop("trace(Tensor self) -> Tensor", method=True, function=True)
cross = defop("cross(Tensor self, Tensor other, int? dim=None) -> Tensor", method=True,
              function=True)
linalg_cross = defop("linalg_cross(Tensor self, Tensor other, *, int dim=-1) -> Tensor")
cdist = defop("cdist(Tensor x1, Tensor x2, float p=2., int? compute_mode=None) -> Tensor")
def _scaled_sum(self, product, beta, alpha):
    """``beta * self + alpha * product``; beta == 0 ignores self (even NaN), as BLAS does."""
    alpha, beta = blas_scalar(alpha, product.dtype), blas_scalar(beta, product.dtype)
    if alpha != 1:
        product = P.mul(product, alpha)
    if beta == 0:
        return product
    if beta != 1:
        self = P.mul(self, beta)
    return P.add(self, product)


@register_decomposition(addmv)
def _addmv(self, mat, vec, beta=1, alpha=1):
    _check_mv(self.shape[0] if self.ndim else 1, mat, vec, self.ndim)
    _check_addmv_dtypes(self.dtype, mat, vec)
    return _scaled_sum(self, _mv_product(mat, vec), beta, alpha)


@register_decomposition(vdot)
def _vdot(self, other):
    return _dot(conj(self), other)


def _outer_impl(self, vec2):
    for name, v in (("self", self), ("vec2", vec2)):
        if v.ndim != 1:
            raise RuntimeError(f"outer: Expected 1-D argument {name}, but got {v.ndim}-D")
    return P.mul(S.unsqueeze(self, 1), vec2)


register_decomposition(outer)(_outer_impl)
register_decomposition(ger)(_outer_impl)


def _check_baddbmm_dtype(self, batch1, batch2):
    if self.dtype is not batch1.dtype:
        raise RuntimeError(f"Input dtypes must be the same, got: input {CTYPE[self.dtype]}, "
                           f"batch1: {CTYPE[batch1.dtype]}, batch2: {CTYPE[batch2.dtype]}")


@register_decomposition(baddbmm)
def _baddbmm(self, batch1, batch2, beta=1, alpha=1):
    check_expandable(self, (batch1.shape[0], batch1.shape[1], batch2.shape[2]))
    _check_baddbmm_dtype(self, batch1, batch2)
    return _scaled_sum(self, bmm(batch1, batch2), beta, alpha)


@register_decomposition(addbmm)
def _addbmm(self, batch1, batch2, beta=1, alpha=1):
    for name, b in (("batch1", batch1), ("batch2", batch2)):
        if b.ndim != 3:
            raise RuntimeError(f"{name} must be a 3D tensor")
    if batch1.shape[0] != batch2.shape[0]:
        raise RuntimeError(f"batch1 and batch2 must have same number of batches, got "
                           f"{batch1.shape[0]} and {batch2.shape[0]}")
    if batch1.shape[2] != batch2.shape[1]:
        raise RuntimeError(f"Incompatible matrix sizes for bmm ({batch1.shape[1]}x"
                           f"{batch1.shape[2]} and {batch2.shape[1]}x{batch2.shape[2]})")
    check_expandable(self, (batch1.shape[1], batch2.shape[2]))
    if self.dtype is not batch2.dtype:
        raise RuntimeError(f"self and mat2 must have the same dtype, but got "
                           f"{R.type_name(self.dtype)} and {R.type_name(batch2.dtype)}")
    # sum_b batch1[b] @ batch2[b] is one mm over the concatenated contraction dim.
    b, n, k = batch1.shape
    lhs = S.reshape(S.permute(batch1, (1, 0, 2)), (n, b * k))
    rhs = S.reshape(batch2, (b * k, batch2.shape[2]))
    return _scaled_sum(self, mm(lhs, rhs), beta, alpha)


@register_decomposition(tensordot)
def _tensordot(self, other, dims_self, dims_other):
    dims_self, dims_other = list(dims_self), list(dims_other)
    if len(dims_self) != len(dims_other):
        raise RuntimeError("both dimension lists should have same length")
    if self.dtype is not other.dtype:
        raise RuntimeError("both inputs should have same dtype")
    ca = [wrap_dim(d, self.ndim) for d in dims_self]
    cb = [wrap_dim(d, other.ndim) for d in dims_other]
    for da, db, ra, rb in zip(ca, cb, dims_self, dims_other):
        sa, sb = self.shape[da], other.shape[db]
        if sa != sb and sa != 1 and sb != 1:
            raise RuntimeError(f"contracted dimensions need to match, but first has size {sa} "
                               f"in dim {ra} and second has size {sb} in dim {rb}")
    # A size-1 contracted dim against a larger one broadcasts: sum the other side instead.
    for i, (da, db) in enumerate(zip(ca, cb)):
        if self.shape[da] == 1 and other.shape[db] != 1:
            other = _sum_keepdim(other, db)
        elif other.shape[db] == 1 and self.shape[da] != 1:
            self = _sum_keepdim(self, da)
    free_a = [d for d in range(self.ndim) if d not in ca]
    free_b = [d for d in range(other.ndim) if d not in cb]
    k = math.prod(self.shape[d] for d in ca)
    left = S.reshape(S.permute(self, free_a + ca), (-1, k) if k else
                     (math.prod(self.shape[d] for d in free_a), 0))
    right = S.reshape(S.permute(other, cb + free_b), (k, -1) if k else
                      (0, math.prod(other.shape[d] for d in free_b)))
    out = mm(left, right)
    return S.view(out, tuple(self.shape[d] for d in free_a) +
                  tuple(other.shape[d] for d in free_b))


def _sum_keepdim(x, dim):
    return reduce_sum(x, [dim], True, dtype=x.dtype)


@register_decomposition(kron)
def _kron(self, other):
    n = max(self.ndim, other.ndim)
    a_shape = (1,) * (n - self.ndim) + tuple(self.shape)
    b_shape = (1,) * (n - other.ndim) + tuple(other.shape)
    a = S.reshape(self, tuple(x for s in a_shape for x in (s, 1)))
    b = S.reshape(other, tuple(x for s in b_shape for x in (1, s)))
    return S.reshape(P.mul(a, b), tuple(x * y for x, y in zip(a_shape, b_shape)))


@register_decomposition(trace)
def _trace(self):
    if self.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {self.ndim}")
    if self.dtype is D.bool_:
        _not_implemented("trace", self.dtype)
    return reduce_sum(S.diagonal(self, 0, 0, 1), None, False)


def _cross_impl(self, other, dim, shown_dim):
    if self.ndim != other.ndim:
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    d = wrap_dim(dim, self.ndim)
    if self.shape[d] != 3 or other.shape[d] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {shown_dim} must have length 3. Got "
                           f"{self.shape[d]} and {other.shape[d]}")
    if self.dtype is not other.dtype:
        raise RuntimeError(f"expected scalar type {R.type_name(self.dtype)} but found "
                           f"{R.type_name(other.dtype)}")
    if self.dtype is D.bool_:
        _not_implemented("cross", self.dtype)
    a = [S.select(self, d, i) for i in range(3)]
    b = [S.select(other, d, i) for i in range(3)]
    parts = [P.sub(P.mul(a[1], b[2]), P.mul(a[2], b[1])),
             P.sub(P.mul(a[2], b[0]), P.mul(a[0], b[2])),
             P.sub(P.mul(a[0], b[1]), P.mul(a[1], b[0]))]
    return S.stack(parts, d)


@register_decomposition(linalg_cross)
def _linalg_cross(self, other, dim=-1):
    return _cross_impl(self, other, dim, dim)


@register_decomposition(cross)
def _cross(self, other, dim=None):
    if dim is None:
        import warnings
        warnings.warn("Using torch.cross without specifying the dim arg is deprecated.\nPlease "
                      "either pass the dim explicitly or simply use torch.linalg.cross.\nThe "
                      "default value of dim will change to agree with that of linalg.cross in a "
                      "future release.", UserWarning, stacklevel=4)
        if self.ndim != other.ndim:
            raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
        shape = broadcast_shapes(tuple(self.shape), tuple(other.shape))
        dim = next((i for i, s in enumerate(shape) if s == 3), None)
        if dim is None:
            raise RuntimeError("no dimension of size 3 in input")
    return _cross_impl(self, other, dim, dim)


@register_decomposition(cdist)
def _cdist(x1, x2, p=2.0, compute_mode=None):
    """Distances from the broadcast difference, or for p = 2 ATen's matrix-product form
    ``sqrt(clamp_min(|x|^2 + |y|^2 - 2 x.y, 0))`` where ATen takes it: compute_mode 1
    (use_mm_for_euclid_dist), or 0/None (if necessary) with more than 25 rows on a side. Its
    memory is the output's, not rows x rows x columns (10000 x 1000 points of 128 floats: 40
    MB, not 5 GB); it is less exact for close points, as PyTorch's."""
    for name, x in (("X1", x1), ("X2", x2)):
        if x.ndim < 2:
            raise RuntimeError(f"cdist only supports at least 2D tensors, {name} got: {x.ndim}D")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: "
                           f"{x1.shape[-1]} X2: {x2.shape[-1]}")
    for name, x in (("X1", x1), ("X2", x2)):
        if x.dtype.category != D.FLOATING:
            raise RuntimeError(f"cdist only supports floating-point dtypes, {name} got: "
                               f"{R.type_name(x.dtype)}")
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    if p == 2 and (compute_mode == 1 or compute_mode in (None, 0) and
                   (x1.shape[-2] > 25 or x2.shape[-2] > 25)):
        return _euclidean_dist(x1, x2)
    diff = P.sub(S.unsqueeze(x1, -2), S.unsqueeze(x2, -3))
    if p == 0:   # ATen's min(ceil(|d|), 1): NaN stays NaN, and the gradient is zero
        return reduce_sum(P.clamp(P.ceil(P.abs(diff)), None, 1), [-1], False)
    if p == math.inf:
        return aten.amax.default(P.abs(diff), [-1], False)
    if p == 2:
        return P.sqrt(reduce_sum(P.mul(diff, diff), [-1], False))
    if p == 1:
        return reduce_sum(P.abs(diff), [-1], False)
    return P.pow(reduce_sum(P.pow(P.abs(diff), p), [-1], False), 1.0 / p)


def _euclidean_dist(x1, x2):
    """ATen's ``_euclidean_dist``: one product of [-2 x1, |x1|^2, 1] and [x2, 1, |x2|^2]."""
    from .shape import cat
    x1_norm = reduce_sum(P.mul(x1, x1), [-1], True)
    x2_norm = reduce_sum(P.mul(x2, x2), [-1], True)
    left = cat([P.mul(x1, -2), x1_norm, P.add(P.mul(x1_norm, 0), 1)], -1)
    right = cat([x2, P.add(P.mul(x2_norm, 0), 1), x2_norm], -1)
    return P.sqrt(P.clamp(matmul(left, S.transpose(right, -2, -1)), 0, None))


dist = defop("dist(Tensor self, Tensor other, Scalar p=2) -> Tensor", method=True, function=True)


@register_decomposition(dist)
def _dist(self, other, p=2):
    """The p-norm of the broadcast difference, flattened: ``linalg_vector_norm`` gives its dtype
    check and its p = 0, inf, -inf and negative p."""
    diff = P.sub(self, other)
    if diff.dtype.category not in (D.FLOATING, D.COMPLEX):
        raise RuntimeError(f"norm(): input dtype should be either floating point or complex. "
                           f"Got {R.type_name(diff.dtype)} instead.")
    return vector_norm(diff, p)


diag_embed = defop("diag_embed(Tensor self, int offset=0, int dim1=-2, int dim2=-1) -> Tensor",
                   method=True, function=True)


@register_decomposition(diag_embed)
def _diag_embed(self, offset=0, dim1=-2, dim2=-1):
    """Each last-dim vector on the ``offset`` diagonal of a new (dim1, dim2) matrix: a masked
    select against the identity (not a product, so inf stays off the other entries), padded to
    the offset, then moved into place."""
    from .factory import eye, scalar_tensor
    from .nn import constant_pad_nd
    out_ndim = self.ndim + 1
    d1, d2 = wrap_dim(dim1, out_ndim), wrap_dim(dim2, out_ndim)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    n, k = self.shape[-1], abs(offset)
    mask = eye(n, dtype=D.bool_, device=self.device)
    zero = scalar_tensor(0, dtype=self.dtype, device=self.device)
    square = P.where(mask, S.unsqueeze(self, -1), zero)
    # F.pad order: (last-dim left, right, second-last top, bottom)
    padding = [k, 0, 0, k] if offset >= 0 else [0, k, k, 0]
    square = constant_pad_nd(square, padding, 0) if k else square
    return S.movedim(square, [-2, -1], [d1, d2])
