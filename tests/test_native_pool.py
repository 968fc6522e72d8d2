"""The native pool (backends/cpu/native_pool.py, Note [Native pool]): BLAS calls and generated
kernels split over C threads that spin a while after each loop. Products through it equal
NumPy's, in every layout BLAS reads in place; layouts it cannot read, no pool, a forked child,
threads calling at once and a changed thread count all still give the right numbers."""

import ctypes
import multiprocessing
import threading

import numpy as np
import pytest

import strata
from strata import config
from strata.backends.cpu import linalg, native, native_pool

pytestmark = pytest.mark.skipif(native_pool.library() is None,
                                reason="no native pool (no C compiler or no CBLAS symbol)")


@pytest.fixture
def two_threads():
    before = strata.get_num_threads()
    strata.set_num_threads(2)
    yield
    strata.set_num_threads(before)


def _layout(a, transposed):
    """``a`` with the same values, stored transposed (its last two dims swapped in memory)."""
    return np.ascontiguousarray(np.swapaxes(a, -1, -2)).swapaxes(-1, -2) if transposed else a


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("ta, tb", [(False, False), (False, True), (True, False), (True, True)])
@pytest.mark.parametrize("shape", [(300, 200, 500), (64, 784, 512), (1000, 64, 40),
                                   (8, 96, 48, 80)])
def test_split_products_equal_numpy(two_threads, dtype, ta, tb, shape):
    """Row, column and batch splits (Note [Parallel GEMM]) of every operand layout."""
    rng = np.random.default_rng(0)
    *batch, m, k, n = shape
    a = _layout(rng.standard_normal((*batch, m, k)).astype(dtype), ta)
    b = _layout(rng.standard_normal((*batch, k, n)).astype(dtype), tb)
    got = linalg.matmul(a, b)
    tol = 1e-4 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(got, np.matmul(a.astype(np.float64), b), rtol=tol, atol=tol * k)
    assert got.dtype == dtype and got.shape == (*batch, m, n)


def test_products_run_on_the_pool_and_unreadable_layouts_do_not(two_threads, monkeypatch):
    rows = []
    original = native_pool.run_gemms
    monkeypatch.setattr(native_pool, "run_gemms", lambda table, operands=():
                        rows.append(len(table)) or original(table, operands))
    rng = np.random.default_rng(1)
    a = rng.standard_normal((512, 256)).astype(np.float32)
    b = rng.standard_normal((256, 512)).astype(np.float32)
    np.testing.assert_allclose(linalg.matmul(a, b), a @ b, rtol=1e-5, atol=1e-3)
    assert rows == [2]                       # one loop: a block per thread
    for x, y in ((a[::-1], b), (a, b[:, ::2]), (a.astype(np.complex64), b)):
        rows.clear()                          # a negative stride, no unit stride, complex
        np.testing.assert_allclose(linalg.matmul(x, y), x @ y, rtol=1e-4, atol=1e-2)
        assert rows == []


def test_run_products_refuses_what_blas_cannot_take_in_place():
    a = np.ones((4, 3), np.float32)
    out = np.empty((4, 5), np.float32)
    assert not linalg.run_products([(a, np.ones((3, 5), np.float64), out)])   # mixed dtypes
    assert not linalg.run_products([(a, np.ones((3, 10), np.float32)[:, ::2], out)])
    assert not linalg.run_products([(a, np.ones((3, 5), np.float32), np.empty((5, 4),
                                                                              np.float32).T)])
    assert linalg.run_products([(a, np.ones((3, 5), np.float32), out)])
    np.testing.assert_array_equal(out, np.full((4, 5), 3, np.float32))


def test_the_worker_count_follows_set_num_threads():
    before = strata.get_num_threads()
    try:
        for n in (1, 3, 2):
            strata.set_num_threads(n)
            assert native_pool.library().strata_pool_workers() == n - 1
    finally:
        strata.set_num_threads(before)


