"""More of ``torch.linalg``, as decompositions over the factorizations of
``factorizations.py``: ``svd`` (the legacy form), ``multi_dot``, ``matrix_exp``,
``matrix_rank``, ``solve_triangular``, ``cholesky_solve``, ``lstsq``, ``householder_product``
and ``orgqr``, with PyTorch's checks and errors.

Separate from ``factorizations.py``, which defines the primitives (one LAPACK call each) and
the matrix norms and powers built right on them.
"""

import math

from ..core import dtype as D
from ..core.shape import broadcast_shapes
from . import meta_rules as R
from . import pointwise as P
from . import shape as S
from .factorizations import (
    _not_implemented,
    check_float,
    check_lapack_float,
    check_matrix,
    check_square,
    linalg_eigh,
    linalg_pinv,
    linalg_solve,
    linalg_svd,
    linalg_svdvals,
    pinv_tolerances,
)
from .factory import _to_copy, clone, eye, full
from .linalg import matmul
from .op import aten, defop, register_decomposition
from .reductions import sum as reduce_sum

# --- more of torch.linalg, as decompositions --------------------------------------------------
svd = defop("svd(Tensor self, bool some=True, bool compute_uv=True) -> (Tensor U, Tensor S, "
            "Tensor V)")
linalg_multi_dot = defop("linalg_multi_dot(Tensor[] tensors) -> Tensor")
linalg_matrix_exp = defop("linalg_matrix_exp(Tensor self) -> Tensor")
linalg_matrix_rank = defop("linalg_matrix_rank.atol_rtol_float(Tensor self, *, float? atol=None, "
                           "float? rtol=None, bool hermitian=False) -> Tensor")
linalg_solve_triangular = defop("linalg_solve_triangular(Tensor self, Tensor B, *, bool upper, "
                                "bool left=True, bool unitriangular=False) -> Tensor")
linalg_lstsq = defop("linalg_lstsq(Tensor self, Tensor b, float? rcond=None, *, "
                     "str? driver=None) -> (Tensor solution, Tensor residuals, Tensor rank, "
                     "Tensor singular_values)")


@register_decomposition(svd)
def _svd(self, some=True, compute_uv=True):
    """The legacy ``torch.svd``: V, not Vh; without ``compute_uv``, U and V are zeros."""
    if not compute_uv:   # zero (m, m) and (n, n) matrices, whatever ``some`` says
        *batch, m, n = self.shape
        return (full(tuple(batch) + (m, m), 0, dtype=self.dtype, device=self.device),
                linalg_svdvals(self),
                full(tuple(batch) + (n, n), 0, dtype=self.dtype, device=self.device))
    U, s, Vh = linalg_svd(self, not some)
    return U, s, S.transpose(Vh, -2, -1)


def check_multi_dot(tensors):
    """ATen's checks, in its order; the frontend runs them too, since an empty list reaches
    no kernel."""
    n = len(tensors)
    if n < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {n}")
    for which, t in (("first", tensors[0]), ("last", tensors[-1])):
        if t.ndim not in (1, 2):
            raise RuntimeError(f"multi_dot(): the {which} tensor must be 1D or 2D but got "
                               f"{t.ndim}D")
    for i in range(1, n - 1):
        if tensors[i].ndim != 2:
            raise RuntimeError(f"multi_dot(): tensor {i} must be 2D but got {tensors[i].ndim}D")
    for i in range(1, n):
        if tensors[i].dtype is not tensors[0].dtype:
            raise RuntimeError(f"multi_dot(): all tensors must have be the same dtype but tensor "
                               f"0 is {R.c_type_name(tensors[0].dtype)} and tensor {i} "
                               f"{R.c_type_name(tensors[i].dtype)}")
    for i in range(1, n):
        if tensors[i - 1].shape[-1] != tensors[i].shape[0]:
            raise RuntimeError(f"multi_dot(): tensors {i - 1} and {i} with shapes "
                               f"{list(tensors[i - 1].shape)} and {list(tensors[i].shape)} "
                               f"cannot be multiplied")


@register_decomposition(linalg_multi_dot)
def _multi_dot(tensors):
    """The chain product in the cheapest order (the textbook dynamic programme); a 1-D first
    (last) operand is a row (column) vector, dropped from the result."""
    check_multi_dot(tensors)
    n = len(tensors)
    first, last = tensors[0].ndim == 1, tensors[-1].ndim == 1
    mats = list(tensors)
    if first:
        mats[0] = S.unsqueeze(mats[0], 0)
    if last:
        mats[-1] = S.unsqueeze(mats[-1], -1)
    dims = [mats[0].shape[0]] + [t.shape[1] for t in mats]
    cost = {(i, i): 0 for i in range(n)}
    split = {}
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i, j], split[i, j] = min(
                (cost[i, k] + cost[k + 1, j] + dims[i] * dims[k + 1] * dims[j + 1], k)
                for k in range(i, j))

    def product(i, j):
        if i == j:
            return mats[i]
        k = split[i, j]
        return aten.mm.default(product(i, k), product(k + 1, j))

    out = product(0, n - 1)
    if first:
        out = S.squeeze(out, [0])
    if last:
        out = S.squeeze(out, [-1])
    return out


