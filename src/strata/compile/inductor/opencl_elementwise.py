"""The OpenCL device's pointwise ops with parameters: the activations (``elu``, ``hardtanh``,
``leaky_relu``, ...) and ``threshold_backward``, ``masked_fill``, ``round`` with decimals,
``nan_to_num``, ``fmod``,
``remainder`` and ``div`` with a rounding mode, and the special functions of opencl_special.py
(``digamma``, ``polygamma``, ``erfinv``, Bessel ``i0``..., ``entr``, ``special.zeta``,
``igamma``, ``igammac``, ``_standard_gamma_grad``), ``frexp``. Each is a
loop-IR formula over opencl_pointwise.pointwise whose Python-number parameters are kernel
arguments, so one program serves every value.
"""

import numpy as np

from ...core import dtype as D
from ...ops import activation as A
from ...ops import distributions as DS
from ...ops import indexing as I
from ...ops import pointwise as P
from ...ops import special as SP
from .ir import ops
from .opencl_pointwise import (
    binary,
    is_device,
    new_output,
    pointwise,
    scalar_value,
    unary,
)
from .opencl_checks import host_indices

# --- activations (ATen's CPU formulas, backends/cpu/activation.py) ------------------------------

def activation(op, formula):
    """``op(self, *scalars)``: the scalars are kernel arguments in self's dtype (integer bounds
    truncate, as ATen converts them), so one program serves every value."""
    def kernel(self, *scalars):
        spec = op.meta(self, *scalars)
        out = self if spec is self else new_output(spec, self)
        dtype = out.dtype
        return pointwise(op.qualname, formula, [(self, dtype), *((s, dtype) for s in scalars)],
                         out)
    return kernel


def _zero(x):
    return ops.constant(0, x.dtype)


def _elu(x, alpha, scale, input_scale):
    negative = ops.mul(ops.mul(ops.expm1(ops.mul(x, input_scale)), alpha), scale)
    return ops.where(ops.gt(x, _zero(x)), ops.mul(x, scale), negative)


def _celu(x, alpha):
    negative = ops.mul(ops.expm1(ops.truediv(x, alpha)), alpha)
    return ops.where(ops.gt(x, _zero(x)), x, negative)


def _hardtanh(x, low, high):
    return ops.minimum(ops.maximum(x, low), high)


def _hardsigmoid(x):
    six = ops.constant(6, x.dtype)
    shifted = ops.add(x, ops.constant(3, x.dtype))
    return ops.truediv(ops.minimum(ops.maximum(shifted, _zero(x)), six), six)


def _hardswish(x):
    return ops.mul(x, _hardsigmoid(x))


def _mish(x):
    return ops.mul(x, ops.tanh(ops.log1p(ops.exp(x))))


def _leaky_relu(x, slope):
    return ops.where(ops.gt(x, _zero(x)), x, ops.mul(x, slope))


def _threshold(x, threshold, value):
    return ops.where(ops.le(x, threshold), value, x)


def _softplus(x, beta, threshold):
    scaled = ops.mul(x, beta)
    soft = ops.truediv(ops.log1p(ops.exp(scaled)), beta)
    return ops.where(ops.gt(scaled, threshold), x, soft)


def _softplus_backward(g, x, beta, threshold):
    # ATen's softplus_backward_kernel: z = exp(x * beta); x * beta > threshold ? g : g * z / (z + 1)
    scaled = ops.mul(x, beta)
    z = ops.exp(scaled)
    return ops.where(ops.gt(scaled, threshold), g,
                     ops.truediv(ops.mul(g, z), ops.add(z, ops.constant(1.0, x.dtype))))


def softplus_backward(op):
    """``softplus_backward(grad, self, beta, threshold)``: the scalars are kernel arguments."""
    def kernel(grad_output, self, beta, threshold):
        spec = op.meta(grad_output, self, beta, threshold)
        out = new_output(spec, grad_output if is_device(grad_output) else self)
        dtype = out.dtype
        return pointwise(op.qualname, _softplus_backward,
                         [(grad_output, dtype), (self, dtype), (beta, dtype), (threshold, dtype)],
                         out)
    return kernel


def _threshold_backward(g, x, threshold):
    # ATen's threshold_kernel(grad, self, threshold, 0): NaN x passes the gradient
    return ops.where(ops.le(x, threshold), ops.constant(0, g.dtype), g)


def threshold_backward(op):
    """``threshold_backward(grad, self, threshold)``: the threshold is a kernel argument."""
    def kernel(grad_output, self, threshold):
        spec = op.meta(grad_output, self, threshold)
        out = new_output(spec, grad_output if is_device(grad_output) else self)
        dtype = out.dtype
        return pointwise(op.qualname, _threshold_backward,
                         [(grad_output, dtype), (self, dtype), (threshold, dtype)], out)
    return kernel


def _softshrink(x, lambd):
    inner = ops.where(ops.lt(x, ops.neg(lambd)), ops.add(x, lambd), ops.mul(x, _zero(x)))
    return ops.where(ops.gt(x, lambd), ops.sub(x, lambd), inner)


