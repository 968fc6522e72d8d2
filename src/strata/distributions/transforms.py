"""Bijective transforms for ``TransformedDistribution`` (``torch.distributions.transforms``).

A transform maps its ``domain`` onto its ``codomain``; ``inv`` is the inverse transform and
``log_abs_det_jacobian(x, y)`` the log of |dy/dx|. With ``cache_size=1`` a transform remembers
its last (x, y) pair, so ``t.inv(t(x))`` gives back ``x`` itself (no round-off).

    >>> ExpTransform()(strata.tensor([0.0])).tolist()
    [1.0]
"""

import math
import numbers
import weakref

from .. import creation
from ..core import dtype as D
from ..core.shape import broadcast_shapes
from ..nn import functional as F
from . import constraints

__all__ = ["AbsTransform", "AffineTransform", "ExpTransform", "SigmoidTransform", "Transform"]


class Transform:
    bijective = False
    sign = 1
    domain = constraints.real
    codomain = constraints.real

    def __init__(self, cache_size=0):
        if cache_size not in (0, 1):
            raise ValueError("cache_size must be 0 or 1")
        self._cache_size = cache_size
        self._cached_x_y = None, None
        self._inv = None

    @property
    def event_dim(self):
        return self.domain.event_dim

    @property
    def inv(self):
        inv = self._inv() if self._inv is not None else None
        if inv is None:
            inv = _InverseTransform(self)
            self._inv = weakref.ref(inv)
        return inv

    def __call__(self, x):
        if not self._cache_size:
            return self._call(x)
        x_old, y_old = self._cached_x_y
        if x is x_old:
            return y_old
        y = self._call(x)
        self._cached_x_y = x, y
        return y

    def _inv_call(self, y):
        if not self._cache_size:
            return self._inverse(y)
        x_old, y_old = self._cached_x_y
        if y is y_old:
            return x_old
        x = self._inverse(y)
        self._cached_x_y = x, y
        return x

    def _call(self, x):
        raise NotImplementedError  # by design: abstract here, as in PyTorch

    def _inverse(self, y):
        raise NotImplementedError  # by design: abstract here, as in PyTorch

    def log_abs_det_jacobian(self, x, y):
        raise NotImplementedError  # by design: abstract here, as in PyTorch

    def forward_shape(self, shape):
        return shape

    def inverse_shape(self, shape):
        return shape

    def __eq__(self, other):
        return self is other

    def __ne__(self, other):
        return not self.__eq__(other)

    __hash__ = object.__hash__

    def __repr__(self):
        return type(self).__name__ + "()"


class _InverseTransform(Transform):
    """The inverse of a transform, sharing its cache."""

    def __init__(self, transform):
        super().__init__(cache_size=transform._cache_size)
        self._inv = transform

    @property
    def inv(self):
        return self._inv

    @property
    def domain(self):
        return self._inv.codomain

    @property
    def codomain(self):
        return self._inv.domain

    @property
    def bijective(self):
        return self._inv.bijective

    @property
    def sign(self):
        return self._inv.sign

    def __call__(self, x):
        return self._inv._inv_call(x)

    def log_abs_det_jacobian(self, x, y):
        return -self._inv.log_abs_det_jacobian(y, x)

    def __eq__(self, other):
        return isinstance(other, _InverseTransform) and self._inv == other._inv

    __hash__ = object.__hash__

    def __repr__(self):
        return f"{type(self).__name__}({self._inv!r})"


class ExpTransform(Transform):
    """y = exp(x)."""

    domain = constraints.real
    codomain = constraints.positive
    bijective = True
    sign = +1

    def __eq__(self, other):
        return isinstance(other, ExpTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        return x.exp()

    def _inverse(self, y):
        return y.log()

    def log_abs_det_jacobian(self, x, y):
        return x


def _clipped(y):
    """Keep a sigmoid's value strictly inside (0, 1), where its inverse is finite."""
    finfo = D.finfo(y.dtype)
    return y.clamp(min=finfo.tiny, max=1.0 - finfo.eps)


class SigmoidTransform(Transform):
    """y = 1 / (1 + exp(-x))."""

    domain = constraints.real
    codomain = constraints.unit_interval
    bijective = True
    sign = +1

    def __eq__(self, other):
        return isinstance(other, SigmoidTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        return _clipped(x.sigmoid())

    def _inverse(self, y):
        y = _clipped(y)
        return y.log() - (-y).log1p()

    def log_abs_det_jacobian(self, x, y):
        return -F.softplus(-x) - F.softplus(x)


class AbsTransform(Transform):
    """y = |x|: not bijective; ``inv`` returns the nonnegative preimage (HalfNormal, HalfCauchy
    override ``log_prob`` to count both preimages)."""

    codomain = constraints.positive

    def __eq__(self, other):
        return isinstance(other, AbsTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        return x.abs()

    def _inverse(self, y):
        return y


class AffineTransform(Transform):
    """y = loc + scale * x, over events of ``event_dim`` rightmost dims."""

    bijective = True

    def __init__(self, loc, scale, event_dim=0, cache_size=0):
        super().__init__(cache_size=cache_size)
        self.loc, self.scale = loc, scale
        self._event_dim = event_dim

    @property
    def event_dim(self):
        return self._event_dim

    @property
    def domain(self):
        return constraints.real if self._event_dim == 0 else \
            constraints.independent(constraints.real, self._event_dim)

    codomain = domain

    @property
    def sign(self):
        if isinstance(self.scale, numbers.Real):
            return 1 if float(self.scale) > 0 else -1 if float(self.scale) < 0 else 0
        return self.scale.sign()

    def __eq__(self, other):
        if not isinstance(other, AffineTransform):
            return False
        return all(_same(getattr(self, k), getattr(other, k)) for k in ("loc", "scale"))

    __hash__ = object.__hash__

    def _call(self, x):
        return self.loc + self.scale * x

    def _inverse(self, y):
        return (y - self.loc) / self.scale

    def log_abs_det_jacobian(self, x, y):
        shape = tuple(x.shape)
        if isinstance(self.scale, numbers.Real):
            result = creation.full_like(x, math.log(abs(self.scale)))
        else:
            result = self.scale.abs().log()
        if self._event_dim:
            result = result.reshape(tuple(result.shape[:-self._event_dim]) + (-1,)).sum(-1)
            shape = shape[:-self._event_dim]
        return result.expand(shape)

    def forward_shape(self, shape):
        return broadcast_shapes(tuple(shape), tuple(getattr(self.loc, "shape", ())),
                                tuple(getattr(self.scale, "shape", ())))

    inverse_shape = forward_shape


def _same(a, b):
    if isinstance(a, numbers.Number) and isinstance(b, numbers.Number):
        return a == b
    return bool((a == b).all())
