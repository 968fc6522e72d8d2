"""Composite shape ops that cut a tensor into pieces (``split``, ``split_with_sizes``, ``chunk``,
``unbind``: views of it) or join pieces into one (``hstack``, ``vstack``, ``block_diag``,
``cartesian_prod``, ``combinations``), or write a piece into a copy of a tensor (``slice_scatter``,
``select_scatter``, ``diagonal_scatter``: a view's functional inverse), each a decomposition over
the view and copy ops of ``shape.py`` (``slice``, ``select``, ``cat``, ``stack``, ...).

Separate from ``shape.py``, which defines the primitives these build on.
"""

import itertools

from ..core import dtype as D
from ..core.shape import wrap_dim
from . import meta_rules as R
from .factory import clone, copy_
from .op import defop, register_decomposition
from .shape import _fmt, _sizes, cat, diagonal, reshape, select, slice, stack, unsqueeze

split = defop("split.Tensor(Tensor(a) self, SymInt split_size, int dim=0) -> Tensor(a)[]")
split_with_sizes = defop("split_with_sizes(Tensor(a) self, SymInt[] split_sizes, int dim=0) -> "
                         "Tensor(a)[]")
chunk = defop("chunk(Tensor(a) self, int chunks, int dim=0) -> Tensor(a)[]", method=True,
              function=True)
unbind = defop("unbind.int(Tensor(a) self, int dim=0) -> Tensor(a)[]", method=True,
               function=True)
hstack = defop("hstack(Tensor[] tensors) -> Tensor", function=True)
vstack = defop("vstack(Tensor[] tensors) -> Tensor", function=True)
def _check_splittable(self):
    if self.ndim == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")


@register_decomposition(split)
def _split(self, split_size, dim=0):
    _check_splittable(self)
    if split_size < 0:
        raise RuntimeError(f"split expects split_size be non-negative, but got "
                           f"split_size={split_size}")
    d = wrap_dim(dim, self.ndim)
    size = self.shape[d]
    if split_size == 0 and size != 0:
        raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got dimension "
                           f"size of {size}")
    # At least one piece, even when split_size > size (or both are 0).
    starts = range(0, size, split_size) if size else (0,)
    return tuple(slice(self, d, s, min(s + split_size, size)) for s in starts)


@register_decomposition(split_with_sizes)
def _split_with_sizes(self, split_sizes, dim=0):
    _check_splittable(self)
    split_sizes = _sizes(split_sizes)
    if any(s < 0 for s in split_sizes):
        raise RuntimeError(f"split_with_sizes expects split_sizes have only non-negative entries, "
                           f"but got split_sizes={_fmt(split_sizes)}")
    d = wrap_dim(dim, self.ndim)
    if sum(split_sizes) != self.shape[d]:
        raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to "
                           f"{self.shape[d]} (input tensor's size at dimension {d}), but got "
                           f"split_sizes={_fmt(split_sizes)}")
    out, start = [], 0
    for s in split_sizes:
        out.append(slice(self, d, start, start + s))
        start += s
    return tuple(out)


