"""Indexing ops: advanced indexing (``index``, ``index_put_``), masks, ``nonzero``, ``take``,
``put``, ``searchsorted``.

``x[i]`` itself lives in ``frontend/indexing.py``: it turns a Python index expression into
``select``/``slice``/``unsqueeze`` views plus, for tensor indices, one ``index.Tensor`` or
``index_put_`` call. The checks and the result shape of advanced indexing follow
``aten/src/ATen/native/IndexingUtils.h`` (expandTensors) and ``TensorAdvancedIndexing.cpp``
(AdvancedIndex): bool masks expand into their ``nonzero()`` columns, the index tensors broadcast,
and the broadcast dims replace the indexed dims in place if those are adjacent, else lead.

Note [Data-dependent shapes]: ``nonzero``, ``masked_select`` and boolean-mask indexing have an
output size that depends on the values. Their meta functions validate what metadata allows and
then raise, naming the op; their CPU kernels run the same checks before computing.

``gather``/``scatter``/``index_select`` and friends live in ``ops/scatter.py``.
"""

from ..core import dtype as D
from ..core.shape import broadcast_shapes, contiguous_strides, wrap_dim
from . import meta_rules as R
from .op import TensorSpec, defop, register_decomposition


def fmt(shape):
    return "[" + ", ".join(map(str, shape)) + "]"


def data_dependent(name):
    return NotImplementedError(f"aten::{name} has a data-dependent output shape; the meta device "
                               f"cannot compute it")


def contiguous_spec(shape, dtype):
    shape = tuple(shape)
    return TensorSpec(shape, dtype, contiguous_strides(shape))


# c10's TypeMeta names, which masked_fill_'s mask-dtype error prints
_TYPEMETA = {"float32": "float", "float64": "double", "float16": "c10::Half",
             "bfloat16": "c10::BFloat16", "int64": "long int", "int32": "int",
             "int16": "short int", "int8": "signed char", "uint8": "unsigned char", "bool": "bool"}
_INDEX_DTYPES = (D.int64, D.int32, D.uint8, D.bool_)


# --- advanced indexing: the shared rules ----------------------------------------------------------

def is_mask(index) -> bool:
    return index is not None and (index.dtype is D.bool_ or index.dtype is D.uint8)


def check_indices(self, indices):
    """The checks ``index``/``index_put_`` make on their ``Tensor?[]`` before masks expand."""
    if len(indices) > self.ndim:
        raise IndexError(f"too many indices for tensor of dimension {self.ndim} "
                         f"(got {len(indices)})")
    if all(i is None for i in indices):
        raise IndexError("at least one index must be provided")
    for i in indices:
        if i is not None and i.dtype not in _INDEX_DTYPES:
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")


def check_mask(self, mask, start):
    """A mask indexing dims ``start, start+1, ...`` must have exactly those sizes."""
    for j, size in enumerate(mask.shape):
        src = wrap_dim(start + j, self.ndim)
        if size != self.shape[src]:
            raise IndexError(f"The shape of the mask {fmt(mask.shape)} at index {j} does not match "
                             f"the shape of the indexed tensor {fmt(self.shape)} at index {src}")


def index_result_shape(self_shape, index_shapes):
    """The shape of ``self[indices]``; ``index_shapes`` has one entry per indexed dim (None for a
    full slice), masks already expanded into their nonzero columns."""
    defined = [k for k, s in enumerate(index_shapes) if s is not None]
    try:
        shape = broadcast_shapes(*(index_shapes[k] for k in defined))
    except RuntimeError:
        raise IndexError("shape mismatch: indexing tensors could not be broadcast together with "
                         "shapes " + ", ".join(fmt(index_shapes[k]) for k in defined)) from None
    first, last = defined[0], defined[-1]
    if last - first + 1 == len(defined):  # adjacent: the index dims replace them in place
        return tuple(self_shape[:first]) + shape + tuple(self_shape[last + 1:])
    rest = set(defined)
    return shape + tuple(s for k, s in enumerate(self_shape) if k not in rest)


def check_put_values(self, result_shape, values):
    """``index_put_``'s values broadcast to the indexing result and have self's dtype."""
    vshape = tuple(values.shape)
    if len(vshape) > len(result_shape) or any(
            v != 1 and v != r for v, r in zip(reversed(vshape), reversed(result_shape))):
        raise RuntimeError(f"shape mismatch: value tensor of shape {fmt(vshape)} cannot be "
                           f"broadcast to indexing result of shape {fmt(result_shape)}")
    check_put_dtype(self, values)


