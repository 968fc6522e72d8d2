"""``MultivariateNormal(loc, covariance_matrix=None, precision_matrix=None, scale_tril=None)``.

Everything is computed from the lower Cholesky factor L of the covariance (as PyTorch): samples
are ``loc + L @ eps``, the Mahalanobis term solves ``L y = x``.
"""

import math

from ..core.shape import broadcast_shapes
from ..linalg import cholesky, inv, solve
from . import constraints
from .distribution import Distribution
from .utils import lazy_property, standard_normal


def batch_mahalanobis(L, x):
    """``x^T (L L^T)^-1 x`` over broadcast batches: the squared norm of ``L^-1 x``."""
    batch = broadcast_shapes(tuple(L.shape[:-2]), tuple(x.shape[:-1]))
    n = x.shape[-1]
    y = solve(L.expand(batch + (n, n)), x.expand(batch + (n,)).unsqueeze(-1))
    return y.squeeze(-1).pow(2).sum(-1)


def half_log_det(L):
    return L.diagonal(dim1=-2, dim2=-1).log().sum(-1)


_MATRIX_ARGS = ("covariance_matrix", "precision_matrix", "scale_tril")


class MultivariateNormal(Distribution):
    arg_constraints = {"loc": constraints.real_vector,
                       "covariance_matrix": constraints.positive_definite,
                       "precision_matrix": constraints.positive_definite,
                       "scale_tril": constraints.lower_cholesky}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, covariance_matrix=None, precision_matrix=None, scale_tril=None,
                 validate_args=None):
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        given = {name: m for name, m in zip(_MATRIX_ARGS,
                                             (covariance_matrix, precision_matrix, scale_tril))
                 if m is not None}
        if len(given) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or "
                             "scale_tril may be specified.")
        ((name, matrix),) = given.items()
        if matrix.dim() < 2:
            what = "scale_tril matrix" if name == "scale_tril" else name
            raise ValueError(f"{what} must be at least two-dimensional, with optional leading "
                             f"batch dimensions")
        batch_shape = broadcast_shapes(tuple(matrix.shape[:-2]), tuple(loc.shape[:-1]))
        setattr(self, name, matrix.expand(batch_shape + (-1, -1)))
        self.loc = loc.expand(batch_shape + (-1,))
        super().__init__(batch_shape, self.loc.shape[-1:], validate_args=validate_args)
        if name == "scale_tril":
            self._unbroadcasted_scale_tril = matrix
        elif name == "covariance_matrix":
            self._unbroadcasted_scale_tril = cholesky(matrix)
        else:   # the Cholesky factor of the covariance, the precision's inverse
            self._unbroadcasted_scale_tril = cholesky(inv(matrix))

    def expand(self, batch_shape, _instance=None):
        new = self._expand_params(MultivariateNormal, batch_shape, ("loc",) + _MATRIX_ARGS,
                                  _instance)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril
        return new

    def _matrix_shape(self):
        return tuple(self._batch_shape) + tuple(self._event_shape) * 2

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(self._matrix_shape())

    @lazy_property
    def covariance_matrix(self):
        L = self._unbroadcasted_scale_tril
        return (L @ L.mT).expand(self._matrix_shape())

    @lazy_property
    def precision_matrix(self):
        L = self._unbroadcasted_scale_tril
        return inv(L @ L.mT).expand(self._matrix_shape())

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        shape = tuple(self._batch_shape) + tuple(self._event_shape)
        return self._unbroadcasted_scale_tril.pow(2).sum(-1).expand(shape)

    def rsample(self, sample_shape=()):
        eps = standard_normal(self._extended_shape(sample_shape), self.loc)
        return self.loc + (self._unbroadcasted_scale_tril @ eps.unsqueeze(-1)).squeeze(-1)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        L = self._unbroadcasted_scale_tril
        m = batch_mahalanobis(L, value - self.loc)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + m) - half_log_det(L)

    def entropy(self):
        n = self._event_shape[0]
        h = 0.5 * n * (1.0 + math.log(2 * math.pi)) + half_log_det(self._unbroadcasted_scale_tril)
        return h.expand(self._batch_shape) if len(self._batch_shape) else h
