"""``set_num_threads``/``get_num_threads`` govern strata's kernel pool and BLAS (threadpoolctl);
the default leaves one core free (Note [Default thread count])."""

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
        assert _blas_threads() <= {n}
        chunks = []
        array.parallel_for(0, 4 * n, 1, lambda lo, hi, chunks=chunks: chunks.append(
            (lo, hi, threading.current_thread().name)))
        assert len(chunks) == n   # one chunk per thread
        assert sum(hi - lo for lo, hi, _ in chunks) == 4 * n
        assert {name.split("_")[0] for *_, name in chunks} <= {"MainThread", "strata-cpu"}


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


def test_default_leaves_one_core_free():
    if threads.config.num_threads is not None:
        pytest.skip("STRATA_NUM_THREADS/OMP_NUM_THREADS set for this run")
    assert threads.default_num_threads() == max(1, threads.usable_cores() - 1)


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
    assert out[0] == "3" and out[1].strip() in ("{3}", "set()")
