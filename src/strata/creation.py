"""Tensor creation as PyTorch spells it: ``tensor``, ``as_tensor``, ``from_numpy``, ``zeros``, ...

These are frontend functions: they parse PyTorch's Python signatures (``zeros(2, 3)`` and
``zeros((2, 3))``, ``arange(5)`` and ``arange(1, 5, 2)``) and call the factory ops, which the
dispatcher routes to the backend of the requested device.
"""

import ctypes
import numbers

import numpy as np

from .core import dtype as D
from .core.device import as_device, cpu
from .core.shape import normalize_size
from .ops import factory as F
from .core.storage import Storage
from ._tensor import CPU_KEYSET, _is_tensor, from_array, make_tensor


# --- from Python data ------------------------------------------------------------------------

def _infer(data, dim=0, shape=None):
    """Walk nested sequences: return (shape, dtype), raising PyTorch's ragged-data errors."""
    if _is_tensor(data):
        return tuple(data.shape), data.dtype
    if isinstance(data, np.ndarray):
        return data.shape, D.from_numpy_dtype(data.dtype)
    if isinstance(data, (bool, np.bool_)):
        return (), D.bool_
    if isinstance(data, np.generic):
        return (), D.from_numpy_dtype(data.dtype)
    if isinstance(data, numbers.Integral):
        return (), D.int64
    if isinstance(data, numbers.Real):
        return (), D.get_default_dtype()
    if isinstance(data, numbers.Complex):
        raise TypeError("complex tensors are not supported by strata")
    if isinstance(data, (list, tuple)):
        if not data:
            return (0,), None
        sub_shape, dtype = _infer(data[0], dim + 1)
        for item in data[1:]:
            s, d = _infer(item, dim + 1)
            if s != sub_shape:
                if len(s) and len(sub_shape) and len(s) == len(sub_shape):
                    raise ValueError(f"expected sequence of length {sub_shape[0]} at dim "
                                     f"{dim + 1} (got {s[0]})")
                raise ValueError(f"expected sequence of length {sub_shape[0] if sub_shape else 0}"
                                 f" at dim {dim + 1} (got {s[0] if s else 0})"
                                 if sub_shape or s else "ragged nested sequence")
            dtype = d if dtype is None else _join(dtype, d)
        return (len(data),) + sub_shape, dtype
    raise TypeError(f"Could not infer dtype of {type(data).__name__}")


def _join(a, b):
    if a is None or b is None:
        return a or b
    if a.category != b.category:
        return a if a.category > b.category else b
    return D.promote_types(a, b)


def _to_numpy(data, dtype):
    if _is_tensor(data):
        return data.detach().cpu().numpy().astype(dtype.np)
    if isinstance(data, (list, tuple)) and any(_is_tensor(x) or isinstance(x, (list, tuple))
                                               for x in data):
        return np.stack([_to_numpy(x, dtype) for x in data]) if data else \
            np.empty((0,), dtype.np)
    if dtype in (D.bfloat16,):
        return np.asarray(data, dtype=np.float64).astype(dtype.np)
    return np.array(data, dtype=dtype.np)


def tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """A new tensor that copies ``data`` (nested lists/tuples of numbers, an ndarray, a scalar).

        >>> strata.tensor([[1, 2], [3, 4.5]])
        tensor([[1.0000, 2.0000],
                [3.0000, 4.5000]])
    """
    if _is_tensor(data) and data.ndim > 0:
        import warnings
        warnings.warn("To copy construct from a tensor, it is recommended to use "
                      "sourceTensor.detach().clone() or sourceTensor.detach().clone()."
                      "requires_grad_(True), rather than torch.tensor(sourceTensor).",
                      UserWarning, stacklevel=2)
    _, inferred = _infer(data)
    dtype = dtype or inferred or D.get_default_dtype()
    if isinstance(data, (list, tuple)) and any(_is_tensor(x) and x.numel() != 1 for x in data):
        raise ValueError("only one element tensors can be converted to Python scalars")
    arr = np.array(_to_numpy(data, dtype), dtype=dtype.np, copy=True, order="C")
    out = from_array(arr, dtype)
    device = as_device(device)
    if device != cpu:
        out = out.to(device)
    if requires_grad:
        out.requires_grad_(True)
    return out


