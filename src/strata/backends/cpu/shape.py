"""CPU kernels for the copying ops of ``ops/shape.py`` (views need no kernel: see views.py)."""

import numpy as np

from ...ops import shape as S
from .array import compute_data, data, wrap


def cat(tensors, dim=0):
    spec = S.cat.meta(tensors, dim)
    d = dim % len(spec.shape)
    arrays = [compute_data(t, spec.dtype) for t in tensors
              if not (t.ndim == 1 and t.shape[0] == 0 and len(spec.shape) != 1)]
    return wrap(np.concatenate(arrays, axis=d), spec.dtype)


def flip(self, dims):
    S.flip.meta(self, dims)
    return wrap(np.ascontiguousarray(np.flip(data(self), tuple(dims))), self.dtype)


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


KERNELS = {S.cat: cat, S.flip: flip, S.roll: roll, S.repeat: repeat, S.tril: tril,
           S.triu: triu, S.diag: diag}
