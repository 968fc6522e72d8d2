"""Tensor methods written by hand because their Python signature differs from their op's
schema (``view(*shape)`` or ``view(dtype)``, ``split(int or list)``, ``div(rounding_mode=)``,
``new_zeros(*size)``, the ``.T`` family of properties), as a mixin.

Kept apart from ``_tensor.py``, which holds the tensor's own state and protocol; most methods
need none of this: they are generated from an op's ``method=`` declaration (``bind_methods``).
"""

import numbers

from .core import dtype as D
from .core.tensor_impl import TensorImpl, _is_tensor
from .ops import factory as F
from .ops import pointwise as P
from .ops import random_fills as RF
from .ops import shape as S
from .ops import split_join as SJ

_RANDOM_SIGNATURES = ("\n * (*, strata.Generator generator = None)"
                      "\n * (int from, int to, *, strata.Generator generator = None)"
                      "\n * (int to, *, strata.Generator generator = None)\n")


def _random_overload(args, bounds):
    """Which ``random_`` overload a call means: ``(op, bounds)``, ``random_(to)`` or
    ``random_(from, to)`` (``to`` may be None there), keywords ``from``/``to`` allowed."""
    alone = len(args) == 1 and not bounds          # random_(to)
    given = {"to": args[0]} if alone else dict(zip(("from", "to"), args))
    unknown = set(bounds) - {"from", "to"}
    repeated = set(bounds) & set(given)
    given.update(bounds)
    ints = all(_is_int(v) or (k == "to" and v is None and "from" in given)
               for k, v in given.items())
    if len(args) > 2:
        raise TypeError(f"random_() takes 2 positional arguments but {len(args)} were given")
    if unknown or repeated or not ints or given.keys() == {"from"}:
        got = ", ".join([type(a).__name__ for a in args] +
                        [f"{k}={type(v).__name__}" for k, v in bounds.items()])
        raise TypeError(f"random_() received an invalid combination of arguments - got ({got}), "
                        f"but expected one of:{_RANDOM_SIGNATURES}")
    given = {k: None if v is None else int(v) for k, v in given.items()}
    if "from" in given:
        return RF.random_from, (given["from"], given["to"])
    if "to" in given:
        return RF.random_to, (given["to"],)
    return RF.random_, ()


def _is_int(value) -> bool:
    """An ``int`` argument: a Python or NumPy integer, not a bool (PyTorch's parser refuses)."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


_NO_P = object()   # Tensor.bernoulli() (self's values are the probabilities) vs bernoulli(p)


def _bound_dims(args, method, keyword, given=None):
    """``f(1, 2)``, ``f((1, 2))`` and ``f(keyword=(1, 2))`` all mean (1, 2); ``method`` and
    ``keyword`` name the argument in PyTorch's errors when it is missing or given twice."""
    if given is not None:
        if args:
            raise TypeError(f"{method}() got multiple values for argument '{keyword}'")
        if not isinstance(given, (tuple, list)):
            raise TypeError(f"{method}(): argument '{keyword}' must be tuple of ints, not "
                            f"{type(given).__name__}")
        return tuple(given)
    if not args:
        raise TypeError(f'{method}() missing 1 required positional arguments: "{keyword}"')
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        return tuple(args[0])
    return tuple(args)


def _invalid_p(name, p, *signatures):
    """PyTorch's argument-parser error for a ``p`` of neither signature of ``name``."""
    expected = "".join(f" * ({sig}, strata.Generator generator = None)\n" for sig in signatures)
    return TypeError(f"{name}() received an invalid combination of arguments - got "
                     f"({type(p).__name__}), but expected one of:\n{expected}")