def as_tensor(data, dtype=None, device=None):
    """Like ``tensor`` but shares memory with a tensor or a CPU ndarray when it can."""
    if _is_tensor(data):
        return data.to(device=device, dtype=dtype)
    if isinstance(data, np.ndarray) and (dtype is None or dtype.np == data.dtype) and \
            as_device(device) == cpu:
        return from_numpy(data)
    return tensor(data, dtype=dtype, device=device)


def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=False):
    out = tensor(obj, dtype=dtype, device=device) if copy else as_tensor(obj, dtype, device)
    return out.requires_grad_() if requires_grad else out


def from_numpy(ndarray: np.ndarray):
    """A CPU tensor that shares memory with ``ndarray`` (writes show through both ways)."""
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    dtype = D.from_numpy_dtype(ndarray.dtype)
    if any(s < 0 for s in ndarray.strides):
        raise ValueError("At least one stride in the given numpy array is negative, and tensors "
                         "with negative strides are not currently supported. (You can probably "
                         "work around this by making a copy of your array  with array.copy().) ")
    if any(s % ndarray.itemsize for s in ndarray.strides):
        raise ValueError("given numpy array strides not a multiple of the element byte size. "
                         "Copy the numpy array to reallocate the memory.")
    # The storage is exactly the memory the array spans; it keeps the array alive.
    span = 0 if ndarray.size == 0 else ndarray.itemsize + sum(
        (n - 1) * s for n, s in zip(ndarray.shape, ndarray.strides))
    ptr = ndarray.__array_interface__["data"][0]
    data = np.frombuffer((ctypes.c_uint8 * span).from_address(ptr), np.uint8) if span else \
        np.empty(0, np.uint8)
    t = make_tensor(Storage(span, cpu, data=data, owner=ndarray), 0, ndarray.shape,
                    tuple(s // ndarray.itemsize for s in ndarray.strides), dtype, cpu, CPU_KEYSET)
    t._array = ndarray
    return t


def from_dlpack(ext_tensor):
    """Import a tensor from any DLPack producer (CPU)."""
    return from_numpy(np.from_dlpack(ext_tensor))


# --- factories ---------------------------------------------------------------------------------

def _finish(t, requires_grad):
    return t.requires_grad_() if requires_grad else t


def empty(*size, out=None, dtype=None, layout=None, device=None, requires_grad=False,
          pin_memory=False, memory_format=None):
    return _finish(F.empty(normalize_size(size), dtype=dtype, device=device), requires_grad)


def zeros(*size, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    return _finish(F.full(normalize_size(size), 0, dtype=dtype or D.get_default_dtype(),
                          device=device), requires_grad)


def ones(*size, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    return _finish(F.full(normalize_size(size), 1, dtype=dtype or D.get_default_dtype(),
                          device=device), requires_grad)


def full(size, fill_value, *, out=None, dtype=None, layout=None, device=None,
         requires_grad=False):
    if _is_tensor(fill_value):
        fill_value = fill_value.item()
    return _finish(F.full(normalize_size((size,)), fill_value, dtype=dtype, device=device),
                   requires_grad)


def arange(start, end=None, step=1, *, out=None, dtype=None, layout=None, device=None,
           requires_grad=False):
    if end is None:
        start, end = 0, start
    start, end, step = (x.item() if _is_tensor(x) else x for x in (start, end, step))
    return _finish(F.arange(start, end, step, dtype=dtype, device=device), requires_grad)


def range_(start=0, end=None, step=1, *, dtype=None, device=None, requires_grad=False):
    """Deprecated ``torch.range``: includes ``end``."""
    if end is None:
        start, end = 0, start
    n = int((end - start) // step) + 1
    return _finish(F.linspace(start, start + (n - 1) * step, n, dtype=dtype, device=device),
                   requires_grad)


def linspace(start, end, steps, *, out=None, dtype=None, layout=None, device=None,
             requires_grad=False):
    return _finish(F.linspace(start, end, steps, dtype=dtype, device=device), requires_grad)


def logspace(start, end, steps, base=10.0, *, dtype=None, device=None, requires_grad=False):
    exps = F.linspace(start, end, steps, dtype=D.float64, device=device)
    return _finish((base ** exps).to(dtype or D.get_default_dtype()), requires_grad)


def eye(n, m=None, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    return _finish(F.eye(n, m, dtype=dtype, device=device), requires_grad)


def scalar_tensor(s, *, dtype=None, device=None, requires_grad=False):
    return _finish(F.scalar_tensor(s, dtype=dtype or D.get_default_dtype(), device=device),
                   requires_grad)


def _like(factory):
    def like(input, *args, dtype=None, layout=None, device=None, requires_grad=False,
             memory_format=None, **kwargs):
        out = factory(tuple(input.shape), *args, dtype=dtype or input.dtype,
                      device=device or input.device, **kwargs)
        return _finish(out, requires_grad)
    like.__name__ = factory.__name__ + "_like"
    return like


empty_like = _like(lambda size, **kw: F.empty(size, **kw))
zeros_like = _like(lambda size, **kw: F.full(size, 0, **kw))
ones_like = _like(lambda size, **kw: F.full(size, 1, **kw))
full_like = _like(lambda size, fill_value, **kw: F.full(size, fill_value, **kw))
rand_like = _like(lambda size, **kw: F.rand(size, **kw))
randn_like = _like(lambda size, **kw: F.randn(size, **kw))


def randint_like(input, low=0, high=None, *, dtype=None, device=None, requires_grad=False):
    if high is None:
        low, high = 0, low
    return F.randint(low, high, tuple(input.shape), dtype=dtype or input.dtype,
                     device=device or input.device)


# --- random --------------------------------------------------------------------------------------

def rand(*size, generator=None, out=None, dtype=None, layout=None, device=None,
         requires_grad=False, pin_memory=False):
    return _finish(F.rand(normalize_size(size), generator=generator, dtype=dtype, device=device),
                   requires_grad)


def randn(*size, generator=None, out=None, dtype=None, layout=None, device=None,
          requires_grad=False, pin_memory=False):
    return _finish(F.randn(normalize_size(size), generator=generator, dtype=dtype, device=device),
                   requires_grad)


def randint(low=0, high=None, size=None, *, generator=None, out=None, dtype=None, layout=None,
            device=None, requires_grad=False):
    """``randint(high, size)`` or ``randint(low, high, size)``."""
    if size is None:
        if high is None:
            raise TypeError("randint() missing required argument 'size'")
        low, high, size = 0, low, high
    elif high is None:
        raise TypeError("randint() missing required argument 'high'")
    return F.randint(low, high, normalize_size((size,)), generator=generator, dtype=dtype,
                     device=device)


def randperm(n, *, generator=None, out=None, dtype=None, layout=None, device=None,
             requires_grad=False, pin_memory=False):
    return F.randperm(n, generator=generator, dtype=dtype or D.int64, device=device)


def normal(mean=0.0, std=1.0, size=None, *, generator=None, out=None, dtype=None, device=None,
           requires_grad=False):
    """``normal(mean, std, size)`` with floats, or ``normal(mean_tensor, std_tensor)``."""
    if _is_tensor(mean) or _is_tensor(std):
        ref = mean if _is_tensor(mean) else std
        noise = F.randn(tuple(ref.shape) if size is None else normalize_size((size,)),
                        generator=generator, dtype=ref.dtype, device=ref.device)
        return noise * std + mean
    if size is None:
        raise TypeError("normal() missing required argument 'size'")
    out = F.empty(normalize_size((size,)), dtype=dtype, device=device)
    return _finish(F.normal_(out, float(mean), float(std), generator=generator), requires_grad)


def bernoulli(input, p=None, *, generator=None, out=None):
    if p is None:
        return F.bernoulli_tensor(input, generator=generator)
    return F.bernoulli(input, p, generator=generator)


__all__ = [name for name in dir() if not name.startswith("_") and name not in
           ("np", "numbers", "ctypes", "D", "F", "Storage", "CPU_KEYSET", "as_device", "cpu",
            "normalize_size", "from_array", "make_tensor")]
