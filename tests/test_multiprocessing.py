"""``strata.multiprocessing``: tensors in shared memory across fork and spawn children, Hogwild
training, ``mp.spawn`` with PyTorch's error reporting (Note [Shared tensors])."""

import multiprocessing as std_mp

import numpy as np
import pytest
import strata
import strata.multiprocessing as mp


def _add_rank(rank, tensor):
    tensor[rank] += rank + 1


def _write_through_queue(queue, done):
    t = queue.get()
    t.add_(10)
    done.put(t.is_shared())


def _hogwild_worker(rank, model, steps):
    strata.manual_seed(rank)
    opt = strata.optim.SGD(model.parameters(), lr=0.01)
    for _ in range(steps):
        x = strata.randn(8, 4)
        loss = ((model(x) - x.sum(1, keepdim=True)) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()


def _fail(rank):
    if rank == 1:
        raise ValueError("rank 1 failed")


def test_share_memory_in_place_and_is_shared():
    t = strata.arange(6.0)
    view = t[1:3]
    assert not t.is_shared()
    assert t.share_memory_() is t and t.is_shared() and t.share_memory_() is t
    assert t.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    t.mul_(2)
    assert t.tolist() == [0.0, 2.0, 4.0, 6.0, 8.0, 10.0] and view.tolist() == [2.0, 4.0]
    model = strata.nn.Linear(3, 2).share_memory()
    assert all(p.is_shared() for p in model.parameters())


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_spawn_children_write_shared_tensors(method):
    t = strata.zeros(3).share_memory_()
    mp.spawn(_add_rank, args=(t,), nprocs=3, start_method=method)
    assert t.tolist() == [1.0, 2.0, 3.0]


def test_queue_passes_shared_tensors_by_handle_and_others_by_value():
    ctx = mp.get_context("spawn")
    queue, done = ctx.Queue(), ctx.Queue()
    shared, copied = strata.ones(4).share_memory_(), strata.ones(4)
    for t in (shared, copied):
        child = ctx.Process(target=_write_through_queue, args=(queue, done))
        child.start()
        queue.put(t)
        was_shared = done.get(timeout=60)
        child.join(60)
        assert child.exitcode == 0 and was_shared == t.is_shared()
    assert shared.tolist() == [11.0] * 4 and copied.tolist() == [1.0] * 4


def test_hogwild_training_updates_the_shared_model():
    strata.manual_seed(0)
    model = strata.nn.Linear(4, 1)
    model.share_memory()
    before = model.weight.detach().clone()
    x = strata.randn(64, 4)
    loss_before = ((model(x) - x.sum(1, keepdim=True)) ** 2).mean().item()
    ctx = mp.get_context("fork")
    workers = [ctx.Process(target=_hogwild_worker, args=(rank, model, 40)) for rank in range(2)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(120)
    assert all(w.exitcode == 0 for w in workers)
    after = model.weight.detach()
    assert not np.allclose(before.numpy(), after.numpy())
    loss = ((model(x) - x.sum(1, keepdim=True)) ** 2).mean().item()
    assert loss < loss_before / 2    # the workers trained the one shared model


def test_spawn_reports_the_failing_process():
    with pytest.raises(mp.ProcessRaisedException, match="rank 1 failed") as err:
        mp.spawn(_fail, nprocs=2, start_method="fork")
    assert err.value.error_index == 1
    context = mp.spawn(_add_rank, args=(strata.zeros(1).share_memory_(),), nprocs=1,
                       join=False, start_method="fork")
    assert isinstance(context, mp.ProcessContext)
    while not context.join():
        pass


def test_namespace_is_pythons_plus_torchs():
    assert mp.Process is std_mp.Process and mp.Queue is std_mp.Queue
    mp.set_sharing_strategy("file_system")
    assert mp.get_sharing_strategy() == "file_system"
    assert mp.get_all_sharing_strategies() == {"file_descriptor", "file_system"}
    with pytest.raises(ValueError):
        mp.set_sharing_strategy("carrier pigeon")


def test_tensors_that_are_not_shared_go_by_value_through_queues():
    """As everywhere else in strata (copyreg), inference tensors included."""
    ctx = mp.get_context("fork")
    queue = ctx.Queue()
    with strata.inference_mode():
        t = strata.arange(3.0) * 2
    queue.put(t)
    received = queue.get(timeout=60)
    assert received.tolist() == [0.0, 2.0, 4.0] and not received.is_shared()
