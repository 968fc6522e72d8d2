"""Special functions: error and gamma functions, Bessel functions, zeta, and the composites
torch also exposes at the top level (``xlogy``, ``logit``, ``sinc``, ``mvlgamma``).

They are pointwise ops, defined with the pointwise family's makers (``_unary``/``_binary``: same
dtype rules, in-place forms and checks); what sets them apart is their kernels, which NumPy lacks
(``backends/cpu/special.py``). ``torch.special`` names them in ``strata/special.py``.
"""

import math

from ..core import dtype as D
from . import meta_rules as R
from .op import TensorSpec, defop, register_decomposition
from .pointwise import FLOAT as _FLOAT
from .pointwise import (
    _binary, _float_only, _real_only, _unary, add, clamp, div, eq, gt, inplace_result,
    isnan, log, log1p, logical_or, lt, mul, neg, sin, sub, where,
)
from .pointwise_composites import _as_dtype

# PyTorch has no complex kernels for these (its message names each kernel, e.g. "erf_vml_cpu")
FLOAT = _real_only(_FLOAT, NotImplementedError,
                   "special functions are not implemented for '{type}'")

# --- unary, float result (integers compute in the default float dtype) ----------------------------
erf, erf_ = _unary("erf", FLOAT)
erfc, erfc_ = _unary("erfc", FLOAT)
erfinv, erfinv_ = _unary("erfinv", FLOAT)
lgamma, lgamma_ = _unary("lgamma", FLOAT)
digamma, digamma_ = _unary("digamma", FLOAT)   # lgamma's derivative
i0, i0_ = _unary("i0", FLOAT)                  # modified Bessel functions of the first kind
special_i0e, _ = _unary("special_i0e", FLOAT, inplace=False, method=False, function=False)
special_i1, _ = _unary("special_i1", FLOAT, inplace=False, method=False, function=False)
special_i1e, _ = _unary("special_i1e", FLOAT, inplace=False, method=False, function=False)
special_entr, _ = _unary("special_entr", FLOAT, inplace=False, method=False, function=False)


def _check_polygamma(n):
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")


def _polygamma_meta(n, self):
    _check_polygamma(n)
    return R.pointwise_meta(FLOAT, self)


def _polygamma_meta_(self, n):
    _check_polygamma(n)
    inplace_result(self, (self,), FLOAT, FLOAT)
    return self


# The n-th derivative of digamma (digamma's own derivative is polygamma(1, x)). The in-place
# form takes self first; ``Tensor.polygamma(n)`` is in frontend/pointwise.py.
polygamma = defop("polygamma(int n, Tensor self) -> Tensor", _polygamma_meta, function=True,
                  tags=("pointwise",))
polygamma.dtype_rule = FLOAT
polygamma_ = defop("polygamma_(Tensor(a!) self, int n) -> Tensor(a!)", _polygamma_meta_,
                   method=True, tags=("pointwise", "inplace_of:polygamma"))
polygamma_.dtype_rule = FLOAT


# --- binary ---------------------------------------------------------------------------------------
def _zeta_rule(self, other):
    """Float results, but the CPU kernel covers only float and double."""
    dt = FLOAT(self, other)
    if dt in (D.float16, D.bfloat16):
        raise NotImplementedError(f"\"zeta_cpu\" not implemented for '{R.type_name(dt)}'")
    return dt


special_zeta, _ = _binary("special_zeta", _zeta_rule, overload="", inplace=False, method=False,
                          function=False)   # Hurwitz zeta(self, other)
# the regularized lower / upper incomplete gamma functions P(self, other) and Q(self, other)
igamma, igamma_ = _binary("igamma", _float_only("igamma_cpu"), overload="")
igammac, igammac_ = _binary("igammac", _float_only("igammac_cpu"), overload="")


# --- composites -----------------------------------------------------------------------------------
xlogy = defop("xlogy.Tensor(Tensor self, Tensor other) -> Tensor", method=True, function=True)
logit = defop("logit(Tensor self, float? eps=None) -> Tensor", method=True, function=True)
logit_ = defop("logit_(Tensor(a!) self, float? eps=None) -> Tensor(a!)", method=True,
               function=True)
sinc = defop("sinc(Tensor self) -> Tensor", method=True, function=True)
sinc_ = defop("sinc_(Tensor(a!) self) -> Tensor(a!)", method=True, function=True)
mvlgamma = defop("mvlgamma(Tensor self, int p) -> Tensor", method=True, function=True)
mvlgamma_ = defop("mvlgamma_(Tensor(a!) self, int p) -> Tensor(a!)", method=True)


@register_decomposition(xlogy)
def _xlogy(self, other):
    # x * log(y), but 0 where x == 0 (even for y == 0), and nan wherever y is nan.
    dt = FLOAT(self, other)
    like = self if R.is_tensor(self) else other
    x, y = _as_dtype(self, dt, like), _as_dtype(other, dt, like)
    return where(isnan(y), float("nan"), where(eq(x, 0), 0.0, mul(x, log(y))))


def _in_place(self, out_of_place, *args):
    """``self = out_of_place(self, *args)``, with the in-place cast check first. The result is
    computed from a copy of self, so what its backward saves is not the overwritten tensor."""
    from .factory import clone, copy_
    R.inplace_meta(self, TensorSpec(tuple(self.shape), FLOAT(self)))
    return copy_(self, out_of_place(clone(self), *args))


@register_decomposition(logit)
def _logit(self, eps=None):
    # log(x) - log1p(-x): its gradient 1/x + 1/(1 - x) is PyTorch's logit_backward, inf at 0
    # and 1 (log(x / (1 - x)) would give nan at 1).
    x = add(_as_dtype(self, FLOAT(self), self), 0.0)   # -0.0 + 0.0 is +0.0: slope +inf there
    if eps is not None and eps >= 0:
        x = clamp(x, eps, 1.0 - eps)
        return sub(log(x), log1p(neg(x)))
    # Outside [0, 1] the value is nan already; adding x * nan there makes the gradient nan
    # too, as logit_backward says (the logs alone would give a finite slope).
    outside = logical_or(lt(x, 0), gt(x, 1))
    return add(sub(log(x), log1p(neg(x))), mul(x, where(outside, math.nan, 0.0).to(x.dtype)))


@register_decomposition(logit_)
def _logit_(self, eps=None):
    return _in_place(self, _logit, eps)


@register_decomposition(sinc)
def _sinc(self):
    """sin(pi x) / (pi x), 1 at 0 (the 0/0 branch gets a safe denominator so gradients stay
    finite)."""
    x = _as_dtype(self, FLOAT(self), self)
    zero = eq(x, 0)
    px = mul(where(zero, 1.0, x), math.pi)
    return where(zero, 1.0, div(sin(px), px))


@register_decomposition(sinc_)
def _sinc_(self):
    return _in_place(self, _sinc)


@register_decomposition(mvlgamma)
def _mvlgamma(self, p):
    """log of the multivariate gamma: p(p-1)/4 log(pi) + sum over j < p of lgamma(x - j/2)."""
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    total = lgamma(self)
    for j in range(1, p):
        total = add(total, lgamma(sub(self, j / 2)))
    return add(total, p * (p - 1) / 4 * math.log(math.pi))


@register_decomposition(mvlgamma_)
def _mvlgamma_(self, p):
    return _in_place(self, _mvlgamma, p)
