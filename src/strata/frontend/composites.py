"""PyTorch functions and Tensor methods that strata writes with other ops at the Python level:
in-place forms that write their out-of-place result back (``tril_``, ``cumsum_``,
``float_power_``, ...), thin compositions (``inner``, ``addr``, ``renorm``,
``cholesky_inverse``, ``isposinf``, ``fill_diagonal_``, ...) and aliases (``adjoint``,
``narrow_copy``, ``unsafe_split``, ...). Values, dtypes and errors are PyTorch's; autograd
records the ops they are written with."""

import math
import warnings

from .. import return_types
from ..core import dtype as D
from ..core.shape import broadcast_shapes
from ..ops import aten
from ..ops import meta_rules as R
from .shape import broadcast_tensors, diagflat


def _in_place(name, compute):
    """``self.<name>(...)``: ``compute(self, ...)`` copied into ``self``, refusing a result
    ``self``'s dtype cannot hold as PyTorch's in-place ops do (``int.xlogy_(3.0)``)."""
    def method(self, *args, **kwargs):
        result = compute(self, *args, **kwargs)
        if not D.can_cast(result.dtype, self.dtype):
            raise RuntimeError(f"result type {R.type_name(result.dtype)} can't be cast to the "
                               f"desired output type {R.type_name(self.dtype)}")
        return self.copy_(result)
    method.__name__ = method.__qualname__ = name
    return method


def _bad_in_place(self, result):
    return (f"Bad in-place call: input tensor dtype {R.c_type_name(self.dtype)} and output "
            f"tensor dtype {R.c_type_name(result.dtype)} should match")


# --- pointwise --------------------------------------------------------------------------------
def positive(input):
    if input.dtype is D.bool_:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return input


def float_power(input, exponent, *, out=None):
    """``input ** exponent`` computed in double precision (complex128 for complex operands)."""
    operands = [v for v in (input, exponent) if hasattr(v, "dtype")]
    wide = D.complex128 if any(v.dtype.is_complex for v in operands) or \
        isinstance(exponent, complex) else D.float64
    base = input.to(wide) if hasattr(input, "dtype") else input
    power = exponent.to(wide) if hasattr(exponent, "dtype") else exponent
    result = base ** power if hasattr(base, "dtype") else power.new_full((), base) ** power
    return result if out is None else out.copy_(result)


def float_power_(self, exponent):
    wide = D.complex128 if self.dtype.is_complex else D.float64
    if self.dtype is not wide:
        raise RuntimeError(f"the base given to float_power_ has dtype {R.type_name(self.dtype)} "
                           f"but the operation's result requires dtype {R.type_name(wide)}")
    return self.copy_(float_power(self, exponent))


def isposinf(input, *, out=None):
    result = (input == math.inf) if input.dtype.is_floating_point else \
        input.new_zeros(input.shape, dtype=D.bool_)
    return result if out is None else out.copy_(result)


def isneginf(input, *, out=None):
    result = (input == -math.inf) if input.dtype.is_floating_point else \
        input.new_zeros(input.shape, dtype=D.bool_)
    return result if out is None else out.copy_(result)


# --- products -----------------------------------------------------------------------------------
def inner(input, other, *, out=None):
    """The sum of products over the last dims (a product with a scalar when either is 0-d)."""
    if input.ndim == 0 or other.ndim == 0:
        result = input * other
    else:
        if input.shape[-1] != other.shape[-1]:
            raise RuntimeError(f"inner() the last dimension must match on both input tensors but "
                               f"got shapes {list(input.shape)} and {list(other.shape)}")
        result = aten.tensordot.default(input, other, [-1], [-1])
    return result if out is None else out.copy_(result)


