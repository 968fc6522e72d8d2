"""Data-parallel training of the digits MLP on several processes (DistributedDataParallel).

    strata run --nproc-per-node 2 examples/ddp_digits.py --epochs 10 --checkpoint ddp.ckpt
    mpiexec -n 2 python examples/ddp_digits.py            # the same, started by hand

Each rank reads its own share of every epoch (DistributedSampler), DDP averages the gradients,
so every rank holds the same model; rank 0 alone writes the checkpoint (strata.save writes it
atomically) and reports the test accuracy. Rerun with the same --checkpoint to resume.
"""

from common import digits, load_checkpoint, parse_args, progress
from mlp_digits import MLP

import strata as torch
import strata.distributed as dist
from strata.nn.parallel import DistributedDataParallel as DDP
from strata.utils.data import DataLoader, DistributedSampler, TensorDataset


def main():
    args = parse_args(__doc__, epochs=10, lr=3e-3)
    dist.init_process_group("mpi")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(args.seed)
    (x, y), test = digits(seed=args.seed)
    model = DDP(MLP())                       # rank 0's initial weights, on every rank
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr * world)
    start, losses = load_checkpoint(args.checkpoint, model.module, optimizer)
    data = TensorDataset(x, y)
    sampler = DistributedSampler(data, seed=args.seed)
    loader = DataLoader(data, batch_size=args.batch_size // world, sampler=sampler)
    for epoch in range(start, args.epochs):
        sampler.set_epoch(epoch)             # a new shuffle each epoch, the same on every rank
        for xb, yb in progress(loader, f"epoch {epoch + 1}/{args.epochs}",
                               args.quiet or rank != 0):
            loss = torch.nn.functional.cross_entropy(model(xb), yb)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
        if rank == 0 and args.checkpoint:
            torch.save({"model": model.module.state_dict(), "optimizer": optimizer.state_dict(),
                        "epoch": epoch, "losses": losses}, args.checkpoint)
        dist.barrier()                       # the checkpoint is complete before anyone resumes
    if rank == 0:
        model.eval()
        with torch.no_grad():
            acc = (model.module(test[0]).argmax(dim=1) == test[1]).float().mean().item()
        print(f"DDP MLP on digits, {world} ranks: {len(losses)} steps per rank, final loss "
              f"{losses[-1]:.4f}, test accuracy {acc * 100:.1f}%")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
