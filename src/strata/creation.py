"""Tensor creation as PyTorch spells it: ``zeros``, ``arange``, ``full_like``, ``rand``, ...

These are frontend functions: they parse PyTorch's Python signatures (``zeros(2, 3)``,
``zeros((2, 3))``, ``zeros(size=[2, 3])``, ``arange(5)`` and ``arange(1, 5, 2)``, ``out=``,
``requires_grad=``) with PyTorch's argument errors, then call the factory ops, which the dispatcher
routes to the backend of the requested device. Tensors from existing data (``tensor``,
``from_numpy``, ...) are built in ``tensor_new.py`` and re-exported here; the argument parsing
the factories share is in ``creation_args.py``.
"""

import math
import warnings

import numpy as np

from .core import dtype as D
from .core.shape import broadcast_shapes, contiguous_strides
from .creation_args import (
    _device, _dtype, _format_strides, _int_arg, _int_like, _like_strides, _number, _result,
    _size_args, _size_list,
)
from .functions import write_out
from .ops import factory as F
from .ops import pointwise as P
from .tensor_new import (  # noqa: F401  (re-exported)
    _TENSOR_COPY_WARNING, as_tensor, asarray, finish, from_dlpack, from_numpy, frombuffer,
    tensor,
    type_label,
)
from ._tensor import _is_tensor


# --- factories -----------------------------------------------------------------------------------

def empty(*size, out=None, dtype=None, layout=None, device=None, requires_grad=False,
          pin_memory=False, memory_format=None, **kwargs):
    """An uninitialised tensor: ``strata.empty(2, 3)``."""
    shape = _size_args("empty", size, kwargs.pop("size", None))
    _no_more("empty", kwargs)
    dtype = _dtype("empty", dtype, out)
    device = _device(device, out)
    if memory_format in (None, "contiguous_format", "preserve_format"):
        t = F.empty(shape, dtype=dtype, device=device)
    else:
        t = F.empty_strided(shape, _format_strides("empty", shape, memory_format), dtype=dtype,
                            device=device)
    return _result(t, out, requires_grad)


def _filled(fname, size, kwargs, value, out, dtype, device, requires_grad):
    shape = _size_args(fname, size, kwargs.pop("size", None))
    _no_more(fname, kwargs)
    if fname == "zeros" and any(s < 0 for s in shape):  # zeros has its own wording
        raise RuntimeError("zeros: Dimension size must be non-negative.")
    dtype = _dtype(fname, dtype, out) or D.get_default_dtype()
    return _result(F.full(shape, value, dtype=dtype, device=_device(device, out)), out,
                   requires_grad)


def zeros(*size, out=None, dtype=None, layout=None, device=None, requires_grad=False,
          pin_memory=False, **kwargs):
    """A tensor of zeros: ``strata.zeros(2, 3)``, ``strata.zeros((2, 3), dtype=strata.int64)``."""
    return _filled("zeros", size, kwargs, 0, out, dtype, device, requires_grad)


def ones(*size, out=None, dtype=None, layout=None, device=None, requires_grad=False,
         pin_memory=False, **kwargs):
    """A tensor of ones: ``strata.ones(2, 3)``."""
    return _filled("ones", size, kwargs, 1, out, dtype, device, requires_grad)


def full(size, fill_value, *, out=None, dtype=None, layout=None, device=None,
         requires_grad=False, pin_memory=False):
    """A tensor filled with one value; the dtype follows the value (bool, int64 or float).

        >>> strata.full((2,), 7)
        tensor([7, 7])
    """
    shape = _size_list("full", size)
    value = _number("full", "fill_value", 2, fill_value)
    dtype = _dtype("full", dtype, out)
    return _result(F.full(shape, value, dtype=dtype, device=_device(device, out)), out,
                   requires_grad)


def empty_strided(size, stride, *, dtype=None, layout=None, device=None, requires_grad=False,
                  pin_memory=False):
    """An uninitialised tensor with the given strides: ``strata.empty_strided((2, 3), (1, 2))``."""
    shape = _size_list("empty_strided", size)
    strides = _size_list("empty_strided", stride, "stride", 2)
    dtype = None if dtype is None else D.to_dtype(dtype, "empty_strided")
    return finish(F.empty_strided(shape, strides, dtype=dtype, device=device), requires_grad)