def addr(input, vec1, vec2, *, beta=1, alpha=1, out=None):
    """``beta * input + alpha * outer(vec1, vec2)`` (beta 0 ignores ``input``, NaNs included)."""
    integral = not (vec1.dtype.is_floating_point or vec1.dtype.is_complex)
    if integral and (isinstance(beta, float) or isinstance(alpha, float)):
        raise RuntimeError(f"For integral input tensors, argument "
                           f"{'beta' if isinstance(beta, float) else 'alpha'} must not be a "
                           f"floating point number.")
    product = aten.outer.default(vec1, vec2)
    product = product if alpha == 1 else product * alpha
    result = product.expand_as(input) * 1 if beta == 0 else \
        (input if beta == 1 else input * beta) + product
    return result if out is None else out.copy_(result)


def cholesky_inverse(input, upper=False, *, out=None):
    """The inverse of ``A = L L^H`` (or ``U^H U``) from its Cholesky factor."""
    n = input.shape[-1]
    eye = aten.eye.m(n, n, dtype=input.dtype, device=input.device)
    result = aten.cholesky_solve.default(eye.expand_as(input), input, upper)
    return result if out is None else out.copy_(result)


def renorm(input, p, dim, maxnorm, *, out=None):
    """Each slice along ``dim`` with a p-norm above ``maxnorm`` scaled down to it."""
    if p <= 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm}")
    dim = dim % max(input.ndim, 1)
    others = [d for d in range(input.ndim) if d != dim]
    norms = aten.linalg_vector_norm.default(input, p, others, True) if others else input.abs()
    factor = (maxnorm / (norms + 1e-7)).where(norms > maxnorm, norms.new_ones(()))
    result = input * factor
    return result if out is None else out.copy_(result)


# --- shape --------------------------------------------------------------------------------------
def fill_diagonal_(self, fill_value, wrap=False):
    """Fill the main diagonal in place (every dim equal beyond 2-D); ``wrap`` restarts it
    below a tall matrix's square top, as ATen's strided writes do."""
    if self.ndim < 2:
        raise RuntimeError("dimensions must larger than 1")
    height, width = self.shape[0], self.shape[1]
    if self.ndim > 2 and len(set(self.shape)) != 1:
        raise RuntimeError("all dimensions of input must be of equal length")
    step = sum(self.stride())
    size = min(height, width)
    self.as_strided((size,), (step,), self.storage_offset()).fill_(fill_value)
    if wrap and self.ndim == 2 and height > width + 1:
        wrapped = (self.numel() + width) // (width + 1) - size
        self.as_strided((wrapped,), (step,),
                        self.storage_offset() + self.stride(0) * (width + 1)).fill_(fill_value)
    return self


def is_nonzero(input):
    if input.numel() == 0:
        raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
    if input.numel() > 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    return bool(input.item())


def is_same_size(input, other):
    return tuple(input.shape) == tuple(other.shape)


def adjoint(input):
    return input.transpose(-2, -1).conj()


def narrow_copy(input, dim, start, length):
    return input.narrow(dim, start, length).clone()


def _cumulative_(name):
    def method(self, dim, *, dtype=None):
        result = getattr(self, name)(dim, dtype=dtype)
        if result.dtype is not self.dtype:
            raise RuntimeError(_bad_in_place(self, result))
        return self.copy_(result)
    method.__name__ = method.__qualname__ = name + "_"
    return method


def unravel_index(indices, shape):
    """The coordinates of flat ``indices`` in ``shape`` (one tensor per dim; indices out of
    range wrap, as PyTorch's floor division and remainder make them)."""
    if indices.dtype.is_floating_point or indices.dtype.is_complex or indices.dtype is D.bool_:
        raise TypeError(f"expected 'indices' to be integer dtype, but got {indices.dtype}")
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    if any(size < 0 for size in shape):
        raise ValueError(f"'shape' cannot have negative values, but got {shape}")
    coefs = [math.prod(shape[d + 1:]) for d in range(len(shape))]
    long = {"dtype": D.int64, "device": indices.device}
    flat = indices.unsqueeze(-1)
    coords = flat.div(indices.new_tensor(coefs, **long), rounding_mode="floor")
    return (coords % indices.new_tensor(shape, **long)).unbind(-1)


