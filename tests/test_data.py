"""strata.utils.data against torch.utils.data: datasets, samplers, collation, DataLoader batches,
and worker processes (order, seeding, errors, dead workers, timeouts, shutdown)."""

import math
import multiprocessing
import os
import random
from collections import namedtuple

import numpy as np
import pytest
import torch
import torch.utils.data as tdata

import strata
import strata.utils.data as sdata

Point = namedtuple("Point", ["x", "y"])


def _tensors(m, n=10):
    x = m.arange(n * 2, dtype=m.float32).reshape(n, 2)
    return x, m.arange(n)


def _to_py(obj):
    """A strata or torch batch as plain Python/NumPy data, with dtype names kept."""
    if isinstance(obj, (strata.Tensor, torch.Tensor)):
        return ("tensor", str(obj.dtype).split(".")[-1], obj.tolist())
    if isinstance(obj, dict):
        return {k: _to_py(v) for k, v in obj.items()}
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):
        return (type(obj).__name__,) + tuple(_to_py(v) for v in obj)
    if isinstance(obj, (list, tuple)):
        return (type(obj).__name__, [_to_py(v) for v in obj])
    if isinstance(obj, np.ndarray):
        return ("ndarray", obj.tolist())
    return obj


# --- datasets -----------------------------------------------------------------------------------

def test_tensor_dataset():
    ds = sdata.TensorDataset(*_tensors(strata))
    assert len(ds) == 10
    x, y = ds[3]
    assert x.tolist() == [6.0, 7.0] and y.item() == 3
    batch = ds.__getitems__([4, 0, 9, 4])
    assert [(a.tolist(), b.item()) for a, b in batch] == \
        [(ds[i][0].tolist(), ds[i][1].item()) for i in [4, 0, 9, 4]]
    for m, data in ((strata, sdata), (torch, tdata)):
        with pytest.raises(AssertionError, match="Size mismatch between tensors"):
            data.TensorDataset(m.ones(3), m.ones(4))


def test_concat_subset_stack_chain():
    a, b = sdata.TensorDataset(strata.arange(3)), sdata.TensorDataset(strata.arange(10, 15))
    cat = a + b
    assert isinstance(cat, sdata.ConcatDataset) and len(cat) == 8
    assert [cat[i][0].item() for i in range(8)] == [0, 1, 2, 10, 11, 12, 13, 14]
    assert cat[-1][0].item() == 14 and cat.cumulative_sizes == [3, 8]
    with pytest.raises(ValueError, match="absolute value of index should not exceed"):
        cat[-9]
    sub = sdata.Subset(cat, [7, 0, 4])
    assert len(sub) == 3 and [s[0].item() for s in sub.__getitems__([0, 1, 2])] == [14, 0, 11]
    stack = sdata.StackDataset(a, a)
    assert len(stack) == 3 and stack[1][1][0].item() == 1
    named = sdata.StackDataset(x=a, y=a)
    assert set(named[0]) == {"x", "y"}
    with pytest.raises(ValueError, match="Size mismatch between datasets"):
        sdata.StackDataset(a, b)

    class Stream(sdata.IterableDataset):
        def __init__(self, n):
            self.n = n

        def __iter__(self):
            return iter(range(self.n))

        def __len__(self):
            return self.n

    chain = Stream(2) + Stream(3)
    assert isinstance(chain, sdata.ChainDataset)
    assert list(chain) == [0, 1, 0, 1, 2] and len(chain) == 5
    with pytest.raises(AssertionError, match="ConcatDataset does not support IterableDataset"):
        sdata.ConcatDataset([Stream(1)])


@pytest.mark.parametrize("lengths", [[3, 7], [0.3, 0.7], [0.5, 0.25, 0.25], [1, 1, 8],
                                     [0.34, 0.33, 0.33]])
def test_random_split(lengths):
    ds = sdata.TensorDataset(strata.arange(10))
    splits = sdata.random_split(ds, lengths, generator=strata.Generator().manual_seed(1))
    t_splits = tdata.random_split(tdata.TensorDataset(torch.arange(10)), lengths)
    assert [len(s) for s in splits] == [len(s) for s in t_splits]
    seen = sorted(i for s in splits for i in s.indices)
    assert seen == list(range(10))
    again = sdata.random_split(ds, lengths, generator=strata.Generator().manual_seed(1))
    assert [s.indices for s in splits] == [s.indices for s in again]


def test_random_split_errors():
    for data, m in ((sdata, strata), (tdata, torch)):
        ds = data.TensorDataset(m.arange(10))
        with pytest.raises(ValueError, match="Sum of input lengths does not equal the length"):
            data.random_split(ds, [3, 3])
        with pytest.warns(UserWarning, match="Length of split at index 1 is 0"):
            data.random_split(ds, [1.0, 0.0])


