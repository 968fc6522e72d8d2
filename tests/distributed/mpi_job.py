"""Start a script on N local ranks with ``strata run --nproc-per-node N``, bounded in time."""

import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def run_job(script, nproc, *args, timeout=180):
    """``(returncode, output, seconds)`` of the job; output is stdout and stderr together."""
    cmd = [sys.executable, "-m", "strata", "run", "--nproc-per-node", str(nproc),
           os.path.join(HERE, script), *map(str, args)]
    start = time.monotonic()
    done = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          timeout=timeout)
    return done.returncode, done.stdout, time.monotonic() - start
