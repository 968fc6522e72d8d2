"""Collectives on picklable objects (``broadcast_object_list``, ``all_gather_object``, ...).

An object travels as the bytes ``strata.save`` writes, and is read back with ``strata.load``'s
restricted unpickler (``weights_only=True``, the default): a peer's bytes can build tensors,
containers, plain values and allowlisted classes (``strata.serialization.add_safe_globals``),
never run code. ``weights_only=False`` unpickles anything and is only for ranks you trust.
As in PyTorch, sizes are exchanged first, then the padded bytes; these calls block.
"""

import io

import numpy as np

from .. import serialization
from .collectives import _group_root
from .process_group import _mpi, is_member, resolve


def _to_bytes(obj) -> np.ndarray:
    stream = io.BytesIO()
    serialization.save(obj, stream)
    return np.frombuffer(stream.getvalue(), dtype=np.uint8)


def _from_bytes(data: np.ndarray, weights_only):
    return serialization.load(io.BytesIO(data.tobytes()), weights_only=weights_only)


def _run(pg, op_name, run):
    MPI = _mpi()
    pg.seq += 1
    return pg.worker.submit(op_name, lambda: run(pg.worker_comm, MPI)).wait()


def _allgather_bytes(pg, payload):
    """Every rank's payload, as a list indexed by group rank."""
    out = {}

    def run(comm, MPI):
        sizes = np.empty(comm.Get_size(), np.int64)
        comm.Allgather(np.array([payload.size], np.int64), sizes)
        data = np.empty(int(sizes.sum()), np.uint8)
        comm.Allgatherv(payload, [data, (sizes, None)])
        out["parts"] = np.split(data, np.cumsum(sizes)[:-1])
    _run(pg, "all_gather_object", run)
    return out["parts"]


def all_gather_object(object_list, obj, group=None, *, weights_only=True):
    """``object_list[r]`` = rank r's ``obj`` on every rank."""
    if not is_member(group):
        return
    pg = resolve(group)
    if len(object_list) != pg.size():
        raise ValueError(f"all_gather_object: object_list must have world size {pg.size()} "
                         f"entries, got {len(object_list)}")
    parts = _allgather_bytes(pg, _to_bytes(obj))
    for i, part in enumerate(parts):
        object_list[i] = _from_bytes(part, weights_only)


def broadcast_object_list(object_list, src=None, group=None, device=None, group_src=None, *,
                          weights_only=True):
    """Replace ``object_list``'s items with ``src``'s, on every rank."""
    if not is_member(group):
        return
    pg = resolve(group)
    root = _group_root(pg, src, group_src, "broadcast", "src")
    payload = _to_bytes(list(object_list)) if pg.rank() == root else None
    out = {}

    def run(comm, MPI):
        size = np.array([payload.size if payload is not None else 0], np.int64)
        comm.Bcast(size, root=root)
        data = payload if payload is not None else np.empty(int(size[0]), np.uint8)
        comm.Bcast(data, root=root)
        out["data"] = data
    _run(pg, "broadcast_object_list", run)
    if pg.rank() != root:
        received = _from_bytes(out["data"], weights_only)
        if len(received) != len(object_list):
            raise RuntimeError(f"broadcast_object_list: rank {pg.ranks[root]} sent "
                               f"{len(received)} objects, this rank's list has "
                               f"{len(object_list)}")
        object_list[:] = received


def gather_object(obj, object_gather_list=None, dst=None, group=None, group_dst=None, *,
                  weights_only=True):
    """``object_gather_list[r]`` on ``dst`` = rank r's ``obj`` (None elsewhere)."""
    if not is_member(group):
        return
    pg = resolve(group)
    root = _group_root(pg, dst, group_dst, "gather", "dst")
    if pg.rank() == root and (object_gather_list is None
                              or len(object_gather_list) != pg.size()):
        raise ValueError("Argument ``object_gather_list`` must be specified on destination "
                         "rank, with one entry per rank.")
    parts = _allgather_bytes(pg, _to_bytes(obj))
    if pg.rank() == root:
        for i, part in enumerate(parts):
            object_gather_list[i] = _from_bytes(part, weights_only)


def scatter_object_list(scatter_object_output_list, scatter_object_input_list=None, src=None,
                        group=None, group_src=None, *, weights_only=True):
    """``scatter_object_output_list[0]`` = ``src``'s ``scatter_object_input_list[rank]``."""
    if not is_member(group):
        return
    pg = resolve(group)
    root = _group_root(pg, src, group_src, "scatter", "src")
    if not isinstance(scatter_object_output_list, list) or not scatter_object_output_list:
        raise ValueError("Expected argument scatter_object_output_list to be a list of size at "
                         "least 1.")
    inputs = [None]
    if pg.rank() == root:
        if scatter_object_input_list is None or len(scatter_object_input_list) != pg.size():
            raise ValueError("scatter_object_input_list must have one object per rank on the "
                             "source rank")
        inputs = list(scatter_object_input_list)
    everything = [None]
    broadcast_object_list(everything if pg.rank() != root else [inputs], src=None,
                          group=group, group_src=root, weights_only=weights_only)
    chosen = inputs if pg.rank() == root else everything[0]
    scatter_object_output_list[0] = chosen[pg.rank()]