# --- samplers -----------------------------------------------------------------------------------

def test_sequential_and_random_sampler():
    data = range(7)
    assert list(sdata.SequentialSampler(data)) == list(range(7))
    perm = list(sdata.RandomSampler(data, generator=strata.Generator().manual_seed(3)))
    assert sorted(perm) == list(range(7))
    assert perm == list(sdata.RandomSampler(data, generator=strata.Generator().manual_seed(3)))
    draws = list(sdata.RandomSampler(data, replacement=True, num_samples=70,
                                     generator=strata.Generator().manual_seed(0)))
    assert len(draws) == 70 and set(draws) <= set(range(7))
    longer = list(sdata.RandomSampler(data, num_samples=10))
    assert len(longer) == 10 and sorted(longer[:7]) == list(range(7))
    strata.manual_seed(5)
    first = list(sdata.RandomSampler(data))
    strata.manual_seed(5)
    assert list(sdata.RandomSampler(data)) == first


@pytest.mark.parametrize("make,exc,match", [
    (lambda d: d.RandomSampler(range(3), replacement=1), TypeError,
     "replacement should be a boolean value"),
    (lambda d: d.RandomSampler(range(3), num_samples=0), ValueError,
     "num_samples should be a positive integer value, but got num_samples=0"),
    (lambda d: d.BatchSampler(range(3), 0, False), ValueError,
     "batch_size should be a positive integer value, but got batch_size=0"),
    (lambda d: d.BatchSampler(range(3), 2, 1), ValueError,
     "drop_last should be a boolean value, but got drop_last=1"),
    (lambda d: d.WeightedRandomSampler([1.0, 2.0], 0), ValueError,
     "num_samples should be a positive integer value"),
    (lambda d: d.WeightedRandomSampler([[1.0, 2.0]], 2), ValueError,
     "weights should be a 1d sequence but given weights have shape \\(1, 2\\)"),
])
def test_sampler_errors_match_torch(make, exc, match):
    for data in (sdata, tdata):
        with pytest.raises(exc, match=match):
            make(data)


@pytest.mark.parametrize("n,batch_size,drop_last", [(10, 3, False), (10, 3, True), (9, 3, True),
                                                    (2, 5, False), (2, 5, True)])
def test_batch_sampler_matches_torch(n, batch_size, drop_last):
    s = sdata.BatchSampler(sdata.SequentialSampler(range(n)), batch_size, drop_last)
    t = tdata.BatchSampler(tdata.SequentialSampler(range(n)), batch_size, drop_last)
    assert list(s) == list(t) and len(s) == len(t)


def test_subset_and_weighted_samplers():
    sub = list(sdata.SubsetRandomSampler([10, 20, 30], generator=strata.Generator().manual_seed(0)))
    assert sorted(sub) == [10, 20, 30]
    weighted = list(sdata.WeightedRandomSampler([0.0, 1.0, 3.0], 400,
                                                generator=strata.Generator().manual_seed(0)))
    assert 0 not in weighted and len(weighted) == 400
    assert 0.65 < weighted.count(2) / 400 < 0.85
    unique = list(sdata.WeightedRandomSampler([1.0, 1.0, 1.0, 1.0], 4, replacement=False))
    assert sorted(unique) == [0, 1, 2, 3]


# --- collation ----------------------------------------------------------------------------------

def _samples(m):
    return [
        [m.tensor([1.0, 2.0]), m.tensor([3.0, 4.0])],
        [1.5, 2.5],
        [1, 2],
        [True, False],
        ["a", "b"],
        [b"x", b"y"],
        [np.array([1, 2], dtype=np.int32), np.array([3, 4], dtype=np.int32)],
        [np.float32(1.0), np.float32(2.0)],
        [np.int16(3), np.int16(4)],
        [{"a": m.tensor(1), "b": 2.0}, {"a": m.tensor(3), "b": 4.0}],
        [(m.tensor(1.0), 5), (m.tensor(2.0), 6)],
        [[m.tensor(1.0), "s"], [m.tensor(2.0), "t"]],
        [Point(1, m.tensor(2.0)), Point(3, m.tensor(4.0))],
        [{"nested": [(1, 2.0)]}, {"nested": [(3, 4.0)]}],
    ]


@pytest.mark.parametrize("index", range(14))
def test_default_collate_matches_torch(index):
    s = sdata.default_collate(_samples(strata)[index])
    t = tdata.default_collate(_samples(torch)[index])
    assert _to_py(s) == _to_py(t)


