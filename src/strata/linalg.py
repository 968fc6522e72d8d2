"""``strata.linalg``: PyTorch's ``torch.linalg`` namespace (re-exports only).

    import strata as torch
    A = torch.tensor([[2., 1.], [1., 3.]])
    torch.linalg.solve(A, torch.tensor([1., 2.]))   # tensor([0.2000, 0.6000])

The ops live in ``ops/linalg.py`` and ``ops/factorizations.py``; the Python signatures here
(keyword-only ``out=``, named-tuple results) in ``frontend/linalg.py``.
"""

from .frontend.linalg import (  # noqa: F401
    cholesky,
    eig,
    eigh,
    eigvals,
    householder_product,
    inv,
    lstsq,
    lu,
    lu_factor,
    lu_factor_ex,
    lu_solve,
    matmul,
    matrix_exp,
    matrix_norm,
    matrix_rank,
    multi_dot,
    norm,
    pinv,
    qr,
    slogdet,
    solve,
    solve_triangular,
    svd,
    svdvals,
    vector_norm,
)
from .frontend.linalg import linalg_cross as cross  # noqa: F401
from .frontend.linalg import linalg_det as det  # noqa: F401
from .frontend.linalg import linalg_matrix_power as matrix_power  # noqa: F401
from .frontend.linalg_extra import (  # noqa: F401
    cholesky_ex,
    cond,
    diagonal,
    eigvalsh,
    inv_ex,
    solve_ex,
    tensorinv,
    tensorsolve,
    vander,
    vecdot,
)
from .ops.factorizations import LinAlgError  # noqa: F401
