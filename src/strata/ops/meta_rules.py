"""Shared meta rules: the result dtype, shape and strides of whole families of ops.

These functions are the *one* place where a family's policy lives (PyTorch keeps it in
TensorIterator): type promotion, broadcasting, in-place shape and cast checks, output layout.
Meta functions call them to describe outputs; CPU kernels call the dtype rules too, so the meta
device and the real device can never disagree about a dtype.

Arguments are tensors (anything with ``shape``/``dtype``/``ndim``, real or meta) or Python scalars.
"""

from ..core import dtype as D
from ..core.shape import broadcast_shapes, contiguous_strides, wrap_dim, wrap_dims
from .op import TensorSpec


def is_tensor(x) -> bool:
    return hasattr(x, "_keyset") or isinstance(x, TensorSpec)


# --- dtypes -----------------------------------------------------------------------------------

def promote(*operands):
    """PyTorch's result type, with a fast path for two tensors of one dtype."""
    return D.result_type(*operands)


def float_result(*operands):
    """Ops that always produce floats (true division, exp, sqrt, ...): ints go to the default;
    complex stays complex."""
    dt = D.result_type(*operands)
    return dt if dt.category >= D.FLOATING else D.get_default_dtype()


def no_bool(name, *operands):
    """Ops that reject bool (``neg``, ``sub``), with PyTorch's messages (``sub_check``)."""
    if name == "sub":
        bools = sum(getattr(x, "dtype", None) is D.bool_ or type(x) is bool for x in operands)
        if bools == 2:
            raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not "
                               "supported. Use the `^` or `logical_xor()` operator instead.")
        if bools:
            raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not "
                               "supported. If you are trying to invert a mask, use the `~` or "
                               "`logical_not()` operator instead.")
    dt = D.result_type(*operands)
    if dt is D.bool_:
        if name == "neg":
            raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. "
                               "If you are trying to invert a mask, use the `~` or "
                               "`logical_not()` operator instead.")
        raise NotImplementedError(f"\"{name}\" not implemented for 'Bool'")
    return dt


def integral_only(name, *operands):
    """Bitwise ops: bool and integer dtypes only."""
    dt = D.result_type(*operands)
    if dt.category >= D.FLOATING:
        raise NotImplementedError(f"\"{name}_cpu\" not implemented for '{_type_name(dt)}'")
    return dt


def _type_name(dt):
    return {"float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16",
            "int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte",
            "bool": "Bool", "complex64": "ComplexFloat", "complex128": "ComplexDouble"}[dt.name]


type_name = _type_name


def c_type_name(dt):
    """The C++ name ATen messages print for a dtype's ``caffe2::TypeMeta`` ("long int")."""
    return {"float32": "float", "float64": "double", "float16": "c10::Half",
            "bfloat16": "c10::BFloat16", "int64": "long int", "int32": "int",
            "int16": "short int", "int8": "signed char", "uint8": "unsigned char",
            "bool": "bool", "complex64": "c10::complex<float>",
            "complex128": "c10::complex<double>"}[dt.name]


def check_inplace_cast(result_dtype, self_dtype):
    if not D.can_cast(result_dtype, self_dtype):
        raise RuntimeError(f"result type {_type_name(result_dtype)} can't be cast to the desired "
                           f"output type {_type_name(self_dtype)}")


_CPP_TYPE = {"float32": "float", "float64": "double", "float16": "c10::Half",
             "bfloat16": "c10::BFloat16", "int64": "int64_t", "int32": "int",
             "int16": "int16_t", "int8": "int8_t", "uint8": "uint8_t"}


_LIMITS = {}  # dtype -> (lowest, highest) finite value


def _limits(dtype):
    limits = _LIMITS.get(dtype)
    if limits is None:
        info = D.finfo(dtype) if dtype.category == D.FLOATING else D.iinfo(dtype)
        limits = _LIMITS[dtype] = (info.min, info.max)
    return limits