def _hardshrink(x, lambd):
    inside = ops.logical_and(ops.ge(x, ops.neg(lambd)), ops.le(x, lambd))
    return ops.where(inside, _zero(x), x)


ACTIVATIONS = {"elu": _elu, "celu": _celu, "hardtanh": _hardtanh, "hardsigmoid": _hardsigmoid,
               "hardswish": _hardswish, "mish": _mish, "leaky_relu": _leaky_relu,
               "threshold": _threshold, "softplus": _softplus, "softshrink": _softshrink,
               "hardshrink": _hardshrink}


# --- masked_fill, round, nan_to_num, remainder ----------------------------------------------------

def masked_fill(op):
    """``where(mask, value, self)``; ``value`` a number or a 0-dim tensor (a CPU one travels by
    value)."""
    def kernel(self, mask, value):
        spec = op.meta(self, mask, value)
        out = self if spec is self else new_output(spec, self)
        return pointwise(op.qualname, _masked, [(mask, D.bool_), (value, out.dtype),
                                                (self, out.dtype)], out)
    return kernel


def _masked(mask, value, x):
    return ops.where(mask, value, x)


def round_(op):
    """Half to even (``rint``), at ``decimals`` places as NumPy and ATen: rint(x * 10^d) / 10^d,
    or rint(x / 10^-d) * 10^-d for negative d; integers are already round."""
    def kernel(self, decimals=0):
        spec = op.meta(self, decimals)
        out = self if spec is self else new_output(spec, self)
        if not out.dtype.is_floating_point:
            return pointwise(op.qualname, _same, [(self, out.dtype)], out)
        if decimals == 0:
            return pointwise(op.qualname, _rint, [(self, out.dtype)], out)
        scale = 10.0 ** abs(decimals)
        formula = _round_up if decimals > 0 else _round_down
        return pointwise(op.qualname, formula, [(self, out.dtype), (scale, out.dtype)], out)
    return kernel


def _same(x):
    return x


def _rint(x):
    return ops.rint(x)


def _round_up(x, scale):
    return ops.truediv(ops.rint(ops.mul(x, scale)), scale)


def _round_down(x, scale):
    return ops.mul(ops.rint(ops.truediv(x, scale)), scale)


def nan_to_num(op):
    """NaN, +inf and -inf replaced (by 0 and the dtype's largest and lowest by default)."""
    def kernel(self, nan=None, posinf=None, neginf=None):
        spec = op.meta(self, nan, posinf, neginf)
        out = self if spec is self else new_output(spec, self)
        if not out.dtype.is_floating_point:
            return pointwise(op.qualname, _same, [(self, out.dtype)], out)
        info = D.finfo(out.dtype)
        values = (0.0 if nan is None else nan, info.max if posinf is None else posinf,
                  info.min if neginf is None else neginf)
        return pointwise(op.qualname, _replaced,
                         [(self, out.dtype), *((v, out.dtype) for v in values)], out)
    return kernel


def _replaced(x, nan, posinf, neginf):
    zero = ops.constant(0, x.dtype)
    infinite = ops.where(ops.gt(x, zero), posinf, neginf)
    return ops.where(ops.isnan(x), nan, ops.where(ops.isinf(x), infinite, x))


# --- division: fmod, remainder, div with a rounding mode ------------------------------------------

def division(op, kind=None):
    """``fmod``, ``remainder`` (Python's modulo) or ``div`` with a rounding mode (``kind`` None:
    the call's ``rounding_mode``). Floating results as ATen's CPU formulas; integer results
    raise ``RuntimeError: ZeroDivisionError`` as the CPU does when a divisor is 0, before
    anything is enqueued: a device divisor is read on the host first (a sync point; CUDA
    returns garbage instead)."""
    def kernel(self, other, *mode):
        spec = op.meta(self, other, *mode)
        out = self if spec is self else new_output(spec, self if is_device(self) else other)
        rounding = kind or (mode[0] if mode else None)
        if out.dtype.is_floating_point:
            formula = FLOATING_DIVISION[rounding]
        else:
            _refuse_zero_divisor(other, out.device)
            formula = INTEGER_DIVISION[rounding]
        return pointwise(op.qualname, formula, [(self, out.dtype), (other, out.dtype)], out)
    return kernel


def _refuse_zero_divisor(divisor, device):
    values = host_indices(divisor) if is_device(divisor) else scalar_value(divisor, device)
    if np.any(np.asarray(values) == 0):
        raise RuntimeError("ZeroDivisionError")


def _moved(mod, b):
    """Where a truncated remainder's sign differs from the divisor's (Python's rule moves it)."""
    zero = ops.constant(0, mod.dtype)
    return ops.logical_and(ops.ne(mod, zero), ops.ne(ops.lt(b, zero), ops.lt(mod, zero)))


def _python_mod(a, b):
    return _moved_into_divisor_sign(ops.fmod(a, b), b)


def _moved_into_divisor_sign(mod, b):
    """A truncated remainder given the divisor's sign (floor semantics, Python's ``%``)."""
    return ops.where(_moved(mod, b), ops.add(mod, b), mod)


