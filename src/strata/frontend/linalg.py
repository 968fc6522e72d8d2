"""Frontends of the linalg family whose Python signature differs from their schema, and the
functions of the ``strata.linalg`` namespace.

``einsum(eq, *operands)`` takes varargs (and the sublist format), ``tensordot`` an int or a pair
of dim lists, ``cdist`` a string ``compute_mode``; the ``linalg`` factorizations return named
tuples (``torch.return_types.linalg_svd(U, S, Vh)``) and ``matrix_norm``/``norm`` pick an overload
by the type of ``ord``.
"""

import numbers
from collections import namedtuple

from ..functions import write_out
from ..ops import aten
from ..ops import factorization_composites as FC
from ..ops import factorizations as LF
from ..ops import linalg as L
from ..ops import linalg_composites as LC
from ..ops import lu as LU

linalg_svd = namedtuple("linalg_svd", ["U", "S", "Vh"])
linalg_qr = namedtuple("linalg_qr", ["Q", "R"])
linalg_eigh = namedtuple("linalg_eigh", ["eigenvalues", "eigenvectors"])
linalg_eig = namedtuple("linalg_eig", ["eigenvalues", "eigenvectors"])
linalg_slogdet = namedtuple("linalg_slogdet", ["sign", "logabsdet"])
linalg_lstsq = namedtuple("linalg_lstsq", ["solution", "residuals", "rank", "singular_values"])
svd_result = namedtuple("svd", ["U", "S", "V"])
geqrf_result = namedtuple("geqrf", ["a", "tau"])
linalg_lu = namedtuple("linalg_lu", ["P", "L", "U"])
linalg_lu_factor = namedtuple("linalg_lu_factor", ["LU", "pivots"])
linalg_lu_factor_ex = namedtuple("linalg_lu_factor_ex", ["LU", "pivots", "info"])
lu_unpack_result = namedtuple("lu_unpack", ["P", "L", "U"])


def _out(result, out):
    """PyTorch's ``out=`` for one tensor or a tuple of them."""
    if out is None:
        return result
    if isinstance(result, tuple):
        for o, r in zip(out, result):
            write_out(o, r)
        return out
    return write_out(out, result)


# --- strata.* ------------------------------------------------------------------------------------

def _sublist_equation(args):
    """``einsum(a, [0, 1], b, [1, 2], [0, 2])`` -> ``"ab,bc->ac"``."""
    def letters(sub):
        out = []
        for s in sub:
            if s is Ellipsis:
                out.append("...")
            elif 0 <= s < 26:
                out.append(chr(ord("A") + s))
            elif 26 <= s < 52:
                out.append(chr(ord("a") + s - 26))
            else:
                raise RuntimeError(f"einsum(): subscript in subscript list is not within the "
                                   f"valid range [0, 52), got {s}")
        return "".join(out)

    operands = list(args[0:len(args) - len(args) % 2:2])
    terms = [letters(s) for s in args[1::2]]
    equation = ",".join(terms)
    if len(args) % 2:
        equation += "->" + letters(args[-1])
    return equation, operands


def einsum(*args):
    """``einsum("ij,jk->ik", a, b)``, ``einsum("ij,jk", [a, b])`` or the sublist format."""
    if not args:
        raise TypeError("einsum() missing required argument 'equation'")
    if isinstance(args[0], str):
        equation, operands = args[0], list(args[1:])
        if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
            operands = list(operands[0])
    else:
        equation, operands = _sublist_equation(args)
    if not operands:
        raise ValueError("einsum(): must specify the equation string and at least one operand, "
                         "or at least one operand and its subscripts list")
    return L.einsum(equation, operands)


def tensordot(a, b, dims=2, out=None):
    if isinstance(dims, (tuple, list)):
        dims_a, dims_b = dims
        dims_a = [dims_a] if isinstance(dims_a, int) else list(dims_a)
        dims_b = [dims_b] if isinstance(dims_b, int) else list(dims_b)
    else:
        if hasattr(dims, "tolist"):
            dims = dims.tolist()
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > min(a.ndim, b.ndim):
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}")
        dims_a, dims_b = list(range(-dims, 0)), list(range(dims))
    return _out(LC.tensordot(a, b, dims_a, dims_b), out)


