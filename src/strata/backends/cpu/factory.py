"""CPU kernels for ``ops/factory.py``: allocation, fills, copies and random numbers (NumPy; the
doubles of ``Generator.random`` in generated C where draws.py has a kernel).

Each kernel validates through the op's meta, which also says the result's dtype and strides;
the kernel only produces the values. Conversions follow PyTorch's casts: a number or a double
becomes a half type by way of float32 (``c10::Half(float)``), integers wrap around.
"""

import math

import numpy as np

from ...core import dtype as D
from ...core.device import cpu
from ...core.storage import Storage
from ...ops import factory as F
from ...ops import meta_rules as R
from ...random import generator_for
from ..._tensor import CPU_KEYSET, from_array, make_tensor
from . import draws
from . import native
from .array import COMPUTE, data, real_part, wrap

_HALF = (D.float16, D.bfloat16)


def strided(shape, strides, dtype):
    """A new CPU tensor with exactly these strides (any layout: permuted, with gaps, or with
    stride-0 dims), over a storage just large enough for it."""
    extent = 0 if 0 in shape else 1 + sum((n - 1) * s for n, s in zip(shape, strides))
    buffer = np.empty(extent * dtype.itemsize, np.uint8)
    return make_tensor(Storage(buffer.nbytes, cpu, data=buffer), 0, shape, strides, dtype, cpu,
                       CPU_KEYSET)


def _allocate(spec):
    if spec.strides == R.contiguous_strides(spec.shape):
        return from_array(np.empty(spec.shape, spec.dtype.np), spec.dtype)
    return strided(spec.shape, spec.strides, spec.dtype)


def _number(value, dtype):
    """A Python number converted to ``dtype`` as PyTorch stores it (checked by the meta)."""
    if dtype.is_complex:
        return dtype.np.type(value)
    if isinstance(value, complex):   # a real-valued complex (the meta refused an imaginary part)
        value = value.real
    if dtype.category == D.FLOATING:
        return np.float32(value).astype(dtype.np) if dtype in _HALF else dtype.np.type(value)
    if dtype is D.bool_:
        return np.bool_(value)
    if isinstance(value, float):
        return np.array(value).astype(np.int64).astype(dtype.np)  # truncation toward zero
    return np.array(int(value)).astype(dtype.np)  # two's complement wrap (-1 -> 255)


def cast_into(dst, src):
    """``dst[...] = src`` with PyTorch's conversions (``copy_``'s inner loop)."""
    if not np.iscomplexobj(dst):
        src = real_part(src)
    if dst.dtype in (np.float16, D.bfloat16.np) and src.dtype not in (np.float32, dst.dtype):
        src = src.astype(np.float32)
    if native.cast_into(dst, src):      # float32 <-> half: a generated kernel, NumPy's bits
        return
    np.copyto(dst, src, casting="unsafe")


# --- factories ------------------------------------------------------------------------------------