@register_decomposition(chunk)
def _chunk(self, chunks, dim=0):
    if self.ndim == 0:
        raise RuntimeError("chunk expects at least a 1-dimensional tensor")
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    d = wrap_dim(dim, self.ndim)
    size = self.shape[d]
    if size == 0:  # `chunks` empty pieces (split would give only one)
        return split_with_sizes(self, (0,) * chunks, d)
    return split(self, (size + chunks - 1) // chunks, d)


@register_decomposition(unbind)
def _unbind(self, dim=0):
    d = wrap_dim(dim, self.ndim, scalar_ok=False)
    return tuple(select(self, d, i) for i in range(self.shape[d]))


@register_decomposition(hstack)
def _hstack(tensors):
    tensors = [x if x.ndim else reshape(x, (1,)) for x in tensors]
    return cat(tensors, 0 if tensors[0].ndim == 1 else 1)


@register_decomposition(vstack)
def _vstack(tensors):
    # atleast_2d, as ATen's: a 1-d row unsqueezed, a 0-d one reshaped
    tensors = [x if x.ndim >= 2 else unsqueeze(x, 0) if x.ndim == 1 else reshape(x, (1, 1))
               for x in tensors]
    return cat(tensors, 0)


# --- products of 1-D tensors and block matrices: composites over cat, stack and expand ----------
block_diag = defop("block_diag(Tensor[] tensors) -> Tensor", function=True)
cartesian_prod = defop("cartesian_prod(Tensor[] tensors) -> Tensor")
combinations = defop("combinations(Tensor self, int r=2, bool with_replacement=False) -> Tensor",
                     function=True)


def _check_vector(x):
    if x.ndim != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {_fmt(x.shape)}")


@register_decomposition(block_diag)
def _block_diag(tensors):
    """Each input (as a matrix) between zero blocks, the rows of blocks stacked."""
    from .factory import full
    for i, x in enumerate(tensors):
        if x.ndim > 2:
            raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer dimensions. "
                               f"Input {i} has {x.ndim} dimensions")
    dt, device = R.promote(*tensors), tensors[0].device
    blocks = [x.reshape(1, -1) if x.ndim < 2 else x for x in tensors]
    width = sum(b.shape[1] for b in blocks)
    rows, left = [], 0
    for b in blocks:
        r, c = b.shape
        rows.append(cat([full((r, left), 0, dtype=dt, device=device), b.to(dt),
                         full((r, width - left - c), 0, dtype=dt, device=device)], 1))
        left += c
    return cat(rows, 0)


@register_decomposition(cartesian_prod)
def _cartesian_prod(tensors):
    if not tensors:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    for x in tensors:
        _check_vector(x)
    if len(tensors) == 1:
        return tensors[0]
    if any(x.dtype is not tensors[0].dtype for x in tensors):
        raise RuntimeError("meshgrid expects all tensors to have the same dtype")
    sizes = [x.shape[0] for x in tensors]
    grids = []
    for i, x in enumerate(tensors):
        shape = [1] * len(sizes)
        shape[i] = sizes[i]
        grids.append(x.reshape(shape).expand(sizes).reshape(-1))
    return stack(grids, 1)


@register_decomposition(combinations)
def _combinations(self, r=2, with_replacement=False):
    """The r-element combinations of the vector's elements, in lexicographic index order."""
    from .factory import full
    from .scatter import index_select
    _check_vector(self)
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return full((0,), 0, dtype=self.dtype, device=self.device)
    pick = itertools.combinations_with_replacement if with_replacement else \
        itertools.combinations
    picks = list(pick(range(self.shape[0]), r))
    columns = []
    for k in range(r):
        index = full((len(picks),), 0, dtype=D.int64, device=self.device)
        if picks:
            index = index.new_tensor([p[k] for p in picks])
        columns.append(index_select(self, 0, index))
    return stack(columns, 1)


# --- a view's functional inverse: a copy of self with the view's elements replaced by src ------
slice_scatter = defop("slice_scatter(Tensor self, Tensor src, int dim=0, SymInt? start=None, "
                      "SymInt? end=None, SymInt step=1) -> Tensor", method=True, function=True)
select_scatter = defop("select_scatter(Tensor self, Tensor src, int dim, SymInt index) -> Tensor",
                       method=True, function=True)
diagonal_scatter = defop("diagonal_scatter(Tensor self, Tensor src, int offset=0, int dim1=0, "
                         "int dim2=1) -> Tensor", method=True, function=True)


def _scatter_into_view(self, src, view_of):
    """``self``'s copy (in its layout) with ``view_of(copy)`` overwritten by ``src``; autograd
    records the copy and the write into its view (CloneBackward0, CopySlices)."""
    out = clone(self)
    view = view_of(out)
    if tuple(src.shape) != tuple(view.shape):
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = "
                           f"{_fmt(src.shape)}, slice size = {_fmt(view.shape)}")
    copy_(view, src)
    return out


@register_decomposition(slice_scatter)
def _slice_scatter(self, src, dim=0, start=None, end=None, step=1):
    return _scatter_into_view(self, src, lambda t: slice(t, dim, start, end, step))


@register_decomposition(select_scatter)
def _select_scatter(self, src, dim, index):
    return _scatter_into_view(self, src, lambda t: select(t, dim, index))


@register_decomposition(diagonal_scatter)
def _diagonal_scatter(self, src, offset=0, dim1=0, dim2=1):
    return _scatter_into_view(self, src, lambda t: diagonal(t, offset, dim1, dim2))
