"""Sample inputs for the ops of ``ops/linalg.py`` and ``ops/factorizations.py``.

Factorizations are unique only up to signs of singular/eigen vectors, so those samples compare
sign-free quantities (``abs`` of the vectors, reconstructions) rather than raw factors.
"""

import itertools

import numpy as np

from op_samples import Sample

_rng = np.random.default_rng(7)


_DIST = np.random.default_rng(70).standard_normal((6, 4)).astype(np.float32)


def _f(*shape, dtype=np.float32):
    return np.asarray(_rng.standard_normal(shape), dtype=dtype)


def _i(*shape, dtype=np.int64):
    return np.asarray(_rng.integers(-5, 6, shape), dtype=dtype)


def _spd(n, *batch, dtype=np.float64):
    a = _rng.standard_normal(batch + (n, n))
    return (a @ np.swapaxes(a, -1, -2) + n * np.eye(n)).astype(dtype)


def _wellcond(n, *batch, dtype=np.float64):
    return (_rng.standard_normal(batch + (n, n)) + 3 * np.eye(n)).astype(dtype)


def _sym(n, *batch, dtype=np.float64):
    a = _rng.standard_normal(batch + (n, n))
    return (a + np.swapaxes(a, -1, -2)).astype(dtype)


def _qr_product(qr):
    return qr.Q @ qr.R


def _svd_product(svd):
    return svd.S, (svd.U * svd.S.unsqueeze(-2)) @ svd.Vh


_LOW = {"atol": 1e-2, "rtol": 1e-2}