def check_put_dtype(self, values):
    if values.dtype is not self.dtype:
        raise RuntimeError(f"Index put requires the source and destination dtypes match, got "
                           f"{R.type_name(self.dtype)} for the destination and "
                           f"{R.type_name(values.dtype)} for the source.")


def single_mask_fill(indices, values, accumulate):
    """PyTorch's ``canDispatchToMaskedFill``: ``x[mask] = v`` with one mask and a one-element
    value is a masked fill (the value is cast, not dtype-checked). Returns the mask's first dim
    or None."""
    if accumulate or values.numel() != 1:
        return None
    defined = [k for k, i in enumerate(indices) if i is not None]
    if len(defined) != 1 or not is_mask(indices[defined[0]]):
        return None
    return defined[0]


def _index_meta(self, indices):
    check_indices(self, indices)
    shapes = []
    for i in indices:
        if is_mask(i):
            check_mask(self, i, len(shapes))
            raise data_dependent("index.Tensor")
        shapes.append(None if i is None else tuple(i.shape))
    return contiguous_spec(index_result_shape(tuple(self.shape), shapes), self.dtype)


def _index_put_meta(self, indices, values, accumulate=False):
    check_indices(self, indices)
    shapes, masked = [], False
    for i in indices:
        if is_mask(i):
            check_mask(self, i, len(shapes))
            shapes.extend([None] * i.ndim)
            masked = True
        else:
            shapes.append(None if i is None else tuple(i.shape))
    if single_mask_fill(indices, values, accumulate) is not None:
        return self
    if masked:  # the indexing result's size depends on the mask: check the dtype only
        check_put_dtype(self, values)
        return self
    check_put_values(self, index_result_shape(tuple(self.shape), shapes), values)
    return self


index = defop("index.Tensor(Tensor self, Tensor?[] indices) -> Tensor", _index_meta)
index_put_ = defop("index_put_(Tensor(a!) self, Tensor?[] indices, Tensor values, "
                   "bool accumulate=False) -> Tensor(a!)", _index_put_meta, method=True,
                   function=True)
index_put = defop("index_put(Tensor self, Tensor?[] indices, Tensor values, "
                  "bool accumulate=False) -> Tensor", method=True, function=True)


@register_decomposition(index_put)
def _index_put(self, indices, values, accumulate=False):
    from .factory import clone
    return index_put_(clone(self), indices, values, accumulate)


# --- masks ----------------------------------------------------------------------------------------

def check_bool_mask(name, mask):
    if mask.dtype is not D.bool_:
        raise RuntimeError(f"{name} only supports boolean masks, but got mask with dtype "
                           f"{_TYPEMETA[mask.dtype.name]}")


def _check_masked_fill(self, mask, value):
    if R.is_tensor(value) and value.ndim != 0:
        raise RuntimeError(f"masked_fill_ only supports a 0-dimensional value tensor, but got "
                           f"tensor with {value.ndim} dimension(s).")
    check_bool_mask("masked_fill_", mask)


def _masked_fill_meta(self, mask, value):
    shape = broadcast_shapes(tuple(mask.shape), tuple(self.shape))  # mask is PyTorch's "a"
    _check_masked_fill(self, mask, value)
    if not R.is_tensor(value):
        R.check_scalar_fits(value, self.dtype)
    return contiguous_spec(shape, self.dtype)


def _masked_fill_meta_(self, mask, value):
    _check_masked_fill(self, mask, value)
    R.inplace_meta(self, TensorSpec(broadcast_shapes(tuple(self.shape), tuple(mask.shape)),
                                    self.dtype))
    if not R.is_tensor(value):
        R.check_scalar_fits(value, self.dtype)
    return self


def _check_mask_select(self, mask):
    if mask.dtype is not D.bool_:
        raise RuntimeError("masked_select: expected BoolTensor for mask")
    return broadcast_shapes(tuple(mask.shape), tuple(self.shape))


def _masked_select_meta(self, mask):
    _check_mask_select(self, mask)
    raise data_dependent("masked_select")


def _masked_scatter_meta_(self, mask, source):
    if source.dtype is not self.dtype:
        raise RuntimeError(f"masked_scatter: expected self and source to have same dtypes but got"
                           f"{R.type_name(self.dtype)} and {R.type_name(source.dtype)}")
    if mask.dtype is not D.bool_:
        raise RuntimeError(f"masked_scatter_ only supports boolean masks, but got mask with dtype "
                           f"{R.type_name(mask.dtype)}")
    from .shape import expand
    expand.meta(mask, tuple(self.shape))  # the mask must expand to self: PyTorch's message
    return self


