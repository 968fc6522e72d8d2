"""The OpenCL kernels of ops/complex.py (``conj_physical``, ``sgn``, ``angle``, ``complex``,
``polar``): pointwise formulas over opencl_complex.py's printer rules. Views (``view_as_real``,
``view_as_complex``, ``real``, ``imag``) need no kernel: they share the view kernel.
"""

from ...ops import complex as CX
from .ir import ops
from .opencl_pointwise import is_device, new_output, pointwise


def _conj(x):
    return ops.conj(x)


def _angle(x):
    return ops.angle(x)


def _sgn(x):
    return ops.sgn(x)


def _complex(re, im):
    return ops.make_complex(re, im)


def _polar(r, theta):
    return ops.make_complex(ops.mul(r, ops.cos(theta)), ops.mul(r, ops.sin(theta)))


def same_dtype_unary(op, formula):
    """``op(self)`` computed in self's dtype (conj_physical, sgn, angle: complex -> real)."""
    def kernel(self):
        spec = op.meta(self)
        out = self if spec is self else new_output(spec, self)
        compute = self.dtype if self.dtype.is_complex or self.dtype.is_floating_point \
            else out.dtype
        return pointwise(op.qualname, formula, [(self, compute)], out)
    return kernel


def from_parts(op, formula):
    """``complex(real, imag)`` and ``polar(abs, angle)``: two real tensors -> one complex."""
    def kernel(a, b):
        spec = op.meta(a, b)
        out = new_output(spec, a if is_device(a) else b)
        part = spec.dtype.to_real()
        return pointwise(op.qualname, formula, [(a, part), (b, part)], out)
    return kernel


def kernels() -> dict:
    table = {CX.angle: same_dtype_unary(CX.angle, _angle),
             CX.complex: from_parts(CX.complex, _complex),
             CX.polar: from_parts(CX.polar, _polar)}
    for name, formula in (("conj_physical", _conj), ("sgn", _sgn)):
        for op in (getattr(CX, name), getattr(CX, name + "_", None)):
            if op is not None:
                table[op] = same_dtype_unary(op, formula)
    return table

