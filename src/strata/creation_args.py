"""How the creation functions read PyTorch's Python arguments: sizes given as varargs or one
sequence, numbers and ints checked as the argument parser checks them (with its error wording),
``dtype``/``device`` defaults taken from ``out=``, and the strides each memory format asks for
(``empty_like``'s preserve_format keeps a dense input's layout, as ATen's ``infer_dense_strides``).

Separate from ``creation.py``, whose factories (``zeros``, ``arange``, ``rand``, ...) all use it.
"""

import operator

import numpy as np

from ._tensor import _is_tensor
from .core import dtype as D
from .core.shape import contiguous_strides
from .functions import write_out
from .ops.meta_rules import type_name
from .tensor_new import finish, type_label

# --- argument parsing ----------------------------------------------------------------------------

def _int_like(x) -> bool:
    """An int, a NumPy integer or a one-element integer tensor (anything with a valid __index__)."""
    if isinstance(x, int):
        return True
    try:
        operator.index(x)
    except TypeError:
        return False
    return True


def _size_list(fname, seq, name="size", pos=1):
    """A ``tuple of ints`` argument (the tuple/list form)."""
    if not isinstance(seq, (tuple, list)):
        where = f" (position {pos})" if pos else ""
        raise TypeError(f"{fname}(): argument '{name}'{where} must be tuple of ints, not "
                        f"{type_label(seq)}")
    for i, s in enumerate(seq):
        if isinstance(s, bool) or not _int_like(s):
            where = f" (position {pos})" if pos else ""
            raise TypeError(f"{fname}(): argument '{name}'{where} must be tuple of ints, but "
                            f"found element of type {type_label(s)} at pos {i}")
    return tuple(operator.index(s) for s in seq)


def _size_args(fname, args, size):
    """PyTorch's varargs size: ``f(2, 3)``, ``f((2, 3))``, ``f([2, 3])``, ``f(size=(2, 3))``."""
    if size is not None:
        if args:
            raise TypeError(f"{fname}() got multiple values for argument 'size'")
        return _size_list(fname, size, pos=0)
    if not args:
        raise TypeError(f'{fname}() missing 1 required positional arguments: "size"')
    first = args[0]
    if isinstance(first, (tuple, list)):
        if len(args) > 1:
            raise TypeError(f"{fname}() takes 1 positional argument but {len(args)} were given")
        return _size_list(fname, first)
    if len(args) == 1:
        if isinstance(first, bool) or not _int_like(first):
            raise TypeError(f"{fname}(): argument 'size' (position 1) must be tuple of ints, not "
                            f"{type_label(first)}")
        return (operator.index(first),)
    for i, s in enumerate(args):
        if not _int_like(s):  # PyTorch lets bools through here (zeros(2, True) is (2, 1))
            raise TypeError(f"{fname}(): argument 'size' failed to unpack the object at pos "
                            f"{i + 1} with error \"type must be tuple of ints,but got "
                            f"{type_label(s)}\"")
    return tuple(operator.index(s) for s in args)


def _number(fname, name, pos, value):
    """A ``Number`` argument: a Python/NumPy number or a 0-dim tensor, as a Python number."""
    if _is_tensor(value):
        if value.ndim != 0:
            raise TypeError(f"{fname}(): argument '{name}' (position {pos}) must be Number, not "
                            f"Tensor")
        return value.item()
    if isinstance(value, (bool, int, float, complex)):
        return value
    if isinstance(value, np.generic) and not isinstance(value, (str, bytes)):
        return value.item()  # NumPy scalars count as the Python numbers they hold
    raise TypeError(f"{fname}(): argument '{name}' (position {pos}) must be Number, not "
                    f"{type_label(value)}")


def _int_arg(fname, name, pos, value):
    if isinstance(value, bool) or not _int_like(value):
        raise TypeError(f"{fname}(): argument '{name}' (position {pos}) must be int, not "
                        f"{type_label(value)}")
    return operator.index(value)


def _dtype(fname, dtype, out):
    """The dtype to compute in: ``dtype=``, else ``out``'s; they must agree when both are given."""
    dtype = None if dtype is None else D.to_dtype(dtype, fname)
    if out is None:
        return dtype
    if dtype is not None and dtype is not out.dtype:
        raise RuntimeError(f"dtype {type_name(dtype)} does not match dtype of out parameter "
                           f"({type_name(out.dtype)})")
    return out.dtype


def _device(device, out):
    return out.device if device is None and out is not None else device


def _result(t, out, requires_grad):
    if out is not None:
        return write_out(out, t)
    return finish(t, requires_grad)


# --- memory formats ------------------------------------------------------------------------------

def _format_strides(fname, shape, memory_format):
    if memory_format in (None, "contiguous_format", "preserve_format"):
        return contiguous_strides(shape)
    rank = {"channels_last": 4, "channels_last_3d": 5}.get(memory_format)
    if rank is None:
        raise RuntimeError(f"{fname}: unsupported memory format {memory_format}")
    if len(shape) != rank:
        raise RuntimeError(f"required rank {rank} tensor to use {memory_format} format")
    # channels innermost, then the spatial dims from last to first, batch outermost
    strides = [0] * rank
    strides[1] = 1
    acc = shape[1]
    for d in range(rank - 1, 1, -1):
        strides[d] = acc
        acc *= shape[d]
    strides[0] = acc
    return tuple(strides)


def _non_overlapping_and_dense(shape, strides) -> bool:
    if len(shape) == 1:
        return shape[0] < 2 or strides[0] == 1
    dims = sorted(range(len(shape)), key=lambda d: (shape[d] < 2, strides[d] if shape[d] >= 2
                                                    else 0))
    expected = 1
    for d in dims:
        if shape[d] < 2:
            return True
        if strides[d] != expected:
            return False
        expected *= shape[d]
    return True


def _infer_dense_strides(shape, strides):
    """Dense strides in the same dim order as ``strides`` (PyTorch's ``infer_dense_strides``:
    an insertion sort that leaves stride-0 dims where they are)."""
    ndim = len(shape)
    perm = list(range(ndim - 1, -1, -1))

    def should_swap(d0, d1):
        s0, s1 = strides[d0], strides[d1]
        if s0 == 0 or s1 == 0:
            return 0
        if s0 != s1:
            return -1 if s0 < s1 else 1
        return 1 if shape[d0] > shape[d1] else 0

    for i in range(1, ndim):
        d1 = i
        for j in range(1, i + 1):
            d0 = i - j
            c = should_swap(perm[d0], perm[d1])
            if c > 0:
                perm[d0], perm[d1] = perm[d1], perm[d0]
                d1 = d0
            elif c < 0:
                break
    out = [0] * ndim
    acc = 1
    for d in perm:
        out[d] = acc
        if shape[d] > 1:
            acc *= shape[d]
    return tuple(out)


def _like_strides(fname, input, memory_format, contiguous):
    """The strides ``empty_like`` gives: ``input``'s own when they are dense (preserve_format),
    the same dim order made dense when not, or those of the requested memory format."""
    shape = tuple(input.shape)
    if memory_format not in (None, "preserve_format"):
        return _format_strides(fname, shape, memory_format)
    strides = input.stride()
    if strides == contiguous or _non_overlapping_and_dense(shape, strides):
        return strides
    return _infer_dense_strides(shape, strides)