masked_fill_ = defop("masked_fill_.Scalar(Tensor(a!) self, Tensor mask, Scalar value) -> "
                     "Tensor(a!)", _masked_fill_meta_)
masked_fill_tensor_ = defop("masked_fill_.Tensor(Tensor(a!) self, Tensor mask, Tensor value) -> "
                            "Tensor(a!)", _masked_fill_meta_)
# masked_fill is a primitive (PyTorch clones, then fills in place): one np.where, and it is on
# the hot path of attention masks.
masked_fill = defop("masked_fill.Scalar(Tensor self, Tensor mask, Scalar value) -> Tensor",
                    _masked_fill_meta)
masked_fill_tensor = defop("masked_fill.Tensor(Tensor self, Tensor mask, Tensor value) -> Tensor",
                           _masked_fill_meta)
masked_select = defop("masked_select(Tensor self, Tensor mask) -> Tensor", _masked_select_meta,
                      method=True, function=True)
masked_scatter_ = defop("masked_scatter_(Tensor(a!) self, Tensor mask, Tensor source) -> "
                        "Tensor(a!)", _masked_scatter_meta_, method=True)
masked_scatter = defop("masked_scatter(Tensor self, Tensor mask, Tensor source) -> Tensor",
                       method=True, function=True)


@register_decomposition(masked_scatter)
def _masked_scatter(self, mask, source):
    from .factory import clone
    from .shape import expand
    shape = broadcast_shapes(tuple(mask.shape), tuple(self.shape))  # mask is PyTorch's "a"
    out = clone(expand(self, shape), memory_format="contiguous_format")
    return masked_scatter_(out, expand(mask, shape), source)


# --- nonzero and friends ------------------------------------------------------------------------

def _nonzero_meta(self):
    raise data_dependent("nonzero")


nonzero = defop("nonzero(Tensor self) -> Tensor", _nonzero_meta)
nonzero_numpy = defop("nonzero_numpy(Tensor self) -> Tensor[]")
argwhere = defop("argwhere(Tensor self) -> Tensor", method=True, function=True)
where_nonzero = defop("where(Tensor condition) -> Tensor[]")


@register_decomposition(nonzero_numpy)
def _nonzero_numpy(self):
    from .shape import unsqueeze
    from .split_join import unbind
    # nonzero's result is column-major, so each column is a contiguous view
    return unbind(nonzero(unsqueeze(self, 0) if self.ndim == 0 else self), 1)


@register_decomposition(argwhere)
def _argwhere(self):
    return nonzero(self)


@register_decomposition(where_nonzero)
def _where_nonzero(condition):
    return nonzero_numpy(condition)


# --- take / put (flat indices) --------------------------------------------------------------------

def _take_meta(self, index):
    if index.dtype is not D.int64:
        raise RuntimeError(f"take(): Expected a long tensor for index, but got "
                           f"{R.type_name(index.dtype)}")
    if self.numel() == 0 and index.numel() != 0:
        raise IndexError("take(): tried to take from an empty tensor")
    return contiguous_spec(index.shape, self.dtype)


def _put_meta_(self, index, source, accumulate=False):
    if index.dtype is not D.int64:
        raise RuntimeError(f"put_(): Expected a long tensor for index, but got "
                           f"{R.type_name(index.dtype)}")
    if source.dtype is not self.dtype:
        raise RuntimeError(f"put_(): self and source expected to have the same dtype, but got "
                           f"self.dtype = {R.type_name(self.dtype)} and source.dtype = "
                           f"{R.type_name(source.dtype)}")
    if source.numel() != index.numel():
        raise IndexError(f"put_(): Expected source and index to have the same number of elements, "
                         f"but got source.numel() = {source.numel()}, index.numel() = "
                         f"{index.numel()}")
    if self.numel() == 0 and index.numel() != 0:
        raise IndexError("put_(): Tried to put elements into an empty tensor")
    R.check_no_internal_overlap(self)
    return self


take = defop("take(Tensor self, Tensor index) -> Tensor", _take_meta, method=True, function=True)
put_ = defop("put_(Tensor(a!) self, Tensor index, Tensor source, bool accumulate=False) -> "
             "Tensor(a!)", _put_meta_, method=True)
