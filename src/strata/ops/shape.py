"""Shape ops. Views (result aliases ``self``) compute a ``ViewSpec`` over the same storage and
share one device-independent kernel; the rest (cat, flip, roll, ...) copy. The composites that
split a tensor into pieces or join pieces (split, chunk, unbind, hstack, block_diag, ...) are in
``split_join.py``.

Stride arithmetic follows ``aten/src/ATen/TensorUtils.cpp`` (computeStride) and
``aten/src/ATen/native/TensorShape.cpp``.
"""

import operator

from ..core import dtype as D
from ..core.shape import (
    check_numel,
    check_storage_size,
    contiguous_strides,
    infer_size,
    wrap_dim,
    wrap_dims,
)
from . import meta_rules as R
from .op import TensorSpec, ViewSpec, defop, register_decomposition


def _fmt(shape):
    return "[" + ", ".join(map(str, shape)) + "]"


def _sizes(size):
    """An int or a sequence of ints as a tuple (negative entries are the caller's to judge)."""
    if isinstance(size, (tuple, list)):
        return tuple(map(operator.index, size))
    return (operator.index(size),)


_LEGACY_TYPE = {"float32": "FloatTensor", "float64": "DoubleTensor", "float16": "HalfTensor",
                "bfloat16": "BFloat16Tensor", "int64": "LongTensor", "int32": "IntTensor",
                "int16": "ShortTensor", "int8": "CharTensor", "uint8": "ByteTensor",
                "bool": "BoolTensor"}


def _numel(shape):
    n = 1
    for s in shape:
        n *= s
    return n


# The metas of the everyday views (view, select, unsqueeze, transpose) read the tensor's slots,
# not its Size-building properties: they run on every small op of a model's step.

def _view_meta(self, size):
    shape = infer_size(_sizes(size), _numel(self._shape))
    strides = R.view_strides(self._shape, self._get_strides(), shape)
    if strides is None:
        raise RuntimeError("view size is not compatible with input tensor's size and stride (at "
                           "least one dimension spans across two contiguous subspaces). Use "
                           ".reshape(...) instead.")
    return ViewSpec(shape, strides, self._offset)


def check_as_strided_geometry(size, stride):
    """``as_strided``'s (and ``as_strided_scatter``'s) first checks: ATen's ``setStrided``."""
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    if any(s < 0 for s in stride):
        raise RuntimeError(f"as_strided: Negative strides are not supported at the moment, got "
                           f"strides: {_fmt(stride)}")


def _as_strided_meta(self, size, stride, storage_offset=None):
    size, stride = tuple(size), tuple(stride)
    check_as_strided_geometry(size, stride)
    offset = self.storage_offset() if storage_offset is None else storage_offset
    if _numel(size) > 0:
        needed = offset + sum((n - 1) * s for n, s in zip(size, stride)) + 1
        available = self.untyped_storage().nbytes // self.dtype.itemsize
        if needed > available:
            raise RuntimeError(f"setStorage: sizes {_fmt(size)}, strides {_fmt(stride)}, storage "
                               f"offset {offset}, and itemsize {self.dtype.itemsize} requiring a "
                               f"storage size of {needed * self.dtype.itemsize} are out of bounds "
                               f"for storage of size {available * self.dtype.itemsize}")
    return ViewSpec(size, stride, offset)


def _permute_meta(self, dims):
    dims = _sizes(dims)
    if len(dims) != self.ndim:  # (PyTorch's message says sparse_coo for every layout)
        raise RuntimeError(f"permute(sparse_coo): number of dimensions in the tensor input does "
                           f"not match the length of the desired ordering of dimensions i.e. "
                           f"input.dim() = {self.ndim} is not equal to len(dims) = {len(dims)}")
    dims = tuple(wrap_dim(d, self.ndim) for d in dims)
    if len(set(dims)) != len(dims):
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    shape, stride = tuple(self.shape), tuple(self.stride())
    return ViewSpec(tuple(shape[d] for d in dims), tuple(stride[d] for d in dims),
                    self.storage_offset())


