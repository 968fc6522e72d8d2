"""Run by test_collectives.py on 2 and 4 ranks: every collective against a NumPy reference.

Every rank can compute every rank's input (they are seeded by rank), so each rank checks its own
result locally; a failed check raises, and the launcher then ends the job non-zero.
"""

import datetime

import numpy as np

import strata
import strata.distributed as dist
from strata.distributed import ReduceOp

dist.init_process_group("mpi", timeout=datetime.timedelta(seconds=60))
RANK, WORLD = dist.get_rank(), dist.get_world_size()

DTYPES = [strata.float32, strata.float64, strata.float16, strata.bfloat16, strata.int64,
          strata.int32, strata.uint8, strata.bool]
NP_REDUCE = {ReduceOp.SUM: np.sum, ReduceOp.PRODUCT: np.prod, ReduceOp.MIN: np.min,
             ReduceOp.MAX: np.max, ReduceOp.AVG: np.mean}
BOOL_REDUCE = {ReduceOp.SUM: np.any, ReduceOp.MAX: np.any, ReduceOp.PRODUCT: np.all,
               ReduceOp.MIN: np.all}


def data(rank, dtype, shape=(3, 5), salt=0):
    """Rank ``rank``'s input: small integers, exact in every dtype and under every reduction."""
    values = np.random.default_rng(1000 * salt + rank).integers(1, 4, size=shape)
    if dtype is strata.bool:
        values = values > 2
    return values


def tensor(values, dtype):
    return strata.tensor(values.tolist(), dtype=dtype)


def check(name, got, expected):
    got = np.asarray(got.float().numpy() if got.dtype is strata.bfloat16 else got.numpy(),
                     dtype=np.float64)
    expected = np.asarray(expected, dtype=np.float64)
    if got.shape != expected.shape or not np.allclose(got, expected, rtol=1e-2, atol=0):
        raise AssertionError(f"{name}: got {got.tolist()}, expected {expected.tolist()}")


def ops_for(dtype):
    if dtype is strata.bool:
        return list(BOOL_REDUCE)
    ops = [ReduceOp.SUM, ReduceOp.PRODUCT, ReduceOp.MIN, ReduceOp.MAX]
    return ops + ([ReduceOp.AVG] if dtype.is_floating_point else [])


def reference(op, dtype, salt=0, shape=(3, 5)):
    inputs = np.stack([data(r, dtype, shape, salt) for r in range(WORLD)])
    table = BOOL_REDUCE if dtype is strata.bool else NP_REDUCE
    return table[op](inputs, axis=0)


def finish(work, async_op):
    if async_op:
        assert work is not None and work.wait() is True and work.is_completed()
    else:
        assert work is None


for dtype in DTYPES:
    for op in ops_for(dtype):
        for async_op in (False, True):
            t = tensor(data(RANK, dtype), dtype)
            finish(dist.all_reduce(t, op=op, async_op=async_op), async_op)
            check(f"all_reduce {op.name} {dtype} async={async_op}", t, reference(op, dtype))
            t = tensor(data(RANK, dtype), dtype)
            before = t.clone()
            finish(dist.reduce(t, dst=WORLD - 1, op=op, async_op=async_op), async_op)
            check(f"reduce {op.name} {dtype}", t,
                  reference(op, dtype) if RANK == WORLD - 1 else before.numpy())
    for src in range(WORLD):
        t = tensor(data(RANK, dtype), dtype)
        work = dist.broadcast(t, src=src, async_op=src % 2 == 1)
        finish(work, src % 2 == 1)
        check(f"broadcast from {src} {dtype}", t, data(src, dtype))
    outs = [strata.zeros(3, 5, dtype=dtype) for _ in range(WORLD)]
    finish(dist.all_gather(outs, tensor(data(RANK, dtype), dtype)), False)
    for r in range(WORLD):
        check(f"all_gather {dtype}", outs[r], data(r, dtype))
    out = strata.zeros(3 * WORLD, 5, dtype=dtype)
    finish(dist.all_gather_into_tensor(out, tensor(data(RANK, dtype), dtype), async_op=True),
           True)
    check(f"all_gather_into_tensor {dtype}", out,
          np.concatenate([data(r, dtype) for r in range(WORLD)]))

for dtype in (strata.float32, strata.int64, strata.bfloat16):
    for op in ops_for(dtype):
        ins = [tensor(data(RANK, dtype, salt=s), dtype) for s in range(WORLD)]
        out = strata.zeros(3, 5, dtype=dtype)
        finish(dist.reduce_scatter(out, ins, op=op), False)
        check(f"reduce_scatter {op.name} {dtype}", out, reference(op, dtype, salt=RANK))
        flat = strata.cat([tensor(data(RANK, dtype, salt=s), dtype) for s in range(WORLD)])
        out = strata.zeros(3, 5, dtype=dtype)
        finish(dist.reduce_scatter_tensor(out, flat, op=op, async_op=True), True)
        check(f"reduce_scatter_tensor {op.name} {dtype}", out, reference(op, dtype, salt=RANK))

