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
    """Ops that always produce floats (true division, exp, sqrt, ...): ints go to the default."""
    dt = D.result_type(*operands)
    return dt if dt.category == D.FLOATING else D.get_default_dtype()


def no_bool(name, *operands):
    """Ops that reject bool (``neg``, ``sub``), with PyTorch's messages."""
    dt = D.result_type(*operands)
    if dt is D.bool_:
        if name == "sub":
            raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not "
                               "supported. Use the `^` or `logical_xor()` operator instead.")
        if name == "neg":
            raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. "
                               "If you are trying to invert a mask, use the `~` or "
                               "`logical_not()` operator instead.")
        raise RuntimeError(f"\"{name}\" not implemented for 'Bool'")
    return dt


def integral_only(name, *operands):
    """Bitwise ops: bool and integer dtypes only."""
    dt = D.result_type(*operands)
    if dt.category == D.FLOATING:
        raise RuntimeError(f"\"{name}_cpu\" not implemented for '{_type_name(dt)}'")
    return dt


def _type_name(dt):
    return {"float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16",
            "int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte",
            "bool": "Bool"}[dt.name]


type_name = _type_name


def check_inplace_cast(result_dtype, self_dtype):
    if not D.can_cast(result_dtype, self_dtype):
        raise RuntimeError(f"result type {_type_name(result_dtype)} can't be cast to the desired "
                           f"output type {_type_name(self_dtype)}")


# --- shapes and layouts ------------------------------------------------------------------------

def shape_of(x):
    return tuple(x.shape) if is_tensor(x) else ()


def pointwise_strides(shape, operands):
    """Output strides of a pointwise op: follow the layout of the first full-size operand when
    it is dense and not row-major (TensorIterator keeps a permuted input's order), else row-major.
    """
    for x in operands:
        if is_tensor(x) and tuple(x.shape) == tuple(shape) and len(shape) > 1:
            strides = x.stride() if hasattr(x, "stride") else None
            if strides is None or x.is_contiguous():
                break
            order = sorted(range(len(shape)), key=lambda d: (-strides[d], -d))
            out = [0] * len(shape)
            acc = 1
            for d in reversed(order):
                out[d] = acc
                acc *= max(shape[d], 1)
            return tuple(out)
    return contiguous_strides(shape)


def pointwise_meta(dtype_rule, *operands):
    shapes = [tuple(x.shape) for x in operands if is_tensor(x)]
    shape = broadcast_shapes(*shapes)
    return TensorSpec(shape, dtype_rule(*operands), pointwise_strides(shape, operands))


def inplace_meta(self, result: TensorSpec):
    """An in-place op writes ``self``: the broadcast must keep self's shape, the dtype must cast."""
    if tuple(result.shape) != tuple(self.shape):
        raise RuntimeError(f"output with shape [{', '.join(map(str, self.shape))}] doesn't match "
                           f"the broadcast shape [{', '.join(map(str, result.shape))}]")
    check_inplace_cast(result.dtype, self.dtype)
    return self


def check_no_internal_overlap(self):
    """Writing into an expanded tensor would write one element many times."""
    for size, stride in zip(self.shape, self.stride()):
        if stride == 0 and size > 1:
            raise RuntimeError(
                "unsupported operation: more than one element of the written-to tensor refers to "
                "a single memory location. Please clone() the tensor before performing the "
                "operation.")


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
    return D.int64 if self.dtype.category != D.FLOATING else self.dtype
