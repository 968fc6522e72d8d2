"""Run by test_ddp.py on 2 ranks: DDP on half batches == one process on the full batch.

Every rank also trains the single-process reference itself (same seed, the full batch), so the
comparison needs no second job. A failed check raises; the launcher then exits non-zero.
"""

import datetime
import os
import sys

import strata
import strata.distributed as dist
import strata.nn as nn
import strata.nn.functional as F
from strata.nn.parallel import DistributedDataParallel as DDP

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "examples"))
from char_transformer import CharTransformer  # noqa: E402

dist.init_process_group("mpi", timeout=datetime.timedelta(seconds=120))
RANK, WORLD = dist.get_rank(), dist.get_world_size()
STEPS = 20


def max_diff(a_params, b_params):
    return max((a - b).abs().max().item() for a, b in zip(a_params, b_params))


def mlp():
    return nn.Sequential(nn.Linear(12, 32), nn.Tanh(), nn.Linear(32, 32), nn.Tanh(),
                         nn.Linear(32, 4))


def cnn():
    return nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(4, 8, 3, padding=1), nn.ReLU(), nn.Flatten(),
                         nn.Linear(8 * 4 * 4, 10))


def transformer():
    return CharTransformer(vocab=20, context=8, d_model=16, nhead=2, layers=1, dropout=0.0)


def batches(kind, generator):
    if kind == "mlp":
        return strata.randn(8, 12, generator=generator), strata.randn(8, 4, generator=generator)
    if kind == "cnn":
        return (strata.randn(8, 1, 8, 8, generator=generator),
                strata.randint(0, 10, (8,), generator=generator))
    return (strata.randint(0, 20, (8, 8), generator=generator),
            strata.randint(0, 20, (8, 8), generator=generator))


def loss_of(kind, out, y):
    if kind == "mlp":
        return F.mse_loss(out, y)
    return F.cross_entropy(out.reshape(-1, out.shape[-1]), y.reshape(-1))


def train_against_reference(kind, make, **ddp_kwargs):
    strata.manual_seed(RANK)          # different per rank: DDP must broadcast rank 0's weights
    local = make()
    strata.manual_seed(0)
    reference = make()
    if RANK == 0:
        local.load_state_dict(reference.state_dict())
    model = DDP(local, **ddp_kwargs)
    assert max_diff(local.parameters(), reference.parameters()) == 0, "not synced at wrap"
    assert len(model.bucket_indices) > 1, f"{kind}: expected several buckets"
    opt = strata.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    ref_opt = strata.optim.SGD(reference.parameters(), lr=0.05, momentum=0.9)
    generator = strata.Generator().manual_seed(7)
    half = 8 // WORLD
    for _ in range(STEPS):
        x, y = batches(kind, generator)
        mine = slice(RANK * half, (RANK + 1) * half)
        opt.zero_grad()
        loss_of(kind, model(x[mine]), y[mine]).backward()
        opt.step()
        ref_opt.zero_grad()
        loss_of(kind, reference(x), y).backward()
        ref_opt.step()
    diff = max_diff(local.parameters(), reference.parameters())
    assert diff < 1e-5, f"{kind} {ddp_kwargs}: parameters differ by {diff} after {STEPS} steps"
    print(f"{kind} {ddp_kwargs}: max |ddp - single| = {diff:.2e}, "
          f"{len(model.bucket_indices)} buckets")


train_against_reference("mlp", mlp, bucket_cap_mb=0.002)
train_against_reference("mlp", mlp, bucket_cap_mb=0.002, gradient_as_bucket_view=True)
train_against_reference("cnn", cnn, bucket_cap_mb=0.001)
train_against_reference("transformer", transformer, bucket_cap_mb=0.004)

# no_sync: two micro-batches accumulated locally, then one averaged step == the sum of two
# full-batch gradients in one process
strata.manual_seed(0)
reference = mlp()
model = DDP(mlp(), bucket_cap_mb=0.002)
model.module.load_state_dict(reference.state_dict())
generator = strata.Generator().manual_seed(3)
(xa, ya), (xb, yb) = batches("mlp", generator), batches("mlp", generator)
mine = slice(RANK * 4, RANK * 4 + 4)
with model.no_sync():
    F.mse_loss(model(xa[mine]), ya[mine]).backward()
local_grad = model.module[0].weight.grad.clone()
others = [strata.zeros_like(local_grad) for _ in range(WORLD)]
dist.all_gather(others, local_grad)
assert (others[0] - others[1]).abs().max().item() > 0, "no_sync still synchronised gradients"
F.mse_loss(model(xb[mine]), yb[mine]).backward()
(F.mse_loss(reference(xa), ya) + F.mse_loss(reference(xb), yb)).backward()
diff = max_diff([p.grad for p in model.parameters()], [p.grad for p in reference.parameters()])
assert diff < 1e-5, f"no_sync accumulation differs by {diff}"
print(f"no_sync: max |grad diff| = {diff:.2e}")