SAMPLES = {
    "aten::mm": [
        Sample(lambda m, a, b: m.mm(a, b), (_f(3, 4), _f(4, 5))),
        Sample(lambda m, a, b: a.mm(b), (_f(3, 4, dtype=np.float64), _f(4, 2, dtype=np.float64))),
        Sample(lambda m, a, b: m.mm(a, b), (_i(3, 4), _i(4, 2)), name="int64"),
        Sample(lambda m, a, b: m.mm(a, b), (_i(3, 4, dtype=np.int32), _i(4, 2, dtype=np.int32))),
        Sample(lambda m, a, b: m.mm(a, b), (_i(2, 3, dtype=np.uint8) % 3,
                                            _i(3, 2, dtype=np.uint8) % 3), name="uint8"),
        Sample(lambda m, a, b: m.mm(a.half(), b.half()), (_f(3, 4), _f(4, 5)), **_LOW),
        Sample(lambda m, a, b: m.mm(a.bfloat16(), b.bfloat16()), (_f(3, 4), _f(4, 5)),
               atol=5e-2, rtol=5e-2),
        Sample(lambda m, a, b: m.mm(a.t(), b.t()), (_f(4, 3), _f(5, 4)), name="transposed"),
        Sample(lambda m, a, b: m.mm(a, b), (_f(0, 4), _f(4, 3)), name="empty"),
        Sample(lambda m, a, b: m.mm(a, b), (_f(2, 0), _f(0, 3)), name="empty_k"),
        Sample(lambda m, a, b: m.mm(input=a, mat2=b), (_f(2, 3), _f(3, 2)), name="kwargs"),
        Sample(lambda m, a, b: m.mm(a, b), (np.array([[np.nan, 1.0]], np.float32),
                                            np.array([[1.0], [np.inf]], np.float32)),
               name="nan_inf"),
    ],
    "aten::bmm": [
        Sample(lambda m, a, b: m.bmm(a, b), (_f(2, 3, 4), _f(2, 4, 5))),
        Sample(lambda m, a, b: a.bmm(b), (_i(3, 2, 2), _i(3, 2, 4))),
        Sample(lambda m, a, b: m.bmm(a.transpose(1, 2), b),
               (_f(2, 4, 3, dtype=np.float64), _f(2, 4, 5, dtype=np.float64))),
        Sample(lambda m, a, b: m.bmm(a.half(), b.half()), (_f(2, 3, 4), _f(2, 4, 5)), **_LOW),
        Sample(lambda m, a, b: m.bmm(a, b), (_f(0, 3, 4), _f(0, 4, 5)), name="empty"),
    ],
    "aten::addmm": [
        Sample(lambda m, s, a, b: m.addmm(s, a, b), (_f(5), _f(3, 4), _f(4, 5))),
        Sample(lambda m, s, a, b: m.addmm(s, a, b, beta=0.5, alpha=2),
               (_f(3, 5), _f(3, 4), _f(4, 5))),
        Sample(lambda m, s, a, b: s.addmm(a, b, beta=0, alpha=-1),
               (np.full((3, 1), np.nan, np.float32), _f(3, 4), _f(4, 5)), name="beta0_nan"),
        Sample(lambda m, s, a, b: m.addmm(s, a, b, beta=2, alpha=3), (_i(1, 2), _i(3, 4), _i(4, 2)),
               name="int"),
        Sample(lambda m, s, a, b: m.addmm(s, a, b, beta=1.5, alpha=2.5),
               (_i(2), _i(1, 3), _i(3, 2)), name="int_float_scalars"),
        Sample(lambda m, s, a, b: m.addmm(s, a, b), (_f(), _f(2, 3, dtype=np.float32),
                                                     _f(3, 2)), name="0d_bias"),
        Sample(lambda m, s, a, b: m.addmm(s.double(), a.double(), b.double()),
               (_f(2, 2), _f(2, 3), _f(3, 2))),
        Sample(lambda m, s, a, b: m.addmm(s.bfloat16(), a.bfloat16(), b.bfloat16()),
               (_f(2), _f(2, 3), _f(3, 2)), atol=5e-2, rtol=5e-2),
    ],
    "aten::addmm_": [
        Sample(lambda m, s, a, b: s.clone().addmm_(a, b), (_f(3, 5), _f(3, 4), _f(4, 5))),
        Sample(lambda m, s, a, b: s.clone().addmm_(a, b, beta=0.5, alpha=2),
               (_f(3, 5, dtype=np.float64), _f(3, 4, dtype=np.float64),
                _f(4, 5, dtype=np.float64))),
        Sample(lambda m, s, a, b: s.clone().t().addmm_(a, b, beta=2, alpha=3),
               (_i(2, 3), _i(3, 4), _i(4, 2)), name="int_transposed_self"),
    ],
    "aten::einsum": [
        Sample(lambda m, a, b: m.einsum("ij,jk->ik", a, b), (_f(2, 3), _f(3, 4))),
        Sample(lambda m, a, b: m.einsum("bij,bjk->bik", [a, b]), (_f(2, 2, 3), _f(2, 3, 4)),
               name="list_operands"),
        Sample(lambda m, a: m.einsum("ii->i", a), (_f(3, 3),), name="diagonal"),
        Sample(lambda m, a: m.einsum("ii", a), (_f(3, 3, dtype=np.float64),), name="trace"),
        Sample(lambda m, a: m.einsum("ij->ji", a), (_f(2, 3),), name="transpose"),
        Sample(lambda m, a: m.einsum("ba", a), (_f(2, 3),), name="implicit"),
        Sample(lambda m, a, b: m.einsum("...ij,...jk", a, b), (_f(2, 2, 3), _f(3, 4)),
               name="ellipsis"),
        Sample(lambda m, a, b: m.einsum("...i,...i->...", a, b), (_f(2, 3), _f(1, 3)),
               name="ellipsis_broadcast"),
        Sample(lambda m, a, b: m.einsum("i,i->i", a, b), (_f(1), _f(3)), name="broadcast_1"),
        Sample(lambda m, a, b, c: m.einsum("ij,jk,kl->il", a, b, c),
               (_f(2, 3), _f(3, 4), _f(4, 2)), name="three"),
        Sample(lambda m, a, b: m.einsum("i,j->ij", a, b), (_i(3), _i(2)), name="int_outer"),
        Sample(lambda m, a: m.einsum("i j -> j i", a), (_f(2, 3),), name="spaces"),
        Sample(lambda m, a, b: m.einsum("Ba,aB", a, b), (_f(2, 3), _f(3, 2)), name="upper"),
        Sample(lambda m, a, b: m.einsum(a, [0, 1], b, [1, 2], [0, 2]), (_f(2, 3), _f(3, 4)),
               name="sublist"),
        Sample(lambda m, a: m.einsum("ij->", a.half()), (_f(3, 4),), **_LOW),
        Sample(lambda m, a: m.einsum("ij->j", a), (_f(0, 4),), name="empty"),
    ],
    "aten::matmul": [
        Sample(lambda m, a, b: m.matmul(a, b), (_f(3), _f(3)), name="1d1d"),
        Sample(lambda m, a, b: m.matmul(a, b), (_f(2, 3), _f(3)), name="2d1d"),
        Sample(lambda m, a, b: m.matmul(a, b), (_f(3), _f(3, 4)), name="1d2d"),
        Sample(lambda m, a, b: a @ b, (_f(2, 3), _f(3, 4)), name="2d2d"),
        Sample(lambda m, a, b: a @ b, (_f(2, 5, 3), _f(3, 4)), name="fold"),
        Sample(lambda m, a, b: a @ b, (_f(2, 5, 3), _f(3)), name="fold_vec"),
        Sample(lambda m, a, b: a @ b, (_f(2, 3), _f(4, 3, 5)), name="fold_right"),
        Sample(lambda m, a, b: a @ b, (_f(3), _f(4, 3, 5)), name="vec_batch"),
        Sample(lambda m, a, b: a @ b, (_f(2, 1, 2, 3), _f(4, 3, 5)), name="broadcast"),
        Sample(lambda m, a, b: m.matmul(a, b), (_i(2, 2, 3), _i(2, 3, 2)), name="int"),
        Sample(lambda m, a, b: a.matmul(b), (_f(2, 3, dtype=np.float64),
                                             _f(3, dtype=np.float64))),
        Sample(lambda m, a, b: a.half() @ b.half(), (_f(2, 2, 3), _f(2, 3, 2)), **_LOW),
        Sample(lambda m, a, b: a @ b, (_f(0, 2, 3), _f(3, 2)), name="empty"),
    ],
    "aten::mv": [
        Sample(lambda m, a, v: m.mv(a, v), (_f(2, 3), _f(3))),
        Sample(lambda m, a, v: a.mv(v), (_i(2, 3), _i(3))),
        Sample(lambda m, a, v: m.mv(a.t(), v), (_f(3, 2, dtype=np.float64),
                                                _f(3, dtype=np.float64))),
        Sample(lambda m, a, v: m.mv(a, v), (_f(0, 3), _f(3)), name="empty"),
    ],
    "aten::addmv": [
        Sample(lambda m, s, a, v: m.addmv(s, a, v), (_f(2), _f(2, 3), _f(3))),
        Sample(lambda m, s, a, v: m.addmv(s, a, v, beta=2, alpha=0.5), (_f(1), _f(2, 3), _f(3))),
        Sample(lambda m, s, a, v: s.addmv(a, v, beta=0), (np.full(2, np.nan, np.float32),
                                                           _f(2, 3), _f(3)), name="beta0"),
        Sample(lambda m, s, a, v: m.addmv(s, a, v, alpha=3), (_i(), _i(2, 3), _i(3))),
    ],
    "aten::dot": [
        Sample(lambda m, a, b: m.dot(a, b), (_f(5), _f(5))),
        Sample(lambda m, a, b: a.dot(b), (_i(4), _i(4))),
        Sample(lambda m, a, b: m.dot(a, b), (_i(4, dtype=np.uint8), _i(4, dtype=np.uint8))),
        Sample(lambda m, a, b: m.dot(a.half(), b.half()), (_f(5), _f(5)), **_LOW),
        Sample(lambda m, a, b: m.dot(a, b), (_f(0), _f(0)), name="empty"),
    ],
    "aten::vdot": [
        Sample(lambda m, a, b: m.vdot(a, b), (_f(5, dtype=np.float64), _f(5, dtype=np.float64))),
        Sample(lambda m, a, b: a.vdot(b), (_i(3, dtype=np.int32), _i(3, dtype=np.int32))),
    ],
    "aten::outer": [
        Sample(lambda m, a, b: m.outer(a, b), (_f(3), _f(4))),
        Sample(lambda m, a, b: a.outer(b), (_i(3), _f(2)), name="promote"),
        Sample(lambda m, a, b: m.outer(a, b), (_i(3) > 0, _i(2) > 0), name="bool"),
        Sample(lambda m, a, b: m.outer(a, b), (_f(0), _f(2)), name="empty"),
    ],
    "aten::ger": [Sample(lambda m, a, b: m.ger(a, b), (_f(3), _f(2, dtype=np.float64)))],
    "aten::baddbmm": [
        Sample(lambda m, s, a, b: m.baddbmm(s, a, b), (_f(3, 4), _f(2, 3, 5), _f(2, 5, 4))),
        Sample(lambda m, s, a, b: s.baddbmm(a, b, beta=0.5, alpha=-1),
               (_f(2, 3, 4), _f(2, 3, 5), _f(2, 5, 4))),
        Sample(lambda m, s, a, b: m.baddbmm(s, a, b, beta=2, alpha=3),
               (_i(1), _i(2, 3, 2), _i(2, 2, 4)), name="int"),
    ],
    "aten::addbmm": [
        Sample(lambda m, s, a, b: m.addbmm(s, a, b), (_f(3, 4), _f(2, 3, 5), _f(2, 5, 4))),
        Sample(lambda m, s, a, b: s.addbmm(a, b, beta=0.5, alpha=2),
               (_f(4), _f(3, 3, 2, dtype=np.float32), _f(3, 2, 4))),
        Sample(lambda m, s, a, b: m.addbmm(s, a, b), (_i(3, 4), _i(2, 3, 5), _i(2, 5, 4))),
    ],
    "aten::tensordot": [
        Sample(lambda m, a, b: m.tensordot(a, b, dims=1), (_f(2, 3), _f(3, 4))),
        Sample(lambda m, a, b: m.tensordot(a, b), (_f(2, 3, 4), _f(3, 4, 5)), name="default2"),
        Sample(lambda m, a, b: m.tensordot(a, b, dims=([1, 0], [0, 2])),
               (_f(3, 4, 2), _f(4, 2, 3)), name="lists"),
        Sample(lambda m, a, b: m.tensordot(a, b, dims=0), (_f(2, 3), _f(2)), name="outer"),
        Sample(lambda m, a, b: m.tensordot(a, b, dims=([0], [1])), (_i(3, 2), _i(4, 3)),
               name="int"),
    ],
    "aten::kron": [
        Sample(lambda m, a, b: m.kron(a, b), (_f(2, 3), _f(2, 2))),
        Sample(lambda m, a, b: a.kron(b), (_i(2, 3), _f(3)), name="mixed_rank"),
        Sample(lambda m, a, b: m.kron(a, b), (_f(), _f(3)), name="0d"),
        Sample(lambda m, a, b: m.kron(a, b), (_i(2) > 0, _i(3) > 0), name="bool"),
    ],
    "aten::trace": [
        Sample(lambda m, a: m.trace(a), (_f(3, 3),)),
        Sample(lambda m, a: a.trace(), (_f(2, 4, dtype=np.float64),), name="rect"),
        Sample(lambda m, a: m.trace(a), (_i(3, 3, dtype=np.uint8),), name="uint8"),
        Sample(lambda m, a: m.trace(a), (_i(3, 3, dtype=np.int32),)),
        Sample(lambda m, a: m.trace(a), (_f(0, 0),), name="empty"),
    ],
    "aten::cross": [
        Sample(lambda m, a, b: m.cross(a, b, dim=1), (_f(2, 3), _f(2, 3))),
        Sample(lambda m, a, b: a.cross(b, -2), (_i(3, 2), _i(3, 2))),
    ],
    "aten::linalg_cross": [
        Sample(lambda m, a, b: m.linalg.cross(a, b), (_f(4, 3), _f(4, 3))),
        Sample(lambda m, a, b: m.linalg.cross(a, b), (_f(1, 3), _f(4, 3)), name="broadcast"),
        Sample(lambda m, a, b: m.linalg.cross(a, b, dim=0),
               (_f(3, 2, dtype=np.float64), _f(3, 2, dtype=np.float64))),
    ],
    "aten::cdist": [
        Sample(lambda m, a, b: m.cdist(a, b), (_f(4, 3), _f(5, 3))),
        Sample(lambda m, a, b: m.cdist(a, b, p=1), (_f(2, 4, 3), _f(2, 5, 3)), name="p1"),
        Sample(lambda m, a, b: m.cdist(a, b, p=0), (_f(4, 3), _f(5, 3)), name="p0"),
        Sample(lambda m, a, b: m.cdist(a, b, p=float("inf")), (_f(4, 3), _f(5, 3)), name="inf"),
        Sample(lambda m, a, b: m.cdist(a, b, p=3.5),
               (_f(4, 3, dtype=np.float64), _f(2, 3, dtype=np.float64)), name="p3.5"),
        Sample(lambda m, a, b: m.cdist(a, b), (_f(2, 1, 4, 3), _f(3, 2, 3)), name="batch"),
        Sample(lambda m, a, b: m.cdist(a, b), (_f(30, 3), _f(4, 3)), name="mm_form",
               atol=1e-5, rtol=1e-5),
        Sample(lambda m, a, b: m.cdist(a, b, compute_mode="use_mm_for_euclid_dist"),
               (_f(2, 4, 3, dtype=np.float64), _f(2, 5, 3, dtype=np.float64)), name="mm_always"),
        Sample(lambda m, a, b: m.cdist(a, b, compute_mode="donot_use_mm_for_euclid_dist"),
               (_f(30, 3), _f(27, 3)), name="difference_always"),
    ],
    "aten::dist": [   # its own generator: the module's draws for later samples stay as they were
        Sample(lambda m, a, b: m.dist(a, b), (_DIST[:4, :3], _DIST[4, :3])),
        Sample(lambda m, a, b: a.dist(b, 1), (_DIST[:2, :3], _DIST[2:4, :3]), name="p1"),
        Sample(lambda m, a, b: m.dist(a, b, p=0), (_DIST[0], _DIST[1]), name="p0"),
        Sample(lambda m, a, b: m.dist(a, b, float("inf")), (_DIST[:3, :2], _DIST[3:, :2]),
               name="inf"),
        Sample(lambda m, a, b: m.dist(a, b, 3.5), (_DIST[0].astype(np.float64), _DIST[2]),
               name="mixed_p3.5"),
    ],
    "aten::linalg_inv": [
        Sample(lambda m, a: m.linalg.inv(a), (_wellcond(3),)),
        Sample(lambda m, a: m.linalg.inv(a), (_wellcond(3, 2, dtype=np.float32),), atol=1e-4,
               rtol=1e-4),
        Sample(lambda m, a: m.inverse(a), (_wellcond(2),), name="inverse"),
        Sample(lambda m, a: m.linalg.inv(a), (np.zeros((0, 0)),), name="empty"),
    ],
    "aten::linalg_det": [
        Sample(lambda m, a: m.linalg.det(a), (_wellcond(3),)),
        Sample(lambda m, a: m.det(a), (_wellcond(2, 4, dtype=np.float32),), atol=1e-4, rtol=1e-4),
        Sample(lambda m, a: a.det(), (np.zeros((2, 2)),), name="singular"),
        Sample(lambda m, a: m.linalg.det(a), (np.zeros((0, 0)),), name="empty"),
    ],
    "aten::linalg_solve": [
        Sample(lambda m, a, b: m.linalg.solve(a, b), (_wellcond(3), _f(3, dtype=np.float64))),
        Sample(lambda m, a, b: m.linalg.solve(a, b), (_wellcond(3), _f(3, 2, dtype=np.float64)),
               name="matrix"),
        Sample(lambda m, a, b: m.linalg.solve(a, b), (_wellcond(3, 2), _f(3, dtype=np.float64)),
               name="batch_vec"),
        Sample(lambda m, a, b: m.linalg.solve(a, b), (_wellcond(3, 2), _f(2, 3, dtype=np.float64)),
               name="batch_rows"),
        Sample(lambda m, a, b: m.linalg.solve(a, b, left=False),
               (_wellcond(3), _f(2, 3, dtype=np.float64)), name="right"),
        Sample(lambda m, a, b: m.linalg.solve(a, b),
               (_wellcond(3, 2, dtype=np.float32), _f(4, 1, 3, 2)), atol=1e-4, rtol=1e-4),
    ],
    "aten::linalg_cholesky": [
        Sample(lambda m, a: m.linalg.cholesky(a), (_spd(3),)),
        Sample(lambda m, a: m.linalg.cholesky(a, upper=True), (_spd(3, 2, dtype=np.float32),),
               atol=1e-4, rtol=1e-4),
    ],
    "aten::cholesky_solve": [
        # the factor comes from cholesky, whose backward reads only its triangle: strata's
        # composite reads only the factor's triangle too (PyTorch's formula fills both)
        Sample(lambda m, b, a: m.cholesky_solve(b, m.linalg.cholesky(a)),
               (_f(3, 2, dtype=np.float64), _spd(3))),
        Sample(lambda m, b, a: m.cholesky_solve(b, m.linalg.cholesky(a).mT, upper=True),
               (_f(2, 3, 2), _spd(3, 2, dtype=np.float32)), atol=1e-4, rtol=1e-4),
    ],
    "aten::cholesky": [
        Sample(lambda m, a: m.cholesky(a), (_spd(3),)),
        Sample(lambda m, a: a.cholesky(upper=True), (_spd(2),)),
    ],
    "aten::linalg_qr": [
        Sample(lambda m, a: tuple(x.abs() for x in m.linalg.qr(a)), (_f(4, 3, dtype=np.float64),)),
        Sample(lambda m, a: tuple(x.abs() for x in m.linalg.qr(a, mode="complete")),
               (_f(2, 4, 3),), atol=1e-5, rtol=1e-4),
        Sample(lambda m, a: m.linalg.qr(a, mode="r")[1].abs(), (_f(3, 5, dtype=np.float64),)),
        Sample(lambda m, a: _qr_product(m.linalg.qr(a)), (_f(3, 5),), atol=1e-5,
               name="reconstruct"),
        Sample(lambda m, a: m.linalg.qr(a, mode="complete"), (np.zeros((3, 0), np.float32),),
               name="empty"),
    ],
    "aten::linalg_svd": [
        Sample(lambda m, a: tuple(x.abs() for x in m.linalg.svd(a, full_matrices=False)),
               (_f(4, 3, dtype=np.float64),)),
        Sample(lambda m, a: _svd_product(m.linalg.svd(a, full_matrices=False)), (_f(2, 3, 5),),
               atol=1e-5, rtol=1e-4, name="reconstruct"),
        Sample(lambda m, a: m.linalg.svd(a).S, (_f(3, 5),), name="full"),
        Sample(lambda m, a: m.linalg.svd(a), (np.zeros((0, 3), np.float32),), name="empty"),
    ],
    "aten::linalg_svdvals": [
        Sample(lambda m, a: m.linalg.svdvals(a), (_f(4, 3),)),
        Sample(lambda m, a: m.linalg.svdvals(a), (_f(2, 2, 5, dtype=np.float64),)),
    ],
    "aten::linalg_eigh": [
        Sample(lambda m, a: tuple(x.abs() for x in m.linalg.eigh(a)), (_sym(4),)),
        Sample(lambda m, a: m.linalg.eigh(a, UPLO="U").eigenvalues, (_sym(3, 2, dtype=np.float32),),
               atol=1e-5, rtol=1e-4),
    ],
    "aten::linalg_matrix_norm": [
        Sample(lambda m, a: m.linalg.matrix_norm(a, ord=1), (_f(3, 4),)),
        Sample(lambda m, a: m.linalg.matrix_norm(a, ord=-1, keepdim=True), (_f(2, 3, 4),)),
        Sample(lambda m, a: m.linalg.matrix_norm(a, ord=float("inf"), dim=(0, 2)), (_f(3, 2, 4),)),
        Sample(lambda m, a: m.linalg.matrix_norm(a, ord=-float("inf")), (_f(3, 4),)),
        Sample(lambda m, a: m.linalg.matrix_norm(a, ord=2), (_f(3, 4, dtype=np.float64),)),
        Sample(lambda m, a: m.linalg.matrix_norm(a, ord=-2, dim=(1, 0), keepdim=True),
               (_f(3, 4),)),
        Sample(lambda m, a: m.linalg.matrix_norm(a, ord=1, dtype=m.float64), (_f(3, 4),),
               name="dtype"),
    ],
    "aten::linalg_matrix_norm.str_ord": [
        Sample(lambda m, a: m.linalg.matrix_norm(a), (_f(3, 4),)),
        Sample(lambda m, a: m.linalg.matrix_norm(a, "nuc"), (_f(2, 3, 4, dtype=np.float64),)),
        Sample(lambda m, a: m.linalg.matrix_norm(a, "fro", dim=(0, 2), keepdim=True),
               (_f(2, 3, 4),)),
        Sample(lambda m, a: m.linalg.matrix_norm(a, "nuc", keepdim=True), (_f(3, 3),)),
        Sample(lambda m, a: m.linalg.matrix_norm(a.half()), (_f(3, 4),), **_LOW),
    ],
    "aten::linalg_pinv.atol_rtol_float": [
        Sample(lambda m, a: m.linalg.pinv(a), (_f(4, 3, dtype=np.float64),)),
        Sample(lambda m, a: m.linalg.pinv(a), (_f(2, 3, 5),), atol=1e-4, rtol=1e-4),
        Sample(lambda m, a: m.linalg.pinv(a, hermitian=True), (_sym(3),), name="hermitian"),
        Sample(lambda m, a: m.linalg.pinv(a, atol=0.5, rtol=0.1),
               (np.diag([3.0, 1.0, 0.2]),), name="tolerance"),
        Sample(lambda m, a: m.pinverse(a), (_f(3, 2, dtype=np.float64),), name="pinverse"),
        Sample(lambda m, a: m.linalg.pinv(a), (np.zeros((0, 3)),), name="empty"),
    ],
    "aten::linalg_matrix_power": [
        Sample(lambda m, a: m.linalg.matrix_power(a, 0), (_f(2, 3, 3),)),
        Sample(lambda m, a: m.linalg.matrix_power(a, 1), (_f(3, 3),)),
        Sample(lambda m, a: m.linalg.matrix_power(a, 3), (_f(3, 3, dtype=np.float64),)),
        Sample(lambda m, a: m.matrix_power(a, 6), (_i(3, 3) % 2,), name="int"),
        Sample(lambda m, a: a.matrix_power(-2), (_wellcond(3),), name="negative"),
        Sample(lambda m, a: m.linalg.matrix_power(a, -1), (_wellcond(2),), name="inv"),
    ],
}


