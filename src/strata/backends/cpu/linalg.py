"""CPU kernels for ``ops/linalg.py`` and ``ops/factorizations.py``: BLAS products and LAPACK
factorizations through NumPy.

Products hand NumPy the inputs' own strided views (a transposed matrix is still BLAS-ready), and
copy only an input BLAS cannot read (no unit stride in either matrix dim), which NumPy would
otherwise multiply with its slow generic loop.
"""

import numpy as np

from ..._tensor import from_array
from ...core import dtype as D
from ...ops import factorizations as LF
from ...ops import linalg as L
from . import array, blas, native, native_pool
from .array import compute_data, data, parallel_for, wrap


def _blas_ready(arr):
    """A BLAS-readable view: unit stride along rows or columns, else a contiguous copy."""
    if arr.ndim >= 2 and arr.dtype.kind == "f":
        item = arr.itemsize
        if arr.strides[-1] != item and arr.strides[-2] != item and arr.size > 1:
            return np.ascontiguousarray(arr)
    return arr


def _operands(dt, a, b):
    return _blas_ready(compute_data(a, dt)), _blas_ready(compute_data(b, dt))


# Note [Parallel GEMM]: BLAS itself runs one thread (Note [Default thread count] in
# threads.py); a large product is split over strata's pool instead: the output's rows (for few
# rows, its columns; for a batch, its matrices) into one block per thread, each block one
# single-threaded BLAS call writing its own part of the output. The pool hands blocks out
# dynamically (Note [CPU parallel_for]), so a thread kept off its core by another process
# costs at most one block, where BLAS's own static split would wait for it. Blocks start at
# multiples of 64 rows or columns (32 or 16 where 64 would split unevenly: ``_blocks``), and
# are the same for the same thread count whichever thread
# runs them, so a product's bits do not change from run to run; between thread counts they can
# differ in the last place (BLAS picks its kernels by block shape), as PyTorch's do.
PARALLEL_GEMM_MACS = 1 << 23   # m*n*k: below this one thread is faster than two (~300 us)
# on the native pool (Note [Native pool]), whose loop starts in microseconds: 4M multiply-adds
# (a 64x256 @ 256x256 product: 89 us on one thread, 70 us split)
NATIVE_PARALLEL_GEMM_MACS = 1 << 22


def parallel_gemm_macs() -> int:
    """The multiply-adds from which a product is split over the threads."""
    return NATIVE_PARALLEL_GEMM_MACS if native_pool.library() is not None \
        else PARALLEL_GEMM_MACS
GEMM_BLOCK_ALIGN = 64