put = defop("put(Tensor self, Tensor index, Tensor source, bool accumulate=False) -> Tensor",
            method=True, function=True)


@register_decomposition(put)
def _put(self, index, source, accumulate=False):
    from .factory import clone
    return put_(clone(self), index, source, accumulate)


# --- searchsorted / bucketize -------------------------------------------------------------------

def searchsorted_side(right, side):
    """The effective ``right`` flag from ``right=`` and ``side=`` (checked as PyTorch)."""
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but got "
                               f"{side}")
        if right and side != "right":
            raise RuntimeError(f"torch.searchsorted(): side and right can't be set to opposites, "
                               f"got side of {side} while right was True")
        return side == "right"
    return bool(right)


def _searchsorted_meta(sorted_sequence, self, out_int32=False, right=False, side=None,
                       sorter=None):
    searchsorted_side(right, side)
    seq = sorted_sequence
    if sorter is not None:
        if tuple(sorter.shape) != tuple(seq.shape):
            raise RuntimeError(f"torch.searchsorted(): boundary and sorter must have the same "
                               f"size, but got boundary tensor {fmt(seq.shape)}and got sorter "
                               f"tensor {fmt(sorter.shape)}")
        if sorter.dtype is not D.int64:
            raise RuntimeError(f"torch.searchsorted(): sorter must be a tensor of long dtype but "
                               f"got dtype {R.type_name(sorter.dtype)}")
    if self.ndim == 0 and seq.ndim != 1:
        raise RuntimeError(f"torch.searchsorted(): input value can be a scalar only when "
                           f"boundaries tensor dimension is 1, but we got boundaries tensor "
                           f"dim({seq.ndim}) and input value's dim({self.ndim}) "
                           f"numel({self.numel()})")
    if seq.ndim == 0:
        raise RuntimeError("torch.searchsorted(): boundaries tensor should have positive "
                           "dimension, but got 0 dimension")
    if seq.ndim != 1 and (seq.ndim != self.ndim or
                          tuple(seq.shape[:-1]) != tuple(self.shape[:-1])):
        raise RuntimeError(f"torch.searchsorted(): boundaries tensor should be 1 dimension or the "
                           f"first N-1 dimensions of boundaries tensor and input value tensor "
                           f"must match, but we got boundaries tensor {fmt(seq.shape)} and input "
                           f"value tensor {fmt(self.shape)}")
    if R.promote(seq, self) is D.bool_:
        raise NotImplementedError("\"searchsorted_out_cpu\" not implemented for 'Bool'")
    return contiguous_spec(self.shape, D.int32 if out_int32 else D.int64)


searchsorted = defop("searchsorted.Tensor(Tensor sorted_sequence, Tensor self, *, "
                     "bool out_int32=False, bool right=False, str? side=None, "
                     "Tensor? sorter=None) -> Tensor", _searchsorted_meta)
searchsorted_scalar = defop("searchsorted.Scalar(Tensor sorted_sequence, Scalar self, *, "
                            "bool out_int32=False, bool right=False, str? side=None, "
                            "Tensor? sorter=None) -> Tensor")
bucketize = defop("bucketize.Tensor(Tensor self, Tensor boundaries, *, bool out_int32=False, "
                  "bool right=False) -> Tensor")
bucketize_scalar = defop("bucketize.Scalar(Scalar self, Tensor boundaries, *, "
                         "bool out_int32=False, bool right=False) -> Tensor")


def _scalar_operand(value, like):
    """A number as the 0-dim tensor PyTorch makes of it (a "wrapped number": its dtype is what
    promotion with ``like`` gives, so the comparison happens in that dtype)."""
    from .factory import scalar_tensor
    return scalar_tensor(value, dtype=R.promote(like, value), device=like.device)


@register_decomposition(searchsorted_scalar)
def _searchsorted_scalar(sorted_sequence, self, out_int32=False, right=False, side=None,
                         sorter=None):
    return searchsorted(sorted_sequence, _scalar_operand(self, sorted_sequence),
                        out_int32=out_int32, right=right, side=side, sorter=sorter)


@register_decomposition(bucketize)
def _bucketize(self, boundaries, out_int32=False, right=False):
    if boundaries.ndim != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({boundaries.ndim})")
    return searchsorted(boundaries, self, out_int32=out_int32, right=right)


@register_decomposition(bucketize_scalar)
def _bucketize_scalar(self, boundaries, out_int32=False, right=False):
    return _bucketize(_scalar_operand(self, boundaries), boundaries, out_int32, right)