_square_seeds = itertools.count(1)


def _square(n, batch=(), dtype=np.float64):
    """A well-conditioned square matrix (a fresh one per call)."""
    rng = np.random.default_rng(next(_square_seeds))
    return (rng.standard_normal(batch + (n, n)) + 2 * np.eye(n)).astype(dtype)


SAMPLES.update({
    "aten::diag_embed": [
        Sample(lambda m, x: m.diag_embed(x), (_f(2, 3),)),
        Sample(lambda m, x: x.diag_embed(1, 0, 2), (_f(2, 3),), name="offset"),
        Sample(lambda m, x: m.diag_embed(x, -2, 2, 0), (_f(2, 4),), name="negative"),
        Sample(lambda m, x: m.diag_embed(x), (np.array([1.0, np.inf, np.nan], np.float32),),
               name="inf"),
        Sample(lambda m, x: m.diag_embed(x > 0), (_f(3),), name="bool"),
    ],
    "aten::linalg_slogdet": [
        Sample(lambda m, a: m.linalg.slogdet(a), (_square(4),)),
        Sample(lambda m, a: m.slogdet(a), (_square(3, (2,), np.float32),), name="batch",
               atol=1e-5, rtol=1e-4),
        Sample(lambda m, a: a.slogdet(), (-_square(3),), name="method"),
        Sample(lambda m, a: m.linalg.slogdet(a), (_square(60) * 30,), name="large",
               rtol=1e-9),
    ],
    "aten::logdet": [
        Sample(lambda m, a: m.logdet(a), (_square(4),)),
        Sample(lambda m, a: a.logdet(), (np.array([[0.0, 1.0], [1.0, 0.0]]),), name="negative"),
    ],
    "aten::svd": [
        Sample(lambda m, a: m.svd(a)[1], (_f(4, 3),)),
        Sample(lambda m, a: m.svd(a, compute_uv=False), (_f(3, 5),), name="no-uv"),
        Sample(lambda m, a: [t.abs() for t in m.svd(a, some=False)], (_square(3),),
               name="full"),
    ],
    "aten::linalg_multi_dot": [
        Sample(lambda m, a, b, c: m.linalg.multi_dot([a, b, c]), (_f(2, 30), _f(30, 3),
                                                               _f(3, 20)), atol=1e-5),
        Sample(lambda m, a, b, c, d: m.linalg.multi_dot([a, b, c, d]),
               (_f(4), _f(4, 3), _f(3, 5), _f(5)), name="vectors", atol=1e-5),
        Sample(lambda m, a, b: m.linalg.multi_dot((a, b)), (_f(2, 3), _f(3, 2)), name="two"),
    ],
    "aten::linalg_matrix_exp": [
        Sample(lambda m, a: m.linalg.matrix_exp(a), (_square(4),), meta=False),
        Sample(lambda m, a: m.matrix_exp(a), (_square(3, (2,), np.float32) * 3,), name="batch",
               rtol=1e-4, meta=False),
        Sample(lambda m, a: a.matrix_exp(), (np.zeros((3, 3)),), name="zero", meta=False),
    ],
    "aten::linalg_matrix_rank.atol_rtol_float": [
        Sample(lambda m, a: m.linalg.matrix_rank(a), (_f(4, 3),)),
        Sample(lambda m, a: m.linalg.matrix_rank(a @ a.mT, hermitian=True), (_f(4, 2),),
               name="hermitian"),
        Sample(lambda m, a: m.linalg.matrix_rank(a, atol=1.0, rtol=0.0), (_f(2, 5, 4),),
               name="atol"),
    ],
    "aten::linalg_solve_triangular": [
        Sample(lambda m, a, b: m.linalg.solve_triangular(a, b, upper=True),
               (_square(4), _f(4, 2, dtype=np.float64))),
        Sample(lambda m, a, b: m.linalg.solve_triangular(a, b, upper=False, left=False,
                                                         unitriangular=True),
               (_square(3), _f(2, 3, dtype=np.float64)), name="right-unit"),
    ],
    "aten::linalg_lstsq": [
        Sample(lambda m, a, b: m.linalg.lstsq(a, b), (_f(5, 3, dtype=np.float64),
                                                     _f(5, 2, dtype=np.float64))),
        Sample(lambda m, a, b: m.linalg.lstsq(a, b, driver="gelsd"),
               (_f(5, 3, dtype=np.float64), _f(5, dtype=np.float64)), name="gelsd", meta=False),
        Sample(lambda m, a, b: m.linalg.lstsq(a, b, driver="gels").solution,
               (_square(3), _f(3, 2, dtype=np.float64)), name="gels"),
    ],
})