def check_scalar_fits(value, dtype):
    """A Python number written into a ``dtype`` tensor (fills, masked_fill, setitem) must be
    representable, as c10's ``checked_convert``: inf/nan only into floats, and a negative int
    wraps into an unsigned type. Any number fits a bool. Returns the number to store."""
    if dtype is D.bool_ or isinstance(value, bool) or dtype.is_complex:
        return value
    value = value.item() if hasattr(value, "item") else value
    if isinstance(value, complex):
        if value.imag:
            raise RuntimeError(f"value cannot be converted to type {_CPP_TYPE[dtype.name]} "
                               f"without overflow")
        value = value.real
    low, high = _limits(dtype)
    if low <= value <= high:
        return value
    if dtype.category == D.FLOATING:
        fits = value != value or abs(value) == float("inf")
    else:
        fits = not dtype.is_signed and isinstance(value, int) and 0 < -value <= high
        value = value % (high + 1) if fits else value  # two's complement wrap
    if not fits:
        raise RuntimeError(f"value cannot be converted to type {_CPP_TYPE[dtype.name]} without "
                           f"overflow")
    return value


# --- shapes and layouts ------------------------------------------------------------------------

def shape_of(x):
    shape = getattr(x, "_shape", None)   # a tensor's own tuple: no Size to build
    if shape is not None:
        return shape
    return tuple(x.shape) if is_tensor(x) else ()


def pointwise_strides(shape, operands):
    """Output strides of a pointwise op, as TensorIterator picks them (``TensorIterator.cpp``).

    Inputs that all have the output's shape and are contiguous give a contiguous result; if they
    are all dense with one common layout, the result copies it. Otherwise the dims are sorted by
    the inputs' strides (first input that tells two dims apart decides; broadcast dims don't
    count) and the result is dense in that order. Python scalars are 0-dim inputs.
    """
    shape = tuple(shape)
    tensors = [x for x in operands if is_tensor(x) and hasattr(x, "stride")]
    if len(tensors) == len(operands) and all(tuple(x.shape) == shape for x in tensors):
        if all(x.is_contiguous() for x in tensors):
            return contiguous_strides(shape)
        first = tuple(tensors[0].stride())
        if all(tuple(x.stride()) == first for x in tensors) and \
                is_non_overlapping_and_dense(shape, first):
            return first
    ndim = len(shape)
    if ndim < 2:
        return contiguous_strides(shape)
    strides = []
    for x in tensors:
        own, offset = x.stride(), ndim - x.ndim
        full = [0] * ndim
        for i, size in enumerate(x.shape):
            if not (size == 1 and shape[offset + i] != 1):
                full[offset + i] = own[i]
        strides.append(full)

    def should_swap(d0, d1):
        for st in strides:
            s0, s1 = st[d0], st[d1]
            if s0 == 0 or s1 == 0:
                continue
            if s0 != s1:
                return 1 if s0 > s1 else -1
            if shape[d0] > shape[d1]:
                return 1
        return 0

    perm = _insertion_sort_dims(ndim, should_swap)
    if perm == list(range(ndim - 1, -1, -1)):
        return contiguous_strides(shape)
    out, acc = [0] * ndim, 1
    for d in perm:  # TensorIterator's compatible_stride: sizes multiply as they are, 0 and 1 too
        out[d] = acc
        acc *= shape[d]
    return tuple(out)


def _insertion_sort_dims(ndim, should_swap):
    """TensorIterator's dim order (fastest first): insertion sort that tolerates ties."""
    perm = list(range(ndim - 1, -1, -1))
    for i in range(1, ndim):
        dim1 = i
        for dim0 in range(i - 1, -1, -1):
            cmp = should_swap(perm[dim0], perm[dim1])
            if cmp > 0:
                perm[dim0], perm[dim1] = perm[dim1], perm[dim0]
                dim1 = dim0
            elif cmp < 0:
                break
    return perm


