"""Collectives on tensors (the "Collective functions" of ``torch.distributed``).

Each function checks its arguments on the calling thread, with PyTorch's errors, before anything
is sent; then queues the MPI calls to the group's worker (Note [One worker per group] in
work.py). The worker first exchanges a fingerprint (op, dtype, shape, root) so that ranks that
issue different collectives fail together with a clear error instead of exchanging garbage
(``STRATA_DISTRIBUTED_CHECK_COLLECTIVES=0`` skips it). ``async_op=True`` returns the ``Work``;
otherwise the call waits and returns None, as PyTorch's.
"""

import warnings

import numpy as np

from .._tensor import Tensor
from ..core import dtype as D
from .buffers import (HostBuffer, ReduceOp, check_fingerprints, check_reduce_op, fingerprint,
                      mpi_op, reduce_in_place)
from .process_group import _abort, _mpi, is_member, resolve
from .work import RequestWork


def _check_tensor(tensor, name="tensor"):
    if not isinstance(tensor, Tensor):
        raise TypeError(f"Invalid function argument. Expected parameter `{name}` of type "
                        f"strata.Tensor\n             but got {type(tensor)} instead.")


def _check_list(tensors, name):
    if not isinstance(tensors, (list, tuple)) or not all(isinstance(t, Tensor) for t in tensors):
        raise TypeError(f"Invalid function argument. Expected parameter `{name}` of type "
                        f"List[strata.Tensor]\n             but got {type(tensors)} instead.")


def _check_same_dtype(*tensors):
    first = tensors[0].dtype
    for t in tensors[1:]:
        if t.dtype is not first:
            raise ValueError(f"Invalid usage of tensors with different dtypesFound {t.dtype} and "
                             f" {first}")


def _shape_text(t):
    return "(" + ", ".join(str(d) for d in t.shape) + ")"


def _check_sizes(op_label, tensors, like):
    for i, t in enumerate(tensors):
        if tuple(t.shape) != tuple(like.shape):
            raise RuntimeError(f"ProcessGroupMPI::{op_label}: invalid tensor size at index {i} "
                               f"(expected {_shape_text(like)}, got {_shape_text(t)})")


def _skip_non_member(group, op_name):
    if is_member(group):
        return False
    from .process_group import _state
    rank = _state.world.rank() if _state.world is not None else -1
    warnings.warn(f"Running {op_name} on global rank {rank} which does not belong to the given "
                  f"group.")
    return True


def _group_root(pg, global_rank, group_rank, label, what="root"):
    """The group-relative root from ``src``/``dst`` (global) or ``group_src``/``group_dst``."""
    if global_rank is not None and group_rank is not None:
        raise ValueError(f"Can not specify both {what} and group_{what}")
    if group_rank is None:
        global_rank = 0 if global_rank is None else global_rank
        if global_rank not in pg.ranks:
            if 0 <= global_rank < (resolve(None).size()):
                raise ValueError(f"Global rank {global_rank} is not part of group {pg}")
            raise RuntimeError(f"ProcessGroupMPI::{label}: invalid root rank: {global_rank}")
        return pg.ranks.index(global_rank)
    if not 0 <= group_rank < pg.size():
        raise RuntimeError(f"ProcessGroupMPI::{label}: invalid root rank: {group_rank}")
    return group_rank


def _collective(pg, op_name, exchange, print_fields, async_op, buffers=(), outputs=(),
                **agreed):
    """Queue ``exchange(comm, MPI)`` on the group's worker once the ranks have checked that
    they all issue ``op_name`` with the same ``agreed`` fingerprint fields (dtype, shape, root,
    redop); wait unless ``async_op``. Every collective ends here."""
    MPI = _mpi()
    mine = fingerprint(_seq(pg), op_name, **agreed)

    def run():
        check_fingerprints(pg.worker_comm, MPI, mine)
        exchange(pg.worker_comm, MPI)
    work = pg.worker.submit(op_name, run, outputs, **print_fields)
    for buf in buffers:
        if buf.staged:
            work._after_wait(buf.write_back)
    if async_op:
        return work
    work.wait()
    return None


def _seq(pg):
    pg.seq += 1
    return pg.seq


def _fields(t, **more):
    return {"bytes": t.numel() * t.dtype.itemsize, "shape": list(t.shape), "dtype": str(t.dtype),
            **more}


