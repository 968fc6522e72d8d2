"""dtypes and PyTorch's type promotion.

A ``dtype`` is a singleton object (compare with ``is``) that knows its NumPy twin. Promotion follows
PyTorch, not NumPy: values are never inspected, and operands fall into three priority classes
(dimensioned tensors > zero-dim tensors > Python scalars); a lower class only wins when it is of a
higher *category* (bool < integer < floating < complex). See ``docs/source/tensor_attributes.rst``
in pytorch/pytorch and ``c10/core/ScalarType.h`` (promoteTypes) and
``aten/src/ATen/native/TypeProperties.cpp`` (ResultTypeState) for the rules mirrored here.
"""

import builtins

import ml_dtypes
import numpy as np

BOOL, INTEGRAL, FLOATING, COMPLEX = 0, 1, 2, 3


class dtype:
    """A tensor element type, e.g. ``strata.float32``."""

    __module__ = "strata"  # users meet it as ``strata.dtype``
    __slots__ = ("name", "np", "itemsize", "category", "is_signed", "_rank", "aliases")

    def __init__(self, name, np_dtype, category, is_signed, rank, aliases=()):
        self.name = name
        self.np = np.dtype(np_dtype)
        self.itemsize = self.np.itemsize
        self.category = category
        self.is_signed = is_signed
        self._rank = rank
        self.aliases = aliases

    @property
    def is_floating_point(self) -> bool:
        return self.category == FLOATING

    @property
    def is_complex(self) -> bool:
        return self.category == COMPLEX

    @property
    def is_differentiable(self) -> bool:
        """Floating and complex dtypes can carry gradients."""
        return self.category >= FLOATING

    def to_real(self):
        """The dtype of a complex dtype's real and imaginary parts (``complex64 -> float32``)."""
        return _REAL_OF.get(self, self)

    def to_complex(self):
        """The complex dtype whose parts are this float dtype (``float32 -> complex64``)."""
        try:
            return _COMPLEX_OF[self]
        except KeyError:
            raise RuntimeError(f"Unknown Complex ScalarType for {_SCALAR_NAME[self.name]}") \
                from None

    def __repr__(self):
        return f"strata.{self.name}"

    def __reduce__(self):
        return (_by_name, (self.name,))


bool_ = dtype("bool", np.bool_, BOOL, False, 0)
uint8 = dtype("uint8", np.uint8, INTEGRAL, False, 1)
int8 = dtype("int8", np.int8, INTEGRAL, True, 1)
int16 = dtype("int16", np.int16, INTEGRAL, True, 2, ("short",))
int32 = dtype("int32", np.int32, INTEGRAL, True, 3, ("int",))
int64 = dtype("int64", np.int64, INTEGRAL, True, 4, ("long",))
float16 = dtype("float16", np.float16, FLOATING, True, 1, ("half",))
bfloat16 = dtype("bfloat16", ml_dtypes.bfloat16, FLOATING, True, 1)
float32 = dtype("float32", np.float32, FLOATING, True, 2, ("float",))
float64 = dtype("float64", np.float64, FLOATING, True, 3, ("double",))
complex64 = dtype("complex64", np.complex64, COMPLEX, True, 2, ("cfloat",))
complex128 = dtype("complex128", np.complex128, COMPLEX, True, 3, ("cdouble",))

# complex32 (chalf) is not provided: NumPy has no such type, so half floats pair with complex64.
_REAL_OF = {complex64: float32, complex128: float64}
_SCALAR_NAME = {"bool": "Bool", "uint8": "Byte", "int8": "Char", "int16": "Short", "int32": "Int",
                "int64": "Long"}
_COMPLEX_OF = {float16: complex64, bfloat16: complex64, float32: complex64, float64: complex128,
               complex64: complex64, complex128: complex128}

ALL_DTYPES = (bool_, uint8, int8, int16, int32, int64, float16, bfloat16, float32, float64,
              complex64, complex128)
_BY_NP = {d.np: d for d in ALL_DTYPES}
_BY_NAME = {d.name: d for d in ALL_DTYPES} | {a: d for d in ALL_DTYPES for a in d.aliases}


