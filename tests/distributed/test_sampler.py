"""DistributedSampler against torch's: the split, padding and drop_last are identical; a shuffled
order (strata's generator is not torch's) is checked for its properties instead."""

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

import strata
from strata.utils.data import DataLoader, DistributedSampler


@given(n=st.integers(1, 40), replicas=st.integers(1, 6), drop_last=st.booleans())
def test_unshuffled_split_matches_torch(n, replicas, drop_last):
    for rank in range(replicas):
        ours = DistributedSampler(range(n), replicas, rank, shuffle=False, drop_last=drop_last)
        theirs = torch.utils.data.DistributedSampler(range(n), replicas, rank, shuffle=False,
                                                     drop_last=drop_last)
        assert list(ours) == list(theirs)
        assert len(ours) == len(theirs)


@given(n=st.integers(1, 40), replicas=st.integers(1, 5))
def test_shuffled_split_covers_the_dataset_and_follows_the_epoch(n, replicas):
    def epoch_order(epoch, seed=0):
        samplers = [DistributedSampler(range(n), replicas, r, seed=seed) for r in range(replicas)]
        for s in samplers:
            s.set_epoch(epoch)
        return [list(s) for s in samplers]

    first = epoch_order(0)
    assert first == epoch_order(0)                     # every rank draws the same permutation
    assert {i for part in first for i in part} == set(range(n))
    assert len({len(part) for part in first}) == 1     # equal shares (padded)
    if n >= 6:
        assert epoch_order(1) != first or epoch_order(2) != first
        assert epoch_order(0, seed=1) != first or epoch_order(0, seed=2) != first


def test_bad_rank_and_no_group_errors_match_torch():
    def error_of(fn):
        with pytest.raises(Exception) as info:
            fn()
        return type(info.value), str(info.value)

    assert error_of(lambda: DistributedSampler(range(4), 2, 2)) == \
        error_of(lambda: torch.utils.data.DistributedSampler(range(4), 2, 2))
    assert error_of(lambda: DistributedSampler(range(4))) == \
        error_of(lambda: torch.utils.data.DistributedSampler(range(4)))


def test_in_a_dataloader():
    data = strata.utils.data.TensorDataset(strata.arange(10))
    sampler = DistributedSampler(data, num_replicas=3, rank=2, shuffle=False)
    seen = [int(v) for (batch,) in DataLoader(data, batch_size=2, sampler=sampler)
            for v in batch]
    assert seen == [2, 5, 8, 1]
