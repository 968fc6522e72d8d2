"""Linear algebra, part 2: ``torch.linalg``'s inverse, determinant, solve, factorizations and
``pinv`` (one LAPACK call each, so primitives), and what decomposes into them: matrix norms,
``matrix_power`` (the rest of ``torch.linalg``'s composites: ``factorization_composites.py``).

Only float32/float64 are supported, as on PyTorch's CPU: integers get "Expected a floating point
or complex tensor", half types PyTorch's missing-kernel NotImplementedError. Numerical failures
(singular, not positive-definite) raise ``LinAlgError``, a RuntimeError, from the kernel: they
depend on values, so meta functions cannot see them.
"""

import math

from ..core import dtype as D
from ..core.shape import broadcast_shapes, contiguous_strides, wrap_dim
from . import meta_rules as R
from . import shape as S
from .factory import clone, copy_, eye
from .linalg import matmul
from .op import TensorSpec, aten, defop, register_decomposition
from .reductions import sum as reduce_sum
from .reductions import vector_norm as linalg_vector_norm


class _LinAlgError(RuntimeError):
    """A numerical failure (singular matrix, not positive-definite): ``strata.linalg.LinAlgError``.

    Named like PyTorch's ``torch._C._LinAlgError`` so messages and ``except`` clauses agree."""


LinAlgError = _LinAlgError


def _not_implemented(name, dt):
    raise NotImplementedError(f"\"{name}\" not implemented for '{R.type_name(dt)}'")


def check_matrix(name, A, arg="A"):
    if A.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor {arg} must have at least 2 dimensions.")


def check_square(name, A):
    check_matrix(name, A)
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"{name}: A must be batches of square matrices, but they are "
                           f"{A.shape[-2]} by {A.shape[-1]} matrices")


def check_float(name, A, kernel=None, complex_ok=False):
    """Float32/float64 (and complex where ``complex_ok``): integers get PyTorch's message, half
    types its missing-kernel one."""
    if A.dtype.category != D.FLOATING and not (complex_ok and A.dtype.is_complex):
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. Got "
                           f"{R.type_name(A.dtype)}")
    if A.dtype in (D.float16, D.bfloat16):
        if kernel is None:
            raise RuntimeError(f"{name}: Low precision dtypes not supported. Got "
                               f"{R.type_name(A.dtype)}")
        _not_implemented(kernel, A.dtype)


def check_lapack_float(A):
    """The check of ATen's LAPACK dispatch, which some functions reach before any of theirs."""
    if A.dtype not in (D.float32, D.float64):
        raise RuntimeError("This function doesn't handle types other than float and double")


def _inv_meta(A):
    check_square("linalg.inv", A)
    check_float("linalg.inv", A)
    return TensorSpec(tuple(A.shape), A.dtype)


def _det_meta(A):
    check_square("linalg.det", A)
    check_float("linalg.det", A, "lu_cpu")
    return TensorSpec(tuple(A.shape[:-2]), A.dtype)


def solve_is_vector(A, B):
    """PyTorch's rule: B is a (batch of) vector(s) if 1-D or shaped like A without its last dim."""
    return B.ndim == 1 or (B.ndim == A.ndim - 1 and tuple(B.shape) == tuple(A.shape[:-1]))


def _solve_meta(A, B, left=True):
    check_matrix("linalg.solve", A)
    if B.ndim < 1:
        raise RuntimeError("linalg.solve: The input tensor B must have at least 2 dimensions.")
    if A.dtype is not B.dtype:
        raise RuntimeError(f"linalg.solve: Expected A and B to have the same dtype, but found A "
                           f"of type {R.type_name(A.dtype)} and B of type "
                           f"{R.type_name(B.dtype)} instead")
    check_square("linalg.solve", A)
    check_float("linalg.solve", A, "lu_cpu", complex_ok=True)
    n = A.shape[-1]
    if solve_is_vector(A, B):
        if B.shape[-1] != n:
            raise RuntimeError(f"linalg.solve: Incompatible shapes of A and B for the equation "
                               f"{'AX = B' if left else 'XA = B'} ({n}x{n} and "
                               f"{B.shape[-1]}x1)")
        batch = broadcast_shapes(tuple(A.shape[:-2]), tuple(B.shape[:-1]))
        return TensorSpec(batch + (n,), A.dtype)
    rows, cols = B.shape[-2], B.shape[-1]
    if (rows if left else cols) != n:
        raise RuntimeError(f"linalg.solve: Incompatible shapes of A and B for the equation "
                           f"{'AX = B' if left else 'XA = B'} ({n}x{n} and {rows}x{cols})")
    batch = broadcast_shapes(tuple(A.shape[:-2]), tuple(B.shape[:-2]))
    return TensorSpec(batch + (rows, cols), A.dtype)


