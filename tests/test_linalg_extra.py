"""torch.linalg's _ex forms, cond, tensorinv, tensorsolve, vander, vecdot, eigvalsh and
diagonal (frontend/linalg_extra.py) against PyTorch: values, info codes and errors."""

import numpy as np
import pytest
import torch
from helpers import assert_same

import strata

RNG = np.random.default_rng(0)
A = RNG.standard_normal((4, 4))
SPD = A @ A.T + np.eye(4)
B = RNG.standard_normal((4, 2))
SINGULAR = np.array([[1.0, 2.0], [2.0, 4.0]])
NOT_PD = np.array([[4.0, 2.0, 0.0], [2.0, 1.0, 0.0], [0.0, 0.0, 3.0]])

CASES = {
    "solve_ex": lambda m: tuple(m.linalg.solve_ex(m.tensor(A), m.tensor(B))),
    "solve_ex_vector": lambda m: tuple(m.linalg.solve_ex(m.tensor(A), m.tensor(B[:, 0]))),
    "solve_ex_singular_info": lambda m: m.linalg.solve_ex(
        m.tensor(SINGULAR), m.ones(2, dtype=m.float64)).info,
    "inv_ex": lambda m: tuple(m.linalg.inv_ex(m.tensor(A))),
    "inv_ex_batch_info": lambda m: m.linalg.inv_ex(m.stack([m.eye(2), m.tensor(SINGULAR)])).info,
    "cholesky_ex": lambda m: tuple(m.linalg.cholesky_ex(m.tensor(SPD))),
    "cholesky_ex_upper": lambda m: m.linalg.cholesky_ex(m.tensor(SPD), upper=True).L,
    "cholesky_ex_failure": lambda m: tuple(m.linalg.cholesky_ex(m.tensor(NOT_PD))),
    "cholesky_ex_batch_info": lambda m: m.linalg.cholesky_ex(
        m.stack([m.eye(3) * 2, -m.eye(3)])).info,
    "cond": lambda m: m.linalg.cond(m.tensor(A)),
    "cond_p1": lambda m: m.linalg.cond(m.tensor(A), 1),
    "cond_fro": lambda m: m.linalg.cond(m.tensor(A), "fro"),
    "cond_minus2": lambda m: m.linalg.cond(m.tensor(A), -2),
    "tensorinv": lambda m: m.linalg.tensorinv(m.tensor(A).reshape(4, 2, 2), ind=1),
    "tensorsolve": lambda m: m.linalg.tensorsolve(m.tensor(A).reshape(2, 2, 4),
                                                 m.tensor(B[:, 0]).reshape(2, 2)),
    "vander": lambda m: m.linalg.vander(m.tensor([1, 2, 3])),
    "vander_N": lambda m: m.linalg.vander(m.tensor([1.5, 2.0]), N=4),
    "vecdot_complex": lambda m: m.linalg.vecdot(m.tensor([1 + 1j, 2]), m.tensor([1j, 1])),
    "vecdot_dim": lambda m: m.linalg.vecdot(m.tensor(A), m.tensor(A), dim=0),
    "eigvalsh": lambda m: m.linalg.eigvalsh(m.tensor(SPD), UPLO="U"),
    "diagonal": lambda m: m.linalg.diagonal(m.tensor(A), offset=1),
}


@pytest.mark.parametrize("name", CASES)
def test_matches_torch(name):
    got, want = CASES[name](strata), CASES[name](torch)
    for g, w in zip(got if isinstance(got, tuple) else (got,),
                    want if isinstance(want, tuple) else (want,)):
        assert_same(g, w, atol=1e-10, rtol=1e-10)


@pytest.mark.parametrize("call, message", [
    (lambda m: m.linalg.solve_ex(m.tensor(SINGULAR), m.ones(2, dtype=m.float64),
                                 check_errors=True),
     "torch.linalg.solve_ex: The solver failed because the input matrix is singular."),
    (lambda m: m.linalg.inv_ex(m.stack([m.eye(2), m.tensor(SINGULAR)]), check_errors=True),
     r"linalg.inv_ex: \(Batch element 1\): The diagonal element 2 is zero"),
    (lambda m: m.linalg.cholesky_ex(m.stack([m.eye(2), -m.eye(2)]), check_errors=True),
     (r"linalg.cholesky_ex: \(Batch element 1\): The factorization could not be completed "
      r"because the input is not positive-definite \(the leading minor of order 1")),
])
def test_check_errors_raise_torchs_linalg_error(call, message):
    for m in (strata, torch):
        with pytest.raises(m.linalg.LinAlgError, match=message):
            call(m)


def test_solve_ex_dtype_mismatch_matches_torch():
    for m in (strata, torch):
        with pytest.raises(RuntimeError, match="Expected A and B to have the same dtype, but "
                                               "found A of type Double and B of type Float"):
            m.linalg.solve_ex(m.tensor(SINGULAR), m.ones(2))