def test_threads_calling_at_once_get_their_own_products(two_threads):
    """A second caller while a loop runs computes its product on its own thread."""
    rng = np.random.default_rng(2)
    pairs = [(rng.standard_normal((256, 256)).astype(np.float32),
              rng.standard_normal((256, 256)).astype(np.float32)) for _ in range(4)]
    results = [None] * len(pairs)

    def run(i):
        for _ in range(20):
            results[i] = linalg.matmul(*pairs[i])
    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(pairs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for (a, b), got in zip(pairs, results):
        np.testing.assert_allclose(got, a @ b, rtol=1e-4, atol=1e-3)


def _product_in_child(queue):
    rng = np.random.default_rng(3)
    a = rng.standard_normal((512, 300)).astype(np.float32)
    b = rng.standard_normal((300, 400)).astype(np.float32)
    queue.put(float(np.abs(linalg.matmul(a, b) - a @ b).max()))


def test_a_forked_child_starts_its_own_workers(two_threads):
    linalg.matmul(np.ones((512, 512), np.float32), np.ones((512, 512), np.float32))
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    child = context.Process(target=_product_in_child, args=(queue,))
    child.start()
    error = queue.get(timeout=60)
    child.join(timeout=60)
    assert child.exitcode == 0 and error < 1e-2


def test_without_native_kernels_products_use_the_python_pool(two_threads, monkeypatch):
    monkeypatch.setattr(native_pool, "_lib", None)
    monkeypatch.setattr(config, "native_kernels", False)
    native.reset()
    try:
        assert native_pool.library() is None
        a = np.random.default_rng(4).standard_normal((512, 512)).astype(np.float32)
        np.testing.assert_allclose(linalg.matmul(a, a), a @ a, rtol=1e-4, atol=1e-3)
    finally:
        native.reset()


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "bool", "complex64",
                                   "float16", "bfloat16"])
@pytest.mark.parametrize("dim", [0, 1, 2, -1])
def test_large_cat_matches_torch(two_threads, dtype, dim):
    """Note [Native cat] (backends/cpu/shape.py): a concatenation past 64 KB is one memcpy a
    row per input on the pool, whatever the dtype; a transposed input is made contiguous
    first, an empty one adds nothing; values, dtype and shape as torch's."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(4)
    shapes = [[16, 64, 128], [16, 64, 96], [16, 64, 0], [16, 64, 128]]
    for s in shapes:
        s[dim % 3], s[2] = s[2], s[dim % 3]       # the varying size along ``dim``
    made = [strata.tensor(rng.standard_normal(s) * 100).to(getattr(strata, dtype))
            for s in shapes]
    made[1] = made[1].transpose(0, 1).contiguous().transpose(0, 1)   # another layout
    want = torch.cat([torch.from_numpy(t.to(strata.float64).numpy()).to(getattr(torch, dtype))
                      for t in made], dim)
    got = strata.cat(made, dim)
    assert tuple(got.shape) == tuple(want.shape)
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    assert got.is_contiguous()
    np.testing.assert_array_equal(got.to(strata.float64).numpy(), want.double().numpy())


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("m, k, n", [(1024, 128, 512), (64, 784, 512), (300, 200, 500)])
def test_linear_bias_in_the_product_blocks(two_threads, dtype, m, k, n):
    """Note [Bias epilogue] (linalg.py): a Linear's bias added to each block of a split
    product (rows, or columns: the bias moves with them) by the thread that computed it: the
    product's bits plus the bias, as the product then a separate add; torch's to rounding."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(6)
    x, w = rng.standard_normal((m, k)).astype(dtype), rng.standard_normal((n, k)).astype(dtype)
    b = rng.standard_normal(n).astype(dtype)
    got = strata.nn.functional.linear(strata.tensor(x), strata.tensor(w), strata.tensor(b))
    product = linalg.matmul(x, w.T)
    np.testing.assert_array_equal(got.numpy(), product + b)
    want = torch.nn.functional.linear(*map(torch.from_numpy, (x, w, b)))
    tol = 1e-4 if dtype == np.float32 else 1e-10
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize("op", ["addmm", "linear", "mm"])
def test_large_products_of_shapes_that_do_not_multiply_raise(op):
    """A product past the split threshold checks its inner dims as a small one does (it read
    only k rows of the right operand and returned garbage): PyTorch's error, no result."""
    x, w, b = strata.randn(1024, 128), strata.randn(256, 512), strata.randn(512)
    calls = {"addmm": lambda: strata.addmm(b, x, w), "mm": lambda: strata.mm(x, w),
             "linear": lambda: strata.nn.functional.linear(x, w.t(), b)}
    with pytest.raises(RuntimeError, match=r"mat1 and mat2 shapes cannot be multiplied "
                                           r"\(1024x128 and 256x512\)"):
        calls[op]()


