"""Frontends of the shape family whose Python signature differs from their schema.

PyTorch's Python API takes sizes as varargs (``x.broadcast_to(2, 3)``), picks overloads by
argument type (``split(x, 2)`` vs ``split(x, [1, 2])``, ``repeat_interleave(x, 2)`` vs
``repeat_interleave(x, tensor)``), and has NumPy-style helpers (``tensor_split``, ``atleast_2d``,
``hstack``'s relatives) that are compositions of view ops. Each one calls ops only.
"""

import builtins

from ..core.shape import broadcast_shapes as _broadcast_shapes
from ..core.shape import wrap_dim
from ..functions import write_out
from ..ops import factory as F
from ..ops import shape as S
from ..ops import split_join as SJ
from ..ops.meta_rules import is_tensor
from .indexing import type_label


def _out(result, out):
    return result if out is None else write_out(out, result)


def _varargs(sizes):
    """``f(2, 3)``, ``f((2, 3))`` and ``f([2, 3])`` all mean (2, 3)."""
    if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)):
        return tuple(sizes[0])
    return tuple(sizes)


# --- joining --------------------------------------------------------------------------------------

def _tensor_sequence(name, tensors):
    """PyTorch's argument parser for a ``Tensor[]``: a tuple or list holding only tensors (a
    NumPy array in it is refused, not converted), checked before anything is dispatched."""
    if not isinstance(tensors, (tuple, list)):
        raise TypeError(f"{name}(): argument 'tensors' (position 1) must be tuple of Tensors, "
                        f"not {type_label(tensors)}")
    for i, t in enumerate(tensors):
        if not is_tensor(t):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got "
                            f"{type_label(t)}")
    return list(tensors)


def _non_empty(name, tensors):
    tensors = _tensor_sequence(name, tensors)
    if not tensors:
        raise RuntimeError(f"{name} expects a non-empty TensorList")
    return tensors


def cat(tensors, dim=0, *, out=None):
    """Concatenate tensors along an existing dim (1-d empty tensors are skipped, as in PyTorch)."""
    if isinstance(tensors, (tuple, list)) and len(tensors) == 0:
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
    return _out(S.cat(_tensor_sequence("cat", tensors), dim), out)


def stack(tensors, dim=0, *, out=None):
    return _out(S.stack(_non_empty("stack", tensors), dim), out)


def hstack(tensors, *, out=None):
    return _out(SJ.hstack(_non_empty("hstack", tensors)), out)


def vstack(tensors, *, out=None):
    return _out(SJ.vstack(_non_empty("vstack", tensors)), out)


def concatenate(tensors, axis=0, *, out=None):
    return cat(tensors, axis, out=out)


def dstack(tensors, *, out=None):
    return _out(S.cat([atleast_3d(x) for x in _non_empty("dstack", tensors)], 2), out)


def column_stack(tensors, *, out=None):
    cols = [S.reshape(x, (x.numel(), 1)) if x.ndim <= 1 else x
            for x in _non_empty("column_stack", tensors)]
    return _out(S.cat(cols, 1), out)


# --- splitting ------------------------------------------------------------------------------------

def split(tensor, split_size_or_sections, dim=0):
    """Pieces of ``split_size`` (the last may be smaller), or of the given section sizes."""
    if isinstance(split_size_or_sections, int):
        return SJ.split(tensor, split_size_or_sections, dim)
    return SJ.split_with_sizes(tensor, list(split_size_or_sections), dim)


def tensor_split(input, indices_or_sections, dim=0):
    """``n`` nearly equal pieces (the first ``size % n`` one element longer), or the pieces
    between the given indices. Views, like ``split``."""
    if input.ndim == 0:
        raise RuntimeError("tensor_split expected at least a 1-dimensional tensor, but got a "
                           "tensor with 0 dims")
    d = wrap_dim(dim, input.ndim)
    size = input.shape[d]
    if is_tensor(indices_or_sections):
        values = indices_or_sections.tolist()
        indices_or_sections = values if indices_or_sections.ndim else int(values)
    if isinstance(indices_or_sections, int):
        n = indices_or_sections
        if n <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {n}")
        base, extra = divmod(size, n)
        bounds = [0]
        for i in range(n):
            bounds.append(bounds[-1] + base + (1 if i < extra else 0))
    else:
        bounds = [0] + [builtins.min(builtins.max(i if i >= 0 else i + size, 0), size)
                        for i in indices_or_sections] + [size]
    return tuple(S.slice(input, d, start, builtins.max(start, end))
                 for start, end in zip(bounds[:-1], bounds[1:]))


