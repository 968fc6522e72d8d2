"""DDP on 2 ranks (ddp_worker.py): half batches == one process on the full batch within 1e-5
after 20 steps (MLP, CNN, the example char transformer; several buckets; gradient_as_bucket_view),
no_sync accumulation, find_unused_parameters, the unused-parameter error, SyncBatchNorm."""

import os
import re

import pytest

pytest.importorskip("mpi4py")

from mpi_job import run_job  # noqa: E402


def test_ddp_matches_single_process_training():
    code, output, _ = run_job("ddp_worker.py", 2, timeout=300)
    assert code == 0, output[-4000:]
    for rank in range(2):
        assert f"[rank{rank}]: ddp ok on rank {rank}" in output, output[-4000:]
    for kind in ("mlp", "cnn", "transformer"):
        buckets = re.findall(rf"\[rank0\]: {kind} .*, (\d+) buckets", output)
        assert buckets and all(int(b) > 1 for b in buckets), output[-4000:]


def test_ddp_digits_example_trains_and_resumes_from_rank0_checkpoint(tmp_path):
    example = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "ddp_digits.py")
    checkpoint = tmp_path / "ddp.ckpt"
    for epochs in (1, 2):
        code, output, _ = run_job(os.path.abspath(example), 2, "--epochs", epochs, "--quiet",
                                  "--checkpoint", checkpoint)
        assert code == 0, output[-4000:]
    assert "[rank1]: resumed from" in output and "[rank0]: resumed from" in output
    accuracy = float(re.search(r"test accuracy ([\d.]+)%", output).group(1))
    assert accuracy > 85, output