# the dim pairs that swap a matrix's two dims (one wrapped, the other not, or neither)
_SWAPS_OF_A_MATRIX = {(d0, d1) for d0 in (0, 1, -2, -1) for d1 in (0, 1, -2, -1)
                      if d0 % 2 != d1 % 2}


def _transpose_meta(self, dim0, dim1):
    n = len(self._shape)   # slots, not the Size-building properties: every linear call runs this
    if n == 2 and type(dim0) is int and type(dim1) is int and \
            (dim0, dim1) in _SWAPS_OF_A_MATRIX:   # every ``t()`` of a backward formula
        return ViewSpec(self._shape[::-1], (self._strides or self._get_strides())[::-1],
                        self._offset)
    d0, d1 = wrap_dim(dim0, n), wrap_dim(dim1, n)
    shape, stride = list(self._shape), list(self._strides or self._get_strides())
    if n:
        shape[d0], shape[d1] = shape[d1], shape[d0]
        stride[d0], stride[d1] = stride[d1], stride[d0]
    return ViewSpec(tuple(shape), tuple(stride), self._offset)


def _expand_meta(self, size, implicit=False):
    size = _sizes(size)
    if len(size) < self.ndim:
        raise RuntimeError(f"expand(torch.{_LEGACY_TYPE[self.dtype.name]}{{{_fmt(self.shape)}}}, "
                           f"size={_fmt(size)}): the number of sizes provided ({len(size)}) must "
                           f"be greater or equal to the number of dimensions in the tensor "
                           f"({self.ndim})")
    # inferExpandGeometry (ExpandUtils.cpp), from the last dim: a new leading dim of size 1
    # continues the layout of the dims after it; any dim that grows gets stride 0.
    lead = len(size) - self.ndim
    shape, stride = [0] * len(size), [0] * len(size)
    for i in range(len(size) - 1, -1, -1):
        target = size[i]
        if i < lead:
            if target < 0:
                raise RuntimeError(f"The expanded size of the tensor ({target}) isn't allowed in "
                                   f"a leading, non-existing dimension {i}")
            cur = 1
            cur_stride = shape[i + 1] * stride[i + 1] if i + 1 < len(size) else 1
        else:
            cur, cur_stride = self.shape[i - lead], self.stride()[i - lead]
            if target == -1:
                target = cur
        if cur != target:
            if cur != 1:
                raise RuntimeError(f"The expanded size of the tensor ({target}) must match the "
                                   f"existing size ({cur}) at non-singleton dimension {i}.  "
                                   f"Target sizes: {_fmt(size)}.  Tensor sizes: "
                                   f"{_fmt(self.shape)}")
            cur, cur_stride = target, 0
        shape[i], stride[i] = cur, cur_stride
    check_numel(shape)
    return ViewSpec(tuple(shape), tuple(stride), self.storage_offset())


def _squeeze_meta(self, dim=None):
    if type(dim) is int:   # one dim (``log_prob``'s ``squeeze(-1)``): the slots, sliced
        shape, stride = self._shape, self._get_strides()
        d = wrap_dim(dim, max(len(shape), 1))
        if not shape or shape[d] != 1:
            return ViewSpec(shape, stride, self._offset)
        return ViewSpec(shape[:d] + shape[d + 1:], stride[:d] + stride[d + 1:], self._offset)
    shape, stride = tuple(self.shape), tuple(self.stride())
    if dim is None:
        dims = set(range(len(shape)))
    else:
        dims = set(wrap_dims((dim,) if isinstance(dim, int) else dim, max(self.ndim, 1)))
    keep = [i for i in range(len(shape)) if not (i in dims and shape[i] == 1)]
    return ViewSpec(tuple(shape[i] for i in keep), tuple(stride[i] for i in keep),
                    self.storage_offset())


