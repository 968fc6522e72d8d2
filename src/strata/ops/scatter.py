"""Indexing along one dim: ``gather``/``scatter`` (index has self's rank) and ``index_select``/
``index_add_``/``index_copy_``/``index_fill_`` (a 1-D index picks slices of ``dim``).

Checks and messages follow ``aten/src/ATen/native/ScatterGatherChecks.h`` and
``TensorAdvancedIndexing.cpp``. Index bounds depend on the data, so only the CPU kernels check
them. In-place scatters are composites that copy the out-of-place result into ``self`` (the
functional form is the primitive, as in PyTorch's core ATen IR); for the ``index_*`` family the
in-place form is the primitive and the functional one clones first.
"""

import warnings

from ..core import dtype as D
from ..core.shape import broadcast_shapes, wrap_dim
from . import meta_rules as R
from .indexing import contiguous_spec, fmt
from .op import defop, register_decomposition

_INT_INDEX = (D.int64, D.int32)


def _nonempty_size(shape, d):
    return 1 if len(shape) == 0 else shape[d]


def _src_size(src, d):
    """``src.size(d)`` as PyTorch reads it while checking: 1 for a scalar, else a checked dim."""
    return 1 if src.ndim == 0 else src.shape[wrap_dim(d, src.ndim)]


def _larger_apart_from(ishape, shape, d, ndim):
    """Is the index larger than ``shape`` at a dim other than ``d``? (0-dim shapes read as
    (1,); plain loops over the shape tuples: this runs in every gather and scatter.)"""
    ishape, shape = ishape or (1,), shape or (1,)
    for k in range(ndim):
        if k != d and ishape[k] > shape[k]:
            return True
    return False


def _larger_than_src(ishape, src, ndim):
    sshape = src._shape
    for k in range(ndim):
        size = sshape[k] if k < len(sshape) else _src_size(src, k)   # raises past src's dims
        if (ishape[k] if ishape else 1) > size:
            return True
    return False


# --- gather / scatter -----------------------------------------------------------------------------