def _split_along(name, dim, min_dims):
    def fn(input, indices_or_sections):
        if input.ndim < min_dims:
            raise RuntimeError(f"torch.{name} requires a tensor with at least {min_dims} "
                               f"dimension{'s' if min_dims > 1 else ''}, but got a tensor with "
                               f"{input.ndim} dimensions!")
        d = 0 if name == "hsplit" and input.ndim == 1 else dim
        if isinstance(indices_or_sections, int) and input.shape[d] % indices_or_sections:
            raise RuntimeError(f"torch.{name} attempted to split along dimension {d}, but the "
                               f"size of the dimension {input.shape[d]} is not divisible by the "
                               f"split_size {indices_or_sections}!")
        return tensor_split(input, indices_or_sections, d)
    fn.__name__ = fn.__qualname__ = name
    return fn


hsplit = _split_along("hsplit", 1, 1)
vsplit = _split_along("vsplit", 0, 2)
dsplit = _split_along("dsplit", 2, 3)


# --- reshaping ------------------------------------------------------------------------------------

def reshape(input, shape):
    return S.reshape(input, tuple(shape))


def ravel(input):
    return S.reshape(input, (-1,))


def permute(input, dims):
    return S.permute(input, tuple(dims))


def swapaxes(input, axis0, axis1):
    return S.transpose(input, axis0, axis1)


def _atleast(ndim):
    """``atleast_Nd``: 0-d -> (1,)..., 1-d (n,) -> (1, n), 2-d (m, n) -> (m, n, 1)."""
    def one(x):
        if x.ndim >= ndim:
            return x
        if x.ndim == 0:
            return S.reshape(x, (1,) * ndim)
        if x.ndim == 1:
            return S.unsqueeze(S.unsqueeze(x, 0), -1) if ndim == 3 else S.unsqueeze(x, 0)
        return S.unsqueeze(x, -1)

    def atleast(*tensors):
        if len(tensors) == 1 and isinstance(tensors[0], (tuple, list)):
            tensors = tuple(tensors[0])
            return tuple(one(x) for x in tensors)
        out = tuple(one(x) for x in tensors)
        return out[0] if len(out) == 1 else out
    atleast.__name__ = atleast.__qualname__ = f"atleast_{ndim}d"
    return atleast


atleast_1d, atleast_2d, atleast_3d = _atleast(1), _atleast(2), _atleast(3)


def broadcast_shapes(*shapes):
    """The shape tensors of these shapes would broadcast to (no tensors needed)."""
    from ..core.shape import Size
    return Size(_broadcast_shapes(*(_varargs((s,)) if isinstance(s, int) else tuple(s)
                                    for s in shapes)))


def broadcast_tensors(*tensors):
    """Views of the tensors expanded to their common shape."""
    shape = _broadcast_shapes(*(tuple(x.shape) for x in tensors))
    return tuple(S.expand(x, shape) for x in tensors)


def meshgrid(*tensors, indexing="ij"):
    """Coordinate grids (expanded views) from 1-d tensors; ``indexing`` "ij" or "xy"."""
    tensors = _varargs(tensors)
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f"torch.meshgrid: indexing must be one of \"xy\" or \"ij\", but "
                           f"received: {indexing}")
    swap = indexing == "xy" and len(tensors) >= 2
    if swap:
        tensors = (tensors[1], tensors[0]) + tuple(tensors[2:])
    shape = tuple(x.numel() for x in tensors)
    grids = []
    for i, x in enumerate(tensors):
        view_shape = [1] * len(tensors)
        view_shape[i] = -1
        grids.append(S.expand(S.reshape(x, tuple(view_shape)), shape))
    if swap:      # ATen swaps the first two inputs and the first two grids, nothing else
        grids[0], grids[1] = grids[1], grids[0]
    return tuple(grids)


