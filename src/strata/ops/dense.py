"""Dense layers: linear and bilinear maps, embedding lookup, and vector similarity/distance.

``linear`` is a composite over ``addmm``/``matmul`` (BLAS adds the bias for 2-D inputs);
``embedding`` is a primitive (one ``take``), with ``embedding_renorm_`` for ``max_norm``.
"""

import math

from ..core import dtype as D
from ..core.shape import broadcast_shapes, wrap_dim
from . import factory as F
from . import meta_rules as R
from . import pointwise as P
from . import scatter as SC
from . import shape as S
from .linalg import addmm, einsum, matmul
from .op import TensorSpec, aten, defop, register_decomposition
from .reductions import sum as reduce_sum
from .reductions import vector_norm

# --- embedding (primitives) -----------------------------------------------------------------------

def check_indices(indices, op):
    if indices.dtype not in (D.int64, D.int32):
        raise RuntimeError(f"Expected tensor for argument #1 'indices' to have one of the "
                           f"following scalar types: Long, Int; but got "
                           f"torch.{R.type_name(indices.dtype)}Tensor instead (while checking "
                           f"arguments for {op})")


def _embedding_meta(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    check_indices(indices, "embedding")
    if weight.ndim != 2:
        raise RuntimeError("'weight' must be 2-D")
    return TensorSpec(tuple(indices.shape) + (weight.shape[1],), weight.dtype)


def _embedding_renorm_meta(self, indices, max_norm, norm_type):
    if self.ndim != 2:
        raise RuntimeError("'self' must be 2-D")
    check_indices(indices, "embedding_renorm_")
    return self


embedding = defop("embedding(Tensor weight, Tensor indices, SymInt padding_idx=-1, "
                  "bool scale_grad_by_freq=False, bool sparse=False) -> Tensor", _embedding_meta,
                  function=True)
embedding_renorm_ = defop("embedding_renorm_(Tensor(a!) self, Tensor indices, float max_norm, "
                          "float norm_type) -> Tensor(a!)", _embedding_renorm_meta, function=True)
embedding_dense_backward = defop("embedding_dense_backward(Tensor grad_output, Tensor indices, "
                                 "SymInt num_weights, SymInt padding_idx, "
                                 "bool scale_grad_by_freq) -> Tensor")


@register_decomposition(embedding_dense_backward)
def _embedding_dense_backward(grad_output, indices, num_weights, padding_idx,
                              scale_grad_by_freq):
    """Rows of the weight gradient sum the gradients of the positions that looked them up:
    padding_idx's row gets none; scale_grad_by_freq divides by how often each index occurs.
    An op of its own, as ATen's, so that a device can write it in one kernel (no zero fill)."""
    dim = grad_output.shape[-1]
    idx = S.reshape(indices, (-1,))
    g = S.reshape(grad_output, (-1, dim))
    if padding_idx >= 0:
        # where, not a product with the mask: a NaN gradient at a padding position is skipped
        g = P.where(S.unsqueeze(P.eq(idx, padding_idx), 1), 0.0, g)
    if scale_grad_by_freq:
        counts = SC.index_add_(F.full((num_weights,), 0, g.dtype, None, g.device, None), 0, idx,
                               F.full(tuple(idx.shape), 1, g.dtype, None, g.device, None))
        g = P.div(g, S.unsqueeze(SC.index_select(counts, 0, idx), 1))
    return SC.index_add_(F.full((num_weights, dim), 0, g.dtype, None, g.device, None), 0, idx,
                         g)


# --- composites -----------------------------------------------------------------------------------
linear = defop("linear(Tensor input, Tensor weight, Tensor? bias=None) -> Tensor")
bilinear = defop("bilinear(Tensor input1, Tensor input2, Tensor weight, Tensor? bias=None) -> "
                 "Tensor", function=True)
cosine_similarity = defop("cosine_similarity(Tensor x1, Tensor x2, int dim=1, float eps=1e-08) "
                          "-> Tensor", function=True)
pairwise_distance = defop("pairwise_distance(Tensor x1, Tensor x2, float p=2., "
                          "float eps=1e-06, bool keepdim=False) -> Tensor", function=True)
pdist = defop("pdist(Tensor self, float p=2) -> Tensor", function=True)


@register_decomposition(linear)
def _linear(input, weight, bias=None):
    """``input @ weight.T + bias``: one addmm for 2-D inputs (BLAS adds the bias) and, as
    ATen, for contiguous inputs of other ranks with a 1-D bias (flattened to 2-D)."""
    weight_t = S.t(weight)   # ATen's linear calls t(): the weight's edge is a TBackward0
    if input.ndim == 2 and bias is not None:
        return addmm(bias, input, weight_t, 1, 1)   # every argument given: no binding
    if bias is not None and input.ndim and bias.ndim == 1 and bias.is_contiguous() and \
            input.is_contiguous():
        # ATen's _flatten_nd_linear: one addmm over the rows, viewed back (one GPU kernel)
        rows = math.prod(input.shape[:-1])
        out = addmm(bias, S.reshape(input, (rows, input.shape[-1])), weight_t, 1, 1)
        return S.view(out, (*input.shape[:-1], out.shape[-1]))
    out = matmul(input, weight_t)
    return out if bias is None else P.add(out, bias)


@register_decomposition(bilinear)
def _bilinear(input1, input2, weight, bias=None):
    if input1.ndim != input2.ndim:
        raise RuntimeError(f"bilinear(): input dimensions do not match: got {input1.ndim} and "
                           f"{input2.ndim}")
    for d in range(input1.ndim - 1):
        if input1.shape[d] != input2.shape[d]:
            raise RuntimeError(f"bilinear(): input batch dimensions do not match at dim {d}: "
                               f"got {input1.shape[d]} and {input2.shape[d]}")
    if weight.ndim != 3:
        raise RuntimeError(f"bilinear(): weight must be three-dimensional, but got "
                           f"{weight.ndim}-dimensional")
    if input1.shape[-1] != weight.shape[1]:
        raise RuntimeError(f"bilinear(): input1 size does not match weight size: got "
                           f"{input1.shape[-1]} but expected {weight.shape[1]}")
    if input2.shape[-1] != weight.shape[2]:
        raise RuntimeError(f"bilinear(): input2 size does not match weight size: got "
                           f"{input2.shape[-1]} but expected {weight.shape[2]}")
    if bias is not None and (bias.ndim != 1 or bias.shape[0] != weight.shape[0]):
        raise RuntimeError(f"bilinear(): bias size does not match weight size: got "
                           f"{bias.shape[0] if bias.ndim else 0} but expected {weight.shape[0]}")
    out = einsum("...i,oij,...j->...o", [input1, weight, input2])
    return out if bias is None else P.add(out, bias)


@register_decomposition(cosine_similarity)
def _cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """PyTorch's stable form: sum(x1 / max(|x1|, eps) * x2 / max(|x2|, eps)) over ``dim``."""
    common = R.promote(x1, x2)
    if common.category != D.FLOATING:
        raise RuntimeError(f"expected common dtype to be floating point, yet common dtype is "
                           f"{R.type_name(common)}")
    # integer inputs go to the common dtype first (vector_norm takes floats only)
    x1, x2 = (x if x.dtype.category == D.FLOATING else x.to(common) for x in (x1, x2))
    shape = broadcast_shapes(tuple(x1.shape), tuple(x2.shape))
    d = wrap_dim(dim, len(shape))
    x1, x2 = S.expand(x1, shape), S.expand(x2, shape)
    n1, n2 = _norm_clamped_under_no_grad(x1, d, eps), _norm_clamped_under_no_grad(x2, d, eps)
    return reduce_sum(P.mul(P.div(x1, n1), P.div(x2, n2)), [d], False)


def _norm_clamped_under_no_grad(x, d, eps):
    """max(||x||, eps) along ``d``, differentiated as ||x|| alone: ATen clamps the norms in
    place under no_grad, so a zero vector's gradient is that of x / eps. A clamped norm is
    written n - detach(n) + eps: the value eps, the derivative of n."""
    n = vector_norm(x, 2, [d], True)
    return P.where(P.lt(n, eps), P.add(P.sub(n, S.detach(n)), eps), n)


@register_decomposition(pairwise_distance)
def _pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """``||x1 - x2 + eps||_p`` over the last dim (PyTorch adds eps to avoid a zero norm)."""
    out_ndim = max(x1.ndim, x2.ndim)
    diff = P.add(P.sub(x1, x2), eps)
    if out_ndim == 0:
        return P.abs(diff)
    dim = -1
    if p == 0:   # the count of nonzeros, as a norm: its gradient is zero, not missing
        return vector_norm(diff, 0, [dim], keepdim)
    a = P.abs(diff)
    if p == math.inf:
        return aten.amax.default(a, [dim], keepdim)
    if p == -math.inf:
        return aten.amin.default(a, [dim], keepdim)
    if p == 1:
        return reduce_sum(a, [dim], keepdim)
    if p == 2:
        return P.sqrt(reduce_sum(P.mul(a, a), [dim], keepdim))
    return P.pow(reduce_sum(P.pow(a, p), [dim], keepdim), 1.0 / p)


@register_decomposition(pdist)
def _pdist(self, p=2.0):
    """The p-norm distances between the rows of an N x M input, pair (i, j) for i < j in
    row-major order (``torch.pdist``): the norms of the rows' differences. A zero distance
    has a zero gradient (the norm's own rule), and for p = inf every tied maximum gets the
    whole gradient, as ATen's ``_pdist_backward`` gives it."""
    if self.ndim != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {self.ndim}D")
    if not self.dtype.is_floating_point:
        raise RuntimeError("pdist only supports floating-point dtypes")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    pairs = F.triu_indices(self.shape[0], self.shape[0], 1, dtype=D.int64, device=self.device)
    diff = P.sub(*(SC.index_select(self, 0, S.select(pairs, 0, k)) for k in (0, 1)))
    if p != math.inf:
        return vector_norm(diff, p, [1], False)
    a = P.abs(diff)
    dist = S.detach(aten.amax.default(a, [1], True))
    ties = reduce_sum(P.mul(a, P.eq(a, dist)), [1], False)   # value: k * max; slope: sign
    return P.add(S.reshape(dist, (-1,)), P.sub(ties, S.detach(ties)))
