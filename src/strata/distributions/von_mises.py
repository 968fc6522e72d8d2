"""``VonMises(loc, concentration)``: the circular normal, angles taken modulo 2 pi. As PyTorch:
``log I0``/``log I1`` by Abramowitz and Stegun's polynomials (9.8.1-9.8.4), samples by Best and
Fisher's rejection method (1979) in float64, where float32 hangs for tiny concentrations."""

import math

from .. import creation
from ..autograd.grad_mode import no_grad
from ..core import dtype as D
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all, lazy_property

_I0_SMALL = (1.0, 3.5156229, 3.0899424, 1.2067492, 0.2659732, 0.360768e-1, 0.45813e-2)
_I0_LARGE = (0.39894228, 0.1328592e-1, 0.225319e-2, -0.157565e-2, 0.916281e-2, -0.2057706e-1,
             0.2635537e-1, -0.1647633e-1, 0.392377e-2)
_I1_SMALL = (0.5, 0.87890594, 0.51498869, 0.15084934, 0.2658733e-1, 0.301532e-2, 0.32411e-3)
_I1_LARGE = (0.39894228, -0.3988024e-1, -0.362018e-2, 0.163801e-2, -0.1031555e-1,
             0.2282967e-1, -0.2895312e-1, 0.1787654e-1, -0.420059e-2)


def _poly(y, coefficients):
    """Horner's rule, highest coefficient first in the loop (PyTorch's ``_eval_poly``)."""
    result = coefficients[-1]
    for c in reversed(coefficients[:-1]):
        result = c + y * result
    return result


def _log_modified_bessel(x, order=0):
    """``log(I_order(x))`` for x > 0, order 0 or 1."""
    small, large = (_I0_SMALL, _I0_LARGE) if order == 0 else (_I1_SMALL, _I1_LARGE)
    y = x / 3.75
    near = _poly(y * y, small)
    if order == 1:
        near = x.abs() * near
    far = x - 0.5 * x.log() + _poly(3.75 / x, large).log()
    return near.log().where(x < 3.75, far)


class VonMises(Distribution):
    arg_constraints = {"loc": constraints.real, "concentration": constraints.positive}
    support = constraints.real
    has_rsample = False

    def __init__(self, loc, concentration, validate_args=None):
        self.loc, self.concentration = broadcast_all(loc, concentration)
        super().__init__(self.loc.shape, (), validate_args)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return self.concentration * (value - self.loc).cos() - math.log(2 * math.pi) - \
            _log_modified_bessel(self.concentration, 0)

    @lazy_property
    def _proposal_r(self):
        kappa = self.concentration.to(D.float64)
        tau = 1 + (1 + 4 * kappa ** 2).sqrt()
        rho = (tau - (2 * tau).sqrt()) / (2 * kappa)
        return ((1 + rho ** 2) / (2 * rho)).where(kappa >= 1e-5, 1 / kappa + kappa)

    def sample(self, sample_shape=()):
        """Best and Fisher's rejection sampler, every draw in float64."""
        with no_grad():
            shape = tuple(self._extended_shape(sample_shape))
            loc, kappa = self.loc.to(D.float64), self.concentration.to(D.float64)
            r = self._proposal_r
            x = creation.zeros(shape, dtype=D.float64, device=self.loc.device)
            done = creation.zeros(shape, dtype=D.bool_, device=self.loc.device)
            while not bool(done.all()):
                u1, u2, u3 = creation.rand((3, *shape), dtype=D.float64,
                                           device=self.loc.device).unbind()
                z = (math.pi * u1).cos()
                f = (1 + r * z) / (r + z)
                c = kappa * (r - f)
                accept = ((c * (2 - c) - u2) > 0) | ((c / u2).log() + 1 - c >= 0)
                x = ((u3 - 0.5).sign() * f.acos()).where(accept & ~done, x)
                done = done | accept
            return ((x + math.pi + loc) % (2 * math.pi) - math.pi).to(self.loc.dtype)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(VonMises, batch_shape, ("loc", "concentration"), _instance)

    @property
    def mean(self):
        """The circular mean."""
        return self.loc

    @property
    def mode(self):
        return self.loc

    @lazy_property
    def variance(self):
        """The circular variance, 1 - I1(kappa) / I0(kappa)."""
        return 1 - (_log_modified_bessel(self.concentration, 1) -
                    _log_modified_bessel(self.concentration, 0)).exp()