def _unsqueeze_meta(self, dim):
    d = wrap_dim(dim, len(self._shape) + 1)
    shape, stride = list(self._shape), list(self._get_strides())
    new_stride = shape[d] * stride[d] if d < len(shape) else 1
    shape.insert(d, 1)
    stride.insert(d, new_stride)
    return ViewSpec(tuple(shape), tuple(stride), self._offset)


def _slice_meta(self, dim=0, start=None, end=None, step=1):
    if self.ndim == 0:
        raise IndexError("slice() cannot be applied to a 0-dim tensor.")
    d = wrap_dim(dim, self.ndim)
    if step <= 0:
        raise ValueError("step must be greater than zero")
    size = self.shape[d]
    start = 0 if start is None else start
    end = size if end is None else end
    if start < 0:
        start += size
    if end < 0:
        end += size
    start = min(max(start, 0), size)
    end = min(max(end, start), size)
    length = (end - start + step - 1) // step
    shape, stride = list(self.shape), list(self.stride())
    offset = self.storage_offset() + start * stride[d]
    shape[d] = length
    stride[d] *= step
    return ViewSpec(tuple(shape), tuple(stride), offset)


def _select_meta(self, dim, index):
    shape = self._shape
    if not shape:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    d = wrap_dim(dim, len(shape))
    size = shape[d]
    if not -size <= index < size:
        raise IndexError(f"select(): index {index} out of range for tensor of size "
                         f"{_fmt(shape)} at dimension {d}")
    if index < 0:
        index += size
    strides = self._strides or self._get_strides()   # the slot once a kernel's are read
    return ViewSpec(shape[:d] + shape[d + 1:], strides[:d] + strides[d + 1:],
                    self._offset + index * strides[d])


def _diagonal_meta(self, offset=0, dim1=0, dim2=1):
    n = self.ndim
    d1, d2 = wrap_dim(dim1, n), wrap_dim(dim2, n)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    shape, stride = list(self.shape), list(self.stride())
    base = self.storage_offset()
    if offset >= 0:
        length = max(min(shape[d1], shape[d2] - offset), 0)
        base += offset * stride[d2] if length else 0
    else:
        length = max(min(shape[d1] + offset, shape[d2]), 0)
        base -= offset * stride[d1] if length else 0
    diag_stride = stride[d1] + stride[d2]
    for d in sorted((d1, d2), reverse=True):
        del shape[d], stride[d]
    return ViewSpec(tuple(shape) + (length,), tuple(stride) + (diag_stride,), base)


def _unfold_meta(self, dimension, size, step):
    d = wrap_dim(dimension, self.ndim)
    cur = self.shape[d] if self.ndim else 1
    if size > cur:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {cur} but size is {size}")
    if size < 0:
        raise RuntimeError(f"size is {size} but must be >= 0")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    shape, stride = list(self.shape), list(self.stride())
    if not shape:
        return ViewSpec((size,), (1,), self.storage_offset())
    count = (cur - size) // step + 1
    inner = stride[d]
    shape[d] = count
    stride[d] = step * inner
    return ViewSpec(tuple(shape) + (size,), tuple(stride) + (inner,), self.storage_offset())


def _alias_meta(self):
    return ViewSpec(tuple(self.shape), tuple(self.stride()), self.storage_offset())


def _t_meta(self):
    """A view of its own (not transpose's decomposition), so autograd records ``TBackward0``."""
    n = len(self._shape)   # the slot: ``ndim`` is a property (every linear call runs this)
    if n > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {n}D")
    return _transpose_meta(self, 0, 1) if n == 2 else _alias_meta(self)


view = defop("view(Tensor(a) self, SymInt[] size) -> Tensor(a)", _view_meta)
as_strided = defop("as_strided(Tensor(a) self, SymInt[] size, SymInt[] stride, "
                   "SymInt? storage_offset=None) -> Tensor(a)", _as_strided_meta, method=True,
                   function=True)
permute = defop("permute(Tensor(a) self, int[] dims) -> Tensor(a)", _permute_meta)
transpose = defop("transpose.int(Tensor(a) self, int dim0, int dim1) -> Tensor(a)",
                  _transpose_meta, method=True, function=True)
