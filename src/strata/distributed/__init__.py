"""``strata.distributed``: ``torch.distributed`` on MPI (mpi4py + the ``mpich`` wheel).

    # strata run --nproc-per-node 2 train.py      (or: mpiexec -n 2 python train.py)
    import strata.distributed as dist
    dist.init_process_group("mpi")
    t = strata.ones(3) * dist.get_rank()
    dist.all_reduce(t)                            # every rank: [1., 1., 1.]

process_group.py holds groups and failure handling, collectives.py the tensor collectives,
objects.py the object collectives, work.py the worker thread and ``Work``, launch.py the
``strata run --nproc-per-node`` launcher. docs/distributed.md is the user guide.
"""

from .buffers import ReduceOp
from .collectives import (
    P2POp, all_gather, all_gather_into_tensor, all_reduce, all_to_all, all_to_all_single,
    barrier, batch_isend_irecv, broadcast, gather, irecv, isend, monitored_barrier, recv, reduce,
    reduce_scatter, reduce_scatter_tensor, scatter, send,
)
from .objects import (
    all_gather_object, broadcast_object_list, gather_object, scatter_object_list,
)
from .process_group import (
    Backend, GroupMember, ProcessGroup, default_pg_timeout, destroy_process_group, get_backend,
    get_global_rank, get_group_rank, get_process_group_ranks, get_rank, get_world_size, group,
    init_process_group, is_available, is_gloo_available, is_initialized, is_mpi_available,
    is_nccl_available, is_torchelastic_launched, new_group,
)
from .work import Work

__all__ = [
    "Backend", "GroupMember", "P2POp", "ProcessGroup", "ReduceOp", "Work", "all_gather",
    "all_gather_into_tensor", "all_gather_object", "all_reduce", "all_to_all",
    "all_to_all_single", "barrier", "batch_isend_irecv", "broadcast", "broadcast_object_list",
    "default_pg_timeout", "destroy_process_group", "gather", "gather_object", "get_backend",
    "get_global_rank", "get_group_rank", "get_process_group_ranks", "get_rank", "get_world_size",
    "group", "init_process_group", "irecv", "is_available", "is_gloo_available",
    "is_initialized", "is_mpi_available", "is_nccl_available", "is_torchelastic_launched",
    "isend", "monitored_barrier", "new_group", "recv", "reduce", "reduce_scatter",
    "reduce_scatter_tensor", "scatter", "scatter_object_list", "send",
]