def _cholesky_meta(self, upper=False):
    check_square("linalg.cholesky", self)
    check_float("linalg.cholesky", self, "cholesky_cpu")
    return TensorSpec(tuple(self.shape), self.dtype)


def _qr_meta(A, mode="reduced"):
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of "
                           f"'reduced' (default), 'r', or 'complete'")
    check_matrix("linalg.qr", A)
    check_float("linalg.qr", A, "geqrf_cpu")
    *batch, m, n = A.shape
    k = min(m, n)
    batch = tuple(batch)
    if mode == "r":
        return TensorSpec((0,), A.dtype), TensorSpec(batch + (k, n), A.dtype)
    q_cols = m if mode == "complete" else k
    return TensorSpec(batch + (m, q_cols), A.dtype), TensorSpec(batch + (q_cols, n), A.dtype)


def _check_driver(driver):
    if driver is not None:
        raise RuntimeError("torch.linalg.svd: keyword argument `driver=` is only supported on "
                           "CUDA inputs with cuSOLVER backend.")


def _svd_meta(A, full_matrices=True, driver=None):
    check_matrix("linalg.svd", A)
    check_float("linalg.svd", A, "linalg_svd_cpu")
    _check_driver(driver)
    *batch, m, n = A.shape
    k = min(m, n)
    batch = tuple(batch)
    u_cols, v_rows = (m, n) if full_matrices else (k, k)
    return (TensorSpec(batch + (m, u_cols), A.dtype), TensorSpec(batch + (k,), A.dtype),
            TensorSpec(batch + (v_rows, n), A.dtype))


def _svdvals_meta(A, driver=None):
    check_matrix("linalg.svd", A)
    check_float("linalg.svd", A, "linalg_svd_cpu")
    _check_driver(driver)
    return TensorSpec(tuple(A.shape[:-2]) + (min(A.shape[-2:]),), A.dtype)


def _eigh_meta(self, UPLO="L"):
    check_square("linalg.eigh", self)
    check_float("linalg.eigh", self, "linalg_eigh_cpu")
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    return TensorSpec(tuple(self.shape[:-1]), self.dtype), TensorSpec(tuple(self.shape),
                                                                      self.dtype)


linalg_inv = defop("linalg_inv(Tensor A) -> Tensor", _inv_meta)
linalg_det = defop("linalg_det(Tensor A) -> Tensor", _det_meta)
linalg_solve = defop("linalg_solve(Tensor A, Tensor B, *, bool left=True) -> Tensor", _solve_meta)
linalg_cholesky = defop("linalg_cholesky(Tensor self, *, bool upper=False) -> Tensor",
                        _cholesky_meta)
linalg_qr = defop("linalg_qr(Tensor A, str mode='reduced') -> (Tensor Q, Tensor R)", _qr_meta)
linalg_svd = defop("linalg_svd(Tensor A, bool full_matrices=True, *, str? driver=None) -> "
                   "(Tensor U, Tensor S, Tensor Vh)", _svd_meta)
linalg_svdvals = defop("linalg_svdvals(Tensor A, *, str? driver=None) -> Tensor", _svdvals_meta)
linalg_eigh = defop("linalg_eigh(Tensor self, str UPLO='L') -> (Tensor eigenvalues, "
                    "Tensor eigenvectors)", _eigh_meta)


def _eig_meta(self):
    """Eigenvalues and eigenvectors of a general square matrix: complex even for real input."""
    check_square("linalg.eig", self)
    check_float("linalg.eig", self, "linalg_eig_out_cpu", complex_ok=True)
    out = self.dtype.to_complex()
    return TensorSpec(tuple(self.shape[:-1]), out), TensorSpec(tuple(self.shape), out)