def _like(t, **more):
    """The fingerprint fields of a collective over tensors shaped like ``t``."""
    return {"dtype": t.dtype, "shape": tuple(t.shape), **more}


def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduce ``tensor`` across the group in place; every rank ends with the same result."""
    _check_tensor(tensor)
    if _skip_non_member(group, "all_reduce"):
        return None
    pg = resolve(group)
    check_reduce_op("all_reduce", op, tensor.dtype)
    buf = HostBuffer(tensor)
    return _collective(
        pg, "all_reduce",
        lambda comm, MPI: reduce_in_place(comm, MPI, buf.array, op, tensor.dtype),
        _fields(tensor, op=op.name), async_op, [buf], [tensor], **_like(tensor, redop=op))


def all_reduce_flat(pg, comm, array, dtype, op, **trace_fields):
    """Start an all-reduce (SUM, MAX, ...; not AVG) of a flat host array in place, as a
    nonblocking MPI request on the caller's thread over ``comm``, a communicator of the caller's
    own (``pg.dup_comm()``); returns its ``RequestWork``. ``trace_fields`` label it on the comm
    track.

    DDP's buckets use it (Note [Requests on the caller's thread] in work.py). They skip the
    fingerprint exchange: DDP checked at construction that every rank has the same parameters,
    hence the same buckets, and one more round trip per bucket is what a step can least
    afford on busy cores."""
    MPI = _mpi()
    dtype = dtype or D.from_numpy_dtype(array.dtype)
    operand = array.astype(np.float32) if dtype is D.bfloat16 else array
    work = pg.worker.start_request(
        "all_reduce", lambda: comm.Iallreduce(MPI.IN_PLACE, operand, op=mpi_op(MPI, op, dtype)),
        bytes=array.nbytes, op=op.name, **trace_fields)
    if operand is not array:
        work._after_wait(lambda: np.copyto(array, operand, casting="unsafe"))
    return work


def reduce(tensor, dst=None, op=ReduceOp.SUM, group=None, async_op=False, group_dst=None):
    """Reduce into ``tensor`` on ``dst`` only."""
    _check_tensor(tensor)
    if _skip_non_member(group, "reduce"):
        return None
    pg = resolve(group)
    root = _group_root(pg, dst, group_dst, "reduce", "dst")
    check_reduce_op("reduce", op, tensor.dtype)
    buf = HostBuffer(tensor)
    return _collective(
        pg, "reduce",
        lambda comm, MPI: reduce_in_place(comm, MPI, buf.array, op, tensor.dtype, root),
        _fields(tensor, op=op.name, dst=root), async_op, [buf], [tensor],
        **_like(tensor, root=root, redop=op))


def broadcast(tensor, src=None, group=None, async_op=False, group_src=None):
    """Copy ``src``'s tensor into ``tensor`` on every other rank."""
    _check_tensor(tensor)
    if _skip_non_member(group, "broadcast"):
        return None
    pg = resolve(group)
    root = _group_root(pg, src, group_src, "broadcast", "src")
    buf = HostBuffer(tensor)
    return _collective(pg, "broadcast", lambda comm, MPI: comm.Bcast(buf.wire, root=root),
                       _fields(tensor, src=root), async_op, [buf], [tensor],
                       **_like(tensor, root=root))


def _scatter_rows(flat, buffers):
    for i, buf in enumerate(buffers):
        buf.array[...] = flat[i]


def all_gather(tensor_list, tensor, group=None, async_op=False):
    """``tensor_list[r]`` = rank r's ``tensor`` on every rank."""
    _check_list(tensor_list, "tensor_list")
    _check_tensor(tensor)
    if _skip_non_member(group, "all_gather"):
        return None
    pg = resolve(group)
    _check_same_dtype(tensor, *tensor_list)
    if len(tensor_list) != pg.size():
        raise RuntimeError(f"ProcessGroupMPI::allgather: invalid output tensor list at index 0 "
                           f"(expected length {pg.size()}, got {len(tensor_list)})")
    _check_sizes("allgather", tensor_list, tensor)
    send = HostBuffer(tensor)
    outs = [HostBuffer(t) for t in tensor_list]

    def exchange(comm, MPI):
        flat = np.empty((pg.size(), send.wire.size), dtype=send.wire.dtype)
        comm.Allgather(send.wire, flat)
        _scatter_rows(flat.view(send.array.dtype), outs)
    return _collective(pg, "all_gather", exchange, _fields(tensor), async_op, outs, tensor_list,
                       **_like(tensor))