@register_decomposition(linalg_matrix_exp)
def _matrix_exp(self):
    """Scaling and squaring: exp(A) = exp(A / 2^s)^(2^s), with s making the 1-norm <= 1/2 and
    a degree-12 Taylor polynomial (error < 1e-17) for the scaled matrix."""
    check_square("linalg.matrix_exp", self)
    check_float("linalg.matrix_exp", self, "linalg_matrix_exp_cpu")
    if self.numel() == 0:
        return clone(self)
    # The scaling comes from the finite entries: a matrix holding inf or nan turns to nan through
    # the products below (as ATen's), without leaving its batch-mates unscaled.
    # Column sums in float64, so that huge float32 entries do not overflow the norm; past
    # float64's range the result overflows whatever the scaling, so it is capped.
    finite = _to_copy(P.where(P.isfinite(self), P.abs(self), 0.0), dtype=D.float64)
    norm = aten.amax.default(reduce_sum(finite, [-2], False), [], False).item()
    if norm == 0:
        squarings = 0
    elif norm == math.inf:
        squarings = 1023
    else:
        squarings = min(max(0, math.ceil(math.log2(norm)) + 1), 1023)
    scaled = P.div(self, 2.0 ** squarings)
    n = self.shape[-1]
    identity = S.expand(eye(n, dtype=self.dtype, device=self.device), tuple(self.shape))
    result = identity
    for k in range(12, 0, -1):   # Horner: I + A/1 (I + A/2 (I + ... A/12))
        result = P.add(identity, P.div(matmul(scaled, result), k))
    for _ in range(squarings):
        result = matmul(result, result)
    return result


@register_decomposition(linalg_matrix_rank)
def _matrix_rank(self, atol=None, rtol=None, hermitian=False):
    """Singular values (|eigenvalues| if hermitian) above max(atol, rtol * the largest one)."""
    check_matrix("torch.linalg.matrix_rank", self, "input")
    check_lapack_float(self)
    m, n = self.shape[-2:]
    atol, rtol = pinv_tolerances(self.dtype, m, n, atol, rtol)
    values = P.abs(linalg_eigh(self)[0]) if hermitian else linalg_svdvals(self)
    if values.shape[-1] == 0:
        return reduce_sum(P.gt(values, 0), [-1], False)
    largest = aten.amax.default(values, [-1], True)
    tol = P.maximum(P.mul(largest, rtol), P.mul(P.abs(largest), 0) + atol)
    return reduce_sum(P.gt(values, tol), [-1], False)


@register_decomposition(linalg_solve_triangular)
def _solve_triangular(self, B, upper, left=True, unitriangular=False):
    """A solve on the triangle of A that the call names (the other triangle is never read, so
    its gradient is zero, and so is the diagonal's with ``unitriangular``)."""
    check_matrix("linalg.solve_triangular", self)
    check_matrix("linalg.solve_triangular", B, "B")
    check_square("linalg.solve_triangular", self)
    for t in (self, B):
        if t.dtype.category != D.FLOATING:
            _not_implemented("triangular_solve_cpu", t.dtype)
    n = self.shape[-1]
    if (B.shape[-2] if left else B.shape[-1]) != n:
        raise RuntimeError(f"linalg.solve_triangular: Incompatible shapes of A and B for the "
                           f"equation {'AX = B' if left else 'XA = B'} ({n}x{n} and "
                           f"{B.shape[-2]}x{B.shape[-1]})")
    triangle = S.triu(self, 1 if unitriangular else 0) if upper else \
        S.tril(self, -1 if unitriangular else 0)
    if unitriangular:
        triangle = P.add(triangle, eye(n, dtype=self.dtype, device=self.device))
    return linalg_solve(triangle, B, left=left)


cholesky_solve = defop("cholesky_solve(Tensor self, Tensor input2, bool upper=False) -> Tensor",
                      method=True, function=True)


@register_decomposition(cholesky_solve)
def _cholesky_solve(self, input2, upper=False):
    """X of L L^T X = B (U^T U X = B with ``upper``) from a Cholesky factor: two triangular
    solves, reading only the factor's triangle (so its other triangle gets no gradient; ATen's
    formula gives it one)."""
    for name, t in (("b", self), ("u", input2)):
        if t.ndim < 2:
            raise RuntimeError(f"{name} should have at least 2 dimensions, but has {t.ndim} "
                               f"dimensions instead")
    if self.dtype is not input2.dtype:
        raise RuntimeError(f"Expected b and A to have the same dtype, but found b of type "
                           f"{R.type_name(self.dtype)} and A of type "
                           f"{R.type_name(input2.dtype)} instead.")
    rows, n = input2.shape[-2:]
    if rows != n:
        raise RuntimeError(f"A must be batches of square matrices, but they are {rows} by {n} "
                           f"matrices")
    if self.shape[-2] != n:
        raise RuntimeError(f"Incompatible matrix sizes for cholesky_solve: each A matrix is {n} "
                           f"by {n} but each b matrix is {self.shape[-2]} by {self.shape[-1]}")
    if self.dtype not in (D.float32, D.float64):
        _not_implemented("cholesky_solve_cpu", self.dtype)
    broadcast_shapes(tuple(self.shape[:-2]), tuple(input2.shape[:-2]))
    transposed = S.transpose(input2, -2, -1)
    lower, upper_factor = (transposed, input2) if upper else (input2, transposed)
    return linalg_solve_triangular(upper_factor, linalg_solve_triangular(lower, self, upper=False),
                                   upper=True)


