"""Derivatives of ``ops/shape.py`` and ``split_join.py``: a view's gradient is the view's adjoint
(scatter the gradient into zeros shaped like the input), a copying shape op's the inverse
movement."""

from ...core.shape import storage_extent, wrap_dim
from ...ops import factory as F
from ...ops import pointwise as P
from ...ops import reductions as RD
from ...ops import shape as S
from ...ops import split_join as SJ
from . import derivative, inplace_view, non_differentiable, sum_to, zeros


def _scatter_into_zeros(ctx, grad, view_fn):
    """The input-shaped gradient of a view: zeros with the view's region set to ``grad``
    (PyTorch's ``select_backward``/``slice_backward``/...). The write is an in-place copy into
    a view, so with create_graph it is recorded like any other (a CopySlices node)."""
    out = zeros(ctx.sizes("self"), grad)
    F.copy_(view_fn(out), grad)
    return out


# --- views -------------------------------------------------------------------------------------
@derivative(S.view, "ViewBackward0")
def _view(ctx, grad):
    return S.reshape(grad, ctx.sizes("self"))


def _overlaps(shape, strides) -> bool:
    """Whether a layout maps two indices to one memory location (stride-0 dims excluded)."""
    dims = sorted((s, n) for n, s in zip(shape, strides) if n > 1)
    reach = 0
    for stride, size in dims:
        if stride <= reach:
            return True
        reach += (size - 1) * stride
    return False


@derivative(S.as_strided, "AsStridedBackward0", save=("self:geometry",))
def _as_strided(ctx, grad):
    """Scatter the gradient into a zero buffer laid out like the input's memory, then read the
    input's elements back. Stride-0 dims of the output (expanded) sum first; other overlapping
    outputs would need a scatter-add and are refused."""
    in_shape, in_strides, in_offset = ctx.self           # saved as the input's geometry
    size, stride = tuple(ctx.size), tuple(ctx.stride)
    offset = in_offset if ctx.storage_offset is None else ctx.storage_offset
    zero_dims = [d for d, (n, s) in enumerate(zip(size, stride)) if s == 0 and n > 1]
    if zero_dims:
        grad = RD.sum(grad, zero_dims, True)
        size = tuple(1 if d in zero_dims else n for d, n in enumerate(size))
    if _overlaps(size, stride):
        raise NotImplementedError("as_strided backward: the output's elements overlap in memory "
                                  "(strata supports non-overlapping and expanded outputs)")
    lo = min(in_offset, offset)
    hi = max(in_offset + storage_extent(in_shape, in_strides),
             offset + storage_extent(size, stride))
    buffer = zeros((max(hi - lo, 0),), grad)
    F.copy_(S.as_strided(buffer, size, stride, offset - lo), grad)
    return S.as_strided(buffer, in_shape, in_strides, in_offset - lo)


@derivative(S.permute, "PermuteBackward0")
def _permute(ctx, grad):
    dims = [wrap_dim(d, len(ctx.dims)) for d in ctx.dims]
    inverse = [0] * len(dims)
    for i, d in enumerate(dims):
        inverse[d] = i
    return S.permute(grad, inverse)


@derivative(S.transpose, "TransposeBackward0")
def _transpose(ctx, grad):
    return S.transpose(grad, ctx.dim0, ctx.dim1)


@derivative(S.t, "TBackward0")
def _t(ctx, grad):
    return S.t(grad)


@derivative(S.expand, "ExpandBackward0")
def _expand(ctx, grad):
    return sum_to(grad, ctx.sizes("self"))


def _squeeze_name(self, dim=None):
    return f"SqueezeBackward{0 if dim is None else 1 if isinstance(dim, int) else 2}"


@derivative(S.squeeze, _squeeze_name)
def _squeeze(ctx, grad):
    """``unsqueeze_to``: one squeezed dim comes back as a view (``unsqueeze``, one primitive),
    as in PyTorch; other forms reshape to the input's sizes."""
    sizes = ctx.sizes("self")
    dim = ctx.dim
    if type(dim) is int and sizes:
        dim = wrap_dim(dim, len(sizes))
        return S.unsqueeze(grad, dim) if sizes[dim] == 1 else grad
    return S.reshape(grad, sizes)


@derivative(S.unsqueeze, "UnsqueezeBackward0")
def _unsqueeze(ctx, grad):
    return S.squeeze(grad, [wrap_dim(ctx.dim, grad.ndim)])


# The in-place view methods (``autograd/inplace_views.py``) record the view's formula under
# derivatives.yaml's in-place rows' names.
inplace_view(S.as_strided, "AsStridedBackward1")
inplace_view(S.transpose, "TransposeBackward1")
inplace_view(S.t, "TBackward1")
inplace_view(S.squeeze, lambda self, dim=None:
             f"SqueezeBackward{3 if dim is None else 4 if isinstance(dim, int) else 5}")
inplace_view(S.unsqueeze, "UnsqueezeBackward1")


@derivative(S.slice, "SliceBackward0")
def _slice(ctx, grad):
    return _scatter_into_zeros(ctx, grad, lambda z: S.slice(z, ctx.dim, ctx.start, ctx.end,
                                                            ctx.step))


@derivative(S.select, "SelectBackward0")
def _select(ctx, grad):
    return _scatter_into_zeros(ctx, grad, lambda z: S.select(z, ctx.dim, ctx.index))