def empty(size, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    return _allocate(F.empty.meta(size, dtype, memory_format=memory_format))


def empty_strided(size, stride, dtype=None, layout=None, device=None, pin_memory=None):
    spec = F.empty_strided.meta(size, stride, dtype)
    return strided(spec.shape, spec.strides, spec.dtype)


def full(size, fill_value, dtype=None, layout=None, device=None, pin_memory=None):
    spec = F.full.meta(size, fill_value, dtype)
    if type(fill_value) is int and fill_value == 0:   # zero bits in every dtype: NumPy's calloc
        return from_array(np.zeros(spec.shape, spec.dtype.np), spec.dtype)
    return from_array(np.full(spec.shape, _number(fill_value, spec.dtype)), spec.dtype)


def arange(start, end, step=1, dtype=None, layout=None, device=None, pin_memory=None):
    spec = F.arange.meta(start, end, step, dtype)
    n, first, delta = F.arange_params(start, end, step, spec.dtype)
    if spec.dtype.category == D.FLOATING:
        # the accumulate type: double, or float for the half types
        acc = np.float32 if spec.dtype in _HALF else np.float64
        values = acc(first) + np.arange(n, dtype=acc) * acc(delta)
    else:
        values = first + np.arange(n, dtype=np.int64) * delta
    return wrap(values, spec.dtype)


def linspace(start, end, steps, dtype=None, layout=None, device=None, pin_memory=None):
    spec = F.linspace.meta(start, end, steps, dtype)
    dt = spec.dtype
    if dt.category >= D.FLOATING:  # computed in the dtype (float32 for the half types)
        work = np.float64 if dt is D.float64 else np.float32
        if dt.is_complex:
            work = dt.np.type
        start, end = work(start), work(end)
    else:  # start and end become integers first; the step stays a double
        work = np.float64
        start, end = work(int(start)), work(int(end))
    if steps == 1:
        values = np.array([start], work)
    else:
        # PyTorch's symmetric formula: the first half counts up from start, the rest down from end
        step = (end - start) / work(steps - 1)
        i = np.arange(steps).astype(work)
        first_half = np.arange(steps) < steps // 2
        values = np.where(first_half, start + step * i, end - step * (work(steps - 1) - i))
    if dt.category < D.FLOATING:
        values = np.trunc(values)
    return wrap(values, dt)


def eye(n, m=None, dtype=None, layout=None, device=None, pin_memory=None):
    spec = F.eye.meta(n, m, dtype)
    return wrap(np.eye(*spec.shape, dtype=COMPUTE[spec.dtype]), spec.dtype)


def tril_indices(row, col, offset=0, dtype=None, layout=None, device=None, pin_memory=None):
    spec = F.tril_indices.meta(row, col, offset, dtype)
    return wrap(np.stack(np.tril_indices(row, offset, col)), spec.dtype)


def triu_indices(row, col, offset=0, dtype=None, layout=None, device=None, pin_memory=None):
    spec = F.triu_indices.meta(row, col, offset, dtype)
    return wrap(np.stack(np.triu_indices(row, offset, col)), spec.dtype)


def scalar_tensor(s, dtype=None, layout=None, device=None, pin_memory=None):
    spec = F.scalar_tensor.meta(s, dtype)
    return from_array(np.array(_number(s, spec.dtype)), spec.dtype)


# --- copies ---------------------------------------------------------------------------------------

def clone(self, memory_format=None):
    spec = F.clone.meta(self, memory_format)
    if spec.strides == R.contiguous_strides(spec.shape):
        return wrap(np.array(data(self), order="C", copy=True), self.dtype)
    out = strided(spec.shape, spec.strides, spec.dtype)
    np.copyto(data(out), data(self))
    return out


def copy_(self, src, non_blocking=False):
    F.copy_.meta(self, src)
    if src.device.type != "cpu":
        raise RuntimeError(f"copy_: the CPU kernel cannot read from device '{src.device}'")
    cast_into(data(self), data(src))
    return self


def fill_(self, value):
    F.fill_.meta(self, value)
    if R.is_tensor(value):
        cast_into(data(self), data(value))
    else:
        data(self)[...] = _number(value, self.dtype)
    return self


def resize_(self, size, memory_format=None):
    shape, strides, nbytes = F.resize_layout(self, size, memory_format)
    if nbytes > self._storage.nbytes:
        old = self._storage.data
        grown = np.empty(nbytes, np.uint8)  # new elements are uninitialised, as in PyTorch
        grown[:old.size] = old
        self._storage = Storage(nbytes, cpu, data=grown)
    self._shape, self._strides, self._array = shape, strides, None
    return self


# --- random ------------------------------------------------------------------------------------

def _floats(gen_fn, spec, complex_scale=1.0):
    """Random floats of ``spec``; a complex dtype draws both parts (times ``complex_scale``)."""
    part = spec.dtype.to_real()
    np_dtype = np.float64 if part is D.float64 else np.float32
    if not spec.dtype.is_complex:
        return wrap(gen_fn(spec.shape, np_dtype), spec.dtype)
    pairs = gen_fn(tuple(spec.shape) + (2,), np_dtype) * np_dtype(complex_scale)
    return wrap(pairs.view(spec.dtype.np)[..., 0], spec.dtype)


# Generator.random's doubles (bernoulli, uniform_, float64 rand) are drawn by generated C kernels
# where there are some, bit for bit as NumPy would (backends/cpu/draws.py); the lambdas are the
# NumPy formulas, for the draws no kernel made.
_UNIT_RANGE = np.array([0.0, 1.0])    # uniform_'s (lo, hi - lo) for rand


def rand(size, generator=None, dtype=None, layout=None, device=None, pin_memory=None):
    spec = F.rand.meta(size, generator, dtype)
    g = generator_for(generator)
    if spec.dtype.to_real() is D.float64:   # Generator.random's doubles: uniform(0, 1)'s kernel
        pairs = spec.dtype.is_complex          # draws them (a complex number's two parts)
        out = np.empty(tuple(spec.shape) + ((2,) if pairs else ()), np.float64)
        draws.fill(out, g, draws.kernel("uniform", out.dtype), _UNIT_RANGE,
                   lambda into, start: g.random(out=into))
        return wrap(out.view(spec.dtype.np)[..., 0] if pairs else out, spec.dtype)
    return _floats(lambda shape, dt: g.random(shape, dtype=dt), spec)


def randn(size, generator=None, dtype=None, layout=None, device=None, pin_memory=None):
    spec = F.randn.meta(size, generator, dtype)
    g = generator_for(generator)
    # a complex normal has E|z|^2 = 1: each part has variance 1/2, as PyTorch's
    return _floats(lambda shape, dt: g.standard_normal(shape, dtype=dt), spec, 0.5 ** 0.5)


def randint(low, high, size, generator=None, dtype=None, layout=None, device=None,
            pin_memory=None):
    spec = F.randint.meta(low, high, size, generator, dtype)
    values = generator_for(generator).integers(low, high, spec.shape, dtype=np.int64)
    return wrap(values, spec.dtype)


def randperm(n, generator=None, dtype=None, layout=None, device=None, pin_memory=None):
    spec = F.randperm.meta(n, generator, dtype)
    return wrap(generator_for(generator).permutation(n), spec.dtype)


def normal_(self, mean=0.0, std=1.0, generator=None):
    F.normal_.meta(self, mean, std)
    g = generator_for(generator)
    if self.dtype.is_complex:   # PyTorch: each part normal(mean, std / sqrt(2))
        pairs = g.standard_normal(tuple(self.shape) + (2,)) * (std * 0.5 ** 0.5) + mean
        values = pairs[..., 0] + 1j * pairs[..., 1]
    else:
        values = g.standard_normal(tuple(self.shape), dtype=np.float64) * std + mean
    cast_into(data(self), values)
    return self


def uniform_(self, lo=0.0, hi=1.0, generator=None):
    F.uniform_.meta(self, lo, hi)
    g = generator_for(generator)
    target = data(self)
    # NumPy's Generator.uniform: lo + (hi - lo) * u in double (it refuses an infinite range)
    try:
        span = np.array([lo, float(hi) - float(lo)], np.float64)
    except (TypeError, ValueError, OverflowError):
        span = None
    kernel = draws.kernel("uniform", target.dtype) \
        if span is not None and np.isfinite(span).all() else None
    draws.fill(target, g, kernel, span,
               lambda into, start: cast_into(into, g.uniform(lo, hi, into.size)))
    return self


def fill_bernoulli(target, p, generator):
    """``target`` (a NumPy array) gets 1 where a ``Generator.random`` double is below ``p``."""
    g = generator_for(generator)
    draws.fill(target, g, draws.kernel("bernoulli", target.dtype), np.array([p], np.float64),
               lambda into, start: np.copyto(into, g.random(into.size) < p, casting="unsafe"))


def check_bernoulli_probs(probs):
    """PyTorch's check of bernoulli's probabilities (a NumPy array)."""
    if not np.all((probs >= 0) & (probs <= 1)):  # nan fails too
        raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.  (Could "
                           "this error message be improved?  If so, please report an "
                           "enhancement request to PyTorch.)")


def fill_bernoulli_probs(target, probs, generator):
    """``target`` gets 1 where a draw is below its element of ``probs`` (an array of its
    shape); the C kernel reads probabilities of target's own dtype, in C order."""
    g = generator_for(generator)
    same = probs.dtype == target.dtype and probs.flags.c_contiguous
    kernel = draws.kernel("bernoulli_probs", target.dtype) if same else None
    flat_probs = probs.reshape(-1)

    def numpy_rest(into, start):
        p = flat_probs[start:start + into.size].astype(np.float64)
        np.copyto(into, g.random(into.size) < p, casting="unsafe")
    draws.fill(target, g, kernel, probs, numpy_rest)


def bernoulli_p(self, p=0.5, generator=None):
    out = _allocate(F.bernoulli.meta(self, p))
    fill_bernoulli(data(out), p, generator)
    return out


def bernoulli_tensor(self, generator=None):
    spec = F.bernoulli_tensor.meta(self)
    probs = data(self)
    check_bernoulli_probs(probs)
    out = _allocate(spec)
    fill_bernoulli_probs(data(out), probs, generator)
    return out


def multinomial(self, num_samples, replacement=False, generator=None):
    spec = F.multinomial.meta(self, num_samples, replacement)
    probs = np.atleast_2d(data(self).astype(np.float64))
    _check_probabilities(probs)
    g = generator_for(generator)
    if replacement and num_samples > 1:
        # Generator.choice(p=row / row.sum()) of each row, without its per-call checks: the
        # row's normalised cumulative sums searched for uniform draws taken row after row
        # (the same draws and the same indices; 16 rows of 256: 315 -> ~130 us)
        cdf = np.cumsum(probs / probs.sum(axis=1, keepdims=True), axis=1)
        cdf /= cdf[:, -1:]
        draws = g.random((probs.shape[0], num_samples))
        out = np.empty(draws.shape, np.int64)
        for row, (c, u) in enumerate(zip(cdf, draws)):
            out[row] = c.searchsorted(u, side="right")
    else:
        # PyTorch's sampling without replacement: the top-k of p / q with q ~ Exp(1) (the Gumbel
        # trick); zero-probability categories come last, in index order.
        keys = probs / g.exponential(size=probs.shape)
        if num_samples == 1:   # the top one: the first largest key, as the stable sort's
            out = np.argmax(keys, axis=1)
        else:
            out = np.argsort(-keys, axis=1, kind="stable")[:, :num_samples]
    return wrap(out.reshape(spec.shape), D.int64)


_FEW_PROBABILITIES = 64   # elements up to which Python checks them faster than NumPy's calls


def _check_probabilities(probs):
    """PyTorch's checks of a multinomial's (rows, categories) float64 probabilities."""
    if probs.size <= _FEW_PROBABILITIES:
        rows = probs.tolist()
        for row in rows:
            for p in row:
                if not 0 <= p < math.inf:   # nan fails too
                    raise RuntimeError("probability tensor contains either `inf`, `nan` or "
                                       "element < 0")
        # finite and non-negative: a row sums to more than 0 unless all of it is 0
        if not all(row and max(row) > 0 for row in rows):
            raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
        return
    if not np.all(np.isfinite(probs)) or np.any(probs < 0):
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    if np.any(probs.sum(axis=1) <= 0):
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")


KERNELS = {
    F.empty: empty, F.empty_strided: empty_strided, F.full: full, F.arange: arange,
    F.linspace: linspace, F.eye: eye, F.tril_indices: tril_indices,
    F.triu_indices: triu_indices, F.scalar_tensor: scalar_tensor, F.clone: clone,
    F.copy_: copy_, F.fill_: fill_, F.resize_: resize_, F.rand: rand, F.randn: randn,
    F.randint: randint, F.randperm: randperm, F.normal_: normal_, F.uniform_: uniform_,
    F.bernoulli: bernoulli_p, F.bernoulli_tensor: bernoulli_tensor, F.multinomial: multinomial,
}
