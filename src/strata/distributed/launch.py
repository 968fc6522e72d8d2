"""The launcher behind ``strata run --nproc-per-node N script.py args``: torchrun's environment,
mpiexec's processes.

The launcher runs ``mpiexec`` (hydra, from the ``mpich`` wheel next to this Python) with one
process per rank; each rank runs ``python -m strata run --as-rank script.py args``, the *rank
wrapper* (``run_rank``), which

1. initialises MPI at once, so that from then on a rank that exits early is noticed by mpiexec
   (a rank that died before MPI started would leave the others waiting in MPI_Init forever);
2. sets torchrun's variables (RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, MASTER_ADDR,
   MASTER_PORT; OMP_NUM_THREADS=1 unless set) and prefixes every output line with ``[rankN]:``;
3. runs the script with ``torch`` resolving to strata; if it raises, or exits non-zero, it prints
   the error and calls MPI_Abort, which makes mpiexec end every rank and exit non-zero.

Several hosts: ``--nnodes M --hostfile F`` (one host name per line, as hydra's ``-f``) starts
M * N ranks, N per host; MASTER_ADDR is the first host.
"""

import os
import runpy
import shutil
import sys
import traceback

from .. import config


def mpiexec_path() -> str:
    """The mpiexec of the ``mpich`` wheel installed next to this Python, else the one on PATH."""
    beside = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    if os.path.exists(beside):
        return beside
    found = shutil.which("mpiexec")
    if found is None:
        raise RuntimeError("strata run --nproc-per-node: mpiexec not found; install it with "
                           "pip install 'strata[distributed]' (the mpich wheel brings it)")
    return found


def _first_host(hostfile):
    with open(hostfile) as f:
        for line in f:
            host = line.split("#")[0].split(":")[0].strip()
            if host:
                return host
    raise ValueError(f"strata run: hostfile {hostfile} names no host")


def mpiexec_command(script, script_args, nproc_per_node, nnodes=1, hostfile=None,
                    master_addr=None, master_port=29500, error_dir=None):
    """The mpiexec command line that starts every rank under the rank wrapper; a failing rank
    writes why to ``error_dir/rank<N>.txt`` when one is given."""
    if nproc_per_node < 1 or nnodes < 1:
        raise ValueError("strata run: --nproc-per-node and --nnodes must be at least 1")
    if nnodes > 1 and hostfile is None:
        raise ValueError("strata run: --nnodes > 1 needs --hostfile (one host per line)")
    world = nproc_per_node * nnodes
    addr = master_addr or (_first_host(hostfile) if hostfile else "127.0.0.1")
    env = {"WORLD_SIZE": world, "LOCAL_WORLD_SIZE": nproc_per_node, "MASTER_ADDR": addr,
           "MASTER_PORT": master_port}
    if "OMP_NUM_THREADS" not in config.distributed_env and nproc_per_node > 1:
        env["OMP_NUM_THREADS"] = 1
    if error_dir is not None:
        env["STRATA_DISTRIBUTED_ERROR_DIR"] = error_dir
    cmd = [mpiexec_path(), "-n", str(world), "-ppn", str(nproc_per_node)]
    if hostfile is not None:
        cmd += ["-f", hostfile]
    for name, value in env.items():
        cmd += ["-genv", name, str(value)]
    return cmd + [sys.executable, "-m", "strata", "run", "--as-rank", script, *script_args]


def launch(script, script_args, nproc_per_node, nnodes=1, hostfile=None, master_addr=None,
           master_port=29500) -> int:
    """Run the job; returns mpiexec's exit status (non-zero if any rank failed). Like torchrun's
    error summary, the failed ranks' own reports are printed last: MPI_Abort can end the job
    before mpiexec forwarded a rank's last lines (its traceback)."""
    import subprocess
    import tempfile
    with tempfile.TemporaryDirectory(prefix="strata-run-") as error_dir:
        cmd = mpiexec_command(script, script_args, nproc_per_node, nnodes, hostfile, master_addr,
                              master_port, error_dir)
        code = subprocess.call(cmd)
        if code != 0:
            _print_failures(error_dir)
    return code


def _print_failures(error_dir):
    reports = sorted(os.listdir(error_dir), key=lambda name: int(name[4:-4]))
    for name in reports:
        with open(os.path.join(error_dir, name)) as f:
            text = f.read().rstrip("\n")
        sys.stderr.write(f"strata run: {name[:-4]} failed:\n{text}\n")
    sys.stderr.flush()


def _from_script(exc, script):
    """The traceback from the script's first frame on: the wrapper's frames are plumbing."""
    tb, path = exc.__traceback__, os.path.abspath(script)
    while tb is not None and os.path.abspath(tb.tb_frame.f_code.co_filename) != path:
        tb = tb.tb_next
    return tb or exc.__traceback__


class _RankPrefixed:
    """A text stream that starts every line with ``[rankN]: `` (whole lines, flushed at once,
    so the ranks' lines interleave but never mix)."""

    prefixes_rank = True   # process_group._abort then adds no second prefix

    def __init__(self, stream, prefix):
        self._stream = stream
        self._prefix = prefix
        self._partial = ""

    def write(self, text):
        *lines, self._partial = (self._partial + text).split("\n")
        if lines:
            self._stream.write("".join(f"{self._prefix}{line}\n" for line in lines))
            self._stream.flush()
        return len(text)

    def flush(self):
        if self._partial:
            self._stream.write(self._prefix + self._partial)
            self._partial = ""
        self._stream.flush()

    def __getattr__(self, name):
        return getattr(self._stream, name)


def run_rank(script, script_args, install_torch_alias) -> int:
    """The rank wrapper (see the module docstring); on a failure it ends the job instead of
    returning. ``install_torch_alias`` makes ``import torch`` resolve to strata (the CLI passes
    it: that module sits above this layer)."""
    from mpi4py import MPI
    world = MPI.COMM_WORLD
    rank = world.Get_rank()
    env = config.distributed_env
    os.environ["RANK"] = str(rank)
    os.environ["LOCAL_RANK"] = env.get("MPI_LOCALRANKID", "0")
    os.environ.setdefault("WORLD_SIZE", str(world.Get_size()))
    os.environ.setdefault("LOCAL_WORLD_SIZE", env.get("MPI_LOCALNRANKS", "1"))
    config.distributed_env.update(RANK=os.environ["RANK"], LOCAL_RANK=os.environ["LOCAL_RANK"])
    sys.stdout = _RankPrefixed(sys.stdout, f"[rank{rank}]: ")
    sys.stderr = _RankPrefixed(sys.stderr, f"[rank{rank}]: ")
    install_torch_alias()
    sys.argv = [script, *script_args]
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    code, reason = 0, ""
    try:
        runpy.run_path(script, run_name="__main__")
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        if exc.code not in (None, 0) and not isinstance(exc.code, int):
            print(exc.code, file=sys.stderr)
        reason = f"{script} called sys.exit({exc.code!r})"
    except BaseException as exc:   # noqa: BLE001 -- any failure must end the whole job
        text = "".join(traceback.format_exception(type(exc), exc, _from_script(exc, script)))
        sys.stderr.write(text)
        code, reason = 1, f"{script} raised (traceback above)"
        from .process_group import record_failure
        record_failure(text)
    sys.stdout.flush()
    sys.stderr.flush()
    if code:
        from .process_group import abort_job
        abort_job(code, reason)
    return 0
