"""Run by test_failures.py: rank 1 fails in the way ``sys.argv[1]`` names; rank 0 waits for it in
an all_reduce. The job must end, non-zero, within the group's timeout."""

import datetime
import os
import signal
import sys

import torch               # `strata run` makes this strata
import torch.distributed as dist

mode = sys.argv[1]
print("env", *(os.environ[k] for k in ("RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE",
                                       "MASTER_ADDR", "MASTER_PORT")), torch.__name__)
dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=8))
rank = dist.get_rank()
if rank == 1:
    if mode == "raise":
        raise ValueError("boom on rank 1")
    if mode == "kill":
        os.kill(os.getpid(), signal.SIGKILL)
    if mode == "leave":        # exits cleanly without joining the all_reduce
        sys.exit(0)
t = torch.ones(2 + (rank if mode == "mismatch" else 0))
dist.all_reduce(t)
print("sum", t.tolist())