class TensorMethods:
    """``Tensor``'s hand-written methods (a mixin: no state of its own)."""

    __slots__ = ()

    # --- transposes -----------------------------------------------------------------------------
    @property
    def T(self):
        return S.permute(self, tuple(range(self.ndim - 1, -1, -1)))

    @property
    def mT(self):
        if self.ndim < 2:
            raise RuntimeError(f"tensor.mT is only supported on matrices or batches of matrices. "
                               f"Got {self.ndim}-D tensor.")
        return S.transpose(self, -2, -1)

    @property
    def H(self):
        return self.T

    @property
    def mH(self):
        return self.mT

    # --- methods whose Python signature differs from the schema --------------------------------
    def view(self, *shape, size=None):
        if len(shape) == 1 and isinstance(shape[0], D.dtype) and size is None:
            return F.view_dtype(self, shape[0])
        return S.view(self, _bound_dims(shape, "view", "size", size))

    def contiguous(self, *, memory_format="contiguous_format"):
        """The tensor itself where it already is contiguous, before any dispatch: PyTorch's
        binding returns early the same way (``THPVariable_contiguous``), so no op runs and
        the profiler and tracer see none; else the ``contiguous`` op (a copy)."""
        if memory_format in ("contiguous_format", "preserve_format") and \
                "_sparse" not in self.__dict__ and self.is_contiguous():
            return self
        return F.contiguous(self, memory_format=memory_format)

    def view_as(self, other):
        return S.view(self, other.shape)

    def reshape(self, *args, shape=None):
        return S.reshape(self, _bound_dims(args, "reshape", "shape", shape))

    def reshape_as(self, other):
        return S.reshape(self, other.shape)

    def permute(self, *args, dims=None):
        return S.permute(self, _bound_dims(args, "permute", "dims", dims))

    def expand(self, *sizes, size=None):
        return S.expand(self, _bound_dims(sizes, "expand", "size", size))

    def expand_as(self, other):
        return S.expand(self, other.shape)

    def repeat(self, *sizes, repeats=None):
        return S.repeat(self, _bound_dims(sizes, "repeat", "repeats", repeats))

    def flip(self, *args, dims=None):
        return S.flip(self, _bound_dims(args, "flip", "dims", dims))

    def tile(self, *args, dims=None):
        return S.tile(self, _bound_dims(args, "tile", "dims", dims))

    def split(self, split_size, dim=0):
        if isinstance(split_size, int):
            return SJ.split(self, split_size, dim)
        return SJ.split_with_sizes(self, list(split_size), dim)

    def movedim(self, source, destination):
        return S.movedim(self, source, destination)

    moveaxis = movedim

    def swapaxes(self, axis0, axis1):
        return S.transpose(self, axis0, axis1)

    swapdims = swapaxes

    def repeat_interleave(self, repeats, dim=None, *, output_size=None):
        if _is_tensor(repeats):
            return S.repeat_interleave_tensor(self, repeats, dim, output_size=output_size)
        return S.repeat_interleave(self, repeats, dim, output_size=output_size)

    # --- new tensors with self's dtype and device (the frontend lives in creation.py) -----------
    def new_empty(self, *size, dtype=None, device=None, requires_grad=False, layout=None,
                  pin_memory=False, **kwargs):
        from .creation import new_factory
        return new_factory(self, "new_empty", size, kwargs, None, dtype, device, requires_grad)

    def new_zeros(self, *size, dtype=None, device=None, requires_grad=False, layout=None,
                  pin_memory=False, **kwargs):
        from .creation import new_factory
        return new_factory(self, "new_zeros", size, kwargs, 0, dtype, device, requires_grad)

    def new_ones(self, *size, dtype=None, device=None, requires_grad=False, layout=None,
                 pin_memory=False, **kwargs):
        from .creation import new_factory
        return new_factory(self, "new_ones", size, kwargs, 1, dtype, device, requires_grad)

    def new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad=False,
                 layout=None, pin_memory=False):
        from .creation import new_full
        return new_full(self, size, fill_value, dtype, device, requires_grad)

    def new_empty_strided(self, size, stride, *, dtype=None, device=None, requires_grad=False,
                          layout=None, pin_memory=False):
        from .creation import new_empty_strided
        return new_empty_strided(self, size, stride, dtype, device, requires_grad)

    def new_tensor(self, data, *, dtype=None, device=None, requires_grad=False, layout=None,
                   pin_memory=False):
        from .creation import new_tensor
        return new_tensor(self, data, dtype, device, requires_grad)

    def fill_(self, value):
        if _is_tensor(value):
            if value.ndim != 0:
                raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor "
                                   f"with {value.ndim} dimensions.")
            if value.requires_grad:   # fill_.Tensor: the gradient reaches the value (summed)
                return F.fill_tensor_(self, value)
            value = value.item()
        return F.fill_(self, value)

    def uniform_(self, a=0.0, b=1.0, *, generator=None):
        return F.uniform_(self, a, b, generator=generator)

    def random_(self, *args, generator=None, **bounds):
        """``random_()``, ``random_(to)``, ``random_(from, to)``: integers drawn uniformly in
        [from, to) (``to`` None: up to the dtype's largest; no bounds: up to its largest
        exact integer)."""
        op, values = _random_overload(args, bounds)
        return op(self, *values, generator=generator)

    def bernoulli_(self, p=0.5, *, generator=None):
        if _is_tensor(p):
            return RF.bernoulli_tensor_(self, p, generator=generator)
        if not isinstance(p, numbers.Real):
            raise _invalid_p("bernoulli_", p, "Tensor p, *", "float p = 0.5, *")
        return RF.bernoulli_float(self, float(p), generator=generator)

    def bernoulli(self, p=_NO_P, *, generator=None):
        """``bernoulli()`` draws with ``self``'s probabilities, ``bernoulli(p)`` with one."""
        if p is _NO_P:
            return F.bernoulli_tensor(self, generator=generator)
        if not isinstance(p, numbers.Real):
            raise _invalid_p("bernoulli", p, "*", "float p, *")
        return F.bernoulli(self, float(p), generator=generator)

    def size(self, dim=None):
        return TensorImpl.size(self, dim)

    def dim_order(self):
        strides = self.stride()
        return tuple(sorted(range(self.ndim), key=lambda d: -strides[d]))

    def clamp(self, min=None, max=None):
        return P.clamp(self, min, max)

    clip = clamp

    def clamp_(self, min=None, max=None):
        return P.clamp_(self, min, max)

    clip_ = clamp_

    def div(self, other, *, rounding_mode=None):
        if rounding_mode is None:
            return P.div(self, other)
        return P.div_mode(self, other, rounding_mode)

    divide = div

    def div_(self, other, *, rounding_mode=None):
        if rounding_mode is None:
            return P.div_(self, other)
        return P.div_mode_(self, other, rounding_mode)

    def pow(self, exponent):
        return P.pow(self, exponent)

    def where(self, condition, other):
        return P.where(condition, self, other)