def test_default_convert_matches_torch():
    for sample in ([np.arange(3), (1, np.float64(2.0))], {"k": np.ones(2, np.float32)},
                   Point(np.int64(1), "s"), "text", np.array(["a", "b"])):
        assert _to_py(sdata.default_convert(sample)) == _to_py(tdata.default_convert(sample))


def test_collate_errors_match_torch():
    for data in (sdata, tdata):
        with pytest.raises(RuntimeError, match="each element in list of batch should be of "
                                               "equal size"):
            data.default_collate([[1, 2], [3]])
        with pytest.raises(TypeError, match="default_collate: batch must contain tensors"):
            data.default_collate([object(), object()])
        with pytest.raises(TypeError, match="default_collate: batch must contain tensors"):
            data.default_collate([np.array(["a"]), np.array(["b"])])


# --- DataLoader (single process) ----------------------------------------------------------------

@pytest.mark.parametrize("kwargs", [dict(), dict(batch_size=3), dict(batch_size=3, drop_last=True),
                                    dict(batch_size=None), dict(batch_size=20),
                                    dict(batch_size=4, sampler=[9, 1, 5, 3, 7])])
def test_batches_match_torch(kwargs):
    s = list(sdata.DataLoader(sdata.TensorDataset(*_tensors(strata)), **kwargs))
    t = list(tdata.DataLoader(tdata.TensorDataset(*_tensors(torch)), **kwargs))
    assert _to_py(s) == _to_py(t)
    assert len(sdata.DataLoader(sdata.TensorDataset(*_tensors(strata)), **kwargs)) == \
        len(tdata.DataLoader(tdata.TensorDataset(*_tensors(torch)), **kwargs))


def test_batch_sampler_and_custom_collate():
    ds = sdata.TensorDataset(*_tensors(strata))
    loader = sdata.DataLoader(ds, batch_sampler=[[0, 1], [5, 6, 7]],
                              collate_fn=lambda batch: [int(y) for _, y in batch])
    assert list(loader) == [[0, 1], [5, 6, 7]] and len(loader) == 2


class _Records(sdata.Dataset):
    """Samples of every kind default_collate handles."""

    def __len__(self):
        return 6

    def __getitem__(self, i):
        return {"x": strata.full((2,), float(i)), "label": i, "weight": i / 2, "name": f"s{i}",
                "pair": (np.float32(i), np.array([i, i]))}


def test_dict_samples():
    batch = next(iter(sdata.DataLoader(_Records(), batch_size=4)))
    assert batch["x"].shape == (4, 2) and batch["label"].dtype is strata.int64
    assert batch["weight"].dtype is strata.float64 and batch["name"] == ["s0", "s1", "s2", "s3"]
    assert batch["pair"][0].dtype is strata.float32 and batch["pair"][1].tolist()[3] == [3, 3]


def test_shuffle_is_deterministic_with_a_generator():
    ds = sdata.TensorDataset(strata.arange(50))

    def order(seed, **kw):
        g = strata.Generator().manual_seed(seed)
        return [b[0].tolist() for b in sdata.DataLoader(ds, batch_size=8, shuffle=True,
                                                        generator=g, **kw)]

    first = order(0)
    assert first == order(0)
    assert first != order(1)
    assert sorted(sum(first, [])) == list(range(50))
    # Two epochs from one generator differ; each covers the data once.
    loader = sdata.DataLoader(ds, batch_size=50, shuffle=True,
                              generator=strata.Generator().manual_seed(0))
    e1, e2 = (next(iter(loader))[0].tolist() for _ in range(2))
    assert e1 != e2 and sorted(e1) == sorted(e2) == list(range(50))


@pytest.mark.parametrize("make,exc,match", [
    (lambda d, ds: d.DataLoader(ds, num_workers=-1), ValueError,
     "num_workers option should be non-negative"),
    (lambda d, ds: d.DataLoader(ds, timeout=-1), ValueError, "timeout option should be "
                                                            "non-negative"),
    (lambda d, ds: d.DataLoader(ds, prefetch_factor=2), ValueError,
     "prefetch_factor option could only be specified in multiprocessing"),
    (lambda d, ds: d.DataLoader(ds, persistent_workers=True), ValueError,
     "persistent_workers option needs num_workers > 0"),
    (lambda d, ds: d.DataLoader(ds, sampler=[0, 1], shuffle=True), ValueError,
     "sampler option is mutually exclusive with shuffle"),
    (lambda d, ds: d.DataLoader(ds, batch_sampler=[[0]], batch_size=2), ValueError,
     "batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, and "
     "drop_last"),
    (lambda d, ds: d.DataLoader(ds, batch_size=None, drop_last=True), ValueError,
     "batch_size=None option disables auto-batching and is mutually exclusive with drop_last"),
])
def test_dataloader_errors_match_torch(make, exc, match):
    for data, m in ((sdata, strata), (tdata, torch)):
        with pytest.raises(exc, match=match):
            make(data, data.TensorDataset(m.arange(4)))


