"""Sampling primitives of ``strata.distributions``: Gamma, Dirichlet, Poisson and Binomial draws,
and the reparameterisation gradients that make Gamma-based samples differentiable.

PyTorch has these as ATen ops (``aten/src/ATen/native/Distributions.cpp``): the distribution
classes call them, and their kernels draw from the (given or default) generator, so
``manual_seed`` makes every sample reproducible. Results are fresh contiguous tensors.
"""

from ..core import dtype as D
from ..core.shape import contiguous_strides
from . import meta_rules as R
from .op import TensorSpec, defop


def _check_dtype(kernel, dt, half=False):
    """The dtypes a sampling kernel runs on: float and double (plus the half types for some)."""
    ok = dt in (D.float32, D.float64) or (half and dt in (D.float16, D.bfloat16))
    if not ok:
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{R.type_name(dt)}'")
    return dt


def _fresh(shape, dtype):
    shape = tuple(shape)
    return TensorSpec(shape, dtype, contiguous_strides(shape))


def _same_dtype(a, b):
    if a.dtype is not b.dtype:
        raise RuntimeError(f"Found dtype {R.type_name(b.dtype)} but expected "
                           f"{R.type_name(a.dtype)}")


def _standard_gamma_meta(self, generator=None):
    return _fresh(self.shape, _check_dtype("gamma_cpu", self.dtype))


def _standard_gamma_grad_meta(self, output):
    _same_dtype(self, output)
    _check_dtype("_standard_gamma_grad_cpu", self.dtype)
    return _fresh(R.broadcast_shapes(tuple(self.shape), tuple(output.shape)), self.dtype)


def _sample_dirichlet_meta(self, generator=None):
    return _fresh(self.shape, _check_dtype("dirichlet", self.dtype))


def _poisson_meta(self, generator=None):
    return _fresh(self.shape, _check_dtype("poisson_cpu", self.dtype, half=True))


def _binomial_meta(count, prob, generator=None):
    for name, t in (("count", count), ("prob", prob)):
        if t.dtype.category != D.FLOATING:
            raise ValueError(f"binomial only supports floating-point dtypes for {name}, got: "
                             f"{R.type_name(t.dtype)}")
    _same_dtype(count, prob)
    _check_dtype("binomial_cpu", count.dtype)
    return _fresh(R.broadcast_shapes(tuple(count.shape), tuple(prob.shape)), count.dtype)


_standard_gamma = defop("_standard_gamma(Tensor self, Generator? generator=None) -> Tensor",
                        _standard_gamma_meta, function=True, tags=("random",))
_standard_gamma_grad = defop("_standard_gamma_grad(Tensor self, Tensor output) -> Tensor",
                             _standard_gamma_grad_meta, function=True)
_sample_dirichlet = defop("_sample_dirichlet(Tensor self, Generator? generator=None) -> Tensor",
                          _sample_dirichlet_meta, function=True, tags=("random",))
poisson = defop("poisson(Tensor self, Generator? generator=None) -> Tensor", _poisson_meta,
                function=True, tags=("random",))
binomial = defop("binomial(Tensor count, Tensor prob, Generator? generator=None) -> Tensor",
                 _binomial_meta, function=True, tags=("random",))