def _one_tensor_each(collective, group, output, input, names, gathers, dtype_error,
                     size_error):
    """The start of the collectives over one flat tensor per side: the checks (PyTorch's
    words; the output holds world-size times the input's elements if it ``gathers``, else
    the input holds that many of the output's), then the group, or None off it."""
    _check_tensor(output, names[0])
    _check_tensor(input, names[1])
    if _skip_non_member(group, collective):
        return None
    pg = resolve(group)
    if output.dtype is not input.dtype:
        raise TypeError(dtype_error)
    whole, part = (output, input) if gathers else (input, output)
    if whole.numel() != part.numel() * pg.size():
        raise ValueError(size_error)
    return pg


def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op=False):
    """Rank r's ``input_tensor`` goes to ``output_tensor``'s r-th slice along dim 0."""
    pg = _one_tensor_each(
        "all_gather_into_tensor", group, output_tensor, input_tensor,
        ("output_tensor", "input_tensor"), True,
        "output tensor must have the same type as input tensor",
        "output tensor size must be equal to world_size times input tensor size")
    if pg is None:
        return None
    send, out = HostBuffer(input_tensor), HostBuffer(output_tensor)
    return _collective(pg, "all_gather_into_tensor",
                       lambda comm, MPI: comm.Allgather(send.wire, out.wire),
                       _fields(input_tensor), async_op, [out], [output_tensor],
                       **_like(input_tensor))


def _reduce_scatter_flat(comm, MPI, flat, out, op, dtype):
    """Sum the rows of ``flat`` (size x n) across ranks; rank r keeps row r in ``out``."""
    reduce_in_place(comm, MPI, flat.reshape(-1), op, dtype)
    out.array[...] = flat[comm.Get_rank()]


def reduce_scatter(output, input_list, op=ReduceOp.SUM, group=None, async_op=False):
    """Rank r gets the reduction of every rank's ``input_list[r]``."""
    _check_tensor(output, "output")
    _check_list(input_list, "input_list")
    if _skip_non_member(group, "reduce_scatter"):
        return None
    pg = resolve(group)
    _check_same_dtype(output, *input_list)
    if len(input_list) != pg.size():
        raise RuntimeError("invalid input tensor list size, must be world size")
    _check_sizes("reduce_scatter", input_list, output)
    check_reduce_op("reduce_scatter", op, output.dtype)
    ins = [HostBuffer(t) for t in input_list]
    out = HostBuffer(output)
    return _collective(
        pg, "reduce_scatter",
        lambda comm, MPI: _reduce_scatter_flat(comm, MPI, np.stack([b.array for b in ins]), out,
                                               op, output.dtype),
        _fields(output, op=op.name), async_op, [out], [output], **_like(output, redop=op))


def reduce_scatter_tensor(output, input, op=ReduceOp.SUM, group=None, async_op=False):
    """Rank r gets the reduction of every rank's r-th slice (dim 0) of ``input``."""
    pg = _one_tensor_each(
        "reduce_scatter_tensor", group, output, input, ("output", "input"), False,
        "input tensor must be the same type as the output tensor.",
        "input tensor must be the same size as output size times world size")
    if pg is None:
        return None
    check_reduce_op("reduce_scatter_tensor", op, output.dtype)
    inp, out = HostBuffer(input), HostBuffer(output)
    return _collective(
        pg, "reduce_scatter_tensor",
        lambda comm, MPI: _reduce_scatter_flat(comm, MPI, inp.array.reshape(pg.size(), -1).copy(),
                                               out, op, output.dtype),
        _fields(output, op=op.name), async_op, [out], [output], **_like(output, redop=op))


def _rooted_list(tensor, tensors, rank, group_rank, group, collective, what, role, kind):
    """gather's and scatter's start: the checks (PyTorch's words; ``role`` is the root's,
    "destination" or "source", ``kind`` the list's, "output" or "input"), then
    ``(pg, root, is_root)``, or None on a rank outside the group."""
    _check_tensor(tensor)
    if _skip_non_member(group, collective):
        return None
    pg = resolve(group)
    root = _group_root(pg, rank, group_rank, collective, what)
    is_root = pg.rank() == root
    arg = f"{collective}_list"
    if not is_root:
        if tensors:
            raise ValueError(f"Argument ``{arg}`` must NOT be specified on non-{role} ranks.")
        return pg, root, is_root
    if not tensors:
        raise ValueError(f"Argument ``{arg}`` must be specified on {role} rank.")
    _check_list(tensors, arg)
    _check_same_dtype(tensor, *tensors)
    if len(tensors) != pg.size():
        raise RuntimeError(f"ProcessGroupMPI::{collective}: Incorrect {kind} list size "
                           f"{len(tensors)}. {kind.capitalize()} list size should be "
                           f"{pg.size()}, same as size of the process group.")
    _check_sizes(collective, tensors, tensor)
    return pg, root, is_root