def _by_name(name):
    return _BY_NAME[name]


def from_numpy_dtype(np_dtype) -> dtype:
    """The strata dtype of a NumPy dtype; TypeError for ones strata does not have."""
    try:
        return _BY_NP[np.dtype(np_dtype)]
    except (KeyError, TypeError):
        raise TypeError(
            f"can't convert np.ndarray of type {np.dtype(np_dtype)}. The only supported types are: "
            "float64, float32, float16, bfloat16, complex64, complex128, int64, int32, int16, "
            "int8, uint8, and bool."
        ) from None


# --- promotion ---------------------------------------------------------------------------------

def _promote_pair(a: dtype, b: dtype) -> dtype:
    if a is b:
        return a
    if a.category != b.category:
        hi, lo = (a, b) if a.category > b.category else (b, a)
        if hi.category == COMPLEX and lo.category == FLOATING:
            return hi if hi._rank >= lo._rank else _COMPLEX_OF[lo]
        return hi
    if a.category == COMPLEX:
        return a if a._rank > b._rank else b
    if a.category == FLOATING:
        if {a, b} == {float16, bfloat16}:
            return float32
        return a if a._rank > b._rank else b
    if a.category == INTEGRAL:
        if a.is_signed != b.is_signed:  # uint8 with a signed type
            signed = a if a.is_signed else b
            return int16 if signed is int8 else signed
        return a if a._rank > b._rank else b
    return a


_PROMOTE = {(a, b): _promote_pair(a, b) for a in ALL_DTYPES for b in ALL_DTYPES}


def promote_types(type1: dtype, type2: dtype) -> dtype:
    """The smallest dtype both can be cast to, as ``torch.promote_types``."""
    return _PROMOTE[type1, type2]


def can_cast(from_: dtype, to: dtype) -> bool:
    """Whether PyTorch's casting rules allow ``from_`` into ``to`` (as ``torch.can_cast``)."""
    if from_.category > to.category and from_.category >= FLOATING:
        return False
    if from_ is not bool_ and to is bool_:
        return False
    return True


_default_dtype = float32

# Python types PyTorch's argument parser accepts where a dtype is expected (``dtype=float``).
_PYTHON_TYPES = {float: float64, int: int64, bool: bool_}


def to_dtype(value, fname="dtype") -> dtype:
    """A ``dtype=`` argument as a dtype: a dtype, or the Python type ``float``/``int``/``bool``."""
    if isinstance(value, dtype):
        return value
    d = _PYTHON_TYPES.get(value) if isinstance(value, type) else None
    if d is None:
        raise TypeError(f"{fname}(): argument 'dtype' must be strata.dtype, not "
                        f"{type(value).__name__}")
    return d


def get_default_dtype() -> dtype:
    """The dtype of Python floats and float factories (``strata.float32`` at startup)."""
    return _default_dtype


def get_default_complex_dtype() -> dtype:
    """The dtype of Python complex numbers: the complex twin of the default float dtype."""
    return _default_dtype.to_complex()


def set_default_dtype(d: dtype) -> None:
    """Set the dtype that Python floats and float factories use (floating dtypes only)."""
    global _default_dtype
    if not isinstance(d, dtype):
        raise TypeError("invalid dtype object: only floating-point types are supported as the "
                        "default type")
    if d.category != FLOATING:
        raise TypeError("only floating-point types are supported as the default type")
    _default_dtype = d


def scalar_dtype(value) -> dtype:
    """The dtype a Python scalar takes when it stands alone (bool, int64 or the default float)."""
    if isinstance(value, bool):
        return bool_
    if isinstance(value, int):
        return int64
    if isinstance(value, float):
        return _default_dtype
    if isinstance(value, complex):
        return get_default_complex_dtype()
    if isinstance(value, np.generic):
        return from_numpy_dtype(value.dtype)
    if isinstance(value, np.ndarray):   # PyTorch's functions refuse arrays too (TypeError)
        raise TypeError("expected a Tensor or a number, got numpy.ndarray (convert it with "
                        "strata.tensor(...) or strata.from_numpy(...))")
    raise TypeError(f"expected a number, got {type(value).__name__}")