def is_non_overlapping_and_dense(shape, strides) -> bool:
    """Every element has its own memory and the elements fill a block (c10's definition)."""
    if len(shape) == 1:
        return shape[0] < 2 or strides[0] == 1
    order = sorted((d for d in range(len(shape)) if shape[d] >= 2), key=lambda d: strides[d])
    expected = 1
    for d in order:
        if strides[d] != expected:
            return False
        expected *= shape[d]
    return True


def dense_strides_like(shape, strides):
    """Dense strides in the memory order of ``strides`` (``infer_dense_strides``): the layout
    ``empty_like``/``clone`` give a copy of a non-dense tensor."""
    ndim = len(shape)

    def should_swap(d0, d1):
        s0, s1 = strides[d0], strides[d1]
        if s0 == 0 or s1 == 0:
            return 0
        if s0 != s1:
            return 1 if s0 > s1 else -1
        return 1 if shape[d0] > shape[d1] else 0

    out, acc = [0] * ndim, 1
    for d in _insertion_sort_dims(ndim, should_swap):
        out[d] = acc
        if shape[d] > 1:
            acc *= shape[d]
    return tuple(out)


def like_strides(x, memory_format=None):
    """Strides of a copy of ``x`` (``clone``/``_to_copy``/``empty_like``) in ``memory_format``."""
    shape = tuple(x.shape)
    if memory_format in (None, "preserve_format"):
        strides = tuple(x.stride())
        if is_non_overlapping_and_dense(shape, strides):
            return strides
        return dense_strides_like(shape, strides)
    if memory_format == "channels_last":
        return channels_last_strides(shape)
    return contiguous_strides(shape)


def channels_last_strides(shape):
    """NHWC (4-d) / NDHWC (5-d) strides for an N, C, ... shape."""
    if len(shape) not in (4, 5):
        raise RuntimeError(f"required rank {4 if len(shape) < 5 else 5} tensor to use "
                           f"channels_last{'_3d' if len(shape) == 5 else ''} format")
    order = [1] + list(range(len(shape) - 1, 1, -1)) + [0]  # C fastest, then W, H, (D), N
    out, acc = [0] * len(shape), 1
    for d in order:  # sizes multiply as they are (c10's get_channels_last_strides_2d)
        out[d] = acc
        acc *= shape[d]
    return tuple(out)