def gather(tensor, gather_list=None, dst=None, group=None, async_op=False, group_dst=None):
    """``gather_list[r]`` on ``dst`` = rank r's ``tensor``."""
    rooted = _rooted_list(tensor, gather_list, dst, group_dst, group, "gather", "dst",
                          "destination", "output")
    if rooted is None:
        return None
    pg, root, is_root = rooted
    send = HostBuffer(tensor)
    outs = [HostBuffer(t) for t in gather_list] if is_root else []

    def exchange(comm, MPI):
        flat = np.empty((pg.size(), send.wire.size), send.wire.dtype) if is_root else None
        comm.Gather(send.wire, flat, root=root)
        if is_root:
            _scatter_rows(flat.view(send.array.dtype), outs)
    return _collective(pg, "gather", exchange, _fields(tensor, dst=root), async_op, outs,
                       gather_list or [], **_like(tensor, root=root))


def scatter(tensor, scatter_list=None, src=None, group=None, async_op=False, group_src=None):
    """Rank r's ``tensor`` = ``scatter_list[r]`` of ``src``."""
    rooted = _rooted_list(tensor, scatter_list, src, group_src, group, "scatter", "src",
                          "source", "input")
    if rooted is None:
        return None
    pg, root, is_root = rooted
    out = HostBuffer(tensor)
    ins = [HostBuffer(t) for t in scatter_list] if is_root else []
    return _collective(
        pg, "scatter",
        lambda comm, MPI: comm.Scatter(np.stack([b.wire for b in ins]) if is_root else None,
                                       out.wire, root=root),
        _fields(tensor, src=root), async_op, [out], [tensor], **_like(tensor, root=root))


def all_to_all(output_tensor_list, input_tensor_list, group=None, async_op=False):
    """Rank r sends ``input_tensor_list[s]`` to rank s, which receives it in
    ``output_tensor_list[r]``."""
    _check_list(output_tensor_list, "output_tensor_list")
    _check_list(input_tensor_list, "input_tensor_list")
    if _skip_non_member(group, "all_to_all"):
        return None
    pg = resolve(group)
    for label, tensors in (("input", input_tensor_list), ("output", output_tensor_list)):
        if len(tensors) != pg.size():
            raise RuntimeError(f"ProcessGroupMPI::alltoall: {label} tensor list size "
                               f"{len(tensors)} does not match world size {pg.size()}")
    _check_same_dtype(*input_tensor_list, *output_tensor_list)
    ins = [HostBuffer(t) for t in input_tensor_list]
    outs = [HostBuffer(t) for t in output_tensor_list]
    dtype = input_tensor_list[0].dtype
    return _collective(pg, "all_to_all", lambda comm, MPI: _alltoallv(comm, ins, outs),
                       {"dtype": str(dtype)}, async_op, outs, output_tensor_list, dtype=dtype)


def _alltoallv(comm, ins, outs):
    send = np.concatenate([b.wire for b in ins])
    recv = np.empty(sum(b.wire.size for b in outs), send.dtype)
    send_counts = [b.wire.size for b in ins]
    recv_counts = [b.wire.size for b in outs]
    comm.Alltoallv([send, (send_counts, None)], [recv, (recv_counts, None)])
    offsets = np.cumsum([0] + recv_counts)
    for b, start, stop in zip(outs, offsets[:-1], offsets[1:]):
        b.wire[...] = recv[start:stop]


def all_to_all_single(output, input, output_split_sizes=None, input_split_sizes=None,
                      group=None, async_op=False):
    """``all_to_all`` on slices of dim 0 (even, unless split sizes are given)."""
    _check_tensor(output, "output")
    _check_tensor(input, "input")
    if _skip_non_member(group, "all_to_all_single"):
        return None
    pg = resolve(group)
    _check_same_dtype(input, output)
    ins = [HostBuffer(t) for t in _split(input, input_split_sizes, pg.size())]
    outs = [HostBuffer(t) for t in _split(output, output_split_sizes, pg.size())]
    return _collective(pg, "all_to_all_single", lambda comm, MPI: _alltoallv(comm, ins, outs),
                       _fields(input), async_op, outs, [output], dtype=input.dtype)


