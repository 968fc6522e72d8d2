"""CPU kernels for the copying ops of ``ops/shape.py`` (views need no kernel: see views.py)."""

import math

import numpy as np

from ...core import dtype as D
from ...core.shape import contiguous_strides
from ...ops import shape as S
from . import array, native, native_pool
from .array import compute_data, data, wrap
from .factory import strided


def _laid_out(spec, values):
    """A tensor holding ``values`` with the strides the meta chose (copying only when NumPy's
    array has another layout)."""
    if spec.strides == contiguous_strides(spec.shape):
        return wrap(np.ascontiguousarray(values), spec.dtype)
    out = strided(spec.shape, spec.strides, spec.dtype)
    np.copyto(data(out), values, casting="unsafe")
    return out


# Note [Native cat]: NumPy's ``concatenate`` copies each input's outer rows with its strided
# loops, slow for short rows: attention's q, k and v gradients, three (16, 64, 128) float32
# along the last dim, took 158 us (torch: 42). Contiguous inputs into a contiguous result are
# instead one ``memcpy`` per input per outer row, the rows split over the native pool
# (native_pool.py's ``strata_cat``): 1.5 MB of rows in ~50 us. An input of another layout is
# made contiguous first (one copy in NumPy's order, as ``concatenate`` would read it).
NATIVE_CAT_MIN_BYTES = 1 << 16     # below this NumPy's call costs less than the pool's
NATIVE_CAT_CHUNK_BYTES = 1 << 16   # output bytes per chunk of rows, at least


def _native_cat(arrays, d, shape, dtype):
    """The contiguous ``np.concatenate(arrays, axis=d)`` of shape ``shape`` and NumPy dtype
    ``dtype`` by the pool's ``strata_cat``, or None where NumPy must run (a small result, an
    array of another dtype, no native pool)."""
    outer = math.prod(shape[:d])
    row = math.prod(shape[d:]) * dtype.itemsize
    if outer < 2 or outer * row < NATIVE_CAT_MIN_BYTES or native_pool.library() is None \
            or any(a.dtype != dtype for a in arrays):    # a half's float32 compute arrays
        return None
    out = np.empty(shape, dtype)
    context = [native.pointer(out), row, len(arrays)]
    offset = 0
    arrays = [a if a.flags.c_contiguous else np.ascontiguousarray(a) for a in arrays]
    for a in arrays:
        piece = a.nbytes // outer
        context += [native.pointer(a), piece, offset]
        offset += piece
    step = max(1, -(-outer // (array.NUM_THREADS * array.CHUNKS_PER_THREAD)),
               NATIVE_CAT_CHUNK_BYTES // row)
    native_pool.run_cat(np.array(context, np.int64), outer, step)
    return out


def cat(tensors, dim=0):
    spec = S.cat.meta(tensors, dim)
    d = dim % len(spec.shape)
    skip_empty = len(spec.shape) != 1      # legacy: 1-d empty tensors join any cat
    arrays = [compute_data(t, spec.dtype) for t in tensors
              if not (skip_empty and t._shape == (0,))]
    if spec.strides == contiguous_strides(spec.shape):
        out = _native_cat(arrays, d, tuple(spec.shape), spec.dtype.np)
        if out is not None:
            return wrap(out, spec.dtype)
    return _laid_out(spec, np.concatenate(arrays, axis=d))


def stack(tensors, dim=0):
    spec = S.stack.meta(tensors, dim)
    d = dim % len(spec.shape)
    return _laid_out(spec, np.stack([compute_data(t, spec.dtype) for t in tensors], axis=d))


def flip(self, dims):
    spec = S.flip.meta(self, dims)
    return _laid_out(spec, np.flip(data(self), tuple(dims)))


def roll(self, shifts, dims=()):
    S.roll.meta(self, shifts, dims)
    shifts = (shifts,) if isinstance(shifts, int) else tuple(shifts)
    dims = (dims,) if isinstance(dims, int) else tuple(dims)
    arr = data(self)
    if not dims:
        return wrap(np.roll(arr.reshape(-1), shifts[0]).reshape(arr.shape), self.dtype)
    return wrap(np.roll(arr, shifts, dims), self.dtype)


def repeat(self, repeats):
    spec = S.repeat.meta(self, repeats)
    arr = data(self).reshape((1,) * (len(repeats) - self.ndim) + tuple(self.shape))
    return wrap(np.tile(arr, tuple(repeats)).reshape(spec.shape), self.dtype)


def tril(self, diagonal=0):
    S.tril.meta(self, diagonal)
    return wrap(np.tril(data(self), diagonal), self.dtype)


def triu(self, diagonal=0):
    S.triu.meta(self, diagonal)
    return wrap(np.triu(data(self), diagonal), self.dtype)


def diag(self, diagonal=0):
    S.diag.meta(self, diagonal)
    return wrap(np.array(np.diag(data(self), diagonal)), self.dtype)


def _reshape_copy(self, size):
    """One copy, into the result's own array (copying first and reshaping after gave a view
    that ``wrap`` copied again: attention's heads paid twice)."""
    spec = S._reshape_copy.meta(self, size)
    values = data(self)
    out = np.empty(spec.shape, values.dtype)
    np.copyto(out.reshape(values.shape), values)
    return wrap(out, self.dtype)


def repeat_interleave_indices(repeats, output_size=None):
    """``repeat_interleave(repeats)``: index i, repeats[i] times (the rows index_select takes)."""
    if repeats.ndim != 1:
        raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
    if repeats.dtype not in (D.int64, D.int32):
        raise RuntimeError("repeats has to be Long or Int tensor")
    counts = data(repeats)
    if counts.size and counts.min() < 0:
        raise RuntimeError("repeats can not be negative")
    out = np.repeat(np.arange(counts.shape[0], dtype=counts.dtype), counts)
    if output_size is not None and out.shape[0] != output_size:
        raise RuntimeError(f"repeat_interleave: output_size {output_size} does not match the sum "
                           f"of repeats {out.shape[0]}")
    return wrap(out, repeats.dtype)


KERNELS = {S.cat: cat, S.stack: stack, S.flip: flip, S.roll: roll, S.repeat: repeat, S.tril: tril,
           S.triu: triu, S.diag: diag, S._reshape_copy: _reshape_copy,
           S.repeat_interleave_indices: repeat_interleave_indices}
