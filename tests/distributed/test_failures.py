"""The launcher's environment, and failures: a rank that raises, is killed, leaves, or calls a
mismatched collective ends the job non-zero within the group's timeout (8 s), never a hang."""

import pytest

pytest.importorskip("mpi4py")

from mpi_job import run_job  # noqa: E402


def test_launcher_sets_torchrun_environment_and_prefixes_output():
    code, output, _ = run_job("failure_worker.py", 2, "none")
    assert code == 0, output
    assert "[rank0]: env 0 0 2 2 127.0.0.1 29500 strata" in output
    assert "[rank1]: env 1 1 2 2 127.0.0.1 29500 strata" in output
    assert "[rank1]: sum [2.0, 2.0]" in output


@pytest.mark.parametrize("mode, says", [
    ("raise", "ValueError: boom on rank 1"),
    ("kill", "Killed"),
    ("mismatch", "Detected mismatch between collectives on ranks"),
    ("leave", "did not finish within the process group's timeout"),
])
def test_failing_rank_ends_the_job(mode, says):
    code, output, seconds = run_job("failure_worker.py", 2, mode, timeout=60)
    assert code != 0, output
    assert says in output, output
    assert "sum" not in output
    assert seconds < 8 + 20, f"took {seconds:.1f} s"