t = defop("t(Tensor(a) self) -> Tensor(a)", _t_meta, method=True, function=True)
expand = defop("expand(Tensor(a) self, SymInt[] size, *, bool implicit=False) -> Tensor(a)",
               _expand_meta)
squeeze = defop("squeeze.dims(Tensor(a) self, int[]? dim=None) -> Tensor(a)", _squeeze_meta,
                method=True, function=True)
unsqueeze = defop("unsqueeze(Tensor(a) self, int dim) -> Tensor(a)", _unsqueeze_meta, method=True,
                  function=True)
slice = defop("slice.Tensor(Tensor(a) self, int dim=0, SymInt? start=None, SymInt? end=None, "
              "SymInt step=1) -> Tensor(a)", _slice_meta)
select = defop("select.int(Tensor(a) self, int dim, SymInt index) -> Tensor(a)", _select_meta,
               method=True, function=True)
diagonal = defop("diagonal(Tensor(a) self, int offset=0, int dim1=0, int dim2=1) -> Tensor(a)",
                 _diagonal_meta, method=True, function=True)
unfold = defop("unfold(Tensor(a) self, int dimension, int size, int step) -> Tensor(a)",
               _unfold_meta, method=True)
alias = defop("alias(Tensor(a) self) -> Tensor(a)", _alias_meta)
detach = defop("detach(Tensor(a) self) -> Tensor(a)", _alias_meta, method=True, function=True)


# --- copying shape ops -----------------------------------------------------------------------

def _cat_meta(tensors, dim=0):
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError("torch.cat(): expected a non-empty list of Tensors")
    shapes = [t._shape for t in tensors]      # each tensor's sizes read once (a tuple)
    # legacy behaviour: 1-d empty tensors are skipped
    ref = next((s for s in shapes if s != (0,)), shapes[0])
    ndim = len(ref)
    if ndim == 0:
        raise RuntimeError("zero-dimensional tensor (at position 0) cannot be concatenated")
    d = wrap_dim(dim, ndim)
    total = 0
    for i, size in enumerate(shapes):
        if size == (0,) and ndim != 1:
            continue
        if not size:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be "
                               f"concatenated")
        if len(size) != ndim:
            raise RuntimeError(f"Tensors must have same number of dimensions: got {ndim} and "
                               f"{len(size)}")
        if size[:d] != ref[:d] or size[d + 1:] != ref[d + 1:]:
            k = next(k for k in range(ndim) if k != d and size[k] != ref[k])
            raise RuntimeError(f"Sizes of tensors must match except in dimension {d}. "
                               f"Expected size {ref[k]} but got size {size[k]} for "
                               f"tensor number {i} in the list.")
        total += size[d]
    shape = list(ref)
    shape[d] = total
    dtype = R.promote(*tensors) if len(tensors) > 1 else tensors[0].dtype
    check_storage_size(shape, dtype.itemsize)
    if ndim not in (4, 5):     # only 4-d and 5-d inputs can suggest channels-last
        return TensorSpec(tuple(shape), dtype, contiguous_strides(shape))
    return TensorSpec(tuple(shape), dtype, _cat_strides(shape, [
        (size, tuple(t.stride())) for size, t in zip(shapes, tensors)]))


def _cat_strides(shape, layouts):
    """``cat_compute_output_memory_format``: the inputs' common suggested memory format
    (channels-last only if every input suggests it), else row-major."""
    formats = {_suggest_memory_format(*layout) for layout in layouts}
    if len(formats) == 1 and None not in formats:
        return R.channels_last_strides(shape)
    return contiguous_strides(shape)