def scalar_tensor(s, *, dtype=None, layout=None, device=None, requires_grad=False,
                  pin_memory=False):
    """A 0-dim tensor of the default float dtype (unless ``dtype`` says otherwise)."""
    value = _number("scalar_tensor", "s", 1, s)
    dtype = D.get_default_dtype() if dtype is None else D.to_dtype(dtype, "scalar_tensor")
    return finish(F.scalar_tensor(value, dtype=dtype, device=device), requires_grad)


def _no_more(fname, kwargs):
    if kwargs:
        raise TypeError(f"{fname}() got an unexpected keyword argument '{next(iter(kwargs))}'")


# --- ranges --------------------------------------------------------------------------------------

def arange(start=None, end=None, step=1, *, out=None, dtype=None, layout=None, device=None,
           requires_grad=False, pin_memory=False):
    """``arange(end)``, ``arange(start, end, step=1)``: int64 for integer arguments, else the
    default float dtype.

        >>> strata.arange(1, 2, 0.25)
        tensor([1.0000, 1.2500, 1.5000, 1.7500])
    """
    if end is None:
        if start is None:
            raise TypeError("arange() missing 1 required positional arguments: \"end\"")
        start, end = 0, start
    elif start is None:
        start = 0
    start = _number("arange", "start", 1, start)
    end = _number("arange", "end", 2, end)
    step = _number("arange", "step", 3, step)
    dtype = _dtype("arange", dtype, out)
    return _result(F.arange(start, end, step, dtype=dtype, device=_device(device, out)), out,
                   requires_grad)


def range_(start=0, end=None, step=1, *, out=None, dtype=None, layout=None, device=None,
           requires_grad=False, pin_memory=False):
    """Deprecated ``torch.range``: like ``arange`` but includes ``end`` and is always float
    (unless ``dtype`` is given)."""
    warnings.warn("torch.range is deprecated and will be removed in a future release because its "
                  "behavior is inconsistent with Python's range builtin. Instead, use "
                  "torch.arange, which produces values in [start, end).", UserWarning,
                  stacklevel=2)
    if end is None:
        start, end = 0, start
    start = _number("range", "start", 1, start)
    end = _number("range", "end", 2, end)
    step = _number("range", "step", 3, step)
    dtype = _dtype("range", dtype, out) or D.get_default_dtype()
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if not (math.isfinite(start) and math.isfinite(end)):
        raise RuntimeError(f"unsupported range: {start} -> {end}")
    if (step > 0 and end < start) or (step < 0 and end > start):
        raise RuntimeError("upper bound and larger bound inconsistent with step sign")
    device = _device(device, out)
    if dtype.category == D.FLOATING:
        n = int(math.floor((end - start) / step)) + 1
        index = F.arange(0, n, 1, dtype=D.float64, device=device)
        values = P.add(P.mul(index, float(step)), float(start))
    else:  # integers step in int64, as PyTorch's accumulate type
        start, end, step = int(start), int(end), int(step)
        n = (end - start) // step + 1
        values = P.add(P.mul(F.arange(0, n, 1, dtype=D.int64, device=device), step), start)
    return _result(values.to(dtype), out, requires_grad)


def linspace(start, end, steps, *, out=None, dtype=None, layout=None, device=None,
             requires_grad=False, pin_memory=False):
    """``steps`` evenly spaced values from ``start`` to ``end`` inclusive."""
    start = _number("linspace", "start", 1, start)
    end = _number("linspace", "end", 2, end)
    steps = _int_arg("linspace", "steps", 3, steps)
    dtype = _dtype("linspace", dtype, out)
    return _result(F.linspace(start, end, steps, dtype=dtype, device=_device(device, out)), out,
                   requires_grad)