def typename(obj):
    """``torch.typename``: a tensor's legacy type name ("torch.FloatTensor" style, strata's
    prefix), else the object's qualified class name."""
    if hasattr(obj, "type") and hasattr(obj, "dtype"):
        return obj.type()
    module = type(obj).__module__
    name = type(obj).__qualname__
    return name if module in ("builtins", "__builtin__", None) else f"{module}.{name}"


def index_reduce(input, dim, index, source, reduce, *, include_self=True):
    """``scatter_reduce`` with ``index`` (one entry per slice of ``source`` along ``dim``)
    expanded over the other dims: the same reductions, include_self and gradients."""
    if reduce not in ("prod", "mean", "amax", "amin"):
        raise RuntimeError(f"index_reduce(): Expected reduce to be one of prod, mean, amax or "
                           f"amin but got {reduce}.")
    dim = dim % max(input.ndim, 1)
    view = [1] * max(source.ndim, 1)
    view[dim] = -1
    spread = index.reshape(view).expand(source.shape if source.ndim else (1,))
    return input.scatter_reduce(dim, spread, source, reduce, include_self=include_self)


def index_reduce_(self, dim, index, source, reduce, *, include_self=True):
    return self.copy_(index_reduce(self, dim, index, source, reduce, include_self=include_self))


def nonzero_static(input, *, size, fill_value=-1):
    """The first ``size`` rows of ``nonzero``, padded with ``fill_value`` rows."""
    if size < 0:
        raise RuntimeError("nonzero_static: 'size' must be an non-negative integer")
    found = input.nonzero()[:size]
    if found.shape[0] == size:
        return found
    pad = found.new_full((size - found.shape[0], found.shape[1]), fill_value)
    return aten.cat.default([found, pad])


# --- integers and floating-point neighbours ---------------------------------------------------
def _integer_pair(name, input, other):
    """``input`` and ``other`` broadcast and promoted, for ``gcd``/``lcm`` (integer dtypes
    only, as ATen's ``gcd_cpu``)."""
    if not hasattr(other, "dtype"):
        raise TypeError(f"{name}(): argument 'other' (position 2) must be Tensor, not "
                        f"{type(other).__name__}")
    dtype = D.promote_types(input.dtype, other.dtype)
    if dtype.category != D.INTEGRAL or dtype is D.bool_:
        raise NotImplementedError(f"\"{name}_cpu\" not implemented for "
                                  f"'{R.type_name(dtype)}'")
    return broadcast_tensors(input.to(dtype), other.to(dtype))


def gcd(input, other, *, out=None):
    """The greatest common divisor, non-negative, ``gcd(0, 0) = 0``: Euclid's algorithm on
    whole tensors, one remainder per step until every divisor is zero."""
    a, b = (t.abs() for t in _integer_pair("gcd", input, other))
    while bool((b != 0).any()):
        nonzero = b != 0
        a, b = aten.where.self(nonzero, b, a), aten.where.self(
            nonzero, a.remainder(aten.where.self(nonzero, b, b.new_ones(()))), b)
    return a if out is None else out.copy_(a)


def lcm(input, other, *, out=None):
    """``|a / gcd(a, b) * b|``, zero where either is zero (ATen's ``calc_lcm``)."""
    a, b = _integer_pair("lcm", input, other)
    g = gcd(a, b)
    safe = aten.where.self(g == 0, g.new_ones(()), g)
    result = aten.where.self(g == 0, g, (a.div(safe, rounding_mode="trunc") * b).abs())
    return result if out is None else out.copy_(result)


_FLOAT_BITS = {D.float32: D.int32, D.float64: D.int64, D.float16: D.int16, D.bfloat16: D.int16}


