"""Process groups on MPI (``torch/distributed/distributed_c10d.py``'s group management).

A ``ProcessGroup`` is an MPI communicator plus one worker thread that runs the group's
collectives in the order they were issued (Note [One worker per group]). ``init_process_group``
makes the default group over ``MPI.COMM_WORLD``; ``new_group`` splits it.

Note [Ending the job when a rank fails]: under MPI, a rank that dies from an unhandled exception
blocks in ``MPI_Finalize`` while its peers wait in a collective forever. So once a group exists,
an uncaught exception on any rank (main thread or another thread) prints the traceback and calls
``MPI_Abort``, which makes mpiexec end every rank; a collective that does not finish within the
group's timeout does the same. No rank hangs.
"""

import datetime
import os
import sys
import threading
import time
import traceback

from .. import config
from .work import Worker, YieldingComm

default_pg_timeout = datetime.timedelta(minutes=30)


class Backend(str):
    """``Backend("MPI") == "mpi"``. strata runs every backend name on MPI: ``"gloo"`` (what CPU
    scripts ask for) is accepted as MPI; ``"nccl"`` needs CUDA, which strata does not have."""

    UNDEFINED = "undefined"
    GLOO = "gloo"
    NCCL = "nccl"
    MPI = "mpi"

    def __new__(cls, name: str):
        if not isinstance(name, str):
            raise ValueError(f"Backend constructor parameter must be string-ish, but got: "
                             f"{type(name)}")
        return str.__new__(cls, name.lower())


class ProcessGroup:
    """The ranks of one communicator. ``comm`` is the mpi4py communicator; ``ranks`` the global
    ranks of its members, in group-rank order."""

    def __init__(self, comm, ranks, timeout, name):
        self.comm = comm
        self.worker_comm = YieldingComm(comm)   # what the worker calls (Note [Waiting ...])
        self.ranks = list(ranks)
        self.timeout = timeout
        self.group_name = name
        self.seq = 0   # collectives issued, the first field of their fingerprint
        self.worker = Worker(name, timeout.total_seconds(), _abort)

    def dup_comm(self):
        """A new communicator over this group's ranks, for a caller that starts its own
        nonblocking collectives (Note [Requests on the caller's thread]). Every rank must call
        it, in the same order among the group's collectives: it runs on the worker."""
        comms = []
        self.worker.submit("comm_dup", lambda: comms.append(self.comm.Dup())).wait()
        return comms[0]

    def rank(self) -> int:
        return self.comm.Get_rank()

    def size(self) -> int:
        return self.comm.Get_size()

    def name(self) -> str:
        return "mpi"

    def __repr__(self):
        return f"ProcessGroup(name={self.group_name!r}, ranks={self.ranks})"


class GroupMember:
    """``group.WORLD`` is the default group; ``NON_GROUP_MEMBER`` what ``new_group`` returns
    to a process that is not in the new group."""

    NON_GROUP_MEMBER = -100

    @property
    def WORLD(self):
        return _state.world


group = GroupMember()


class _State:
    world = None           # the default ProcessGroup
    groups = []            # every group made by init_process_group / new_group
    backend = None


_state = _State()
_DEFAULT_PG_ERROR = ("Default process group has not been initialized, please make sure to call "
                     "init_process_group.")


def _mpi():
    from mpi4py import MPI   # imported on first use: importing it initialises MPI
    return MPI


def is_available() -> bool:
    """True when mpi4py (the MPI binding) is installed: ``pip install strata[distributed]``."""
    import importlib.util
    return importlib.util.find_spec("mpi4py") is not None


def is_initialized() -> bool:
    return _state.world is not None


def is_mpi_available() -> bool:
    return is_available()


def is_gloo_available() -> bool:
    return False


def is_nccl_available() -> bool:
    return False


def is_torchelastic_launched() -> bool:
    return config.distributed_env.get("TORCHELASTIC_RUN_ID") is not None


def _env_int(name, fallback):
    value = config.distributed_env.get(name)
    return fallback if value in (None, "") else int(value)