def _suggest_memory_format(shape, strides):
    """``suggest_memory_format``: "channels_last" (4-d) / "channels_last_3d" (5-d) when the
    strides are like it by c10's ``is_channels_last_strides_2d_s4`` / ``_3d_s5``, else None."""
    if len(shape) not in (4, 5) or strides[1] == 0:   # a broadcast C dim: NCHW by default
        return None
    low = 0
    for d in (1, 3, 2, 0) if len(shape) == 4 else (1, 4, 3, 2, 0):
        if shape[d] == 0 or strides[d] < low:
            return None
        if d == 0 and low == strides[1]:   # N111-like: ambiguous, so NCHW
            return None
        low = strides[d] * shape[d]
    return "channels_last" if len(shape) == 4 else "channels_last_3d"


def _stack_meta(tensors, dim=0):
    """``stack`` as PyTorch computes it: below the last dim, ``cat`` along ``dim`` viewed with
    the new dim split out (so the cat's layout carries over); at the end, a cat of unsqueezed
    inputs."""
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    first = tuple(tensors[0].shape)
    for i, x in enumerate(tensors[1:], 1):
        if tuple(x.shape) != first:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got "
                               f"{_fmt(first)} at entry 0 and {_fmt(x.shape)} at entry {i}")
    d = wrap_dim(dim, len(first) + 1)
    shape = first[:d] + (len(tensors),) + first[d:]
    if d < len(first):
        joined = _cat_meta(tensors, d)
        return TensorSpec(shape, joined.dtype,
                          R.view_strides(joined.shape, joined.strides, shape))
    dtype = R.promote(*tensors) if len(tensors) > 1 else tensors[0].dtype
    check_storage_size(shape, dtype.itemsize)
    # unsqueeze(-1) appends a size-1 dim of stride 1
    return TensorSpec(shape, dtype, _cat_strides(shape, [
        (first + (1,), tuple(x.stride()) + (1,)) for x in tensors]))


def _same_shape_meta(self, *args):
    shape = tuple(self.shape)
    return TensorSpec(shape, self.dtype, contiguous_strides(shape))


def _flip_meta(self, dims):
    wrap_dims(dims, self.ndim)
    return TensorSpec(tuple(self.shape), self.dtype, R.like_strides(self))  # empty_like(self)


def _roll_meta(self, shifts, dims=()):
    shifts = (shifts,) if isinstance(shifts, int) else tuple(shifts)
    dims = (dims,) if isinstance(dims, int) else tuple(dims)
    if (dims and len(shifts) != len(dims)) or (not dims and len(shifts) != 1):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:"
                           f"{len(dims)}")
    wrap_dims(dims, self.ndim) if dims else None
    return _same_shape_meta(self)


def _repeat_meta(self, repeats):
    repeats = tuple(repeats)
    if len(repeats) < self.ndim:
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number "
                           "of dimensions of tensor")
    padded = (1,) * (len(repeats) - self.ndim) + tuple(self.shape)
    shape = tuple(a * b for a, b in zip(padded, repeats))
    for s in shape:
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: "
                               f"{_fmt(shape)}")
    check_storage_size(shape, self.dtype.itemsize)
    return TensorSpec(shape, self.dtype, contiguous_strides(shape))


def _tri_meta(self, diagonal=0):
    if self.ndim < 2:
        raise RuntimeError("tril: input tensor must have at least 2 dimensions")
    return _same_shape_meta(self)


def _diag_meta(self, diagonal=0):
    if self.ndim == 1:
        n = self.shape[0] + abs(diagonal)
        return TensorSpec((n, n), self.dtype, contiguous_strides((n, n)))
    if self.ndim == 2:
        return TensorSpec(_diagonal_meta(self, diagonal).shape, self.dtype)
    raise RuntimeError("diag(): Supports 1D or 2D tensors. Got " f"{self.ndim}D")


cat = defop("cat(Tensor[] tensors, int dim=0) -> Tensor", _cat_meta, function=True)
# A primitive, not cat of unsqueezed inputs: DataLoader's collate and RNN loops stack many
# tensors, and one np.stack is one copy instead of a view op per input plus the cat.
stack = defop("stack(Tensor[] tensors, int dim=0) -> Tensor", _stack_meta, function=True)
flip = defop("flip(Tensor self, int[] dims) -> Tensor", _flip_meta, function=True)
roll = defop("roll(Tensor self, SymInt[1] shifts, int[1] dims=[]) -> Tensor", _roll_meta,
             method=True, function=True)