_CDIST_MODES = ("use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist",
                "donot_use_mm_for_euclid_dist")


def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    """Pairwise p-norm distances; ``compute_mode`` picks, for p = 2, between the difference
    form and ATen's matrix-product form (as the op's int: 0, 1, 2)."""
    if compute_mode not in _CDIST_MODES:
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    return LC.cdist(x1, x2, p, _CDIST_MODES.index(compute_mode))


def det(input):
    return LF.linalg_det(input)


def inverse(input, *, out=None):
    return _out(LF.linalg_inv(input), out)


def matrix_power(input, n):
    return LF.linalg_matrix_power(input, n)


def pinverse(input, rcond=1e-15):
    return LF.linalg_pinv(input, rtol=rcond)


# --- strata.linalg.* ------------------------------------------------------------------------------

def inv(A, *, out=None):
    return _out(LF.linalg_inv(A), out)


def linalg_det(A, *, out=None):
    return _out(LF.linalg_det(A), out)


def solve(A, B, *, left=True, out=None):
    return _out(LF.linalg_solve(A, B, left=left), out)


def cholesky(A, *, upper=False, out=None):
    return _out(LF.linalg_cholesky(A, upper=upper), out)


def qr(A, mode="reduced", *, out=None):
    return _out(linalg_qr(*LF.linalg_qr(A, mode)), out)


def svd(A, full_matrices=True, *, driver=None, out=None):
    return _out(linalg_svd(*LF.linalg_svd(A, full_matrices, driver=driver)), out)


def svdvals(A, *, driver=None, out=None):
    return _out(LF.linalg_svdvals(A, driver=driver), out)


def eigh(A, UPLO="L", *, out=None):
    return _out(linalg_eigh(*LF.linalg_eigh(A, UPLO)), out)


def pinv(A, *, atol=None, rtol=None, hermitian=False, out=None):
    return _out(LF.linalg_pinv(A, atol=atol, rtol=rtol, hermitian=hermitian), out)


def slogdet(A, *, out=None):
    return _out(linalg_slogdet(*LU.linalg_slogdet(A)), out)


def legacy_svd(input, some=True, compute_uv=True, *, out=None):
    """``torch.svd``: (U, S, V) with V, not Vh (prefer ``linalg.svd``)."""
    return _out(svd_result(*FC.svd(input, some, compute_uv)), out)


def multi_dot(tensors, *, out=None):
    FC.check_multi_dot(list(tensors))
    return _out(FC.linalg_multi_dot(list(tensors)), out)


def geqrf(input, *, out=None):
    """LAPACK's QR in Householder form: ``(a, tau)`` (see ``householder_product``)."""
    return _out(geqrf_result(*LF.geqrf(input)), out)


def householder_product(A, tau, *, out=None):
    return _out(FC.linalg_householder_product(A, tau), out)


def matrix_exp(A):
    return FC.linalg_matrix_exp(A)


def matrix_rank(A, tol=None, hermitian=False, *, atol=None, rtol=None, out=None):
    """``tol`` is the deprecated name of ``atol`` (with rtol then 0), as in PyTorch."""
    if tol is not None:
        atol, rtol = tol, 0.0
    return _out(FC.linalg_matrix_rank(A, atol=atol, rtol=rtol, hermitian=hermitian), out)


def solve_triangular(A, B, *, upper, left=True, unitriangular=False, out=None):
    return _out(FC.linalg_solve_triangular(A, B, upper=upper, left=left,
                                           unitriangular=unitriangular), out)


def lstsq(A, B, rcond=None, *, driver=None):
    return linalg_lstsq(*FC.linalg_lstsq(A, B, rcond, driver=driver))


def eig(A, *, out=None):
    """Eigenvalues and eigenvectors of a general square matrix (complex results)."""
    return _out(linalg_eig(*LF.linalg_eig(A)), out)


def lu(A, *, pivot=True, out=None):
    return _out(linalg_lu(*LU.linalg_lu(A, pivot=pivot)), out)


def lu_factor_ex(A, *, pivot=True, check_errors=False, out=None):
    return _out(linalg_lu_factor_ex(*LU.linalg_lu_factor_ex(A, pivot=pivot,
                                                            check_errors=check_errors)), out)


