"""Derivatives of ``ops/distributions.py``, as PyTorch's ``derivatives.yaml`` has them.

A Gamma draw is differentiable in its concentration by implicit reparameterisation:
dx/dalpha = -(dF/dalpha) / f at the drawn x (``_standard_gamma_grad``). A Poisson draw is
piecewise constant in its rate (zero gradient). ``_sample_dirichlet`` and ``binomial`` have no
formula, in PyTorch either; nor has ``_standard_gamma_grad``, whose node raises at backward.
"""

from ...ops import distributions as DS
from ...ops import pointwise as P
from . import derivative, zeros


@derivative(DS._standard_gamma, "StandardGammaBackward0", save=("self", "result"))
def _standard_gamma(ctx, grad):
    return P.mul(grad, DS._standard_gamma_grad(ctx.self, ctx.result))


@derivative(DS._standard_gamma_grad, "StandardGammaGradBackward0")
def _standard_gamma_grad(ctx, grad):
    raise NotImplementedError("the derivative for '_standard_gamma_grad' is not implemented.")


@derivative(DS.poisson, "PoissonBackward0")
def _poisson(ctx, grad):
    return zeros(grad._shape, grad)