repeat = defop("repeat(Tensor self, SymInt[] repeats) -> Tensor", _repeat_meta)
tril = defop("tril(Tensor self, int diagonal=0) -> Tensor", _tri_meta, method=True, function=True)
triu = defop("triu(Tensor self, int diagonal=0) -> Tensor", _tri_meta, method=True, function=True)
diag = defop("diag(Tensor self, int diagonal=0) -> Tensor", _diag_meta, method=True,
             function=True)


def _reshape_copy_meta(self, size):
    shape = infer_size(_sizes(size), self.numel())
    return TensorSpec(shape, self.dtype, contiguous_strides(shape))


def _repeat_interleave_tensor_meta(repeats, output_size=None):
    if repeats.ndim != 1:
        raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
    if repeats.dtype not in (D.int64, D.int32):
        raise RuntimeError("repeats has to be Long or Int tensor")
    if output_size is None:
        raise RuntimeError("aten::repeat_interleave.Tensor: the output size depends on the values "
                           "of `repeats`, which the meta device does not have; pass output_size")
    return TensorSpec((output_size,), repeats.dtype, (1,))


# a reshape that must copy (PyTorch's reshape then returns a new tensor, not a view)
_reshape_copy = defop("_reshape_copy(Tensor self, SymInt[] size) -> Tensor", _reshape_copy_meta)
repeat_interleave_indices = defop("repeat_interleave.Tensor(Tensor repeats, *, "
                                  "SymInt? output_size=None) -> Tensor",
                                  _repeat_interleave_tensor_meta)


# --- composites --------------------------------------------------------------------------------
reshape = defop("reshape(Tensor(a) self, SymInt[] shape) -> Tensor(a)")
flatten = defop("flatten.using_ints(Tensor(a) self, int start_dim=0, int end_dim=-1) -> Tensor(a)",
                method=True, function=True)
unflatten = defop("unflatten.int(Tensor(a) self, int dim, SymInt[] sizes) -> Tensor(a)",
                  method=True, function=True)
narrow = defop("narrow(Tensor(a) self, int dim, SymInt start, SymInt length) -> Tensor(a)",
               method=True, function=True)
movedim = defop("movedim.intlist(Tensor(a) self, int[] source, int[] destination) -> Tensor(a)",
                method=True, function=True)
broadcast_to = defop("broadcast_to(Tensor(a) self, SymInt[] size) -> Tensor(a)", method=True,
                     function=True)
tile = defop("tile(Tensor self, SymInt[] dims) -> Tensor", method=True, function=True)
repeat_interleave = defop("repeat_interleave.self_int(Tensor self, SymInt repeats, int? dim=None, "
                          "*, SymInt? output_size=None) -> Tensor")
repeat_interleave_tensor = defop("repeat_interleave.self_Tensor(Tensor self, Tensor repeats, "
                                 "int? dim=None, *, SymInt? output_size=None) -> Tensor")


@register_decomposition(reshape)
def _reshape(self, shape):
    shape = infer_size(_sizes(shape), _numel(self._shape))
    if R.view_strides(self._shape, self._get_strides(), shape) is not None:
        return view(self, shape)
    return _reshape_copy(self, shape)


@register_decomposition(flatten)
def _flatten(self, start_dim=0, end_dim=-1):
    if self.ndim == 0:
        return reshape(self, (1,))
    s, e = wrap_dim(start_dim, self.ndim), wrap_dim(end_dim, self.ndim)
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if s == e:
        return self
    shape = tuple(self.shape)
    return reshape(self, shape[:s] + (_numel(shape[s:e + 1]),) + shape[e + 1:])