linalg_eig = defop("linalg_eig(Tensor self) -> (Tensor eigenvalues, Tensor eigenvectors)",
                   _eig_meta)
linalg_eigvals = defop("linalg_eigvals(Tensor self) -> Tensor")


@register_decomposition(linalg_eigvals)
def _eigvals(self):
    return linalg_eig(self)[0]


def _pinv_meta(self, atol=None, rtol=None, hermitian=False):
    if self.dtype not in (D.float32, D.float64) or self.ndim < 2:
        shape = ", ".join(map(str, self.shape))
        raise RuntimeError(f"linalg.pinv({R.type_name(self.dtype)}{{[{shape}]}}): expected a "
                           f"tensor with 2 or more dimensions of float, double, cfloat or "
                           f"cdouble types")
    shape = tuple(self.shape[:-2]) + (self.shape[-1], self.shape[-2])
    return TensorSpec(shape, self.dtype, contiguous_strides(shape))


def pinv_tolerances(dtype, m, n, atol=None, rtol=None):
    """PyTorch's defaults: rtol = eps * max(m, n), unless only a positive atol is given."""
    if rtol is None:
        rtol = 0.0 if atol is not None and atol > 0 else D.finfo(dtype).eps * max(m, n)
    return 0.0 if atol is None else atol, rtol


def _geqrf_meta(self):
    if self.ndim < 2:
        raise RuntimeError("torch.geqrf: input must have at least 2 dimensions.")
    if self.dtype not in (D.float32, D.float64):
        _not_implemented("geqrf_cpu", self.dtype)
    *batch, m, n = self.shape
    return TensorSpec(tuple(self.shape), self.dtype), TensorSpec(tuple(batch) + (min(m, n),),
                                                                 self.dtype)


# LAPACK's QR in Householder form (R on and above the diagonal, the reflectors' vectors below,
# their scales in tau): what orthogonal parametrizations build on. Not differentiable, as in
# PyTorch.
geqrf = defop("geqrf(Tensor self) -> (Tensor a, Tensor tau)", _geqrf_meta, method=True,
              function=True)


# A primitive (SVD, or eigh when hermitian, in one kernel) so that autograd uses PyTorch's pinv
# formula, which differs from differentiating through the factorization when the tolerance cuts
# singular values or the input is only read as hermitian.
linalg_pinv = defop("linalg_pinv.atol_rtol_float(Tensor self, *, float? atol=None, "
                    "float? rtol=None, bool hermitian=False) -> Tensor", _pinv_meta)


# --- composites -----------------------------------------------------------------------------------
cholesky = defop("cholesky(Tensor self, bool upper=False) -> Tensor", method=True, function=True)
linalg_matrix_norm = defop("linalg_matrix_norm(Tensor self, Scalar ord, int[] dim=[-2, -1], "
                           "bool keepdim=False, *, ScalarType? dtype=None) -> Tensor")
linalg_matrix_norm_str = defop("linalg_matrix_norm.str_ord(Tensor self, str ord='fro', "
                               "int[] dim=[-2, -1], bool keepdim=False, *, "
                               "ScalarType? dtype=None) -> Tensor")
linalg_matrix_power = defop("linalg_matrix_power(Tensor self, int n) -> Tensor")


@register_decomposition(cholesky)
def _cholesky(self, upper=False):
    return linalg_cholesky(self, upper=upper)


def _matrix_norm_checks(A, dim, dtype, low_precision):
    check_matrix("linalg.matrix_norm", A)
    if A.dtype.category != D.FLOATING:
        raise RuntimeError(f"linalg.matrix_norm: Expected a floating point or complex tensor as "
                           f"input. Got {R.type_name(A.dtype)}")
    if not low_precision and A.dtype in (D.float16, D.bfloat16):
        raise RuntimeError(f"linalg.matrix_norm: Low precision dtypes not supported. Got "
                           f"{R.type_name(A.dtype)}")
    dim = list(dim)
    if len(dim) != 2:
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got "
                           f"{' '.join(map(str, dim))}")
    d0, d1 = wrap_dim(dim[0], A.ndim), wrap_dim(dim[1], A.ndim)
    if d0 == d1:
        raise RuntimeError(f"linalg.matrix_norm: dims must be different. Got ({dim[0]}, "
                           f"{dim[1]})")
    if dtype is not None:
        if dtype.category != D.FLOATING:
            raise RuntimeError(f"linalg.matrix_norm: dtype should be floating point or complex, "
                               f"but got {R.type_name(dtype)}")
        if D.promote_types(A.dtype, dtype) is not dtype:
            raise RuntimeError(f"linalg.matrix_norm: the dtype of the input "
                               f"({R.type_name(A.dtype)}) should be convertible without "
                               f"narrowing to the specified dtype ({R.type_name(dtype)})")
        A = A.to(dtype)
    return A, d0, d1