def view_strides(oldshape, oldstride, newshape):
    """Strides for viewing (oldshape, oldstride) as newshape, or None if no view exists
    (``computeStride`` in ``TensorUtils.cpp``): what decides between ``view`` and a copy."""
    if len(oldshape) == 0:
        return (1,) * len(newshape)
    numel = 1
    for s in oldshape:
        numel *= s
    if numel and tuple(oldstride) == contiguous_strides(oldshape):
        return contiguous_strides(newshape)   # what the loop below gives a row-major tensor
    if numel == 0:
        if tuple(oldshape) == tuple(newshape):
            return tuple(oldstride)
        return contiguous_strides(newshape)
    newstride = [0] * len(newshape)
    view_d = len(newshape) - 1
    chunk_base_stride = oldstride[-1]
    tensor_numel = 1
    view_numel = 1
    for tensor_d in range(len(oldshape) - 1, -1, -1):
        tensor_numel *= oldshape[tensor_d]
        if tensor_d == 0 or (oldshape[tensor_d - 1] != 1 and
                             oldstride[tensor_d - 1] != tensor_numel * chunk_base_stride):
            while view_d >= 0 and (view_numel < tensor_numel or newshape[view_d] == 1):
                newstride[view_d] = view_numel * chunk_base_stride
                view_numel *= newshape[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return None
            if tensor_d > 0:
                chunk_base_stride = oldstride[tensor_d - 1]
                tensor_numel = 1
                view_numel = 1
    if view_d != -1:
        return None
    return tuple(newstride)


def pointwise_meta(dtype_rule, *operands):
    shapes = [tuple(x.shape) for x in operands if is_tensor(x)]
    shape = broadcast_shapes(*shapes)
    return TensorSpec(shape, dtype_rule(*operands), pointwise_strides(shape, operands))


def inplace_meta(self, result: TensorSpec):
    """An in-place op writes ``self``: the broadcast must keep self's shape, the dtype must cast."""
    if tuple(result.shape) != shape_of(self):
        raise RuntimeError(f"output with shape [{', '.join(map(str, self.shape))}] doesn't match "
                           f"the broadcast shape [{', '.join(map(str, result.shape))}]")
    check_inplace_cast(result.dtype, self.dtype)
    return self


def check_no_internal_overlap(self):
    """Writing into an expanded tensor would write one element many times."""
    for size, stride in zip(shape_of(self), self.stride()):
        if stride == 0 and size > 1:
            raise RuntimeError(
                "unsupported operation: more than one element of the written-to tensor refers to "
                "a single memory location. Please clone() the tensor before performing the "
                "operation.")


def check_inplace_overlap(self, *operands):
    """What TensorIterator checks before it writes ``self``: no element written twice, and no
    input that partially overlaps it (a full alias such as ``x.add_(x)`` is fine)."""
    check_no_internal_overlap(self)
    # a tensor whose storage was never made shares it with no one (Note [Lazy storage])
    storage = self._storage_or_none
    if storage is None:
        return
    for x in operands:
        if getattr(x, "_storage_or_none", None) is storage and x is not self:
            _check_no_partial_overlap(self, x)


def check_no_overlap(self, *operands):
    """ATen's ``assert_no_overlap``: no operand may share an element with ``self``, a full
    alias included (``x.index_add_(0, i, x)`` raises in PyTorch, where ``x.add_(x)`` runs)."""
    storage = getattr(self, "_storage_or_none", None)
    for x in operands:
        if x is self and self.numel():
            raise RuntimeError(_OVERLAP_ERROR)
        if storage is not None and getattr(x, "_storage_or_none", None) is storage:
            _check_no_partial_overlap(self, x, allow_full=False)


def _check_no_partial_overlap(a, b, allow_full=True):
    """``get_overlap_status`` (``MemoryOverlap.cpp``) for two tensors on one storage: only dense
    layouts are compared (anything else is "too hard", which PyTorch lets through too)."""
    shape_a, shape_b = tuple(a.shape), tuple(b.shape)
    if 0 in shape_a or 0 in shape_b or not (
            is_non_overlapping_and_dense(shape_a, a.stride()) and
            is_non_overlapping_and_dense(shape_b, b.stride())):
        return
    a0, a1 = a.storage_offset(), a.storage_offset() + a.numel()
    b0, b1 = b.storage_offset(), b.storage_offset() + b.numel()
    if allow_full and (a0, a1) == (b0, b1) and tuple(a.stride()) == tuple(b.stride()):
        return
    if a0 < b1 and b0 < a1:
        raise RuntimeError(_OVERLAP_ERROR)


_OVERLAP_ERROR = ("unsupported operation: some elements of the input tensor and the written-to "
                  "tensor refer to a single memory location. Please clone() the tensor before "
                  "performing the operation.")


# --- reductions --------------------------------------------------------------------------------

def reduction_dims(self, dim):
    """Normalise a reduction's ``dim`` (None / int / list) into a sorted tuple of dims."""
    ndim = self.ndim
    if dim is None or (isinstance(dim, (tuple, list)) and len(dim) == 0):
        return tuple(range(ndim))
    if isinstance(dim, int):
        return (wrap_dim(dim, ndim),)
    return tuple(sorted(wrap_dims(dim, ndim)))


def reduced_shape(shape, dims, keepdim):
    if keepdim:
        return tuple(1 if i in dims else s for i, s in enumerate(shape))
    return tuple(s for i, s in enumerate(shape) if i not in dims)


def reduction_meta(self, dim, keepdim, dtype):
    dims = reduction_dims(self, dim)
    return TensorSpec(reduced_shape(tuple(self.shape), dims, keepdim), dtype)


def sum_dtype(self, dtype=None):
    """sum/prod accumulate integers (and bool) in int64 unless a dtype is given."""
    if dtype is not None:
        return dtype
    return D.int64 if self.dtype.category < D.FLOATING else self.dtype