@register_decomposition(linalg_lstsq)
def _lstsq(self, b, rcond=None, driver=None):
    """The least-squares solution through the pseudo-inverse (cut at ``rcond`` times the
    largest singular value), with the CPU default driver's outputs: ``gelsy`` reports the rank
    and leaves residuals and singular values empty; ``gelsd``/``gelss`` report both."""
    if driver not in (None, "gels", "gelsy", "gelsd", "gelss"):
        raise RuntimeError(f"torch.linalg.lstsq: parameter `driver` should be one of (gels, "
                           f"gelsy, gelsd, gelss), but got {driver}")
    if self.ndim < 2:
        raise RuntimeError("torch.linalg.lstsq: input must have at least 2 dimensions.")
    if self.dtype is not b.dtype:
        raise RuntimeError(f"torch.linalg.lstsq: Expected input and other to have the same "
                           f"dtype, but got input's dtype {R.type_name(self.dtype)} and other's "
                           f"dtype {R.type_name(b.dtype)}")
    vector = b.ndim == self.ndim - 1
    rhs = S.unsqueeze(b, -1) if vector else b
    if rhs.shape[-2] != self.shape[-2]:
        raise RuntimeError("torch.linalg.lstsq: input.size(-2) should match other.size(-2)")
    check_lapack_float(self)
    m, n = self.shape[-2:]
    rtol = rcond if rcond is not None and rcond > 0 else D.finfo(self.dtype).eps * max(m, n)
    solution = matmul(linalg_pinv(self, rtol=rtol), rhs)
    solution = S.squeeze(solution, [-1]) if vector else solution
    driver = driver or "gelsy"
    # PyTorch's outputs: residuals derive from the solution (empty unless computed), singular
    # values carry no gradient
    residuals = S.slice(S.flatten(solution), 0, 0, 0)
    rank = linalg_matrix_rank(self, rtol=rtol) if driver != "gels" else \
        full((0,), 0, dtype=D.int64, device=self.device)
    values = S.detach(linalg_svdvals(self)) if driver in ("gelsd", "gelss") else \
        full((0,), 0, dtype=self.dtype, device=self.device)
    if driver != "gelsy" and m > n and (driver == "gels" or bool(P.eq(rank, n).all())):
        fit = matmul(self, S.unsqueeze(solution, -1) if vector else solution)
        residuals = reduce_sum(P.pow(P.sub(fit, rhs), 2), [-2], False)
    return solution, residuals, rank, values


linalg_householder_product = defop("linalg_householder_product(Tensor input, Tensor tau) -> "
                                   "Tensor")
orgqr = defop("orgqr(Tensor self, Tensor input2) -> Tensor", method=True, function=True)


@register_decomposition(linalg_householder_product)
def _householder_product(input, tau):
    """The first n columns of H_1 ... H_k, H_i = I - tau_i v_i v_i^T, v_i the i-th column of
    ``input`` below the diagonal with 1 on it (``geqrf``'s Q)."""
    name = "torch.linalg.householder_product"
    if input.ndim < 2:
        raise RuntimeError(f"{name}: input must have at least 2 dimensions.")
    m, n = input.shape[-2:]
    if m < n:
        raise RuntimeError(f"{name}: input.shape[-2] must be greater than or equal to "
                           f"input.shape[-1]")
    if n < tau.shape[-1]:
        raise RuntimeError(f"{name}: input.shape[-1] must be greater than or equal to "
                           f"tau.shape[-1]")
    if tau.ndim != input.ndim - 1:
        raise RuntimeError(f"{name}: Expected tau to have one dimension less than input, but "
                           f"got tau.ndim equal to {tau.ndim} and input.ndim is equal to "
                           f"{input.ndim}")
    identity = eye(m, dtype=input.dtype, device=input.device)
    Q = S.expand(identity, tuple(input.shape[:-2]) + (m, m))
    for i in range(tau.shape[-1]):
        mask = P.gt(aten.arange.start_step(0, m, device=input.device), i)
        v = P.add(P.mul(S.select(input, -1, i), mask), S.select(identity, -1, i))
        scale = S.unsqueeze(S.unsqueeze(S.select(tau, -1, i), -1), -1)
        Q = P.sub(Q, P.mul(scale, matmul(matmul(Q, S.unsqueeze(v, -1)), S.unsqueeze(v, -2))))
    return S.slice(Q, -1, 0, n)


@register_decomposition(orgqr)
def _orgqr(self, input2):
    return linalg_householder_product(self, input2)