def _householder(shape, seed):
    """geqrf's output for a random matrix: reflectors below the diagonal, and their scales."""
    a = np.random.default_rng(seed).standard_normal(shape)
    reflectors, tau = np.linalg.qr(a, mode="raw")
    return np.ascontiguousarray(np.swapaxes(reflectors, -1, -2)), tau


SAMPLES.update({
    "aten::geqrf": [
        Sample(lambda m, a: m.geqrf(a), (_f(5, 3, dtype=np.float64),)),
        Sample(lambda m, a: a.geqrf(), (_f(2, 3, 4),), name="wide-batch", atol=1e-5),
    ],
    "aten::linalg_householder_product": [
        Sample(lambda m, a, t: m.linalg.householder_product(a, t), _householder((5, 3), 1)),
        Sample(lambda m, a, t: m.linalg.householder_product(a, t[..., :1]),
               _householder((2, 4, 4), 2), name="batch-fewer-reflectors"),
    ],
    "aten::orgqr": [
        Sample(lambda m, a, t: m.orgqr(a, t), _householder((4, 3), 3)),
    ],
})


def _lu_factor(shape, seed, dtype=np.float64):
    """``torch.linalg.lu_factor`` of a random matrix, as NumPy (LU, int32 pivots)."""
    import torch
    factors, pivots = torch.linalg.lu_factor(torch.tensor(
        np.random.default_rng(seed).standard_normal(shape).astype(dtype)))
    return factors.numpy(), pivots.numpy()