# --- flips and rotations --------------------------------------------------------------------------

def fliplr(input):
    if input.ndim < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return S.flip(input, (1,))


def flipud(input):
    if input.ndim < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return S.flip(input, (0,))


def rot90(input, k=1, dims=(0, 1)):
    """Rotate by 90 degrees ``k`` times in the plane ``dims``, from the first towards the second."""
    dims = tuple(dims)
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if input.ndim < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {input.ndim}")
    d0, d1 = wrap_dim(dims[0], input.ndim), wrap_dim(dims[1], input.ndim)
    if d0 == d1:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {dims[0]} "
                           f"and dim1 = {dims[1]}")
    k %= 4
    if k == 1:
        return S.transpose(S.flip(input, (d1,)), d0, d1)
    if k == 2:
        return S.flip(input, (d0, d1))
    if k == 3:
        return S.transpose(S.flip(input, (d0,)), d0, d1)
    return F.clone(input, memory_format="contiguous_format")


def diagflat(input, offset=0):
    return S.diag(S.reshape(input, (-1,)), offset)


# --- repeat_interleave ----------------------------------------------------------------------------

def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):
    """``repeat_interleave(x, repeats, dim)`` with an int or a tensor of repeats, or
    ``repeat_interleave(repeats)``: each index i, repeats[i] times."""
    if repeats is None:
        return S.repeat_interleave_indices(input, output_size=output_size)
    if is_tensor(repeats):
        return S.repeat_interleave_tensor(input, repeats, dim, output_size=output_size)
    return S.repeat_interleave(input, repeats, dim, output_size=output_size)


def broadcast_to(self, *size):
    return S.expand(self, _varargs(size))


def resize_(self, *sizes, memory_format=None):
    return F.resize_(self, _varargs(sizes), memory_format=memory_format)


def resize_as_(self, other, memory_format=None):
    return F.resize_(self, tuple(other.shape), memory_format=memory_format)


def block_diag(*tensors):
    """A block-diagonal matrix of the given scalars, vectors (as rows) and matrices."""
    if not tensors:   # no tensor to dispatch on: PyTorch's empty default-dtype row
        return F.full((1, 0), 0.0)
    return SJ.block_diag(list(tensors))


def cartesian_prod(*tensors):
    """The cartesian product of 1-D tensors, one row per tuple (``itertools.product`` order)."""
    return SJ.cartesian_prod(list(tensors))


FUNCTIONS = {
    "block_diag": block_diag, "cartesian_prod": cartesian_prod, "cat": cat, "concat": cat,
    "concatenate": concatenate, "dstack": dstack, "stack": stack, "hstack": hstack,
    "vstack": vstack, "row_stack": vstack,
    "column_stack": column_stack, "split": split, "tensor_split": tensor_split,
    "hsplit": hsplit, "vsplit": vsplit, "dsplit": dsplit, "reshape": reshape, "ravel": ravel,
    "permute": permute, "swapaxes": swapaxes, "swapdims": swapaxes, "moveaxis": S.movedim,
    "atleast_1d": atleast_1d, "atleast_2d": atleast_2d, "atleast_3d": atleast_3d,
    "broadcast_shapes": broadcast_shapes, "broadcast_tensors": broadcast_tensors,
    "meshgrid": meshgrid, "fliplr": fliplr, "flipud": flipud, "rot90": rot90,
    "diagflat": diagflat, "repeat_interleave": repeat_interleave,
}
METHODS = {
    "tensor_split": tensor_split, "hsplit": hsplit, "vsplit": vsplit, "dsplit": dsplit,
    "ravel": ravel, "fliplr": fliplr, "flipud": flipud, "rot90": rot90,
    "broadcast_to": broadcast_to, "resize_": resize_, "resize_as_": resize_as_,
}