# gather / scatter to and from every root, all_to_all, all_to_all_single
for root in range(WORLD):
    mine = tensor(data(RANK, strata.float32), strata.float32)
    bucket = [strata.zeros(3, 5) for _ in range(WORLD)] if RANK == root else None
    finish(dist.gather(mine, bucket, dst=root), False)
    if RANK == root:
        for r in range(WORLD):
            check("gather", bucket[r], data(r, strata.float32))
    pieces = [tensor(data(s, strata.int64, salt=root), strata.int64) for s in range(WORLD)]
    out = strata.zeros(3, 5, dtype=strata.int64)
    finish(dist.scatter(out, pieces if RANK == root else None, src=root, async_op=True), True)
    check("scatter", out, data(RANK, strata.int64, salt=root))
ins = [tensor(data(RANK, strata.float32, (2,), salt=s), strata.float32) for s in range(WORLD)]
outs = [strata.zeros(2) for _ in range(WORLD)]
finish(dist.all_to_all(outs, ins), False)
for s in range(WORLD):
    check("all_to_all", outs[s], data(s, strata.float32, (2,), salt=RANK))
single_in = strata.arange(2 * WORLD, dtype=strata.float32) + 100 * RANK
single_out = strata.zeros(2 * WORLD)
finish(dist.all_to_all_single(single_out, single_in), False)
check("all_to_all_single", single_out,
      np.concatenate([np.arange(2 * RANK, 2 * RANK + 2) + 100 * s for s in range(WORLD)]))

# a non-contiguous tensor is staged through host memory and written back
t = strata.zeros(5, 3).t()
t.add_(RANK + 1)
dist.all_reduce(t)
check("all_reduce of a transposed view", t, np.full((3, 5), WORLD * (WORLD + 1) / 2))

# a tensor on the sim device too (its own device process per rank: only on 2 ranks)
if WORLD == 2 and strata.sim.is_available():
    t = strata.full((4,), float(RANK + 1), device="sim")
    work = dist.all_reduce(t, async_op=True)
    work.wait()
    assert t.device.type == "sim"
    check("all_reduce of a sim tensor", t.cpu(), np.full(4, 3.0))

# point to point: a ring, blocking and nonblocking
nxt, prev = (RANK + 1) % WORLD, (RANK - 1) % WORLD
got = strata.zeros(4)
send_work = dist.isend(strata.full((4,), float(RANK)), dst=nxt)
recv_work = dist.irecv(got, src=prev)
recv_work.wait()
send_work.wait()
check("isend/irecv ring", got, np.full(4, prev))
if RANK == 0:
    dist.send(strata.arange(3.0), dst=1)
elif RANK == 1:
    got = strata.zeros(3)
    assert dist.recv(got) == 0
    check("send/recv", got, np.arange(3.0))
dist.barrier()
assert dist.barrier(async_op=True).wait()

# objects go through strata.save / strata.load(weights_only=True)
gathered = [None] * WORLD
dist.all_gather_object(gathered, {"rank": RANK, "t": strata.full((2,), float(RANK))})
assert [g["rank"] for g in gathered] == list(range(WORLD))
check("all_gather_object tensor", gathered[-1]["t"], np.full(2, WORLD - 1))
objs = [RANK, "x", (1, 2)] if RANK == 1 else [None, None, None]
dist.broadcast_object_list(objs, src=1)
assert objs == [1, "x", (1, 2)], objs

# a subgroup: ranks are group-relative, src/dst global
evens = dist.new_group([r for r in range(WORLD) if r % 2 == 0])
if RANK % 2 == 0:
    t = strata.ones(2)
    dist.all_reduce(t, group=evens)
    check("all_reduce on a subgroup", t, np.full(2, (WORLD + 1) // 2))
    assert dist.get_rank(evens) == RANK // 2
else:
    assert evens == dist.GroupMember.NON_GROUP_MEMBER and dist.get_rank(evens) == -1

# errors are raised before anything is sent, and leave the tensors untouched
t = strata.ones(3)
for bad in (lambda: dist.all_gather([strata.zeros(3)] * (WORLD + 1), t),
            lambda: dist.broadcast(t, src=WORLD),
            lambda: dist.all_reduce(t, op=ReduceOp.BAND),
            lambda: dist.all_reduce(strata.ones(2, dtype=strata.int64), op=ReduceOp.AVG)):
    try:
        bad()
    except (RuntimeError, ValueError):
        pass
    else:
        raise AssertionError("expected an error")
check("untouched after errors", t, np.ones(3))
dist.all_reduce(t)   # and the group still works, in step on every rank
check("all_reduce after errors", t, np.full(3, WORLD))

dist.destroy_process_group()
assert not dist.is_initialized()
print(f"collectives ok on rank {RANK} of {WORLD}")
