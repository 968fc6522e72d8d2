"""``set_num_threads``/``get_num_threads`` govern strata's kernel pool, which splits the large
matrix products too; BLAS is held at one thread per call (Note [Default thread count]);
``parallel_for`` hands chunks out dynamically (Note [CPU parallel_for])."""

import os
import subprocess
import sys
import threading

import numpy as np
import pytest
import torch
from threadpoolctl import threadpool_info

import strata
from strata.backends.cpu import array, threads


@pytest.fixture
def restore_threads():
    before = strata.get_num_threads()
    yield
    strata.set_num_threads(before)


def _blas_threads():
    return {pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"}


def test_set_num_threads_governs_blas_and_the_pool(restore_threads):
    for n in (1, 3):
        strata.set_num_threads(n)
        assert strata.get_num_threads() == n
        assert _blas_threads() <= {1}
        chunks = []
        array.parallel_for(0, 100 * n, 1, lambda lo, hi, chunks=chunks: chunks.append(
            (lo, hi, threading.current_thread().name)))
        assert len(chunks) == (n * array.CHUNKS_PER_THREAD if n > 1 else 1)
        covered = sorted((lo, hi) for lo, hi, _ in chunks)   # disjoint, in order, everything
        assert covered[0][0] == 0 and covered[-1][1] == 100 * n
        assert all(a[1] == b[0] for a, b in zip(covered, covered[1:]))
        assert {name.split("_")[0] for *_, name in chunks} <= {"MainThread", "strata-cpu"}


def test_a_busy_pool_thread_does_not_hold_a_loop_back(restore_threads):
    """A pool thread that cannot start (here: blocked; on a busy machine: waiting for a core)
    leaves its chunks to the caller instead of making the loop wait for it."""
    strata.set_num_threads(2)
    array.parallel_for(0, 2, 1, lambda lo, hi: None)      # start the pool
    release, blocked = threading.Event(), threading.Event()
    array._pool.submit(lambda: blocked.set() or release.wait(30))
    assert blocked.wait(30)
    try:
        names = []
        array.parallel_for(0, 64, 1, lambda lo, hi: names.append(threading.current_thread().name))
        assert set(names) == {"MainThread"} and len(names) == 2 * array.CHUNKS_PER_THREAD
    finally:
        release.set()


def test_an_error_in_a_chunk_is_raised_after_every_chunk_ran(restore_threads):
    strata.set_num_threads(2)
    ran = []

    def chunk(lo, hi):
        ran.append(lo)
        if lo == 0:
            raise ValueError("chunk 0")
    with pytest.raises(ValueError, match="chunk 0"):
        array.parallel_for(0, 64, 1, chunk)
    assert len(ran) == 2 * array.CHUNKS_PER_THREAD


def test_parallel_results_do_not_depend_on_the_thread_count(restore_threads):
    x = strata.tensor(np.random.default_rng(0).standard_normal(1 << 19).astype(np.float32))
    strata.set_num_threads(1)
    one = (x * 2 + 1).numpy()
    strata.set_num_threads(2)
    np.testing.assert_array_equal((x * 2 + 1).numpy(), one)


@pytest.mark.parametrize("value", [0, -1, 1.5, "2", True])
def test_bad_counts_raise_as_torch_and_change_nothing(value, restore_threads):
    before = strata.get_num_threads()
    with pytest.raises(RuntimeError) as t_err:
        torch.set_num_threads(value)
    with pytest.raises(RuntimeError) as s_err:
        strata.set_num_threads(value)
    assert str(s_err.value) == str(t_err.value)
    assert strata.get_num_threads() == before


def test_other_libraries_openmp_pools_are_left_alone(restore_threads):
    """strata runs no OpenMP code: PyTorch's intra-op pool keeps its own count."""
    before = torch.get_num_threads()
    strata.set_num_threads(1)
    assert torch.get_num_threads() == before


def test_default_pool_uses_every_core_and_blas_one_thread():
    if threads.config.num_threads is not None:
        pytest.skip("STRATA_NUM_THREADS/OMP_NUM_THREADS set for this run")
    assert threads.default_num_threads() == threads.usable_cores()
    code = ("import strata; from threadpoolctl import threadpool_info; "
            "print(strata.get_num_threads(), "
            "{p['num_threads'] for p in threadpool_info() if p['user_api'] == 'blas'})")
    env = {k: v for k, v in os.environ.items()
           if k not in ("STRATA_NUM_THREADS", "OMP_NUM_THREADS")}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         timeout=60, check=True).stdout.split(maxsplit=1)
    assert out[0] == str(threads.usable_cores()) and out[1].strip() in ("{1}", "set()")


@pytest.mark.parametrize("shapes", [((300, 200), (200, 100)), ((40, 300), (300, 500)),
                                    ((6, 90, 80), (6, 80, 70)), ((1, 500), (500, 4000))])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_products_split_over_the_pool_match_torch_and_repeat_exactly(shapes, dtype,
                                                                     restore_threads):
    """Note [Parallel GEMM]: a product split by rows, columns or batch over 1-3 threads
    matches torch and the one-thread product within BLAS's rounding, and the same thread count
    gives the same bits every time."""
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal(s).astype(dtype) for s in shapes)
    expected = torch.matmul(torch.tensor(a), torch.tensor(b)).numpy()
    tol = 1e-4 if dtype == np.float32 else 1e-10
    for n in (1, 2, 3):
        strata.set_num_threads(n)
        first = strata.matmul(strata.tensor(a), strata.tensor(b)).numpy()
        np.testing.assert_allclose(first, expected, rtol=tol, atol=tol)
        for _ in range(3):
            np.testing.assert_array_equal(
                strata.matmul(strata.tensor(a), strata.tensor(b)).numpy(), first)


@pytest.mark.parametrize("var", ["STRATA_NUM_THREADS", "OMP_NUM_THREADS"])
def test_environment_sets_the_default(var):
    env = {k: v for k, v in os.environ.items()
           if k not in ("STRATA_NUM_THREADS", "OMP_NUM_THREADS")}
    env[var] = "3"
    code = ("import strata; from threadpoolctl import threadpool_info; "
            "print(strata.get_num_threads(), "
            "{p['num_threads'] for p in threadpool_info() if p['user_api'] == 'blas'})")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         timeout=60, check=True).stdout.split(maxsplit=1)
    assert out[0] == "3" and out[1].strip() in ("{1}", "set()")