def _true_divide(a, b):
    return ops.truediv(a, b)


def _trunc_divide(a, b):
    return ops.trunc(ops.truediv(a, b))


def _floor_divide(a, b):
    return ops.floor_divide(a, b)


def _fmod(a, b):
    return ops.fmod(a, b)


def _int_python_mod(a, b):
    return _moved_into_divisor_sign(ops.int_fmod(a, b), b)


def _int_trunc_divide(a, b):
    return ops.int_trunc_divide(a, b)


def _int_floor_divide(a, b):
    quotient = ops.int_trunc_divide(a, b)
    moved = _moved(ops.int_fmod(a, b), b)
    return ops.where(moved, ops.sub(quotient, ops.constant(1, a.dtype)), quotient)


def _int_fmod(a, b):
    return ops.int_fmod(a, b)


FLOATING_DIVISION = {"fmod": _fmod, "remainder": _python_mod, None: _true_divide,
                     "trunc": _trunc_divide, "floor": _floor_divide}
INTEGER_DIVISION = {"fmod": _int_fmod, "remainder": _int_python_mod, "trunc": _int_trunc_divide,
                    "floor": _int_floor_divide}


# --- digamma, polygamma (opencl_special.py) ------------------------------------------------------

def polygamma(op):
    """``polygamma(n, x)`` (and ``x.polygamma_(n)``): the order is a kernel argument."""
    def kernel(*args):
        spec = op.meta(*args)
        self, n = (args[1], args[0]) if op is SP.polygamma else args
        out = self if spec is self else new_output(spec, self)
        return pointwise(op.qualname, _polygamma, [(self, out.dtype), (n, D.int64)], out)
    return kernel


def _polygamma(x, n):
    return ops.polygamma(n, x)


def frexp(self):
    """(mantissa, exponent): two pointwise kernels, each taking its part of ``frexp``."""
    mantissa_spec, exponent_spec = P.frexp.meta(self)
    return tuple(pointwise("aten::frexp.Tensor", formula, [(self, self.dtype)],
                           new_output(spec, self))
                 for formula, spec in ((_mantissa, mantissa_spec), (_exponent, exponent_spec)))


def _mantissa(x):
    return ops.frexp(x, "mantissa")


def _exponent(x):
    return ops.frexp(x, "exponent")


def _special_formula(name):
    def formula(x):
        return ops.special(name, x)
    formula.__name__ = name
    return formula


# unary functions printed from opencl_special.py: name -> op (in-place forms too)
SPECIAL = {"digamma": SP.digamma, "digamma_": SP.digamma_, "erfinv": SP.erfinv,
           "erfinv_": SP.erfinv_, "i0": SP.i0, "i0_": SP.i0_, "i0e": SP.special_i0e,
           "i1": SP.special_i1, "i1e": SP.special_i1e, "entr": SP.special_entr}
SPECIAL_FORMULAS = {name: _special_formula(name) for name in SPECIAL if not name.endswith("_")}


def _zeta(x, q):
    return ops.special("zeta", x, q)


def _igamma(a, x):
    return ops.special("igamma", a, x)


def _igammac(a, x):
    return ops.special("igammac", a, x)


def _standard_gamma_grad(alpha, x):
    return ops.special("standard_gamma_grad", alpha, x)


# binary ones: op -> formula of (self, other) in the result's dtype (in-place forms too)
SPECIAL_BINARY = {SP.special_zeta: _zeta, SP.igamma: _igamma, SP.igamma_: _igamma,
                  SP.igammac: _igammac, SP.igammac_: _igammac,
                  DS._standard_gamma_grad: _standard_gamma_grad}


def kernels() -> dict:
    table = {}
    for name, formula in ACTIVATIONS.items():
        for op in (getattr(A, name), getattr(A, name + "_", None)):
            if op is not None:
                table[op] = activation(op, formula)
    table[A.softplus_backward] = softplus_backward(A.softplus_backward)
    table[A.threshold_backward] = threshold_backward(A.threshold_backward)
    for op in (I.masked_fill, I.masked_fill_, I.masked_fill_tensor, I.masked_fill_tensor_):
        table[op] = masked_fill(op)
    table.update({P.round: round_(P.round), P.round_: round_(P.round_),
                  P.nan_to_num: nan_to_num(P.nan_to_num),
                  P.nan_to_num_: nan_to_num(P.nan_to_num_),
                  P.remainder: division(P.remainder, "remainder"),
                  P.remainder_: division(P.remainder_, "remainder"),
                  P.fmod: division(P.fmod, "fmod"), P.fmod_: division(P.fmod_, "fmod"),
                  P.div_mode: division(P.div_mode), P.div_mode_: division(P.div_mode_),
                  SP.polygamma: polygamma(SP.polygamma), SP.polygamma_: polygamma(SP.polygamma_),
                  P.frexp: frexp})
    for name, op in SPECIAL.items():
        table[op] = unary(op, SPECIAL_FORMULAS[name.rstrip("_")])
    for op, formula in SPECIAL_BINARY.items():
        table[op] = binary(op, formula)
    return table
