"""The CPU backend's thread count honours OMP_NUM_THREADS as PyTorch's does (launchers set it to 1
so that several ranks on one machine do not oversubscribe its cores)."""

import os
import subprocess
import sys

import pytest

SRC = os.path.join(os.path.dirname(__file__), "..", "src")


def threads_in_fresh_process(module, omp_num_threads):
    env = dict(os.environ, PYTHONPATH=os.path.abspath(SRC))
    env.pop("OMP_NUM_THREADS", None)
    if omp_num_threads is not None:
        env["OMP_NUM_THREADS"] = omp_num_threads
    code = f"import {module}; print({module}.get_num_threads())"
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    return int(done.stdout.strip())


@pytest.mark.parametrize("omp_num_threads", ["1", str(len(os.sched_getaffinity(0)) + 1)])
def test_omp_num_threads_caps_the_thread_count_as_in_torch(omp_num_threads):
    assert threads_in_fresh_process("strata", omp_num_threads) == \
        threads_in_fresh_process("torch", omp_num_threads) == \
        min(int(omp_num_threads), len(os.sched_getaffinity(0)))


def test_without_omp_num_threads_every_usable_core():
    assert threads_in_fresh_process("strata", None) == len(os.sched_getaffinity(0))