def init_process_group(backend=None, init_method=None, timeout=None, world_size=-1, rank=-1,
                       store=None, group_name="", pg_options=None, device_id=None):
    """Join the default process group: every rank of an ``mpiexec``/``strata run`` job calls it.

    Ranks and the world size come from MPI (as in PyTorch's MPI backend, ``rank``/
    ``world_size`` are only checked, not used); ``env://`` needs no store, because mpiexec
    already connected the ranks."""
    if store is not None and init_method is not None:
        raise AssertionError("Cannot specify both init_method and store.")
    if timeout is None:
        timeout = default_pg_timeout
    elif not isinstance(timeout, datetime.timedelta):
        raise TypeError(f"Expected timeout argument to be of type datetime.timedelta, got "
                        f"{type(timeout)}")
    if _state.world is not None:
        raise ValueError("trying to initialize the default process group twice!")
    name = Backend(backend or "mpi")
    if name == Backend.NCCL:
        raise RuntimeError("Distributed package doesn't have NCCL built in (strata has no CUDA; "
                           "use backend='mpi')")
    if name not in (Backend.MPI, Backend.GLOO):
        raise RuntimeError(f"Invalid backend: '{backend}' (strata.distributed runs on 'mpi')")
    init_method = init_method or "env://"
    if not init_method.startswith("env://"):
        raise ValueError(f"strata.distributed: init_method {init_method!r} is not supported; "
                         f"the ranks are connected by mpiexec, use 'env://'")
    if not is_available():
        raise RuntimeError("strata.distributed needs mpi4py and an MPI library: "
                           "pip install 'strata[distributed]'")
    MPI = _mpi()
    world = MPI.COMM_WORLD
    mpi_rank, mpi_size = world.Get_rank(), world.Get_size()
    expected_size = world_size if world_size > 0 else _env_int("WORLD_SIZE", mpi_size)
    expected_rank = rank if rank >= 0 else _env_int("RANK", mpi_rank)
    if (expected_size, expected_rank) != (mpi_size, mpi_rank):
        raise RuntimeError(
            f"strata.distributed: this process is MPI rank {mpi_rank} of {mpi_size}, but "
            f"rank={expected_rank} and world_size={expected_size} were asked for (arguments or "
            f"RANK/WORLD_SIZE); start the ranks with `strata run --nproc-per-node N` or "
            f"`mpiexec -n N`")
    _install_abort_on_failure()
    _state.backend = name
    _state.world = ProcessGroup(world.Dup(), range(mpi_size), timeout, group_name or "default_pg")
    _state.groups = [_state.world]


def _default_group():
    if _state.world is None:
        raise ValueError(_DEFAULT_PG_ERROR)
    return _state.world


def resolve(group):
    """The ProcessGroup a collective runs on (None -> the default group)."""
    world = _default_group()
    if group is None:
        return world
    if not isinstance(group, ProcessGroup) or group not in _state.groups:
        raise ValueError("Invalid process group specified")
    return group


def is_member(group) -> bool:
    return not (isinstance(group, int) and group == GroupMember.NON_GROUP_MEMBER)


def get_rank(group=None) -> int:
    if not is_member(group):
        return -1
    return resolve(group).rank()


def get_world_size(group=None) -> int:
    if not is_member(group):
        return -1
    return resolve(group).size()


def get_backend(group=None) -> str:
    resolve(group if is_member(group) else None)
    return _state.backend


def get_global_rank(group, group_rank: int) -> int:
    pg = resolve(group)
    if not 0 <= group_rank < len(pg.ranks):
        raise ValueError(f"Group rank {group_rank} is not part of group {pg}")
    return pg.ranks[group_rank]


def get_group_rank(group, global_rank: int) -> int:
    pg = resolve(group)
    if global_rank not in pg.ranks:
        raise ValueError(f"Global rank {global_rank} is not part of group {pg}")
    return pg.ranks.index(global_rank)


def get_process_group_ranks(group):
    return list(resolve(group).ranks)