def _combine_categories(higher, lower):
    if higher is None:
        return lower
    if lower is None or higher.category == COMPLEX:
        return higher
    if lower.category == COMPLEX:   # keep the higher class's precision (float64 + 1j: cdouble)
        return _COMPLEX_OF[higher] if higher.category == FLOATING else lower
    if higher.category == FLOATING:
        return higher
    if higher is bool_ or lower.category == FLOATING:
        return _PROMOTE[higher, lower]
    return higher


def result_type(*operands) -> dtype:
    """PyTorch's result dtype for an op over tensors and Python scalars (``torch.result_type``).

    Tensors are anything with ``.dtype`` and ``.ndim``; everything else is a Python scalar.
    """
    common = getattr(operands[0], "dtype", None) if operands else None
    if type(common) is dtype:   # tensors of one dtype (most calls): that dtype, whatever ndims
        for x in operands:
            if getattr(x, "dtype", None) is not common:
                break
        else:
            return common
    dim = zero = wrapped = None
    for x in operands:
        d = getattr(x, "dtype", None)
        if d is None or not isinstance(d, dtype):
            d = scalar_dtype(x)
            wrapped = d if wrapped is None else _PROMOTE[wrapped, d]
        elif x.ndim == 0:
            zero = d if zero is None else _PROMOTE[zero, d]
        else:
            dim = d if dim is None else _PROMOTE[dim, d]
    return _combine_categories(dim, _combine_categories(zero, wrapped))


class finfo:
    """Machine limits of a floating dtype, as ``torch.finfo``.

        >>> strata.finfo(strata.float16).max
        65504.0
    """

    __hash__ = None  # like PyTorch's: equal by value, unhashable

    def __init__(self, type=None):
        type = _default_dtype if type is None else type
        if not isinstance(type, dtype):
            raise TypeError(f"finfo(): argument 'type' (position 1) must be strata.dtype, not "
                            f"{builtins.type(type).__name__}")
        if type.category < FLOATING:
            raise TypeError("strata.finfo() requires a floating point input type. Use "
                            "strata.iinfo to handle 'strata.finfo'")
        type = type.to_real()   # a complex dtype's limits are those of its parts
        info = ml_dtypes.finfo(type.np)
        self.dtype = type.name
        self.bits = type.itemsize * 8
        self.eps = float(info.eps)
        self.max = float(info.max)
        self.min = float(info.min)
        self.tiny = self.smallest_normal = float(info.tiny)
        # 10**-precision exactly (NumPy stores it rounded to the dtype itself)
        self.resolution = 10.0 ** -int(info.precision)

    def __eq__(self, other):
        return isinstance(other, finfo) and other.dtype == self.dtype

    def __repr__(self):
        return (f"finfo(resolution={self.resolution}, min={self.min:g}, max={self.max:g}, "
                f"eps={self.eps:g}, smallest_normal={self.tiny:g}, tiny={self.tiny:g}, "
                f"dtype={self.dtype})")


class iinfo:
    """Machine limits of an integer dtype, as ``torch.iinfo``.

        >>> strata.iinfo(strata.uint8).max
        255
    """

    __hash__ = None

    def __init__(self, type):
        if not isinstance(type, dtype):
            raise TypeError(f"iinfo(): argument 'type' (position 1) must be strata.dtype, not "
                            f"{builtins.type(type).__name__}")
        if type.category >= FLOATING:
            raise TypeError("strata.iinfo() requires an integer input type. Use strata.finfo to "
                            "handle 'strata.iinfo'")
        # PyTorch refuses bool here; strata answers (0, 1) because range checks in ops/ ask for
        # the limits of any non-float dtype.
        info = np.iinfo(np.uint8 if type is bool_ else type.np)
        self.dtype = type.name
        self.bits = type.itemsize * 8
        self.max = 1 if type is bool_ else int(info.max)
        self.min = int(info.min)

    def __eq__(self, other):
        return isinstance(other, iinfo) and other.dtype == self.dtype

    def __repr__(self):
        return f"iinfo(min={self.min:g}, max={self.max:g}, dtype={self.dtype})"
