"""The launcher's environment, and failures: a rank that raises, is killed, leaves, or calls a
mismatched collective ends the job non-zero within the group's timeout (8 s), never a hang."""

import os
import subprocess
import sys
import time

import pytest

from strata.distributed.launch import mpiexec_path

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


def test_plain_mpiexec_rank_that_raises_ends_the_job(tmp_path):
    """Without the launcher, init_process_group's excepthook aborts the job."""
    script = tmp_path / "raise_on_rank1.py"
    script.write_text(
        "import datetime\nimport strata\nimport strata.distributed as dist\n"
        "dist.init_process_group('mpi', timeout=datetime.timedelta(seconds=8))\n"
        "if dist.get_rank() == 1:\n    raise ValueError('boom under plain mpiexec')\n"
        "t = strata.ones(2)\ndist.all_reduce(t)\nprint('sum', t.tolist())\n")
    start = time.monotonic()
    done = subprocess.run([mpiexec_path(), "-n", "2", sys.executable, str(script)],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          timeout=60, env=dict(os.environ))
    assert done.returncode != 0, done.stdout
    assert "[rank1]: ValueError: boom under plain mpiexec" in done.stdout, done.stdout
    assert "sum" not in done.stdout
    assert time.monotonic() - start < 8 + 20