def _gather_meta(self, dim, index, sparse_grad=False):
    shape, ishape = self._shape, index._shape
    d = wrap_dim(dim, len(shape))
    if 0 in ishape:
        return contiguous_spec(ishape, self.dtype)
    if index.dtype not in _INT_INDEX:
        raise RuntimeError("gather(): Expected dtype int32/int64 for index")
    ndim = max(len(shape), 1)
    if ndim != max(len(ishape), 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as input tensor")
    if _larger_apart_from(ishape, shape, d, ndim):
        k = next(k for k in range(ndim)
                 if k != d and _nonempty_size(ishape, k) > _nonempty_size(shape, k))
        raise RuntimeError(f"Size does not match at dimension {k} expected index "
                           f"{fmt(index.shape)} to be no larger than self {fmt(self.shape)} "
                           f"apart from dimension {d}")
    return contiguous_spec(ishape, self.dtype)


def check_scatter(self, dim, index, src=None, name="scatter"):
    """scatter_gather_dtype_check + scatter_shape_check; ``src`` None for the value overloads.
    Returns the wrapped dim."""
    shape, ishape = self._shape, index._shape
    d = wrap_dim(dim, len(shape))
    empty = 0 in ishape
    if not empty and index.dtype not in _INT_INDEX:
        raise RuntimeError(f"{name}(): Expected dtype int32/int64 for index")
    if src is not None and src.dtype is not self.dtype:
        raise RuntimeError(f"{name}(): Expected self.dtype to be equal to src.dtype")
    if empty:
        return d
    ndim = max(len(shape), 1)
    if ndim != max(len(ishape), 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as self tensor")
    wrong = _larger_apart_from(ishape, shape, d, ndim)
    if src is not None:
        if wrong or _larger_than_src(ishape, src, ndim):
            raise RuntimeError(f"Expected index {fmt(index.shape)} to be no larger than self "
                               f"{fmt(self.shape)} apart from dimension {d} and to be no larger "
                               f"size than src {fmt(src.shape)}")
    elif wrong:
        raise RuntimeError(f"Expected index {fmt(index.shape)} to be no larger than self "
                           f"{fmt(self.shape)} apart from dimension {d}")
    return d


REDUCTIONS = {"sum": "sum", "prod": "prod", "mean": "mean", "amax": "amax", "max": "amax",
              "amin": "amin", "min": "amin"}


def scatter_reduction(reduce):
    """scatter_reduce's reduction name, normalised (``max``/``min`` are accepted aliases)."""
    try:
        return REDUCTIONS[reduce]
    except KeyError:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got "
                           f"{reduce}") from None


def _scatter_meta(self, dim, index, src):
    check_scatter(self, dim, index, src)
    return contiguous_spec(self.shape, self.dtype)


def _scatter_value_meta(self, dim, index, value):
    check_scatter(self, dim, index)
    R.check_scalar_fits(value, self.dtype)
    return contiguous_spec(self.shape, self.dtype)


def _scatter_reduce_meta(self, dim, index, src, reduce, include_self=True):
    check_scatter(self, dim, index, src)
    if scatter_reduction(reduce) == "mean" and self.dtype is D.bool_:
        raise NotImplementedError("\"scatter_gather_tensor_cpu_reduce_mean\" not implemented for "
                                  "'Bool'")
    return contiguous_spec(self.shape, self.dtype)


gather = defop("gather(Tensor self, int dim, Tensor index, *, bool sparse_grad=False) -> Tensor",
               _gather_meta, method=True, function=True)
scatter = defop("scatter.src(Tensor self, int dim, Tensor index, Tensor src) -> Tensor",
                _scatter_meta)
scatter_value = defop("scatter.value(Tensor self, int dim, Tensor index, Scalar value) -> Tensor",
                      _scatter_value_meta)
scatter_reduce_legacy = defop("scatter.reduce(Tensor self, int dim, Tensor index, Tensor src, *, "
                              "str reduce) -> Tensor")
scatter_value_reduce = defop("scatter.value_reduce(Tensor self, int dim, Tensor index, "
                             "Scalar value, *, str reduce) -> Tensor")
scatter_add = defop("scatter_add(Tensor self, int dim, Tensor index, Tensor src) -> Tensor",
                    _scatter_meta, method=True, function=True)
scatter_reduce = defop("scatter_reduce.two(Tensor self, int dim, Tensor index, Tensor src, "
                       "str reduce, *, bool include_self=True) -> Tensor", _scatter_reduce_meta,
                       method=True, function=True)

scatter_ = defop("scatter_.src(Tensor(a!) self, int dim, Tensor index, Tensor src) -> Tensor(a!)")
scatter_value_ = defop("scatter_.value(Tensor(a!) self, int dim, Tensor index, Scalar value) -> "
                       "Tensor(a!)")
scatter_reduce_legacy_ = defop("scatter_.reduce(Tensor(a!) self, int dim, Tensor index, "
                               "Tensor src, *, str reduce) -> Tensor(a!)")
scatter_value_reduce_ = defop("scatter_.value_reduce(Tensor(a!) self, int dim, Tensor index, "
                              "Scalar value, *, str reduce) -> Tensor(a!)")
scatter_add_ = defop("scatter_add_(Tensor(a!) self, int dim, Tensor index, Tensor src) -> "
                     "Tensor(a!)", method=True)
scatter_reduce_ = defop("scatter_reduce_.two(Tensor(a!) self, int dim, Tensor index, Tensor src, "
                        "str reduce, *, bool include_self=True) -> Tensor(a!)", method=True)


def _legacy_reduction(reduce):
    if reduce not in ("add", "multiply"):
        raise RuntimeError("reduce argument must be either add or multiply.")
    return "sum" if reduce == "add" else "prod"


def _full_like_index(self, index, value):
    from .factory import full
    return full(tuple(index.shape), value, dtype=self.dtype, device=self.device)


@register_decomposition(scatter_reduce_legacy)
def _scatter_reduce_legacy(self, dim, index, src, reduce):
    reduction = _legacy_reduction(reduce)
    warnings.warn("The reduce argument of torch.scatter with Tensor src is deprecated and will be "
                  "removed in a future PyTorch release. Use torch.scatter_reduce instead for more "
                  "reduction options.", UserWarning, stacklevel=2)
    return scatter_reduce(self, dim, index, src, reduction, include_self=True)


@register_decomposition(scatter_value_reduce)
def _scatter_value_reduce(self, dim, index, value, reduce):
    check_scatter(self, dim, index)
    value = R.check_scalar_fits(value, self.dtype)
    reduction = _legacy_reduction(reduce)
    return scatter_reduce(self, dim, index, _full_like_index(self, index, value), reduction,
                          include_self=True)


def _inplace(functional):
    """An in-place scatter: the functional result (fully validated) copied into ``self``.

    When autograd may record, the functional op gets a clone of ``self``: scatter_reduce saves
    its ``self`` for backward, and the copy below would overwrite it (PyTorch saves a clone of
    the original self for its in-place ops the same way)."""
    def decomposition(self, *args, **kwargs):
        from .factory import clone, copy_
        source = self
        if self.requires_grad or any(getattr(a, "requires_grad", False) for a in args):
            source = clone(self)
        return copy_(self, functional(source, *args, **kwargs))
    decomposition.__name__ = decomposition.__qualname__ = f"inplace[{functional.name}]"
    return decomposition


register_decomposition(scatter_)(_inplace(scatter))
register_decomposition(scatter_value_)(_inplace(scatter_value))
register_decomposition(scatter_reduce_legacy_)(_inplace(scatter_reduce_legacy))
register_decomposition(scatter_value_reduce_)(_inplace(scatter_value_reduce))
register_decomposition(scatter_add_)(_inplace(scatter_add))
register_decomposition(scatter_reduce_)(_inplace(scatter_reduce))


# --- index_select / index_add_ / index_copy_ / index_fill_ ----------------------------------------

def _index_select_meta(self, dim, index):
    d = wrap_dim(dim, self.ndim)
    if index.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    if self.ndim == 0 and index.numel() != 1:
        raise RuntimeError(f"index_select(): Index to scalar can have only 1 value, got "
                           f"{index.numel()} value(s)")
    if index.dtype not in _INT_INDEX:
        raise RuntimeError("index_select(): Expected dtype int32 or int64 for index")
    shape = list(self.shape)
    if shape:
        shape[d] = index.numel()
    return contiguous_spec(shape, self.dtype)


def _sizes_without(shape, d):
    return [s for k, s in enumerate(shape) if k != d]


def _index_add_meta_(self, dim, index, source, alpha=1):
    d = wrap_dim(dim, self.ndim)
    if index.ndim > 1:
        raise IndexError(f"index_add_(): Index is supposed to be a vector, but got dim: "
                         f"{index.ndim} with type: {R.type_name(index.dtype)} and size: "
                         f"{fmt(index.shape)}")
    if index.dtype not in _INT_INDEX:
        raise RuntimeError(f"index_add_(): Expected dtype int32/int64 for index but got: "
                           f"{R.type_name(index.dtype)}")
    if source.dtype is not self.dtype:
        raise RuntimeError(f"index_add_(): self ({R.type_name(self.dtype)}) and source "
                           f"({R.type_name(source.dtype)}) must have the same scalar type")
    if d != 0 and d >= source.ndim:
        raise RuntimeError(f"index_add_(): Indexing dim {d} is out of bounds of the source tensor "
                           f"with dim {source.ndim}")
    count = 1 if source.ndim == 0 else source.shape[d]
    if index.numel() != count:
        raise RuntimeError(f"index_add_(): Number of indices ({index.numel()}) should be equal to "
                           f"source.size(dim): ({count}), for dim: {d}")
    self_sizes, source_sizes = list(self.shape), list(source.shape)
    if source.ndim and self.ndim:
        self_sizes, source_sizes = _sizes_without(self_sizes, d), _sizes_without(source_sizes, d)
    if self_sizes != source_sizes:
        raise RuntimeError(f"source tensor shape must match self tensor shape, excluding the "
                           f"specified dimension. Got self.shape = {fmt(self.shape)} "
                           f"source.shape = {fmt(source.shape)}")
    R.check_no_internal_overlap(self)       # ATen's index_add meta: then no overlap with
    R.check_no_overlap(self, index, source)  # the index or the source, a full alias included
    return self


def _index_copy_meta_(self, dim, index, source):
    d = wrap_dim(dim, self.ndim)
    if index.ndim >= 2:
        raise IndexError(f"index_copy_(): Index should have dimension 1 or 0 (got {index.ndim})")
    n = index.numel()
    if source.ndim == 0 and n != 1:
        raise IndexError(f"index_copy_(): When source is scalar, index should have one element "
                         f"(got {n})")
    if source.ndim != self.ndim and source.ndim != 0 and self.ndim != 0:
        raise IndexError(f"index_copy_(): When source and destination are not scalars, their "
                         f"dimensionality must match. Source dimensionality ({source.ndim}), "
                         f"destination dimensionality ({self.ndim})")
    if index.dtype is not D.int64:
        raise RuntimeError(f"index_copy_(): Expected a long tensor for index, but got "
                           f"{R.type_name(index.dtype)}")
    if source.dtype is not self.dtype:
        raise RuntimeError(f"index_copy_(): self and source expected to have the same dtype, but "
                           f"got (self) {R.type_name(self.dtype)} and (source) "
                           f"{R.type_name(source.dtype)}")
    self_sliced = _sizes_without(self.shape, d) if self.ndim else []
    source_sliced = _sizes_without(source.shape, d) if source.ndim else []
    if self_sliced != source_sliced:
        raise RuntimeError(f"index_copy_(): Source/destination tensor must have same slice "
                           f"shapes. Destination slice shape: {' '.join(map(str, self_sliced))} "
                           f"at dimension {d} and source slice shape: "
                           f"{' '.join(map(str, source_sliced))} at dimension 0.")
    if source.ndim and n != source.shape[d]:
        raise IndexError(f"index_copy_(): Number of indices ({n}) should be equal to "
                         f"source.size(dim) ({source.shape[d]})")
    return self


def _index_fill_meta_(self, dim, index, value):
    """Both overloads; a 0-dim ``self`` acts as 1-D. Returns self."""
    if R.is_tensor(value) and value.ndim != 0:
        raise RuntimeError(f"index_fill_ only supports a 0-dimensional value tensor, but got "
                           f"tensor with {value.ndim} dimension(s).")
    if index.dtype is not D.int64:
        raise IndexError("index_fill_(): Expected dtype int64 for index.")
    wrap_dim(dim, max(self.ndim, 1))
    if index.ndim > 1:
        raise RuntimeError("Index has to be a vector/scalar")
    if not R.is_tensor(value):
        R.check_scalar_fits(value, self.dtype)
    return self


index_select = defop("index_select(Tensor self, int dim, Tensor index) -> Tensor",
                     _index_select_meta, method=True, function=True)
index_add_ = defop("index_add_(Tensor(a!) self, int dim, Tensor index, Tensor source, *, "
                   "Scalar alpha=1) -> Tensor(a!)", _index_add_meta_, method=True)
index_add = defop("index_add(Tensor self, int dim, Tensor index, Tensor source, *, "
                  "Scalar alpha=1) -> Tensor", method=True, function=True)
index_copy_ = defop("index_copy_(Tensor(a!) self, int dim, Tensor index, Tensor source) -> "
                    "Tensor(a!)", _index_copy_meta_, method=True)
index_copy = defop("index_copy(Tensor self, int dim, Tensor index, Tensor source) -> Tensor",
                   method=True, function=True)
index_fill_ = defop("index_fill_.int_Scalar(Tensor(a!) self, int dim, Tensor index, "
                    "Scalar value) -> Tensor(a!)", _index_fill_meta_)
index_fill_tensor_ = defop("index_fill_.int_Tensor(Tensor(a!) self, int dim, Tensor index, "
                           "Tensor value) -> Tensor(a!)", _index_fill_meta_)
index_fill = defop("index_fill.int_Scalar(Tensor self, int dim, Tensor index, Scalar value) -> "
                   "Tensor")
index_fill_tensor = defop("index_fill.int_Tensor(Tensor self, int dim, Tensor index, "
                          "Tensor value) -> Tensor")


def _clone(self):
    from .factory import clone
    return clone(self)


@register_decomposition(index_add)
def _index_add(self, dim, index, source, alpha=1):
    return index_add_(_clone(self), dim, index, source, alpha=alpha)


@register_decomposition(index_copy)
def _index_copy(self, dim, index, source):
    return index_copy_(_clone(self), dim, index, source)


@register_decomposition(index_fill)
def _index_fill(self, dim, index, value):
    return index_fill_(_clone(self), dim, index, value)


@register_decomposition(index_fill_tensor)
def _index_fill_tensor(self, dim, index, value):
    return index_fill_tensor_(_clone(self), dim, index, value)


# --- take_along_dim -------------------------------------------------------------------------------

take_along_dim = defop("take_along_dim(Tensor self, Tensor indices, int? dim=None) -> Tensor",
                       method=True, function=True)


@register_decomposition(take_along_dim)
def _take_along_dim(self, indices, dim=None):
    """``gather`` after broadcasting every dim but ``dim`` (``TensorAdvancedIndexing.cpp``)."""
    from .shape import expand, view
    if dim is None:
        return gather(view(self, (self.numel(),)), 0, view(indices, (indices.numel(),)))
    if self.ndim != indices.ndim:
        raise RuntimeError(f"torch.take_along_dim(): input and indices should have the same "
                           f"number of dimensions, but got {self.ndim} dimensions for input, and "
                           f"{indices.ndim} dimensions for indices")
    if indices.dtype is not D.int64:
        raise RuntimeError(f"torch.take_along_dim(): dtype of indices should be Long but got "
                           f"{R.type_name(indices.dtype)}")
    d = wrap_dim(dim, self.ndim)
    self_sizes, index_sizes = list(self.shape), list(indices.shape)
    self_sizes[d] = indices.shape[d]
    indices = expand(indices, broadcast_shapes(tuple(self_sizes), tuple(indices.shape)))
    index_sizes[d] = self.shape[d]
    self = expand(self, broadcast_shapes(tuple(index_sizes), tuple(self.shape)))
    return gather(self, d, indices)


# --- as_strided_scatter -------------------------------------------------------------------------
# Note [as_strided_scatter geometry]: the functional inverse of ``as_strided`` (what
# functionalization records for a write into a view, as PyTorch's FunctionalTensorWrapper does).
# As ``clone_preserve_strides`` (TensorShape.cpp), the view is taken in self's *storage*:
# element i of the result is self's element i unless self's storage position of i,
# ``self.storage_offset() + sum(i_d * self.stride(d))``, is one the view ``(size, stride,
# storage_offset)`` covers; then it is the matching element of ``src``. A self with a stride-0
# dim (internal overlap) is cloned contiguously first, so its positions are row-major from 0.
# The result has self's values laid out like ``clone``'s (strata does not keep a storage offset or
# a non-dense layout in the result, as PyTorch does; only the layout differs).

def has_internal_overlap(shape, strides) -> bool:
    """``at::has_internal_overlap(...) == MemOverlap::Yes``: a stride-0 dim of more than one
    element (other overlaps are "too hard" to detect, and PyTorch keeps their geometry)."""
    return any(s == 0 and n > 1 for n, s in zip(shape, strides))


def scatter_base_geometry(self):
    """``(strides, storage_offset, storage elements)`` that as_strided_scatter places ``self``'s
    elements at (Note [as_strided_scatter geometry])."""
    shape, strides = tuple(self.shape), tuple(self.stride())
    if has_internal_overlap(shape, strides):
        numel = 1
        for n in shape:
            numel *= n
        from ..core.shape import contiguous_strides
        return contiguous_strides(shape), 0, numel
    return strides, self.storage_offset(), self.untyped_storage().nbytes // self.dtype.itemsize


def _as_strided_scatter_meta(self, src, size, stride, storage_offset=None):
    """``setStrided``'s checks on the clone's view (in its order), then the size of ``src`` and
    ``copy_``'s refusal of a destination whose stride-0 dims alias."""
    from ..core.shape import check_storage_size
    from .factory import clone
    from .shape import check_as_strided_geometry
    size, stride = tuple(size), tuple(stride)
    check_as_strided_geometry(size, stride)
    _, base_offset, available = scatter_base_geometry(self)
    offset = base_offset if storage_offset is None else storage_offset
    itemsize = self.dtype.itemsize
    if any(n < 0 for n in size):
        raise RuntimeError(f"Storage size calculation overflowed with sizes={fmt(size)} and "
                           f"strides={fmt(stride)}")
    extent = check_storage_size(size, itemsize, stride) // itemsize
    if extent and offset + extent > available:
        raise RuntimeError(f"setStorage: sizes {fmt(size)}, strides {fmt(stride)}, storage "
                           f"offset {offset}, and itemsize {itemsize} requiring a storage size "
                           f"of {(offset + extent) * itemsize} are out of bounds for storage of "
                           f"size {available * itemsize}")
    if offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {offset}")
    if tuple(src.shape) != size:
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = "
                           f"{fmt(src.shape)}, slice size = {fmt(size)}")
    if has_internal_overlap(size, stride):
        raise RuntimeError("unsupported operation: more than one element of the written-to "
                           "tensor refers to a single memory location. Please clone() the tensor "
                           "before performing the operation.")
    return clone.meta(self)


as_strided_scatter = defop("as_strided_scatter(Tensor self, Tensor src, SymInt[] size, "
                           "SymInt[] stride, SymInt? storage_offset=None) -> Tensor",
                           _as_strided_scatter_meta, method=True, function=True)