def test_attributes_frozen_after_init():
    for data, m in ((sdata, strata), (tdata, torch)):
        loader = data.DataLoader(data.TensorDataset(m.arange(4)))
        with pytest.raises(ValueError, match="batch_size attribute should not be set after "
                                             "DataLoader is initialized"):
            loader.batch_size = 3


# --- worker processes ---------------------------------------------------------------------------

class _WhoAmI(sdata.Dataset):
    """Each sample says which process and worker made it, and a random draw there."""

    def __len__(self):
        return 24

    def __getitem__(self, i):
        info = sdata.get_worker_info()
        return {"i": i, "pid": os.getpid(), "worker": -1 if info is None else info.id,
                "seed": -1 if info is None else info.seed, "rand": strata.rand(1).item(),
                "py": random.random()}


@pytest.mark.parametrize("num_workers", [1, 2, 3])
def test_workers_return_batches_in_order(num_workers):
    ds = sdata.TensorDataset(*_tensors(strata, 37))
    kwargs = dict(batch_size=4, shuffle=True)
    single = list(sdata.DataLoader(ds, generator=strata.Generator().manual_seed(0), **kwargs))
    multi = list(sdata.DataLoader(ds, generator=strata.Generator().manual_seed(0),
                                  num_workers=num_workers, **kwargs))
    assert _to_py(single) == _to_py(multi)


def test_worker_info_and_seeding():
    loader = sdata.DataLoader(_WhoAmI(), batch_size=2, num_workers=3,
                              generator=strata.Generator().manual_seed(0))
    samples = [{k: v[j].item() for k, v in batch.items()}
               for batch in loader for j in range(len(batch["i"]))]
    assert [int(s["i"]) for s in samples] == list(range(24))
    workers = {int(s["worker"]) for s in samples}
    assert workers == {0, 1, 2}
    assert all(int(s["pid"]) != os.getpid() for s in samples)
    seeds = {int(s["worker"]): int(s["seed"]) for s in samples}
    assert seeds[1] == seeds[0] + 1 and seeds[2] == seeds[0] + 2
    # Every worker draws different random numbers (strata's and Python's generators).
    first = {int(s["worker"]): (float(s["rand"]), float(s["py"])) for s in samples[:6]}
    assert len({v[0] for v in first.values()}) == 3 and len({v[1] for v in first.values()}) == 3
    assert sdata.get_worker_info() is None
    # The same generator seed gives the same worker seeds.
    again = sdata.DataLoader(_WhoAmI(), batch_size=2, num_workers=3,
                             generator=strata.Generator().manual_seed(0))
    assert next(iter(again))["seed"].tolist()[0] == seeds[0]


def test_worker_info_is_read_only():
    info = sdata.WorkerInfo(id=0, num_workers=1, seed=3, dataset=None)
    with pytest.raises(RuntimeError, match="Cannot assign attributes to WorkerInfo objects"):
        info.id = 2


def _record_init(worker_id):
    info = sdata.get_worker_info()
    info.dataset.init_ids.append((worker_id, info.num_workers))


class _InitDataset(sdata.Dataset):
    def __init__(self):
        self.init_ids = []

    def __len__(self):
        return 4

    def __getitem__(self, i):
        return list(self.init_ids)


def test_worker_init_fn():
    loader = sdata.DataLoader(_InitDataset(), batch_size=None, num_workers=2,
                              worker_init_fn=_record_init, collate_fn=lambda x: x)
    assert list(loader) == [[(0, 2)], [(1, 2)], [(0, 2)], [(1, 2)]]


class _Failing(sdata.Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, i):
        if i == 5:
            raise ValueError(f"bad sample {i}")
        return i


def test_worker_exception_reraised_with_worker_id():
    loader = sdata.DataLoader(_Failing(), batch_size=1, num_workers=2)
    it = iter(loader)
    got = []
    with pytest.raises(ValueError) as info:
        for batch in it:
            got.append(batch.item())
    assert got == [0, 1, 2, 3, 4]
    message = str(info.value)
    assert "Caught ValueError in DataLoader worker process 1." in message
    assert "Original Traceback (most recent call last)" in message
    assert "bad sample 5" in message
    assert all(not w.is_alive() for w in it._workers)


