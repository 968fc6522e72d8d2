"""CPU kernels for the copying ops of ``ops/shape.py`` (views need no kernel: see views.py)."""

import numpy as np

from ...core import dtype as D
from ...core.shape import contiguous_strides
from ...ops import shape as S
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


def cat(tensors, dim=0):
    spec = S.cat.meta(tensors, dim)
    d = dim % len(spec.shape)
    arrays = [compute_data(t, spec.dtype) for t in tensors
              if not (t.ndim == 1 and t.shape[0] == 0 and len(spec.shape) != 1)]
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