def logspace(start, end, steps, base=10.0, *, out=None, dtype=None, layout=None, device=None,
             requires_grad=False, pin_memory=False):
    """``base ** linspace(start, end, steps)``, computed as PyTorch's CPU kernel does: the
    endpoints first cast to ``dtype``, the powers in double, one rounding into ``dtype``."""
    start = _number("logspace", "start", 1, start)
    end = _number("logspace", "end", 2, end)
    steps = _int_arg("logspace", "steps", 3, steps)
    base = float(_number("logspace", "base", 4, base))
    dtype = _dtype("logspace", dtype, out) or D.get_default_dtype()
    device = _device(device, out)
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    if steps == 1:
        exponents = F.full((1,), float(start), dtype=D.float64, device=device)
    else:
        lo, hi = _as_dtype_value(start, dtype), _as_dtype_value(end, dtype)
        step = _dtype_difference(hi, lo, dtype) / (steps - 1)
        # the first half counts up from start, the second down from end
        index = F.arange(0, steps, 1, dtype=D.float64, device=device)
        exponents = P.where(P.lt(index, steps // 2), index * step + lo,
                            hi - (steps - 1 - index) * step)
    values = P.pow(base, exponents)
    if dtype in (D.float16, D.bfloat16):
        values = values.to(D.float32)  # double -> float -> half, as C++'s Half(float)
    return _result(values.to(dtype), out, requires_grad)


def _as_dtype_value(value, dtype):
    """A Python number as it reads after a C++ cast to ``dtype`` (truncation, float rounding)."""
    if dtype.category != D.FLOATING:
        return int(value)
    return float(dtype.np.type(value)) if dtype is not D.float64 else float(value)


def _dtype_difference(hi, lo, dtype) -> float:
    """``hi - lo`` computed in ``dtype`` (rounded to it), as C++ does for two ``scalar_t``."""
    if dtype.category != D.FLOATING or dtype is D.float64:
        return float(hi - lo)
    return float(dtype.np.type(hi) - dtype.np.type(lo))


def eye(n, m=None, *, out=None, dtype=None, layout=None, device=None, requires_grad=False,
        pin_memory=False):
    """The identity matrix (``n x n``, or ``n x m``)."""
    n = _int_arg("eye", "n", 1, n)
    m = None if m is None else _int_arg("eye", "m", 2, m)
    dtype = _dtype("eye", dtype, out)
    return _result(F.eye(n, m, dtype=dtype, device=_device(device, out)), out, requires_grad)


# --- *_like and Tensor.new_* ---------------------------------------------------------------------

def _check_input(fname, input):
    if not _is_tensor(input):
        raise TypeError(f"{fname}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type_label(input)}")


def _empty_like(fname, input, dtype, device, memory_format, fill=None):
    """A tensor laid out like ``input``; filled with ``fill`` when given (one op for the usual
    row-major case, else allocate with the strides then fill)."""
    _check_input(fname, input)
    dtype = input.dtype if dtype is None else D.to_dtype(dtype, fname)
    device = input.device if device is None else device
    shape = tuple(input.shape)
    contiguous = contiguous_strides(shape)
    strides = _like_strides(fname, input, memory_format, contiguous)
    if strides == contiguous:
        if fill is None:
            return F.empty(shape, dtype=dtype, device=device)
        return F.full(shape, fill, dtype=dtype, device=device)
    out = F.empty_strided(shape, strides, dtype=dtype, device=device)
    return out if fill is None else F.fill_(out, fill)


def empty_like(input, *, dtype=None, layout=None, device=None, requires_grad=False,
               memory_format=None, pin_memory=False):
    """An uninitialised tensor shaped (and, by default, laid out) like ``input``."""
    return finish(_empty_like("empty_like", input, dtype, device, memory_format), requires_grad)


def full_like(input, fill_value, *, dtype=None, layout=None, device=None, requires_grad=False,
              memory_format=None, pin_memory=False):
    """A tensor like ``input`` (its dtype, unless given) filled with ``fill_value``."""
    value = _number("full_like", "fill_value", 2, fill_value)
    return finish(_empty_like("full_like", input, dtype, device, memory_format, value),
                  requires_grad)


def zeros_like(input, *, dtype=None, layout=None, device=None, requires_grad=False,
               memory_format=None, pin_memory=False):
    return finish(_empty_like("zeros_like", input, dtype, device, memory_format, 0),
                  requires_grad)


def ones_like(input, *, dtype=None, layout=None, device=None, requires_grad=False,
              memory_format=None, pin_memory=False):
    return finish(_empty_like("ones_like", input, dtype, device, memory_format, 1),
                  requires_grad)


def rand_like(input, *, generator=None, dtype=None, layout=None, device=None,
              requires_grad=False, memory_format=None, pin_memory=False):
    out = _empty_like("rand_like", input, dtype, device, memory_format)
    return finish(F.uniform_(out, 0.0, 1.0, generator=generator), requires_grad)


def randn_like(input, *, generator=None, dtype=None, layout=None, device=None,
               requires_grad=False, memory_format=None, pin_memory=False):
    out = _empty_like("randn_like", input, dtype, device, memory_format)
    return finish(F.normal_(out, 0.0, 1.0, generator=generator), requires_grad)


def randint_like(input, low=0, high=None, *, generator=None, dtype=None, layout=None,
                 device=None, requires_grad=False, memory_format=None, pin_memory=False):
    """``randint_like(input, high)`` or ``randint_like(input, low, high)``."""
    if high is None:
        low, high = 0, low
    low = _int_arg("randint_like", "low", 2, low)
    high = _int_arg("randint_like", "high", 3, high)
    out = _empty_like("randint_like", input, dtype, device, memory_format)
    values = F.randint(low, high, tuple(input.shape), generator=generator, dtype=out.dtype,
                       device=out.device)
    return finish(F.copy_(out, values), requires_grad)


def new_factory(self, fname, size, kwargs, fill, dtype, device, requires_grad):
    """``Tensor.new_empty/new_zeros/new_ones(*size)``: self's dtype and device by default."""
    shape = _size_args(fname, size, kwargs.pop("size", None))
    _no_more(fname, kwargs)
    dtype = self.dtype if dtype is None else D.to_dtype(dtype, fname)
    device = self.device if device is None else device
    if fill is None:
        t = F.empty(shape, dtype=dtype, device=device)
    else:
        t = F.full(shape, fill, dtype=dtype, device=device)
    return finish(t, requires_grad)


def new_full(self, size, fill_value, dtype, device, requires_grad):
    value = _number("new_full", "fill_value", 2, fill_value)
    shape = _size_list("new_full", size)
    dtype = self.dtype if dtype is None else D.to_dtype(dtype, "new_full")
    t = F.full(shape, value, dtype=dtype, device=self.device if device is None else device)
    return finish(t, requires_grad)


def new_empty_strided(self, size, stride, dtype, device, requires_grad):
    return empty_strided(size, stride, dtype=self.dtype if dtype is None else dtype,
                         device=self.device if device is None else device,
                         requires_grad=requires_grad)


def new_tensor(self, data, dtype, device, requires_grad):
    """``Tensor.new_tensor(data)``: like ``tensor(data)`` but self's dtype and device unless
    given (the data's own dtype is not inferred)."""
    dtype = self.dtype if dtype is None else D.to_dtype(dtype, "new_tensor")
    device = self.device if device is None else device
    if _is_tensor(data):
        warnings.warn(_TENSOR_COPY_WARNING, UserWarning, stacklevel=3)
        out = data.detach().to(device=device, dtype=dtype, copy=True)
    else:
        out = tensor(data, dtype=dtype, device=device)
    return finish(out, requires_grad)


# --- random --------------------------------------------------------------------------------------

def rand(*size, generator=None, out=None, dtype=None, layout=None, device=None,
         requires_grad=False, pin_memory=False, **kwargs):
    """Uniform samples from [0, 1): ``strata.rand(2, 3, generator=g)``."""
    shape = _size_args("rand", size, kwargs.pop("size", None))
    _no_more("rand", kwargs)
    t = F.rand(shape, generator=generator, dtype=_dtype("rand", dtype, out),
               device=_device(device, out))
    return _result(t, out, requires_grad)


def randn(*size, generator=None, out=None, dtype=None, layout=None, device=None,
          requires_grad=False, pin_memory=False, **kwargs):
    """Standard normal samples: ``strata.randn(2, 3)``."""
    shape = _size_args("randn", size, kwargs.pop("size", None))
    _no_more("randn", kwargs)
    t = F.randn(shape, generator=generator, dtype=_dtype("randn", dtype, out),
                device=_device(device, out))
    return _result(t, out, requires_grad)


def randint(*args, generator=None, out=None, dtype=None, layout=None, device=None,
            requires_grad=False, pin_memory=False, **kwargs):
    """Integers uniform in [low, high): ``randint(high, size)`` or ``randint(low, high, size)``."""
    args = list(args)
    size = kwargs.pop("size", None)
    if size is None and args and not _int_like(args[-1]):
        size = args.pop()
    low, high = kwargs.pop("low", None), kwargs.pop("high", None)
    _no_more("randint", kwargs)
    if len(args) > 2 or (len(args) == 2 and (low is not None or high is not None)):
        raise TypeError(f"randint() received an invalid combination of arguments: "
                        f"{len(args)} positional bounds")
    if high is None and args:
        high = args.pop()
    if low is None:
        low = args.pop() if args else 0
    if high is None or size is None:
        missing = "size" if high is not None else "high"
        if size is None and high is not None and not isinstance(high, (tuple, list)):
            raise TypeError(f"randint(): argument 'size' (position 2) must be tuple of ints, "
                            f"not {type_label(high)}")
        raise TypeError(f"randint() missing required argument '{missing}'")
    low = _int_arg("randint", "low", 1, low)
    high = _int_arg("randint", "high", 2, high)
    shape = _size_list("randint", size, pos=3)
    t = F.randint(low, high, shape, generator=generator, dtype=_dtype("randint", dtype, out),
                  device=_device(device, out))
    return _result(t, out, requires_grad)


def randperm(n, *, generator=None, out=None, dtype=None, layout=None, device=None,
             requires_grad=False, pin_memory=False):
    """A random permutation of ``0..n-1`` (int64 unless ``dtype`` says otherwise)."""
    n = _int_arg("randperm", "n", 1, n)
    dtype = _dtype("randperm", dtype, out) or D.int64
    t = F.randperm(n, generator=generator, dtype=dtype, device=_device(device, out))
    return _result(t, out, requires_grad)


def normal(mean=0.0, std=1.0, size=None, *, generator=None, out=None, dtype=None, layout=None,
           device=None, requires_grad=False, pin_memory=False):
    """Normal samples: ``normal(mean, std, size)`` with numbers, or elementwise means and stds
    given as tensors (``normal(mean_tensor, std_tensor)``, ``normal(0.0, std_tensor)``)."""
    if not (_is_tensor(mean) or _is_tensor(std)):
        if size is None:
            raise TypeError("normal() received an invalid combination of arguments: with "
                            "numbers for mean and std, a size is required")
        mean = float(_number("normal", "mean", 1, mean))
        std = float(_number("normal", "std", 2, std))
        shape = _size_list("normal", size, pos=3)
        t = F.empty(shape, dtype=_dtype("normal", dtype, out), device=_device(device, out))
        return _result(F.normal_(t, mean, std, generator=generator), out, requires_grad)
    if size is not None:
        raise TypeError("normal() received an invalid combination of arguments: size is only "
                        "accepted with numbers for mean and std")
    ref = mean if _is_tensor(mean) else std
    if not _is_tensor(std):
        std = float(_number("normal", "std", 2, std))
        if std < 0:
            raise RuntimeError(f"normal expects std >= 0.0, but found std {std:g}")
        shape = tuple(ref.shape)
    else:
        if std.device.type != "meta" and np.any(std.detach().cpu().numpy() < 0):
            raise RuntimeError("normal expects all elements of std >= 0.0")
        shape = broadcast_shapes(tuple(mean.shape), tuple(std.shape)) if _is_tensor(mean) \
            else tuple(std.shape)
    # in place, as PyTorch: the result keeps ``ref``'s dtype whatever std's and mean's are
    t = F.normal_(F.empty(shape, dtype=ref.dtype, device=ref.device), 0.0, 1.0,
                  generator=generator)
    t = P.add_(P.mul_(t, std), mean)
    return write_out(out, t) if out is not None else t


def bernoulli(input, p=None, *, generator=None, out=None):
    """0/1 draws: with probabilities ``input`` (``bernoulli(probs)``) or with one ``p``."""
    _check_input("bernoulli", input)
    if p is None:
        t = F.bernoulli_tensor(input, generator=generator)
    else:
        t = F.bernoulli(input, float(_number("bernoulli", "p", 2, p)), generator=generator)
    return write_out(out, t) if out is not None else t


__all__ = [
    "tensor", "as_tensor", "asarray", "from_numpy", "frombuffer", "from_dlpack",
    "empty", "zeros", "ones", "full", "empty_strided", "scalar_tensor", "arange", "linspace",
    "logspace", "eye", "empty_like", "zeros_like", "ones_like", "full_like", "rand_like",
    "randn_like", "randint_like", "rand", "randn", "randint", "randperm", "normal", "bernoulli",
]
