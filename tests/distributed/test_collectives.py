"""Every collective on 2 and 4 local ranks against NumPy (collectives_worker.py), sync and async,
every reduce op, several dtypes, subgroups, objects, point to point."""

import pytest

pytest.importorskip("mpi4py")

from mpi_job import run_job  # noqa: E402


@pytest.mark.parametrize("nproc", [2, 4])
def test_collectives_match_numpy(nproc):
    code, output, _ = run_job("collectives_worker.py", nproc)
    assert code == 0, output[-4000:]
    for rank in range(nproc):
        assert f"[rank{rank}]: collectives ok on rank {rank} of {nproc}" in output, output[-4000:]