# split/split_with_sizes/unbind are composites with rows of their own (CompositeExplicitAutograd in
# backends/composite.py): one node for all pieces, as ATen records. The engine gives zeros for the
# pieces no gradient reached, so the pieces' gradients join back whole.
@derivative(SJ.split, "SplitBackward0")
def _split(ctx, *grads):
    return S.cat(grads, wrap_dim(ctx.dim, len(ctx.sizes("self"))))


@derivative(SJ.split_with_sizes, "SplitWithSizesBackward0")
def _split_with_sizes(ctx, *grads):
    return S.cat(grads, wrap_dim(ctx.dim, len(ctx.sizes("self"))))


@derivative(SJ.unbind, "UnbindBackward0")
def _unbind(ctx, *grads):
    return S.stack(grads, wrap_dim(ctx.dim, len(ctx.sizes("self"))))


@derivative(S.diagonal, "DiagonalBackward0")
def _diagonal(ctx, grad):
    return _scatter_into_zeros(ctx, grad,
                               lambda z: S.diagonal(z, ctx.offset, ctx.dim1, ctx.dim2))


@derivative(S.unfold, "UnfoldBackward0")
def _unfold(ctx, grad):
    """Window ``i`` element ``j`` came from input position ``i * step + j`` along the dim;
    overlapping windows (step < size) add up."""
    shape = ctx.sizes("self")
    if not shape:
        return S.reshape(grad, ())
    d = wrap_dim(ctx.dimension, len(shape))
    out = zeros(shape, grad)
    count = grad._shape[d]
    for j in range(ctx.size):
        target = S.slice(out, d, j, j + (count - 1) * ctx.step + 1, ctx.step)
        P.add_(target, S.select(grad, -1, j), 1)
    return out


@derivative(S.alias, "AliasBackward0")
def _alias(ctx, grad):
    return grad


non_differentiable(S.detach)


# --- copying shape ops -------------------------------------------------------------------------
@derivative(S.cat, "CatBackward0")
def _cat(ctx, grad):
    metas = ctx._input_meta
    ref = next((m[0] for m in metas if not (len(m[0]) == 1 and m[0][0] == 0)), metas[0][0])
    d = wrap_dim(ctx.dim, len(ref))
    grads, start = [], 0
    for (shape, _, _), (edge, _) in zip(metas, ctx.next_functions):
        if len(shape) == 1 and shape[0] == 0 and len(ref) != 1:   # skipped legacy empty input
            grads.append(zeros(shape, grad) if edge is not None else None)
            continue
        size = shape[d]
        grads.append(S.slice(grad, d, start, start + size) if edge is not None else None)
        start += size
    return grads


@derivative(S.stack, "StackBackward0")
def _stack(ctx, grad):
    return [g if edge is not None else None
            for g, (edge, _) in zip(SJ.unbind(grad, ctx.dim), ctx.next_functions)]


@derivative(S.flip, "FlipBackward0")
def _flip(ctx, grad):
    return S.flip(grad, ctx.dims)


@derivative(S.roll, "RollBackward0")
def _roll(ctx, grad):
    shifts = (ctx.shifts,) if isinstance(ctx.shifts, int) else tuple(ctx.shifts)
    return S.roll(grad, [-s for s in shifts], ctx.dims)


@derivative(S.repeat, "RepeatBackward0")
def _repeat(ctx, grad):
    """Split every dim into (repeat, size) and sum the repeat parts."""
    shape = tuple(ctx.sizes("self"))
    repeats = tuple(ctx.repeats)
    padded = (1,) * (len(repeats) - len(shape)) + shape
    split = []
    for r, s in zip(repeats, padded):
        split += [r, s]
    grad = S.reshape(grad, split)
    if split:
        grad = RD.sum(grad, list(range(0, len(split), 2)), False)
    return S.reshape(grad, shape)


@derivative(S.tril, "TrilBackward0")
def _tril(ctx, grad):
    return S.tril(grad, ctx.diagonal)


@derivative(S.triu, "TriuBackward0")
def _triu(ctx, grad):
    return S.triu(grad, ctx.diagonal)


def _diag_name(self, diagonal=0):
    return "DiagEmbedBackward0" if self.ndim == 1 else "DiagonalBackward0_copy"


@derivative(S.diag, _diag_name)
def _diag(ctx, grad):
    if len(ctx.sizes("self")) == 1:
        return S.diagonal(grad, ctx.diagonal, 0, 1)
    return _scatter_into_zeros(ctx, grad, lambda z: S.diagonal(z, ctx.diagonal, 0, 1))


@derivative(S._reshape_copy, "ReshapeCopyBackward0")
def _reshape_copy(ctx, grad):
    return S.reshape(grad, ctx.sizes("self"))


non_differentiable(S.repeat_interleave_indices)


# block_diag is a composite with a row of its own (CompositeExplicitAutograd)
@derivative(SJ.block_diag, "BlockDiagBackward0")
def _block_diag(ctx, grad):
    """Each input's block of the gradient (a 0-d or 1-d input sat as a one-row matrix)."""
    grads, row, col = [], 0, 0
    for (shape, _, _), (edge, _) in zip(ctx._input_meta, ctx.next_functions):
        rows, cols = shape if len(shape) == 2 else (1, shape[0] if shape else 1)
        if edge is not None:
            block = S.slice(S.slice(grad, 0, row, row + rows), 1, col, col + cols)
            grads.append(S.reshape(block, shape))
        else:
            grads.append(None)
        row, col = row + rows, col + cols
    return grads