def new_group(ranks=None, timeout=None, backend=None, pg_options=None,
              use_local_synchronization=False, group_desc=None, device_id=None):
    """A group of some ranks. Every rank of the default group must call it, members or not,
    in the same order; non-members get ``GroupMember.NON_GROUP_MEMBER``."""
    world = _default_group()
    ranks = sorted(range(world.size()) if ranks is None else ranks)
    if len(ranks) > world.size():
        raise ValueError("the new group's world size should be less or equal to the world size "
                         "set by init_process_group")
    for r in ranks:
        if r < 0 or r >= world.size():
            raise ValueError("The new group's rank should be within the world_size set by "
                             "init_process_group")
    me = world.rank()
    # Split is collective over the whole world, so every rank takes part even if not a member.
    comm = world.comm.Split(0 if me in ranks else _mpi().UNDEFINED, ranks.index(me)
                            if me in ranks else 0)
    if me not in ranks:
        return GroupMember.NON_GROUP_MEMBER
    pg = ProcessGroup(comm, ranks, timeout or world.timeout,
                      group_desc or f"group{len(_state.groups)}")
    _state.groups.append(pg)
    return pg


def destroy_process_group(group=None):
    """Destroy one group, or (None / WORLD) every group, which de-initialises the package."""
    if group is None or group is _state.world:
        for pg in _state.groups:
            pg.worker.close()
        _state.world, _state.groups, _state.backend = None, [], None
        return
    if not isinstance(group, ProcessGroup) or group not in _state.groups:
        raise ValueError("Invalid process group specified")
    group.worker.close()
    _state.groups.remove(group)


def record_failure(text):
    """Append ``text`` to this rank's error file, when the launcher asked for one (config.
    distributed_error_dir): the launcher prints it after the job, even if MPI_Abort cut off the
    rank's own output."""
    if config.distributed_error_dir is None:
        return
    rank = _mpi().COMM_WORLD.Get_rank()
    try:
        with open(os.path.join(config.distributed_error_dir, f"rank{rank}.txt"), "a") as f:
            f.write(text.rstrip("\n") + "\n")
    except OSError:   # the report is a courtesy: never let it stop the abort
        pass


ABORT_OUTPUT_GRACE_S = 0.25


def _abort(message, code=1):
    """Print ``message`` and end the whole MPI job (Note [Ending the job when a rank fails])."""
    record_failure(message)
    prefix = "" if getattr(sys.stderr, "prefixes_rank", False) else _prefix()
    sys.stderr.write(f"{prefix}{message}\n{prefix}strata.distributed: aborting the job "
                     f"(MPI_Abort) so that no rank waits forever\n")
    sys.stderr.flush()
    sys.stdout.flush()
    # mpiexec's proxy forwards a rank's output on its own time and MPI_Abort tears it down: on
    # a busy machine the message above was sometimes lost. A moment lets it through.
    time.sleep(ABORT_OUTPUT_GRACE_S)
    _mpi().COMM_WORLD.Abort(code)
    os._exit(code)   # MPI_Abort can return once a peer has finalized; never go on regardless


def abort_job(code, reason):
    """End every rank of the job now (what the launcher's rank wrapper calls on a failure)."""
    _abort(f"{reason}; exit code {code}", code)


_hooks_installed = False


def _install_abort_on_failure():
    global _hooks_installed
    if _hooks_installed:
        return
    _hooks_installed = True
    previous = sys.excepthook

    def excepthook(kind, value, tb):
        if _state.world is None:
            return previous(kind, value, tb)
        text = "".join(traceback.format_exception(kind, value, tb)).rstrip()
        prefix = "" if getattr(sys.stderr, "prefixes_rank", False) else _prefix()
        _abort(("uncaught exception:\n" + text).replace("\n", "\n" + prefix))

    def thread_excepthook(args):
        if _state.world is None or args.exc_type is SystemExit:
            return
        excepthook(args.exc_type, args.exc_value, args.exc_traceback)

    sys.excepthook = excepthook
    threading.excepthook = thread_excepthook


def _prefix():
    return f"[rank{_mpi().COMM_WORLD.Get_rank()}]: "


__all__ = ["Backend", "GroupMember", "ProcessGroup", "default_pg_timeout",
           "destroy_process_group", "get_backend", "get_global_rank", "get_group_rank",
           "get_process_group_ranks", "get_rank", "get_world_size", "group", "init_process_group",
           "is_available", "is_gloo_available", "is_initialized", "is_mpi_available",
           "is_nccl_available", "is_torchelastic_launched", "new_group"]