def nextafter(input, other, *, out=None):
    """The next representable number after ``input`` towards ``other`` (C's ``nextafter``):
    ``other`` where they are equal, NaN where either is, else one step of the bit pattern
    (the smallest subnormal with ``other``'s sign from zero). Its gradient is ATen's: the
    output's to ``input``, zero to ``other``."""
    if not hasattr(other, "dtype"):
        raise TypeError(f"nextafter(): argument 'other' (position 2) must be Tensor, not "
                        f"{type(other).__name__}")
    dtype = D.promote_types(input.dtype, other.dtype)
    if dtype not in _FLOAT_BITS:
        raise NotImplementedError(f"\"nextafter_cpu\" not implemented for "
                                  f"'{R.type_name(dtype)}'")
    x, y = broadcast_tensors(input.to(dtype), other.to(dtype))
    stepped = _next_toward(x.detach(), y.detach())
    # the value is ``stepped``; the terms subtracted are +0.0 (x - x of a finite number), so
    # autograd sees PyTorch's derivative: the output's gradient to ``input`` where it moved
    # (x != y), zero to ``other``; at an infinite or NaN x, where x - x is NaN, zero (PyTorch:
    # the gradient)
    xd, yd = x.detach(), y.detach()
    result = stepped - (xd - x).masked_fill(~xd.isfinite() | (xd == yd), 0) - \
        (yd - y).masked_fill(~yd.isfinite(), 0) * 0
    return result if out is None else out.copy_(result)


def _next_toward(x, y):
    bits = x.contiguous().view(_FLOAT_BITS[x.dtype])
    # away from zero where y lies beyond x in x's own direction: the magnitude grows
    grows = (y > x) == (x > 0)
    stepped = aten.where.self(grows, bits + 1, bits - 1).view(x.dtype)
    smallest = bits.new_ones(()).view(x.dtype)          # the smallest subnormal
    result = aten.where.self(x == 0, aten.where.self(y > 0, smallest, -smallest), stepped)
    result = aten.where.self(x.isnan() | y.isnan(), x + y, result)
    return aten.where.self(x == y, y, result)


# --- deprecated linear algebra (PyTorch still has them, with a warning once) -------------------
_warned = set()


def _deprecated(name, message):
    if name not in _warned:
        _warned.add(name)
        warnings.warn(message, UserWarning, stacklevel=3)


def qr(input, some=True, *, out=None):
    """``torch.qr``: ``linalg.qr`` in mode "reduced" (``some``) or "complete"."""
    _deprecated("qr", "torch.qr is deprecated in favor of torch.linalg.qr and will be removed "
                "in a future PyTorch release.\nThe boolean parameter 'some' has been replaced "
                "with a string parameter 'mode'.\nQ, R = torch.qr(A, some)\nshould be replaced "
                "with\nQ, R = torch.linalg.qr(A, 'reduced' if some else 'complete')")
    q, r = aten.linalg_qr.default(input, "reduced" if some else "complete")
    if out is not None:
        q, r = out[0].copy_(q), out[1].copy_(r)
    return return_types.qr(q, r)


def triangular_solve(input, A, upper=True, transpose=False, unitriangular=False, *, out=None):
    """``torch.triangular_solve(b, A)``: X with ``A X = b`` (``A^T X = b`` with
    ``transpose``), A triangular, batches broadcast; and A broadcast and copied."""
    _deprecated("triangular_solve",
                "torch.triangular_solve is deprecated in favor of "
                "torch.linalg.solve_triangularand will be removed in a future PyTorch release."
                "\ntorch.linalg.solve_triangular has its arguments reversed and does not return "
                "a copy of one of the inputs.\nX = torch.triangular_solve(B, A).solution\nshould"
                " be replaced with\nX = torch.linalg.solve_triangular(A, B).")
    if input.dtype is not A.dtype:
        raise RuntimeError(f"Expected b and A to have the same dtype, but found b of type "
                           f"{R.type_name(input.dtype)} and A of type {R.type_name(A.dtype)} "
                           f"instead.")
    if A.ndim < 2 or A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"A must be batches of square matrices, but they are "
                           f"{A.shape[-2] if A.ndim > 1 else 1} by {A.shape[-1]} matrices")
    batch = tuple(broadcast_shapes(tuple(input.shape[:-2]), tuple(A.shape[:-2])))
    b = input.expand(*batch, *input.shape[-2:])
    a = A.expand(*batch, *A.shape[-2:])
    solution = aten.linalg_solve_triangular.default(
        a.mT if transpose else a, b, upper=upper != bool(transpose), unitriangular=unitriangular)
    coefficient = a.clone()
    if out is not None:
        solution, coefficient = out[0].copy_(solution), out[1].copy_(coefficient)
    return return_types.triangular_solve(solution, coefficient)