# DDP starts its bucket all-reduces on a communicator of its own, so a collective of the user's
# still in flight on the group during backward neither blocks nor corrupts them; bfloat16
# buckets are reduced in float32
for dtype in (strata.float32, strata.bfloat16):
    strata.manual_seed(0)
    model = DDP(mlp().to(dtype), bucket_cap_mb=0.002)
    x = strata.randn(4, 12, generator=strata.Generator().manual_seed(RANK)).to(dtype)
    pending = strata.full((1000,), float(RANK + 1))
    work = dist.all_reduce(pending, async_op=True)
    model(x).float().square().mean().backward()
    work.wait()
    assert pending.eq(WORLD * (WORLD + 1) / 2).all().item(), "the user's all_reduce is wrong"
    local = mlp().to(dtype)
    local.load_state_dict(model.module.state_dict())
    grads = []
    for rank in range(WORLD):
        local.zero_grad()
        mine = strata.randn(4, 12, generator=strata.Generator().manual_seed(rank)).to(dtype)
        local(mine).float().square().mean().backward()
        grads.append([p.grad.float() for p in local.parameters()])
    mean = [sum(parts) / WORLD for parts in zip(*grads)]
    diff = max_diff([p.grad.float() for p in model.parameters()], mean)
    assert diff < (1e-5 if dtype is strata.float32 else 2e-2), f"{dtype}: grads differ by {diff}"
print("DDP beside a user collective ok")

# find_unused_parameters: a branch that no output uses keeps grad None; the rest is averaged
class TwoHeads(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(6, 6)
        self.unused = nn.Linear(6, 6)

    def forward(self, x):
        return self.body(x)


strata.manual_seed(0)
model = DDP(TwoHeads(), find_unused_parameters=True)
x = strata.randn(4, 6, generator=strata.Generator().manual_seed(RANK))
for _ in range(2):
    model(x).sum().backward()
assert model.module.unused.weight.grad is None
grads = [strata.zeros(6, 6) for _ in range(WORLD)]
dist.all_gather(grads, model.module.body.weight.grad)
assert (grads[0] - grads[-1]).abs().max().item() == 0, "grads not averaged"

# ... and without it, DDP says which parameters got no gradient at the next forward
model = DDP(TwoHeads())
model(x).sum().backward()
try:
    model(x)
except RuntimeError as e:
    assert "Expected to have finished reduction in the prior iteration" in str(e), e
    assert "2 3" in str(e), e
else:
    raise AssertionError("expected the unused-parameter error")

# broadcast_buffers: each forward starts from rank 0's buffers (plain BatchNorm's running stats
# drift apart in training, since each rank sees its own batch)
for broadcast in (True, False):
    strata.manual_seed(0)
    model = DDP(nn.Sequential(nn.Linear(3, 3), nn.BatchNorm1d(3)), broadcast_buffers=broadcast)
    model(strata.randn(4, 3, generator=strata.Generator().manual_seed(RANK)))
    model.eval()
    with strata.no_grad():
        model(strata.randn(4, 3))   # eval: broadcasts (or not), leaves the stats alone
    stats = [strata.zeros(3) for _ in range(WORLD)]
    dist.all_gather(stats, model.module[1].running_mean)
    spread = (stats[0] - stats[-1]).abs().max().item()
    assert (spread == 0) == broadcast, f"broadcast_buffers={broadcast}: spread {spread}"

# SyncBatchNorm over 2 ranks' half batches == BatchNorm over the full batch
strata.manual_seed(0)
reference = nn.Sequential(nn.Conv2d(2, 3, 1), nn.BatchNorm2d(3))
synced = nn.SyncBatchNorm.convert_sync_batchnorm(
    nn.Sequential(nn.Conv2d(2, 3, 1), nn.BatchNorm2d(3)))
synced.load_state_dict(reference.state_dict())
model = DDP(synced)
x = strata.randn(8, 2, 4, 4, generator=strata.Generator().manual_seed(11))
mine = slice(RANK * 4, RANK * 4 + 4)
out = model(x[mine])
(out * out).mean().backward()
ref_out = reference(x)
((ref_out * ref_out)[mine].mean() * 1).backward()   # each rank's part; DDP averages the parts
ref_weight_grads = reference[0].weight.grad.clone()
dist.all_reduce(ref_weight_grads, op=dist.ReduceOp.AVG)
assert (out - ref_out[mine]).abs().max().item() < 1e-5, "SyncBatchNorm forward differs"
assert (synced[1].running_var - reference[1].running_var).abs().max().item() < 1e-5
assert (synced[1].running_mean - reference[1].running_mean).abs().max().item() < 1e-5
diff = (synced[0].weight.grad - ref_weight_grads).abs().max().item()
assert diff < 1e-5, f"SyncBatchNorm backward differs by {diff}"
print("SyncBatchNorm ok")

dist.destroy_process_group()
print(f"ddp ok on rank {RANK}")
