"""``DistributedSampler`` (``torch/utils/data/distributed.py``): each rank's share of a dataset.

Rank r of R takes every R-th index starting at r, from a list padded (by repeating its start) or
truncated (``drop_last``) to a multiple of R, so every rank gets the same number of samples.
With ``shuffle``, the list is a permutation drawn from a generator seeded with ``seed + epoch``:
the same on every rank, different each epoch once ``set_epoch`` is called. strata's generator is
not PyTorch's, so a shuffled order differs from PyTorch's for the same seed (the unshuffled
split is identical).
"""

import math

from ...ops import factory as F
from ...random import Generator
from .sampler import Sampler


class DistributedSampler(Sampler):
    """``DataLoader(ds, sampler=DistributedSampler(ds))``; call ``sampler.set_epoch(epoch)`` at the
    start of every epoch, before iterating, or every epoch uses the same order."""

    def __init__(self, dataset, num_replicas=None, rank=None, shuffle=True, seed=0,
                 drop_last=False):
        if num_replicas is None or rank is None:
            from ... import distributed as dist
            if not dist.is_available():
                raise RuntimeError("Requires distributed package to be available")
            num_replicas = dist.get_world_size() if num_replicas is None else num_replicas
            rank = dist.get_rank() if rank is None else rank
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval "
                             f"[0, {num_replicas - 1}]")
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = drop_last
        n = len(dataset)
        if drop_last and n % num_replicas != 0:
            self.num_samples = math.ceil((n - num_replicas) / num_replicas)
        else:
            self.num_samples = math.ceil(n / num_replicas)
        self.total_size = self.num_samples * num_replicas
        self.shuffle = shuffle
        self.seed = seed

    def __iter__(self):
        n = len(self.dataset)
        if self.shuffle:
            generator = Generator().manual_seed(self.seed + self.epoch)
            indices = F.randperm(n, generator=generator).tolist()
        else:
            indices = list(range(n))
        if not self.drop_last:
            padding = self.total_size - len(indices)
            if padding <= len(indices):
                indices += indices[:padding]
            else:
                indices += (indices * math.ceil(padding / len(indices)))[:padding]
        else:
            indices = indices[:self.total_size]
        assert len(indices) == self.total_size   # noqa: S101 (PyTorch's own invariant)
        indices = indices[self.rank:self.total_size:self.num_replicas]
        return iter(indices)

    def __len__(self):
        return self.num_samples

    def set_epoch(self, epoch: int) -> None:
        """Make the next iteration's shuffle depend on ``epoch`` (same on every rank)."""
        self.epoch = epoch