def test_single_process_exception_is_plain():
    with pytest.raises(ValueError, match="^bad sample 5$"):
        list(sdata.DataLoader(_Failing(), batch_size=1))


def test_workers_shut_down_after_epoch_and_on_early_exit():
    ds = sdata.TensorDataset(strata.arange(40))
    it = iter(sdata.DataLoader(ds, batch_size=2, num_workers=2))
    workers = list(it._workers)
    assert len(list(it)) == 20
    assert all(not w.is_alive() for w in workers)
    it = iter(sdata.DataLoader(ds, batch_size=2, num_workers=2))
    next(it)
    workers = list(it._workers)
    del it
    for w in workers:
        w.join(timeout=10)
    assert all(not w.is_alive() for w in workers)


def test_persistent_workers_reuse_processes():
    loader = sdata.DataLoader(_WhoAmI(), batch_size=4, num_workers=2, persistent_workers=True)
    epoch1 = list(loader)
    pids = {p for b in epoch1 for p in b["pid"].tolist()}
    epoch2 = list(loader)
    half = iter(loader)
    next(half)          # abandon an epoch half-way, then start again
    epoch3 = list(loader)
    for epoch in (epoch1, epoch2, epoch3):
        assert [i for b in epoch for i in b["i"].tolist()] == list(range(24))
    assert {p for b in epoch3 for p in b["pid"].tolist()} == pids
    workers = list(loader._iterator._workers)
    assert all(w.is_alive() for w in workers)
    loader._iterator._shutdown_workers()
    assert all(not w.is_alive() for w in workers)


class _Shards(sdata.IterableDataset):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        info = sdata.get_worker_info()
        wid, count = (0, 1) if info is None else (info.id, info.num_workers)
        return iter(range(wid, self.n, count))

    def __len__(self):
        return self.n


class _TorchShards(tdata.IterableDataset):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        info = tdata.get_worker_info()
        wid, count = (0, 1) if info is None else (info.id, info.num_workers)
        return iter(range(wid, self.n, count))


@pytest.mark.parametrize("num_workers,batch_size,drop_last", [(0, 2, False), (3, 2, False),
                                                              (3, 2, True), (2, None, False)])
def test_iterable_dataset_matches_torch(num_workers, batch_size, drop_last):
    s = sdata.DataLoader(_Shards(11), batch_size=batch_size, num_workers=num_workers,
                         drop_last=drop_last)
    t = tdata.DataLoader(_TorchShards(11), batch_size=batch_size, num_workers=num_workers,
                         drop_last=drop_last)
    assert _to_py(list(s)) == _to_py(list(t))
    expected = 11 if batch_size is None else (11 // 2 if drop_last else math.ceil(11 / 2))
    assert len(s) == expected


def test_iterable_dataset_rejects_shuffle():
    for data in (sdata, tdata):
        ds = _Shards(4) if data is sdata else _TorchShards(4)
        with pytest.raises(ValueError, match="DataLoader with IterableDataset: expected "
                                             "unspecified shuffle option, but got shuffle=True"):
            data.DataLoader(ds, shuffle=True)


@pytest.mark.skipif("spawn" not in multiprocessing.get_all_start_methods(), reason="no spawn")
def test_spawn_context():
    ds = sdata.TensorDataset(*_tensors(strata, 9))
    loader = sdata.DataLoader(ds, batch_size=4, num_workers=2, multiprocessing_context="spawn")
    assert _to_py(list(loader)) == _to_py(list(sdata.DataLoader(ds, batch_size=4)))


class _BigOps(sdata.Dataset):
    """Large strata ops inside a forked worker (the CPU thread pool must be rebuilt there)."""

    def __len__(self):
        return 4

    def __getitem__(self, i):
        a = strata.full((400, 400), float(i))
        return (a + a).sum() + (a @ a)[0, 0]


def test_workers_run_large_ops():
    strata.full((400, 400), 1.0) + strata.full((400, 400), 1.0)   # start the parent's pool
    got = [b.item() for b in sdata.DataLoader(_BigOps(), batch_size=None, num_workers=2)]
    assert got == [2.0 * i * 400 * 400 + 400.0 * i * i for i in range(4)]


def test_persistent_workers_survive_a_worker_exception():
    loader = sdata.DataLoader(_Failing(), batch_size=1, num_workers=2, persistent_workers=True)
    for _ in range(2):
        with pytest.raises(ValueError, match="Caught ValueError in DataLoader worker process 1"):
            list(loader)
    workers = list(loader._iterator._workers)
    assert all(w.is_alive() for w in workers)
    loader._iterator._shutdown_workers()