def _method_as_function(name):
    def function(input, *args, **kwargs):
        return getattr(input, name)(*args, **kwargs)
    function.__name__ = function.__qualname__ = name
    return function


FUNCTIONS = {
    "positive": positive, "float_power": float_power, "isposinf": isposinf,
    "isneginf": isneginf, "inner": inner, "addr": addr, "cholesky_inverse": cholesky_inverse,
    "renorm": renorm, "is_nonzero": is_nonzero, "is_same_size": is_same_size,
    "adjoint": adjoint, "narrow_copy": narrow_copy,
    "split_with_sizes": lambda input, split_sizes, dim=0: input.split(list(split_sizes), dim),
    "unsafe_split": lambda input, split_size, dim=0: input.split(split_size, dim),
    "unsafe_chunk": lambda input, chunks, dim=0: input.chunk(chunks, dim),
    "unravel_index": unravel_index, "typename": typename, "index_reduce": index_reduce,
    "nonzero_static": nonzero_static, "gcd": gcd, "lcm": lcm, "nextafter": nextafter,
    "qr": qr, "triangular_solve": triangular_solve,
    "chain_matmul": lambda *matrices: aten.linalg_multi_dot.default(list(matrices))
    if len(matrices) > 1 else matrices[0].clone(),
} | {name: _method_as_function(name) for name in (
    "is_conj", "is_neg", "resolve_conj", "resolve_neg", "is_inference", "is_signed",
    "get_device")}
METHODS = {
    "positive": positive, "float_power": float_power, "float_power_": float_power_,
    "isposinf": isposinf, "isneginf": isneginf, "inner": inner, "addr": addr,
    "addr_": _in_place("addr_", addr), "cholesky_inverse": cholesky_inverse,
    "renorm": renorm, "renorm_": _in_place("renorm_", renorm), "is_nonzero": is_nonzero,
    "is_same_size": is_same_size, "adjoint": adjoint, "narrow_copy": narrow_copy,
    "fill_diagonal_": fill_diagonal_,
    "tril_": _in_place("tril_", lambda self, diagonal=0: self.tril(diagonal)),
    "triu_": _in_place("triu_", lambda self, diagonal=0: self.triu(diagonal)),
    "cumsum_": _cumulative_("cumsum"), "cumprod_": _cumulative_("cumprod"),
    "sgn_": _in_place("sgn_", lambda self: self.sgn()),
    "xlogy_": _in_place("xlogy_", lambda self, other: self.xlogy(other)),
    "addmv_": _in_place("addmv_", lambda self, mat, vec, *, beta=1, alpha=1:
                        aten.addmv.default(self, mat, vec, beta=beta, alpha=alpha)),
    "addbmm_": _in_place("addbmm_", lambda self, b1, b2, *, beta=1, alpha=1:
                         aten.addbmm.default(self, b1, b2, beta=beta, alpha=alpha)),
    "baddbmm_": _in_place("baddbmm_", lambda self, b1, b2, *, beta=1, alpha=1:
                          aten.baddbmm.default(self, b1, b2, beta=beta, alpha=alpha)),
    "split_with_sizes": FUNCTIONS["split_with_sizes"],
    "unsafe_split": FUNCTIONS["unsafe_split"], "unsafe_chunk": FUNCTIONS["unsafe_chunk"],
    "diagflat": diagflat, "index_reduce": index_reduce, "index_reduce_": index_reduce_,
    "nonzero_static": nonzero_static, "to_sparse_coo": lambda self: self.to_sparse(),
    "gcd": gcd, "gcd_": _in_place("gcd_", gcd), "lcm": lcm, "lcm_": _in_place("lcm_", lcm),
    "nextafter": nextafter, "nextafter_": _in_place("nextafter_", nextafter),
    "qr": qr, "triangular_solve": triangular_solve,
}
