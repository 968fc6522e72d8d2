"""Complex-number ops: views between complex and real storage, parts, magnitude and phase.

A complex tensor stores interleaved ``(real, imag)`` pairs, so ``view_as_real`` is a view over
the same bytes with the part's dtype, doubled strides and a last dim of 2
(``aten/src/ATen/native/ComplexHelper.h``); ``real``/``imag`` select from it. strata keeps no
lazy conjugate bit: ``conj`` of a complex tensor is ``conj_physical`` (a new tensor), and
``is_conj()`` is always False.
"""

from ..core import dtype as D
from . import factory as F
from . import meta_rules as R
from . import pointwise as P
from . import shape as S
from .op import TensorSpec, ViewSpec, defop, register_decomposition
from .pointwise import inplace_result


# --- views ------------------------------------------------------------------------------------
def _view_as_real_meta(self):
    if not self.dtype.is_complex:
        raise RuntimeError("view_as_real is only supported for complex tensors")
    return ViewSpec(tuple(self.shape) + (2,), tuple(2 * s for s in self.stride()) + (1,),
                    2 * self.storage_offset(), self.dtype.to_real())


def _view_as_complex_meta(self):
    if self.dtype not in (D.float32, D.float64):
        raise RuntimeError(f"view_as_complex is only supported for float and double tensors, "
                           f"but got a tensor of scalar type: {R.type_name(self.dtype)}")
    shape, strides = tuple(self.shape), tuple(self.stride())
    if not shape or shape[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    if strides[-1] != 1:
        raise RuntimeError("Tensor must have a last dimension with stride 1")
    if any(s % 2 for s in strides[:-1]):
        raise RuntimeError("Tensor must have a stride divisible by 2 for all but last dimension")
    if self.storage_offset() % 2:
        raise RuntimeError("Tensor must have a storage_offset divisible by 2")
    return ViewSpec(shape[:-1], tuple(s // 2 for s in strides[:-1]), self.storage_offset() // 2,
                    self.dtype.to_complex())


view_as_real = defop("view_as_real(Tensor(a) self) -> Tensor(a)", _view_as_real_meta,
                     function=True)
view_as_complex = defop("view_as_complex(Tensor(a) self) -> Tensor(a)", _view_as_complex_meta,
                        function=True)
real = defop("real(Tensor(a) self) -> Tensor(a)", function=True)
imag = defop("imag(Tensor(a) self) -> Tensor(a)", function=True)


@register_decomposition(real)
def _real(self):
    """The even floats of the storage (``at::real``: ``view_as_real(self).select(-1, 0)``); a
    real tensor is its own real part."""
    return S.select(view_as_real(self), -1, 0) if self.dtype.is_complex else self


@register_decomposition(imag)
def _imag(self):
    if not self.dtype.is_complex:
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    return S.select(view_as_real(self), -1, 1)


# --- pointwise ----------------------------------------------------------------------------------
def _same_dtype(self):
    return R.promote(self)


def _conj_physical_meta(self):
    return R.pointwise_meta(_same_dtype, self)


def _conj_physical_meta_(self):
    inplace_result(self, (self,), _same_dtype, _same_dtype)
    return self


def angle_dtype(self):
    """``angle``: complex -> its real dtype; integers -> the default float dtype."""
    return R.float_result(self).to_real()


def sgn_dtype(self):
    return R.promote(self)


conj_physical = defop("conj_physical(Tensor self) -> Tensor", _conj_physical_meta, method=True,
                      function=True, tags=("pointwise",))
conj_physical.dtype_rule = _same_dtype
conj_physical_ = defop("conj_physical_(Tensor(a!) self) -> Tensor(a!)", _conj_physical_meta_,
                       method=True, function=True, tags=("pointwise", "inplace_of:conj_physical"))
angle = defop("angle(Tensor self) -> Tensor", lambda self: R.pointwise_meta(angle_dtype, self),
              method=True, function=True, tags=("pointwise",))
angle.dtype_rule = angle_dtype
sgn = defop("sgn(Tensor self) -> Tensor", lambda self: R.pointwise_meta(sgn_dtype, self),
            method=True, function=True, tags=("pointwise",))
sgn.dtype_rule = sgn_dtype

conj = defop("conj(Tensor(a) self) -> Tensor(a)", method=True, function=True)


@register_decomposition(conj)
def _conj(self):
    """No lazy conjugate bit (see the module docstring): a real tensor is its own conjugate."""
    return conj_physical(self) if self.dtype.is_complex else self


# --- building complex tensors from real ones ------------------------------------------------
def _parts_meta(name):
    def meta(a, b):
        if a.dtype not in (D.float16, D.float32, D.float64) or \
                b.dtype not in (D.float16, D.float32, D.float64):
            raise RuntimeError(f"Expected both inputs to be Half, Float or Double tensors but "
                               f"got {R.type_name(a.dtype)} and {R.type_name(b.dtype)}")
        if a.dtype is not b.dtype:
            raise RuntimeError(f"Expected object of scalar type {R.type_name(a.dtype)} but got "
                               f"scalar type {R.type_name(b.dtype)} for second argument")
        shape = R.broadcast_shapes(tuple(a.shape), tuple(b.shape))
        return TensorSpec(shape, a.dtype.to_complex(), R.contiguous_strides(shape))
    meta.__name__ = f"_{name}_meta"
    return meta


complex = defop("complex(Tensor real, Tensor imag) -> Tensor", _parts_meta("complex"),
                function=True)
polar = defop("polar(Tensor abs, Tensor angle) -> Tensor", _parts_meta("polar"), function=True)


isreal = defop("isreal(Tensor self) -> Tensor", method=True, function=True)


@register_decomposition(isreal)
def _isreal(self):
    """True where the imaginary part is zero (everywhere for a real tensor)."""
    if not self.dtype.is_complex:
        return F.full(tuple(self.shape), True, dtype=D.bool_, device=self.device)
    return P.eq(imag(self), 0)