def _keep(out, d0, d1, keepdim):
    if keepdim:
        for d in sorted((d0, d1)):
            out = S.unsqueeze(out, d)
    return out


def _over_svdvals(A, d0, d1, keepdim, reduce):
    """``reduce(svdvals, keepdim)`` of the matrices in dims (d0, d1), moved last by a permute
    and, with keepdim, put back by its inverse (ATen's dim backshift permutation)."""
    perm = [d for d in range(A.ndim) if d not in (d0, d1)] + [d0, d1]
    result = reduce(linalg_svdvals(S.permute(A, perm)), keepdim)
    if keepdim:
        result = S.permute(S.unsqueeze(result, -1), [perm.index(d) for d in range(A.ndim)])
    return result


@register_decomposition(linalg_matrix_norm)
def _matrix_norm(self, ord, dim=(-2, -1), keepdim=False, dtype=None):
    """PyTorch's rules: 1/inf are max column/row sums (inf = 1 on the transpose), 2/-2 the
    extreme singular values."""
    ord = float(ord)
    if abs(ord) not in (1.0, 2.0, math.inf):
        raise RuntimeError(f"linalg.matrix_norm: Order {ord:g} not supported.")
    A, d0, d1 = _matrix_norm_checks(self, dim, dtype, abs(ord) != 2.0)
    extreme = aten.amax.default if ord > 0 else aten.amin.default
    if abs(ord) == 2.0:
        if A.numel() == 0:
            return _keep(reduce_sum(A, [d0, d1], False), d0, d1, keepdim)
        return _over_svdvals(A, d0, d1, keepdim, lambda s, keep: extreme(s, [-1], keep))
    if abs(ord) == math.inf:
        d0, d1 = d1, d0
    if not keepdim and d0 < d1:
        d1 -= 1
    return extreme(linalg_vector_norm(A, 1.0, [d0], keepdim), [d1], keepdim)


@register_decomposition(linalg_matrix_norm_str)
def _matrix_norm_str(self, ord="fro", dim=(-2, -1), keepdim=False, dtype=None):
    if ord not in ("fro", "nuc"):
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    A, d0, d1 = _matrix_norm_checks(self, dim, dtype, ord == "fro")
    if ord == "fro":
        return linalg_vector_norm(A, 2.0, [d0, d1], keepdim)
    return _over_svdvals(A, d0, d1, keepdim, lambda s, keep: reduce_sum(s, [-1], keep))


def _contiguous_copy(x):
    return clone(x, memory_format="contiguous_format")


@register_decomposition(linalg_matrix_power)
def _matrix_power(self, n):
    """Binary powering, with PyTorch's fast paths for |n| <= 3 (same rounding)."""
    check_square("linalg.matrix_power", self)
    if n == 0:   # copied into a clone of self, as ATen: the gradient is zero, not missing
        k = self.shape[-1]
        return copy_(_contiguous_copy(self), S.expand(eye(k, k, dtype=self.dtype,
                                                           device=self.device),
                                                       tuple(self.shape)))
    if n == 1:
        return _contiguous_copy(self)
    if n == -1:
        return linalg_inv(self)
    a = linalg_inv(self) if n < 0 else self
    n = abs(n)
    if n == 2:
        return matmul(a, a)
    if n == 3:
        return matmul(matmul(a, a), a)
    z = result = None
    while n > 0:
        bit, n = n % 2, n // 2
        z = a if z is None else matmul(z, z)
        if bit:
            result = z if result is None else matmul(result, z)
    return result