def _blocks(size, threads, align):
    """Start offsets of at most ``threads`` blocks of ``[0, size)``, aligned to ``align``, or to
    a half, quarter... of it (16 at least) where ``align`` would leave the last block short by
    more than a sixteenth: the MLP's 784 columns split 448/336 at 64, 400/384 at 16."""
    for unit in (align, align // 2, align // 4):
        step = -(-size // threads)
        step = -(-step // unit) * unit if size > unit * threads else step
        last = size - step * (-(-size // step) - 1)
        if 16 * last >= 15 * step or unit <= 16:
            break
    return range(0, size, step), step


# Note [Bias epilogue]: ``linear``'s bias is added to each block of the product by the thread
# that computed it, right after its GEMM call (``strata_gemm``'s ``bias``), while the block is
# in that core's cache, where a second loop over the whole result read it back from memory
# (ATen's addmm copies the bias into the result first and has BLAS add the product, which was
# no faster here: Note [addmm lane]). The same two roundings as the product then the add.
def _add_bias(out, bias):
    """``out + bias`` (a row added to each row), in place or as a fresh array: the result."""
    if bias is None:
        return out
    biased = native.run_rows("add", out, bias) if out.size >= native.ARITHMETIC_MIN_SIZE \
        else None
    if biased is None:
        out += bias
        return out
    return biased


def matmul(a, b, out=None, bias=None):
    """``a @ b`` of BLAS-ready matrices or equal batches of them, into ``out`` (fresh if None),
    split over the pool when large (Note [Parallel GEMM]); plus ``bias`` (two matrices only: a
    contiguous row of ``b``'s columns and dtype, Note [Bias epilogue]), when given. Returns
    the result: ``out`` unless a bias came added into a fresh array.

    Two matrices call ``np.dot`` when not split: the same BLAS call as ``np.matmul``, without
    matmul's generalised-ufunc setup, which is most of a small product's time (0.6 us against
    0.9 us for a 1x2 by 2x128 product)."""
    if a.ndim == 2 == b.ndim and a.size * b.shape[1] < NATIVE_PARALLEL_GEMM_MACS:   # small
        return _add_bias(np.dot(a, b) if out is None else np.dot(a, b, out=out), bias)
    m, k, n = a.shape[-2], a.shape[-1], b.shape[-1]
    if b.ndim < 2 or b.shape[-2] != k:   # as np.dot would refuse: callers word the error
        raise ValueError(f"matmul: shapes {a.shape} and {b.shape} not aligned")
    batch = a.shape[0] if a.ndim == 3 == b.ndim and b.shape[0] == a.shape[0] else 0
    threads = array.NUM_THREADS
    if threads == 1 or max(batch, 1) * m * n * k < parallel_gemm_macs() \
            or a.dtype.kind not in "fc" or b.ndim != a.ndim or (a.ndim != 2 and batch < 2):
        if a.ndim == 2 == b.ndim:
            return _add_bias(np.dot(a, b) if out is None else np.dot(a, b, out=out), bias)
        return np.matmul(a, b) if out is None else np.matmul(a, b, out=out)
    if out is None:
        out = np.empty(a.shape[:-1] + (n,), np.result_type(a, b))
    if batch:
        b = _row_major_if_small_transposed(b)
    if native_pool.library() is not None:
        rows = split_rows(a, b, out, threads, bias)
        if rows is not None:
            native_pool.run_gemms(np.array(rows, np.int64), (a, b, out, bias))
            return out
    if batch:
        starts, step = _blocks(batch, threads, 1)
        blocks = [(a[i:i + step], b[i:i + step], out[i:i + step]) for i in starts]
    elif m >= n:
        starts, step = _blocks(m, threads, GEMM_BLOCK_ALIGN)
        blocks = [(a[i:i + step], b, out[i:i + step]) for i in starts]
    else:
        starts, step = _blocks(n, threads, GEMM_BLOCK_ALIGN)
        blocks = [(a, b[:, i:i + step], out[:, i:i + step]) for i in starts]
    parallel_for(0, len(blocks), 1,
                 lambda lo, hi: [np.matmul(x, y, out=o) for x, y, o in blocks[lo:hi]])
    return _add_bias(out, bias)


# OpenBLAS's small-matrix kernels multiply by a transposed right operand ~1.6x slower than by a
# row-major one (a batch of 64 (64x32) @ (32x64) products: 268 us on one thread, against
# 167 us plus 42 us to copy the operand row-major first): attention's ``q @ k.transpose(-2, -1)``
# and its backward's products. MKL's do not (72 us on two threads transposed, against 66 us
# plus the 42 us copy), so with MKL (Note [BLAS provider] in blas.py) the operand stays as is.
SMALL_TRANSPOSED = 64 * 128   # elements of one right-hand matrix


def _row_major_if_small_transposed(b):
    if b.shape[-1] * b.shape[-2] <= SMALL_TRANSPOSED and b.strides[-2] == b.itemsize != \
            b.strides[-1] and b.shape[-1] > 1 and blas.provider() != "mkl":
        return np.ascontiguousarray(b)
    return b


_GEMM_DTYPES = {np.dtype(np.float32): 0, np.dtype(np.float64): 1}


def _layout(x, item):
    """(stored transposed, leading dimension) of a matrix BLAS reads in place, else None."""
    r, c = x.shape[-2:]
    s0, s1 = x.strides[-2:]
    if (s1 == item or c == 1) and (r == 1 or (s0 % item == 0 and s0 // item >= c)):
        return 0, (s0 // item if r > 1 else max(c, 1))
    if (s0 == item or r == 1) and (c == 1 or (s1 % item == 0 and s1 // item >= r)):
        return 1, (s1 // item if c > 1 else max(r, 1))
    return None


def _gemm_row(a, b, out, bias=None):
    """The ``strata_gemm`` row (native_pool.py) of ``out = a @ b`` (``+ bias``, Note [Bias
    epilogue]), as a list, or None where BLAS cannot read the operands in place or write
    ``out`` as rows."""
    code = _GEMM_DTYPES.get(a.dtype)
    if code is None or b.dtype != a.dtype or out.dtype != a.dtype or a.shape[-1] == 0:
        return None
    item = a.itemsize
    la, lb, lc = _layout(a, item), _layout(b, item), _layout(out, item)
    if la is None or lb is None or lc is None or lc[0] or not out.flags.writeable:
        return None
    batch, strides = 1, [0, 0, 0]
    if a.ndim == 3:
        batch = a.shape[0]
        strides = [x.strides[0] // item for x in (a, b, out)]
        if any(x.strides[0] % item for x in (a, b, out)):
            return None
    m, k = a.shape[-2:]
    return [code, la[0], lb[0], m, b.shape[-1], k, la[1], lb[1], lc[1],
            _address(a), _address(b), _address(out), batch, *strides,
            0 if bias is None else _address(bias)]


def _address(x):
    """``x.ctypes.data``, in 0.3 us instead of 1 us where ``x`` lends its buffer."""
    flags = x.flags
    return native.pointer(x) if flags.c_contiguous and flags.writeable else x.ctypes.data


_M, _N, _A, _B, _C, _BATCH, _BIAS = 3, 4, 9, 10, 11, 12, 16    # fields of a row
ROW_POINTERS, ROW_OUTPUT = (_A, _B, _C, _BIAS), _C     # (a bias field of 0: no bias)


def row_span(row, field):
    """[low, high) of the bytes a ``_gemm_row`` row reads or writes through its pointer
    ``field`` (one of ``ROW_POINTERS``): every matrix of its batch, with the leading
    dimensions' gaps."""
    (dtype, trans_a, trans_b, m, n, k, lda, ldb, ldc, _, _, _, batch, stride_a, stride_b,
     stride_c, _) = (int(v) for v in row)
    rows, columns, lead, stride = {_A: ((k, m) if trans_a else (m, k)) + (lda, stride_a),
                                   _B: ((n, k) if trans_b else (k, n)) + (ldb, stride_b),
                                   _C: (m, n, ldc, stride_c), _BIAS: (1, n, n, 0)}[field]
    elements = 0 if rows * columns == 0 else (rows - 1) * lead + columns
    elements += (max(batch, 1) - 1) * stride if elements else 0
    start = int(row[field])
    return start, start + elements * (8 if dtype & 1 else 4)     # (dtype 2, 3: NumPy's BLAS)


def split_rows(a, b, out, threads, bias=None):
    """The ``strata_gemm`` rows of ``out = a @ b`` (``+ bias`` for two matrices, Note [Bias
    epilogue]) in one block per thread (Note [Parallel GEMM]): a batch's matrices, else the
    output's rows, or its columns when there are fewer rows; None where BLAS cannot take the
    operands in place. The blocks' addresses are computed from the whole product's (reading
    an array's address costs ~1 us in Python)."""
    whole = _gemm_row(a, b, out, bias)
    if whole is None:
        return None
    item = a.itemsize
    if a.ndim == 3:
        field, size, align = _BATCH, a.shape[0], 1
        moves = ((_A, whole[13] * item), (_B, whole[14] * item), (_C, whole[15] * item))
    elif a.shape[0] >= b.shape[1]:
        field, size, align = _M, a.shape[0], GEMM_BLOCK_ALIGN
        moves = ((_A, item if whole[1] else whole[6] * item), (_C, whole[8] * item))
    else:
        field, size, align = _N, b.shape[1], GEMM_BLOCK_ALIGN
        moves = ((_B, whole[7] * item if whole[2] else item), (_C, item)) + \
            (((_BIAS, item),) if bias is not None else ())
    starts, step = _blocks(size, threads, align)
    rows = []
    for start in starts:
        row = whole.copy()
        row[field] = min(step, size - start)
        for f, stride in moves:
            row[f] += start * stride
        rows.append(row)
    return rows


def run_products(products) -> bool:
    """Each ``(a, b, out)`` of ``products`` (float matrices, or equal batches of them) as
    single-threaded BLAS calls side by side on the native pool (Note [Native pool]), a batched
    one split along its batch over ``threads``; False (nothing run) where that pool is not
    available or BLAS cannot take one of them in place."""
    if native_pool.library() is None:
        return False
    rows, operands = [], []
    for a, b, out in products:
        if a.ndim == 3:
            b = _row_major_if_small_transposed(b)
            made = split_rows(a, b, out, array.NUM_THREADS)
        else:
            made = _gemm_row(a, b, out)
            made = None if made is None else [made]
        if made is None:
            return False
        rows += made
        operands += (a, b, out)
    native_pool.run_gemms(np.array(rows, np.int64), operands)
    return True


def mm(self, mat2):
    dt = L.mm.meta(self, mat2).dtype
    a, b = _operands(dt, self, mat2)
    return wrap(matmul(a, b), dt)


def bmm(self, mat2):
    dt = L.bmm.meta(self, mat2).dtype
    a, b = _operands(dt, self, mat2)
    return wrap(matmul(a, b), dt)


# Note [addmm lane]: ``linear``'s call — float32 or float64 operands of one dtype, two matrices,
# ``beta`` and ``alpha`` the int 1 — is ``matmul`` (``np.dot`` unless large: Note [Parallel
# GEMM]) plus an in-place add of the bias, computed
# before any check: every argument the meta refuses there (shapes that do not multiply, a bias
# that does not expand to the result) makes one of the two NumPy calls raise ValueError, and
# only then does the meta run, to raise PyTorch's error instead. Nothing is written but the
# fresh result, so no state changes before the error.
_LANE_DTYPES = (D.float32, D.float64)
# A Linear's bias (a contiguous row of the result's columns) goes on in the product's own blocks
# (Note [Bias epilogue]), or from native.ARITHMETIC_MIN_SIZE elements by a row kernel on the
# native pool (Note [Native arithmetic] in elementwise.py: 1024x512 += 512 took 154 us on one
# thread); any other shape by NumPy's broadcast.


def addmm(self, mat1, mat2, beta=1, alpha=1):
    dt = mat2.dtype
    if dt in _LANE_DTYPES and self.dtype is dt and mat1.dtype is dt and \
            beta.__class__ is int and alpha.__class__ is int and beta == 1 and alpha == 1 \
            and len(mat1._shape) == 2 and len(mat2._shape) == 2:
        a, b, bias = mat1._array, mat2._array, self._array
        try:
            b = _blas_ready(b if b is not None else mat2._np())
            bias = bias if bias is not None else self._np()
            if bias.shape == b.shape[1:] and bias.flags.c_contiguous:    # a Linear's bias
                out = matmul(_blas_ready(a if a is not None else mat1._np()), b, bias=bias)
            else:       # NumPy broadcasts (or refuses) any other shape
                out = matmul(_blas_ready(a if a is not None else mat1._np()), b)
                out += bias
        except ValueError:
            L.addmm.meta(self, mat1, mat2, beta, alpha)   # raises PyTorch's error
            raise
        return from_array(out, dt)
    dt = L.addmm.meta(self, mat1, mat2, beta, alpha).dtype
    a, b = _operands(dt, mat1, mat2)
    out = matmul(a, b)
    alpha, beta = L.blas_scalar(alpha, dt), L.blas_scalar(beta, dt)
    if alpha != 1:
        out *= alpha
    if beta != 0:   # beta == 0 ignores self entirely (NaN included), as BLAS does
        bias = compute_data(self, dt)
        out += bias if beta == 1 else bias * beta
    return wrap(out, dt)


addmm.calls_no_ops = True   # Note [Kernels that call no ops] (dispatch/dispatcher.py)


def einsum(equation, tensors, path=None):
    spec, dt = L.einsum_check(equation, tensors)
    arrays = [np.broadcast_to(compute_data(t, dt), shape)
              for t, shape in zip(tensors, spec.operand_shapes)]
    out = np.asarray(np.einsum(spec.equation, *arrays, optimize=len(arrays) > 1))
    return wrap(out if out.flags.c_contiguous else np.ascontiguousarray(out), dt)


# --- factorizations -------------------------------------------------------------------------------

def _batch_prefix(batch_shape, index):
    """PyTorch names the failing matrix of a batch: "(Batch element 3): "."""
    return f"(Batch element {index}): " if batch_shape else ""


def _first_failure(mats, fails):
    """Index of the first matrix of a flattened batch for which ``fails(matrix)`` is truthy."""
    for i, m in enumerate(mats):
        if fails(m):
            return i
    return 0


def _zero_pivot(m):
    """1-based index of the first exactly-zero pivot of Gaussian elimination with partial
    pivoting (LAPACK getrf's ``info``), or 0 if there is none."""
    a = np.array(m, dtype=np.float64)
    n = a.shape[0]
    for k in range(n):
        p = k + int(np.argmax(np.abs(a[k:, k])))
        if a[p, k] == 0:
            return k + 1
        a[[k, p]] = a[[p, k]]
        a[k + 1:, k:] -= np.outer(a[k + 1:, k] / a[k, k], a[k, k:])
    return 0


def linalg_inv(A):
    dt = LF.linalg_inv.meta(A).dtype
    arr = data(A)
    try:
        return wrap(np.linalg.inv(arr), dt)
    except np.linalg.LinAlgError:
        mats = arr.reshape((-1,) + arr.shape[-2:])
        i = _first_failure(mats, _zero_pivot)
        raise LF.LinAlgError(
            f"linalg.inv: {_batch_prefix(arr.shape[:-2], i)}The diagonal element "
            f"{_zero_pivot(mats[i])} is zero, the inversion could not be completed because the "
            f"input matrix is singular.") from None


def linalg_det(A):
    dt = LF.linalg_det.meta(A).dtype
    return wrap(np.linalg.det(data(A)), dt)


def linalg_solve(A, B, left=True):
    dt = LF.linalg_solve.meta(A, B, left).dtype
    a, b = data(A), data(B)
    vector = LF.solve_is_vector(A, B)
    if not left:   # X A = B  <=>  A^T X^T = B^T
        a = np.swapaxes(a, -1, -2)
        if not vector:
            b = np.swapaxes(b, -1, -2)
    if vector:
        b = b[..., None]
    try:
        x = np.linalg.solve(a, b)
    except np.linalg.LinAlgError:
        batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
        mats = np.broadcast_to(a, batch + a.shape[-2:]).reshape((-1,) + a.shape[-2:])
        i = _first_failure(mats, _zero_pivot)
        raise LF.LinAlgError(f"torch.linalg.solve: {_batch_prefix(batch, i)}The solver failed "
                             f"because the input matrix is singular.") from None
    if vector:
        x = x[..., 0]
    elif not left:
        x = np.swapaxes(x, -1, -2)
    return wrap(np.ascontiguousarray(x), dt)


def _not_positive_definite(m):
    """Order of the first leading minor that is not positive-definite (0 if none)."""
    for k in range(1, m.shape[0] + 1):
        try:
            np.linalg.cholesky(m[:k, :k])
        except np.linalg.LinAlgError:
            return k
    return 0


def linalg_cholesky(self, upper=False):
    dt = LF.linalg_cholesky.meta(self, upper).dtype
    arr = data(self)
    try:
        return wrap(np.ascontiguousarray(np.linalg.cholesky(arr, upper=upper)), dt)
    except np.linalg.LinAlgError:
        mats = arr.reshape((-1,) + arr.shape[-2:])
        i = _first_failure(mats, _not_positive_definite)
        raise LF.LinAlgError(
            f"linalg.cholesky: {_batch_prefix(arr.shape[:-2], i)}The factorization could not be "
            f"completed because the input is not positive-definite (the leading minor of order "
            f"{_not_positive_definite(mats[i])} is not positive-definite).") from None


def _identity_like(shape, dt):
    out = np.zeros(shape, dt.np)
    out[..., range(shape[-1]), range(shape[-1])] = 1
    return out


def linalg_qr(A, mode="reduced"):
    q_spec, r_spec = LF.linalg_qr.meta(A, mode)
    dt = A.dtype
    arr = data(A)
    if arr.size == 0:   # LAPACK needs a non-empty matrix; Q is the identity, R is empty
        q = _identity_like(q_spec.shape, dt) if mode != "r" else np.empty((0,), dt.np)
        return wrap(q, dt), wrap(np.zeros(r_spec.shape, dt.np), dt)
    if mode == "r":
        return wrap(np.empty((0,), dt.np), dt), wrap(np.linalg.qr(arr, mode="r"), dt)
    q, r = np.linalg.qr(arr, mode=mode)
    return wrap(np.ascontiguousarray(q), dt), wrap(np.ascontiguousarray(r), dt)


def _svd(arr, **kwargs):
    """``np.linalg.svd``, except that a matrix holding inf or nan gives nan (what LAPACK gives
    ATen) instead of NumPy's "SVD did not converge"; its batch-mates are unaffected."""
    bad = ~np.isfinite(arr).all(axis=(-2, -1))
    if not bad.any():
        return np.linalg.svd(arr, **kwargs)
    out = np.linalg.svd(np.where(bad[..., None, None], 0, arr), **kwargs)

    def nan_where_bad(x, trailing):
        return np.where(bad.reshape(bad.shape + (1,) * trailing), np.nan, x).astype(x.dtype)
    if not kwargs.get("compute_uv", True):
        return nan_where_bad(out, 1)
    u, s, vh = out
    return nan_where_bad(u, 2), nan_where_bad(s, 1), nan_where_bad(vh, 2)


def linalg_svd(A, full_matrices=True, driver=None):
    u_spec, s_spec, v_spec = LF.linalg_svd.meta(A, full_matrices, driver)
    dt = A.dtype
    arr = data(A)
    if arr.size == 0:   # singular vectors of an empty matrix: identities (PyTorch's result)
        return (wrap(_identity_like(u_spec.shape, dt), dt), wrap(np.zeros(s_spec.shape, dt.np), dt),
                wrap(_identity_like(v_spec.shape, dt), dt))
    u, s, vh = _svd(arr, full_matrices=full_matrices)
    return (wrap(np.ascontiguousarray(u), dt), wrap(s, dt), wrap(np.ascontiguousarray(vh), dt))


def linalg_svdvals(A, driver=None):
    spec = LF.linalg_svdvals.meta(A, driver)
    arr = data(A)
    if arr.size == 0:
        return wrap(np.zeros(spec.shape, spec.dtype.np), spec.dtype)
    return wrap(_svd(arr, compute_uv=False), spec.dtype)


def linalg_eig(self):
    values_spec, vectors_spec = LF.linalg_eig.meta(self)
    arr = data(self)
    if not np.isfinite(arr).all():
        raise RuntimeError("torch.linalg.eig: input tensor should not contain infs or NaNs.")
    if arr.size == 0:
        return (wrap(np.empty(values_spec.shape, values_spec.dtype.np), values_spec.dtype),
                wrap(np.empty(vectors_spec.shape, vectors_spec.dtype.np), vectors_spec.dtype))
    w, v = np.linalg.eig(arr)   # LAPACK geev, as PyTorch: unit-norm vectors, largest part real
    return wrap(w, values_spec.dtype), wrap(np.ascontiguousarray(v), vectors_spec.dtype)


def linalg_eigh(self, UPLO="L"):
    LF.linalg_eigh.meta(self, UPLO)
    dt = self.dtype
    w, v = np.linalg.eigh(data(self), UPLO=UPLO)
    return wrap(w, dt), wrap(np.ascontiguousarray(v), dt)


def linalg_pinv(self, atol=None, rtol=None, hermitian=False):
    """Invert the singular values (|eigenvalues| when hermitian) above max(atol, rtol * the
    largest), as PyTorch."""
    spec = LF.linalg_pinv.meta(self, atol, rtol, hermitian)
    dt = self.dtype
    arr = data(self)
    if arr.size == 0:
        return wrap(np.zeros(spec.shape, dt.np), dt)
    atol, rtol = LF.pinv_tolerances(dt, arr.shape[-2], arr.shape[-1], atol, rtol)
    if hermitian:
        w, v = np.linalg.eigh(arr)   # reads the lower triangle, as PyTorch
        size = np.abs(w)
        keep = size > np.maximum(size.max(-1, keepdims=True) * rtol, atol)
        left, right = v * np.where(keep, 1 / w, 0)[..., None, :], np.swapaxes(v, -1, -2)
    else:
        u, s, vh = _svd(arr, full_matrices=False)
        keep = s > np.maximum(s[..., :1] * rtol, atol)
        left = np.swapaxes(vh, -1, -2) * np.where(keep, 1 / s, 0)[..., None, :]
        right = np.swapaxes(u, -1, -2)
    return wrap(np.matmul(left, right), dt)


def geqrf(self):
    dt = LF.geqrf.meta(self)[0].dtype
    reflectors, tau = np.linalg.qr(compute_data(self, dt), mode="raw")   # LAPACK's, transposed
    return wrap(np.ascontiguousarray(np.swapaxes(reflectors, -1, -2)), dt), wrap(tau, dt)


KERNELS = {
    L.mm: mm, L.bmm: bmm, L.addmm: addmm, L.einsum: einsum, LF.linalg_pinv: linalg_pinv,
    LF.linalg_inv: linalg_inv, LF.linalg_det: linalg_det, LF.linalg_solve: linalg_solve,
    LF.linalg_cholesky: linalg_cholesky, LF.linalg_qr: linalg_qr, LF.linalg_svd: linalg_svd,
    LF.linalg_svdvals: linalg_svdvals, LF.linalg_eigh: linalg_eigh, LF.linalg_eig: linalg_eig,
    LF.geqrf: geqrf,
}