SAMPLES.update({
    "aten::linalg_lu_factor_ex": [
        Sample(lambda m, a: m.linalg.lu_factor_ex(a), (_square(4),)),
        Sample(lambda m, a: m.linalg.lu_factor_ex(a), (_f(2, 3, 5),), name="wide-batch",
               atol=1e-5, rtol=1e-5),
        # values only: at a singular matrix PyTorch's LU gradient is nan
        Sample(lambda m, a: m.lu(a.detach(), get_infos=True), (np.ones((3, 3)),),
               name="singular"),
    ],
    "aten::linalg_lu": [
        Sample(lambda m, a: m.linalg.lu(a), (_f(5, 3, dtype=np.float64),)),
        Sample(lambda m, a: m.linalg.lu(a), (_f(2, 3, 3),), name="batch", atol=1e-5,
               rtol=1e-5),
    ],
    "aten::lu_unpack": [
        Sample(lambda m, a, p: m.lu_unpack(a, p), _lu_factor((4, 4), 11)),
        Sample(lambda m, a, p: m.lu_unpack(a, p, unpack_data=False), _lu_factor((2, 3, 3), 12),
               name="pivots-only"),
    ],
    "aten::linalg_lu_solve": [
        Sample(lambda m, a, p, b: m.linalg.lu_solve(a, p, b),
               _lu_factor((3, 3), 13) + (_f(3, 2, dtype=np.float64),)),
        Sample(lambda m, a, p, b: m.linalg.lu_solve(a, p, b, left=False, adjoint=True),
               _lu_factor((2, 3, 3), 14, np.float32) + (_f(4, 3),), name="right-adjoint",
               atol=1e-4, rtol=1e-4),
    ],
})