def _split(tensor, sizes, world):
    if sizes is None:
        if tensor.shape[0] % world:
            raise RuntimeError(f"Tensor's dim 0 does not divide equally across group size "
                               f"{world}")
        sizes = [tensor.shape[0] // world] * world
    if len(sizes) != world or sum(sizes) != tensor.shape[0]:
        raise RuntimeError(f"Split sizes doesn't match total dim 0 size (sizes {list(sizes)}, "
                           f"dim 0 {tensor.shape[0]}, group size {world})")
    return list(tensor.split(list(sizes)))


def barrier(group=None, async_op=False, device_ids=None):
    """Wait until every rank of the group reached the barrier."""
    if _skip_non_member(group, "barrier"):
        return None
    return _collective(resolve(group), "barrier", lambda comm, MPI: comm.Barrier(), {},
                       async_op)


def monitored_barrier(group=None, timeout=None, wait_all_ranks=False):
    work = barrier(group, async_op=True)
    if work is not None:
        work.wait(timeout)


# --- point to point -----------------------------------------------------------------------------

def _peer(pg, rank, group_rank, what):
    peer = _group_root(pg, rank, group_rank, "send" if what == "dst" else "recv", what) \
        if rank is not None or group_rank is not None else None
    if peer is not None and peer == pg.rank():
        word = "destination" if what == "dst" else "source"
        raise ValueError(f"Invalid {word} rank: {word} rank should not be the same as the rank "
                         f"of the current process.")
    return peer


def isend(tensor, dst=None, group=None, tag=0, group_dst=None):
    """Start sending ``tensor`` to ``dst``; do not modify it before the Work completes."""
    _check_tensor(tensor)
    if _skip_non_member(group, "isend"):
        return None
    pg = resolve(group)
    peer = _peer(pg, dst, group_dst, "dst")
    if peer is None:
        raise ValueError("isend: dst or group_dst must be given")
    buf = HostBuffer(tensor)
    request = pg.comm.Isend(buf.wire, dest=peer, tag=tag)
    work = RequestWork("send", pg.timeout.total_seconds(), _abort, request)
    work._buffer = buf   # keep the host copy alive while MPI reads it
    return work


def irecv(tensor, src=None, group=None, tag=0, group_src=None):
    """Start receiving into ``tensor`` from ``src`` (None: any rank)."""
    _check_tensor(tensor)
    if _skip_non_member(group, "irecv"):
        return None
    pg = resolve(group)
    MPI = _mpi()
    peer = _peer(pg, src, group_src, "src")
    buf = HostBuffer(tensor)
    request = pg.comm.Irecv(buf.wire, source=MPI.ANY_SOURCE if peer is None else peer, tag=tag)
    work = RequestWork("recv", pg.timeout.total_seconds(), _abort, request, [tensor])
    work.status = MPI.Status()
    if buf.staged:
        work._after_wait(buf.write_back)
    work.source_rank = lambda: pg.ranks[work.status.Get_source()]
    return work


def send(tensor, dst=None, group=None, tag=0, group_dst=None):
    work = isend(tensor, dst, group, tag, group_dst)
    if work is not None:
        work.wait()


def recv(tensor, src=None, group=None, tag=0, group_src=None):
    """Receive into ``tensor``; returns the sender's global rank."""
    work = irecv(tensor, src, group, tag, group_src)
    if work is None:
        return -1
    work.wait()
    return work.source_rank()


class P2POp:
    """One op of ``batch_isend_irecv``: ``P2POp(dist.isend, tensor, peer)``."""

    def __init__(self, op, tensor, peer=None, group=None, tag=0, group_peer=None):
        if op not in (isend, irecv):
            raise ValueError("Invalid ``op``. Expected ``op`` to be of type ``torch.distributed."
                             "isend`` or ``torch.distributed.irecv``.")
        self.op, self.tensor, self.peer = op, tensor, peer
        self.group, self.tag, self.group_peer = group, tag, group_peer


def batch_isend_irecv(p2p_op_list):
    """Post every op at once (all nonblocking), so the order across ranks does not matter."""
    return [p.op(p.tensor, p.peer, p.group, p.tag, p.group_peer) for p in p2p_op_list]