_CHUNK_LOG = r"""
#include <stdint.h>
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>
static _Atomic int64_t started;
/* every element of [lo, hi) counted once more; the chunk's thread and its place among the
   chunks started, in thread_of[c] and order[c] (c = lo / step); ~20 us of waiting, so the
   caller does not finish its chunks before a worker starts */
void log_chunks(int64_t* seen, int64_t* thread_of, int64_t* order, int64_t step, int64_t lo,
                int64_t hi) {
    struct timespec start, now;
    order[lo / step] = atomic_fetch_add(&started, 1);
    thread_of[lo / step] = (int64_t)pthread_self();
    clock_gettime(CLOCK_MONOTONIC, &start);
    do clock_gettime(CLOCK_MONOTONIC, &now);
    while ((now.tv_sec - start.tv_sec) * 1000000000L + now.tv_nsec - start.tv_nsec < 20000);
    for (int64_t i = lo; i < hi; i++) seen[i] += 1;
}
"""


@pytest.mark.parametrize("chunks", [2, 3, 5, 8, 16])
def test_a_worker_starts_on_its_own_run_of_chunks(two_threads, chunks):
    """Note [Chunk affinity]: every element once, and the worker starts on its own run of
    chunks, the last ``chunks - chunks // 2``, where the caller starts on the first: a loop run
    again and again over a buffer gives the same part to the same core (taken in turns, the
    chunks alternated between the threads). A thread done early (or kept off its core) has
    the rest taken by the other: only the chunks before the worker's first may be the
    caller's."""
    lib = native.load("test_chunk_log", _CHUNK_LOG,
                      {"log_chunks": [ctypes.c_void_p] * 3 + [ctypes.c_int64] * 3})
    step, caller, own = 16, threading.get_ident() % (1 << 64), chunks // 2
    for _ in range(30):
        seen = np.zeros(chunks * step, np.int64)
        thread_of, order = np.zeros(chunks, np.int64), np.zeros(chunks, np.int64)
        context = np.array([seen.ctypes.data, thread_of.ctypes.data, order.ctypes.data, step],
                           np.int64)
        native_pool.library().strata_parallel(lib.log_chunks.strata_task, context.ctypes.data,
                                              0, chunks * step, step)
        assert (seen == 1).all()
        on_caller = [int(t) % (1 << 64) == caller for t in thread_of]
        workers = sorted((order[c], c) for c in range(chunks) if not on_caller[c])
        if workers and not all(on_caller[own:]):
            first = workers[0][1]
            assert first >= own and all(on_caller[own:first]), (on_caller, order)


def test_thread_counts_changed_again_and_again_never_hang():
    """A worker started just before the pool is stopped again (set_num_threads twice in a row)
    must see the stop: it once read the generation the stop had moved and slept for good,
    and the stop's join waited for it forever."""
    before = strata.get_num_threads()
    a = np.ones((256, 256), np.float32)
    try:
        for i in range(1000):
            strata.set_num_threads(1 + i % 3)
            if i % 100 == 0:
                np.testing.assert_allclose(linalg.matmul(a, a), a @ a, rtol=1e-5)
    finally:
        strata.set_num_threads(before)