def lu_factor(A, *, pivot=True, out=None):
    """``lu_factor_ex`` that raises for a zero pivot (U would divide by zero in ``lu_solve``)."""
    LU.check_lu_input("torch.lu_factor", A, pivot)
    factors, pivots, info = LU.linalg_lu_factor_ex(A, pivot=pivot)
    if not A.is_meta and info.numel() and bool(info.ne(0).any()):
        raise RuntimeError(LU.zero_pivot_message("torch.linalg.lu_factor", info, A.ndim > 2))
    return _out(linalg_lu_factor(factors, pivots), out)


def lu_solve(LU_, pivots, B, *, left=True, adjoint=False, out=None):
    return _out(LU.linalg_lu_solve(LU_, pivots, B, left=left, adjoint=adjoint), out)


def lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True, *, out=None):
    return _out(lu_unpack_result(*LU.lu_unpack(LU_data, LU_pivots, unpack_data,
                                               unpack_pivots)), out)


def legacy_lu(A, pivot=True, get_infos=False, out=None):
    """``torch.lu`` (deprecated for ``linalg.lu_factor``): ``(LU, pivots[, infos])``,
    never raising for a singular matrix."""
    factors, pivots, info = LU.linalg_lu_factor_ex(A, pivot=pivot)
    return _out((factors, pivots, info) if get_infos else (factors, pivots), out)


def legacy_lu_solve(b, LU_data, LU_pivots, *, out=None):
    """``torch.lu_solve(b, LU_data, LU_pivots)`` (deprecated for ``linalg.lu_solve``)."""
    return _out(LU.linalg_lu_solve(LU_data, LU_pivots, b), out)



def eigvals(A, *, out=None):
    return _out(LF.linalg_eigvals(A), out)


def linalg_matrix_power(A, n, *, out=None):
    return _out(LF.linalg_matrix_power(A, n), out)


def linalg_cross(input, other, *, dim=-1, out=None):
    return _out(LC.linalg_cross(input, other, dim=dim), out)


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None, out=None):
    op = LF.linalg_matrix_norm_str if isinstance(ord, str) else LF.linalg_matrix_norm
    return _out(op(A, ord, list(dim), keepdim, dtype=dtype), out)


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None, out=None):
    return _out(aten.linalg_vector_norm.default(x, ord, dim, keepdim, dtype=dtype), out)


def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None, out=None):
    """A vector norm over ``dim`` (an int or None) or a matrix norm (``dim`` a 2-tuple, or a 2-D
    input with ``ord`` given), as ``torch.linalg.norm``."""
    if isinstance(dim, numbers.Integral):
        dim = (dim,)
    if (dim is not None and len(dim) == 2) or (dim is None and ord is not None and A.ndim == 2):
        result = matrix_norm(A, "fro" if ord is None else ord, (-2, -1) if dim is None else dim,
                             keepdim, dtype=dtype)
    elif dim is None and ord is not None and A.ndim != 1:
        raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must be "
                           f"1D or 2D. Got {A.ndim}D.")
    elif isinstance(ord, str):
        raise RuntimeError(f"linalg.vector_norm: ord {ord} is not supported for vector norms")
    else:
        result = vector_norm(A, 2 if ord is None else ord, dim, keepdim, dtype=dtype)
    return _out(result, out)


def matmul(input, other, *, out=None):
    return _out(L.matmul(input, other), out)


METHODS = {
    "det": det, "slogdet": slogdet, "svd": legacy_svd, "matrix_exp": matrix_exp, "geqrf": geqrf,
    "inverse": lambda self: LF.linalg_inv(self),
    "matrix_power": matrix_power,
    "pinverse": pinverse, "lu": legacy_lu, "lu_solve": legacy_lu_solve,
}
FUNCTIONS = {
    "slogdet": slogdet, "svd": legacy_svd, "matrix_exp": matrix_exp, "geqrf": geqrf,
    "einsum": einsum, "tensordot": tensordot, "cdist": cdist, "det": det, "inverse": inverse,
    "matrix_power": matrix_power, "pinverse": pinverse, "lu": legacy_lu,
    "lu_solve": legacy_lu_solve, "lu_unpack": lu_unpack,
}
