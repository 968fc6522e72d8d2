"""CPU kernels for ``ops/factory.py``: allocation, fills, copies and random numbers (NumPy)."""

import numpy as np

from ...core import dtype as D
from ...ops import factory as F
from ...ops import meta_rules as R
from ...random import generator_for
from .array import COMPUTE, data, wrap


def empty(size, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    spec = F.empty.meta(size, dtype)
    return wrap(np.empty(spec.shape, spec.dtype.np), spec.dtype)


def empty_strided(size, stride, dtype=None, layout=None, device=None, pin_memory=None):
    spec = F.empty_strided.meta(size, stride, dtype)
    out = wrap(np.empty(spec.shape, spec.dtype.np), spec.dtype)
    if spec.shape and tuple(stride) != out.stride():
        # Allocate in the requested dim order (a dense permutation) so the strides match.
        order = sorted(range(len(stride)), key=lambda d: -stride[d])
        arr = np.empty([spec.shape[d] for d in order], spec.dtype.np)
        inverse = np.argsort(order)
        out = wrap(arr.transpose(inverse), spec.dtype)
    return out


def full(size, fill_value, dtype=None, layout=None, device=None, pin_memory=None):
    spec = F.full.meta(size, fill_value, dtype)
    return wrap(np.full(spec.shape, fill_value, dtype=COMPUTE[spec.dtype]), spec.dtype)


def arange(start, end, step=1, dtype=None, layout=None, device=None, pin_memory=None):
    spec = F.arange.meta(start, end, step, dtype)
    n = spec.shape[0]
    if spec.dtype.category == D.FLOATING:
        values = start + np.arange(n, dtype=np.float64) * step
    else:
        values = np.arange(n, dtype=np.int64) * int(step) + int(start)
    return wrap(values.astype(spec.dtype.np), spec.dtype)


def linspace(start, end, steps, dtype=None, layout=None, device=None, pin_memory=None):
    spec = F.linspace.meta(start, end, steps, dtype)
    if steps == 1:
        values = np.array([start], np.float64)
    else:
        # PyTorch's symmetric formula: the first half counts up from start, the rest down from end.
        step = (end - start) / (steps - 1)
        i = np.arange(steps, dtype=np.float64)
        values = np.where(i < steps // 2, start + step * i, end - step * (steps - 1 - i))
    if spec.dtype.category != D.FLOATING:
        values = np.trunc(values)
    return wrap(values.astype(spec.dtype.np), spec.dtype)


def eye(n, m=None, dtype=None, layout=None, device=None, pin_memory=None):
    spec = F.eye.meta(n, m, dtype)
    return wrap(np.eye(*spec.shape, dtype=COMPUTE[spec.dtype]), spec.dtype)


def scalar_tensor(s, dtype=None, layout=None, device=None, pin_memory=None):
    spec = F.scalar_tensor.meta(s, dtype)
    return wrap(np.array(s, dtype=COMPUTE[spec.dtype]), spec.dtype)


def clone(self, memory_format=None):
    spec = F.clone.meta(self, memory_format)
    arr = data(self)
    order = "C" if spec.strides == R.contiguous_strides(spec.shape) else "K"
    return wrap(np.array(arr, order=order, copy=True), self.dtype)


def copy_(self, src, non_blocking=False):
    F.copy_.meta(self, src)
    if src.device.type != "cpu":
        raise RuntimeError(f"copy_: the CPU kernel cannot read from device '{src.device}'")
    np.copyto(data(self), data(src), casting="unsafe")
    return self


def fill_(self, value):
    F.fill_.meta(self, value)
    data(self)[...] = value
    return self


# --- random ------------------------------------------------------------------------------------

def _floats(gen_fn, spec):
    np_dtype = np.float64 if spec.dtype is D.float64 else np.float32
    return wrap(gen_fn(spec.shape, np_dtype), spec.dtype)


def rand(size, generator=None, dtype=None, layout=None, device=None, pin_memory=None):
    spec = F.rand.meta(size, generator, dtype)
    g = generator_for(generator)
    return _floats(lambda shape, dt: g.random(shape, dtype=dt), spec)


def randn(size, generator=None, dtype=None, layout=None, device=None, pin_memory=None):
    spec = F.randn.meta(size, generator, dtype)
    g = generator_for(generator)
    return _floats(lambda shape, dt: g.standard_normal(shape, dtype=dt), spec)


def randint(low, high, size, generator=None, dtype=None, layout=None, device=None,
            pin_memory=None):
    spec = F.randint.meta(low, high, size, generator, dtype)
    values = generator_for(generator).integers(low, high, spec.shape, dtype=np.int64)
    return wrap(values.astype(spec.dtype.np), spec.dtype)


def randperm(n, generator=None, dtype=None, layout=None, device=None, pin_memory=None):
    spec = F.randperm.meta(n, generator, dtype)
    return wrap(generator_for(generator).permutation(n).astype(spec.dtype.np), spec.dtype)


def normal_(self, mean=0.0, std=1.0, generator=None):
    F.normal_.meta(self, mean, std)
    g = generator_for(generator)
    values = g.standard_normal(tuple(self.shape), dtype=np.float64) * std + mean
    np.copyto(data(self), values, casting="unsafe")
    return self


def uniform_(self, lo=0.0, hi=1.0, generator=None):
    F.uniform_.meta(self, lo, hi)
    values = generator_for(generator).uniform(lo, hi, tuple(self.shape))
    np.copyto(data(self), values, casting="unsafe")
    return self


def bernoulli_p(self, p=0.5, generator=None):
    if not 0 <= p <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={p}")
    draws = generator_for(generator).random(tuple(self.shape)) < p
    return wrap(draws.astype(self.dtype.np), self.dtype)


def bernoulli_tensor(self, generator=None):
    p = data(self).astype(np.float64)
    if np.any((p < 0) | (p > 1)):
        raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.")
    draws = generator_for(generator).random(p.shape) < p
    return wrap(draws.astype(self.dtype.np), self.dtype)


def multinomial(self, num_samples, replacement=False, generator=None):
    spec = F.multinomial.meta(self, num_samples, replacement)
    probs = np.atleast_2d(data(self).astype(np.float64))
    if not np.all(np.isfinite(probs)) or np.any(probs < 0):
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    sums = probs.sum(axis=1)
    if np.any(sums <= 0):
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    if not replacement and np.any((probs > 0).sum(axis=1) < num_samples):
        raise RuntimeError("invalid multinomial distribution (with replacement=False, not enough "
                           "non-negative category to sample)")
    g = generator_for(generator)
    rows = [g.choice(probs.shape[1], num_samples, replace=replacement, p=row / row.sum())
            for row in probs]
    out = np.array(rows, dtype=np.int64).reshape(spec.shape)
    return wrap(out, D.int64)


KERNELS = {
    F.empty: empty, F.empty_strided: empty_strided, F.full: full, F.arange: arange,
    F.linspace: linspace, F.eye: eye, F.scalar_tensor: scalar_tensor, F.clone: clone,
    F.copy_: copy_, F.fill_: fill_, F.rand: rand, F.randn: randn, F.randint: randint,
    F.randperm: randperm, F.normal_: normal_, F.uniform_: uniform_, F.bernoulli: bernoulli_p,
    F.bernoulli_tensor: bernoulli_tensor, F.multinomial: multinomial,
}