@register_decomposition(unflatten)
def _unflatten(self, dim, sizes):
    d = wrap_dim(dim, self.ndim)
    sizes = tuple(sizes)
    if not sizes:
        raise RuntimeError("unflatten: sizes must be non-empty")
    inner = infer_size(sizes, self.shape[d]) if -1 in sizes else sizes
    if _numel(inner) != self.shape[d]:
        raise RuntimeError(f"unflatten: Provided sizes {_fmt(sizes)} don't multiply up to the "
                           f"size of dim {dim} ({self.shape[d]}) in the input tensor")
    shape = tuple(self.shape)
    return view(self, shape[:d] + tuple(inner) + shape[d + 1:])


@register_decomposition(narrow)
def _narrow(self, dim, start, length):
    if self.ndim == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    d = wrap_dim(dim, self.ndim)
    size = self.shape[d]
    if not -size <= start <= size:
        raise IndexError(f"start out of range (expected to be in range of [{-size}, {size}], but "
                         f"got {start})")
    if start < 0:
        start += size
    if start + length > size:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size "
                           f"({size}).")
    return slice(self, d, start, start + length)


@register_decomposition(movedim)
def _movedim(self, source, destination):
    source = (source,) if isinstance(source, int) else tuple(source)
    destination = (destination,) if isinstance(destination, int) else tuple(destination)
    if len(source) != len(destination):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source ({_fmt(source)}"
                           f" dims) should contain the same number of dims as destination "
                           f"({_fmt(destination)} dims)")
    n = self.ndim
    src = tuple(wrap_dim(d, n) for d in source)
    dst = tuple(wrap_dim(d, n) for d in destination)
    for name, dims, given in (("source", src, source), ("destination", dst, destination)):
        if len(set(dims)) != len(dims):
            raise RuntimeError(f"movedim: repeated dim in `{name}` ({_fmt(given)})")
    order = [-1] * n
    for s, d in zip(src, dst):
        order[d] = s
    rest = iter(i for i in range(n) if i not in src)
    order = [o if o != -1 else next(rest) for o in order]
    return permute(self, order)


@register_decomposition(broadcast_to)
def _broadcast_to(self, size):
    return expand(self, size)


@register_decomposition(tile)
def _tile(self, dims):
    dims = tuple(dims)
    if len(dims) < self.ndim:
        dims = (1,) * (self.ndim - len(dims)) + dims
    return repeat(self, dims)


@register_decomposition(repeat_interleave)
def _repeat_interleave(self, repeats, dim=None, output_size=None):
    if repeats < 0:
        raise RuntimeError("Repeats must be non-negative")
    if dim is None:
        self = reshape(self, (-1,))
        dim = 0
    d = wrap_dim(dim, self.ndim)
    shape = tuple(self.shape)
    expanded = expand(unsqueeze(self, d + 1), shape[:d + 1] + (repeats,) + shape[d + 1:])
    return reshape(expanded, shape[:d] + (shape[d] * repeats,) + shape[d + 1:])


@register_decomposition(repeat_interleave_tensor)
def _repeat_interleave_tensor(self, repeats, dim=None, output_size=None):
    # PyTorch's: gather the rows of each index as often as it repeats (index_select).
    from .op import aten
    if dim is None:
        self = reshape(self, (-1,))
        dim = 0
    d = wrap_dim(dim, self.ndim)
    size = self.shape[d]
    if repeats.ndim == 0 or (repeats.ndim == 1 and repeats.shape[0] == 1):
        repeats = expand(reshape(repeats, (1,)), (size,))
    elif repeats.ndim == 1:
        if repeats.shape[0] != size:
            raise RuntimeError(f"repeats must have the same size as input along dim, but got "
                               f"repeats.size(0) = {repeats.shape[0]} and input.size({d}) = "
                               f"{size}")
    else:
        raise RuntimeError("repeats must be 0-dim or 1-dim tensor")
    index = repeat_interleave_indices(repeats, output_size=output_size)
    return aten.index_select.default(self, d, index)
